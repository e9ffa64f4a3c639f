"""TEBench update scoring on real builds: the gold reference (cached) and the prediction's run.

Per instance, gold's selection run on V0 is computed once and cached on disk, keyed by the
instance's content, the harness version, the executor and the JDK; N xdist workers evaluating
predictions of one instance wait for the first one's result instead of building it N times.
Per prediction, one selection run on V-0.5 + prediction gives executability, coverage and the
method versions for ``s_mod``.

Who runs this: the process that runs the item, from ``TebenchAdapter.evaluate``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

from pytest_tebench import __version__
from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.tebench.identification import TestChanges
from pytest_tebench.benchmarks.tebench.identification import TestMethodChange
from pytest_tebench.benchmarks.tebench.identification import pair_test_methods
from pytest_tebench.benchmarks.tebench.settings import UpdateSettings
from pytest_tebench.benchmarks.tebench.update_metrics import ChangedMethod
from pytest_tebench.benchmarks.tebench.update_metrics import CoverageOverlap
from pytest_tebench.benchmarks.tebench.update_metrics import changed_production_methods
from pytest_tebench.benchmarks.tebench.update_metrics import composite
from pytest_tebench.benchmarks.tebench.update_metrics import coverage_overlap
from pytest_tebench.benchmarks.tebench.update_metrics import executability
from pytest_tebench.benchmarks.tebench.update_metrics import token_jaccard
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.java.parser import parse_java
from pytest_tebench.jsonfiles import read_versioned_json
from pytest_tebench.jsonfiles import write_json
from pytest_tebench.locking import file_lock
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.maven import log as mavenlog
from pytest_tebench.run.maven.dist import MAVEN_39
from pytest_tebench.run.maven.dist import required_maven_version
from pytest_tebench.run.maven.jacoco import CoverageReport
from pytest_tebench.run.maven.jacoco import LineCoverage
from pytest_tebench.run.maven.jdk import JdkRequirement
from pytest_tebench.run.maven.jdk import choose_java_version
from pytest_tebench.run.maven.jdk import java_version_after
from pytest_tebench.run.maven.jdk import read_requirement
from pytest_tebench.run.maven.selection import run_inherited
from pytest_tebench.run.maven.surefire import NOT_RUN
from pytest_tebench.run.maven.surefire import PASSED
from pytest_tebench.run.maven.surefire import SKIPPED
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.surefire import TestOutcome
from pytest_tebench.run.maven.testrun import RunSettings
from pytest_tebench.run.maven.testrun import SelectionRun
from pytest_tebench.run.maven.warmup import WarmedRun
from pytest_tebench.run.maven.warmup import run_warmed
from pytest_tebench.workspace.checkout import Workspace

#: A selected test "passes" when it passed or was skipped (a gold patch may @Disable a test);
#: failed, errored and not-run (a selector that matched nothing) tests do not.
_PASSING = (PASSED, SKIPPED)
#: What a cached gold verdict means; a new value makes every stored gold reference stale.
#: 2: a selected test that did not run is the harness's error, no longer ``invalid_instance``.
#: 3: a failure whose log rules the JDK out runs again with another JDK, no longer ``invalid_instance``.
_GOLD_RULES = 3
#: Runs of gold again with another JDK, each after a log that ruled the last one out (a second:
#: the first retry's JDK may meet one demand and show another).
_JDK_RETRIES = 2
#: Characters of a failing test's message kept in an ``invalid_instance`` reason.
_MESSAGE_CHARS = 300


class InvalidInstance(HarnessError):
    """Gold fails its own selected tests on V0: the instance cannot judge anyone."""

    status = "invalid_instance"


class UpdateTimeout(Exception):
    """A build phase of the prediction's run timed out (its own status, never a score)."""

    def __init__(self, message: str, update: dict[str, Any]) -> None:
        super().__init__(message)
        self.update = update


@dataclass(frozen=True)
class GoldReference:
    key: str
    selection: tuple[TestId, ...]
    methods: tuple[ChangedMethod, ...]
    coverage: CoverageReport
    java_version: int
    run: dict[str, Any]
    seconds: float
    #: Gold's selected tests whose outcome changed between repeated runs, dropped from every
    #: selection: ``{"test": id, "outcomes": [status per run]}``.
    flaky: tuple[dict[str, Any], ...] = ()
    #: The Maven gold's run needed (``""``: the executor's), so predictions start with it.
    maven_version: str = ""

    @property
    def flaky_tests(self) -> frozenset[TestId]:
        return frozenset(TestId.parse(entry["test"]) for entry in self.flaky)

    @property
    def _overlap_with_itself(self) -> CoverageOverlap:
        return coverage_overlap(self.methods, self.coverage, self.coverage)

    @property
    def coverage_has_change(self) -> bool:
        return self._overlap_with_itself.has_change

    @property
    def has_branches(self) -> bool:
        return self._overlap_with_itself.gold_branches > 0


