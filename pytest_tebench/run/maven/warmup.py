"""Fill the shared Maven repository once per project, and only with what an offline build lacks.

Evaluation is offline first (:func:`run_warmed`): the build runs with ``-o``; only when its log
says an artifact is missing from the repository (:func:`~pytest_tebench.run.maven.log.missing_artifacts`)
does a warm-up resolve online, then the build runs offline again. A project (repository + build
tool) therefore warms once, when its first build finds the repository empty, and again only if a
later commit needs something new (another parent POM, a profile a different JDK activates).

``dependency:go-offline`` misses what only shows up while building: Surefire's JUnit provider
(resolved when tests start), plugins of profiles activated by the JDK, compiler plugin
dependencies. So a warm-up (:func:`warm_up`) runs the real evaluation steps online on a trusted
checkout - ``test-compile`` and ``test`` with the caller's selection (by default every test
class filtered to a method that does not exist, which makes Surefire resolve its provider
without running any test); the JaCoCo agent and CLI jars are fetched once for all projects.

Locks: one ``flock`` per project, so N pytest-xdist workers never warm the same project twice
and different projects warm in parallel. A worker that waited on the lock first reads the
journal: when another worker finished a warm-up of the project after this worker's offline
build failed, it only retries offline. Concurrent warm-ups of different projects write the
shared repository at once: Maven 3.9 is told to use its cross-process named file locks
(``aether.syncContext.*``); Maven 3.8's resolver moves every downloaded file into place
atomically and locks its tracking files, which is what makes shared local repositories work
in CI. The JaCoCo jars are fetched under a lock of their own.

Limits and retries: each online step has its own limit (``RunSettings.warmup_timeout``,
``--tebench-timeout-warmup``; a cold warm-up downloads a project's whole build), and a warm-up
that fails for a reason other than the project's code (a timeout, a download error) is retried
once before it costs an item. Every online attempt is appended to ``.tebench/warmups.jsonl`` in
the Maven repository (project, start, end, outcome): how many resolutions a run made, and when.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_tebench.locking import file_lock
from pytest_tebench.locking import lock_name
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.maven import log as mavenlog
from pytest_tebench.run.maven.jacoco import AGENT_ARTIFACT
from pytest_tebench.run.maven.jacoco import AGENT_JAR
from pytest_tebench.run.maven.jacoco import CLI_ARTIFACT
from pytest_tebench.run.maven.jacoco import CLI_JAR
from pytest_tebench.run.maven.jacoco import project_includes
from pytest_tebench.run.maven.selection import run_inherited
from pytest_tebench.run.maven.steps import compile_step
from pytest_tebench.run.maven.steps import resolve_artifact_step
from pytest_tebench.run.maven.steps import selection_step
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.testrun import BUILD_ERROR
from pytest_tebench.run.maven.testrun import RunSettings
from pytest_tebench.run.maven.testrun import SelectionRun
from pytest_tebench.run.maven.testrun import remove_stale_outputs

STATE_DIR = ".tebench"
JOURNAL = "warmups.jsonl"
#: Online attempts of one warm-up: the first, and one retry of a transient failure.
ATTEMPTS = 2
#: Maven >= 3.9 (resolver 1.9): cross-process file locks on the shared repository while online.
#: Older resolvers ignore unknown properties.
RESOLVER_LOCK_FLAGS: tuple[str, ...] = (
    "-Daether.syncContext.named.factory=file-lock",
    "-Daether.syncContext.named.nameMapper=file-gav",
)


@dataclass(frozen=True)
class WarmupResult:
    """Outcome of :func:`warm_up`; ``cached`` means another worker had just done it (no download)."""

    project: str
    ok: bool
    cached: bool
    steps: tuple[StepResult, ...] = ()
    error: str = ""
    #: Online attempts made (0 when cached).
    attempts: int = 0
    #: Wall seconds spent, lock waiting included.
    seconds: float = 0.0

    @property
    def log_tail(self) -> str:
        """The end of the last online step's log (explains a failed warm-up)."""
        return mavenlog.log_tail(self.steps[-1].output) if self.steps else ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "ok": self.ok,
            "cached": self.cached,
            "attempts": self.attempts,
            "seconds": round(self.seconds, 3),
            "error": self.error or None,
            "steps": [
                {
                    "name": s.name,
                    "exit_code": s.exit_code,
                    "timed_out": s.timed_out,
                    "duration": round(s.duration, 3),
                }
                for s in self.steps
            ],
        }


