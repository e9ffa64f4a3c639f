"""Run one command as a child subreaper, and take every process it started down with it.

``python -m pytest_tebench.run.reaper COMMAND...`` is how the local executor starts a step.
Killing the step's process group is not enough: a test can start a process in a session of its
own (``setsid``, a double fork, a daemon), which leaves the group and would outlive the step,
keep writing into the workspace, or fake results after the harness read them. Linux's
``PR_SET_CHILD_SUBREAPER`` makes every orphaned descendant of this process its child instead of
init's, whatever session it moved to, so none can escape: when the command exits, or when this
process gets SIGTERM/SIGINT/SIGHUP, every descendant is killed with SIGKILL and reaped, and this
process exits with the command's status (``128 + n`` when it was killed by signal ``n``).

The harness enforces the step's deadline, so this process must not outlive it: killed itself
(SIGKILL, the kernel's OOM killer, a crashed xdist worker), the harness would leave a step
whose test loops for ever running with no one to stop it. ``PR_SET_PDEATHSIG`` has Linux send
this process SIGTERM when the harness goes, and the handler above takes the step down. The
harness names itself in :data:`PARENT_ENV` (taken out of the command's environment), so a
harness that died before the signal was asked for is noticed too.

Standard input, output and error are inherited, so the executor reads the command's output as
before. This module imports nothing but the standard library: it starts once per build step.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from types import FrameType

PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1
#: The harness's pid, set by whoever starts this process (not passed on to the command).
PARENT_ENV = "PYTEST_TEBENCH_REAPER_PARENT"
#: Rounds of "find descendants, SIGKILL them, reap" before giving up on a process that forks
#: faster than it is killed (each round kills every process it finds).
MAX_ROUNDS = 200


def die_with_parent(parent: int | None) -> bool:
    """Ask Linux for SIGTERM when the process that started this one ends; False when that
    process (``parent``, or the one at the start when None) is already gone, or where unsupported.

    Linux sends the signal when the *thread* that started this process ends: the harness starts
    a step from the thread that waits for it, and a warm server from one that lives as long as
    its executor's builds (a worker's main thread, a thread pool's)."""
    expected = os.getppid() if parent is None else parent
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
            return True
    except (OSError, AttributeError):
        return True
    # it may have ended before the signal was asked for: then this process has a new parent
    return os.getppid() == expected


def become_subreaper() -> bool:
    """Ask Linux to reparent orphaned descendants to this process; False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> set[int]:
    """Pids of every live process below ``root``, from each process's parent in ``/proc``."""
    parents: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return set()  # no /proc (not Linux): only the process group kill remains
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 2 and fields[0] != b"Z":
            parents[int(entry)] = int(fields[1])
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier and pid not in found}
        found |= frontier
    return found


def kill_descendants(root: int) -> None:
    """SIGKILL every descendant of ``root`` until none is left, reaping the dead."""
    for _ in range(MAX_ROUNDS):
        _reap()
        alive = descendants(root)
        if not alive:
            return
        for pid in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
    _reap()


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m pytest_tebench.run.reaper COMMAND [ARG...]", file=sys.stderr)
        return 2
    become_subreaper()
    me = os.getpid()

    def stop(signum: int, _frame: FrameType | None) -> None:
        kill_descendants(me)
        os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    named = os.environ.pop(PARENT_ENV, "")
    if not die_with_parent(int(named) if named.isdigit() else None):
        print("the harness that started this step is gone", file=sys.stderr)
        return 128 + signal.SIGTERM
    try:
        child = subprocess.Popen(argv)
    except OSError as exc:
        print(f"cannot start {argv[0]}: {exc}", file=sys.stderr)
        return 127
    code = child.wait()
    kill_descendants(me)
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
