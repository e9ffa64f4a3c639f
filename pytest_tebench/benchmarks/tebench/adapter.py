"""The TEBench adapter: test evolution on Java/Maven projects.

Per item: a workspace at V-0.5 with gold committed beside it (``prepare``), the prediction's
test-tree hunks applied and committed, identification items of both sides compared, and (when
update scoring is on) the update metrics measured on real builds (``evaluate``).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.base import Prepared
from pytest_tebench.benchmarks.base import base_record
from pytest_tebench.benchmarks.base import row_id
from pytest_tebench.benchmarks.fields import date_field
from pytest_tebench.benchmarks.fields import load_rows
from pytest_tebench.benchmarks.fields import sha_field
from pytest_tebench.benchmarks.fields import slug_field
from pytest_tebench.benchmarks.fields import text_field
from pytest_tebench.benchmarks.fields import with_problem
from pytest_tebench.benchmarks.tebench.aggregate import summarise
from pytest_tebench.benchmarks.tebench.gold_record import GOLD_RULES
from pytest_tebench.benchmarks.tebench.gold_record import GoldReference
from pytest_tebench.benchmarks.tebench.gold_record import InvalidInstance
from pytest_tebench.benchmarks.tebench.identification import IDENTIFICATION_RULES
from pytest_tebench.benchmarks.tebench.identification import TestChanges
from pytest_tebench.benchmarks.tebench.identification import test_changes
from pytest_tebench.benchmarks.tebench.properties import tebench_properties
from pytest_tebench.benchmarks.tebench.settings import LABELS
from pytest_tebench.benchmarks.tebench.settings import TebenchSettings
from pytest_tebench.benchmarks.tebench.terminal import format_identification_table
from pytest_tebench.benchmarks.tebench.terminal import format_update_table
from pytest_tebench.benchmarks.tebench.update import UpdateEvaluator
from pytest_tebench.benchmarks.tebench.update import UpdateTimeout
from pytest_tebench.benchmarks.tebench.update_metrics import UPDATE_RULES
from pytest_tebench.errors import HarnessError
from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.java.shadowing import shadowing_classes
from pytest_tebench.metrics.scores import set_scores
from pytest_tebench.report.properties import Property
from pytest_tebench.report.terminal import format_counts_line
from pytest_tebench.report.terminal import format_ids
from pytest_tebench.workspace.checkout import APPLY_RULES
from pytest_tebench.workspace.checkout import PatchDoesNotApply
from pytest_tebench.workspace.checkout import Workspace
from pytest_tebench.workspace.layout import is_test_path

MARKERS = (
    "breaking: the instance's gold patch fixes existing tests that break on V-0.5",
    "stale: the instance's gold patch updates existing tests that still pass on V-0.5",
    "missing: the instance's gold patch adds new tests",
)
#: ``--tebench-fail-under`` metrics: name -> (where in a model's summary, description).
GATE_METRICS: dict[str, tuple[tuple[str, ...], str]] = {
    "f1": (("identification", "micro", "f1"), "micro identification F1"),
    "precision": (("identification", "micro", "precision"), "micro identification precision"),
    "recall": (("identification", "micro", "recall"), "micro identification recall"),
    "macro_f1": (("identification", "macro", "f1"), "macro identification F1"),
    "oa": (("update", "oa"), "update score OA (mean s_update)"),
}


@dataclass(frozen=True)
class TebenchInstance:
    instance_id: str
    project: str
    repo: str
    v_minus_1_commit: str
    source_patch: str
    test_patch: str
    labels: tuple[str, ...]
    v0_commit: str | None = None
    #: V0's commit date (ISO 8601, "" unknown): the build's unversioned plugins are pinned to
    #: their release by then (run/maven/plugin_pins); unknown, V-1's commit date is taken.
    v0_date: str = ""


@dataclass
class TebenchPrepared:
    workspace: Workspace
    gold: TestChanges
    timings: dict[str, float]
    #: Gold's build on V0 (cached across items); None when update scoring is off.
    reference: GoldReference | None = None


class TebenchAdapter:
    name = "tebench"
    markers = MARKERS
    gate_metrics = {name: description for name, (_, description) in GATE_METRICS.items()}
    record_fields = (
        "apply_method", "apply_details", "touched_non_test_files", "refused_files",
        "identification", "update", "timings", "prediction_patch", "gold_patch",
    )  # fmt: skip

    def __init__(self, settings: TebenchSettings | None = None) -> None:
        self.settings = settings or TebenchSettings()
        self.thresholds: tuple[tuple[str, float], ...] = tuple(
            (metric, value)
            for metric, value in (("f1", self.settings.min_f1), ("oa", self.settings.min_update))
            if value is not None
        )

    @property
    def uses_executor(self) -> bool:
        return self.settings.update is not None

    # -- collection (every process) -----------------------------------------------------
    def load_instances(self, records: Sequence[RawRecord]) -> list[BenchmarkInstance]:
        return load_rows(records, _validate)

    def cache_key(self, instance: BenchmarkInstance) -> str | None:
        payload: TebenchInstance = instance.payload
        update = self.settings.update
        return json.dumps(
            {
                "instance": _content_key(payload)["content"],
                "allow_non_test_edits": self.settings.allow_non_test_edits,
                # how the prediction is applied decides identification too
                "apply_rules": APPLY_RULES,
                "identification_rules": IDENTIFICATION_RULES,
                # everything of the update settings that can change a finished result
                "update": None
                if update is None
                else {
                    "scoring": update.scoring,
                    "jdk": update.jdk,
                    "maven": update.maven_version,
                    "gold_runs": update.gold_runs,
                    # tests that reach a host pass with a network and cannot run without one
                    "network": update.network,
                    # a test phase past this limit can be a score (update.hung_tests)
                    "test_timeout": update.timeout_test,
                    # how tests are selected and gold is judged: a stored result made under older
                    # rules (a selector that ran nothing of a Parameterized class) is made again
                    "gold_rules": GOLD_RULES,
                    "update_rules": UPDATE_RULES,
                },
            },
            sort_keys=True,
        )

    def gold_patch(self, instance: BenchmarkInstance) -> str:
        payload: TebenchInstance = instance.payload
        return payload.test_patch

    def repository_commits(self, instance: BenchmarkInstance) -> tuple[str, ...]:
        """The commits ``prepare`` checks out (what a Dask worker's repository bundle must hold)."""
        payload: TebenchInstance = instance.payload
        return (payload.v_minus_1_commit,)

    # -- running (the process that runs the item) ---------------------------------------
    def prepare(self, instance: BenchmarkInstance, context: EvalContext) -> TebenchPrepared:
        payload: TebenchInstance = instance.payload
        timings: dict[str, float] = {}
        started = time.perf_counter()
        try:
            source = context.repos.locate(payload.repo, [payload.v_minus_1_commit])
        except HarnessError as exc:
            exc.timings = {"repository": time.perf_counter() - started, **exc.timings}
            raise
        located = time.perf_counter()
        timings["repository"] = located - started
        workspace = Workspace.create(
            source, payload.v_minus_1_commit, payload.source_patch, parent=context.work_dir
        )
        try:
            workspace.commit_gold(payload.test_patch)
            gold = test_changes(workspace.changed_files("v-0.5", "gold"))
            timings["workspace"] = time.perf_counter() - located
            if not gold.items:
                # Gold that only re-wraps or comments tests, or only adds helpers: a copy of gold would
                # score exactly like an empty patch, so the instance cannot rank anyone (docs/scoring.md I11).
                raise InvalidInstance(
                    f"the gold test_patch of {instance.instance_id} modifies, deletes or adds no test method "
                    "(only formatting, comments or non-test code): nothing to identify or update"
                )
            done = time.perf_counter()
            prepared = TebenchPrepared(workspace, gold, timings)
            if self.settings.update is not None:
                # gold's build is harness work: an invalid or unbuildable gold is an error here, never a score
                prepared.reference = UpdateEvaluator(context, self.settings.update).gold(
                    _content_key(payload), workspace, gold, project=payload.repo, released_by=payload.v0_date
                )
                timings["gold_build"] = time.perf_counter() - done
        except BaseException as exc:
            if isinstance(exc, HarnessError):
                # the evidence of a harness failure: what it cost, and the workspace when asked
                exc.timings = {**timings, **exc.timings}
                exc.timings.setdefault("total", time.perf_counter() - started)
                if context.keep_workspaces:
                    exc.workspace = str(workspace.path)
            if not context.keep_workspaces:
                workspace.remove()
            raise
        return prepared

    def evaluate(
        self, instance: BenchmarkInstance, prepared: Prepared, prediction: Prediction, context: EvalContext
    ) -> dict[str, Any]:
        assert isinstance(prepared, TebenchPrepared)
        gold_items = prepared.gold.items
        record = _record(instance, prediction, "evaluated")
        record["timings"] = dict(prepared.timings)
        # both patches travel with the record so a report can show them offline (tebench report --html)
        record["prediction_patch"] = prediction.patch
        record["gold_patch"] = instance.payload.test_patch
        if context.keep_workspaces:
            record["workspace"] = str(prepared.workspace.path)
        if prediction.is_empty:
            return self._scored_as_nothing(record, prepared, "empty")
        started = time.perf_counter()
        workspace = prepared.workspace
        try:
            applied = workspace.commit_prediction(
                prediction.patch, allow_non_test_edits=self.settings.allow_non_test_edits
            )
        except PatchDoesNotApply as exc:
            return self._scored_as_nothing(record, prepared, "not_applied", f"{exc}\n{exc.details}".strip())
        record["apply_method"] = applied.method
        record["apply_details"] = dict(applied.details)
        record["touched_non_test_files"] = list(applied.touched_non_test_files)
        record["refused_files"] = [
            {"path": r.path, "kind": r.kind, "reason": r.reason} for r in applied.refused
        ]
        # only test sources can shadow: an allowed production edit (--tebench-allow-non-test-edits)
        # declares its own classes, in their own place
        shadowing = shadowing_classes(workspace.path, [f for f in applied.applied_files if is_test_path(f)])
        if shadowing:
            # a class that replaces production code or the test framework on the test classpath
            why = "the prediction declares classes that would replace others: " + "; ".join(shadowing)
            return self._scored_as_nothing(record, prepared, "not_applied", why)
        changes = workspace.changed_files("v-0.5", "prediction")
        if not changes:
            # Nothing of the prediction reached the tree (every piece refused, or hunks of context
            # only): scored as the empty patch it amounts to, never by V-0.5's own tests, which
            # would give a patch of refused paths what an untouched stale test earns.
            if not applied.refused:
                return self._scored_as_nothing(record, prepared, "empty")
            refused = "; ".join(f"{r.path} ({r.reason})" for r in applied.refused)
            return self._scored_as_nothing(
                record, prepared, "not_applied", f"no piece of the prediction was applied: {refused}"
            )
        try:
            predicted = test_changes(changes)
        except RecursionError as exc:
            # Input the analysis cannot handle is the model's failure, scored, never a way out.
            why = f"the prediction's test files cannot be analysed: {exc}"
            return self._scored_as_nothing(record, prepared, "not_applied", why)
        record["identification"] = _identification(gold_items, predicted.items)
        record["timings"]["apply_and_identify"] = time.perf_counter() - started
        update = self.settings.update
        if update is not None and prepared.reference is not None:
            started = time.perf_counter()
            try:
                record["update"] = UpdateEvaluator(context, update).evaluate(
                    workspace,
                    prepared.reference,
                    prepared.gold,
                    predicted,
                    update.scoring,
                    project=instance.repo,
                    released_by=instance.payload.v0_date,
                )
            except HarnessError as exc:
                exc.timings = {
                    **record["timings"],
                    "prediction_build": time.perf_counter() - started,
                    **{f"prediction_{k}": v for k, v in exc.timings.items()},
                }
                if context.keep_workspaces:
                    exc.workspace = str(workspace.path)
                raise
            except UpdateTimeout as exc:
                record["status"] = "timeout"
                record["error"] = str(exc)
                record["update"] = exc.update
            record["timings"]["prediction_build"] = time.perf_counter() - started
        if predicted.parse_problems or prepared.gold.parse_problems:
            record["warnings"] = [
                f"Java syntax errors in {path}; identification used what the parser recovered"
                for path in sorted({*predicted.parse_problems, *prepared.gold.parse_problems})
            ]
        return record

    def cleanup(self, prepared: Prepared, context: EvalContext) -> None:
        assert isinstance(prepared, TebenchPrepared)
        if not context.keep_workspaces:
            prepared.workspace.remove()

    # -- reporting (controller) ---------------------------------------------------------
    def summarise(self, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        summary = summarise(records, update_scoring=self.settings.scoring)
        for model, model_summary in summary.items():
            executors = sorted(
                {str((r.get("update") or {}).get("executor")) for r in records
                 if r.get("model_name_or_path") == model and (r.get("update") or {}).get("executor")}
            )  # fmt: skip
            model_summary["executors"] = executors
        return summary

    def metric_value(self, model_summary: Mapping[str, Any], metric: str) -> float | None:
        value: Any = model_summary
        for key in GATE_METRICS[metric][0]:
            value = value.get(key) if isinstance(value, Mapping) else None
        return None if value is None else float(value)

    def summary_lines(self, summary: Mapping[str, Any]) -> list[str]:
        lines: list[str] = []
        for model, model_summary in summary.items():
            executors = ", ".join(model_summary.get("executors") or [])
            mavens = ", ".join(model_summary.get("maven_versions") or [])
            ran_on = f"; builds ran on: {executors}" if executors else ""
            ran_on += f" with Maven {mavens}" if mavens else ""
            lines.append(f"model: {model}  ({format_counts_line(model_summary)}{ran_on})")
            flaky = model_summary.get("flaky_gold") or []
            if flaky:
                lines.append(
                    f"  flaky gold tests were dropped from the selection of {len(flaky)} instance(s): "
                    + ", ".join(flaky)
                )
            not_tests = model_summary.get("not_tests_gold") or []
            if not_tests:
                lines.append(
                    "  gold tests the project's build never runs were left out of the selection of "
                    f"{len(not_tests)} instance(s): " + ", ".join(not_tests)
                )
            moved = model_summary.get("jdk_moved_gold") or []
            if moved:
                lines.append(
                    f"  gold ran on another JDK than its build files choose for {len(moved)} instance(s) "
                    "(update.gold.jdk_retry says why): " + ", ".join(moved)
                )
            lines.extend(format_identification_table(model, model_summary))
            if model_summary.get("update"):
                lines.extend(format_update_table(model, model_summary))
            lines.extend(
                format_ids("no prediction (scored as empty)", model_summary.get("missing_predictions") or [])
            )
            lines.append("")
        return lines

    def junit_properties(self, record: Mapping[str, Any]) -> list[Property]:
        return tebench_properties(record)

    def report_fields(self) -> dict[str, Any]:
        update = self.settings.update
        # whether the tests could reach the network (--tebench-network); null without builds
        return {
            "update_scoring": self.settings.scoring,
            "tests_network": None if update is None else update.network,
        }

    def verdict(self, record: Mapping[str, Any]) -> str | None:
        return None  # an evaluated TEBench item passes; its scores say how well

    def write_reports(self, report: Mapping[str, Any]) -> None:
        pass  # TEBench has no report format of its own beyond the JSON report

    def _scored_as_nothing(
        self, record: dict[str, Any], prepared: TebenchPrepared, status: str, error: str | None = None
    ) -> dict[str, Any]:
        """``record`` as a prediction that changed nothing is scored: every gold item a false
        negative, 0 on every update metric, with ``status`` and why."""
        record["status"] = status
        if error is not None:
            record["error"] = error
        record["identification"] = _identification(prepared.gold.items, [])
        record["update"] = self._failed_update(prepared)
        return record

    def _failed_update(self, prepared: TebenchPrepared) -> dict[str, Any] | None:
        """An empty or unapplicable prediction scores 0 on every update metric (a model failure)."""
        if self.settings.update is None or prepared.reference is None:
            return None
        has_change = bool(prepared.reference.coverage_has_change)
        return {
            "s_exec": 0.0,
            "s_line": 0.0 if has_change else None,
            "s_branch": 0.0 if has_change and prepared.reference.has_branches else None,
            "s_mod": 0.0,
            "s_update": 0.0,
            "gt_has_coverage_change": has_change,
            "scoring": self.settings.update.scoring,
            "status": "not_run",
        }


def _record(instance: BenchmarkInstance, prediction: Prediction, status: str) -> dict[str, Any]:
    """The neutral record plus TEBench's own fields."""
    record = base_record(instance, prediction, status)
    record.update(
        {
            "apply_method": None,
            "touched_non_test_files": [],
            "identification": None,
            "update": None,
        }
    )
    return record


def _identification(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, Any]:
    return dict(set_scores(gold, predicted))


def _content_key(payload: TebenchInstance) -> dict[str, str]:
    """What makes gold's build what it is: the cache key of the gold reference."""
    digest = hashlib.sha256()
    # the date pins the build's unversioned plugins (an older row without one keeps V-1's date)
    for part in (
        payload.repo,
        payload.v_minus_1_commit,
        payload.source_patch,
        payload.test_patch,
        payload.v0_date,
    ):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return {"instance_id": payload.instance_id, "content": digest.hexdigest()}


# -- validation ---------------------------------------------------------------------------
def _validate(record: RawRecord) -> BenchmarkInstance:
    data = record.data
    raw_id = data.get("instance_id")
    instance_id = raw_id if isinstance(raw_id, str) and raw_id.strip() else row_id(record.origin)
    project = str(data.get("project") or "") if isinstance(data.get("project"), str) else ""
    repo = str(data.get("repo") or "") if isinstance(data.get("repo"), str) else ""
    shell = BenchmarkInstance(instance_id, project or "unknown", repo, (), record.origin)
    if record.problem:
        return with_problem(shell, record.problem)
    try:
        payload = TebenchInstance(
            instance_id=text_field(data, "instance_id"),
            project=text_field(data, "project"),
            repo=slug_field(data),
            v_minus_1_commit=sha_field(data, "v_minus_1_commit"),
            source_patch=text_field(data, "source_patch", allow_empty=True),
            test_patch=text_field(data, "test_patch"),
            labels=_labels(data),
            v0_commit=sha_field(data, "v0_commit") if data.get("v0_commit") else None,
            v0_date=date_field(data, "v0_date"),
        )
    except ValueError as exc:
        return with_problem(shell, str(exc))
    return BenchmarkInstance(
        payload.instance_id, payload.project, payload.repo, payload.labels, record.origin, payload
    )


def _labels(data: dict[str, Any]) -> tuple[str, ...]:
    value = data.get("labels")
    if isinstance(value, str) and not value.strip():
        value = None
    elif isinstance(value, str):  # some exports store the list as a JSON string
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            value = [value]
    if value is None or (isinstance(value, list | tuple) and not value):
        # labels feed no score, only the per-label tables: unlabelled rows count as "unlabeled"
        return ()
    if not isinstance(value, list | tuple):
        raise ValueError("field 'labels' must be a list of breaking/stale/missing")
    labels = [str(v).strip().lower() for v in value]
    unknown = sorted(set(labels) - set(LABELS))
    if unknown:
        raise ValueError(f"field 'labels' has unknown label(s) {unknown}; allowed: {list(LABELS)}")
    return tuple(label for label in LABELS if label in labels)


def create_adapter(
    values: Mapping[str, Any], cache_dir: Path, progress: Callable[[str], None] | None = None
) -> TebenchAdapter:
    """The adapter for a run, from its option values (``TEBENCH_OPTIONS``, keyed by dest)."""
    return TebenchAdapter(TebenchSettings.from_values(values, cache_dir))
