"""TEBench update scoring on real builds: gold's run (cached) and the prediction's run.

Per instance, gold's selection run on V0 and its checks (:mod:`.gold_run`, the dataset builder's
too) are computed once and cached on disk (the record and its key: :mod:`.gold_record`); N xdist
workers evaluating predictions of one instance wait for the first one's result instead of building
it N times. Per prediction, one selection run on V-0.5 + prediction gives executability and
coverage; the method versions for ``s_mod`` are read from the trees (:mod:`.update_methods`). Both
runs get the run's Apache Maven and the JDK the build needs, learnt from its output where the
build files do not say.

Who runs this: the process that runs the item, from ``TebenchAdapter.evaluate``.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from pytest_tebench import __version__
from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.tebench import gold_check
from pytest_tebench.benchmarks.tebench import gold_record
from pytest_tebench.benchmarks.tebench.gold_record import PASSING
from pytest_tebench.benchmarks.tebench.gold_record import GoldReference
from pytest_tebench.benchmarks.tebench.gold_run import GoldRunner
from pytest_tebench.benchmarks.tebench.gold_run import run_log_tail
from pytest_tebench.benchmarks.tebench.identification import TestChanges
from pytest_tebench.benchmarks.tebench.settings import UpdateSettings
from pytest_tebench.benchmarks.tebench.update_methods import method_sets
from pytest_tebench.benchmarks.tebench.update_methods import selection_of
from pytest_tebench.benchmarks.tebench.update_metrics import changed_production_methods
from pytest_tebench.benchmarks.tebench.update_metrics import composite
from pytest_tebench.benchmarks.tebench.update_metrics import coverage_overlap
from pytest_tebench.benchmarks.tebench.update_metrics import executability
from pytest_tebench.errors import HarnessError
from pytest_tebench.jsonfiles import read_versioned_json
from pytest_tebench.jsonfiles import write_json
from pytest_tebench.locking import file_lock
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.maven.jdk import JdkRequirement
from pytest_tebench.run.maven.jdk import choose_java_version
from pytest_tebench.run.maven.jdk import read_requirement
from pytest_tebench.run.maven.prebuilt import Prebuilt
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.workspace.checkout import Workspace


class UpdateTimeout(Exception):
    """A build phase of the prediction's run timed out (its own status, never a score)."""

    def __init__(self, message: str, update: dict[str, Any]) -> None:
        super().__init__(message)
        self.update = update


#: A prediction's test phase that runs past its limit is its tests' doing when gold's longest test
#: launch on the same instance took at most this share of the limit: the tests that had not
#: reported then score as failing. Nearer the limit (a slow machine, a tight limit) it is a
#: ``timeout``, never scored.
HUNG_SHARE = 1 / 3


