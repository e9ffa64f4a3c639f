"""Fill the shared Maven repository once per project, and only with what an offline build lacks.

Evaluation is offline first (:func:`~pytest_tebench.run.maven.offline_run.run_warmed`): the
build runs with ``-o``; only when its log says an artifact is missing from the repository
(:func:`~pytest_tebench.run.maven.log.missing_artifacts`) does a warm-up resolve online, then the
build runs offline again. A project (repository + build tool) therefore warms once, when its
first build finds the repository empty, and again only if a later commit needs something new
(another parent POM, a profile a different JDK activates).

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

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_tebench.locking import file_lock
from pytest_tebench.locking import lock_name
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.maven import buildplan
from pytest_tebench.run.maven import log as mavenlog
from pytest_tebench.run.maven import plugin_pins
from pytest_tebench.run.maven.jacoco import AGENT_ARTIFACT
from pytest_tebench.run.maven.jacoco import AGENT_JAR
from pytest_tebench.run.maven.jacoco import CLI_ARTIFACT
from pytest_tebench.run.maven.jacoco import CLI_JAR
from pytest_tebench.run.maven.jacoco import project_includes
from pytest_tebench.run.maven.journal import FORKS
from pytest_tebench.run.maven.journal import STATE_DIR
from pytest_tebench.run.maven.journal import SUREFIRE
from pytest_tebench.run.maven.journal import UNVERSIONED
from pytest_tebench.run.maven.journal import append_entry
from pytest_tebench.run.maven.journal import read_journal
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.steps import compile_step
from pytest_tebench.run.maven.steps import effective_pom_step
from pytest_tebench.run.maven.steps import resolve_artifact_step
from pytest_tebench.run.maven.steps import resolve_plan_step
from pytest_tebench.run.maven.steps import selection_step
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.testrun import remove_stale_outputs
from pytest_tebench.run.maven.unpublished import unbuildable_message

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
    #: Coordinates the build needs that no repository reachable from here has (a ``-SNAPSHOT``
    #: parent or BOM, a private repository's artifact): the instance is unbuildable here.
    unpublished: tuple[str, ...] = ()

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
            "unpublished": list(self.unpublished),
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


def project_key(project: str, settings: RunSettings) -> str:
    """What one warm-up covers: a repository built with one Maven (``""`` = the executor's own)."""
    return f"{project}@maven-{settings.maven_version or 'default'}"


def _state(settings: RunSettings) -> Path:
    return settings.maven_repo / STATE_DIR


def _journal(settings: RunSettings, entry: dict[str, Any]) -> None:
    append_entry(settings.maven_repo, entry)


def _warmed_since(settings: RunSettings, key: str, since: float, build: str = "") -> bool:
    """An ok warm-up of ``key`` (of build ``build`` when given) that ended after ``since``."""
    return any(
        e.get("project") == key
        and e.get("ok")
        and e.get("online", True)
        and (not build or e.get("build") == build)
        and float(e.get("ended", 0)) >= since
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
    build: str = "",
    unversioned: dict[str, list[str]] | None = None,
) -> WarmupResult:
    """Resolve online what an offline build of ``workspace`` (a trusted checkout: its tests run
    with network) needs, under the project's lock. Leaves ``target/`` built; evaluation removes it.

    ``since``: the time an offline build failed for a missing artifact; when another worker
    finished a warm-up of this project (of build digest ``build``, when given) after it, nothing
    is downloaded (``cached``). ``None`` warms up whatever the journal says. ``unversioned``: the
    build plugins without a version an earlier check found (:mod:`~pytest_tebench.run.maven.plugin_pins`;
    the workspace carries their pins), journaled with those this warm-up's effective POM shows.
    """
    started = time.monotonic()
    key = project_key(project, settings)
    chosen = None if selection is None else list(selection)
    with file_lock(_state(settings) / "locks" / f"warmup-{lock_name(key)}.lock"):
        if since is not None and _warmed_since(settings, key, since, build):
            return WarmupResult(key, ok=True, cached=True, seconds=time.monotonic() - started)
        steps: list[StepResult] = []
        error = ""
        unpublished: tuple[str, ...] = ()
        for attempt in range(1, ATTEMPTS + 1):
            begun = time.time()
            learnt: dict[str, Any] = {}
            new_steps, error, transient, unpublished = _online_build(
                executor, workspace, settings, chosen, learnt
            )
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
                    "build": build or None,
                    "unpublished": list(unpublished) or None,
                    # the Surefire of the effective POM the attempt computed ("" none)
                    SUREFIRE: buildplan.surefire_version(buildplan.read_plan(workspace) or []),
                    FORKS: buildplan.read_forks(workspace),
                    UNVERSIONED: {**(unversioned or {}), **learnt.get(UNVERSIONED, {})},
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
            unpublished=unpublished,
        )


