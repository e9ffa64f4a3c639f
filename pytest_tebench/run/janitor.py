"""Remove a harness process's containers as soon as that process dies, not at the next run.

A harness killed outright (SIGKILL, the kernel's OOM killer, a crashed xdist worker) runs no
``finally``: its step containers and warm servers go on, a test that loops for ever with them,
until :func:`~pytest_tebench.run.leftovers.cleanup_stale` of the next run on this host, which
may never come. So the first container a process creates starts this watcher
(:func:`watch_this_process`), one per process, in a session of its own (an interrupt of the
terminal reaches the harness, which cleans up itself, and leaves this one to check after it).
It polls its parent; once that is gone it runs the same sweep a run starts with, which removes
what dead processes on this host left and nothing a live one owns, and exits.

``python -m pytest_tebench.run.janitor PID`` (PID: the process to watch, its parent).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

#: Seconds between two looks at the parent.
POLL = 0.5
#: The processes this module started a watcher for (a fork is another, with a watcher of its own).
_WATCHED: set[int] = set()


def watch_this_process() -> None:
    """Start this process's watcher unless it runs already (called before each container is
    created; a watcher that cannot start leaves the sweep to the next run, as before)."""
    if os.getpid() in _WATCHED:
        return
    _WATCHED.add(os.getpid())
    with contextlib.suppress(OSError):
        subprocess.Popen(
            [sys.executable, "-m", "pytest_tebench.run.janitor", str(os.getpid())],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].isdigit():
        print("usage: python -m pytest_tebench.run.janitor PID", file=sys.stderr)
        return 2
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    parent = int(argv[0])
    while os.getppid() == parent:
        time.sleep(POLL)
    # imported late: the watcher waits with nothing loaded
    from pytest_tebench.errors import HarnessError
    from pytest_tebench.run import docker_image
    from pytest_tebench.run.leftovers import cleanup_stale

    with contextlib.suppress(HarnessError):
        client = docker_image.connect()
        try:
            cleanup_stale(client)
        finally:
            client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