def hung_tests(status: str, gold_run: dict[str, Any], test_timeout: float) -> str:
    """Why a timed-out prediction run is scored (its tests hung), or ``""`` when it is not.

    Only the test phase counts (Surefire had started: the tests were compiled and running), and
    only when gold's own test launches of the instance (``gold_run``: gold's recorded run, each
    launch compiling and testing) all finished within :data:`HUNG_SHARE` of the same limit."""
    if status != "timeout:test":
        return ""
    launches = [
        float(step.get("duration") or 0.0)
        for step in gold_run.get("steps") or ()
        if str(step.get("name", "")).startswith(("compile+test", "test")) and not step.get("timed_out")
    ]
    longest = max(launches, default=None)
    if longest is None or longest > test_timeout * HUNG_SHARE:
        return ""
    return (
        f"the prediction's test phase ran past its {test_timeout:g} s limit, while gold's longest "
        f"test launch of this instance took {longest:.1f} s: the tests that had not reported "
        "score as failing"
    )


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

    def _run_settings(self, workspace: Workspace, *, trusted: bool, released_by: str) -> RunSettings:
        """The run's settings; a ``trusted`` tree (gold's) may compile and store the production
        build that later launches of the instance reuse (:mod:`~pytest_tebench.run.maven.prebuilt`).
        ``released_by``: V0's date, by which the build's unversioned plugins are pinned (V-1's
        commit date when the row has none)."""
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
            plugins_released_by=released_by or workspace.commit_date("v-1"),
        )

    def _java_version(self, requirement: JdkRequirement) -> int:
        return choose_java_version(self._executor().java_versions(), requirement, self.settings.jdk)

    def _runner(self) -> GoldRunner:
        """The Maven runs of gold and predictions, with this run's knobs."""
        return GoldRunner(
            self._executor,
            gold_runs=self.settings.gold_runs,
            network=self.settings.network,
            forced_jdk=self.settings.jdk,
        )

    # -- gold -----------------------------------------------------------------------------
    def gold(
        self,
        instance_key: dict[str, str],
        workspace: Workspace,
        gold_changes: TestChanges,
        *,
        project: str,
        released_by: str = "",
    ) -> GoldReference:
        settings = self._run_settings(workspace, trusted=True, released_by=released_by)
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
        found = self._runner().gold_on_v0(
            workspace, selection_of(gold_changes.methods), settings, project=project
        )
        methods = changed_production_methods(
            workspace.changed_files("v-1", "v-0.5"), workspace.changed_line_numbers("v-1", "v-0.5")
        )
        run, warmed = found.run, found.warmed
        if not found.invalid and found.unjudged is None and found.selection and run.coverage is None:
            # evaluation's own demand: its reference is gold's coverage (the builder measures none)
            raise HarnessError(
                f"no coverage from gold's run on V0: {run.coverage_error or 'unknown reason'}",
                log_tail=run_log_tail(run),
                timings={**warmed.timings(), **run.timings},
            )
        verdict = found.unjudged
        return {
            "key": key,
            "harness_version": __version__,
            "invalid": found.invalid,
            # judged by nobody for a reason that is not the instance's (gold_check)
            "unjudged": None if verdict is None else {"status": verdict.status, "reason": verdict.reason},
            "selection": [str(t) for t in found.selection],
            "selected_by": gold_check.selected_by(run),
            "rule": found.rule,
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
            "coverage": gold_record.coverage_to_json(run.coverage, methods),
            "java_version": found.settings.java_version,
            "maven_version": found.settings.maven_version,
            "run": {
                **gold_record.run_summary(run),
                "warmup": warmed.warmup.to_dict() if warmed.warmup else None,
                "jdk_retry": found.jdk_note or None,
            },
            "seconds": time.perf_counter() - started,
            "flaky": found.flaky,
            # gold's selected tests the project's build does not run, left out of every selection
            "not_tests": found.not_tests,
        }

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
        released_by: str = "",
    ) -> dict[str, Any]:
        workspace.checkout("prediction")
        settings = self._run_settings(workspace, trusted=False, released_by=released_by)
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
            warmed, settings, _ = self._runner().run(
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
                log_tail=run_log_tail(run),
                timings={**warmed.timings(), **run.timings},
            )
        # No test left to run on the changed code: not an executable update, unless gold's own
        # update runs none either (it only deletes tests): then the updated test code compiling
        # is all there is to execute, and gold's copy is executable (docs/scoring.md)
        vacuous = run.status == "no_tests" and not gold.selection
        passed = vacuous or (run.status == "ok" and all(o.status in PASSING for o in run.tests))
        s_exec = (
            0.0
            if run.status == "no_tests" and not vacuous
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
                # why gold's JDK, and so this run's, is not the one the build files chose (None: it is)
                "jdk_retry": gold.run.get("jdk_retry") or None,
            },
            "java_version": settings.java_version,
            "maven_version": run.maven_version or settings.maven_version or None,
            "executor": self._executor().name,
            "timings": {name: round(value, 3) for name, value in {**warmed.timings(), **run.timings}.items()},
            "error": run.error or None,
            # how the production code was had: "reused <key>", or "off: <why>" (compiled in the launch)
            "prebuilt": run.prebuilt or None,
            # unversioned build plugins and the release by V0's date each ran at (plugin_pins)
            "plugins_pinned": list(run.plugins_pinned) or None,
            # the test launch in a warm Maven JVM: "started"/"reused", or "off: <why>" (cold)
            "warm_jvm": run.warm_jvm or None,
        }
        if run.status.startswith("timeout"):
            hung = hung_tests(run.status, gold.run, settings.test_timeout)
            if hung:
                # the prediction's tests, not the machine: they ran as failing (s_exec 0.5, no coverage)
                block["error"] = hung
                return block
            # not a score: the scores of an unfinished run would only look like one
            block.update({name: None for name in ("s_exec", "s_line", "s_branch", "s_mod", "s_update")})
            raise UpdateTimeout(f"the prediction's {run.status.split(':', 1)[1]} phase timed out", block)
        return block
