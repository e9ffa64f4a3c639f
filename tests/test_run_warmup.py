"""Warm-up: once per project build under the project's lock, the effective POM's plan resolved,
one retry; unpublished artifacts make an instance unbuildable.

A scripted executor plays Maven; its answers are the log lines real Maven 3.8/3.9 print (the
offline resolution failure below is copied from a real ``mvn -o`` run on an empty repository)
and the effective POM real Maven 3.8.7 wrote for ``tests/fixtures/mini-maven``
(``fixtures/effective-pom-mini-maven.xml``).
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
from pytest_tebench.run.maven import buildplan
from pytest_tebench.run.maven import log as mavenlog
from pytest_tebench.run.maven.jacoco import AGENT_JAR
from pytest_tebench.run.maven.jacoco import CLI_JAR
from pytest_tebench.run.maven.journal import journal_path
from pytest_tebench.run.maven.journal import read_journal
from pytest_tebench.run.maven.offline_run import needs_warmup
from pytest_tebench.run.maven.offline_run import run_warmed
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.steps import WARMUP_SELECTOR
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.testrun import run_selection
from pytest_tebench.run.maven.warmup import RESOLVER_LOCK_FLAGS
from pytest_tebench.run.maven.warmup import project_key
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
EFFECTIVE_POM = (Path(__file__).parent / "fixtures" / "effective-pom-mini-maven.xml").read_text(
    encoding="utf-8"
)
#: Maven 3.9.9 online, a parent that only exists as a local snapshot (shortened real log).
#: The online steps of a warm-up on an empty repository: the effective POM, Surefire's provider
#: and the JUnit Platform launcher alone, then the rest of the plan in one launch.
PLAN_STEPS = ("effective-pom", "resolve-provider", "resolve-provider", "resolve-plan")
UNPUBLISHED_PARENT = (
    "[ERROR] Non-resolvable parent POM for org.x:x:1.0: The following artifacts could not be resolved: "
    "org.apache.commons:commons-parent:pom:99-SNAPSHOT (absent): Could not find artifact "
    "org.apache.commons:commons-parent:pom:99-SNAPSHOT in central (https://repo.maven.apache.org/maven2)\n"
)


#: Real Maven 3.8.7 on gson's proto module (a plugin's own prerequisite, which no POM shows).
REQUIRES_MAVEN = (
    "[ERROR] Failed to execute goal io.github.ascopes:protobuf-maven-plugin:5.1.4:generate-test (default) on "
    "project proto: The plugin io.github.ascopes:protobuf-maven-plugin:5.1.4 requires Maven version 3.9.6 "
    "-> [Help 1]\n"
)


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
    #: The effective POM ``help:effective-pom`` writes; an online one fails with this log instead.
    effective_pom: str = EFFECTIVE_POM
    effective_pom_online_failure: str = ""

    def fill(self, maven_repo: Path) -> None:
        """Put the plan's files in the repository, as a real online resolution would."""
        for artifact in buildplan.plan(self.effective_pom):
            artifact.path(maven_repo).parent.mkdir(parents=True, exist_ok=True)
            artifact.path(maven_repo).write_bytes(b"x")

    def run(self, workspace: Path, step: BuildStep, *, maven_repo: Path) -> StepResult:
        self.seen.append(step)
        if self.filled:
            self.fill(maven_repo)
        if step.name.startswith("resolve-jacoco"):
            jar = AGENT_JAR if step.name.endswith("agent") else CLI_JAR
            (maven_repo / jar).parent.mkdir(parents=True, exist_ok=True)
            (maven_repo / jar).write_bytes(b"jar")
            return result(step)
        if step.name == "effective-pom" and (self.filled or step.network):
            if step.network and self.effective_pom_online_failure:
                return result(step, 1, self.effective_pom_online_failure)
            (workspace / buildplan.EFFECTIVE_POM).parent.mkdir(parents=True, exist_ok=True)
            (workspace / buildplan.EFFECTIVE_POM).write_text(self.effective_pom, encoding="utf-8")
            return result(step, 0, BANNER)
        if step.name == "resolve-provider":
            group, artifact, version = next(a for a in step.argv if a.startswith("-Dartifact="))[11:].split(
                ":"
            )
            path = buildplan.Artifact(group, artifact, version).path(maven_repo)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"x")
            return result(step)
        if step.name == "resolve-plan":
            assert (workspace / buildplan.RESOLVER_POM).is_file()
            self.fill(maven_repo)
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
        if outcome == "requires-maven":
            return result(step, 1, REQUIRES_MAVEN)
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
    assert online(executor) == []
    # the new build was checked offline against its effective POM, once
    (entry,) = read_journal(settings.maven_repo)
    assert (entry["ok"], entry["online"]) == (True, False) and entry["build"]
    assert [s.name for s in executor.seen] == ["effective-pom", "compile+test"]
    assert "-o" in executor.seen[0].argv
    assert warmed.run.maven_version == "3.9.9"  # from the -V banner
    # the check's cost shows in the timings of the run that paid it (the first of this build)...
    assert warmed.timings() == {"build_check": 1.0}  # the scripted effective-pom step takes 1 s
    again = run_warmed(executor, workspace, [A], settings, project="o/x")
    assert [s.name for s in executor.seen][2:] == ["compile+test"]
    # ... and nowhere else: the journal says the build was checked, on this machine, for good
    assert again.timings() == {}


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
    assert [s.name for s in steps] == [*PLAN_STEPS, "test-compile", "test"]
    for step in steps:
        assert "-o" not in step.argv and step.timeout == 1234  # the warm-up's own limit
        assert set(RESOLVER_LOCK_FLAGS) <= set(step.argv)
    assert [s.argv[-1] for s in steps[-2:]] == ["test-compile", "test"]
    # an empty warm selection resolves Surefire's provider without running a test
    assert f"-Dtest={WARMUP_SELECTOR}" in steps[-1].argv
    (entry,) = read_journal(settings.maven_repo)
    assert (entry["project"], entry["ok"], entry["attempt"]) == (project_key("o/x", settings), True, 1)
    # every later build of the project (another commit, another worker) is offline at once
    again = run_warmed(executor, workspace, [A], settings, project="o/x")
    assert again.warmup is None and len(online(executor)) == len(PLAN_STEPS) + 2


