"""
moto's threaded server for local runs and tests, with DynamoDB made serializable like the real one.

moto 5 handles requests on many threads with no lock around its DynamoDB backend, and rolls a failed
TransactWriteItems back by restoring a deep copy of every table it touched, taken when the transaction
began. Under concurrency that loses other requests' committed writes (a conditional transaction that
fails wipes out whatever committed meanwhile) and lets conditions be checked against half-applied
transactions. Real DynamoDB serializes transactions against other writes; so does this server:

- every DynamoDB request runs under one lock (moto is one Python process: nothing is lost in speed);
- a failed transaction undoes only the items it wrote, from copies of those items (not of the tables,
  which also made each transaction cost the size of the table).
- TransactWriteItems honours its ClientRequestToken as DynamoDB does: within ten minutes, the same
  token with the same items answers success again without writing (so an SDK retry of a transaction
  whose answer was lost does not fail on its own writes), and with other items is refused
  (IdempotentParameterMismatchException). The SDK sets a token on every transaction.

With `--require-signatures`, the first line of stdin is `<access key id> <secret access key>` (never
argv or env, which other processes may read) and the server takes only what a holder of that key can do:

- an IAM user with that one access key, allowed DynamoDB, SQS and KMS, is made in-process before the
  port opens, and moto's IAM authentication is on from the first request (moto checks the SigV4
  signature of every DynamoDB, SQS and KMS request against the user's secret, and its policy);
- every other route answers 403: the other services, moto's own API (`/moto-api/…`: its `reset-auth`
  turns authentication off, `data.json` dumps every model, secrets included) and instance metadata;
- a request without a SigV4 Authorization header is refused before moto parses it, and signatures are
  compared in constant time.

With `--data-dir=<dir>`, the DynamoDB, SQS and KMS state is kept in a snapshot there: loaded at start,
written every few seconds and on exit (see moto_snapshot.py).

Everything else is moto as published. The process exits when its stdin closes, so it dies with its
parent however the parent ends. Prints `ready http://host:port` once listening.
"""

import copy
import hmac
import json
import signal
import sys
import threading
import time
from collections import OrderedDict

from moto import settings
from moto.core import DEFAULT_ACCOUNT_ID
from moto.core.responses import ActionResult
from moto.dynamodb import models as dynamodb_models
from moto.dynamodb.exceptions import DynamodbException
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.responses import DynamoHandler
from moto.iam.access_control import IAMRequestBase
from moto.iam.models import iam_backends
from moto.moto_server import threaded_moto_server
from moto.moto_server.threaded_moto_server import ThreadedMotoServer
from moto.moto_server.werkzeug_app import create_backend_app
from moto_snapshot import Snapshots, note

_lock = threading.RLock()
_call_action = DynamoHandler.call_action


def _serialized_call_action(self):
    with _lock:
        return _call_action(self)


def _key_of(table, attrs):
    key = {table.hash_key_attr: attrs[table.hash_key_attr]}
    if table.range_key_attr is not None:
        key[table.range_key_attr] = attrs[table.range_key_attr]
    return key


def _restore(backend, journal):
    """Puts every item a transaction wrote back as it was (or removes it if it did not exist)."""
    for table_name, key, original in reversed(journal):
        table = backend.get_table(table_name)
        hash_value = DynamoType(key[table.hash_key_attr])
        range_value = DynamoType(key[table.range_key_attr]) if table.range_key_attr else None
        if original is None:
            table.delete_item(hash_value, range_value)
        elif range_value is not None:
            table.items[hash_value][range_value] = original
        else:
            table.items[hash_value] = original


def _transact_write_items(self, transact_items):
    """moto's TransactWriteItems, with a per-item undo journal instead of whole-table copies."""
    if len(transact_items) > 100:
        raise dynamodb_models.TooManyTransactionsException()
    journal = []
    target_items = set()
    errors = []
    for item in transact_items:
        original_item = None
        if len(list(item.keys())) > 1:
            raise dynamodb_models.TransactWriteSingleOpException
        try:
            op_type, op = next(iter(item.items()))
            if op_type not in {"ConditionCheck", "Put", "Delete", "Update"}:
                raise ValueError("Unsupported transaction operation")
            table_name = op["TableName"]
            condition_expression = op.get("ConditionExpression")
            names = op.get("ExpressionAttributeNames")
            values = op.get("ExpressionAttributeValues")
            key = _key_of(self.get_table(table_name), op["Item"]) if op_type == "Put" else op["Key"]
            unique = (str(table_name), str(dict(sorted(key.items()))))
            if unique in target_items:
                raise dynamodb_models.MultipleTransactionsException()
            target_items.add(unique)

            current = self.get_item(table_name, key)
            if condition_expression is not None:
                condition = dynamodb_models.get_filter_expression(condition_expression, names, values)
                if not condition.expr(current):
                    if op.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and current:
                        original_item = current.to_json()["Attributes"]
                    raise dynamodb_models.ConditionalCheckFailed(item=original_item)

            if op_type != "ConditionCheck":
                journal.append((table_name, key, copy.deepcopy(current)))
            common = dict(
                condition_expression=condition_expression,
                expression_attribute_names=names,
                expression_attribute_values=values,
            )
            if op_type == "Put":
                self.put_item(table_name, op["Item"], **common)
            elif op_type == "Delete":
                self.delete_item(table_name, key, **common)
            elif op_type == "Update":
                self.update_item(table_name, key, update_expression=op["UpdateExpression"], **common)
            errors.append((None, None, None))
        except (dynamodb_models.MultipleTransactionsException, dynamodb_models.MockValidationException):
            _restore(self, journal)
            raise
        except dynamodb_models.ConditionalCheckFailed as error:
            errors.append(("ConditionalCheckFailed", str(error.message), original_item))
        except Exception as error:  # noqa: BLE001 - moto reports any other failure per item, too
            errors.append((type(error).__name__, str(error), original_item))

    if any(code is not None for code, _, _ in errors):
        _restore(self, journal)
        raise dynamodb_models.TransactionCanceledException(errors)


