"""Real Maven runs on ``tests/fixtures/mini-maven``: warm-up online, then offline evaluations.

Every scenario copies the fixture to its own directory and runs :func:`run_selection` once.
The Maven repository is shared across runs of this suite (``TEBENCH_TEST_MAVEN_REPO``, default
``~/.cache/pytest-tebench/test-m2``) so only the first run downloads anything.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.local import LocalExecutor
from pytest_tebench.run.maven import buildplan
from pytest_tebench.run.maven.dist import ensure_maven
from pytest_tebench.run.maven.dist import maven_tools
from pytest_tebench.run.maven.jacoco import LineCoverage
from pytest_tebench.run.maven.jdk import choose_jdk
from pytest_tebench.run.maven.jdk import detect_java_level
from pytest_tebench.run.maven.jdk import discover_jdks
from pytest_tebench.run.maven.journal import read_journal
from pytest_tebench.run.maven.offline_run import run_warmed
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.steps import mvn_program
from pytest_tebench.run.maven.surefire import FAILED
from pytest_tebench.run.maven.surefire import NOT_RUN
from pytest_tebench.run.maven.surefire import PASSED
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.testrun import SelectionRun
from pytest_tebench.run.maven.testrun import run_selection
from pytest_tebench.run.maven.warmup import warm_up

from conftest import TEST_MAVEN_REPO

pytestmark = pytest.mark.maven

FIXTURE = Path(__file__).parent / "fixtures" / "mini-maven"
PKG = "org.tebench.textkit"
CLAMP_TEST = f"{PKG}.ClampTest"
PROJECT = "tebench/mini-maven"
SLUG_TEST = f"{PKG}.SlugTest"
CLAMP_JAVA = "src/main/java/org/tebench/textkit/Clamp.java"
CLAMP_TEST_JAVA = "src/test/java/org/tebench/textkit/ClampTest.java"

Copy = Callable[[str], Path]


@pytest.fixture(scope="module")
def executor() -> LocalExecutor:
    if shutil.which("mvn") is None:
        pytest.skip("needs Maven on PATH")
    return LocalExecutor()


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Copy:
    def make(name: str) -> Path:
        target = tmp_path_factory.mktemp("builds") / name
        shutil.copytree(FIXTURE, target, ignore=shutil.ignore_patterns("target"))
        return target

    return make


@pytest.fixture(scope="module")
def settings(executor: LocalExecutor, copy: Copy) -> RunSettings:
    repo = TEST_MAVEN_REPO
    workspace = copy("warm")
    level = detect_java_level(workspace / "pom.xml")
    assert level == 8  # maven.compiler.source/target 1.8 in the fixture POM
    jdk = choose_jdk(level, discover_jdks())
    settings = RunSettings(maven_repo=repo, java_version=jdk.version, compile_timeout=240, test_timeout=240)
    # offline first; online only when the shared test repository lacks something
    warmed = run_warmed(executor, workspace, [TestId(CLAMP_TEST, "belowLow")], settings, project=PROJECT)
    warm = warmed.warmup
    assert warm is None or warm.ok, warm.error + "\n" + "\n".join(step.output for step in warm.steps)
    assert warmed.run.status == "ok", warmed.run.error
    return settings


def replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def outcome_table(run: SelectionRun) -> dict[str, tuple[str, int]]:
    return {str(o.test): (o.status, o.invocations) for o in run.tests}


def processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_warm_project_builds_offline_without_warm_up(
    executor: LocalExecutor, settings: RunSettings, copy: Copy
) -> None:
    again = run_warmed(
        executor, copy("warm-again"), [TestId(CLAMP_TEST, "belowLow")], settings, project=PROJECT
    )
    assert again.warmup is None and again.run.status == "ok"
    assert again.run.maven_version.startswith("3.")  # the -V banner names the Maven that ran


def test_passing_nested_parameterized_with_coverage(
    executor: LocalExecutor, settings: RunSettings, copy: Copy
) -> None:
    selection = [
        TestId(CLAMP_TEST, "belowLow"),
        TestId(f"{SLUG_TEST}$Blank", "nullGivesEmpty"),
        TestId(SLUG_TEST, "slugs"),
        TestId(SLUG_TEST, "argLineApplied"),
    ]
    run = run_selection(executor, copy("pass"), selection, settings)
    assert (run.status, run.compile_ok, run.test_compile_ok, run.error) == ("ok", True, True, "")
    assert outcome_table(run) == {
        f"{CLAMP_TEST}#belowLow": (PASSED, 1),
        f"{SLUG_TEST}#argLineApplied": (PASSED, 1),  # the POM's literal -Xss1m reached the test JVM
        f"{SLUG_TEST}#slugs": (PASSED, 3),  # three @CsvSource rows
        f"{SLUG_TEST}$Blank#nullGivesEmpty": (PASSED, 1),  # @Nested, selected as Outer$Inner
    }
    assert run.all_passed
    # One Maven launch compiles and tests; the JaCoCo CLI writes the report.
    assert [step.name for step in run.steps] == ["compile+test", "coverage-report"]
    assert set(run.timings) == {"compile+test", "coverage-report"}
    assert run.coverage is not None, run.coverage_error
    assert run.coverage.classes == {
        f"{PKG}.Clamp": "org/tebench/textkit/Clamp.java",
        f"{PKG}.Slug": "org/tebench/textkit/Slug.java",
    }
    # Only belowLow calls Clamp.clamp(-5, 0, 10). By hand from the bytecode of each line:
    #  9 `if (low > high)`   iload,iload,if_icmple = 3 covered; 0 > 10 is false: 1 of 2 branches
    # 10 `throw new IAE(..)` new,dup,ldc,invokespecial,athrow = 5 missed
    # 12 `if (value < low)`  3 covered; -5 < 0 is true: 1 of 2 branches
    # 13 `return low`        iload,ireturn = 2 covered
    # 15 `if (value > high)` 3 missed, 2 branches missed; 16 and 18 `return ...` 2 missed each.
    # The private empty constructor (lines 5-6) is filtered out by JaCoCo.
    assert run.coverage.files["org/tebench/textkit/Clamp.java"] == {
        9: LineCoverage(mi=0, ci=3, mb=1, cb=1),
        10: LineCoverage(mi=5, ci=0, mb=0, cb=0),
        12: LineCoverage(mi=0, ci=3, mb=1, cb=1),
        13: LineCoverage(mi=0, ci=2, mb=0, cb=0),
        15: LineCoverage(mi=3, ci=0, mb=2, cb=0),
        16: LineCoverage(mi=2, ci=0, mb=0, cb=0),
        18: LineCoverage(mi=2, ci=0, mb=0, cb=0),
    }
    # Slug line 9 `if (text == null || text.trim().isEmpty())`: aload,ifnull,aload,trim,isEmpty,
    # ifeq = 6 instructions, 4 branches. null takes the first branch; the non-empty slugs rows
    # take both "false" branches; nobody passes blank text ("spacesGiveEmpty" is not selected).
    assert run.coverage.line("org/tebench/textkit/Slug.java", 9) == LineCoverage(mi=0, ci=6, mb=1, cb=3)
    assert run.to_dict()["coverage"]["files"]["org/tebench/textkit/Clamp.java"]["13"] == [0, 2, 0, 0]


def test_failing_assertion_and_unmatched_method(
    executor: LocalExecutor, settings: RunSettings, copy: Copy
) -> None:
    workspace = copy("fail")
    test_file = workspace / CLAMP_TEST_JAVA
    replace_in(
        test_file, "assertEquals(0, Clamp.clamp(-5, 0, 10));", "assertEquals(1, Clamp.clamp(-5, 0, 10));"
    )
    # inside(0), inside(3), inside(10): only the value 3 now passes.
    replace_in(
        test_file,
        "assertEquals(value, Clamp.clamp(value, 0, 10));",
        "assertEquals(3, Clamp.clamp(value, 0, 10));",
    )
    selection = [TestId(CLAMP_TEST, m) for m in ("belowLow", "inside", "aboveHigh", "nope")]
    # The split sequence: test-compile, then test, each with its own timeout.
    run = run_selection(
        executor, workspace, selection, replace(settings, coverage=False, split_launches=True)
    )
    assert (run.status, run.compile_ok, run.test_compile_ok) == ("ok", True, True)
    assert outcome_table(run) == {
        f"{CLAMP_TEST}#aboveHigh": (PASSED, 1),
        f"{CLAMP_TEST}#belowLow": (FAILED, 1),
        f"{CLAMP_TEST}#inside": (FAILED, 3),
        f"{CLAMP_TEST}#nope": (NOT_RUN, 0),
    }
    assert run.outcomes[TestId(CLAMP_TEST, "belowLow")].message == "expected: <1> but was: <0>"
    assert not run.all_passed
    assert run.coverage is None and run.coverage_error == ""
    assert [step.name for step in run.steps] == ["test-compile", "test"]
    assert set(run.timings) == {"test-compile", "test"}


@pytest.mark.parametrize("split", [False, True], ids=["one-launch", "split"])
def test_main_compile_error(executor: LocalExecutor, settings: RunSettings, copy: Copy, split: bool) -> None:
    workspace = copy(f"main-error-{split}")
    replace_in(workspace / CLAMP_JAVA, "return value;", "return valu;")
    run = run_selection(
        executor, workspace, [TestId(CLAMP_TEST, "belowLow")], replace(settings, split_launches=split)
    )
    assert (run.status, run.compile_ok, run.test_compile_ok) == ("compile_error", False, None)
    assert "maven-compiler-plugin:3.13.0:compile (default-compile)" in run.error
    assert outcome_table(run) == {f"{CLAMP_TEST}#belowLow": (NOT_RUN, 0)}
    assert [step.name for step in run.steps] == ["test-compile" if split else "compile+test"]


def test_a_warm_up_that_cannot_compile_still_resolves_what_tests_need(
    executor: LocalExecutor, settings: RunSettings, copy: Copy, tmp_path: Path
) -> None:
    """From an empty repository: the trusted checkout does not compile, so the online build stops
    before Surefire (which the old warm-up never resolved, as with jfree/jfreechart); the
    effective POM's plan still brings Surefire and its JUnit 5 provider, and the fixed code then
    builds and tests offline with no further warm-up."""
    workspace = copy("warm-broken")
    replace_in(workspace / CLAMP_JAVA, "return value;", "return valu;")
    empty = replace(settings, maven_repo=tmp_path / "m2", coverage=False)
    build = buildplan.build_digest(workspace, java=empty.java_version, maven=empty.maven_version)
    warmed = warm_up(executor, workspace, empty, project="tebench/broken", build=build)
    assert warmed.ok, warmed.error + "\n" + warmed.log_tail
    names = ["effective-pom", "resolve-provider", "resolve-provider", "resolve-plan", "test-compile"]
    assert [s.name for s in warmed.steps] == names
    provider = buildplan.Artifact("org.apache.maven.surefire", "surefire-junit-platform", "3.2.5")
    assert provider.path(empty.maven_repo).is_file()
    replace_in(workspace / CLAMP_JAVA, "return valu;", "return value;")
    run = run_warmed(executor, workspace, [TestId(CLAMP_TEST, "belowLow")], empty, project="tebench/broken")
    assert run.warmup is None and run.run.status == "ok", run.run.error
    assert outcome_table(run.run) == {f"{CLAMP_TEST}#belowLow": (PASSED, 1)}
    assert [e["build"] for e in read_journal(empty.maven_repo)] == [build]


def test_test_compile_error(executor: LocalExecutor, settings: RunSettings, copy: Copy) -> None:
    workspace = copy("test-error")
    replace_in(workspace / CLAMP_TEST_JAVA, "Clamp.clamp(-5, 0, 10)", "Clamp.clampp(-5, 0, 10)")
    run = run_selection(executor, workspace, [TestId(CLAMP_TEST, "aboveHigh")], settings)
    assert (run.status, run.compile_ok, run.test_compile_ok) == ("test_compile_error", True, False)
    assert "testCompile (default-testCompile)" in run.error
    assert [step.name for step in run.steps] == ["compile+test"]


def test_nothing_matches_and_stale_reports_are_ignored(
    executor: LocalExecutor, settings: RunSettings, copy: Copy
) -> None:
    workspace = copy("no-match")
    stale = workspace / "target" / "surefire-reports"
    stale.mkdir(parents=True)
    # A leftover report claiming the selected test passed, as an agent's own earlier run would leave.
    (stale / f"TEST-{PKG}.Nope.xml").write_text(
        f'<testsuite name="{PKG}.Nope" tests="1"><testcase name="x" classname="{PKG}.Nope"/></testsuite>',
        encoding="utf-8",
    )
    selection = [TestId(f"{PKG}.Nope", "x"), TestId(CLAMP_TEST, "nope")]
    # clean_target=False: the stale report must still be removed before the test step.
    run = run_selection(executor, workspace, selection, replace(settings, clean_target=False))
    assert run.status == "ok", run.error  # Surefire did not fail with "No tests matching pattern"
    assert outcome_table(run) == {f"{PKG}.Nope#x": (NOT_RUN, 0), f"{CLAMP_TEST}#nope": (NOT_RUN, 0)}
    assert not run.all_passed
    # Maven's own JVM still wrote an (empty) session, so the report exists and covers nothing.
    assert run.coverage is not None, run.coverage_error
    assert run.coverage.covered_lines("org/tebench/textkit/Clamp.java") == frozenset()


def test_empty_selection_runs_no_tests(executor: LocalExecutor, settings: RunSettings, copy: Copy) -> None:
    run = run_selection(executor, copy("empty"), [], settings)
    assert (run.status, run.compile_ok, run.test_compile_ok, run.tests) == ("no_tests", True, True, ())
    assert [step.name for step in run.steps] == ["test-compile"]
    assert not run.all_passed


def test_timeout_kills_maven_and_test_jvm(executor: LocalExecutor, settings: RunSettings, copy: Copy) -> None:
    workspace = copy("timeout")
    (workspace / "src/test/java/org/tebench/textkit/SleepTest.java").write_text(
        "package org.tebench.textkit;\n\nimport org.junit.jupiter.api.Test;\n\n"
        "class SleepTest {\n    @Test\n    void sleeps() throws Exception {\n"
        "        Thread.sleep(600_000);\n    }\n}\n",
        encoding="utf-8",
    )
    started = time.monotonic()
    # One launch: the compile limit (120 s) holds until Surefire starts, then the test limit
    # (15 s) does; so the kill comes 15 s into the sleeping test, and the log says so.
    limits = replace(settings, compile_timeout=120, test_timeout=15)
    run = run_selection(executor, workspace, [TestId(f"{PKG}.SleepTest", "sleeps")], limits)
    elapsed = time.monotonic() - started
    assert run.status == "timeout:test", run.steps[-1].output
    assert (run.compile_ok, run.test_compile_ok) == (True, True)
    assert outcome_table(run) == {f"{PKG}.SleepTest#sleeps": (NOT_RUN, 0)}
    test_step = run.steps[-1]
    assert test_step.timed_out and test_step.exit_code is None
    assert 15 <= test_step.duration < 120
    assert elapsed < 150
    # Neither Maven nor the forked Surefire JVM (whose command line names the workspace) survived.
    assert processes_mentioning(str(workspace)) == []


def test_maven_39_download_and_use(tmp_path: Path, copy: Copy) -> None:
    cache = tmp_path / "maven-cache"
    home = ensure_maven("3.9.9", cache)
    assert home == cache / "apache-maven-3.9.9" and (home / "bin" / "mvn").is_file()
    assert ensure_maven("3.9.9", cache) == home  # second call: no download
    tools = maven_tools("3.9.9", cache)  # the build layer's resolution; the executor only runs it
    executor = LocalExecutor()
    step = BuildStep("version", (mvn_program(tools), "-v"), 60, tools=tools)
    result = executor.run(copy("mvn39"), step, maven_repo=tmp_path)
    assert result.ok, result.output
    assert "Apache Maven 3.9.9" in result.output
    assert result.argv[0] == str(home / "bin" / "mvn")


ABSTRACT_CASE = f"""package {PKG};

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

