"""Fill the shared Maven repository once per project so evaluation can run offline.

``dependency:go-offline`` misses what only shows up while building: Surefire's JUnit provider
(resolved when tests start), plugins of profiles activated by the JDK, compiler plugin
dependencies. So warm-up runs the real evaluation steps online on a checkout - ``test-compile``
and ``test`` (with the caller's selection, or by default every test class filtered to a method
that does not exist, which makes Surefire resolve its provider without running any test) - and
fetches the JaCoCo agent and CLI jars.

Up to eight pytest-xdist workers share one repository. Warm-ups take one repository-wide
``flock``, so two never download at once (Maven 3.8's resolver does not promise safe concurrent
writes), and leave a marker per project key, so each project warms once. Evaluation steps are
offline and only read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pytest_tebench.locking import file_lock
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.maven import log as mavenlog
from pytest_tebench.run.maven.jacoco import AGENT_ARTIFACT
from pytest_tebench.run.maven.jacoco import AGENT_JAR
from pytest_tebench.run.maven.jacoco import CLI_ARTIFACT
from pytest_tebench.run.maven.jacoco import CLI_JAR
from pytest_tebench.run.maven.jacoco import project_includes
from pytest_tebench.run.maven.steps import compile_step
from pytest_tebench.run.maven.steps import resolve_artifact_step
from pytest_tebench.run.maven.steps import selection_step
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.testrun import RunSettings
from pytest_tebench.run.maven.testrun import remove_stale_outputs

#: Bump when warm-up starts resolving more, so old markers stop counting.
WARMUP_VERSION = 1
STATE_DIR = ".tebench"


@dataclass(frozen=True)
class WarmupResult:
    """Outcome of :func:`warm_up`; ``cached`` means an earlier warm-up already did it."""

    key: str
    ok: bool
    cached: bool
    steps: tuple[StepResult, ...] = ()
    error: str = ""


def warmup_key(workspace: Path, settings: RunSettings) -> str:
    """Identity of what a warm-up resolves: the POM's bytes, the JDK (profiles activate on it)
    and the Maven version."""
    digest = hashlib.sha256()
    digest.update((workspace / "pom.xml").read_bytes())
    digest.update(f"|java={settings.java_version}|maven={settings.maven_version}|v={WARMUP_VERSION}".encode())
    return digest.hexdigest()[:20]


def _coverage_jars_present(settings: RunSettings) -> bool:
    """A project warmed without coverage (the dataset builder) still lacks the JaCoCo jars."""
    return not settings.coverage or all((settings.maven_repo / jar).is_file() for jar in (AGENT_JAR, CLI_JAR))


def _state(settings: RunSettings) -> Path:
    return settings.maven_repo / STATE_DIR


def warm_up(
    executor: Executor,
    workspace: Path,
    settings: RunSettings,
    *,
    selection: Iterable[TestId] | None = None,
    key: str | None = None,
    timeout: float | None = None,
) -> WarmupResult:
    """Resolve online everything an offline :func:`~pytest_tebench.run.maven.testrun.run_selection`
    of ``workspace`` will need. Leaves ``target/`` built; evaluation removes it anyway.

    ``timeout`` bounds each step (default: the settings' compile/test timeouts).
    """
    key = key or warmup_key(workspace, settings)
    marker = _state(settings) / "warm" / f"{key}.ok"
    if marker.is_file() and _coverage_jars_present(settings):
        return WarmupResult(key, ok=True, cached=True)
    steps: list[StepResult] = []
    with file_lock(_state(settings) / "warmup.lock"):
        if marker.is_file() and _coverage_jars_present(settings):
            return WarmupResult(key, ok=True, cached=True)
        if settings.coverage:
            for artifact, jar in ((AGENT_ARTIFACT, AGENT_JAR), (CLI_ARTIFACT, CLI_JAR)):
                if (settings.maven_repo / jar).is_file():
                    continue
                step = resolve_artifact_step(
                    artifact,
                    java_version=settings.java_version,
                    timeout=timeout or settings.compile_timeout,
                    maven_version=settings.maven_version,
                )
                result = executor.run(workspace, step, maven_repo=settings.maven_repo)
                steps.append(result)
                if not result.ok or not (settings.maven_repo / jar).is_file():
                    return WarmupResult(key, False, False, tuple(steps), f"cannot resolve {artifact}")
        remove_stale_outputs(workspace, whole_target=settings.clean_target)
        build = executor.run(
            workspace,
            compile_step(
                java_version=settings.java_version,
                timeout=timeout or settings.compile_timeout,
                offline=False,
                maven_version=settings.maven_version,
                extra_args=settings.extra_args,
            ),
            maven_repo=settings.maven_repo,
        )
        steps.append(build)
        if not build.ok:
            why = (
                "timed out"
                if build.timed_out
                else mavenlog.diagnose_build(build.output, build.exit_code).summary
            )
            return WarmupResult(key, False, False, tuple(steps), f"warm-up test-compile failed: {why}")
        includes = (settings.coverage_includes or project_includes(workspace)) if settings.coverage else ()
        tested = executor.run(
            workspace,
            selection_step(
                None if selection is None else list(selection),
                java_version=settings.java_version,
                timeout=timeout or settings.test_timeout,
                includes=includes,
                offline=False,
                maven_version=settings.maven_version,
                extra_args=settings.extra_args,
            ),
            maven_repo=settings.maven_repo,
        )
        steps.append(tested)
        if not tested.ok:
            why = (
                "timed out"
                if tested.timed_out
                else mavenlog.diagnose_test_step(tested.output, tested.exit_code).summary
            )
            return WarmupResult(key, False, False, tuple(steps), f"warm-up test step failed: {why}")
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(f"{workspace}\n", encoding="utf-8")
    return WarmupResult(key, ok=True, cached=False, steps=tuple(steps))