@dataclass(frozen=True)
class WarmedRun:
    """An offline selection run, and the warm-up it took (``None``: the repository had everything)."""

    run: SelectionRun
    warmup: WarmupResult | None = None
    #: Seconds of the first offline attempt that failed for a missing artifact (0 without warm-up).
    probe_seconds: float = 0.0


def project_key(project: str, settings: RunSettings) -> str:
    """What one warm-up covers: a repository built with one Maven (``""`` = the executor's own)."""
    return f"{project}@maven-{settings.maven_version or 'default'}"


def _state(settings: RunSettings) -> Path:
    return settings.maven_repo / STATE_DIR


def journal_path(maven_repo: Path) -> Path:
    return maven_repo / STATE_DIR / JOURNAL


def read_journal(maven_repo: Path) -> list[dict[str, Any]]:
    """Every online warm-up attempt recorded in ``maven_repo``, oldest first."""
    path = journal_path(maven_repo)
    if not path.is_file():
        return []
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            entry = json.loads(line)
            if isinstance(entry, dict):
                entries.append(entry)
    return entries


def _journal(settings: RunSettings, entry: dict[str, Any]) -> None:
    path = journal_path(settings.maven_repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    # one short line per O_APPEND write: lines of concurrent writers never interleave
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(entry, sort_keys=True) + "\n").encode())
    finally:
        os.close(fd)


def _warmed_since(settings: RunSettings, key: str, since: float) -> bool:
    return any(
        e.get("project") == key and e.get("ok") and float(e.get("ended", 0)) >= since
        for e in read_journal(settings.maven_repo)
    )


def ensure_coverage_jars(executor: Executor, workspace: Path, settings: RunSettings) -> StepResult | None:
    """Fetch the JaCoCo agent and CLI jars once for every project; the failed step, or ``None``."""
    if not settings.coverage or _coverage_jars_present(settings):
        return None
    with file_lock(_state(settings) / "locks" / "jacoco.lock"):
        for artifact, jar in ((AGENT_ARTIFACT, AGENT_JAR), (CLI_ARTIFACT, CLI_JAR)):
            if (settings.maven_repo / jar).is_file():
                continue
            result = executor.run(
                workspace,
                resolve_artifact_step(
                    artifact,
                    java_version=settings.java_version,
                    timeout=settings.warmup_timeout,
                    maven=settings.maven_tools(),
                ),
                maven_repo=settings.maven_repo,
            )
            if not result.ok or not (settings.maven_repo / jar).is_file():
                return result
    return None


def _coverage_jars_present(settings: RunSettings) -> bool:
    return all((settings.maven_repo / jar).is_file() for jar in (AGENT_JAR, CLI_JAR))


def warm_up(
    executor: Executor,
    workspace: Path,
    settings: RunSettings,
    *,
    project: str,
    selection: Iterable[TestId] | None = None,
    since: float | None = None,
) -> WarmupResult:
    """Resolve online what an offline build of ``workspace`` (a trusted checkout: its tests run
    with network) needs, under the project's lock. Leaves ``target/`` built; evaluation removes it.

    ``since``: the time an offline build failed for a missing artifact; when another worker
    finished a warm-up of this project after it, nothing is downloaded (``cached``).
    """
    started = time.monotonic()
    key = project_key(project, settings)
    chosen = None if selection is None else list(selection)
    with file_lock(_state(settings) / "locks" / f"warmup-{lock_name(key)}.lock"):
        if since is not None and _warmed_since(settings, key, since):
            return WarmupResult(key, ok=True, cached=True, seconds=time.monotonic() - started)
        steps: list[StepResult] = []
        error = ""
        for attempt in range(1, ATTEMPTS + 1):
            begun = time.time()
            new_steps, error, transient = _online_build(executor, workspace, settings, chosen)
            steps.extend(new_steps)
            _journal(
                settings,
                {
                    "project": key,
                    "attempt": attempt,
                    "started": begun,
                    "ended": time.time(),
                    "ok": not error,
                    "error": error or None,
                    "pid": os.getpid(),
                    "java": settings.java_version,
                },
            )
            if not error or not transient:
                break
        return WarmupResult(
            key,
            ok=not error,
            cached=False,
            steps=tuple(steps),
            error=error,
            attempts=attempt,
            seconds=time.monotonic() - started,
        )


