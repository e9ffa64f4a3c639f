"""Maven command lines, log diagnosis and the Maven-version rule (no Maven runs here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_tebench.errors import HarnessError
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import expand_placeholders
from pytest_tebench.run.maven import log as mavenlog
from pytest_tebench.run.maven.dist import DEFAULT_MAVEN
from pytest_tebench.run.maven.dist import ensure_maven
from pytest_tebench.run.maven.settings import MavenSettings
from pytest_tebench.run.maven.steps import SKIP_FLAGS
from pytest_tebench.run.maven.steps import WARMUP_SELECTOR
from pytest_tebench.run.maven.steps import compile_step
from pytest_tebench.run.maven.steps import resolve_artifact_step
from pytest_tebench.run.maven.steps import selection_step
from pytest_tebench.run.maven.steps import selectors
from pytest_tebench.run.maven.surefire import TestId


def test_selectors_grouped_sorted_binary_names() -> None:
    tests = [
        TestId("p.B", "z"),
        TestId("p.A$Inner", "m"),
        TestId("p.B", "a"),
        TestId("p.A", "x"),
        TestId("p.B", "a"),
    ]
    # each method also as m[*]: JUnit 4 Parameterized invocations are named m[0], m[1]
    assert selectors(tests) == "p.A#x+x[*],p.A$Inner#m+m[*],p.B#a+a[*]+z+z[*]"
    assert selectors(reversed(tests)) == selectors(tests)
    # by class: each class once, whole (Surefire < 2.19, RunSettings.select_by_class)
    assert selectors(tests, by_class=True) == "p.A,p.A$Inner,p.B"
    # a name that is not ASCII also by the names javac gives it reading the source as ISO-8859-1
    # (U+009C dropped) and as cp1252: a build may read test sources so (commons-collections)
    assert selectors([TestId("p.A", "probe\u00dc")]) == (
        "p.A#probe\u00dc+probe\u00dc[*]+probe\u00c3+probe\u00c3[*]+probe\u00c3\u0153+probe\u00c3\u0153[*]"
    )


def test_compile_step_offline() -> None:
    maven = (("maven", "/cache/apache-maven-3.9.9"),)  # resolved by dist.maven_tools
    step = compile_step(java_version=11, timeout=300, maven=maven, extra_args=["-Dx=1"])
    assert step.name == "test-compile"
    # -V: the banner names the Maven that ran, for the report; the executor expands {tool:maven}
    assert step.argv[:6] == (
        "{tool:maven}/bin/mvn",
        "-B",
        "-ntp",
        "-V",
        "-Dmaven.repo.local={maven_repo}",
        "-o",
    )
    assert step.argv[-2:] == ("-Dx=1", "test-compile")
    assert set(SKIP_FLAGS) <= set(step.argv)
    assert "-Djacoco.skip=true" in step.argv
    assert (step.java_version, step.timeout, step.network, step.tools) == (11, 300, False, maven)
    assert step.env == ()
    main_only = compile_step(java_version=17, timeout=10, offline=False, main_only=True)
    assert main_only.argv[-1] == "compile" and "-o" not in main_only.argv and main_only.network


def test_selection_step_with_agent() -> None:
    step = selection_step([TestId("p.A", "m")], java_version=17, timeout=900, includes=["p.*"])
    assert step.argv[-2:] == ("-Dtest=p.A#m+m[*]", "test")
    for flag in (
        "-Dsurefire.failIfNoSpecifiedTests=false",
        "-DfailIfNoTests=false",
        "-Dmaven.test.failure.ignore=true",
        "-DskipTests=false",
    ):
        assert flag in step.argv
    assert len(step.env) == 1 and step.env[0][0] == "JAVA_TOOL_OPTIONS"
    assert step.env[0][1].endswith(",append=true,includes=p.*")
    expanded = expand_placeholders(step, workspace="/ws", maven_repo="/m2")
    assert "-Dmaven.repo.local=/m2" in expanded.argv
    assert expanded.env[0][1].startswith("-javaagent:/m2/org/jacoco/org.jacoco.agent/0.8.12/")
    assert "destfile=/ws/target/tebench-jacoco.exec" in expanded.env[0][1]
    bare = selection_step(None, java_version=17, timeout=1)
    assert bare.argv[-2] == f"-Dtest={WARMUP_SELECTOR}" and bare.env == ()


def test_a_whole_modules_step_selects_nothing_and_keeps_every_flag() -> None:
    # the module's full test phase, as the project's own `mvn test` runs it (gold_check)
    tests = [TestId("p.A", "m")]
    selected = selection_step(tests, java_version=17, timeout=900)
    whole = selection_step(tests, java_version=17, timeout=900, whole_modules=True)
    assert not any(arg.startswith("-Dtest=") for arg in whole.argv)
    assert [a for a in selected.argv if not a.startswith("-Dtest=")] == list(whole.argv)
    assert not whole.test_network and not whole.network
    networked = selection_step(tests, java_version=17, timeout=900, test_network=True)
    assert networked.test_network and not networked.network and "-o" in networked.argv


def test_resolve_artifact_step() -> None:
    step = resolve_artifact_step(
        "org.jacoco:org.jacoco.agent:0.8.12:jar:runtime", java_version=17, timeout=60
    )
    assert step.name == "resolve-jacoco-agent" and step.network
    assert "-Dartifact=org.jacoco:org.jacoco.agent:0.8.12:jar:runtime" in step.argv
    assert "-o" not in step.argv


def test_expand_placeholders_leaves_other_text() -> None:
    step = BuildStep("x", ("a", "{workspace}/b", "${argLine}"), 1, env=(("K", "{maven_repo}:{workspace}"),))
    out = expand_placeholders(step, workspace="/w", maven_repo="/r")
    assert out.argv == ("a", "/w/b", "${argLine}")
    assert out.env == (("K", "/r:/w"),)


# Log tails shaped like Maven 3.8.7's real output on tests/fixtures/mini-maven.
MAIN_ERROR = """[INFO] --- maven-compiler-plugin:3.13.0:compile (default-compile) @ mini-maven ---
[ERROR] COMPILATION ERROR :
[ERROR] /ws/src/main/java/org/tebench/textkit/Clamp.java:[18,16] cannot find symbol
  symbol:   variable valu