def test_coverage_jars_are_fetched_once_for_all_projects(workspace: Path, settings: RunSettings) -> None:
    executor = FakeMaven(filled=True)
    with_coverage = replace(settings, coverage=True)
    run_warmed(executor, workspace, [], with_coverage, project="o/x")
    run_warmed(executor, workspace, [], with_coverage, project="o/y")
    names = [s.name for s in executor.seen if s.name.startswith("resolve-jacoco")]
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


def test_a_plugin_refusing_the_maven_in_use_is_not_retried(workspace: Path, settings: RunSettings) -> None:
    # the same Maven would be refused again: the caller runs the build again with Maven 3.9
    executor = FakeMaven(online=["requires-maven"])
    warmed = run_warmed(executor, workspace, [A], settings, project="o/x")
    assert warmed.warmup is not None and not warmed.warmup.ok and warmed.warmup.attempts == 1
    assert [s.name for s in online(executor)] == [*PLAN_STEPS, "test-compile"]
    assert mavenlog.required_maven(warmed.warmup.log_tail) == "3.9.6"


def test_code_that_does_not_compile_is_not_retried(workspace: Path, settings: RunSettings) -> None:
    # what compilation needs is resolved; the offline run will report the compile error
    executor = FakeMaven(online=["compile-error"])
    result_ = warm_up(executor, workspace, settings, project="o/x")
    assert result_.ok and result_.attempts == 1
    assert [s.name for s in online(executor)] == [*PLAN_STEPS, "test-compile"]
    # the plan brought Surefire and its provider although no test ran (jfree/jfreechart's miss)
    surefire = buildplan.Artifact("org.apache.maven.surefire", "surefire-junit-platform", "3.2.5")
    assert surefire.path(settings.maven_repo).is_file()


def test_waiting_worker_reuses_a_warm_up_finished_meanwhile(workspace: Path, settings: RunSettings) -> None:
    executor = FakeMaven()
    first = warm_up(executor, workspace, settings, project="o/x", since=0.0)
    assert first.ok and not first.cached
    # a second worker whose offline build failed before the first warm-up ended
    second = warm_up(executor, workspace, settings, project="o/x", since=0.0)
    assert second.cached and len(online(executor)) == len(PLAN_STEPS) + 2
    # another Maven is another build tool: its own warm-up
    dist = workspace.parent / "maven-dist"  # a resolved 3.9.9 (the build layer finds it, no download)
    (dist / "apache-maven-3.9.9" / "bin").mkdir(parents=True)
    (dist / "apache-maven-3.9.9" / "bin" / "mvn").write_text("")
    other_settings = replace(settings, maven_version="3.9.9", maven_dist=dist)
    other = warm_up(executor, workspace, other_settings, project="o/x", since=0.0)
    # the repository already has the plan: no resolve-plan step this time (the provider and the
    # launcher are resolved alone at every warm-up: their files say nothing of their trees)
    assert not other.cached
    assert [s.name for s in online(executor)][len(PLAN_STEPS) + 2 :] == [
        *PLAN_STEPS[:3],
        "test-compile",
        "test",
    ]


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
    assert [s.name for s in online(executor)] == [*PLAN_STEPS, "test-compile", "test"]


