"""Gold's compiled test tree stored and reused (run/maven/prebuilt_tests.py).

A stand-in Maven compiles with the machine's ``javac``: ``prebuild-tests`` (``mvn test-compile``)
compiles the whole test tree, a launch with the stale-only flag compiles the sources whose class
is missing, as maven-compiler-plugin does in that mode. The real launches, and the verdicts
against a full compile, are in
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
from pytest_tebench.run.maven.prebuilt import MANIFEST
from pytest_tebench.run.maven.prebuilt import REPLAY_OUTPUTS
from pytest_tebench.run.maven.prebuilt import SKIP_MAIN
from pytest_tebench.run.maven.prebuilt import Prebuilt
from pytest_tebench.run.maven.prebuilt import prepare as prepare_production
from pytest_tebench.run.maven.prebuilt_tests import BUILT
from pytest_tebench.run.maven.prebuilt_tests import NO_SNAPSHOT
from pytest_tebench.run.maven.prebuilt_tests import REUSED
from pytest_tebench.run.maven.prebuilt_tests import SNAPSHOT
from pytest_tebench.run.maven.prebuilt_tests import SNAPSHOT_DIR
from pytest_tebench.run.maven.prebuilt_tests import SNAPSHOT_DONE
from pytest_tebench.run.maven.prebuilt_tests import SNAPSHOT_SWITCH
from pytest_tebench.run.maven.prebuilt_tests import STALE_ONLY
from pytest_tebench.run.maven.prebuilt_tests import CompiledTestsUse
from pytest_tebench.run.maven.prebuilt_tests import keep_snapshot
from pytest_tebench.run.maven.prebuilt_tests import needs_full_compile
from pytest_tebench.run.maven.prebuilt_tests import prepare
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.steps import selection_step
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.testrun import run_selection

from conftest import committed_checkout
from conftest import write_text

TEST = TestId("p.ATest", "a")
PASSED_REPORT = '<testsuite name="p.ATest"><testcase name="a" classname="p.ATest"/></testsuite>'
JAVAC_ERROR = (
    "[ERROR] COMPILATION ERROR :\n[ERROR] /ws/src/test/java/p/BTest.java:[2,1] error\n"
    "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:testCompile"
    " (default-testCompile) on project p: Compilation failure\n"
)


write = write_text


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """Gold's checkout: ATest alone, BTest naming Helper, a test resource."""
    return committed_checkout(
        tmp_path / "ws",
        {
            "pom.xml": "<project><artifactId>p</artifactId></project>",
            "src/main/java/p/A.java": "package p;\nclass A {}\n",
            "src/test/java/p/ATest.java": "package p;\nclass ATest { Runnable r = () -> {}; }\n",
            "src/test/java/p/BTest.java": "package p;\nclass BTest { int x = Helper.X; }\n",
            "src/test/java/p/Helper.java": "package p;\nclass Helper { static final int X = 1; }\n",
            "src/test/resources/data.txt": "data\n",
        },
    )


def javac(workspace: Path, sources: list[Path]) -> StepResult | None:
    """Compile ``sources`` into target/test-classes against it; the failure as Maven reports one."""
    if not sources:
        return None
    out = workspace / "target/test-classes"
    out.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [shutil.which("javac") or "javac", "-cp", str(out), "-d", str(out), *map(str, sources)],
        check=False,
        capture_output=True,
        text=True,
    )
    return None if done.returncode == 0 else StepResult("javac", (), 1, False, 1.0, JAVAC_ERROR + done.stderr)


