"""Gold's selection run on V0 and the checks that rule the harness out before it blames the instance.

One computation, two users: evaluation (:class:`~.update.UpdateEvaluator` caches what it finds as
gold's record, :mod:`.gold_record`) and the dataset builder (:mod:`.builder` keeps or rejects the
commit by it), so a commit is never dropped from a dataset for a failure evaluation would have
found to be the harness's. :class:`GoldRunner` runs Maven; :mod:`.gold_check` decides:

* the JDK is learnt from a failed build's output (:meth:`GoldRunner.run` with ``learn_jdk``);
* gold that does not compile is built plainly, then on every other JDK here (the compile ladder);
* selected tests that fail or do not run go by class, then to their module's whole test phase;
  tests their class's runner never runs leave the selection;
* with more than one gold run, tests whose outcome changes are flaky and leave it too.

It knows nothing of pytest or of an evaluation's context: an executor factory, the knobs it reads
(:class:`GoldRunner`) and the run's first settings are all it is given.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any

from pytest_tebench.benchmarks.tebench import gold_check
from pytest_tebench.benchmarks.tebench import gold_record
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.maven import log as mavenlog
from pytest_tebench.run.maven.jdk import java_version_after
from pytest_tebench.run.maven.jdk import read_requirement
from pytest_tebench.run.maven.offline_run import WarmedRun
from pytest_tebench.run.maven.offline_run import run_warmed
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.selection import run_inherited
from pytest_tebench.run.maven.surefire import NOT_RUN
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.surefire import TestOutcome
from pytest_tebench.run.maven.testrun import SelectionRun
from pytest_tebench.run.maven.testrun import run_selection
from pytest_tebench.run.maven.unpublished import unbuildable_message
from pytest_tebench.workspace.checkout import Workspace

#: Runs of gold again with another JDK, each after a log that ruled the last one out (a second:
#: the first retry's JDK may meet one demand and show another).
JDK_RETRIES = 2


class _NotTests(Exception):
    """Gold's selected tests that are no tests to the project's own build (``entries``:
    ``{"test", "why"}``): gold runs again without them."""

    def __init__(self, entries: list[dict[str, str]]) -> None:
        super().__init__(", ".join(entry["test"] for entry in entries))
        self.entries = entries


@dataclass(frozen=True)
class GoldOnV0:
    """What gold's run on V0 and its checks found. ``invalid`` says why the instance judges nobody
    by its own doing ("" when it judges); ``unjudged`` is the verdict when it judges nobody for a
    reason that is not the instance's (an external host, the harness's selection)."""

    invalid: str
    unjudged: gold_check.Verdict | None
    #: Gold's selection, its flaky tests and its tests that are no tests left out.
    selection: list[TestId]
    #: The run gold's reference keeps, and the launch (with its warm-up) it came from.
    run: SelectionRun
    warmed: WarmedRun
    #: The settings that run settled on: the JDK, selection by class, the reactor scope.
    settings: RunSettings
    #: Why gold selects by class ("" when it does not, or when its build's Surefire decided).
    rule: str
    #: Why gold's JDK is not the one the build files chose ("" when it is).
    jdk_note: str
    flaky: list[dict[str, Any]] = field(default_factory=list)
    not_tests: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class GoldRunner:
    """Maven runs of an instance's trees (offline, warmed up when the shared repository lacks
    something) and gold's check on V0. ``forced_jdk``: ``--tebench-jdk``/``--jdk`` (no JDK
    ladder then); ``gold_runs``: runs of gold's selection that find flaky tests; ``network``:
    whether the tests may reach the network (a host verdict says so)."""

    executor: Callable[[], Executor]
    gold_runs: int = 1
    network: bool = False
    forced_jdk: str | None = None

    def run(
        self,
        workspace: Workspace,
        selection: list[TestId],
        settings: RunSettings,
        *,
        project: str,
        warm_selection: list[TestId] | None = None,
        trusted: str | None = None,
        learn_jdk: bool = False,
    ) -> tuple[WarmedRun, RunSettings, str]:
        """An offline run, the settings it really ran with, and why its JDK is not the one the
        build files chose (``""``: it is); the project is warmed up (online, on ``trusted``'s
        checkout) only when the shared Maven repository lacks something it needs. ``settings``
        come :meth:`~RunSettings.scoped` to the modules of the selected tests.

        With ``learn_jdk`` (gold's trusted run), a failure whose
        output says the JDK cannot build the code (a dependency's class files are newer: jfreechart
        with EqualsVerifier 4.0 on JDK 11) gets the run again with the JDK the chooser then picks
        (:func:`~pytest_tebench.run.maven.jdk.java_version_after`); predictions start with gold's
        JDK, and their output never changes it."""

        def attempt(settings: RunSettings) -> WarmedRun:
            return run_warmed(
                self.executor(),
                workspace.path,
                selection,
                settings,
                project=project,
                warm_selection=warm_selection,
                trusted=None if trusted is None else lambda: _checked_out(workspace, trusted),
            )

        warmed = attempt(settings)
        jdk_note = ""
        for _ in range(JDK_RETRIES if learn_jdk else 0):
            choice = java_version_after(
                self.executor().java_versions(),
                # read again: a warm-up may have brought a parent POM the first reading lacked
                read_requirement(workspace.path, settings.maven_repo),
                settings.java_version,
                _failure_output(warmed),
                self.forced_jdk,
            )
            if choice is None:
                break
            jdk_note = "; ".join(filter(None, (jdk_note, f"JDK {choice.version}: {choice.reason}")))
            # scoped again: a profile the new JDK activates may list other modules
            settings = settings.on_jdk(workspace.path, choice.version)
            warmed = attempt(settings)
        if warmed.warmup is not None and not warmed.warmup.ok:
            if warmed.warmup.unpublished:
                # a fact about the instance's environment (docs/building.md), never a model's score
                raise UnsupportedEnvironment(
                    unbuildable_message(warmed.warmup.unpublished),
                    log_tail=warmed.warmup.log_tail,
                    timings=warmed.timings(),
                )
            raise HarnessError(
                f"cannot prepare the Maven repository for this project: {warmed.warmup.error}",
                log_tail=warmed.warmup.log_tail,
                timings=warmed.timings(),
            )
        return warmed, settings, jdk_note

    # -- gold on V0 -------------------------------------------------------------------------
    def gold_on_v0(
        self, workspace: Workspace, selection: list[TestId], settings: RunSettings, *, project: str
    ) -> GoldOnV0:
        """Gold's ``selection`` run on V0 (the workspace's ``gold``; ``v-0.5`` is checked out
        again after), starting from ``settings``, with every check of :mod:`.gold_check`.
        Raises :class:`HarnessError` for a failure that is the harness's, and
        :class:`UnsupportedEnvironment` when no JDK here fits or an artifact is published nowhere
        reachable."""
        found, tests_fail = self._checked(workspace, selection, settings, project=project)
        if not tests_fail:
            return found
        return self._rule_out_jdk(workspace, selection, settings, found, project=project)

    def _checked(
        self, workspace: Workspace, selection: list[TestId], settings: RunSettings, *, project: str
    ) -> tuple[GoldOnV0, bool]:
        """Every check but the JDK ladder of failing tests, on the JDK ``settings`` start from (or
        the one a failed log or the compile ladder moves to); True with a result that is invalid
        because gold's tests fail in their module's full test run too."""
        workspace.checkout("gold")
        tests_fail = False
        verdict: gold_check.Verdict | None = None
        rule = unbuilt = no_test_left = ""
        not_tests: list[dict[str, str]] = []
        try:
            while True:
                settings = settings.scoped(workspace.path, selection)
                warmed, settings, jdk_note = self.run(
                    workspace, selection, settings, project=project, learn_jdk=True
                )
                _raise_for_harness(warmed.run, "gold build on V0", warmed.timings())
                warmed, settings, jdk_note, unbuilt = self._rule_out_compile(
                    workspace, selection, settings, warmed, jdk_note, project=project
                )
                run = warmed.run
                run, flaky = self._measure(workspace, selection, settings, run, warmed)
                try:
                    if run.compile_ok and run.test_compile_ok:
                        if run.by_class:
                            self._left_out_by_runner(workspace, run, settings, warmed)
                        # selected by method, a test that did not run goes to the class run with
                        # the failing ones: a runner Surefire's method filter cannot match (JUnit
                        # 4's Parameterized before m[*], JUnitParams...) runs there
                        run, flaky, settings, rule, verdict = self._rule_out_harness(
                            workspace, selection, settings, run, flaky=flaky, warmed=warmed
                        )
                except _NotTests as left:
                    # gold again without them (the runs so far measured them too)
                    not_tests.extend(left.entries)
                    gone = {entry["test"] for entry in left.entries}
                    selection = [test for test in selection if str(test) not in gone]
                    if selection:
                        continue
                    no_test_left = gold_check.no_test_left_reason(not_tests)
                break
        finally:
            workspace.checkout("v-0.5")
        invalid = no_test_left or gold_record.invalid_reason(run, flaky)
        if invalid and unbuilt:
            invalid = f"{invalid}; {unbuilt}"
        if not invalid and verdict is not None and verdict.status == gold_record.InvalidInstance.status:
            invalid, verdict, tests_fail = verdict.reason, None, True
        dropped = {entry["test"] for entry in flaky}
        found = GoldOnV0(
            invalid=invalid,
            unjudged=verdict,
            selection=[test for test in selection if str(test) not in dropped],
            run=run,
            warmed=warmed,
            settings=settings,
            rule=rule,
            jdk_note=jdk_note,
            flaky=flaky,
            not_tests=not_tests,
        )
        return found, tests_fail

    def _rule_out_jdk(
        self,
        workspace: Workspace,
        selection: list[TestId],
        start: RunSettings,
        found: GoldOnV0,
        *,
        project: str,
    ) -> GoldOnV0:
        """Gold's tests that fail in their module's full test run too, on the JDK the harness
        chose, tried on every other JDK here before they blame the instance (:mod:`.gold_check`,
        step 4): the failing tests alone first (no coverage), then, passing there, gold's whole
        check on that JDK; the first JDK where it judges is gold's and every prediction's."""
        ran = found.settings.java_version
        if self.forced_jdk:
            confirmed = gold_check.tests_confirmation([], forced=self.forced_jdk)
            return replace(found, invalid=f"{found.invalid}; {confirmed}")
        suspects = [o.test for o in gold_check.failing(found.run)]
        others: list[tuple[int, str]] = []
        for version in gold_check.other_jdks(self.executor().java_versions(), ran):
            try:
                probe_settings = replace(found.settings.on_jdk(workspace.path, version), coverage=False)
                with _checked_out(workspace, "gold"):
                    probe, _, _ = self.run(workspace, suspects, probe_settings, project=project)
            except HarnessError as exc:  # no build on this JDK (its warm-up failed): no evidence
                others.append((version, _not_built(exc)))
                continue
            failed = gold_check.probe_failure(probe.run, suspects)
            if failed:
                others.append((version, failed))
                continue
            moved, tests_fail = self._checked(
                workspace, selection, start.on_jdk(workspace.path, version), project=project
            )
            if tests_fail:
                others.append((version, "passing alone, failing in gold's whole check"))
                continue
            note = gold_check.tests_jdk_note(ran, moved.settings.java_version, found.invalid, others)
            return replace(moved, jdk_note="; ".join(filter(None, (found.jdk_note, moved.jdk_note, note))))
        confirmed = gold_check.tests_confirmation(others, forced="")
        return replace(found, invalid=f"{found.invalid}; {confirmed}")

    def _rule_out_compile(
        self,
        workspace: Workspace,
        selection: list[TestId],
        settings: RunSettings,
        warmed: WarmedRun,
        jdk_note: str,
        *,
        project: str,
    ) -> tuple[WarmedRun, RunSettings, str, str]:
        """Gold's V0 build that did not compile, built again before it blames the instance
        (:mod:`.gold_check`, step 0): plainly on its JDK, then gold's run on every other JDK here.
        Returns the run gold keeps, its settings, the JDK note (a JDK that compiled it is named
        there) and, when nothing compiled it, what the checks found (else "")."""
        run, timings = warmed.run, warmed.timings()
        if not gold_check.compile_failed(run):
            return warmed, settings, jdk_note, ""
        # one cold `mvn test-compile`: no stored build, no warm JVM (compile steps never run warm)
        plain_settings = replace(settings, prebuilt=None, coverage=False, split_launches=True)
        plain = run_selection(self.executor(), workspace.path, [], plain_settings)
        _raise_for_harness(plain, "gold's plain compile on V0", timings)
        verdict = gold_check.plain_compile_verdict(run, plain)
        if verdict is not None:
            raise HarnessError(verdict.reason, log_tail=run_log_tail(run), timings={**timings, **run.timings})
        if self.forced_jdk:
            confirmed = gold_check.compile_confirmation(plain, [], forced=self.forced_jdk)
            return warmed, settings, jdk_note, confirmed
        others: list[tuple[int, str]] = []
        for version in gold_check.other_jdks(self.executor().java_versions(), settings.java_version):
            try:
                moved = settings.on_jdk(workspace.path, version)
                again, moved, _ = self.run(workspace, selection, moved, project=project)
            except HarnessError as exc:  # no build on this JDK (its warm-up failed): no evidence
                others.append((version, _not_built(exc)))
                continue
            if not (again.run.compile_ok and again.run.test_compile_ok):
                others.append((version, again.run.status))  # a build or time failure: no evidence either
                continue
            _raise_for_harness(again.run, f"gold build on V0 with JDK {version}", again.timings())
            failed_too = "".join(f"; not on JDK {v} either ({what})" for v, what in others)
            note = (
                f"JDK {version}: gold does not compile on JDK {settings.java_version} "
                f"({run.status}: {run.error}){failed_too}; it does on JDK {version}"
            )
            return again, moved, "; ".join(filter(None, (jdk_note, note))), ""
        return warmed, settings, jdk_note, gold_check.compile_confirmation(plain, others, forced="")

    def _rule_out_harness(
        self,
        workspace: Workspace,
        selection: list[TestId],
        settings: RunSettings,
        run: SelectionRun,
        *,
        flaky: list[dict[str, Any]],
        warmed: WarmedRun,
    ) -> tuple[SelectionRun, list[dict[str, Any]], RunSettings, str, gold_check.Verdict | None]:
        """Gold's failing selected tests run again as the project's build runs them, before they
        blame the instance (:mod:`.gold_check`): by class, then in the module's full test run.
        Returns the run (and flaky tests, settings) gold's reference keeps, why it selects by
        class ("" when it does not, or when its build's Surefire decided) and the verdict when
        the instance judges nobody."""
        failures = gold_check.failing(run)
        if not failures:
            return run, flaky, settings, "", None
        verdict = gold_check.host_verdict(failures, network=self.network) or gold_check.limit_verdict(
            failures
        )
        if verdict is not None:
            return run, flaky, settings, "", verdict
        timings = warmed.timings()
        history: list[tuple[str, list[TestOutcome]]] = [(gold_check.selected_by(run), failures)]
        rule = ""
        if not run.by_class:
            by_class = replace(settings, select_by_class=True)
            whole = run_inherited(self.executor(), workspace.path, selection, by_class)
            _raise_for_harness(whole, "gold's tests selected by class on V0", timings)
            self._left_out_by_runner(workspace, whole, settings, warmed)
            if gold_check.class_rule_holds(failures, whole):
                rule = gold_check.class_rule(failures)
                settings = by_class
                run, flaky = self._measure(workspace, selection, settings, whole, warmed)
                failures = gold_check.failing(run)
                if not failures:
                    return run, flaky, settings, rule, None
            else:
                failures = gold_check.failing(whole, among=[o.test for o in failures])
            history.append((gold_record.BY_CLASS, failures))
        full = settings.whole_module_run()
        module = run_inherited(self.executor(), workspace.path, [o.test for o in failures], full)
        _raise_for_harness(module, "the module's full test run on V0", timings)
        return run, flaky, settings, rule, gold_check.module_verdict(history, module, network=self.network)

    def _left_out_by_runner(
        self, workspace: Workspace, class_run: SelectionRun, settings: RunSettings, warmed: WarmedRun
    ) -> None:
        """Gold's selected tests that did not run selected by class go to their module's whole test
        phase: :class:`_NotTests` when each is no test to its class's runner there
        (:func:`.gold_check.not_tests_of_their_runner`), the harness's error otherwise."""
        missed = [o.test for o in class_run.tests if o.status == NOT_RUN]
        if not missed:
            return
        full = settings.whole_module_run()
        module = run_inherited(self.executor(), workspace.path, missed, full)
        _raise_for_harness(module, "the module's full test run on V0", warmed.timings())
        entries = gold_check.not_tests_of_their_runner(missed, class_run, module, workspace.path)
        if entries is not None:
            raise _NotTests(entries)
        _raise_for_not_run(class_run, warmed)  # raises: ``missed`` is not empty

    def _measure(
        self,
        workspace: Workspace,
        selection: list[TestId],
        settings: RunSettings,
        first: SelectionRun,
        warmed: WarmedRun,
    ) -> tuple[SelectionRun, list[dict[str, Any]]]:
        """Gold's run and its flaky tests: ``first`` repeated ``gold_runs - 1`` times; tests whose
        outcome changes are flaky and leave the selection (the coverage reference is then
        re-measured without them)."""
        if first.status != "ok" or not selection or self.gold_runs <= 1:
            return first, []
        runs = [first]
        # compared by outcome only: the same launch, JaCoCo's agent included, without the report
        repeat = replace(settings, coverage_report=False)
        for _ in range(self.gold_runs - 1):
            again = run_inherited(self.executor(), workspace.path, selection, repeat)
            _raise_for_harness(again, "gold build on V0 (repeated)", warmed.timings())
            runs.append(again)
        flaky = gold_record.flaky_tests(runs)
        if not flaky:
            return first, []
        dropped = {entry["test"] for entry in flaky}
        kept = [test for test in selection if str(test) not in dropped]
        if not kept:
            return replace(first, tests=(), coverage=None), flaky
        final = run_inherited(self.executor(), workspace.path, kept, settings)
        _raise_for_harness(final, "gold build on V0 (without flaky tests)", warmed.timings())
        return final, flaky


def run_log_tail(run: SelectionRun) -> str:
    """The end of the run's last Maven log, kept with an error about it."""
    return mavenlog.log_tail(run.steps[-1].output) if run.steps else ""


def _failure_output(warmed: WarmedRun) -> list[str]:
    """What the failed parts of a warmed run printed: the run's, and a failed warm-up's steps."""
    texts = list(warmed.run.failure_output())
    if warmed.warmup is not None and not warmed.warmup.ok:
        texts += [step.output for step in warmed.warmup.steps]
    return texts


def _not_built(exc: HarnessError) -> str:
    """What a JDK the ladders tried says when its build could not be had (no evidence either way)."""
    return f"not built: {(str(exc).splitlines() or [''])[0][:200]}"


def _raise_for_harness(run: SelectionRun, what: str, timings: dict[str, float]) -> None:
    if run.harness_failed or run.status.startswith("timeout"):
        raise HarnessError(
            f"{what} failed for harness reasons ({run.status}): {run.error}",
            log_tail=run_log_tail(run),
            timings={**timings, **run.timings},
        )


def _raise_for_not_run(run: SelectionRun, warmed: WarmedRun) -> None:
    """A test gold selects that did not run was not judged: the harness missed it (its module
    was not built, the selector matched nothing), so it is the harness's error, never the
    instance's (docs/scoring.md)."""
    missed = [o for o in run.tests if o.status == NOT_RUN]
    if missed:
        raise HarnessError(
            "gold's selected tests did not run on V0, so nothing judged them: "
            + "; ".join(f"{o.test}: {o.message or 'no result'}" for o in missed),
            log_tail=run_log_tail(run),
            timings={**warmed.timings(), **run.timings},
        )


@contextlib.contextmanager
def _checked_out(workspace: Workspace, rev: str) -> Iterator[None]:
    """``rev`` checked out for the block, then back to what was checked out before."""
    before = workspace.rev("HEAD")
    workspace.checkout(rev)
    try:
        yield
    finally:
        workspace.checkout(before)
