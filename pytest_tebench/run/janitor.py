"""Remove a harness process's containers as soon as that process dies, not at the next run.

A harness killed outright (SIGKILL, the kernel's OOM killer, a crashed xdist worker) runs no
``finally``: its step containers and warm servers go on, a test that loops for ever with them,
until :func:`~pytest_tebench.run.leftovers.cleanup_stale` of the next run on this host, which
may never come. So the first container a process creates starts this watcher
(:func:`watch_this_process`), one per process, detached (in a session of its own, no child of
the harness: an interrupt of the terminal reaches the harness, which cleans up itself, and an
exiting harness leaves no running child behind). It polls the process; once that is gone (a
zombie its parent has not reaped counts as gone) it runs the same sweep a run starts with, which
removes what dead processes on this host left and nothing a live one owns, and exits.

``python -m pytest_tebench.run.janitor PID START`` (START: the process's start time, which tells
a reused pid apart). This module imports nothing but the standard library until the sweep.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

from pytest_tebench.run.reaper import pid_alive
from pytest_tebench.run.reaper import process_start

#: Seconds between two looks at the process.
POLL = 0.5
#: The processes this module started a watcher for (a fork is another, with a watcher of its own).
_WATCHED: set[int] = set()


def watch_this_process() -> None:
    """Start this process's watcher unless it runs already (called before each container is
    created; a watcher that cannot start leaves the sweep to the next run, as before)."""
    pid = os.getpid()
    if pid in _WATCHED:
        return
    _WATCHED.add(pid)
    argv = [sys.executable, "-m", "pytest_tebench.run.janitor", str(pid), process_start(pid)]
    # through a shell that exits at once: the watcher is nobody's child here, so nothing of it
    # is left to reap or to warn about when this process ends
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            ["sh", "-c", '"$@" < /dev/null > /dev/null 2>&1 &', "sh", *argv],
            start_new_session=True,
            check=False,
            timeout=30,
        )


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[0].isdigit():
        print("usage: python -m pytest_tebench.run.janitor PID START", file=sys.stderr)
        return 2
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    pid, start = int(argv[0]), argv[1]
    while pid_alive(pid, start):
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
