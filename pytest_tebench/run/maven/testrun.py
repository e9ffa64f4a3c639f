"""Run a selection of test methods in a workspace: compile, test with JaCoCo, read the results.

By default one evaluation is one Maven launch, ``mvn -o test -Dtest=...`` with the JaCoCo agent
in ``JAVA_TOOL_OPTIONS`` (step ``compile+test``), plus a short ``java -jar`` JaCoCo CLI launch for
the XML report. ``RunSettings(split_launches=True)`` runs ``mvn -o test-compile`` first, for
separate timeouts and timings; :mod:`pytest_tebench.run.maven.steps` has the measurements. An empty
selection only compiles.

Nothing stale is ever read: ``target/`` is removed (in Python, no ``mvn clean`` launch) before
compiling, so classes of deleted sources cannot run (with ``clean_target=False`` at least
Surefire's reports and our JaCoCo files go), and they go again right before a separate test
step. Only this run's reports are read.

Multi-module builds (:mod:`~pytest_tebench.run.maven.reactor`): stale outputs go and Surefire's
reports are read in every module, JaCoCo's one execution file at the root collects every test
JVM of the launch, and the report reads every module's ``target/classes``. Which modules a launch
builds is the settings' scope (``RunSettings.scoped``: ``-pl <modules> -am``), so an
online warm-up builds the same ones. A selected test without a result says why it did not run.

Statuses: ``ok`` (tests ran; see the outcomes), ``no_tests`` (empty selection, compiled, no test
step), ``compile_error``, ``test_compile_error``, ``timeout:test-compile`` / ``timeout:test``
(for one launch, the phase its log shows at the kill), ``build_error`` (the harness could not
build: offline resolution, JDK, JVM start - never the prediction's score).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_tebench.errors import HarnessError
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.maven import log as mavenlog
from pytest_tebench.run.maven import plugin_pins
from pytest_tebench.run.maven.jacoco import EXEC_FILE
from pytest_tebench.run.maven.jacoco import XML_FILE
from pytest_tebench.run.maven.jacoco import CoverageReport
from pytest_tebench.run.maven.jacoco import check_agent_paths
from pytest_tebench.run.maven.jacoco import fit_includes
from pytest_tebench.run.maven.jacoco import parse_report
from pytest_tebench.run.maven.jacoco import project_includes
from pytest_tebench.run.maven.jacoco import report_step
from pytest_tebench.run.maven.journal import STATE_DIR
from pytest_tebench.run.maven.journal import read_journal
from pytest_tebench.run.maven.journal import recorded_forks
from pytest_tebench.run.maven.journal import recorded_surefire
from pytest_tebench.run.maven.journal import recorded_unversioned
from pytest_tebench.run.maven.modulepath import opens_for_tests
from pytest_tebench.run.maven.prebuilt import prepare as prepare_prebuilt
from pytest_tebench.run.maven.prebuilt import restore_production
from pytest_tebench.run.maven.prebuilt import went_away
from pytest_tebench.run.maven.prebuilt_tests import keep_snapshot
from pytest_tebench.run.maven.prebuilt_tests import needs_full_compile
from pytest_tebench.run.maven.prebuilt_tests import prepare as prepare_test_tree
from pytest_tebench.run.maven.reactor import read_reactor
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.steps import compile_step
from pytest_tebench.run.maven.steps import selection_step
from pytest_tebench.run.maven.surefire import ERROR
from pytest_tebench.run.maven.surefire import NOT_RUN
from pytest_tebench.run.maven.surefire import PASSED
from pytest_tebench.run.maven.surefire import SKIPPED
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.surefire import TestOutcome
from pytest_tebench.run.maven.surefire import check_against_console
from pytest_tebench.run.maven.surefire import outcomes_for
from pytest_tebench.run.maven.surefire import read_reports
from pytest_tebench.run.oom import counting_oom_kills
from pytest_tebench.run.oom import memory_kill
from pytest_tebench.workspace.layout import MAVEN

OK = "ok"
NO_TESTS = "no_tests"
COMPILE_ERROR = mavenlog.COMPILE_ERROR
TEST_COMPILE_ERROR = mavenlog.TEST_COMPILE_ERROR
BUILD_ERROR = mavenlog.BUILD_ERROR
REPORTS_DIR = "target/surefire-reports"
#: Surefire's banner before it runs tests (Maven 3.8 and 3.9 alike): the test phase starts here.
SUREFIRE_STARTS = "T E S T S"


@dataclass(frozen=True)
class SelectionRun:
    """Everything one evaluation run produced; plain data, see :meth:`to_dict`."""

    status: str
    #: ``None`` when the build never got far enough to tell.
    compile_ok: bool | None
    test_compile_ok: bool | None
    tests: tuple[TestOutcome, ...] = ()
    coverage: CoverageReport | None = None
    #: Why coverage is missing although it was requested ("" when present or not requested).
    coverage_error: str = ""
    #: A line explaining a non-``ok`` status, or a test JVM crash under ``ok``.
    error: str = ""
    timings: Mapping[str, float] = field(default_factory=dict)
    steps: tuple[StepResult, ...] = ()
    java_version: int = 0
    #: The tests' whole classes were selected (``RunSettings.select_by_class``), not their methods.
    by_class: bool = False
    #: What the launch did with the stored production build (``reused <key>``, ``built <key>``,
    #: ``off: <why>``; "" when not asked for).
    prebuilt: str = ""
    #: The classes Surefire reported any test case of in this launch, selected or not: a selected
    #: method without a result whose class ran is no test to that class's runner.
    reported_classes: frozenset[str] = frozenset()
    #: Build plugins the POMs name without a version, and the release by the commit's date each
    #: was pinned to (:mod:`~pytest_tebench.run.maven.plugin_pins`): ``g:a:v (released ..., the
    #: newest by ...)``, or why one was not.
    plugins_pinned: tuple[str, ...] = ()

    @property
    def outcomes(self) -> dict[TestId, TestOutcome]:
        return {outcome.test: outcome for outcome in self.tests}

    @property
    def maven_version(self) -> str:
        """The Maven that really ran, from the ``-V`` banner ("" when no step shows it)."""
        for step in self.steps:
            version = mavenlog.maven_version(step.output)
            if version:
                return version
        return ""

    @property
    def warm_jvm(self) -> str:
        """How the test launch's Maven ran (``--tebench-warm-jvm``): a warm JVM ``started`` or
        ``reused``, ``off: <why>`` (cold), "" where the executor has none (Docker, or off)."""
        launches = [step for step in self.steps if step.name.startswith(("compile+test", "test"))]
        return launches[-1].extra.get("warm_jvm", "") if launches else ""

    @property
    def harness_failed(self) -> bool:
        """The harness could not evaluate (an error for the item, never a score)."""
        return self.status == BUILD_ERROR

    @property
    def all_passed(self) -> bool:
        """Tests ran and every selected test passed (an empty selection never "passes" here)."""
        return self.status == OK and bool(self.tests) and all(o.passed for o in self.tests)

    def failure_output(self) -> tuple[str, ...]:
        """What a failed run printed (step logs, messages of tests that did not pass), for reading
        why it failed; nothing when it compiled and every test passed or was skipped."""
        failing = [o.message for o in self.tests if o.status not in (PASSED, SKIPPED) and o.message]
        if self.status in (OK, NO_TESTS) and not failing:
            return ()
        return (*(step.output for step in self.steps), *failing)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "compile_ok": self.compile_ok,
            "test_compile_ok": self.test_compile_ok,
            "error": self.error,
            "java_version": self.java_version,
            "maven_version": self.maven_version or None,
            "selected_by": "class" if self.by_class else "method",
            "prebuilt": self.prebuilt or None,
            "plugins_pinned": list(self.plugins_pinned) or None,
            "tests": [outcome.to_dict() for outcome in self.tests],
            "coverage": self.coverage.to_dict() if self.coverage is not None else None,
            "coverage_error": self.coverage_error,
            "timings": {name: round(seconds, 3) for name, seconds in self.timings.items()},
            "steps": [
                {
                    "name": step.name,
                    "argv": list(step.argv),
                    "exit_code": step.exit_code,
                    "timed_out": step.timed_out,
                    "duration": round(step.duration, 3),
                    "runtime": step.runtime,
                    # how the local executor ran it: a warm Maven JVM "started"/"reused", or "off: why"
                    "warm_jvm": step.extra.get("warm_jvm"),
                    "output_tail": step.output,
                }
                for step in self.steps
            ],
        }


def remove_stale_outputs(workspace: Path, *, whole_target: bool) -> None:
    """Delete ``target/`` (``whole_target``) or just Surefire reports and our JaCoCo files, in
    every module of the reactor.

    A symbolic link a test planted at any of these places is removed itself (``rmtree`` would
    refuse it and leave Maven writing through it, outside the workspace).
    """
    reactor = read_reactor(workspace)
    targets, reports = reactor.dirs("target"), reactor.dirs(REPORTS_DIR)
    for relative in (*targets, *reports, EXEC_FILE, XML_FILE):
        if (workspace / relative).is_symlink():
            (workspace / relative).unlink()
    if whole_target:
        for relative in targets:
            if not linked(workspace, relative):
                shutil.rmtree(workspace / relative, ignore_errors=True)
        return
    for relative in reports:
        if not linked(workspace, relative):
            shutil.rmtree(workspace / relative, ignore_errors=True)
    for name in (EXEC_FILE, XML_FILE):
        if not linked(workspace, name):
            (workspace / name).unlink(missing_ok=True)


def linked(workspace: Path, relative: str) -> bool:
    """True when some component of ``workspace/relative`` is a symbolic link: a test planted it
    to make the harness read a file of its choosing, so the harness reads nothing there."""
    path = workspace
    for part in Path(relative).parts:
        path = path / part
        if path.is_symlink():
            return True
    return False


def _fall_back(tested: StepResult) -> bool:
    """A launch on the restored production build that the harness's side failed: not a verdict."""
    if tested.timed_out or mavenlog.missing_artifacts(tested.output):
        return False  # a timeout is the launch's verdict; a missing artifact, the warm-up's business
    return mavenlog.diagnose_test_step(tested.output, tested.exit_code).kind in (BUILD_ERROR, COMPILE_ERROR)