def test_plan_of_a_recorded_effective_pom() -> None:
    planned = buildplan.plan(EFFECTIVE_POM)
    assert [a.coordinates for a in planned] == [
        "org.apache.maven.plugins:maven-compiler-plugin:maven-plugin:3.13.0",
        "org.apache.maven.plugins:maven-resources-plugin:maven-plugin:3.3.1",
        "org.apache.maven.plugins:maven-surefire-plugin:maven-plugin:3.2.5",
        # Surefire's provider for JUnit 5 and the Platform launcher, loaded only when tests start
        "org.apache.maven.surefire:surefire-junit-platform:jar:3.2.5",
        "org.junit.jupiter:junit-jupiter:jar:5.10.2",
        "org.junit.platform:junit-platform-launcher:jar:1.10.2",
    ]
    # clean/jar/install/deploy/site are bound after `test`: mvn test never loads them
    assert not any(a.artifact in ("maven-site-plugin", "maven-jar-plugin") for a in planned)
    assert planned[0].path(Path("/m2")) == Path(
        "/m2/org/apache/maven/plugins/maven-compiler-plugin/3.13.0/maven-compiler-plugin-3.13.0.jar"
    )


def test_plan_of_a_reactor_leaves_its_modules_out() -> None:
    reactor = (
        "<projects><project><groupId>g</groupId><artifactId>a</artifactId><version>1</version>"
        "<dependencies><dependency><groupId>g</groupId><artifactId>b</artifactId><version>1</version>"
        "</dependency><dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version>"
        "<scope>test</scope></dependency></dependencies><build><extensions><extension><groupId>e</groupId>"
        "<artifactId>ext</artifactId><version>2</version></extension></extensions><plugins><plugin>"
        "<artifactId>maven-surefire-plugin</artifactId><version>3.5.3</version><executions><execution>"
        "<id>default-test</id><phase>test</phase></execution></executions></plugin><plugin><groupId>x</groupId>"
        "<artifactId>late</artifactId><version>1</version><executions><execution><phase>verify</phase>"
        "</execution></executions></plugin><plugin><groupId>x</groupId><artifactId>bundle</artifactId>"
        "<version>5</version><extensions>true</extensions><dependencies><dependency><groupId>d</groupId>"
        "<artifactId>helper</artifactId><version>3</version></dependency></dependencies></plugin></plugins>"
        "</build></project><project><parent><groupId>g</groupId></parent><artifactId>b</artifactId></project>"
        "</projects>"
    )
    assert [a.coordinates for a in buildplan.plan(reactor)] == [
        "d:helper:jar:3",
        "e:ext:jar:2",
        "junit:junit:jar:4.13.2",
        "org.apache.maven.plugins:maven-surefire-plugin:maven-plugin:3.5.3",
        "org.apache.maven.surefire:surefire-junit4:jar:3.5.3",
        "x:bundle:maven-plugin:5",
    ]


def test_resolver_pom_lists_the_missing_artifacts() -> None:
    planned = buildplan.plan(EFFECTIVE_POM)
    pom = buildplan.resolver_pom(planned)
    # the resolver POM is a valid POM whose build names the plugins and whose dependencies the rest
    assert (
        "<plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId>"
        in pom
    )
    assert "<artifactId>surefire-junit-platform</artifactId><version>3.2.5</version></dependency>" in pom


def test_build_digest_follows_the_build_files(workspace: Path) -> None:
    first = buildplan.build_digest(workspace, java=17, maven="")
    (workspace / "src/main/java/p/A.java").write_text("package p;\nclass A { int x; }\n", encoding="utf-8")
    assert buildplan.build_digest(workspace, java=17, maven="") == first  # code is not the build
    (workspace / "target").mkdir()
    (workspace / "target" / "pom.xml").write_text("<project/>", encoding="utf-8")
    assert buildplan.build_digest(workspace, java=17, maven="") == first  # build outputs are not either
    assert buildplan.build_digest(workspace, java=11, maven="") != first
    (workspace / ".mvn").mkdir()
    (workspace / ".mvn" / "jvm.config").write_text("--add-opens x=y\n", encoding="utf-8")
    second = buildplan.build_digest(workspace, java=17, maven="")
    assert second != first
    (workspace / "module").mkdir()
    (workspace / "module" / "pom.xml").write_text("<project/>", encoding="utf-8")
    assert buildplan.build_digest(workspace, java=17, maven="") not in (first, second)
    third = buildplan.build_digest(workspace, java=17, maven="")
    # a reactor scope resolves fewer modules: a build of its own
    scoped = buildplan.build_digest(workspace, java=17, maven="", args=("-pl", "module", "-am"))
    assert scoped not in (first, second, third)
    assert buildplan.build_digest(workspace, java=17, maven="", args=()) == third


