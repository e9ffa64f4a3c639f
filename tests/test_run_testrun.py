"""run_selection against a scripted executor: the paths real Maven rarely takes (warm-up: test_run_warmup.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_tebench.errors import HarnessError
from pytest_tebench.run import oom
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.maven.jacoco import EXEC_FILE
from pytest_tebench.run.maven.jacoco import XML_FILE
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.selection import concrete_classes
from pytest_tebench.run.maven.selection import index_test_classes
from pytest_tebench.run.maven.surefire import ERROR
from pytest_tebench.run.maven.surefire import NOT_RUN
from pytest_tebench.run.maven.surefire import PASSED
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.surefire import TestOutcome
from pytest_tebench.run.maven.testrun import run_selection

Handler = Callable[[Path, BuildStep], StepResult]
A = TestId("p.ATest", "a")
B = TestId("p.ATest", "b")


def result(step: BuildStep, code: int | None = 0, output: str = "", timed_out: bool = False) -> StepResult:
    return StepResult(step.name, step.argv, None if timed_out else code, timed_out, 1.0, output)


@dataclass
class ScriptedExecutor:
    """Answers each step by name from ``handlers``; records what it was asked to run."""

    handlers: dict[str, Handler]
    name: str = "scripted"
    seen: list[BuildStep] = field(default_factory=list)

    def run(self, workspace: Path, step: BuildStep, *, maven_repo: Path) -> StepResult:
        self.seen.append(step)
        return self.handlers[step.name](workspace, step)

    def close(self) -> None:
        pass


def write_report(workspace: Path, *cases: str) -> None:
    reports = workspace / "target" / "surefire-reports"
    reports.mkdir(parents=True, exist_ok=True)
    body = "".join(f'<testcase name="{name}" classname="p.ATest"/>' for name in cases)
    (reports / "TEST-p.ATest.xml").write_text(
        f'<testsuite name="p.ATest">{body}</testsuite>', encoding="utf-8"
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src/main/java/p").mkdir(parents=True)
    (ws / "src/main/java/p/A.java").write_text("package p;\nclass A {}\n", encoding="utf-8")
    (ws / "pom.xml").write_text("<project/>", encoding="utf-8")
    return ws


@pytest.fixture
def settings(tmp_path: Path) -> RunSettings:
    return RunSettings(maven_repo=tmp_path / "m2", java_version=11)


def test_one_launch_argv_env_and_stale_cleanup(workspace: Path, settings: RunSettings) -> None:
    # Left over from an earlier run in this workspace; clean_target=False keeps target/ itself.
    write_report(workspace, "a", "b")
    (workspace / EXEC_FILE).write_text("stale", encoding="utf-8")

    def build(ws: Path, step: BuildStep) -> StepResult:
        assert not (ws / "target/surefire-reports").exists() and not (ws / EXEC_FILE).exists()
        write_report(ws, "a")
        return result(step)

    executor = ScriptedExecutor({"compile+test": build})
    run = run_selection(executor, workspace, [B, A], replace(settings, clean_target=False, coverage=False))
    assert (run.status, run.compile_ok, run.test_compile_ok) == ("ok", True, True)
    assert {str(o.test): o.status for o in run.tests} == {"p.ATest#a": PASSED, "p.ATest#b": NOT_RUN}
    (step,) = executor.seen
    assert step.argv[-2:] == ("-Dtest=p.ATest#a+a[*]+b+b[*]", "test")
    assert "-o" in step.argv and step.java_version == 11 and step.env == ()
    # the compile limit until Surefire's banner, then the test limit
    assert (step.timeout, step.phase_marker, step.phase_timeout) == (
        settings.compile_timeout,
        "T E S T S",
        settings.test_timeout,
    )
    json.dumps(run.to_dict())  # plain data all the way down


def test_class_selection_reads_only_the_selected_methods(workspace: Path, settings: RunSettings) -> None:
    # Surefire 2.17 ran the whole class: c (not selected) failed, a and b passed. The console
    # counts c's failure for the class; the reports show it too, so a's pass stands.
    console = (
        "-------------------------------------------------------\n T E S T S\n"
        "-------------------------------------------------------\nRunning p.ATest\n"
        "Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 sec <<< FAILURE!\n"
        "c(p.ATest)  Time elapsed: 0.01 sec  <<< FAILURE!\njava.lang.AssertionError: boom\n"
    )

    def build(ws: Path, step: BuildStep) -> StepResult:
        reports = ws / "target" / "surefire-reports"
        reports.mkdir(parents=True, exist_ok=True)
        (reports / "TEST-p.ATest.xml").write_text(
            '<testsuite name="p.ATest"><testcase name="a" classname="p.ATest"/>'
            '<testcase name="b" classname="p.ATest"/><testcase name="c" classname="p.ATest">'
            '<failure message="boom" type="java.lang.AssertionError"/></testcase></testsuite>',
            encoding="utf-8",
        )
        return result(step, 0, console)

    executor = ScriptedExecutor({"compile+test": build})
    run = run_selection(executor, workspace, [A], replace(settings, coverage=False, select_by_class=True))
    assert executor.seen[0].argv[-2:] == ("-Dtest=p.ATest", "test")
    assert [(str(o.test), o.status) for o in run.tests] == [("p.ATest#a", PASSED)]
    assert run.all_passed


def test_offline_resolution_failure_is_a_harness_problem(workspace: Path, settings: RunSettings) -> None:
    log = (
        "[ERROR] Failed to execute goal on project x: Could not resolve dependencies for project x:x:jar:1: "
        "Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and the artifact "
        "a:b:jar:1 has not been downloaded from it before. -> [Help 1]\n"
    )
    executor = ScriptedExecutor({"compile+test": lambda ws, step: result(step, 1, log)})
    run = run_selection(executor, workspace, [A], settings)
    assert (run.status, run.compile_ok, run.test_compile_ok) == ("build_error", None, None)
    assert run.harness_failed and "Could not resolve dependencies" in run.error
    assert run.tests[0].status == NOT_RUN


def test_crashed_test_jvm_fails_unreported_tests(workspace: Path, settings: RunSettings) -> None:
    log = "[ERROR] ExecutionException The forked VM terminated without properly saying goodbye. VM crash or System.exit called?\n"

    def crash(ws: Path, step: BuildStep) -> StepResult:
        write_report(ws, "a")
        return result(step, 1, log)

    executor = ScriptedExecutor({"compile+test": crash})
    run = run_selection(executor, workspace, [A, B], settings)
    assert run.status == "ok" and "forked VM terminated" in run.error
    assert run.outcomes[A].status == PASSED
    assert run.outcomes[B].status == ERROR and run.outcomes[B].message.startswith("test JVM crashed: ")
    # No execution data was written: coverage is missing, and says why.
    assert run.coverage is None and run.coverage_error.startswith("no JaCoCo execution data")


CRASH_LOG = "[ERROR] ExecutionException The forked VM terminated without properly saying goodbye. VM crash or System.exit called?\n"


@pytest.fixture
def vmstat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The kernel's OOM kill counter, as this machine's ``/proc/vmstat`` would show it."""
    path = tmp_path / "vmstat"
    path.write_text("nr_free_pages 1000\noom_kill 5\n", encoding="ascii")
    monkeypatch.setattr(oom, "VMSTAT", path)
    return path


