"""Out-of-memory kills during a build step: a build the kernel ended is not the code's verdict.

When the kernel kills a JVM for want of memory, a Maven build or its forked test JVM just dies,
and its log looks like a test JVM that crashed or exited: Surefire's "The forked VM terminated
without properly saying goodbye", exit code 137. Judged as it looks, that is the prediction's
tests failing, and on gold, after every re-run in the same memory, an ``invalid_instance``: a
limit of the harness's reported as a model's score or as the instance's fault. The kernel counts
every OOM kill in ``/proc/vmstat`` (``oom_kill``, Linux 4.13 and later; a kill at a container's
memory cap included), a counter the tested code cannot lower, so each step is timed against it
(:func:`counting_oom_kills`); the Docker executor also marks a step whose sandbox container had a
process OOM-killed (:data:`CONTAINER_OOM`: Docker's ``OOMKilled`` for a cold container, the
container cgroup's own ``oom_kill`` count, read after each build, for the warm server's). A step
that died with either is the harness's failure, whoever ran it (:func:`memory_kill`): never a
score, never stored, so the next run evaluates that item again; a build that finished is never
judged by it.

Whose memory ran out cannot be told apart here: a cgroup's ``oom_kill`` (v1 and v2) counts kills
by the machine's OOM killer as well as at its own cap, and Docker's ``OOMKilled`` follows it on
cgroup v2, so a kill inside the sandbox may be another worker's doing. So a prediction whose tests
exhaust the sandbox's memory is an error item too (listed by id in every run, counted in
``errors``), not a failing score: the price of never scoring a test the machine killed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from pytest_tebench.run.executor import StepResult

VMSTAT = Path("/proc/vmstat")
#: ``StepResult.extra`` key: how many OOM kills the kernel made while the step ran (only when > 0).
OOM_KILLS = "oom_kills"
#: ``StepResult.extra`` key: ``"true"`` when a process of the step's sandbox container was
#: OOM-killed.
CONTAINER_OOM = "oom_killed"
#: Prints the cgroup's own OOM kill count inside a container (cgroup v1, then v2).
CGROUP_OOM_KILLS = (
    "cat /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null || cat /sys/fs/cgroup/memory.events 2>/dev/null"
)
_OOM_KILL = re.compile(r"^oom_kill (\d+)$", re.MULTILINE)


def oom_kill_count(text: str) -> int | None:
    """The ``oom_kill`` count of a ``/proc/vmstat``, ``memory.oom_control`` or ``memory.events``
    text, or None when it has none."""
    found = _OOM_KILL.search(text)
    return int(found.group(1)) if found is not None else None


def machine_oom_kills(vmstat: Path | None = None) -> int | None:
    """The kernel's count of OOM kills since boot, or None where it keeps none."""
    try:
        return oom_kill_count((vmstat or VMSTAT).read_text(encoding="ascii"))
    except (OSError, UnicodeDecodeError):
        return None


def counting_oom_kills(run: Callable[[], StepResult], vmstat: Path | None = None) -> StepResult:
    """``run()``'s result, with :data:`OOM_KILLS` in its ``extra`` when the kernel killed a
    process for memory meanwhile."""
    before = machine_oom_kills(vmstat)
    result = run()
    after = machine_oom_kills(vmstat)
    if before is None or after is None or after <= before:
        return result
    return replace(result, extra={**result.extra, OOM_KILLS: str(after - before)})


def memory_kill(result: StepResult) -> str:
    """Why ``result``'s step may have died for want of memory ("" when nothing says so): the
    text of the harness error a build that died with it becomes."""
    kills = int(result.extra.get(OOM_KILLS, "0") or 0)
    said = []
    if result.extra.get(CONTAINER_OOM) == "true":
        said.append("the kernel killed a process of its sandbox container for want of memory")
    if kills:
        said.append(f"the kernel's count of OOM kills on this machine rose by {kills}")
    if not said:
        return ""
    return (
        f"while step {result.name} ran, {' and '.join(said)}, and the build did not finish "
        "normally: memory, not the code under test, decided this run, so it is not judged; run "
        "fewer workers (-n) or give the sandbox more memory (--tebench-docker-memory)"
    )
