"""TEBench update scoring on real builds: gold's run (cached) and the prediction's run.

Per instance, gold's selection run on V0 is computed once and cached on disk (the record and its
key: :mod:`.gold_record`); N xdist workers evaluating predictions of one instance wait for the
first one's result instead of building it N times. Per prediction, one selection run on V-0.5 +
prediction gives executability and coverage; the method versions for ``s_mod`` are read from the
trees (:mod:`.update_methods`). Both runs get the run's Apache Maven and the JDK the build needs,
learnt from its output where the build files do not say.

Who runs this: the process that runs the item, from ``TebenchAdapter.evaluate``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from pytest_tebench import __version__
from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.tebench import gold_check
from pytest_tebench.benchmarks.tebench import gold_record
from pytest_tebench.benchmarks.tebench.gold_record import PASSING
from pytest_tebench.benchmarks.tebench.gold_record import GoldReference
from pytest_tebench.benchmarks.tebench.identification import TestChanges
from pytest_tebench.benchmarks.tebench.settings import UpdateSettings
from pytest_tebench.benchmarks.tebench.update_methods import method_sets
from pytest_tebench.benchmarks.tebench.update_methods import selection_of
from pytest_tebench.benchmarks.tebench.update_metrics import changed_production_methods
from pytest_tebench.benchmarks.tebench.update_metrics import composite
from pytest_tebench.benchmarks.tebench.update_metrics import coverage_overlap
from pytest_tebench.benchmarks.tebench.update_metrics import executability
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.jsonfiles import read_versioned_json
from pytest_tebench.jsonfiles import write_json
from pytest_tebench.locking import file_lock
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.maven import log as mavenlog
from pytest_tebench.run.maven.jdk import JdkRequirement
from pytest_tebench.run.maven.jdk import choose_java_version
from pytest_tebench.run.maven.jdk import java_version_after
from pytest_tebench.run.maven.jdk import read_requirement
from pytest_tebench.run.maven.prebuilt import Prebuilt
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.selection import run_inherited
from pytest_tebench.run.maven.surefire import NOT_RUN
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.surefire import TestOutcome
from pytest_tebench.run.maven.testrun import SelectionRun
from pytest_tebench.run.maven.testrun import run_selection
from pytest_tebench.run.maven.unpublished import unbuildable_message
from pytest_tebench.run.maven.warmup import WarmedRun
from pytest_tebench.run.maven.warmup import run_warmed
from pytest_tebench.workspace.checkout import Workspace

#: Runs of gold again with another JDK, each after a log that ruled the last one out (a second:
#: the first retry's JDK may meet one demand and show another).
_JDK_RETRIES = 2


class UpdateTimeout(Exception):
    """A build phase of the prediction's run timed out (its own status, never a score)."""

    def __init__(self, message: str, update: dict[str, Any]) -> None:
        super().__init__(message)
        self.update = update


class _NotTests(Exception):
    """Gold's selected tests that are no tests to the project's own build (``entries``:
    ``{"test", "why"}``): gold runs again without them."""

    def __init__(self, entries: list[dict[str, str]]) -> None:
        super().__init__(", ".join(entry["test"] for entry in entries))
        self.entries = entries