def killed_for_memory(vmstat: Path, code: int, log: str, **extra: str) -> Handler:
    """A test launch during which the kernel killed a process for memory (A reported, B not)."""

    def launch(ws: Path, step: BuildStep) -> StepResult:
        write_report(ws, "a")
        vmstat.write_text("nr_free_pages 3\noom_kill 6\n", encoding="ascii")
        return replace(result(step, code, log), extra=dict(extra))

    return launch


def test_a_build_that_died_while_the_machine_ran_out_of_memory_is_the_harness_s(
    workspace: Path, settings: RunSettings, vmstat: Path
) -> None:
    # a crashed test JVM (exit 1), and Surefire 2.x's crash inside a build that goes on (exit 0)
    for code in (1, 0):
        executor = ScriptedExecutor({"compile+test": killed_for_memory(vmstat, code, CRASH_LOG)})
        run = run_selection(executor, workspace, [A, B], settings)
        assert run.harness_failed, run.status  # not a failing test of the prediction's
        assert "the kernel's count of OOM kills on this machine rose by 1" in run.error
        assert "run fewer workers" in run.error
        assert run.outcomes[B].status == NOT_RUN  # never judged
        vmstat.write_text("oom_kill 5\n", encoding="ascii")


def test_a_kill_elsewhere_never_touches_a_build_that_finished(
    workspace: Path, settings: RunSettings, vmstat: Path
) -> None:
    def launch(ws: Path, step: BuildStep) -> StepResult:
        write_report(ws, "a", "b")
        vmstat.write_text("oom_kill 9\n", encoding="ascii")  # another worker's build, say
        return result(step)

    run = run_selection(ScriptedExecutor({"compile+test": launch}), workspace, [A, B], settings)
    assert run.status == "ok" and run.all_passed


