"""Warm-up: offline first, online once per project under the project's lock, one retry.

A scripted executor plays Maven; its answers are the log lines real Maven 3.8/3.9 print (the
offline resolution failure below is copied from a real ``mvn -o`` run on an empty repository).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.maven import log as mavenlog
from pytest_tebench.run.maven.jacoco import AGENT_JAR
from pytest_tebench.run.maven.jacoco import CLI_JAR
from pytest_tebench.run.maven.steps import WARMUP_SELECTOR
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.testrun import RunSettings
from pytest_tebench.run.maven.warmup import RESOLVER_LOCK_FLAGS
from pytest_tebench.run.maven.warmup import journal_path
from pytest_tebench.run.maven.warmup import needs_warmup
from pytest_tebench.run.maven.warmup import project_key
from pytest_tebench.run.maven.warmup import read_journal
from pytest_tebench.run.maven.warmup import run_warmed
from pytest_tebench.run.maven.warmup import warm_up

A = TestId("p.ATest", "a")
MISSING = (
    "[INFO] Scanning for projects...\n"
    "[ERROR] Failed to execute goal on project x: Could not resolve dependencies for project p:x:jar:1: "
    "Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and the artifact "
    "org.junit.jupiter:junit-jupiter:jar:5.10.2 has not been downloaded from it before. -> [Help 1]\n"
)
COMPILE_FAILURE = (
    "[ERROR] /ws/src/main/java/p/A.java:[3,1] cannot find symbol\n"
    "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.13.0:compile "
    "(default-compile) on project x: Compilation failure\n"
)
BANNER = "Apache Maven 3.9.9 (8e8579a9e76f7d015ee5ec7bfcdc97d260186937)\nMaven home: /opt/maven\n"


def result(step: BuildStep, code: int | None = 0, output: str = "", timed_out: bool = False) -> StepResult:
    return StepResult(step.name, step.argv, None if timed_out else code, timed_out, 1.0, output)


@dataclass
class FakeMaven:
    """Offline steps fail for a missing artifact until an online test step has run (the
    repository is then "full"); online steps answer from ``online`` (a list of outcomes, one per
    call: ``"ok"``, ``"timeout"``, ``"download-error"``, ``"compile-error"``)."""

    online: list[str] = field(default_factory=list)
    name: str = "fake"
    filled: bool = False
    seen: list[BuildStep] = field(default_factory=list)
    on_online: Callable[[BuildStep], None] | None = None

    def run(self, workspace: Path, step: BuildStep, *, maven_repo: Path) -> StepResult:
        self.seen.append(step)
        if step.name.startswith("resolve-jacoco"):
            jar = AGENT_JAR if step.name.endswith("agent") else CLI_JAR
            (maven_repo / jar).parent.mkdir(parents=True, exist_ok=True)
            (maven_repo / jar).write_bytes(b"jar")
            return result(step)
        if not step.network:
            return result(step, 0, BANNER) if self.filled else result(step, 1, MISSING)
        if self.on_online is not None:
            self.on_online(step)
        outcome = self.online.pop(0) if self.online else "ok"
        if outcome == "timeout":
            return result(step, timed_out=True, output="[INFO] Downloading from central: ...\n")
        if outcome == "download-error":
            return result(
                step, 1, "[ERROR] Could not transfer artifact a:b:pom:1 from/to central: Connection reset\n"
            )
        if outcome == "compile-error":
            return result(step, 1, COMPILE_FAILURE)
        if step.name == "test":
            self.filled = True
        return result(step)

    def close(self) -> None:
        pass


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src/main/java/p").mkdir(parents=True)
    (ws / "src/main/java/p/A.java").write_text("package p;\nclass A {}\n", encoding="utf-8")
    (ws / "pom.xml").write_text("<project/>", encoding="utf-8")
    return ws


@pytest.fixture
def settings(tmp_path: Path) -> RunSettings:
    return RunSettings(maven_repo=tmp_path / "m2", java_version=11, coverage=False, warmup_timeout=1234)


def online(executor: FakeMaven) -> list[BuildStep]:
    return [step for step in executor.seen if step.network]


def test_a_warm_repository_needs_no_warm_up(workspace: Path, settings: RunSettings) -> None:
    executor = FakeMaven(filled=True)
    warmed = run_warmed(executor, workspace, [A], settings, project="o/x")
    assert warmed.warmup is None and warmed.run.status == "ok"
    assert online(executor) == [] and read_journal(settings.maven_repo) == []
    assert warmed.run.maven_version == "3.9.9"  # from the -V banner


def test_missing_artifact_warms_once_then_runs_offline(workspace: Path, settings: RunSettings) -> None:
    executor = FakeMaven()
    entered: list[str] = []

    @contextlib.contextmanager
    def trusted() -> Iterator[None]:
        entered.append("in")
        yield
        entered.append("out")

    warmed = run_warmed(executor, workspace, [A], settings, project="o/x", warm_selection=[], trusted=trusted)
    assert warmed.run.status == "ok"
    assert warmed.warmup is not None and warmed.warmup.ok and not warmed.warmup.cached
    assert entered == ["in", "out"]  # the online build ran on the trusted checkout
    steps = online(executor)
    assert [s.name for s in steps] == ["test-compile", "test"]
    for step in steps:
        assert "-o" not in step.argv and step.timeout == 1234  # the warm-up's own limit
        assert set(RESOLVER_LOCK_FLAGS) <= set(step.argv) and step.argv[-1] in ("test", "test-compile")
    # an empty warm selection resolves Surefire's provider without running a test
    assert f"-Dtest={WARMUP_SELECTOR}" in steps[-1].argv
    (entry,) = read_journal(settings.maven_repo)
    assert (entry["project"], entry["ok"], entry["attempt"]) == (project_key("o/x", settings), True, 1)
    # every later build of the project (another commit, another worker) is offline at once
    again = run_warmed(executor, workspace, [A], settings, project="o/x")
    assert again.warmup is None and len(online(executor)) == 2


def test_coverage_jars_are_fetched_once_for_all_projects(workspace: Path, settings: RunSettings) -> None:
    executor = FakeMaven(filled=True)
    with_coverage = replace(settings, coverage=True)
    run_warmed(executor, workspace, [], with_coverage, project="o/x")
    run_warmed(executor, workspace, [], with_coverage, project="o/y")
    names = [s.name for s in executor.seen if s.name.startswith("resolve")]
    assert names == ["resolve-jacoco-agent", "resolve-jacoco-cli"]


def test_transient_failure_is_retried_once(workspace: Path, settings: RunSettings) -> None:
    executor = FakeMaven(online=["timeout"])
    warmed = run_warmed(executor, workspace, [A], settings, project="o/x")
    assert warmed.run.status == "ok"
    assert warmed.warmup is not None and warmed.warmup.ok and warmed.warmup.attempts == 2
    assert [e["ok"] for e in read_journal(settings.maven_repo)] == [False, True]


def test_a_warm_up_failing_twice_keeps_its_log(workspace: Path, settings: RunSettings) -> None:
    executor = FakeMaven(online=["download-error", "timeout"])
    warmed = run_warmed(executor, workspace, [A], settings, project="o/x")
    assert warmed.warmup is not None and not warmed.warmup.ok and warmed.warmup.attempts == 2
    assert warmed.warmup.error.startswith("warm-up test-compile failed: timed out after 1 s")
    assert "Downloading from central" in warmed.warmup.log_tail
    assert warmed.run.status == "build_error"  # the offline attempt, for the record


def test_code_that_does_not_compile_is_not_retried(workspace: Path, settings: RunSettings) -> None:
    # what compilation needs is resolved; the offline run will report the compile error
    executor = FakeMaven(online=["compile-error"])
    result_ = warm_up(executor, workspace, settings, project="o/x")
    assert result_.ok and result_.attempts == 1 and [s.name for s in online(executor)] == ["test-compile"]


def test_waiting_worker_reuses_a_warm_up_finished_meanwhile(workspace: Path, settings: RunSettings) -> None:
    executor = FakeMaven()
    first = warm_up(executor, workspace, settings, project="o/x", since=0.0)
    assert first.ok and not first.cached
    # a second worker whose offline build failed before the first warm-up ended
    second = warm_up(executor, workspace, settings, project="o/x", since=0.0)
    assert second.cached and len(online(executor)) == 2
    # another Maven is another build tool: its own warm-up
    dist = workspace.parent / "maven-dist"  # a resolved 3.9.9 (the build layer finds it, no download)
    (dist / "apache-maven-3.9.9" / "bin").mkdir(parents=True)
    (dist / "apache-maven-3.9.9" / "bin" / "mvn").write_text("")
    other_settings = replace(settings, maven_version="3.9.9", maven_dist=dist)
    other = warm_up(executor, workspace, other_settings, project="o/x", since=0.0)
    assert not other.cached and len(online(executor)) == 4


def test_different_projects_warm_in_parallel(tmp_path: Path, settings: RunSettings) -> None:
    # Both online builds must be running at the same moment: a repository-wide lock would make
    # the barrier time out.
    barrier = threading.Barrier(2, timeout=20)
    errors: list[BaseException] = []

    def meet(step: BuildStep) -> None:
        if step.name == "test-compile":
            barrier.wait()

    def warm(project: str) -> None:
        ws = tmp_path / project
        (ws / "src/main/java").mkdir(parents=True)
        (ws / "pom.xml").write_text("<project/>", encoding="utf-8")
        try:
            assert warm_up(FakeMaven(on_online=meet), ws, settings, project=f"o/{project}").ok
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=warm, args=(name,)) for name in ("x", "y")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert sorted(e["project"] for e in read_journal(settings.maven_repo)) == [
        "o/x@maven-default",
        "o/y@maven-default",
    ]


def test_only_missing_artifacts_call_for_a_warm_up() -> None:
    assert mavenlog.missing_artifacts(MISSING)
    assert mavenlog.missing_artifacts(
        "[ERROR] Non-resolvable parent POM for p:x:1: Cannot access central in offline mode\n"
    )
    # Maven 3.8 reports a missing parent POM first as a [FATAL] line (real commons-cli log)
    assert mavenlog.missing_artifacts(
        "[FATAL] Non-resolvable parent POM for commons-cli:commons-cli:1.9.0-SNAPSHOT: Cannot access central "
        "(https://repo.maven.apache.org/maven2) in offline mode and the artifact "
        "org.apache.commons:commons-parent:pom:70 has not been downloaded from it before.\n"
    )
    assert not mavenlog.missing_artifacts(COMPILE_FAILURE)
    assert not mavenlog.missing_artifacts("Error occurred during initialization of VM\n")
    # a test that prints the phrase is no missing artifact
    assert not mavenlog.missing_artifacts("[INFO] in offline mode\n")


def test_needs_warmup_only_for_build_errors(workspace: Path, settings: RunSettings) -> None:
    failed = run_warmed(FakeMaven(online=["download-error"] * 2), workspace, [A], settings, project="o/x").run
    assert failed.status == "build_error" and needs_warmup(failed)
    ok = run_warmed(FakeMaven(filled=True), workspace, [A], settings, project="o/x").run
    assert not needs_warmup(ok)


def test_a_warm_up_for_another_commit_does_not_count(workspace: Path, settings: RunSettings) -> None:
    # Another worker warmed the project for a commit with another parent POM while this worker's
    # offline build was failing: this commit still lacks its artifacts, so it warms up itself.
    path = journal_path(settings.maven_repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {"project": project_key("o/x", settings), "ok": True, "started": 0, "ended": time.time() + 60}
    path.write_text(json.dumps(entry) + "\n", encoding="utf-8")
    executor = FakeMaven()
    warmed = run_warmed(executor, workspace, [A], settings, project="o/x")
    assert warmed.run.status == "ok"
    assert warmed.warmup is not None and warmed.warmup.ok and not warmed.warmup.cached
    assert [s.name for s in online(executor)] == ["test-compile", "test"]
