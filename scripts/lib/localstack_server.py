"""
LocalStack's runtime (`python -m localstack.runtime.main`) in host mode, configured by the environment
its parent gives it, that shuts down as soon as its stdin closes — so it dies with its parent however
the parent ends. LocalStack stops itself on SIGTERM; one that has not exited 5 s later is ended.
"""

import os
import signal
import sys
import threading

SHUTDOWN_GRACE_S = 5


def _stop_when_parent_goes():
    sys.stdin.buffer.read()
    os.kill(os.getpid(), signal.SIGTERM)
    deadline = threading.Timer(SHUTDOWN_GRACE_S, lambda: os._exit(0))
    deadline.daemon = True
    deadline.start()


threading.Thread(target=_stop_when_parent_goes, daemon=True).start()

from localstack.runtime.main import main  # noqa: E402 (after the watcher: imports take seconds)

main()