def test_a_build_whose_sandbox_had_a_process_killed_for_memory_is_not_judged(
    workspace: Path, settings: RunSettings, vmstat: Path
) -> None:
    # at the container's cap or for the machine's memory: a cgroup's count holds both, so a
    # prediction whose tests exhaust the sandbox is an error item, never a test the machine killed
    # scored as failing (and gold's build never an invalid instance for it)
    handler = killed_for_memory(vmstat, 1, CRASH_LOG, **{oom.CONTAINER_OOM: "true"})
    run = run_selection(ScriptedExecutor({"compile+test": handler}), workspace, [A, B], settings)
    assert run.harness_failed and run.outcomes[B].status == NOT_RUN
    assert "the kernel killed a process of its sandbox container for want of memory" in run.error
    assert "--tebench-docker-memory" in run.error


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("nr_free_pages 3\noom_kill 12\nnr_foo 1\n", 12),  # /proc/vmstat
        ("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n", 1),  # cgroup v1 memory.oom_control
        ("low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\noom_group_kill 0\n", 2),  # cgroup v2 memory.events
        ("oom_kill_disable 0\n", None),  # a kernel older than 4.13
    ],
)
def test_oom_kill_counts_are_read_from_each_kernel_file(text: str, count: int | None) -> None:
    assert oom.oom_kill_count(text) == count


def test_no_counter_no_evidence(tmp_path: Path) -> None:
    assert oom.machine_oom_kills(tmp_path / "absent") is None
    step = StepResult("test", ("mvn",), 1, False, 1.0)
    assert oom.counting_oom_kills(lambda: step, tmp_path / "absent") is step


def test_agent_in_environment_and_report_failure(workspace: Path, settings: RunSettings) -> None:
    def build(ws: Path, step: BuildStep) -> StepResult:
        write_report(ws, "a")
        (ws / "target/classes").mkdir(parents=True)
        (ws / EXEC_FILE).write_bytes(b"exec")
        return result(step)

    bad = "[INFO] Loading execution data file x.\nException in thread main: Unsupported class file major version 69\n"
    executor = ScriptedExecutor(
        {"compile+test": build, "coverage-report": lambda ws, step: result(step, 1, bad)}
    )
    run = run_selection(executor, workspace, [A], settings)
    assert run.status == "ok" and run.all_passed
    assert run.coverage is None
    assert (
        run.coverage_error
        == "JaCoCo report failed: Exception in thread main: Unsupported class file major version 69"
    )
    test_step, report = executor.seen
    assert dict(test_step.env)["JAVA_TOOL_OPTIONS"].endswith("includes=p.*")
    assert report.argv[0] == "java" and report.java_version == 11