def _not_run(selection: Iterable[TestId]) -> tuple[TestOutcome, ...]:
    return tuple(TestOutcome(test, NOT_RUN) for test in sorted(set(selection)))


def run_selection(
    executor: Executor, workspace: Path, selection: Iterable[TestId], settings: RunSettings
) -> SelectionRun:
    """Compile ``workspace`` and run the selected test methods; see the module docstring.

    Selected by method, unless ``settings.select_by_class`` says otherwise or the build's
    effective POM (as the journal recorded it) runs a Surefire older than 2.19.1
    (:meth:`RunSettings.for_surefire`): then by class, reading only the selected methods' results.

    Raises :class:`HarnessError` only for a missing ``pom.xml``, a workspace path JaCoCo cannot
    use, or a broken executor; build trouble comes back as ``status="build_error"``.
    """
    if not (workspace / "pom.xml").is_file():
        raise HarnessError(f"{workspace} has no pom.xml: not a Maven build")
    # the Surefire this build's effective POM runs, as its check recorded it (offline_run.run_warmed)
    build = settings.digest(workspace)
    journal = read_journal(settings.maven_repo)
    settings = settings.for_surefire(recorded_surefire(settings.maven_repo, build, journal))
    # the plugins its check found without a version, at their release by this run's date
    unversioned = recorded_unversioned(settings.maven_repo, build, journal)
    pins = plugin_pins.pin(
        workspace, unversioned, settings.plugins_released_by, settings.maven_repo / STATE_DIR
    )
    run = _Run(executor, workspace, sorted(set(selection)), settings)
    run.plugins_pinned = plugin_pins.describe(pins)
    # the journal's check of this build's effective POM: its tests fork, so it may run warm
    run.warm = recorded_forks(settings.maven_repo, build, journal)
    return run.execute()


