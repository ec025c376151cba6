"""
Schemathesis hooks for tests/api/schemathesis.test.ts.

One hook, `filter_failure`: a schema-valid request (ST202) may still be refused for what only the
server's state or the deployment's policy decides, never its shape. Those answers carry a problem
`code` saying so, documented on their operations; a failure is dropped only for one of them, so
every other rejection of a schema-valid request still fails the run. The summary counts the drops.
"""

import atexit
import collections
import json
import re
import sys

import schemathesis

# Problem codes that refuse a well-formed request for state or policy:
STATE_OR_POLICY = {
    # An IP literal the upstream policy refuses (metadata, link-local, reserved, documentation...).
    "server.url_forbidden",
    # A key scope naming servers that do not exist.
    "key.unknown_server",
    # A key scope naming tool sets that do not exist.
    "key.unknown_toolset",
    # A tool set naming servers that do not exist, or giving two tools one name.
    "toolset.unknown_server",
    "toolset.invalid",
    # If-Match naming a version other than the current one.
    "request.precondition_failed",
    # A URL on a new origin while the stored headers would be kept.
    "server.credentials_origin_changed",
    # A thread worktree outside the deployment's WORKTREE_BASE (or with a `..` segment).
    "thread.worktree_forbidden",
}

# An edit is checked against the stored server once merged (server.invalid): these problems come from
# what is stored, not from the edit's shape (a field of the other transport, a format without a
# reference that the stored server lacks). Each is a problem's `errors` entry: (field, message start).
MERGE_PROBLEMS = (
    (re.compile(r".+"), "Not a field this request takes."),
    (re.compile(r"^transport$"), "Cannot change from "),
    (re.compile(r"^secretFormat$"), "Needs a secretRef"),
)

# Only thread-scoped stdio servers start in threads; which one an id names is the server's state.
NOT_THREAD_SCOPED = re.compile(r"^Server '.*' is not a thread-scoped stdio server\.$")

# A list cursor is a token an earlier page returned (opaque): a well-formed string no page returned
# names no position in the list.
UNKNOWN_CURSOR = ("cursor", "Not a cursor a page of this list returned")


# What was dropped, printed when the run ends so the test output shows it.
DROPPED = collections.Counter()
atexit.register(
    lambda: DROPPED
    and print(
        "Dropped as state or policy answers: "
        + ", ".join(f"{key} x{count}" for key, count in sorted(DROPPED.items())),
        file=sys.stderr,
    )
)


def _problem(response):
    try:
        body = json.loads(response.content)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _state_or_policy(case, problem):
    code = problem.get("code")
    if code in STATE_OR_POLICY:
        return True
    errors = problem.get("errors") or []
    if code == "server.invalid" and case.method.upper() == "PATCH":
        return bool(errors) and all(_is_one_of(error, MERGE_PROBLEMS) for error in errors)
    if code != "request.invalid":
        return False
    if NOT_THREAD_SCOPED.search(str(problem.get("detail", ""))):
        return True
    field, start = UNKNOWN_CURSOR
    return len(errors) == 1 and _is_one_of(errors[0], ((re.compile(f"^{field}$"), start),))


def _is_one_of(error, kinds):
    """Whether a problem's `errors` entry is one of `kinds` (a field pattern, a message start)."""
    if not isinstance(error, dict):
        return False
    field, message = str(error.get("field", "")), str(error.get("message", ""))
    return any(pattern.search(field) and message.startswith(start) for pattern, start in kinds)


@schemathesis.hook
def filter_failure(context, failure, case, response):
    if failure.code != "ST202" or response.status_code not in (400, 412):
        return True
    problem = _problem(response) or {}
    if not _state_or_policy(case, problem):
        return True
    DROPPED[f"{case.method.upper()} {case.operation.path} {problem.get('code')}"] += 1
    return False
