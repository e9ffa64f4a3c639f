"""The production build compiled once per tree (run/maven/prebuilt.py): its key, its store, its use.

A scripted executor stands in for Maven: ``prebuild`` (``mvn compile``) writes ``target/classes``,
``compile+test`` records whether the main compile was skipped. The real launches are in
``test_demo_update.py::test_prebuilt_production_build_gives_the_same_verdicts``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.maven.prebuilt import BUILT
from pytest_tebench.run.maven.prebuilt import MANIFEST
from pytest_tebench.run.maven.prebuilt import OFF
from pytest_tebench.run.maven.prebuilt import REPLAY_OUTPUTS
from pytest_tebench.run.maven.prebuilt import REUSED
from pytest_tebench.run.maven.prebuilt import SKIP_MAIN
from pytest_tebench.run.maven.prebuilt import STORE_OUTPUTS
from pytest_tebench.run.maven.prebuilt import Prebuilt
from pytest_tebench.run.maven.prebuilt import compile_launch
from pytest_tebench.run.maven.prebuilt import compiling_main
from pytest_tebench.run.maven.prebuilt import prebuilt_key
from pytest_tebench.run.maven.prebuilt import prepare
from pytest_tebench.run.maven.prebuilt import production_launch
from pytest_tebench.run.maven.prebuilt import skipping_main
from pytest_tebench.run.maven.prebuilt_tests import STALE_ONLY
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.steps import selection_step
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.testrun import run_selection

from conftest import committed_checkout
from conftest import write_text

TEST = TestId("p.ATest", "a")
MAVEN_39 = (("maven", "/dists/apache-maven-3.9.9"),)


write = write_text


def git(path: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A committed checkout: pom.xml, .mvn/, one production class, one test class."""
    return committed_checkout(
        tmp_path / "ws",
        {
            "pom.xml": "<project><artifactId>p</artifactId></project>",
            ".mvn/jvm.config": "-Xmx1g\n",
            "src/main/java/p/A.java": "package p;\nclass A {}\n",
            "src/main/resources/a.properties": "a=1\n",
            "src/test/java/p/ATest.java": "package p;\nclass ATest {}\n",
        },
    )


def launch(java: int = 17, maven: tuple[tuple[str, str], ...] = (), extra: tuple[str, ...] = ()) -> BuildStep:
    step = selection_step(
        [TEST], java_version=java, timeout=300, maven=maven, extra_args=extra, name="compile+test"
    )
    return replace(step, env=(("JAVA_TOOL_OPTIONS", "-javaagent:jacoco.jar"),), phase_marker="T E S T S")


def key(ws: Path, step: BuildStep | None = None, toolchain: str = "local:jdks=17", repo: str = "/m2") -> str:
    return prebuilt_key(
        ws, compile_launch(step or launch()), modules=("",), toolchain=toolchain, maven_repo=Path(repo)
    )


# -- the key: what must be separate is, what must be shared is ------------------------------------
def test_key_ignores_the_test_tree_and_build_output(workspace: Path) -> None:
    before = key(workspace)
    write(workspace / "src/test/java/p/ATest.java", "package p;\nclass ATest { void b() {} }\n")
    write(workspace / "src/test/java/p/NewTest.java", "package p;\nclass NewTest {}\n")
    write(workspace / "target/classes/p/A.class", "bytes")
    write(workspace / "target/surefire-reports/TEST-p.ATest.xml", "<testsuite/>")
    assert key(workspace) == before


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("src/main/java/p/A.java", "package p;\nclass A { int x; }\n"),  # production source changed
        ("src/main/java/p/B.java", "package p;\nclass B {}\n"),  # a new, untracked production source
        ("src/main/resources/a.properties", "a=2\n"),  # a resource
        ("pom.xml", "<project><artifactId>p</artifactId><version>2</version></project>"),  # build file
        (".mvn/jvm.config", "-Xmx2g\n"),  # how Maven starts
        ("src/main/java11/p/A.java", "package p;\nclass A {}\n"),  # a multi-release source root
    ],
)
def test_key_follows_every_production_and_build_file(workspace: Path, path: str, text: str) -> None:
    before = key(workspace)
    write(workspace / path, text)
    assert key(workspace) != before