IDEMPOTENCY_WINDOW_S = 600
# token -> (the transaction's items, when the token expires), oldest first; read and written under _lock.
_tokens = OrderedDict()
_handler_transact_write_items = DynamoHandler.transact_write_items


class IdempotentParameterMismatchException(DynamodbException):
    def __init__(self):
        super().__init__(
            "com.amazonaws.dynamodb.v20120810#IdempotentParameterMismatchException",
            "The ClientRequestToken was used before with other TransactItems.",
        )


def _idempotent_transact_write_items(self):
    """TransactWriteItems with its ClientRequestToken honoured for IDEMPOTENCY_WINDOW_S (see above)."""
    token = self.body.get("ClientRequestToken")
    if token is None:
        return _handler_transact_write_items(self)
    now = time.monotonic()
    while _tokens and next(iter(_tokens.values()))[1] < now:
        _tokens.popitem(last=False)
    items = self.body["TransactItems"]
    seen = _tokens.get(token)
    if seen is not None:
        if seen[0] != items:
            raise IdempotentParameterMismatchException()
        return ActionResult({"ConsumedCapacity": [], "ItemCollectionMetrics": {}})
    result = _handler_transact_write_items(self)
    _tokens[token] = (copy.deepcopy(items), now + IDEMPOTENCY_WINDOW_S)
    return result


DynamoHandler.call_action = _serialized_call_action
DynamoHandler.transact_write_items = _idempotent_transact_write_items
dynamodb_models.DynamoDBBackend.transact_write_items = _transact_write_items

# The backends (as moto's dispatcher names them) a signed request may reach when signatures are required.
SIGNED_BACKENDS = {"dynamodb", "sqs", "kms"}
STACK_USER = "mcp-gateway-stack"
STACK_POLICY = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": ["dynamodb:*", "sqs:*", "kms:*"], "Resource": "*"}],
}


def _refuse(code, message):
    """A WSGI app answering 403 with an AWS-style JSON error."""
    body = json.dumps({"__type": code, "message": message}).encode()

    def app(_environ, start_response):
        start_response("403 Forbidden", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]

    return app


_unsigned = _refuse("MissingAuthenticationTokenException", "Requests must be signed (AWS SigV4).")


def _signed_only(app):
    """`app` for requests with a SigV4 Authorization header; the refusal for any other."""

    def guarded(environ, start_response):
        if not environ.get("HTTP_AUTHORIZATION", "").startswith("AWS4-HMAC-SHA256 Credential="):
            return _unsigned(environ, start_response)
        return app(environ, start_response)

    return guarded


def _create_signed_backend_app(service):
    """moto's app for the stack's services, signed requests only; a refusal for every other route."""
    if service not in SIGNED_BACKENDS:
        return _refuse("AccessDeniedException", f"{service} is not served here.")
    return _signed_only(create_backend_app(service))


def _check_signature(self):
    """moto's signature check, comparing in constant time."""
    given = self._get_string_between("Signature=", ",", self._headers["Authorization"])
    if not hmac.compare_digest(given.encode(), self._calculate_signature().encode()):
        self._raise_signature_does_not_match()


def require_signatures(access_key_id, secret_access_key):
    """Only requests signed with this key, by an IAM user allowed the stack's services, are served."""
    iam = iam_backends[DEFAULT_ACCOUNT_ID]["aws"]
    iam.create_user(region_name="us-east-1", user_name=STACK_USER)
    iam.put_user_policy(STACK_USER, "stack", json.dumps(STACK_POLICY))
    key = iam.create_access_key(STACK_USER)
    del iam.access_keys[key.access_key_id]
    key.access_key_id = access_key_id
    key.secret_access_key = secret_access_key
    iam.access_keys[access_key_id] = key
    IAMRequestBase.check_signature = _check_signature
    threaded_moto_server.create_backend_app = _create_signed_backend_app
    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0


def _stop(_signum, _frame):
    raise SystemExit(0)


args = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
data_dir = next((arg.split("=", 1)[1] for arg in sys.argv[1:] if arg.startswith("--data-dir=")), None)
credentials = sys.stdin.readline().split() if "--require-signatures" in sys.argv else None
snapshots = Snapshots(data_dir, _lock) if data_dir else None
if snapshots:
    try:
        snapshots.restore()
    except PermissionError as error:
        note(f"cannot keep data: {error}")
        raise SystemExit(2) from None
if credentials:
    require_signatures(*credentials)
if snapshots:
    threaded_moto_server.create_backend_app = snapshots.watching(threaded_moto_server.create_backend_app)
port = int(args[0]) if args else 0
server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
server.start()
host, bound = server.get_host_and_port()
# Ctrl-C in a terminal reaches this process too: it serves on while its parent stops (and writes what
# is left), and ends when the parent closes its stdin. SIGTERM ends it at once, with a last snapshot.
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, _stop)
print(f"ready http://{host}:{bound}", flush=True)
try:
    if snapshots:
        snapshots.start()
    sys.stdin.read()
finally:
    if snapshots:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        snapshots.close()
