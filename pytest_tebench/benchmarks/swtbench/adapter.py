"""The SWT-bench adapter (``--tebench-benchmark=swtbench``): test generation on SWE-bench rows.

A prediction is a patch that adds tests reproducing the issue (``gold`` = the row's
``test_patch``). Everything SWE-bench's adapter does to find the repository and make the
environment is inherited (same images, same datasets, same predictions format); ``evaluate`` runs
SWT-bench's six configurations (:mod:`.evaluation`) and grades them as SWT-bench does
(:mod:`.grading`). The gold and existing-test runs of an instance do not depend on the
prediction's content beyond its test files, so they are run once per process and reused.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.base import Prepared
from pytest_tebench.benchmarks.swebench.adapter import EVALUATION_VERSION as SWEBENCH_EVALUATION_VERSION
from pytest_tebench.benchmarks.swebench.adapter import SwebenchAdapter
from pytest_tebench.benchmarks.swebench.adapter import SwebenchPrepared
from pytest_tebench.benchmarks.swebench.adapter import create_adapter as create_swebench_adapter
from pytest_tebench.benchmarks.swebench.instances import SwebenchInstance
from pytest_tebench.benchmarks.swebench.records import guard_properties
from pytest_tebench.benchmarks.swebench.records import guarded_record
from pytest_tebench.benchmarks.swebench.records import refused_record
from pytest_tebench.benchmarks.swebench.records import started_record
from pytest_tebench.benchmarks.swtbench import evaluation
from pytest_tebench.benchmarks.swtbench import grading
from pytest_tebench.benchmarks.swtbench import integrity
from pytest_tebench.benchmarks.swtbench import linecov
from pytest_tebench.benchmarks.swtbench import summary as figures
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.integrity import evidence
from pytest_tebench.report.properties import Property
from pytest_tebench.report.properties import block_properties
from pytest_tebench.workspace.patches import PatchFormatError

#: Bump when a change can change results, so stored ones are not reused (2: multi-line statements;
#: 3: runner files refused, the guard judged).
EVALUATION_VERSION = 3
#: JUnit properties of the ``swtbench`` record block.
JUNIT_FIELDS: tuple[str, ...] = (
    "repo", "version", "resolved", "applied", "patch_applied", "added_f2p", "f2x", "f2p", "p2p",
    "coverage_delta", "coverage_pred", "coverage_base", "executable_lines",
)  # fmt: skip
#: Keys of SWT-bench's transitions, as the record's lists are named.
TRANSITION_FIELDS = {
    grading.FAIL_TO_PASS: "fail_to_pass",
    grading.PASS_TO_PASS: "pass_to_pass",
    grading.FAIL_TO_FAIL: "fail_to_fail",
    grading.PASS_TO_FAIL: "pass_to_fail",
    grading.UNMATCHED: "unmatched",
}


class SwtbenchAdapter(SwebenchAdapter):
    name = "swtbench"
    gate_metrics = {
        "resolved": "S: share of the model's judged items whose tests reproduce the issue (success)",
        "applied": "W: share of the model's judged items whose patch applies and whose tests run",
        "coverage_delta": "mean change coverage delta of the gold fix's lines (0..1)",
    }
    record_fields: tuple[str, ...] = ("apply_method", "swtbench", "refused_files", "guard", "timings")
    #: The error of a refused prediction, before the refused files.
    REFUSED = "the patch changes files a test-generation prediction may not change"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: Outcomes of the runs that do not depend on the prediction, per (instance, run, test files).
        self._shared_runs: dict[tuple[str, str, tuple[str, ...]], evaluation.RunOutcome] = {}

    def cache_key(self, instance: BenchmarkInstance) -> str | None:
        key = super().cache_key(instance)
        return json.dumps(
            {
                "swebench": key,
                "swtbench": EVALUATION_VERSION,
                "swebench_evaluation": SWEBENCH_EVALUATION_VERSION,
                "coverage": linecov.COVERAGE_VERSION,
                "guard": evidence.GUARD_DIGEST,
            },
            sort_keys=True,
        )  # fmt: skip

    def gold_patch(self, instance: BenchmarkInstance) -> str:
        payload: SwebenchInstance = instance.payload
        return payload.test_patch

    # -- running ---------------------------------------------------------------------------
    def evaluate(
        self, instance: BenchmarkInstance, prepared: Prepared, prediction: Prediction, context: EvalContext
    ) -> dict[str, Any]:
        assert isinstance(prepared, SwebenchPrepared)
        payload: SwebenchInstance = instance.payload
        record, block = started_record(
            instance,
            prediction,
            prepared.timings,
            "swtbench",
            image=prepared.image,
            python=prepared.plan.python,
            suite=prepared.plan.suite,
        )
        block.update(
            network=self.network,
            patch_extraction=prediction.extraction,
            patch_applied=False,
            applied=False,
            resolved=False,
            coverage_delta=None,
        )
        if prediction.is_empty:
            record["status"] = "empty"
            return record
        try:
            refused = integrity.refusals(prediction.patch)
        except PatchFormatError as exc:
            record["status"] = "not_applied"
            record["error"] = f"the patch is not a diff that can be applied: {exc}"
            return record
        if refused:
            return refused_record(record, refused, self.REFUSED)
        setting = evaluation.Setting(
            instance=payload,
            source=prepared.source,
            plan=prepared.plan,
            image=prepared.image,
            executor=self.executor(context),
            coverage_dir=linecov.ensure_coverage(context.cache_dir, prepared.plan.python),
            work_dir=context.work_dir,
            scratch=context.cache_dir / "swebench-scratch",
            timeout=self.timeout,
            network=self.network,
            keep_workspaces=context.keep_workspaces,
        )
        specs = evaluation.specs(payload, prediction.patch)
        block["test_directives"] = list(specs["pred_pre"].directives)
        started = time.perf_counter()
        pred_pre = evaluation.run(setting, specs["pred_pre"])
        record["apply_method"] = pred_pre.apply_method
        if not pred_pre.applied:
            record["status"] = "not_applied"
            record["error"] = (
                f"the patch does not apply (SWT-bench: Patch Apply Failed)\n{pred_pre.apply_log}"
            )
            return record
        if pred_pre.refusals:
            return refused_record(record, pred_pre.refusals, self.REFUSED)
        block["patch_applied"] = True
        outcomes = {"pred_pre": pred_pre, "pred_post": evaluation.run(setting, specs["pred_post"])}
        for name in ("gold_pre", "gold_post", "base_pre", "base_post"):
            outcomes[name] = self._shared(setting, specs[name])
        record["timings"]["tests"] = time.perf_counter() - started
        block.update(graded_fields(payload.patch, outcomes))
        guard = integrity.judge(outcomes, resolved=bool(block["resolved"]))
        return guarded_record(record, block, guard)

    def _shared(self, setting: evaluation.Setting, spec: evaluation.RunSpec) -> evaluation.RunOutcome:
        key = (setting.instance.instance_id, spec.name, spec.directives)
        if key not in self._shared_runs:
            self._shared_runs[key] = evaluation.run(setting, spec)
        return self._shared_runs[key]

    def verdict(self, record: Mapping[str, Any]) -> str | None:
        """Why an evaluated item fails (no success), or None when it passes."""
        block = record.get("swtbench") or {}
        if record.get("status") != "evaluated" or block.get("resolved"):
            return None
        pred, base = block.get("tests_pred") or {}, block.get("tests_base") or {}

        def new(key: str) -> list[str]:
            return sorted(set(pred.get(key) or []) - set(base.get(key) or []))

        parts = [] if block.get("applied") else ["not applicable (W: too few tests ran)"]
        parts.append(f"F→P tests added {len(new('fail_to_pass'))}")
        for key, label in (("fail_to_fail", "F→F"), ("pass_to_fail", "P→F"), ("pass_to_pass", "P→P")):
            if new(key):
                parts.append(f"new {label} {len(new(key))}: {', '.join(new(key)[:5])}")
        return "no success: " + "; ".join(parts)

    # -- reporting -------------------------------------------------------------------------
    def summarise(self, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return figures.summarise(records)

    def metric_value(self, model_summary: Mapping[str, Any], metric: str) -> float | None:
        name = {"resolved": "S", "applied": "W", "coverage_delta": "coverage_delta"}.get(metric)
        value = model_summary.get(name) if name else None
        return None if value is None else float(value) / 100.0

    def summary_lines(self, summary: Mapping[str, Any]) -> list[str]:
        return figures.summary_lines(summary)

    def summary_properties(self, summary: Mapping[str, Any]) -> list[Property]:
        return figures.summary_properties(summary)

    def junit_properties(self, record: Mapping[str, Any]) -> list[Property]:
        return block_properties("swtbench", record.get("swtbench"), JUNIT_FIELDS) + guard_properties(record)

    def report_fields(self) -> dict[str, Any]:
        return {
            "swtbench": {
                "network": self.network,
                "pypi_date": self.pypi_date or "today",
                "coverage_py": linecov.COVERAGE_VERSION,
            }
        }

    def write_reports(self, report: Mapping[str, Any]) -> None:
        """SWT-bench has no run report of its own format beyond the JSON report."""


def graded_fields(code_patch: str, outcomes: Mapping[str, evaluation.RunOutcome]) -> dict[str, Any]:
    """The record's grading block from the six runs (SWT-bench's ``get_pred_report``)."""
    reports = {
        who: grading.transitions(outcomes[f"{who}_pre"].status_map, outcomes[f"{who}_post"].status_map)
        for who in ("pred", "gold", "base")
    }
    pred, base = reports["pred"], reports["base"]
    resolved, added_f2p = grading.success(pred, base)
    added = grading.added(pred, base)
    coverage = grading.change_coverage(
        code_patch, grading.Runs(**{name: outcomes[name].counts for name in evaluation.RUNS})
    )
    return {
        "applied": grading.applicable(pred, base),
        "resolved": resolved,
        "added_f2p": added_f2p,
        "f2x": added.f2x,
        "f2p": added.f2p,
        "p2p": added.p2p,
        "coverage_delta": coverage.delta_pred,
        "coverage_delta_gold": coverage.delta_gold,
        "coverage_pred": coverage.pred,
        "coverage_gold": coverage.gold,
        "coverage_base": coverage.base,
        "executable_lines": coverage.executable_lines,
        **{
            f"tests_{who}": {TRANSITION_FIELDS[key]: tests for key, tests in report.items()}
            for who, report in reports.items()
        },
    }


def create_adapter(
    values: Mapping[str, Any], cache_dir: Path, progress: Callable[[str], None] | None = None
) -> SwtbenchAdapter:
    """The adapter for a run, from its option values (SWE-bench's: timeout, network, PyPI date)."""
    base = create_swebench_adapter(values, cache_dir, progress)
    return SwtbenchAdapter(
        timeout=base.timeout,
        progress=base.progress,
        network=base.network,
        pypi_date=base.pypi_date,
        executor_values=values,
    )