def _online_build(
    executor: Executor,
    workspace: Path,
    settings: RunSettings,
    selection: list[TestId] | None,
    learnt: dict[str, Any],
) -> tuple[list[StepResult], str, bool, tuple[str, ...]]:
    """One online attempt: (steps, error or "", whether a failure may go away on a retry,
    coordinates published nowhere reachable); ``learnt`` gets the unversioned plugins it pinned."""
    steps: list[StepResult] = []
    failed = ensure_coverage_jars(executor, workspace, settings)
    if failed is not None:
        return [failed], f"cannot resolve the JaCoCo jars ({failed.name})", True, ()
    remove_stale_outputs(workspace, whole_target=settings.clean_target)
    timeout = settings.warmup_timeout
    planned, plan_steps, plan_error = _resolve_plan(executor, workspace, settings, learnt)
    steps.extend(plan_steps)
    if plan_error:
        return steps, *plan_error
    unused = {(a.group, a.artifact, a.version) for a in planned if a.kind == "unpublished"}
    build = executor.run(
        workspace,
        _online(
            compile_step(
                java_version=settings.java_version,
                timeout=timeout,
                offline=False,
                maven=settings.maven_tools(),
                extra_args=settings.maven_args,
            )
        ),
        maven_repo=settings.maven_repo,
    )
    steps.append(build)
    if not build.ok:
        if build.timed_out:
            return steps, f"warm-up test-compile failed: timed out after {build.duration:.0f} s", True, ()
        verdict = mavenlog.diagnose_build(build.output, build.exit_code)
        if verdict.kind in (mavenlog.COMPILE_ERROR, mavenlog.TEST_COMPILE_ERROR):
            # Everything compilation needs is resolved, and the plan brought Surefire and its
            # provider; the offline run will tell that the code failed.
            return steps, *_verify(settings, planned, unused)
        return steps, *_unpublished_or(build.output, f"warm-up test-compile failed: {verdict.summary}")
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
                extra_args=settings.maven_args,
            )
        ),
        maven_repo=settings.maven_repo,
    )
    steps.append(tested)
    if not tested.ok:
        if tested.timed_out:
            return steps, f"warm-up test step failed: timed out after {tested.duration:.0f} s", True, ()
        verdict = mavenlog.diagnose_test_step(tested.output, tested.exit_code)
        if verdict.kind != mavenlog.TEST_CRASH:
            return steps, *_unpublished_or(tested.output, f"warm-up test step failed: {verdict.summary}")
    return steps, *_verify(settings, planned, unused)


def _unpublished_or(output: str, error: str) -> tuple[str, bool, tuple[str, ...]]:
    """A failed online step: unbuildable when it names artifacts no repository has (final),
    else ``error`` (final when a plugin refuses the Maven in use, else it may be retried)."""
    missing = tuple(mavenlog.unpublished_coordinates(output))
    if missing:
        return unbuildable_message(missing), False, missing
    if mavenlog.required_maven(output):
        # a plugin refuses this Maven: no retry with it can help (the caller runs again with a
        # newer Maven: README, --tebench-maven)
        return error, False, ()
    return error, True, ()


def _verify(
    settings: RunSettings, planned: list[buildplan.Artifact], unused: set[tuple[str, str, str]]
) -> tuple[str, bool, tuple[str, ...]]:
    """Every artifact of the plan is in the repository now (those no repository has, which the
    build itself did not ask for, excepted)."""
    missing = [
        a
        for a in buildplan.missing_from(settings.maven_repo, planned)
        if a.kind != "unpublished" and (a.group, a.artifact, a.version) not in unused
    ]
    if missing:
        names = ", ".join(a.coordinates for a in missing)
        return f"the warm-up did not bring what the build's effective POM names: {names}", True, ()
    return "", False, ()