def test_key_follows_a_committed_production_change(workspace: Path) -> None:
    before = key(workspace)
    write(workspace / "src/main/java/p/A.java", "package p;\nclass A { int y; }\n")
    git(workspace, "add", "-A")
    git(workspace, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "prediction edits main")
    assert key(workspace) != before


def test_key_separates_jdk_maven_flags_scope_toolchain_and_repository(workspace: Path) -> None:
    keys = {
        key(workspace),
        key(workspace, launch(java=11)),  # another JDK
        key(workspace, launch(maven=MAVEN_39)),  # another Maven distribution
        key(workspace, launch(extra=("-Dnet.bytebuddy.experimental=true",))),  # another flag
        key(workspace, launch(extra=("-pl", "core", "-am"))),  # another reactor scope
        key(workspace, toolchain="docker:image=tebench:2"),  # another image / JDK install
        key(workspace, repo="/other-m2"),  # another Maven repository
    }
    assert len(keys) == 7
    # the selection and the JaCoCo agent are the test launch's, not the compile's
    other = replace(selection_step([TestId("p.BTest", "b")], java_version=17, timeout=9), name="compile+test")
    assert key(workspace, other) == key(workspace)


def test_compile_launch_and_the_skipping_test_launch() -> None:
    test_launch = launch(extra=("-pl", "core", "-am"))
    compiled = compile_launch(test_launch)
    assert compiled.argv[-1] == "compile"
    assert not any(arg.startswith("-Dtest=") for arg in compiled.argv)
    assert compiled.argv[-4:] == ("-pl", "core", "-am", "compile")  # the same reactor scope
    assert "-DskipTests=false" in compiled.argv  # the same flags: the same profiles are active
    assert compiled.env == () and compiled.phase_marker == ""
    assert compiled.name == "prebuild"
    # the stored tree's launch asks a warm server for the pure process-classes writers; every
    # launch on it for their outputs back, and a launch that compiles again for neither
    produced = production_launch(test_launch)
    assert produced.argv == (*compiled.argv[:-1], *STORE_OUTPUTS, "compile")
    assert "org.apache.felix:maven-bundle-plugin:manifest" in STORE_OUTPUTS[1]
    skipping = skipping_main(test_launch)
    assert skipping.argv == (*test_launch.argv[:-1], SKIP_MAIN, REPLAY_OUTPUTS, test_launch.argv[-1])
    assert compiling_main(skipping) == test_launch


# -- prepare: build once, reuse, and every way it stays off ------------------------------------
@dataclass
class FakeMaven:
    """``prebuild`` writes the classes (and, when asked, a file outside target/); counts launches."""

    fail: bool = False
    writes_outside: bool = False
    seen: list[BuildStep] = field(default_factory=list)
    name: str = "fake"

    def toolchain(self) -> str:
        return "fake:jdks=17"

    def run(self, workspace: Path, step: BuildStep, *, maven_repo: Path) -> StepResult:
        self.seen.append(step)
        output = ""
        if step.name == "prebuild":
            write(workspace / "target/classes/p/A.class", "compiled A")
            write(workspace / "target/generated-sources/annotations/.keep", "")
            if self.writes_outside:
                write(workspace / "src/main/generated/G.java", "class G {}")
            if self.fail:
                output = "[ERROR] COMPILATION ERROR :\n[ERROR] /ws/src/main/java/p/A.java:[1,1] error\n"
                output += "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:compile"
                return StepResult(step.name, step.argv, 1, False, 2.0, output)
        return StepResult(step.name, step.argv, 0, False, 2.0, output)