def selection_of(changes: Iterable[TestMethodChange]) -> list[TestId]:
    """Surefire ids of the changed test methods that exist after the patch."""
    ids = {
        TestId(_binary_class(change.package, change.new.binary_class_name), change.new.name)
        for change in changes
        if change.new is not None
    }
    return sorted(ids)


def _binary_class(package: str, binary: str) -> str:
    return f"{package}.{binary}" if package else binary


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

    def _run_settings(self, workspace: Workspace) -> RunSettings:
        java = self._java_version(read_requirement(workspace.path, self.maven_repo))
        return RunSettings(
            maven_repo=self.maven_repo,
            java_version=java,
            # new commons parents need Maven 3.9: downloaded from Maven Central when the POM says so
            maven_version=self.settings.maven_version or required_maven_version(workspace.path / "pom.xml"),
            maven_dist=self.settings.maven_dist,
            compile_timeout=self.settings.timeout_compile,
            test_timeout=self.settings.timeout_test,
            warmup_timeout=self.settings.timeout_warmup,
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

        A plugin that refuses the Maven in use (``requires Maven version 3.9.6``: gson's proto
        module; a plugin's own prerequisite, which no POM shows) gets the run again, once, with
        Maven 3.9 from Maven Central. With ``learn_jdk`` (gold's trusted run), a failure whose
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
        steps = [*warmed.run.steps, *(warmed.warmup.steps if warmed.warmup else ())]
        needed = max((mavenlog.required_maven(step.output) for step in steps), default="")
        if needed and not settings.maven_version and _newer_maven_will_do(needed):
            settings = replace(settings, maven_version=MAVEN_39)
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
                    "unbuildable here: the build needs artifacts published in no repository reachable "
                    f"from here: {', '.join(warmed.warmup.unpublished)}",
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
        settings = self._run_settings(workspace)
        executor = self._executor()
        key = _cache_key(
            instance_key,
            # the same toolchain ingredients as the result store's key: JDKs, Maven, image
            executor=f"{executor.name}|{executor.toolchain()}|maven={settings.maven_version}",
            java=settings.java_version,
            runs=self.settings.gold_runs,
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
        if cached.get("invalid"):
            raise InvalidInstance(str(cached["invalid"]))
        return GoldReference(
            key=key,
            selection=tuple(TestId.parse(t) for t in cached["selection"]),
            methods=tuple(ChangedMethod(**m) for m in cached["methods"]),
            coverage=_coverage_from_json(cached["coverage"]),
            java_version=int(cached["java_version"]),
            run={**cached["run"], "cache": cached["cache"]},
            seconds=float(cached["seconds"]),
            flaky=tuple(cached.get("flaky") or ()),
            maven_version=str(cached.get("maven_version") or ""),
        )

    def _compute_gold(
        self, key: str, workspace: Workspace, gold_changes: TestChanges, settings: RunSettings, project: str
    ) -> dict[str, Any]:
        started = time.perf_counter()
        workspace.checkout("gold")
        methods = changed_production_methods(
            workspace.changed_files("v-1", "v-0.5"), workspace.changed_line_numbers("v-1", "v-0.5")
        )
        selection = selection_of(gold_changes.methods)
        try:
            settings = settings.scoped(workspace.path, selection)
            warmed, settings, jdk_note = self._run(
                workspace, selection, settings, project=project, learn_jdk=True
            )
            run = warmed.run
            _raise_for_harness(run, "gold build on V0", _warmup_timings(warmed))
            flaky: list[dict[str, Any]] = []
            if run.status == "ok" and selection and self.settings.gold_runs > 1:
                run, flaky = self._repeat_gold(workspace, selection, settings, run, warmed)
        finally:
            workspace.checkout("v-0.5")
        invalid = ""
        if not (run.compile_ok and run.test_compile_ok):
            invalid = f"gold does not compile on V0 ({run.status}): {run.error}"
        else:
            _raise_for_not_run(run, warmed)
            failing = [_failure(o) for o in run.tests if o.status not in _PASSING]
            if failing:
                invalid = "gold fails its own selected tests on V0: " + "; ".join(failing)
            elif flaky and not run.tests:
                invalid = "every test gold selects is flaky on V0: " + ", ".join(e["test"] for e in flaky)
        coverage = run.coverage
        selection = [t for t in selection if str(t) not in {e["test"] for e in flaky}]
        if not invalid and selection and coverage is None:
            raise HarnessError(
                f"no coverage from gold's run on V0: {run.coverage_error or 'unknown reason'}",
                log_tail=_run_log_tail(run),
                timings={**_warmup_timings(warmed), **run.timings},
            )
        return {
            "key": key,
            "harness_version": __version__,
            "invalid": invalid,
            "selection": [str(t) for t in selection],
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
            "coverage": _coverage_to_json(coverage, methods),
            "java_version": settings.java_version,
            "maven_version": settings.maven_version,
            "run": {
                **_run_summary(run),
                "warmup": warmed.warmup.to_dict() if warmed.warmup else None,
                "jdk_retry": jdk_note or None,
            },
            "seconds": time.perf_counter() - started,
            "flaky": flaky,
        }

    def _repeat_gold(
        self,
        workspace: Workspace,
        selection: list[TestId],
        settings: RunSettings,
        first: SelectionRun,
        warmed: WarmedRun,
    ) -> tuple[SelectionRun, list[dict[str, Any]]]:
        """Run gold's selection ``gold_runs - 1`` more times; tests whose outcome changes are
        flaky and leave the selection (the coverage reference is then re-measured without them)."""
        runs = [first]
        for _ in range(self.settings.gold_runs - 1):
            again = run_inherited(self._executor(), workspace.path, selection, settings)
            _raise_for_harness(again, "gold build on V0 (repeated)", _warmup_timings(warmed))
            runs.append(again)
        outcomes: dict[TestId, list[str]] = {}
        for run in runs:
            for outcome in run.tests:
                outcomes.setdefault(outcome.test, []).append(outcome.status)
        dropped = {
            test
            for test, statuses in outcomes.items()
            if len({status in _PASSING for status in statuses}) > 1 or len(statuses) != len(runs)
        }
        flaky: list[dict[str, Any]] = [
            {
                "test": str(test),
                "outcomes": outcomes[test],
                "reason": "outcome changed between repeated gold runs",
            }
            for test in sorted(dropped)
        ]
        if not flaky:
            return first, []
        kept = [test for test in selection if test not in dropped]
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
        settings = self._run_settings(workspace)
        if not settings.maven_version and gold.maven_version:
            settings = replace(settings, maven_version=gold.maven_version)
        if not self.settings.jdk and gold.java_version != settings.java_version:
            # the JDK gold's run settled on (its log may have ruled the build files' choice out)
            settings = replace(settings, java_version=gold.java_version)
        methods = method_sets(workspace, gold_changes, predicted)
        flaky = gold.flaky_tests
        selection = sorted(set(methods.prediction_selection()) - flaky)
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
        passed = run.status == "ok" and all(o.status in _PASSING for o in run.tests)
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
                # gold's flaky tests, left out of every selection (empty for a stable instance)
                "flaky": sorted(str(t) for t in flaky),
            },
            "java_version": settings.java_version,
            "maven_version": run.maven_version or settings.maven_version or None,
            "executor": self._executor().name,
            "timings": {
                name: round(value, 3) for name, value in {**_warmup_timings(warmed), **run.timings}.items()
            },
            "error": run.error or None,
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


def _newer_maven_will_do(needed: str) -> bool:
    """Whether :data:`MAVEN_39` meets a plugin's "requires Maven version" (3.9.x up to it)."""
    wanted = tuple(int(part) for part in needed.split(".")[:3])
    have = tuple(int(part) for part in MAVEN_39.split(".")[:3])
    return wanted[:2] == have[:2] and wanted <= have


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


def _failure(outcome: TestOutcome) -> str:
    """``test status: message``, the message as Surefire reported it (first lines only)."""
    message = " ".join(outcome.message.split())
    if len(message) > _MESSAGE_CHARS:
        message = message[: _MESSAGE_CHARS - 3] + "..."
    return f"{outcome.test} {outcome.status}" + (f": {message}" if message else "")


def _run_log_tail(run: SelectionRun) -> str:
    return mavenlog.log_tail(run.steps[-1].output) if run.steps else ""


def _warmup_timings(warmed: WarmedRun) -> dict[str, float]:
    """Seconds of the offline attempt that found the repository lacking, and of the warm-up."""
    if warmed.warmup is None:
        return {}
    return {"offline_probe": warmed.probe_seconds, "warmup": warmed.warmup.seconds}


@contextlib.contextmanager
def _checked_out(workspace: Workspace, rev: str) -> Iterator[None]:
    """``rev`` checked out for the block, then back to what was checked out before."""
    before = workspace.rev("HEAD")
    workspace.checkout(rev)
    try:
        yield
    finally:
        workspace.checkout(before)


# -- method versions for s_mod ---------------------------------------------------------------
_Method = tuple[str, str, tuple[str, ...]]  # (binary class w/o package, name, tokens)


@dataclass(frozen=True)
class MethodSets:
    """U and the versions of its methods in the prediction tree and in V0, keyed like identification."""

    #: U: (V-0.5 path, key, package) of every test method either side changed.
    union: tuple[tuple[str, str, str], ...]
    prediction: dict[str, dict[str, _Method]]
    gold: dict[str, dict[str, _Method]]

    def prediction_selection(self) -> list[TestId]:
        """The members of U that exist in the prediction tree, as Surefire ids."""
        runnable = set()
        for path, key, package in self.union:
            method = self.prediction.get(path, {}).get(key)
            if method is not None:
                runnable.add(TestId(_binary_class(package, method[0]), method[1]))
        return sorted(runnable)

    def s_mod_by_method(self) -> dict[str, float]:
        """Token Jaccard of each member of U, prediction against gold (both absent 1, one absent 0)."""
        return {
            f"{path}::{key}": token_jaccard(
                self.prediction.get(path, {}).get(key, (None, None, None))[2],
                self.gold.get(path, {}).get(key, (None, None, None))[2],
            )
            for path, key, _ in self.union
        }


def method_sets(workspace: Workspace, gold_changes: TestChanges, predicted: TestChanges) -> MethodSets:
    """U with its methods read from the committed ``prediction`` and ``gold`` trees (no checkout)."""
    return MethodSets(
        union=tuple(_union(predicted, gold_changes)),
        prediction=_versions(workspace, "prediction", predicted, gold_changes),
        gold=_versions(workspace, "gold", gold_changes, predicted),
    )


def _union(*sides: TestChanges) -> list[tuple[str, str, str]]:
    """U: (V-0.5 path, key, package) of every test method either side changed."""
    seen: dict[tuple[str, str], str] = {}
    for side in sides:
        for change in side.methods:
            seen.setdefault((change.path, change.key), change.package)
    return [(path, key, package) for (path, key), package in sorted(seen.items())]


def _versions(
    workspace: Workspace, rev: str, own: TestChanges, other: TestChanges
) -> dict[str, dict[str, _Method]]:
    """Test methods of ``rev`` by V-0.5 path and key, for every file either side touched.

    A file ``rev`` renamed is read at its new path even when ``rev`` changed no test method in it.
    """
    by_old_path = {
        change.old_path: change
        for change in workspace.changed_files("v-0.5", rev)
        if change.old_path is not None and change.old_path.endswith(".java")
    }
    paths = {c.path for c in (*own.methods, *other.methods)}
    result: dict[str, dict[str, _Method]] = {}
    for path in sorted(paths):
        change = by_old_path.get(path)
        if change is not None:  # changed, renamed or deleted by this side
            where, text, old_text = change.new_path, change.new_text, change.old_text
        else:  # untouched by this side, or a file it created
            where, text, old_text = path, workspace.read(rev, path), workspace.read("v-0.5", path)
        if where is None or text is None:
            continue
        old = parse_java(old_text) if old_text is not None else None
        # the keys identification gave this side's methods (V-0.5 identities, whatever the other side did)
        methods: dict[str, _Method] = {}
        for pair in pair_test_methods(old, parse_java(text), path, where):
            if pair.new is not None:
                methods.setdefault(pair.key, (pair.new.binary_class_name, pair.new.name, pair.new.tokens))
        result[path] = methods
    return result


# -- cache ----------------------------------------------------------------------------------
def _cache_key(instance_key: dict[str, str], *, executor: str, java: int, runs: int = 1) -> str:
    material = json.dumps(
        {
            **instance_key,
            "harness": __version__,
            "rules": _GOLD_RULES,
            "executor": executor,
            "java": java,
            "gold_runs": runs,
        },
        sort_keys=True,
    )
    return hashlib.sha256(material.encode()).hexdigest()[:32]


def _coverage_to_json(report: CoverageReport | None, methods: Iterable[ChangedMethod]) -> dict[str, Any]:
    """Only the lines of S are kept: that is all scoring needs, and it keeps the cache small."""
    lines: dict[str, dict[str, list[int]]] = {}
    if report is not None:
        for method in methods:
            for number in range(method.start_line, method.end_line + 1):
                line = report.line(method.source, number)
                if line is not None:
                    lines.setdefault(method.source, {})[str(number)] = [line.mi, line.ci, line.mb, line.cb]
    return lines


def _coverage_from_json(data: dict[str, Any]) -> CoverageReport:
    files = {
        source: {int(nr): LineCoverage(mi=v[0], ci=v[1], mb=v[2], cb=v[3]) for nr, v in lines.items()}
        for source, lines in data.items()
    }
    return CoverageReport(files=files, classes={})


def _run_summary(run: SelectionRun) -> dict[str, Any]:
    summary = run.to_dict()
    summary.pop("coverage", None)
    return summary