@dataclass
class JavacMaven:
    """Maven's phases as far as the test tree goes, with javac; counts launches."""

    #: a launch (its tests) writes into this kept class file
    tamper: str = ""
    #: a launch with the snapshot switch keeps the test side, as a warm server does (a cold mvn: not)
    keeps_snapshot: bool = True
    seen: list[BuildStep] = field(default_factory=list)
    #: the sources each launch compiled (workspace-relative)
    compiled: list[list[str]] = field(default_factory=list)
    name: str = "fake"

    def toolchain(self) -> str:
        return "fake:jdks=17"

    def run(self, workspace: Path, step: BuildStep, *, maven_repo: Path) -> StepResult:
        self.seen.append(step)
        ok = StepResult(step.name, step.argv, 0, False, 1.0, "")
        if step.name == "prebuild":
            write(workspace / "target/classes/p/A.class", "compiled A")
            return ok
        tests = sorted((workspace / "src/test/java").rglob("*.java"))
        write(
            workspace / "target/test-classes/data.txt",
            (workspace / "src/test/resources/data.txt").read_text(),
        )
        if STALE_ONLY in step.argv:  # the plugin's stale-source mode: sources whose class is missing
            out = workspace / "target/test-classes"
            tests = [
                t
                for t in tests
                if not (out / t.relative_to(workspace / "src/test/java")).with_suffix(".class").exists()
            ]
        self.compiled.append([t.relative_to(workspace).as_posix() for t in tests])
        if STALE_ONLY not in step.argv:  # a processor's aggregate file, from a whole compile
            write(workspace / "target/test-classes/META-INF/Index.lst", f"{len(tests)} classes\n")
        failed = javac(workspace, tests)
        if failed is not None:
            return replace(failed, name=step.name, argv=step.argv)
        if step.name.startswith("compile+test"):
            if SNAPSHOT_SWITCH in step.argv and self.keeps_snapshot:  # TebenchStoredOutputs.Snapshotting
                kept = workspace / SNAPSHOT_DIR
                shutil.copytree(workspace / "target/test-classes", kept / "test-classes")
                write(kept / SNAPSHOT_DONE, "")
            if self.tamper:
                write(workspace / self.tamper, "written by a test")
            write(workspace / "target/surefire-reports/TEST-p.ATest.xml", PASSED_REPORT)
            return replace(ok, output="Tests run: 1, Failures: 0, Errors: 0, Skipped: 0\n")
        return ok


def launch() -> BuildStep:
    return selection_step([TEST], java_version=17, timeout=300, name="compile+test")


def prepared(maven: JavacMaven, workspace: Path, store: Path, *, create: bool) -> CompiledTestsUse:
    """What run_selection does before its launch: the production build, then the test tree."""
    shutil.rmtree(workspace / "target", ignore_errors=True)
    prebuilt = Prebuilt(store, create=create)
    production = prepare_production(maven, workspace, prebuilt, launch(), modules=("",), maven_repo=store)  # type: ignore[arg-type]
    return prepare(maven, workspace, prebuilt, production, modules=("",), maven_repo=store)  # type: ignore[arg-type]


def snapshot_launch(maven: JavacMaven, workspace: Path, store: Path) -> tuple[CompiledTestsUse, StepResult]:
    """Gold's first trusted launch of a tree: it compiles the whole tree itself, with the switch."""
    use = prepared(maven, workspace, store, create=True)
    assert use.state == SNAPSHOT and use.pending is not None and use.compiled is None
    assert use.launch.argv[-4:] == (SKIP_MAIN, REPLAY_OUTPUTS, SNAPSHOT_SWITCH, "test")
    assert STALE_ONLY not in use.launch.argv
    return use, maven.run(workspace, use.launch, maven_repo=store)


def gold_stored(maven: JavacMaven, workspace: Path, store: Path) -> CompiledTestsUse:
    """Gold's first trusted launch, its test tree kept (a warm server's)."""
    use, tested = snapshot_launch(maven, workspace, store)
    return keep_snapshot(workspace, use, tested, trusted=True)