def test_a_run_compared_by_outcome_keeps_the_agent_and_makes_no_report(
    workspace: Path, settings: RunSettings
) -> None:
    def build(ws: Path, step: BuildStep) -> StepResult:
        write_report(ws, "a")
        (ws / "target/classes").mkdir(parents=True)
        (ws / EXEC_FILE).write_bytes(b"exec")
        return result(step)

    executor = ScriptedExecutor({"compile+test": build})  # a report step would raise KeyError
    run = run_selection(executor, workspace, [A], replace(settings, coverage_report=False))
    assert run.status == "ok" and run.all_passed
    assert (run.coverage, run.coverage_error) == (None, "")
    (test_step,) = executor.seen
    assert dict(test_step.env)["JAVA_TOOL_OPTIONS"].endswith("includes=p.*")  # the tests run as measured


def test_report_parsed_when_it_succeeds(workspace: Path, settings: RunSettings) -> None:
    def build(ws: Path, step: BuildStep) -> StepResult:
        write_report(ws, "a")
        (ws / "target/classes").mkdir(parents=True)
        (ws / EXEC_FILE).write_bytes(b"exec")
        return result(step)

    def report(ws: Path, step: BuildStep) -> StepResult:
        (ws / XML_FILE).write_text(
            '<report name="r"><package name="p"><class name="p/A" sourcefilename="A.java"/>'
            '<sourcefile name="A.java"><line nr="2" mi="1" ci="2" mb="0" cb="0"/></sourcefile></package></report>',
            encoding="utf-8",
        )
        return result(step)

    run = run_selection(
        ScriptedExecutor({"compile+test": build, "coverage-report": report}), workspace, [A], settings
    )
    assert run.coverage is not None and run.coverage_error == ""
    assert run.coverage.classes == {"p.A": "p/A.java"}
    assert run.coverage.covered_lines("p/A.java") == frozenset({2})
    assert set(run.timings) == {"compile+test", "coverage-report"}


def test_one_launch_timeout_while_compiling(workspace: Path, settings: RunSettings) -> None:
    log = "[INFO] --- maven-compiler-plugin:3.13.0:compile (default-compile) @ x ---\n"
    executor = ScriptedExecutor({"compile+test": lambda ws, step: result(step, output=log, timed_out=True)})
    run = run_selection(executor, workspace, [A], settings)
    assert (run.status, run.compile_ok, run.test_compile_ok) == ("timeout:test-compile", None, None)


def test_split_timeout_after_main_compilation(workspace: Path, settings: RunSettings) -> None:
    log = "[INFO] --- compiler:3.13.0:testCompile (default-testCompile) @ x ---\n"
    executor = ScriptedExecutor({"test-compile": lambda ws, step: result(step, output=log, timed_out=True)})
    run = run_selection(executor, workspace, [A], replace(settings, split_launches=True))
    assert (run.status, run.compile_ok, run.test_compile_ok) == ("timeout:test-compile", True, None)
    assert executor.seen[0].timeout == settings.compile_timeout


def test_empty_selection_only_compiles(workspace: Path, settings: RunSettings) -> None:
    executor = ScriptedExecutor({"test-compile": lambda ws, step: result(step)})
    run = run_selection(executor, workspace, [], settings)
    assert (run.status, run.tests, run.coverage) == ("no_tests", (), None)
    assert [step.name for step in executor.seen] == ["test-compile"]


def test_missing_pom(tmp_path: Path, settings: RunSettings) -> None:
    with pytest.raises(HarnessError, match=r"no pom\.xml"):
        run_selection(ScriptedExecutor({}), tmp_path, [A], settings)


