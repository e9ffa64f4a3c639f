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
whose test loops for ever running with no one to stop it. So a thread here watches the parent:
when this process is handed to another (the harness is gone), the step goes down as on SIGTERM.
Polled, not ``PR_SET_PDEATHSIG``: Linux sends that signal when the *thread* that started the
process ends, and a warm server may outlive the thread that started it (a thread pool's). The
harness names itself in :data:`PARENT_ENV` (taken out of the command's environment), so a
harness that died before the watch began is noticed too.

Standard input, output and error are inherited, so the executor reads the command's output as
before. This module imports nothing but the standard library: it starts once per build step.
Its reading of ``/proc`` (:func:`stat_fields`, :func:`pid_alive`) is the harness's one: the
Docker sweep (:mod:`~pytest_tebench.run.leftovers`) and its watcher tell a dead owner by it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType

PR_SET_CHILD_SUBREAPER = 36
#: Seconds between two looks at the parent (a step outlives a killed harness by at most this).
PARENT_POLL = 0.5
#: The harness's pid, set by whoever starts this process (not passed on to the command).
PARENT_ENV = "PYTEST_TEBENCH_REAPER_PARENT"
#: Rounds of "find descendants, SIGKILL them, reap" before giving up on a process that forks
#: faster than it is killed (each round kills every process it finds).
MAX_ROUNDS = 200


def watch_parent(parent: int, on_gone: Callable[[], None]) -> bool:
    """Call ``on_gone`` (from a daemon thread) once ``parent`` is no longer this process's parent;
    False, and no thread, when it is not now (it is gone already)."""
    if os.getppid() != parent:
        return False

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL)
        on_gone()

    threading.Thread(target=watch, name="tebench-parent-watch", daemon=True).start()
    return True


def become_subreaper() -> bool:
    """Ask Linux to reparent orphaned descendants to this process; False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def stat_fields(pid: int | str) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name (the state first, then the
    parent ...); [] when unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return []
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'
    return stat[stat.rfind(b")") + 1 :].decode("ascii", "replace").split()


def process_start(pid: int) -> str:
    """The start time of ``pid`` in clock ticks since boot, or "" when unknown (tells reused pids apart)."""
    fields = stat_fields(pid)
    return fields[19] if len(fields) > 19 else ""


def pid_alive(pid: int, start: str) -> bool:
    """Whether ``pid`` still runs as the process that started at ``start`` ("": any)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    # a killed process its parent has not reaped yet (a crashed xdist worker) still answers
    # signals: it is dead all the same
    if stat_fields(pid)[:1] in (["Z"], ["X"]):
        return False
    return not start or process_start(pid) in ("", start)


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
        fields = stat_fields(entry)
        if len(fields) >= 2 and fields[0] != "Z":
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
    if not watch_parent(int(named) if named.isdigit() else os.getppid(), lambda: stop(signal.SIGTERM, None)):
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