def test_built_once_then_reused_by_a_prediction_and_never_by_another_tree(
    workspace: Path, tmp_path: Path
) -> None:
    maven = FakeMaven()
    gold = Prebuilt(tmp_path / "store", create=True)
    first = prepare(maven, workspace, gold, launch(), modules=("",), maven_repo=tmp_path / "m2")
    assert first.state == BUILT and first.compiled is not None
    assert first.launch.argv[-3:] == (SKIP_MAIN, REPLAY_OUTPUTS, "test")
    # this launch runs on the restored copy, exactly what later launches get
    assert (workspace / "target/classes/p/A.class").read_text() == "compiled A"
    manifest = json.loads((tmp_path / "store" / first.key / MANIFEST).read_text())
    assert manifest["usable"] and manifest["modules"] == [""]

    # a prediction's tree: other tests, same production code -> the stored classes, no compile
    shutil.rmtree(workspace / "target")
    write(workspace / "src/test/java/p/ATest.java", "package p;\nclass ATest { void changed() {} }\n")
    prediction = Prebuilt(tmp_path / "store", create=False)
    again = prepare(maven, workspace, prediction, launch(), modules=("",), maven_repo=tmp_path / "m2")
    assert (again.state, again.key, again.compiled) == (REUSED, first.key, None)
    assert (workspace / "target/classes/p/A.class").read_text() == "compiled A"
    # a test writing into its target/classes never reaches the store
    write(workspace / "target/classes/p/A.class", "tampered")
    assert (tmp_path / "store" / first.key / "trees/target/classes/p/A.class").read_text() == "compiled A"
    assert [step.name for step in maven.seen] == ["prebuild"]

    # production changed (a prediction editing main with --tebench-allow-non-test-edits): not reused
    shutil.rmtree(workspace / "target")
    write(workspace / "src/main/java/p/A.java", "package p;\nclass A { int changed; }\n")
    other = prepare(maven, workspace, prediction, launch(), modules=("",), maven_repo=tmp_path / "m2")
    assert other.state == OFF and other.launch == launch()
    assert "no stored production build" in other.note


def test_a_failed_compile_stores_nothing_and_leaves_the_launch_as_it_was(
    workspace: Path, tmp_path: Path
) -> None:
    maven = FakeMaven(fail=True)
    use = prepare(
        maven,
        workspace,
        Prebuilt(tmp_path / "store", create=True),
        launch(),
        modules=("",),
        maven_repo=tmp_path,
    )
    assert use.state == OFF and use.launch == launch()
    assert use.note.startswith("the production compile failed (javac errors")
    assert not (workspace / "target").exists()  # the launch starts from an empty target/ as always
    assert not (tmp_path / "store" / use.key).exists()  # tried again next time (maybe after a warm-up)


def test_a_compile_that_writes_outside_target_is_recorded_as_not_reusable(
    workspace: Path, tmp_path: Path
) -> None:
    maven = FakeMaven(writes_outside=True)
    store = Prebuilt(tmp_path / "store", create=True)
    use = prepare(maven, workspace, store, launch(), modules=("",), maven_repo=tmp_path)
    assert use.state == OFF and "writes outside target/: src/main/generated/" in use.note
    (workspace / "src/main/generated/G.java").unlink()
    (workspace / "src/main/generated").rmdir()
    again = prepare(maven, workspace, store, launch(), modules=("",), maven_repo=tmp_path)
    assert again.state == OFF and again.note == use.note
    assert [step.name for step in maven.seen] == ["prebuild"]  # tried once per key


SUREFIRE_ARGLINE = (
    "<plugin><artifactId>maven-surefire-plugin</artifactId><configuration>"
    "<argLine>-Djava.security.policy=${basedir}/src/test/resources/java.policy</argLine></configuration></plugin>"
)
LATE_PROGUARD = (  # gson: plugin-level configuration of a plugin whose one execution runs after compile
    "<plugin><artifactId>proguard-maven-plugin</artifactId><executions><execution><phase>process-test-classes"
    "</phase><goals><goal>proguard</goal></goals></execution></executions><configuration>"
    "<proguardInclude>src/test/resources/p.conf</proguardInclude></configuration></plugin>"
)
RESOURCE = "<resources><resource><directory>src/test/data</directory></resource></resources>"
HELPER = (
    "<plugin><artifactId>build-helper-maven-plugin</artifactId><executions><execution><phase>generate-sources"
    "</phase><goals><goal>add-source</goal></goals><configuration><sources><source>src/test/gen</source>"
    "</sources></configuration></execution></executions></plugin>"
)