def test_results_planted_through_symbolic_links_are_not_read(
    workspace: Path, settings: RunSettings, tmp_path: Path
) -> None:
    # A test (or a process it left behind in a container) replaces the report directory and our
    # JaCoCo files with links to files of its choosing, outside the workspace.
    outside = tmp_path / "outside"
    fake_reports = outside / "reports"
    fake_reports.mkdir(parents=True)
    (fake_reports / "TEST-p.ATest.xml").write_text(
        '<testsuite name="p.ATest"><testcase name="a" classname="p.ATest"/></testsuite>', encoding="utf-8"
    )
    (outside / "fake.xml").write_text("<report name='r'/>", encoding="utf-8")

    def build(ws: Path, step: BuildStep) -> StepResult:
        (ws / "target/classes").mkdir(parents=True)
        (ws / "target/surefire-reports").symlink_to(fake_reports)
        (ws / EXEC_FILE).symlink_to(outside / "fake.xml")
        return result(step)

    run = run_selection(
        ScriptedExecutor({"compile+test": build, "coverage-report": lambda ws, s: result(s)}),
        workspace,
        [A],
        settings,
    )
    assert {str(o.test): o.status for o in run.tests} == {"p.ATest#a": NOT_RUN}
    assert run.coverage is None and "symbolic link" in run.coverage_error
    # and a planted link is removed before the next run, never followed
    (workspace / "target").rename(workspace / "old-target")
    (workspace / "target").symlink_to(outside)
    run_selection(ScriptedExecutor({"compile+test": lambda ws, s: result(s)}), workspace, [A], settings)
    assert not (workspace / "target").exists() and (outside / "fake.xml").is_file()


def test_a_reactor_is_read_in_every_module_and_says_why_a_test_did_not_run(
    tmp_path: Path, settings: RunSettings
) -> None:
    # a parent, core (production code) and app (tests); a third module nothing asked to build
    ws = tmp_path / "reactor"
    modules = "".join(f"<module>{m}</module>" for m in ("core", "app", "cli"))
    files = {
        "pom.xml": f"<project><modules>{modules}</modules></project>",
        "core/pom.xml": "<project/>",
        "core/src/main/java/q/Core.java": "package q;\nclass Core {}\n",
        "app/pom.xml": "<project/>",
        "app/src/test/java/p/ATest.java": "package p;\nclass ATest {}\n",
        "cli/pom.xml": "<project/>",
        "cli/src/test/java/p/CliTest.java": "package p;\nclass CliTest {}\n",
        # a second top-level class of a file: Surefire runs it as any other (its module: app)
        "app/src/test/java/p/BTest.java": "package p;\nclass BTest {}\nclass SecondTest {}\n",
        # a directory with a POM that the root POM does not list (gson's extras/ before 2020)
        "extras/pom.xml": "<project/>",
        "extras/src/test/java/p/StrayTest.java": "package p;\nclass StrayTest {}\n",
    }
    for relative, text in files.items():
        (ws / relative).parent.mkdir(parents=True, exist_ok=True)
        (ws / relative).write_text(text, encoding="utf-8")
    (ws / "app/target/surefire-reports").mkdir(parents=True)  # stale, from an earlier run
    cli, ghost = TestId("p.CliTest", "c"), TestId("p.Ghost", "g")
    second, stray = TestId("p.SecondTest", "s"), TestId("p.StrayTest", "t")

    def build(w: Path, step: BuildStep) -> StepResult:
        assert not (w / "app/target").exists()  # every module's target/ went before the launch
        write_report(w / "app", "a")
        for module in ("core", "app"):
            (w / module / "target/classes").mkdir(parents=True, exist_ok=True)
        (w / "target").mkdir()  # the agent makes its directory
        (w / EXEC_FILE).write_bytes(b"exec")
        return result(
            step,
            output="[INFO]  T E S T S\n[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.1 s -- in p.ATest\n",
        )

    executor = ScriptedExecutor({"compile+test": build, "coverage-report": lambda w, step: result(step, 1)})
    scoped = settings.scoped(ws, [A, B, cli, ghost])
    assert scoped.maven_args == ("-pl", "app,cli", "-am")
    assert settings.scoped(ws, [second, stray]).maven_args == ("-pl", "app", "-am")
    run = run_selection(executor, ws, [A, B, cli, ghost, second, stray], settings.scoped(ws, [A, B]))
    outcomes = {str(o.test): (o.status, o.message) for o in run.tests}
    assert outcomes == {
        "p.SecondTest#s": (
            NOT_RUN,
            "Surefire of module app reported no run of it (the selector matched no test method)",
        ),
        "p.StrayTest#t": (
            NOT_RUN,
            "its test source extras/src/test/java/p/StrayTest.java is in no module of this build",
        ),
        "p.ATest#a": (PASSED, ""),
        "p.ATest#b": (
            NOT_RUN,
            "Surefire of module app reported no run of it (the selector matched no test method)",
        ),
        "p.CliTest#c": (NOT_RUN, "its module cli was not built"),
        "p.Ghost#g": (NOT_RUN, "no module has a test source p/Ghost.java"),
    }
    test_step, report = executor.seen
    assert test_step.argv[-5:-2] == ("-pl", "app", "-am")
    # JaCoCo: every module's packages, and the classes of every module that was built
    assert dict(test_step.env)["JAVA_TOOL_OPTIONS"].endswith("includes=q.*")
    classfiles = [report.argv[i + 1] for i, arg in enumerate(report.argv) if arg == "--classfiles"]
    assert [c.split("/", 1)[1] for c in classfiles] == ["core/target/classes", "app/target/classes"]