def compiled_apart(maven: JavacMaven, workspace: Path, store: Path) -> CompiledTestsUse:
    """The trusted launch after a first one that kept no snapshot (a cold one): the tree is
    compiled by a ``mvn test-compile`` of its own."""
    keeps, maven.keeps_snapshot = maven.keeps_snapshot, False
    use, tested = snapshot_launch(maven, workspace, store)
    assert keep_snapshot(workspace, use, tested, trusted=True).state == "off"
    maven.keeps_snapshot = keeps
    return prepared(maven, workspace, store, create=True)


def stored_tree(store: Path) -> dict[str, bytes]:
    """Every stored test-tree file (the manifest's times left out), by path inside its entry."""
    (entry,) = store.glob("*/tests/*[!t]")
    files = {p.relative_to(entry).as_posix(): p.read_bytes() for p in entry.rglob("*") if p.is_file()}
    manifest = json.loads(files.pop(MANIFEST))
    for volatile in ("created", "compile_seconds", "harness_version"):
        manifest.pop(volatile)
    return {**files, MANIFEST: json.dumps(manifest, sort_keys=True).encode()}


def test_gold_keeps_its_launchs_test_tree_with_no_compile_of_its_own(workspace: Path, tmp_path: Path) -> None:
    maven = JavacMaven()
    use, tested = snapshot_launch(maven, workspace, tmp_path / "store")
    assert [step.name for step in maven.seen] == ["prebuild", "compile+test"]
    assert maven.compiled[-1] == [
        "src/test/java/p/ATest.java", "src/test/java/p/BTest.java", "src/test/java/p/Helper.java"
    ]  # fmt: skip
    kept = keep_snapshot(workspace, use, tested, trusted=True)
    assert kept.state == BUILT and kept.used and not kept.partial and kept.pending is None
    assert kept.describe() == f"tests built {use.digest}: the whole test tree compiled in this launch"
    (entry,) = (tmp_path / "store").glob(f"*/tests/{use.digest}")
    manifest = json.loads((entry / MANIFEST).read_text())
    assert manifest["usable"] and manifest["modules"] == [""]
    assert manifest["classes"]["target/test-classes/p/ATest.class"] == ["p/ATest", "ATest.java"]
    assert (entry / "trees/target/test-classes/p/Helper.class").is_file()
    assert not (entry / "trees/target/tebench-test-side").exists()

    # the later launches restore it, as they restore a tree stored by a launch of its own
    again = prepared(maven, workspace, tmp_path / "store", create=True)
    assert (again.state, again.digest) == (REUSED, use.digest) and again.plan is not None
    assert again.plan.recompile == ()
    assert "prebuild-tests" not in [step.name for step in maven.seen]

    # byte for byte what a separate mvn test-compile stores: a cold first launch keeps nothing,
    # and the next trusted launch compiles the tree in a launch of its own
    shutil.rmtree(workspace / "target")
    cold = JavacMaven(keeps_snapshot=False)
    use, tested = snapshot_launch(cold, workspace, tmp_path / "cold-store")
    off = keep_snapshot(workspace, use, tested, trusted=True)
    why = "no module's test side was kept (a cold launch keeps none)"
    assert (off.state, off.note, off.used) == ("off", f"not kept: {why}", False)
    assert off.describe() == f"tests off: not kept: {why}"
    (marker,) = (tmp_path / "cold-store").glob(f"*/tests/{use.digest}{NO_SNAPSHOT}")
    assert marker.read_text() == why + "\n"
    apart = prepared(cold, workspace, tmp_path / "cold-store", create=True)
    assert apart.state == BUILT and [step.name for step in cold.seen][-1] == "prebuild-tests"
    assert stored_tree(tmp_path / "cold-store") == stored_tree(tmp_path / "store")