@pytest.mark.parametrize(
    ("build", "found"),
    [
        (f"<plugins>{SUREFIRE_ARGLINE}{LATE_PROGUARD}</plugins>", ""),
        (
            "<testResources><testResource><directory>src/test/data</directory></testResource></testResources>",
            "",
        ),
        (RESOURCE, "pom.xml <build><resources><resource><directory>"),
        (f"<plugins>{HELPER}</plugins>", "pom.xml <build><plugins><plugin><executions><execution>"),
    ],
)
def test_a_production_build_that_may_read_the_test_tree_is_never_prebuilt(
    workspace: Path, tmp_path: Path, build: str, found: str
) -> None:
    write(
        workspace / "pom.xml",
        f"<project xmlns='http://maven.apache.org/POM/4.0.0'><build>{build}</build></project>",
    )
    use = prepare(
        FakeMaven(),
        workspace,
        Prebuilt(tmp_path / "s", create=True),
        launch(),
        modules=("",),
        maven_repo=tmp_path,
    )
    if not found:
        assert use.state == BUILT  # rat's excludes, Surefire's argLine, a later plugin: harmless
    else:
        assert use.state == OFF and use.note.startswith(
            f"the production build may read the test tree: {found}"
        )


def test_run_selection_falls_back_to_a_full_compile_when_the_prebuilt_launch_breaks(
    workspace: Path, tmp_path: Path
) -> None:
    """A build error on the restored classes (a plugin that needed the skipped compile, say) is no
    verdict: the launch runs again on the production build with the whole test tree compiled, then
    (failing the same way) compiling everything, and that launch decides."""

    class Maven(FakeMaven):
        def run(self, workspace: Path, step: BuildStep, *, maven_repo: Path) -> StepResult:
            result = super().run(workspace, step, maven_repo=maven_repo)
            if step.name in ("compile+test", "compile+test-tests-again"):
                output = (
                    "[ERROR] Failed to execute goal org.example:bytecode-plugin:1.0:enhance: no classes\n"
                )
                return StepResult(step.name, step.argv, 1, False, 2.0, output)
            if step.name == "compile+test-again":
                write(
                    workspace / "target/surefire-reports/TEST-p.ATest.xml",
                    '<testsuite name="p.ATest"><testcase name="a" classname="p.ATest"/></testsuite>',
                )
                return StepResult(
                    step.name, step.argv, 0, False, 2.0, "Tests run: 1, Failures: 0, Errors: 0, Skipped: 0\n"
                )
            return result

    maven = Maven()
    settings = RunSettings(
        maven_repo=tmp_path / "m2", coverage=False, prebuilt=Prebuilt(tmp_path / "store", create=True)
    )
    run = run_selection(maven, workspace, [TEST], settings)  # type: ignore[arg-type]
    # gold's launch compiled the whole test tree itself (nothing of it to compile again) and kept
    # no snapshot of a launch that is run again
    assert [step.name for step in maven.seen] == ["prebuild", "compile+test", "compile+test-again"]
    assert SKIP_MAIN in maven.seen[-2].argv and STALE_ONLY not in maven.seen[-2].argv
    assert SKIP_MAIN not in maven.seen[-1].argv
    assert run.status == "ok" and run.all_passed
    assert run.prebuilt.startswith("built ") and "compiled again" in run.prebuilt
    assert set(run.timings) >= {"prebuild", "prebuilt_restore", "compile+test", "compile+test-again"}