def test_abstract_test_methods_run_through_top_level_subclasses_only(tmp_path: Path) -> None:
    """commons-collections: a nested class of the abstract test extends it but cannot be built
    by JUnit alone; Surefire never runs nested classes by default, so neither does the expansion."""
    tests = tmp_path / "src" / "test" / "java" / "p"
    tests.mkdir(parents=True)
    (tests / "AbstractListTest.java").write_text(
        "package p;\npublic abstract class AbstractListTest<E> {\n"
        "  public class BulkTestSubList<E> extends AbstractListTest<E> {\n"
        "    public BulkTestSubList(AbstractListTest<E> outer) { }\n  }\n}\n",
        encoding="utf-8",
    )
    (tests / "TreeListTest.java").write_text(
        "package p;\npublic class TreeListTest<E> extends AbstractListTest<E> { }\n", encoding="utf-8"
    )
    index = index_test_classes(tmp_path)
    assert "p.AbstractListTest$BulkTestSubList" in index
    assert concrete_classes("p.AbstractListTest", index) == ["p.TreeListTest"]


def test_an_abstract_class_counts_as_reported_when_a_subclass_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: RunSettings
) -> None:
    """A method of an abstract class that no subclass's runner ran: the class ran (through its
    subclasses), so gold's check can call the method no test to that runner; an orphan abstract
    class, which nothing ran, is not reported."""
    from pytest_tebench.run.maven import selection
    from pytest_tebench.run.maven.testrun import SelectionRun

    tests = tmp_path / "src" / "test" / "java" / "p"
    tests.mkdir(parents=True)
    (tests / "AbstractCaseTest.java").write_text(
        "package p;\npublic abstract class AbstractCaseTest { }\n", encoding="utf-8"
    )
    (tests / "OrphanTestCase.java").write_text(
        "package p;\npublic abstract class OrphanTestCase { }\n", encoding="utf-8"
    )
    (tests / "OneTest.java").write_text("package p;\npublic class OneTest extends AbstractCaseTest { }\n")
    asked: list[list[TestId]] = []

    def ran_one_test(
        executor: object, workspace: Path, chosen: list[TestId], settings: RunSettings
    ) -> SelectionRun:
        asked.append(chosen)
        return SelectionRun(
            status="ok",
            compile_ok=True,
            test_compile_ok=True,
            tests=tuple(TestOutcome(t, NOT_RUN) for t in chosen),
            reported_classes=frozenset({"p.OneTest"}),
        )

    monkeypatch.setattr(selection, "run_selection", ran_one_test)
    hidden, orphan = TestId("p.AbstractCaseTest", "hidden"), TestId("p.OrphanTestCase", "never")
    run = selection.run_inherited(object(), tmp_path, [hidden, orphan], settings)  # type: ignore[arg-type]
    assert asked == [[TestId("p.OneTest", "hidden")]]
    assert run.reported_classes == {"p.OneTest", "p.AbstractCaseTest"}
    assert [o.status for o in run.tests] == [NOT_RUN, NOT_RUN]