class UpdateEvaluator:
    """Runs gold (cached) and prediction builds for one item and computes the update block."""

    def __init__(self, context: EvalContext, settings: UpdateSettings) -> None:
        if context.executor is None:
            raise HarnessError("update scoring needs an executor, and none is configured")
        self.context = context
        self.settings = settings
        self.cache_dir = context.cache_dir / "gold"
        self.maven_repo = settings.maven_repo

    # -- run settings -------------------------------------------------------------------
    def _executor(self) -> Executor:
        assert self.context.executor is not None
        return self.context.executor()

    def _run_settings(self, workspace: Workspace, *, trusted: bool) -> RunSettings:
        """The run's settings; a ``trusted`` tree (gold's) may compile and store the production
        build that later launches of the instance reuse (:mod:`~pytest_tebench.run.maven.prebuilt`)."""
        java = self._java_version(read_requirement(workspace.path, self.maven_repo))
        prebuilt = (
            Prebuilt(self.context.cache_dir / "prebuilt", create=trusted) if self.settings.prebuilt else None
        )
        return RunSettings(
            maven_repo=self.maven_repo,
            java_version=java,
            # Apache Maven's own distribution (--tebench-maven, dist.DEFAULT_MAVEN), never the image's
            maven_version=self.settings.maven_version or "",
            maven_dist=self.settings.maven_dist,
            compile_timeout=self.settings.timeout_compile,
            test_timeout=self.settings.timeout_test,
            warmup_timeout=self.settings.timeout_warmup,
            prebuilt=prebuilt,
            test_network=self.settings.network,
        )

    def _java_version(self, requirement: JdkRequirement) -> int:
        return choose_java_version(self._executor().java_versions(), requirement, self.settings.jdk)

    def _run(
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
                self._executor(),
                workspace.path,
                selection,
                settings,
                project=project,
                warm_selection=warm_selection,
                trusted=None if trusted is None else lambda: _checked_out(workspace, trusted),
            )

        warmed = attempt(settings)
        jdk_note = ""
        for _ in range(_JDK_RETRIES if learn_jdk else 0):
            choice = java_version_after(
                self._executor().java_versions(),
                # read again: a warm-up may have brought a parent POM the first reading lacked
                read_requirement(workspace.path, settings.maven_repo),
                settings.java_version,
                _failure_output(warmed),
                self.settings.jdk,
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
                    timings=_warmup_timings(warmed),
                )
            raise HarnessError(
                f"cannot prepare the Maven repository for this project: {warmed.warmup.error}",
                log_tail=warmed.warmup.log_tail,
                timings=_warmup_timings(warmed),
            )
        return warmed, settings, jdk_note

    # -- gold -----------------------------------------------------------------------------
    def gold(
        self, instance_key: dict[str, str], workspace: Workspace, gold_changes: TestChanges, *, project: str
    ) -> GoldReference:
        settings = self._run_settings(workspace, trusted=True)
        executor = self._executor()
        key = gold_record.cache_key(
            instance_key,
            # the same toolchain ingredients as the result store's key: JDKs, Maven, image
            executor=f"{executor.name}|{executor.toolchain()}|maven={settings.maven_version}",
            java=settings.java_version,
            runs=self.settings.gold_runs,
            network=self.settings.network,
        )
        path = self.cache_dir / f"{key}.json"
        with file_lock(self.context.cache_dir / "locks" / f"gold-{key}.lock"):
            cached = read_versioned_json(path)
            if cached is None:
                cached = self._compute_gold(key, workspace, gold_changes, settings, project)
                write_json(path, cached)
                cached["cache"] = "computed"
            else:
                cached["cache"] = "hit"
        return gold_record.reference_from_record(key, cached)

    def _compute_gold(
        self, key: str, workspace: Workspace, gold_changes: TestChanges, settings: RunSettings, project: str
    ) -> dict[str, Any]:
        started = time.perf_counter()
        workspace.checkout("gold")
        methods = changed_production_methods(
            workspace.changed_files("v-1", "v-0.5"), workspace.changed_line_numbers("v-1", "v-0.5")
        )
        selection = selection_of(gold_changes.methods)
        verdict: gold_check.Verdict | None = None
        rule = unbuilt = no_test_left = ""
        not_tests: list[dict[str, str]] = []
        try:
            while True:
                settings = settings.scoped(workspace.path, selection)
                warmed, settings, jdk_note = self._run(
                    workspace, selection, settings, project=project, learn_jdk=True
                )
                _raise_for_harness(warmed.run, "gold build on V0", _warmup_timings(warmed))
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
            invalid, verdict = verdict.reason, None
        coverage = run.coverage
        selection = [t for t in selection if str(t) not in {e["test"] for e in flaky}]
        if not invalid and verdict is None and selection and coverage is None:
            raise HarnessError(
                f"no coverage from gold's run on V0: {run.coverage_error or 'unknown reason'}",
                log_tail=_run_log_tail(run),
                timings={**_warmup_timings(warmed), **run.timings},
            )
        return {
            "key": key,
            "harness_version": __version__,
            "invalid": invalid,
            # judged by nobody for a reason that is not the instance's (gold_check)
            "unjudged": None if verdict is None else {"status": verdict.status, "reason": verdict.reason},
            "selection": [str(t) for t in selection],
            "selected_by": gold_check.selected_by(run),
            "rule": rule,
            "methods": [
                {
                    "source": m.source,
                    "path": m.path,
                    "key": m.key,
                    "kind": m.kind,
                    "start_line": m.start_line,
                    "end_line": m.end_line,
                }
                for m in methods
            ],
            "coverage": gold_record.coverage_to_json(coverage, methods),
            "java_version": settings.java_version,
            "maven_version": settings.maven_version,
            "run": {
                **gold_record.run_summary(run),
                "warmup": warmed.warmup.to_dict() if warmed.warmup else None,
                "jdk_retry": jdk_note or None,
            },
            "seconds": time.perf_counter() - started,
            "flaky": flaky,
            # gold's selected tests the project's build does not run, left out of every selection
            "not_tests": not_tests,
        }

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
        run, timings = warmed.run, _warmup_timings(warmed)
        if not gold_check.compile_failed(run):
            return warmed, settings, jdk_note, ""
        # one cold `mvn test-compile`: no stored build, no warm JVM (compile steps never run warm)
        plain_settings = replace(settings, prebuilt=None, coverage=False, split_launches=True)
        plain = run_selection(self._executor(), workspace.path, [], plain_settings)
        _raise_for_harness(plain, "gold's plain compile on V0", timings)
        verdict = gold_check.plain_compile_verdict(run, plain)
        if verdict is not None:
            raise HarnessError(
                verdict.reason, log_tail=_run_log_tail(run), timings={**timings, **run.timings}
            )
        if self.settings.jdk:
            confirmed = gold_check.compile_confirmation(plain, [], forced=self.settings.jdk)
            return warmed, settings, jdk_note, confirmed
        others: list[tuple[int, str]] = []
        for version in gold_check.other_jdks(self._executor().java_versions(), settings.java_version):
            try:
                moved = settings.on_jdk(workspace.path, version)
                again, moved, _ = self._run(workspace, selection, moved, project=project)
            except HarnessError as exc:  # no build on this JDK (its warm-up failed): no evidence
                others.append((version, f"not built: {(str(exc).splitlines() or [''])[0][:200]}"))
                continue
            if not (again.run.compile_ok and again.run.test_compile_ok):
                others.append((version, again.run.status))  # a build or time failure: no evidence either
                continue
            _raise_for_harness(again.run, f"gold build on V0 with JDK {version}", _warmup_timings(again))
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
        network = self.settings.network
        verdict = gold_check.host_verdict(failures, network=network)
        if verdict is not None:
            return run, flaky, settings, "", verdict
        timings = _warmup_timings(warmed)
        history: list[tuple[str, list[TestOutcome]]] = [(gold_check.selected_by(run), failures)]
        rule = ""
        if not run.by_class:
            by_class = replace(settings, select_by_class=True)
            whole = run_inherited(self._executor(), workspace.path, selection, by_class)
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
        module = run_inherited(self._executor(), workspace.path, [o.test for o in failures], full)
        _raise_for_harness(module, "the module's full test run on V0", timings)
        return run, flaky, settings, rule, gold_check.module_verdict(history, module, network=network)

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
        module = run_inherited(self._executor(), workspace.path, missed, full)
        _raise_for_harness(module, "the module's full test run on V0", _warmup_timings(warmed))
        entries = gold_check.not_tests_of_their_runner(missed, class_run, module)
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
        if first.status != "ok" or not selection or self.settings.gold_runs <= 1:
            return first, []
        runs = [first]
        # compared by outcome only: the same launch, JaCoCo's agent included, without the report
        repeat = replace(settings, coverage_report=False)
        for _ in range(self.settings.gold_runs - 1):
            again = run_inherited(self._executor(), workspace.path, selection, repeat)
            _raise_for_harness(again, "gold build on V0 (repeated)", _warmup_timings(warmed))
            runs.append(again)
        flaky = gold_record.flaky_tests(runs)
        if not flaky:
            return first, []
        dropped = {entry["test"] for entry in flaky}
        kept = [test for test in selection if str(test) not in dropped]
        if not kept:
            return replace(first, tests=(), coverage=None), flaky
        final = run_inherited(self._executor(), workspace.path, kept, settings)
        _raise_for_harness(final, "gold build on V0 (without flaky tests)", _warmup_timings(warmed))
        return final, flaky

    # -- prediction ---------------------------------------------------------------------
    def evaluate(
        self,
        workspace: Workspace,
        gold: GoldReference,
        gold_changes: TestChanges,
        predicted: TestChanges,
        scoring: str,
        *,
        project: str,
    ) -> dict[str, Any]:
        workspace.checkout("prediction")
        settings = self._run_settings(workspace, trusted=False)
        if not settings.maven_version and gold.maven_version:
            settings = replace(settings, maven_version=gold.maven_version)
        if not self.settings.jdk and gold.java_version != settings.java_version:
            # the JDK gold's run settled on (its log may have ruled the build files' choice out)
            settings = replace(settings, java_version=gold.java_version)
        if gold.select_by_class:
            # gold's tests pass only selected by class: so is every prediction's (gold_check)
            settings = replace(settings, select_by_class=True)
        methods = method_sets(workspace, gold_changes, predicted)
        flaky = gold.flaky_tests
        selection = sorted(set(methods.prediction_selection()) - flaky - gold.not_tests)
        try:
            settings = settings.scoped(workspace.path, [*selection, *gold.selection])
            # a warm-up runs gold's tests online, never the prediction's
            warmed, settings, _ = self._run(
                workspace,
                selection,
                settings,
                project=project,
                warm_selection=list(gold.selection),
                trusted="gold",
            )
        finally:
            workspace.checkout("v-0.5")
        run = warmed.run
        if run.harness_failed:
            raise HarnessError(
                f"the prediction's build failed for harness reasons: {run.error}",
                log_tail=_run_log_tail(run),
                timings={**_warmup_timings(warmed), **run.timings},
            )
        passed = run.status == "ok" and all(o.status in PASSING for o in run.tests)
        # No test left to run on the changed code: not an executable update (docs/scoring.md).
        s_exec = (
            0.0
            if run.status == "no_tests"
            else executability(
                compile_ok=bool(run.compile_ok),
                test_compile_ok=bool(run.test_compile_ok),
                tests_passed=passed,
            )
        )
        overlap = coverage_overlap(gold.methods, gold.coverage, run.coverage if s_exec > 0 else None)
        per_method = methods.s_mod_by_method()
        s_mod = sum(per_method.values()) / len(per_method) if per_method else 0.0
        has_change = overlap.has_change
        s_line = (overlap.s_line or 0.0) if has_change else None
        s_branch = overlap.s_branch if has_change else None
        block = {
            "s_exec": s_exec,
            "s_line": s_line,
            "s_branch": s_branch,
            "s_mod": s_mod,
            "s_update": composite(
                scoring=scoring,
                s_exec=s_exec,
                s_line=s_line,
                s_branch=s_branch,
                s_mod=s_mod,
                has_coverage_change=has_change,
            ),
            "gt_has_coverage_change": has_change,
            "scoring": scoring,
            "status": run.status,
            "selection": [str(t) for t in selection],
            # "class" where this build's Surefire cannot run a method selection as the project does
            "selected_by": "class" if run.by_class else "method",
            "tests": [o.to_dict() for o in run.tests],
            "s_mod_by_method": per_method,
            "coverage": {
                "changed_methods": [m.to_dict() for m in gold.methods],
                "gold_lines": overlap.gold_lines,
                "pred_lines_in_gold": overlap.pred_lines_in_gold,
                "gold_branches": overlap.gold_branches,
                "pred_branches_in_gold": overlap.pred_branches_in_gold,
            },
            "gold": {
                "cache": gold.run.get("cache"),
                "key": gold.key,
                "seconds": round(gold.seconds, 3),
                "selection": [str(t) for t in gold.selection],
                "selected_by": gold.selected_by,
                "rule": gold.rule or None,
                # gold's flaky tests, left out of every selection (empty for a stable instance)
                "flaky": sorted(str(t) for t in flaky),
                # gold's tests the project's build does not run (no tests to their runner), left out too
                "not_tests": sorted(str(t) for t in gold.not_tests),
            },
            "java_version": settings.java_version,
            "maven_version": run.maven_version or settings.maven_version or None,
            "executor": self._executor().name,
            "timings": {
                name: round(value, 3) for name, value in {**_warmup_timings(warmed), **run.timings}.items()
            },
            "error": run.error or None,
            # how the production code was had: "reused <key>", or "off: <why>" (compiled in the launch)
            "prebuilt": run.prebuilt or None,
            # the test launch in a warm Maven JVM: "started"/"reused", or "off: <why>" (cold)
            "warm_jvm": run.warm_jvm or None,
        }
        if run.status.startswith("timeout"):
            # not a score: the scores of an unfinished run would only look like one
            block.update({name: None for name in ("s_exec", "s_line", "s_branch", "s_mod", "s_update")})
            raise UpdateTimeout(f"the prediction's {run.status.split(':', 1)[1]} phase timed out", block)
        return block


