"""Out-of-memory kills during a build step: who ended a build that died, the code or the machine.

When the kernel kills a JVM for want of memory, a Maven build or its forked test JVM just dies,
and its log looks like a test JVM that crashed or exited: Surefire's "The forked VM terminated
without properly saying goodbye", exit code 137. Judged as it looks, that is the prediction's
tests failing, and on gold, after every re-run in the same memory, an ``invalid_instance``: a
limit of the harness's reported as a model's score or as the instance's fault. Two kinds:

- **the machine's memory** (another worker's build, too many workers for the RAM): the kernel
  counts every OOM kill in ``/proc/vmstat`` (``oom_kill``, Linux 4.13 and later), a counter the
  tested code cannot lower, so each step is timed against it (:func:`counting_oom_kills`). A
  step that died while it rose is the harness's failure, whoever ran it. The counter is the
  machine's: a kill in another build during this step counts too, which only ever turns a build
  that died into a harness error, never stored, so the next run evaluates that item again;
- **the sandbox's cap** (``--tebench-docker-memory``): the Docker executor marks a step whose
  container had a process OOM-killed (:data:`CONTAINER_OOM`: Docker's ``OOMKilled`` for a cold
  container, the cgroup's own ``oom_kill`` count for the warm server's). Gold's build must fit
  in the sandbox (a gold run that reached the cap and failed is the harness's error, never an
  invalid instance: ``gold_run``), so a prediction's build that reaches it is the prediction's
  tests' doing, as a test phase past its limit is: judged as it ran, the cap named in the record.
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
#: OOM-killed at the container's memory cap.
CONTAINER_OOM = "oom_killed"
#: Prints the cgroup's own OOM kill count inside a container (cgroup v1, then v2).
CGROUP_OOM_KILLS = (
    "cat /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null || cat /sys/fs/cgroup/memory.events 2>/dev/null"
)
#: What a build that reached the sandbox's cap says in its record.
CAP_NOTE = "the sandbox container reached its memory cap (--tebench-docker-memory) while this ran"

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


def reached_cap(result: StepResult) -> bool:
    """Whether a process of ``result``'s sandbox container was killed at its memory cap."""
    return result.extra.get(CONTAINER_OOM) == "true"


def machine_oom(result: StepResult) -> str:
    """Why ``result``'s step died for the machine's memory, not the sandbox's cap ("" when
    nothing says so): the text of the harness error it becomes."""
    kills = int(result.extra.get(OOM_KILLS, "0") or 0)
    if not kills or reached_cap(result):
        return ""
    return (
        f"while step {result.name} ran, the kernel killed {kills} process{'es' if kills > 1 else ''} "
        "on this machine for want of memory, and the build did not finish normally: the machine's "
        "memory, not the code under test, decided this run, so it is not judged; run fewer workers (-n)"
    )