def test_a_test_jvm_that_died_is_named_as_why_a_test_did_not_run(
    workspace: Path, settings: RunSettings
) -> None:
    # an agent the fork could not load (-javaagent: a jar missing from the local repository):
    # Surefire 2.22 logs the death and, with maven.test.failure.ignore, the step passes
    console = (
        "[INFO]  T E S T S\n"
        "Error opening zip file or JAR manifest missing : /tmp/maven-repo/x/agent.jar\n"
        "[ERROR] ExecutionException The forked VM terminated without properly saying goodbye. "
        "VM crash or System.exit called?\n"
        "[INFO] BUILD SUCCESS\n"
    )
    outcome = _one_test_run(workspace, settings, console)
    assert outcome.status == NOT_RUN
    assert outcome.message == (
        "the test JVM died before it reported this test: [ERROR] ExecutionException The forked VM "
        "terminated without properly saying goodbye. VM crash or System.exit called?"
    )


def _one_test_run(workspace: Path, settings: RunSettings, console: str) -> TestOutcome:
    """The outcome of ATest#a in a launch whose console is ``console`` and that wrote no report."""
    source = workspace / "src/test/java/p/ATest.java"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(
        "package p; public class ATest { @org.junit.Test public void a() {} }", encoding="utf-8"
    )

    def build(ws: Path, step: BuildStep) -> StepResult:
        (ws / "target/classes").mkdir(parents=True, exist_ok=True)
        return result(step, output=console)

    executor = ScriptedExecutor({"compile+test": build})
    run = run_selection(executor, workspace, [A], replace(settings, coverage=False))
    (outcome,) = run.tests
    return outcome


def test_a_test_jvm_death_written_below_test_failures_is_read(workspace: Path, settings: RunSettings) -> None:
    # Surefire 2.22.2 as it ran commons-codec 62d55fdd with a test calling System.exit(3) and
    # maven.test.failure.ignore: its words are the body of "[ERROR] There are test failures.",
    # on lines without a level of their own (recorded, the paths and the stack cut)
    console = (
        "[INFO]  T E S T S\n"
        "[INFO] -------------------------------------------------------\n"
        "[INFO] Running p.ATest\n"
        "[INFO] \n"
        "[INFO] Results:\n"
        "[INFO] \n"
        "[INFO] Tests run: 0, Failures: 0, Errors: 0, Skipped: 0\n"
        "[INFO] \n"
        "[ERROR] There are test failures.\n"
        "\n"
        "Please refer to /ws/target/surefire-reports for the individual test results.\n"
        "Please refer to dump files (if any exist) [date].dump, [date]-jvmRun[N].dump and [date].dumpstream.\n"
        "The forked VM terminated without properly saying goodbye. VM crash or System.exit called?\n"
        "Command was /bin/sh -c cd /ws && /usr/lib/jvm/java-8-openjdk-amd64/jre/bin/java -jar "
        "/ws/target/surefire/surefirebooter7465012026613243798.jar /ws/target/surefire\n"
        "Error occurred in starting fork, check output in log\n"
        "Process Exit Code: 3\n"
        "Crashed tests:\n"
        "p.ATest\n"
        "\tat org.apache.maven.plugin.surefire.booterclient.ForkStarter.fork(ForkStarter.java:669)\n"
        "[INFO] ------------------------------------------------------------------------\n"
        "[INFO] BUILD SUCCESS\n"
    )
    outcome = _one_test_run(workspace, settings, console)
    assert outcome.status == NOT_RUN
    assert outcome.message == (
        "the test JVM died before it reported this test: The forked VM terminated without properly "
        "saying goodbye. VM crash or System.exit called? (exit code 3)"
    )