@pytest.mark.parametrize(
    ("tests_do", "why"),
    [
        ("write-outside", "the launch wrote outside target/: written-by-a-test.txt"),
        ("change-a-source", "the launch changed the test tree"),
        ("fail-to-compile", "the launch ended in a test compile error"),
        ("rerun", "the launch is run again"),
    ],
)
def test_a_snapshot_that_cannot_stand_for_the_compile_is_not_kept(
    workspace: Path, tmp_path: Path, tests_do: str, why: str
) -> None:
    """The tests ran after the snapshot: what they did outside target/ cannot be told from what
    the compile did, so such a tree is compiled apart by the next trusted launch, whose own checks
    decide; so is the tree of a launch that failed or that the harness runs again."""
    if tests_do == "fail-to-compile":
        write(workspace / "src/test/java/p/BTest.java", "package p;\nclass BTest { int x = Missing.X; }\n")
    maven = JavacMaven(
        tamper={
            "write-outside": "written-by-a-test.txt",
            "change-a-source": "src/test/java/p/ATest.java",
        }.get(tests_do, "")
    )
    use, tested = snapshot_launch(maven, workspace, tmp_path / "store")
    off = keep_snapshot(workspace, use, tested, trusted=tests_do != "rerun")
    assert (off.state, off.note) == ("off", f"not kept: {why}")
    assert not list((tmp_path / "store").glob(f"*/tests/{use.digest}/{MANIFEST}"))
    assert list((tmp_path / "store").glob(f"*/tests/{use.digest}{NO_SNAPSHOT}"))
    # the next trusted launch of the same tree (a fresh checkout of it)
    subprocess.run(["git", "checkout", "-q", "--", "src/test/java/p/ATest.java"], cwd=workspace, check=True)
    subprocess.run(["git", "clean", "-fdq", "-e", "target"], cwd=workspace, check=True)
    assert prepared(maven, workspace, tmp_path / "store", create=True).compiled is not None
    assert [step.name for step in maven.seen][-1] == "prebuild-tests"


def test_gold_stores_its_test_tree_once_and_later_launches_compile_only_what_changed(
    workspace: Path, tmp_path: Path
) -> None:
    """The path after a first launch that kept no snapshot (a cold one): a launch of its own."""
    maven = JavacMaven()
    gold = compiled_apart(maven, workspace, tmp_path / "store")
    assert gold.state == BUILT and gold.compiled is not None
    assert gold.describe() == f"tests built {gold.digest}: 0 of 3 test sources compiled"
    assert gold.launch.argv[-4:] == (SKIP_MAIN, REPLAY_OUTPUTS, STALE_ONLY, "test")
    assert [step.name for step in maven.seen] == ["prebuild", "compile+test", "prebuild-tests"]
    assert (workspace / "target/classes/p/A.class").read_text() == "compiled A"  # production kept
    assert (workspace / "target/test-classes/p/ATest.class").is_file()
    (entry,) = (tmp_path / "store").glob(f"*/tests/{gold.digest}")
    manifest = json.loads((entry / MANIFEST).read_text())
    assert manifest["classes"]["target/test-classes/p/ATest.class"] == ["p/ATest", "ATest.java"]
    assert (entry / "sources/src/test/java/p/Helper.java").is_file()

    # gold again (its second run): the same tree, nothing to compile, nothing new stored
    again = prepared(maven, workspace, tmp_path / "store", create=True)
    assert (again.state, again.digest) == (REUSED, gold.digest) and again.plan is not None
    assert again.plan.recompile == ()

    # a prediction changes Helper: Helper and BTest (which names it) go, ATest stays gold's
    write(workspace / "src/test/java/p/Helper.java", "package p;\nclass Helper { static final int X = 2; }\n")
    prediction = prepared(maven, workspace, tmp_path / "store", create=False)
    assert prediction.state == REUSED and prediction.plan is not None
    assert prediction.plan.recompile == ("src/test/java/p/BTest.java", "src/test/java/p/Helper.java")
    assert prediction.describe().endswith(": 2 of 3 test sources compiled")
    classes = workspace / "target/test-classes/p"
    assert not (classes / "Helper.class").exists() and not (classes / "BTest.class").exists()
    kept = dict(prediction.kept)
    assert "target/test-classes/META-INF/Index.lst" in kept and "target/test-classes/data.txt" not in kept
    assert not any(path.endswith(".class") for path in kept)
    result = maven.run(workspace, prediction.launch, maven_repo=tmp_path)
    assert maven.compiled[-1] == ["src/test/java/p/BTest.java", "src/test/java/p/Helper.java"]
    assert needs_full_compile(workspace, prediction, result) == ""
    assert [step.name for step in maven.seen].count("prebuild-tests") == 1