def _failure_output(warmed: WarmedRun) -> list[str]:
    """What the failed parts of a warmed run printed: the run's, and a failed warm-up's steps."""
    texts = list(warmed.run.failure_output())
    if warmed.warmup is not None and not warmed.warmup.ok:
        texts += [step.output for step in warmed.warmup.steps]
    return texts


def _raise_for_harness(run: SelectionRun, what: str, timings: dict[str, float]) -> None:
    if run.harness_failed or run.status.startswith("timeout"):
        raise HarnessError(
            f"{what} failed for harness reasons ({run.status}): {run.error}",
            log_tail=_run_log_tail(run),
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
            log_tail=_run_log_tail(run),
            timings={**_warmup_timings(warmed), **run.timings},
        )


def _run_log_tail(run: SelectionRun) -> str:
    return mavenlog.log_tail(run.steps[-1].output) if run.steps else ""


def _warmup_timings(warmed: WarmedRun) -> dict[str, float]:
    """What readying the Maven repository cost this run (:meth:`WarmedRun.timings`)."""
    return warmed.timings()


@contextlib.contextmanager
def _checked_out(workspace: Workspace, rev: str) -> Iterator[None]:
    """``rev`` checked out for the block, then back to what was checked out before."""
    before = workspace.rev("HEAD")
    workspace.checkout(rev)
    try:
        yield
    finally:
        workspace.checkout(before)
