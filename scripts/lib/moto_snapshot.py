"""
Snapshots of moto's DynamoDB, SQS and KMS state in one private file, so `npm run dev` keeps its data
across restarts (moto itself keeps everything in memory only).

- The state is moto's own backend objects for those services, pickled (moto has no persistence of its
  own; its maintainers point at pickling the backends). Locks and conditions are pickled as fresh ones,
  and KMS private keys as PKCS#8 DER: the key material survives, so sealed secrets still open.
- A snapshot is written every SNAPSHOT_INTERVAL_S while something changed, and once more on exit; always
  atomically (a temporary file beside it, fsynced, renamed over it, the directory fsynced): a crash
  leaves the previous snapshot or the new one, never half of one.
- The file holds secrets' key material: the directory is made 0700 and the file 0600, owned by this
  user. A file that is not (or any other problem reading it: corrupt, truncated, made by another moto
  or snapshot format) is not loaded: it is set aside as `<file>.unreadable`, a note says so, and the
  emulator starts empty.
- IAM is not kept: the access key the emulator requires is made anew at each start.

Notes for the parent are printed on stdout as `note <text>` lines.
"""

import io
import os
import pickle
import threading

import moto
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from moto.backends import get_backend

SERVICES = ("dynamodb", "sqs", "kms")
SNAPSHOT_INTERVAL_S = 5
FILE_NAME = "emulator.snapshot"
FORMAT = 1
# A snapshot taken while SQS or KMS state changes under it may fail ("changed size during iteration").
ATTEMPTS = 5
_LOCK_TYPES = (type(threading.Lock()), type(threading.RLock()))
_PRIVATE_KEYS = (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey, ed25519.Ed25519PrivateKey)


def note(text):
    print(f"note {text}", flush=True)


def _private_key(der):
    return serialization.load_der_private_key(der, password=None)


class _Pickler(pickle.Pickler):
    """Pickles moto's objects, with fresh locks in place of held ones and private keys as DER."""

    def reducer_override(self, obj):
        if isinstance(obj, threading.Condition):
            return (threading.Condition, ())
        if isinstance(obj, _LOCK_TYPES):
            return (type(obj), ())
        if isinstance(obj, _PRIVATE_KEYS):
            der = obj.private_bytes(
                serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
            return (_private_key, (der,))
        return NotImplemented


def _header():
    return {"format": FORMAT, "moto": moto.__version__}


def _current_state():
    """{service: {account: {region: backend}}} for the kept services."""
    return {
        service: {account: dict(regions.items()) for account, regions in get_backend(service).items()}
        for service in SERVICES
    }


def _checked_state(state):
    """`state` when it has the shape `_current_state` gives, with backends of moto's classes; else raises."""
    if not isinstance(state, dict) or set(state) - set(SERVICES):
        raise ValueError("not a snapshot of the emulator's services")
    for service, accounts in state.items():
        backend_class = get_backend(service).backend
        for account, regions in accounts.items():
            for region, backend in regions.items():
                if not (isinstance(account, str) and isinstance(region, str) and isinstance(backend, backend_class)):
                    raise ValueError(f"not a {service} backend at {account}/{region}")
    return state


def _install(state):
    for service, accounts in state.items():
        backends = get_backend(service)
        for account, regions in accounts.items():
            for region, backend in regions.items():
                dict.__setitem__(backends[account], region, backend)


def _private_dir(path):
    """Creates `path` 0700; refuses one that exists but another user owns or others may enter (it is
    never chmodded: DEV_DATA_DIR=$HOME must not lock the user out of their home)."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.stat(path)
    if info.st_uid != os.getuid():
        raise PermissionError(f"{path} belongs to another user")
    if info.st_mode & 0o077:
        raise PermissionError(
            f"{path} is open to other users (mode {info.st_mode & 0o777:o}): chmod 700 it, or name a private DEV_DATA_DIR"
        )


class Snapshots:
    """The snapshot file in `data_dir`: loaded at start, then kept up to date while the emulator runs."""

    def __init__(self, data_dir, lock):
        """`lock` is held while DynamoDB is pickled (the lock its requests run under)."""
        self.data_dir = data_dir
        self.path = os.path.join(data_dir, FILE_NAME)
        self._lock = lock
        self._dirty = threading.Event()
        self._stopping = threading.Event()
        self._writing = threading.Lock()
        self._thread = None
        self._last_error = None

    def restore(self):
        """Loads the snapshot into moto, if there is one it can read; notes what it did."""
        _private_dir(self.data_dir)
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            note(f"no snapshot yet in {self.data_dir}: starting empty")
            return
        except OSError as error:
            return self._set_aside(f"cannot be opened ({error.strerror})")
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if info.st_uid != os.getuid() or info.st_mode & 0o077:
                return self._set_aside(f"is not private to this user (mode {info.st_mode & 0o777:o})")
            try:
                unpickler = pickle.Unpickler(io.BytesIO(file.read()))
                header = unpickler.load()
                if not isinstance(header, dict):
                    raise ValueError("no header")
                if header != _header():
                    made = {key: header.get(key) for key in _header()}
                    return self._set_aside(f"was made by another version ({made}, this is {_header()})")
                state = _checked_state(unpickler.load())
            except Exception as error:  # noqa: BLE001 - any failure to read it means: start empty
                return self._set_aside(f"is unreadable ({type(error).__name__})")
        _install(state)
        note(f"restored {self.path}")

    def _set_aside(self, why):
        aside = f"{self.path}.unreadable"
        try:
            os.replace(self.path, aside)
            where = f"moved to {aside}"
        except OSError as error:
            where = f"left in place ({error.strerror})"
        note(f"the snapshot {self.path} {why}: {where}; starting empty")

    def watching(self, create_backend_app):
        """moto's `create_backend_app`, its apps for the kept services marking the state changed."""

        def create(service):
            app = create_backend_app(service)
            if service not in SERVICES:
                return app

            def marking(environ, start_response):
                try:
                    return app(environ, start_response)
                finally:
                    # After the request: a snapshot under way may have missed it, the next one will not.
                    self._dirty.set()

            return marking

        return create

    def start(self):
        """Writes a snapshot every SNAPSHOT_INTERVAL_S while the state changes."""
        self._thread = threading.Thread(target=self._run, name="snapshots", daemon=True)
        self._thread.start()

    def close(self):
        """Stops the timer and writes the last snapshot."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
        self.save()

    def _run(self):
        while not self._stopping.wait(SNAPSHOT_INTERVAL_S):
            if self._dirty.is_set():
                self.save()

    def save(self):
        """Writes the state now, atomically; a failure is noted (once per kind) and tried again later."""
        with self._writing:
            self._dirty.clear()
            try:
                data = self._pickled()
                self._write(data)
                self._last_error = None
            except Exception as error:  # noqa: BLE001 - the emulator keeps serving; the next round retries
                self._dirty.set()
                message = f"{type(error).__name__}: {error}"
                if message != self._last_error:
                    note(f"snapshot not written: {message}")
                self._last_error = message

    def _pickled(self):
        attempt = 1
        while True:
            try:
                buffer = io.BytesIO()
                pickler = _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
                pickler.dump(_header())
                with self._lock:
                    pickler.dump(_current_state())
                return buffer.getvalue()
            except RuntimeError:
                if attempt == ATTEMPTS:
                    raise
                attempt += 1

    def _write(self, data):
        _private_dir(self.data_dir)
        temporary = f"{self.path}.{os.getpid()}.tmp"
        if os.path.lexists(temporary):
            os.unlink(temporary)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.fchmod(fd, 0o600)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, self.path)
        directory = os.open(self.data_dir, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