abstract class AbstractClampTestCase {{
    abstract int high();

    @Test
    void clampsToHigh() {{
        assertEquals(10, Clamp.clamp(99, 0, high()));
    }}
}}
"""


def test_methods_of_abstract_test_classes_run_through_their_subclasses(
    executor: LocalExecutor, settings: RunSettings, copy: Copy
) -> None:
    from pytest_tebench.run.maven.selection import run_inherited

    workspace = copy("abstract")
    tests = workspace / "src/test/java/org/tebench/textkit"
    (tests / "AbstractClampTestCase.java").write_text(ABSTRACT_CASE, encoding="utf-8")
    (tests / "TenClampTest.java").write_text(
        f"package {PKG};\n\nclass TenClampTest extends AbstractClampTestCase {{\n    int high() {{ return 10; }}\n}}\n"
    )
    (tests / "TwentyClampTest.java").write_text(
        f"package {PKG};\n\nclass TwentyClampTest extends AbstractClampTestCase {{\n    int high() {{ return 20; }}\n}}\n"
    )
    (tests / "AbstractOrphanTestCase.java").write_text(
        f"package {PKG};\n\nimport org.junit.jupiter.api.Test;\n\n"
        "abstract class AbstractOrphanTestCase {\n    @Test\n    void never() { }\n}\n"
    )
    selected = [
        TestId(f"{PKG}.AbstractClampTestCase", "clampsToHigh"),
        TestId(f"{PKG}.AbstractOrphanTestCase", "never"),
    ]
    run = run_inherited(executor, workspace, selected, settings)
    outcomes = {str(o.test): o for o in run.tests}
    # TenClampTest passes, TwentyClampTest clamps to 20 and fails: the inherited method failed
    clamps = outcomes[f"{PKG}.AbstractClampTestCase#clampsToHigh"]
    assert (clamps.status, clamps.invocations) == ("failed", 2)
    assert clamps.message.endswith(f"(run as {PKG}.TenClampTest, {PKG}.TwentyClampTest)")
    orphan = outcomes[f"{PKG}.AbstractOrphanTestCase#never"]
    assert (orphan.status, orphan.message) == (
        "not_run",
        "declared in an abstract class no concrete test class extends",
    )