def test_a_commit_whose_build_changed_is_warmed_again(workspace: Path, settings: RunSettings) -> None:
    executor = FakeMaven()
    assert run_warmed(executor, workspace, [A], settings, project="o/x").warmup is not None
    assert len(online(executor)) == len(PLAN_STEPS) + 2
    # a later commit bumps Surefire: the offline check finds the new plugin missing and warms up
    executor.effective_pom = EFFECTIVE_POM.replace("<version>3.2.5</version>", "<version>3.5.3</version>")
    (workspace / "pom.xml").write_text("<project><!-- surefire 3.5.3 --></project>", encoding="utf-8")
    executor.filled = False  # the repository lacks 3.5.3 until something resolves it
    warmed = run_warmed(executor, workspace, [A], settings, project="o/x")
    assert warmed.warmup is not None and warmed.warmup.ok and not warmed.warmup.cached
    assert [s.name for s in online(executor)][len(PLAN_STEPS) + 2 :] == [*PLAN_STEPS, "test-compile", "test"]
    provider = buildplan.Artifact("org.apache.maven.surefire", "surefire-junit-platform", "3.5.3")
    assert provider.path(settings.maven_repo).is_file()
    builds = {e["build"] for e in read_journal(settings.maven_repo)}
    assert len(builds) == 2


def test_an_unpublished_parent_makes_the_build_unbuildable(workspace: Path, settings: RunSettings) -> None:
    executor = FakeMaven(effective_pom_online_failure=UNPUBLISHED_PARENT)
    warmed = run_warmed(executor, workspace, [A], settings, project="o/x")
    assert warmed.warmup is not None and not warmed.warmup.ok
    # final at once: no retry can publish it
    assert warmed.warmup.attempts == 1
    assert warmed.warmup.unpublished == ("org.apache.commons:commons-parent:pom:99-SNAPSHOT",)
    assert warmed.warmup.error.endswith(
        "published in no repository reachable from here: org.apache.commons:commons-parent:pom:99-SNAPSHOT"
    )
    assert read_journal(settings.maven_repo)[-1]["unpublished"] == [
        "org.apache.commons:commons-parent:pom:99-SNAPSHOT"
    ]


def test_an_artifact_still_missing_after_the_warm_up_is_named(workspace: Path, settings: RunSettings) -> None:
    class Stubborn(FakeMaven):
        """The warm-up succeeds, yet offline builds keep lacking junit-jupiter."""

        def run(self, workspace: Path, step: BuildStep, *, maven_repo: Path) -> StepResult:
            if step.name == "compile+test":
                self.seen.append(step)
                return result(step, 1, MISSING)
            return super().run(workspace, step, maven_repo=maven_repo)

    executor = Stubborn()
    warmed = run_warmed(executor, workspace, [A], settings, project="o/x")
    assert warmed.warmup is not None and warmed.warmup.ok
    assert warmed.run.status == "build_error"
    assert warmed.run.error.startswith(
        "the offline build still lacks org.junit.jupiter:junit-jupiter:jar:5.10.2 after a warm-up"
    )
    assert len([s for s in online(executor) if s.name == "test"]) == 1  # no second warm-up