def test_a_failed_test_compile_of_gold_is_stored_as_unusable_and_tried_once(
    workspace: Path, tmp_path: Path
) -> None:
    write(workspace / "src/test/java/p/BTest.java", "package p;\nclass BTest { int x = Missing.X; }\n")
    maven = JavacMaven()
    first, tested = snapshot_launch(maven, workspace, tmp_path / "store")
    assert keep_snapshot(workspace, first, tested, trusted=True).state == "off"
    use = prepared(maven, workspace, tmp_path / "store", create=True)
    assert use.state == "off" and use.note.startswith("the test compile failed (")
    assert use.launch == replace(launch(), argv=(*launch().argv[:-1], SKIP_MAIN, REPLAY_OUTPUTS, "test"))
    assert not (workspace / "target/test-classes").exists()  # the launch compiles it whole
    again = prepared(maven, workspace, tmp_path / "store", create=True)
    assert again.state == "off" and again.note == "no stored test tree of this production build"
    assert [step.name for step in maven.seen].count("prebuild-tests") == 1


def run(maven: JavacMaven, workspace: Path, tmp_path: Path, *, create: bool) -> tuple[str, list[str]]:
    shutil.rmtree(workspace / "target", ignore_errors=True)
    settings = RunSettings(
        maven_repo=tmp_path / "m2", coverage=False, prebuilt=Prebuilt(tmp_path / "store", create=create)
    )
    selection = run_selection(maven, workspace, [TEST], settings)  # type: ignore[arg-type]
    return f"{selection.status} {selection.prebuilt}", [step.name for step in selection.steps]


def test_a_launch_that_changes_a_kept_class_is_run_again_with_the_whole_tree_compiled(
    workspace: Path, tmp_path: Path
) -> None:
    run(JavacMaven(), workspace, tmp_path, create=True)
    write(workspace / "src/test/java/p/ATest.java", "package p;\nclass ATest { int changed; }\n")
    maven = JavacMaven(tamper="target/test-classes/META-INF/Index.lst")
    status, steps = run(maven, workspace, tmp_path, create=False)
    assert steps == ["compile+test", "compile+test-tests-again"]
    assert "the launch changed target/test-classes/META-INF/Index.lst: tests compiled again" in status
    assert status.startswith("ok reused ")
    # the second launch: production restored, no stored test class, every test source compiled
    assert STALE_ONLY not in maven.seen[-1].argv and SKIP_MAIN in maven.seen[-1].argv
    assert maven.compiled[-1] == [
        "src/test/java/p/ATest.java", "src/test/java/p/BTest.java", "src/test/java/p/Helper.java"
    ]  # fmt: skip


def test_a_test_compile_error_in_a_partial_compile_is_judged_by_the_whole_compile(
    workspace: Path, tmp_path: Path
) -> None:
    run(JavacMaven(), workspace, tmp_path, create=True)
    write(workspace / "src/test/java/p/BTest.java", "package p;\nclass BTest { int x = Missing.X; }\n")
    maven = JavacMaven()
    status, steps = run(maven, workspace, tmp_path, create=False)
    assert steps == ["compile+test", "compile+test-tests-again"]
    assert status.startswith("test_compile_error reused ")
    assert "a test compile error in a partial test compile: tests compiled again" in status
    assert len(maven.compiled[-1]) == 3