[INFO] BUILD FAILURE
\x1b[0m[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.13.0:compile (default-compile) on project mini-maven: Compilation failure
[ERROR] /ws/src/main/java/org/tebench/textkit/Clamp.java:[18,16] cannot find symbol
[ERROR] -> [Help 1]
"""
TEST_ERROR = """[INFO] --- compiler:3.13.0:testCompile (default-testCompile) @ mini-maven ---
[ERROR] COMPILATION ERROR :
[ERROR] /ws/src/test/java/org/tebench/textkit/ClampTest.java:[12,30] cannot find symbol
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.13.0:testCompile (default-testCompile) on project mini-maven: Compilation failure
"""
OFFLINE = """[WARNING] The POM for org.junit.jupiter:junit-jupiter:jar:5.10.1 is missing, no dependency information available
[INFO] BUILD FAILURE
[ERROR] Failed to execute goal on project mini-maven: Could not resolve dependencies for project org.tebench:mini-maven:jar:1.0-SNAPSHOT: Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and the artifact org.junit.jupiter:junit-jupiter:jar:5.10.1 has not been downloaded from it before. -> [Help 1]
"""
BAD_RELEASE = """[INFO] --- maven-compiler-plugin:3.13.0:compile (default-compile) @ x ---
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.13.0:compile (default-compile) on project x: Fatal error compiling: error: release version 25 not supported -> [Help 1]
"""
# A long error list pushed the "Failed to execute goal" line out of the tail.
CUT_TEST_ERRORS = """[ERROR] /ws/src/test/java/a/ATest.java:[3,1] cannot find symbol
[ERROR] /ws/src/test/java/a/BTest.java:[4,1] cannot find symbol
[ERROR] -> [Help 1]
[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.
"""
CUT_MIXED_ERRORS = CUT_TEST_ERRORS.replace("/ws/src/test/java/a/BTest.java", "/ws/src/main/java/a/B.java")
CRASH = """[INFO] Running a.ATest
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test (default-test) on project x: There are test failures.
[ERROR] ExecutionException The forked VM terminated without properly saying goodbye. VM crash or System.exit called?
"""
AGENT_MISSING = """Error occurred during initialization of VM
agent library failed to init: instrument
Error opening zip file or JAR manifest missing : /m2/org/jacoco/org.jacoco.agent-0.8.12-runtime.jar
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test (default-test) on project x: There are test failures.
[ERROR] ExecutionException The forked VM terminated without properly saying goodbye.
"""


@pytest.mark.parametrize(
    ("log", "kind", "compile_done"),
    [
        (MAIN_ERROR, mavenlog.COMPILE_ERROR, False),
        (TEST_ERROR, mavenlog.TEST_COMPILE_ERROR, True),
        (OFFLINE, mavenlog.BUILD_ERROR, False),
        (BAD_RELEASE, mavenlog.BUILD_ERROR, False),
        (CUT_TEST_ERRORS + "COMPILATION ERROR", mavenlog.TEST_COMPILE_ERROR, True),
        (CUT_MIXED_ERRORS + "Compilation failure", mavenlog.COMPILE_ERROR, False),
        ("[ERROR] something odd", mavenlog.BUILD_ERROR, False),
    ],
)
def test_diagnose_build(log: str, kind: str, compile_done: bool) -> None:
    verdict = mavenlog.diagnose_build(log, 1)
    assert (verdict.kind, verdict.compile_done) == (kind, compile_done)


def test_diagnose_summaries() -> None:
    assert mavenlog.diagnose_build(OFFLINE, 1).summary.startswith(
        "[ERROR] Failed to execute goal on project mini-maven: Could not resolve dependencies"
    )
    assert "testCompile (default-testCompile)" in mavenlog.diagnose_build(TEST_ERROR, 1).summary
    # javac's first error follows, from the source root on, with the symbol it names when it does
    assert mavenlog.diagnose_build(MAIN_ERROR, 1).summary.endswith(
        "on project mini-maven: Compilation failure: src/main/java/org/tebench/textkit/Clamp.java:[18,16] "
        "cannot find symbol (symbol: variable valu)"
    )
    assert mavenlog.diagnose_build(TEST_ERROR, 1).summary.endswith(
        "Compilation failure: src/test/java/org/tebench/textkit/ClampTest.java:[12,30] cannot find symbol"
    )
    assert (
        mavenlog.first_javac_error("[ERROR] Clamp.java:[3] ';' expected\n") == "Clamp.java:[3] ';' expected"
    )
    assert mavenlog.first_javac_error(OFFLINE) == ""
    assert mavenlog.diagnose_build("", 0) == mavenlog.Diagnosis(mavenlog.OK, "", True)
    assert mavenlog.diagnose_build("", 3).summary == "Maven exited with code 3"


def test_diagnose_test_step() -> None:
    assert mavenlog.diagnose_test_step("", 0).kind == mavenlog.OK
    assert mavenlog.diagnose_test_step(CRASH, 1).kind == mavenlog.TEST_CRASH
    # The same crash message, but the JVM never started because of us: a harness problem.
    verdict = mavenlog.diagnose_test_step(AGENT_MISSING, 1)
    assert verdict.kind == mavenlog.BUILD_ERROR
    assert verdict.summary == "Error occurred during initialization of VM"
    assert mavenlog.diagnose_test_step(OFFLINE, 1).kind == mavenlog.BUILD_ERROR


def test_compile_started_tests() -> None:
    assert mavenlog.compile_started_tests(TEST_ERROR)
    assert not mavenlog.compile_started_tests(MAIN_ERROR)


def test_maven_settings_default_to_apache_maven() -> None:
    # one default, written once: every build of a run gets Apache Maven's own distribution
    settings = MavenSettings.from_values({}, Path("/cache"))
    assert settings.maven_version == DEFAULT_MAVEN == MavenSettings(maven_repo=Path("/m2")).maven_version
    assert MavenSettings.from_values({"maven": "3.8.8"}, Path("/cache")).maven_version == "3.8.8"


def test_ensure_maven_rejects_bad_version(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="not a Maven version"):
        ensure_maven("3.9.9/../../x", tmp_path)


def test_ensure_maven_reuses_install(tmp_path: Path) -> None:
    # An installed home is returned without any network access.
    home = tmp_path / "apache-maven-3.9.9"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "mvn").write_text("", encoding="utf-8")
    assert ensure_maven("3.9.9", tmp_path, base_url="http://127.0.0.1:9") == home


def test_ensure_maven_download_failure_is_harness_error(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="cannot download"):
        ensure_maven("3.9.9", tmp_path, base_url="http://127.0.0.1:9", timeout=5)


@pytest.mark.parametrize(
    ("log", "phase"),
    [
        ("[INFO] --- maven-compiler-plugin:3.13.0:compile (default-compile) @ x ---\n", "test-compile"),
        (
            "[INFO] --- compiler:3.13.0:testCompile (default-testCompile) @ x ---\n[WARNING] w\n",
            "test-compile",
        ),
        ("[INFO] --- surefire:3.2.5:test (default-test) @ x ---\n[INFO] T E S T S\n", "test"),
        ("[INFO] --- maven-surefire-plugin:3.2.5:test (default-test) @ x ---\n", "test"),
        ("[INFO] Running org.x.ATest\nlots of test output\n", "test"),
        ("[WARNING] /ws/src/main/java/A.java:[3,1] deprecated\n", "test-compile"),
        ("test output only\n", "test"),
    ],
)
def test_phase_at_end(log: str, phase: str) -> None:
    assert mavenlog.phase_at_end(log) == phase


def test_artifacts_the_repositories_do_not_have_are_told_from_transfer_failures() -> None:
    cached = (
        "[ERROR] Non-resolvable import POM: org.apache.commons:commons-statistics-bom:pom:1.3 was not found in "
        "https://repo.maven.apache.org/maven2 during a previous attempt. This failure was cached @ line 176"
    )
    missing = (
        "[ERROR] Failed to execute goal on project x: Could not resolve dependencies for project a:b:jar:1: "
        "Could not find artifact org.apache.commons:commons-statistics-descriptive:jar:1.2-SNAPSHOT in "
        "central (https://repo.maven.apache.org/maven2) -> [Help 1]"
    )
    assert mavenlog.unpublished_coordinates(f"{cached}\n{missing}\n{cached}") == [
        "org.apache.commons:commons-statistics-bom:pom:1.3",
        "org.apache.commons:commons-statistics-descriptive:jar:1.2-SNAPSHOT",
    ]
    transfer = "[ERROR] Could not transfer artifact org.apache:commons-parent:pom:70 from/to central: Connection reset"
    assert mavenlog.unpublished_coordinates(transfer) == []
    classified = (
        "[ERROR] Could not find artifact org.x:core:jar:tests:1.2-SNAPSHOT in central (https://repo/)"
    )
    assert mavenlog.unpublished_coordinates(classified) == ["org.x:core:jar:tests:1.2-SNAPSHOT"]


def test_the_maven_a_plugin_requires_is_read_from_the_log() -> None:
    refused = (
        "[ERROR] Failed to execute goal io.github.ascopes:protobuf-maven-plugin:5.1.4:generate-test (default) "
        "on project proto: The plugin io.github.ascopes:protobuf-maven-plugin:5.1.4 requires Maven version 3.9.6 -> [Help 1]"
    )
    assert mavenlog.required_maven(refused) == "3.9.6"
    assert mavenlog.required_maven("[INFO] BUILD SUCCESS") == ""


def test_a_plugin_failing_before_the_tests_is_no_test_crash() -> None:
    # recorded: gson's ProGuard step on a JDK without jmods; Maven's help link names
    # MojoExecutionException, which once read as Surefire's crash: tests "crashed" that never ran
    log = (Path(__file__).parent / "fixtures" / "jdk-logs" / "gson-proguard-without-jmods.log").read_text()
    verdict = mavenlog.diagnose_test_step(log, 1)
    assert verdict.kind == mavenlog.BUILD_ERROR
    assert verdict.summary.startswith(
        "[ERROR] Failed to execute goal com.github.wvengen:proguard-maven-plugin:2.7.0:proguard"
    )
    # Surefire's own crash still is one, with or without the help link after it
    with_help = (
        CRASH + "[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/MojoExecutionException\n"
    )
    assert mavenlog.diagnose_test_step(with_help, 1).kind == mavenlog.TEST_CRASH