def _online_build(
    executor: Executor, workspace: Path, settings: RunSettings, selection: list[TestId] | None
) -> tuple[list[StepResult], str, bool]:
    """One online attempt: (steps, error or "", whether a failure may go away on a retry)."""
    steps: list[StepResult] = []
    failed = ensure_coverage_jars(executor, workspace, settings)
    if failed is not None:
        return [failed], f"cannot resolve the JaCoCo jars ({failed.name})", True
    remove_stale_outputs(workspace, whole_target=settings.clean_target)
    timeout = settings.warmup_timeout
    build = executor.run(
        workspace,
        _online(
            compile_step(
                java_version=settings.java_version,
                timeout=timeout,
                offline=False,
                maven=settings.maven_tools(),
                extra_args=settings.extra_args,
            )
        ),
        maven_repo=settings.maven_repo,
    )
    steps.append(build)
    if not build.ok:
        if build.timed_out:
            return steps, f"warm-up test-compile failed: timed out after {build.duration:.0f} s", True
        verdict = mavenlog.diagnose_build(build.output, build.exit_code)
        if verdict.kind in (mavenlog.COMPILE_ERROR, mavenlog.TEST_COMPILE_ERROR):
            # Everything compilation needs is resolved; the offline run will tell the code failed.
            return steps, "", False
        return steps, f"warm-up test-compile failed: {verdict.summary}", True
    includes = (settings.coverage_includes or project_includes(workspace)) if settings.coverage else ()
    tested = executor.run(
        workspace,
        _online(
            selection_step(
                selection,
                java_version=settings.java_version,
                timeout=timeout,
                includes=includes,
                offline=False,
                maven=settings.maven_tools(),
                extra_args=settings.extra_args,
            )
        ),
        maven_repo=settings.maven_repo,
    )
    steps.append(tested)
    if not tested.ok:
        if tested.timed_out:
            return steps, f"warm-up test step failed: timed out after {tested.duration:.0f} s", True
        verdict = mavenlog.diagnose_test_step(tested.output, tested.exit_code)
        if verdict.kind != mavenlog.TEST_CRASH:
            return steps, f"warm-up test step failed: {verdict.summary}", True
    return steps, "", False


def _online(step: BuildStep) -> BuildStep:
    argv = step.argv
    return replace(step, argv=(*argv[:-1], *RESOLVER_LOCK_FLAGS, argv[-1]))


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
    """:func:`~pytest_tebench.run.maven.selection.run_inherited` offline; when the repository lacks
    an artifact, warm the project up (inside ``trusted()``, which puts trusted code in the
    workspace, e.g. gold instead of a prediction) and run offline again.

    A warm-up that fails twice is returned as is (``warmup.ok`` false) with the failed offline
    run: the caller turns it into a harness error.
    """
    chosen = sorted(set(selection))
    # Fetching the JaCoCo jars is no per-project warm-up: without them no run can report coverage.
    failed = ensure_coverage_jars(executor, workspace, settings)
    if failed is not None:
        why = "timed out" if failed.timed_out else f"exit code {failed.exit_code}"
        fetch = WarmupResult("jacoco", False, False, (failed,), f"cannot fetch the JaCoCo jars: {why}", 1)
        return WarmedRun(_failed_run(fetch), fetch)
    begun = time.time()
    first = run_inherited(executor, workspace, chosen, settings)
    if not needs_warmup(first):
        return WarmedRun(first)
    probe = sum(first.timings.values())
    since: float | None = begun
    while True:
        with trusted() if trusted is not None else _nothing():
            warmed = warm_up(
                executor,
                workspace,
                settings,
                project=project,
                selection=chosen if warm_selection is None else warm_selection,
                since=since,
            )
        if not warmed.ok:
            return WarmedRun(first, warmed, probe)
        run = run_inherited(executor, workspace, chosen, settings)
        if not (warmed.cached and needs_warmup(run)):
            return WarmedRun(run, warmed, probe)
        # The warm-up another worker finished meanwhile was for another commit of the project
        # (another parent POM, say): this one still lacks something, so it warms up itself.
        since = None


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