class _Run:
    """State of one :func:`run_selection` call: the steps so far and how to finish."""

    def __init__(
        self, executor: Executor, workspace: Path, chosen: list[TestId], settings: RunSettings
    ) -> None:
        self.executor = executor
        self.workspace = workspace
        self.chosen = chosen
        self.settings = settings
        self.steps: list[StepResult] = []
        self.timings: dict[str, float] = {}
        self.reactor = read_reactor(workspace, settings.java_version)
        self.prebuilt = ""
        #: The build's Surefire forks every test JVM (``BuildStep.warm``).
        self.warm = False
        #: The unversioned plugins the POMs were pinned for (``plugin_pins.describe``).
        self.plugins_pinned: tuple[str, ...] = ()

    def finish(
        self, status: str, compile_ok: bool | None, test_compile_ok: bool | None, **rest: Any
    ) -> SelectionRun:
        rest.setdefault("tests", _not_run(self.chosen))
        return SelectionRun(
            status=status,
            compile_ok=compile_ok,
            test_compile_ok=test_compile_ok,
            timings=self.timings,
            steps=tuple(self.steps),
            java_version=self.settings.java_version,
            by_class=self.settings.select_by_class and bool(self.chosen),
            prebuilt=self.prebuilt,
            plugins_pinned=self.plugins_pinned,
            **rest,
        )

    def step(self, step: BuildStep) -> StepResult:
        result = counting_oom_kills(
            lambda: self.executor.run(self.workspace, step, maven_repo=self.settings.maven_repo)
        )
        self.record(result)
        return result

    def record(self, result: StepResult | None) -> None:
        """A launch of this run (a stored build's compile too): its steps and timings."""
        if result is not None:
            self.steps.append(result)
            self.timings[result.name] = result.duration

    def execute(self) -> SelectionRun:
        settings = self.settings
        includes, coverage_error = self.coverage_includes()
        remove_stale_outputs(self.workspace, whole_target=settings.clean_target)
        if settings.split_launches or not self.chosen:
            early = self.compile_first()
            if early is not None:
                return early
            if not self.chosen:
                return self.finish(NO_TESTS, True, True, error="empty selection: no test step was run")
            remove_stale_outputs(self.workspace, whole_target=False)
            timeout, name = settings.test_timeout, "test"
        else:
            # one launch, two limits: the compile limit until Surefire starts, then the test limit
            timeout, name = settings.compile_timeout, "compile+test"
        step = selection_step(
            self.chosen,
            java_version=settings.java_version,
            timeout=timeout,
            includes=includes,
            offline=settings.offline,
            maven=settings.maven_tools(),
            extra_args=settings.maven_args,
            name=name,
            by_class=settings.select_by_class,
            whole_modules=settings.whole_modules,
            test_network=settings.test_network,
            # a named module's tests: every test package opened, as a full run opens them
            java_options=opens_for_tests(self.workspace, self.reactor.modules)
            if settings.java_version >= 9
            else (),
            warm=self.warm,
        )
        if name == "compile+test":
            step = replace(step, phase_marker=SUREFIRE_STARTS, phase_timeout=settings.test_timeout)
        tested = self.launch(step)
        reports = [
            case
            for relative in self.reactor.dirs(REPORTS_DIR)
            if not linked(self.workspace, relative)
            for case in read_reports(self.workspace / relative)
        ]
        outcomes = check_against_console(outcomes_for(self.chosen, reports), reports, tested.output)
        reported = frozenset(case.class_name for case in reports)
        self.explain_not_run(outcomes, tested.output)
        if tested.timed_out:
            phase = "test" if name == "test" else mavenlog.phase_at_end(tested.output)
            compiled = phase == "test" or mavenlog.compile_started_tests(tested.output)
            if phase == "test":
                # whatever had not reported when the limit struck ran into it
                limit = f"the test phase ran into its {settings.test_timeout:g} s limit before it reported"
                for test, outcome in outcomes.items():
                    if outcome.status == NOT_RUN:
                        outcomes[test] = TestOutcome(test, NOT_RUN, 0, f"{limit} this test")
            return self.finish(
                f"timeout:{phase}",
                True if compiled else None,
                True if phase == "test" else None,
                tests=tuple(outcomes.values()),
                error=f"timed out after {tested.duration:.0f} s during {phase}",
            )
        verdict = mavenlog.diagnose_test_step(tested.output, tested.exit_code)
        memory = memory_kill(tested)
        if memory and (verdict.kind != mavenlog.OK or mavenlog.test_jvm_death(tested.output) is not None):
            # a JVM of the build died while the kernel was killing for memory: what the log says
            # (a crashed test JVM, a compile that stopped) is not the code's doing
            built = True if verdict.compile_done else None
            return self.finish(BUILD_ERROR, built, built, tests=tuple(outcomes.values()), error=memory)
        if verdict.kind == COMPILE_ERROR:
            return self.finish(COMPILE_ERROR, False, None, error=verdict.summary)
        if verdict.kind == TEST_COMPILE_ERROR:
            return self.finish(TEST_COMPILE_ERROR, True, False, error=verdict.summary)
        if verdict.kind == BUILD_ERROR:
            built = True if verdict.compile_done else None
            return self.finish(
                BUILD_ERROR, built, built, tests=tuple(outcomes.values()), error=verdict.summary
            )
        error = ""
        if verdict.kind == mavenlog.TEST_CRASH:
            # The JVM died under the tests: whatever has no report failed with it.
            error = verdict.summary
            for test, outcome in outcomes.items():
                if outcome.status == NOT_RUN:
                    outcomes[test] = TestOutcome(test, ERROR, 0, f"test JVM crashed: {verdict.summary}")
        coverage: CoverageReport | None = None
        if includes and settings.coverage_report:
            coverage, coverage_error = self.collect_coverage()
        return self.finish(
            OK,
            True,
            True,
            tests=tuple(outcomes.values()),
            coverage=coverage,
            coverage_error=coverage_error,
            error=error,
            reported_classes=reported,
        )

    def launch(self, step: BuildStep) -> StepResult:
        """The one-launch ``mvn test`` on the stored production build and the stored test tree
        closest to this one, when the settings ask for them and they can be had
        (:mod:`~pytest_tebench.run.maven.prebuilt`, :mod:`~pytest_tebench.run.maven.prebuilt_tests`).
        Neither ever decides a verdict: a launch that compiled part of the test tree and failed
        to compile, or changed a kept file, runs again with the whole test tree compiled; one on
        the production build that fails for build reasons runs again compiling everything."""
        prebuilt = self.settings.prebuilt
        if prebuilt is None or not self.settings.offline or step.name != "compile+test":
            return self.step(step)
        use = prepare_prebuilt(
            self.executor,
            self.workspace,
            prebuilt,
            step,
            modules=self.reactor.modules,
            maven_repo=self.settings.maven_repo,
        )
        self.prebuilt = use.describe()
        self.record(use.compiled)
        if use.used:
            self.timings["prebuilt_restore"] = use.restore_seconds
        tests = prepare_test_tree(
            self.executor,
            self.workspace,
            prebuilt,
            use,
            modules=self.reactor.modules,
            maven_repo=self.settings.maven_repo,
        )
        self.record(tests.compiled)
        if tests.used:
            self.timings["prebuilt_tests_restore"] = tests.restore_seconds
        tested = self.step(tests.launch)
        tests = keep_snapshot(self.workspace, tests, tested, trusted=not _fall_back(tested))
        if use.used:
            self.prebuilt += f"; {tests.describe()}"
        why = needs_full_compile(self.workspace, tests, tested)
        if why:
            # the whole test tree again, on the restored production build: that compile decides
            self.prebuilt += f"; {why}: tests compiled again"
            remove_stale_outputs(self.workspace, whole_target=True)
            again = replace(use.launch, name="compile+test-tests-again")
            try:
                restore_production(prebuilt.store / use.key, self.workspace, self.reactor.modules)
            except OSError as exc:  # pruned meanwhile: production compiled too
                self.prebuilt += f"; {went_away(exc)}"
                again = replace(step, name="compile+test-tests-again")
            tested = self.step(again)
        if use.used and _fall_back(tested):
            self.prebuilt = f"{use.describe()}; failed ({self.prebuilt_failure(tested)}): compiled again"
            remove_stale_outputs(self.workspace, whole_target=True)
            tested = self.step(replace(step, name="compile+test-again"))
        return tested

    @staticmethod
    def prebuilt_failure(tested: StepResult) -> str:
        return (
            "timed out"
            if tested.timed_out
            else mavenlog.diagnose_test_step(tested.output, tested.exit_code).summary
        )

    def explain_not_run(self, outcomes: dict[TestId, TestOutcome], console: str) -> None:
        """Say why each selected test without a result did not run: no module declares its class,
        its module was not built in this launch, its test JVM died (Surefire's words), or it was
        built and Surefire ran nothing of it (a selector matching nothing: not a test method, an
        abstract class...)."""
        for test, outcome in outcomes.items():
            if outcome.status != NOT_RUN or outcome.message:
                continue
            module = self.reactor.test_module(self.workspace, test)
            if module is None:
                top = test.class_name.split("$", 1)[0].replace(".", "/")
                why = f"no module has a test source {top}.java"
                elsewhere = self.reactor.stray_test_source(self.workspace, f"{top}.java")
                if elsewhere:
                    why = f"its test source {elsewhere} is in no module of this build"
            elif self.reactor.is_multi_module and not (self.workspace / module / "target").is_dir():
                why = f"its module {module or '.'} was not built"
            else:
                where = f" of module {module}" if module else ""
                why = f"Surefire{where} reported no run of it (the selector matched no test method)"
                if self.settings.whole_modules:
                    why = f"the whole test phase{where} did not run it (the build's Surefire leaves it out)"
                died = mavenlog.test_jvm_death(console)
                if died is not None:
                    why = f"the test JVM{where} died before it reported this test: {died}"
                if SUREFIRE_STARTS not in console:
                    why = f"no test ran{where}: Surefire never started"
            outcomes[test] = TestOutcome(test, NOT_RUN, 0, why)

    def coverage_includes(self) -> tuple[tuple[str, ...], str]:
        if not self.settings.coverage or not self.chosen:
            return (), ""
        includes = self.settings.coverage_includes or project_includes(
            self.workspace, self.reactor.dirs(MAVEN.main_root)
        )
        if not includes:
            return (), "no main classes found under src/main of any module: nothing to cover"
        workspace, maven_repo = str(self.workspace.resolve()), str(self.settings.maven_repo.resolve())
        check_agent_paths(workspace, maven_repo)
        # host paths: never shorter than a container's, so the option fits wherever it runs
        return fit_includes(includes, workspace=workspace, maven_repo=maven_repo), ""

    def compile_first(self) -> SelectionRun | None:
        """The split sequence's ``mvn test-compile``; a finished run when it failed."""
        settings = self.settings
        build = self.step(
            compile_step(
                java_version=settings.java_version,
                timeout=settings.compile_timeout,
                offline=settings.offline,
                maven=settings.maven_tools(),
                extra_args=settings.maven_args,
            )
        )
        if build.timed_out:
            compiled = True if mavenlog.compile_started_tests(build.output) else None
            return self.finish(f"timeout:{build.name}", compiled, None, error="compilation timed out")
        verdict = mavenlog.diagnose_build(build.output, build.exit_code)
        memory = memory_kill(build)
        if memory and verdict.kind != mavenlog.OK:
            return self.finish(BUILD_ERROR, True if verdict.compile_done else None, None, error=memory)
        if verdict.kind == COMPILE_ERROR:
            return self.finish(COMPILE_ERROR, False, None, error=verdict.summary)
        if verdict.kind == TEST_COMPILE_ERROR:
            return self.finish(TEST_COMPILE_ERROR, True, False, error=verdict.summary)
        if verdict.kind != mavenlog.OK:
            return self.finish(
                BUILD_ERROR, True if verdict.compile_done else None, None, error=verdict.summary
            )
        return None

    def collect_coverage(self) -> tuple[CoverageReport | None, str]:
        workspace, settings = self.workspace, self.settings
        if linked(workspace, EXEC_FILE):
            return None, f"{EXEC_FILE} is a symbolic link (planted by a test): not read"
        if not (workspace / EXEC_FILE).is_file():
            return None, f"no JaCoCo execution data at {EXEC_FILE}: the agent did not run"
        classes = [
            relative
            for relative in self.reactor.dirs("target/classes")
            if (workspace / relative).is_dir() and not linked(workspace, relative)
        ]
        if not classes:
            return CoverageReport(files={}, classes={}), ""
        report = self.step(
            report_step(
                java_version=settings.java_version,
                timeout=settings.report_timeout,
                classes_dirs=classes,
                tools=settings.maven_tools(),
            )
        )
        if report.timed_out:
            return None, "the JaCoCo report timed out"
        if not report.ok:
            lines = [line for line in mavenlog.clean_log(report.output).splitlines() if line.strip()]
            return None, f"JaCoCo report failed: {lines[-1] if lines else f'exit code {report.exit_code}'}"
        if linked(workspace, XML_FILE):
            return None, f"{XML_FILE} is a symbolic link (planted by a test): not read"
        return parse_report(workspace / XML_FILE), ""
