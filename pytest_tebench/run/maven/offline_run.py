"""Run a selection offline first, on a repository that has what the build needs.

:func:`run_warmed` is every evaluation's entry to a Maven build: a build digest never seen on
this machine is checked offline first (its effective POM against the repository, its Surefire,
whether its tests fork, which build plugins it leaves without a version); only what the check
or an offline run finds missing sends the project to the online warm-up
(:func:`~pytest_tebench.run.maven.warmup.warm_up`), then the run goes offline again.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path

from pytest_tebench.run.executor import Executor
from pytest_tebench.run.maven import buildplan
from pytest_tebench.run.maven import log as mavenlog
from pytest_tebench.run.maven.journal import FORKS
from pytest_tebench.run.maven.journal import SUREFIRE
from pytest_tebench.run.maven.journal import UNVERSIONED
from pytest_tebench.run.maven.journal import append_entry
from pytest_tebench.run.maven.journal import read_journal
from pytest_tebench.run.maven.journal import recorded_unversioned
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.selection import run_inherited
from pytest_tebench.run.maven.steps import effective_pom_step
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.testrun import BUILD_ERROR
from pytest_tebench.run.maven.testrun import SelectionRun
from pytest_tebench.run.maven.unpublished import foreign_snapshots
from pytest_tebench.run.maven.unpublished import unbuildable_message
from pytest_tebench.run.maven.warmup import WarmupResult
from pytest_tebench.run.maven.warmup import ensure_coverage_jars
from pytest_tebench.run.maven.warmup import pin_unversioned
from pytest_tebench.run.maven.warmup import project_key
from pytest_tebench.run.maven.warmup import warm_up


@dataclass(frozen=True)
class WarmedRun:
    """An offline selection run, and the warm-up it took (``None``: the repository had everything)."""

    run: SelectionRun
    warmup: WarmupResult | None = None
    #: Seconds of the first offline attempt that failed for a missing artifact (0 without warm-up).
    probe_seconds: float = 0.0
    #: Seconds of the offline check of a build digest never seen before (its effective POM against
    #: the repository), paid by the first run of that build on this machine (0: none ran).
    check_seconds: float = 0.0

    def timings(self) -> dict[str, float]:
        """What making the repository ready cost the run that paid it: with a warm-up, the offline
        attempt that found the repository lacking (``offline_probe``, the check included) and the
        warm-up (``warmup``); without, the check of a new build, when one ran (``build_check``)."""
        if self.warmup is not None:
            return {"offline_probe": self.probe_seconds, "warmup": self.warmup.seconds}
        return {"build_check": self.check_seconds} if self.check_seconds else {}


def build_checked(settings: RunSettings, key: str, build: str) -> bool:
    """Whether build ``build`` of ``key`` was warmed or found complete in the repository before
    (by a harness that recorded the Surefire its effective POM runs and whether it forks the
    tests: an older entry is checked again, once)."""
    return any(
        e.get("project") == key and e.get("ok") and e.get("build") == build and SUREFIRE in e and FORKS in e
        for e in read_journal(settings.maven_repo)
    )


def run_warmed(
    executor: Executor,
    workspace: Path,
    selection: Iterable[TestId],
    settings: RunSettings,
    *,
    project: str,
    warm_selection: Iterable[TestId] | None = None,
    trusted: Callable[[], AbstractContextManager[None]] | None = None,
) -> WarmedRun:
    """:func:`~pytest_tebench.run.maven.selection.run_inherited` offline, on a repository that
    has what the build needs.

    A commit whose build (:func:`~pytest_tebench.run.maven.buildplan.build_digest`) was never
    seen is checked first: its effective POM, computed offline, must name nothing the repository
    lacks; otherwise (or when the effective POM cannot be computed offline) the project is warmed
    up for it before the offline run. An offline run that still lacks an artifact warms up (once
    more, unless this call just did) and runs offline again; an artifact still missing then is
    named in the run's error. Warm-ups run inside ``trusted()``, which puts trusted code in the
    workspace (e.g. gold instead of a prediction).

    A warm-up that fails twice is returned as is (``warmup.ok`` false) with the failed offline
    run: the caller turns it into a harness error, or an unbuildable instance when the warm-up
    names artifacts published nowhere reachable (``warmup.unpublished``); so is, at once, one
    whose POMs need a ``-SNAPSHOT`` the reactor does not build (:func:`foreign_snapshots`).
    """
    chosen = sorted(set(selection))
    foreign = foreign_snapshots(workspace, settings.maven_args)
    if foreign:  # known from the POMs: nothing is downloaded, no retry can publish them
        why = unbuildable_message(foreign)
        refused = WarmupResult(
            project_key(project, settings), ok=False, cached=False, error=why, unpublished=foreign
        )
        return WarmedRun(_failed_run(refused), refused)
    # Fetching the JaCoCo jars is no per-project warm-up: without them no run can report coverage.
    failed = ensure_coverage_jars(executor, workspace, settings)
    if failed is not None:
        why = "timed out" if failed.timed_out else f"exit code {failed.exit_code}"
        fetch = WarmupResult("jacoco", False, False, (failed,), f"cannot fetch the JaCoCo jars: {why}", 1)
        return WarmedRun(_failed_run(fetch), fetch)
    key = project_key(project, settings)
    build = settings.digest(workspace)
    warm_list = chosen if warm_selection is None else warm_selection

    def warm(since: float | None) -> WarmupResult:
        with trusted() if trusted is not None else _nothing():
            return warm_up(
                executor,
                workspace,
                settings,
                project=project,
                selection=warm_list,
                since=since,
                build=build,
                # what the check found, and an earlier check's (run_selection pinned them here)
                unversioned={**recorded_unversioned(settings.maven_repo, build), **checked},
            )

    warmed: WarmupResult | None = None
    probe = check = 0.0
    checked: dict[str, list[str]] = {}
    if not build_checked(settings, key, build):
        complete, check, surefire, forks, checked = _complete_offline(executor, workspace, settings)
        probe = check
        if complete:
            append_entry(
                settings.maven_repo,
                {
                    "project": key,
                    "build": build,
                    "ok": True,
                    "online": False,
                    "ended": time.time(),
                    SUREFIRE: surefire,
                    FORKS: forks,
                    UNVERSIONED: checked,
                },
            )
        else:
            # since 0: a warm-up of this very build by another worker counts, whenever it ran
            warmed = warm(0.0)
            if not warmed.ok:
                return WarmedRun(_failed_run(warmed), warmed, probe, check)
    begun = time.time()
    run = run_inherited(executor, workspace, chosen, settings)
    if not needs_warmup(run):
        return WarmedRun(run, warmed, probe, check)
    probe += sum(run.timings.values())
    since: float | None = begun
    while warmed is None or warmed.cached:
        first = run
        warmed = warm(since)
        if not warmed.ok:
            return WarmedRun(first, warmed, probe, check)
        run = run_inherited(executor, workspace, chosen, settings)
        if not (warmed.cached and needs_warmup(run)):
            break
        # The warm-up another worker finished meanwhile was for another commit of the project
        # (another parent POM, say): this one still lacks something, so it warms up itself.
        since = None
    if needs_warmup(run):
        lacking = sorted({c for step in run.steps for c in mavenlog.missing_coordinates(step.output)})
        names = ", ".join(lacking) or "an artifact the log does not name"
        run = replace(run, error=f"the offline build still lacks {names} after a warm-up: {run.error}")
    return WarmedRun(run, warmed, probe, check)


def _complete_offline(
    executor: Executor, workspace: Path, settings: RunSettings
) -> tuple[bool, float, str, bool, dict[str, list[str]]]:
    """Whether the repository holds everything the workspace's effective POM names (computed
    offline), the seconds it took, the Surefire version it runs, whether its tests fork, and the
    build plugins it leaves without a version (pinned by the run's date, then the effective POM
    is computed again).
    ``False`` when the effective POM cannot be computed."""
    step = effective_pom_step(
        buildplan.EFFECTIVE_POM,
        java_version=settings.java_version,
        timeout=settings.compile_timeout,
        maven=settings.maven_tools(),
        extra_args=settings.maven_args,
    )
    result = executor.run(workspace, step, maven_repo=settings.maven_repo)
    seconds = result.duration
    unversioned = pin_unversioned(workspace, settings, result.output) if result.ok else {}
    if unversioned and settings.plugins_released_by:
        result = executor.run(workspace, step, maven_repo=settings.maven_repo)
        seconds += result.duration
    planned = buildplan.read_plan(workspace) if result.ok else None
    forks = result.ok and buildplan.read_forks(workspace)
    with contextlib.suppress(OSError):
        (workspace / buildplan.EFFECTIVE_POM).unlink()
    complete = planned is not None and not buildplan.missing_from(settings.maven_repo, planned)
    return complete, seconds, buildplan.surefire_version(planned or []), forks, unversioned


def needs_warmup(run: SelectionRun) -> bool:
    """An offline run that failed because the Maven repository lacks something."""
    return run.status == BUILD_ERROR and any(mavenlog.missing_artifacts(step.output) for step in run.steps)


def _failed_run(warmed: WarmupResult) -> SelectionRun:
    return SelectionRun(
        status=BUILD_ERROR, compile_ok=None, test_compile_ok=None, error=warmed.error, steps=warmed.steps
    )


@contextlib.contextmanager
def _nothing() -> Iterator[None]:
    yield