def _resolve_plan(
    executor: Executor, workspace: Path, settings: RunSettings, learnt: dict[str, Any]
) -> tuple[list[buildplan.Artifact], list[StepResult], tuple[str, bool, tuple[str, ...]] | None]:
    """Online: the effective POM (parents, BOMs, the JDK's profiles), then every plugin,
    dependency and Surefire provider it names that the repository lacks, in one launch. A build
    plugin it leaves without a version is pinned first (``learnt[UNVERSIONED]``), and the
    effective POM computed again with the pin.

    Returns (the plan, plus one ``kind="unpublished"`` entry per artifact no repository had;
    the steps; the attempt's error triple, or ``None`` to go on with the build)."""
    steps: list[StepResult] = []
    tools = settings.maven_tools()
    effective_step = _online(
        effective_pom_step(
            buildplan.EFFECTIVE_POM,
            java_version=settings.java_version,
            timeout=settings.warmup_timeout,
            offline=False,
            maven=tools,
            extra_args=settings.maven_args,
        )
    )
    effective = executor.run(workspace, effective_step, maven_repo=settings.maven_repo)
    steps.append(effective)
    if effective.ok:
        learnt[UNVERSIONED] = pin_unversioned(workspace, settings, effective.output)
        if learnt[UNVERSIONED] and settings.plugins_released_by:
            effective = executor.run(workspace, effective_step, maven_repo=settings.maven_repo)
            steps.append(effective)
    if not effective.ok:
        if effective.timed_out:
            return [], steps, (f"warm-up effective-pom timed out after {effective.duration:.0f} s", True, ())
        unpublished = tuple(mavenlog.unpublished_coordinates(effective.output))
        if unpublished:
            return [], steps, _unpublished_or(effective.output, "")
        # not the POMs' fault (a broken help plugin?): the build steps still warm what they reach
        return [], steps, None
    planned = buildplan.read_plan(workspace) or []
    missing = buildplan.missing_from(settings.maven_repo, planned)
    # Surefire resolves its provider in a tree of its own (launcher 1.9.3 for surefire 3.2.5,
    # whatever JUnit the project uses), and a plugin's declared dependencies join the plugin's
    # classpath (gson's proguard-base 7.9.1 brings kotlin-stdlib 2.2.0): each is resolved alone,
    # never mediated with the project's versions. Their file being there says nothing of their
    # tree, so they are resolved at every warm-up (which a new build digest or a miss calls for).
    outputs: list[str] = []
    for provider in (a for a in planned if a.kind in buildplan.ISOLATED_KINDS):
        alone = executor.run(
            workspace,
            _online(
                resolve_artifact_step(
                    provider.request,
                    java_version=settings.java_version,
                    timeout=settings.warmup_timeout,
                    maven=tools,
                    transitive=True,
                )
            ),
            maven_repo=settings.maven_repo,
        )
        steps.append(alone)
        outputs.append(alone.output)
    others = [a for a in missing if a.kind not in buildplan.ISOLATED_KINDS]
    absent = _absent(outputs)
    if not others:
        return planned + absent, steps, None
    resolver = workspace / buildplan.RESOLVER_POM
    resolver.write_text(buildplan.resolver_pom(others), encoding="utf-8")
    resolved = executor.run(
        workspace,
        _online(
            resolve_plan_step(
                buildplan.RESOLVER_POM,
                java_version=settings.java_version,
                timeout=settings.warmup_timeout,
                maven=tools,
            )
        ),
        maven_repo=settings.maven_repo,
    )
    steps.append(resolved)
    return planned + _absent([*outputs, resolved.output]), steps, None


def _absent(outputs: Iterable[str]) -> list[buildplan.Artifact]:
    """What no repository had, as ``kind="unpublished"`` entries: an error only if the build
    itself asks for it (the effective POM also names plugins ``mvn test`` may not need)."""
    absent = []
    for output in outputs:
        for coordinates in mavenlog.unpublished_coordinates(output):
            parts = coordinates.split(":")
            absent.append(buildplan.Artifact(parts[0], parts[1], parts[-1], kind="unpublished"))
    return absent


def _online(step: BuildStep) -> BuildStep:
    argv = step.argv
    return replace(step, argv=(*argv[:-1], *RESOLVER_LOCK_FLAGS, argv[-1]))


def pin_unversioned(workspace: Path, settings: RunSettings, output: str) -> dict[str, list[str]]:
    """:func:`~pytest_tebench.run.maven.plugin_pins.pin_found` for the effective POM just written."""
    return plugin_pins.pin_found(
        workspace, workspace / buildplan.EFFECTIVE_POM, output, settings.plugins_released_by, _state(settings)
    )