def test_coordinates_in_maven_logs() -> None:
    assert mavenlog.missing_coordinates(MISSING) == ["org.junit.jupiter:junit-jupiter:jar:5.10.2"]
    offline_39 = (
        "[ERROR] Plugin org.apache.maven.plugins:maven-surefire-plugin:3.5.3 or one of its dependencies could "
        "not be resolved: The following artifacts could not be resolved: "
        "org.apache.maven.plugins:maven-surefire-plugin:jar:3.5.3 (absent): Cannot access central "
        "(https://repo.maven.apache.org/maven2) in offline mode and the artifact "
        "org.apache.maven.plugins:maven-surefire-plugin:jar:3.5.3 has not been downloaded from it before.\n"
    )
    assert mavenlog.missing_coordinates(offline_39) == [
        "org.apache.maven.plugins:maven-surefire-plugin:jar:3.5.3"
    ]
    assert mavenlog.unpublished_coordinates(UNPUBLISHED_PARENT) == [
        "org.apache.commons:commons-parent:pom:99-SNAPSHOT"
    ]
    cached_38 = (
        "[ERROR] Failed to execute goal on project x: Could not resolve dependencies for project p:x:jar:1: "
        "Failure to find org.x:bom:pom:2.0-SNAPSHOT in https://repo.maven.apache.org/maven2 was cached in the "
        "local repository, resolution will not be reattempted until the update interval of central has elapsed\n"
    )
    assert mavenlog.unpublished_coordinates(cached_38) == ["org.x:bom:pom:2.0-SNAPSHOT"]
    private = (
        "[ERROR] Failed to execute goal on project x: Could not transfer artifact com.corp:lib:jar:1 from/to "
        "corp (https://maven.corp.example/): Unknown host maven.corp.example\n"
    )
    assert mavenlog.unpublished_coordinates(private) == ["com.corp:lib:jar:1"]
    # a connection that broke is no unpublished artifact: the warm-up is retried
    assert (
        mavenlog.unpublished_coordinates(
            "[ERROR] Could not transfer artifact a:b:pom:1 from/to central: reset\n"
        )
        == []
    )
    assert mavenlog.missing_coordinates(COMPILE_FAILURE) == []


def _pinned(version: str) -> str:
    return EFFECTIVE_POM.replace(
        "<artifactId>maven-surefire-plugin</artifactId>\n        <version>3.2.5</version>",
        f"<artifactId>maven-surefire-plugin</artifactId>\n        <version>{version}</version>",
    )


def test_surefire_of_an_effective_pom_the_oldest_module_decides() -> None:
    assert buildplan.surefire_version(buildplan.plan(EFFECTIVE_POM)) == "3.2.5"
    assert buildplan.surefire_version(buildplan.plan(_pinned("2.17"))) == "2.17"
    # a reactor whose modules pin different Surefires: the oldest one decides
    declaration = '<?xml version="1.0" encoding="UTF-8"?>'
    two = f"<projects>{_pinned('2.19.1')}{_pinned('2.18.1')}</projects>".replace(declaration, "")
    assert buildplan.surefire_version(buildplan.plan(two)) == "2.18.1"
    assert buildplan.surefire_version([]) == ""


@pytest.mark.parametrize(
    ("version", "by_class"),
    [("2.17", True), ("2.18.1", True), ("2.19", True), ("2.19.1", False), ("3.0.0-M5", False), ("", False)],
)
def test_surefire_older_than_2_19_1_selects_by_class(
    settings: RunSettings, version: str, by_class: bool
) -> None:
    assert settings.for_surefire(version).select_by_class is by_class
    # never switched off once on (the judge's whole-class retry sets it)
    assert replace(settings, select_by_class=True).for_surefire(version).select_by_class


@pytest.mark.parametrize("online_first", [True, False])
def test_a_pinned_old_surefire_makes_every_run_of_the_build_select_by_class(
    workspace: Path, settings: RunSettings, online_first: bool
) -> None:
    # Checked online (a warm-up) or found complete offline: either way the journal records the
    # Surefire of the build's effective POM, and every run of that build reads it.
    executor = FakeMaven(effective_pom=_pinned("2.17"), filled=not online_first)
    warmed = run_warmed(executor, workspace, [A, TestId("p.ATest", "b")], settings, project="o/x")
    assert [e["surefire"] for e in read_journal(settings.maven_repo)] == ["2.17"]
    (tested,) = [s for s in executor.seen if s.name == "compile+test"][-1:]
    assert "-Dtest=p.ATest" in tested.argv and warmed.run.by_class
    assert warmed.run.to_dict()["selected_by"] == "class"
    again = run_selection(executor, workspace, [A], settings)  # a later run of the same build
    assert "-Dtest=p.ATest" in executor.seen[-1].argv and again.by_class


def test_an_entry_without_the_surefire_is_checked_again(workspace: Path, settings: RunSettings) -> None:
    executor = FakeMaven(filled=True)
    run_warmed(executor, workspace, [A], settings, project="o/x")
    entries = read_journal(settings.maven_repo)
    assert [e["surefire"] for e in entries] == ["3.2.5"]
    # as an older harness wrote it: the build is checked again, once, to learn its Surefire
    journal_path(settings.maven_repo).write_text(
        json.dumps({k: v for k, v in entries[0].items() if k != "surefire"}) + "\n", encoding="utf-8"
    )
    run_warmed(executor, workspace, [A], settings, project="o/x")
    run_warmed(executor, workspace, [A], settings, project="o/x")
    assert [s.name for s in executor.seen].count("effective-pom") == 2
    assert "-Dtest=p.ATest#a+a[*]" in executor.seen[-1].argv
