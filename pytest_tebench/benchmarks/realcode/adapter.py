"""The RealCodeJava adapter: one pytest item per (instance, model), evaluating its n samples.

Why one item per (instance, model) and not one per sample: pass@k is a property of the n
samples together (the estimator needs n and c), the instance's compiled repository is reused by
every sample on the process that has it (items of one instance spread over xdist workers would
each compile it again), and the result cache keys the whole sample set. The item passes when at
least one sample passes; its record lists every sample with its raw text, cleaned body, build
and test outcome.
"""

from __future__ import annotations

import hashlib
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
from pytest_tebench.benchmarks.base import base_record
from pytest_tebench.benchmarks.realcode import summary as realcode_summary
from pytest_tebench.benchmarks.realcode.answers import clean_answer
from pytest_tebench.benchmarks.realcode.evaluation import BASELINE_SUBDIR
from pytest_tebench.benchmarks.realcode.evaluation import RealcodePrepared
from pytest_tebench.benchmarks.realcode.evaluation import RealcodeRunner
from pytest_tebench.benchmarks.realcode.instances import RealcodeInstance
from pytest_tebench.benchmarks.realcode.instances import load_instances
from pytest_tebench.benchmarks.realcode.predictions import encode_samples
from pytest_tebench.benchmarks.realcode.predictions import read_samples
from pytest_tebench.benchmarks.realcode.predictions import samples_of
from pytest_tebench.benchmarks.realcode.scoring import KS
from pytest_tebench.benchmarks.realcode.scoring import judge
from pytest_tebench.benchmarks.realcode.scoring import pass_at_k
from pytest_tebench.benchmarks.realcode.scoring import passes_dry_run
from pytest_tebench.benchmarks.realcode.scoring import passes_tests
from pytest_tebench.benchmarks.realcode.settings import RealcodeSettings
from pytest_tebench.errors import HarnessError
from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.report.properties import Property


class RealcodeAdapter:
    name = "realcode"
    markers = (
        "function: the completed element is a function (RealCodeJava intent_type)",
        "method: the completed element is a method (RealCodeJava intent_type)",
    )
    gate_metrics = realcode_summary.GATE_METRICS
    thresholds: tuple[tuple[str, float], ...] = ()
    uses_executor = True
    #: Where ``prepare`` keeps each instance's baseline (dry run, oracle, stub), keyed by content:
    #: Dask dispatch brings these files back to the machine that runs pytest (docs/dask.md).
    gold_cache_subdir = BASELINE_SUBDIR
    record_fields = (
        "rule",
        "n",
        "c",
        "pass_at_k",
        "baseline",
        "samples",
        "file_path",
        "selection",
        "timings",
    )

    def __init__(self, settings: RealcodeSettings) -> None:
        self.settings = settings

    # -- collection (every process) -------------------------------------------------------
    def load_instances(self, records: Sequence[RawRecord]) -> list[BenchmarkInstance]:
        return load_instances(records)

    def read_predictions(self, path: Path) -> list[Prediction]:
        return read_samples(path)

    def gold_patch(self, instance: BenchmarkInstance) -> str:
        payload: RealcodeInstance = instance.payload
        return encode_samples([payload.gt])

    def repository_commits(self, instance: BenchmarkInstance) -> tuple[str, ...]:
        """The commit ``prepare`` checks out (what a Dask worker's repository bundle must hold)."""
        payload: RealcodeInstance = instance.payload
        return (payload.base_commit,)

    def cache_key(self, instance: BenchmarkInstance) -> str | None:
        return json.dumps(
            {"content": _content_key(instance.payload), "rule": self.settings.rule}, sort_keys=True
        )

    # -- running --------------------------------------------------------------------------
    def prepare(self, instance: BenchmarkInstance, context: EvalContext) -> RealcodePrepared:
        payload: RealcodeInstance = instance.payload
        prepared = RealcodeRunner(context, self.settings.maven).prepare(payload, _content_key(payload))
        _judge_baseline(prepared.baseline, payload, self.settings.rule)
        return prepared

    def evaluate(
        self, instance: BenchmarkInstance, prepared: Prepared, prediction: Prediction, context: EvalContext
    ) -> dict[str, Any]:
        assert isinstance(prepared, RealcodePrepared)
        payload: RealcodeInstance = instance.payload
        runner = RealcodeRunner(context, self.settings.maven)
        record = base_record(instance, prediction, "evaluated")
        record["timings"] = {name: round(seconds, 3) for name, seconds in prepared.timings.items()}
        record.update(
            rule=self.settings.rule,
            file_path=payload.file_path,
            selection=[str(test) for test in payload.selection],
            baseline=_public_baseline(prepared.baseline),
        )
        if context.keep_workspaces:
            record["workspace"] = str(prepared.workspace.path)
        dry_tests: dict[str, str] = prepared.baseline["dry_run"]["tests"]
        samples: list[dict[str, Any]] = []
        started = time.perf_counter()
        for index, raw in enumerate(samples_of(prediction)):
            cleaned = clean_answer(raw, method_name=payload.intent_name, indent=payload.signature_indent())
            sample: dict[str, Any] = {
                "index": index,
                "raw": raw,
                "body": cleaned.body,
                "cleaning": list(cleaned.steps),
            }
            if cleaned.is_empty:
                sample.update(status="empty", compiled=False, tests_run=False, passed=False)
                samples.append(sample)
                continue
            try:
                run = runner.run_file(payload, prepared, payload.compose(cleaned.body))
            except HarnessError as exc:
                exc.timings = {**prepared.timings, "samples": time.perf_counter() - started, **exc.timings}
                raise
            sample.update(judged(run, dry_tests, payload, self.settings.rule))
            samples.append(sample)
        record["timings"]["samples"] = round(time.perf_counter() - started, 3)
        n = len(samples)
        c = sum(1 for sample in samples if sample["passed"])
        record.update(
            n=n,
            c=c,
            pass_at_k={str(k): pass_at_k(n, c, k) for k in KS},
            samples=samples,
        )
        if not any(sample["status"] != "empty" for sample in samples):
            record["status"] = "empty"
        return record

    def cleanup(self, prepared: Prepared, context: EvalContext) -> None:
        assert isinstance(prepared, RealcodePrepared)
        if not context.keep_workspaces:
            prepared.workspace.remove()

    # -- reporting (controller) -------------------------------------------------------------
    def summarise(self, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return realcode_summary.summarise(records, self.settings.rule)

    def metric_value(self, model_summary: Mapping[str, Any], metric: str) -> float | None:
        return realcode_summary.metric_value(model_summary, metric)

    def summary_lines(self, summary: Mapping[str, Any]) -> list[str]:
        return realcode_summary.summary_lines(summary)

    def junit_properties(self, record: Mapping[str, Any]) -> list[Property]:
        return realcode_summary.junit_properties(record)

    def report_fields(self) -> dict[str, Any]:
        return {"realcode_rule": self.settings.rule, "realcode_ks": list(KS)}

    def verdict(self, record: Mapping[str, Any]) -> str | None:
        if record.get("c"):
            return None
        statuses = ", ".join(str(sample.get("status")) for sample in record.get("samples") or ())
        return f"no sample passes (0 of {record.get('n', 0)}: {statuses})"

    def write_reports(self, report: Mapping[str, Any]) -> None:
        pass  # the JSON report carries everything


def judged(
    run: dict[str, Any], dry_tests: Mapping[str, str], payload: RealcodeInstance, rule: str
) -> dict[str, Any]:
    """A body's run with both rules' verdicts and the chosen one."""
    selection = [str(test) for test in payload.selection]
    by_tests = passes_tests(run["tests"], dry_tests, selection)
    by_dry_run = passes_dry_run(run["tests"], dry_tests)
    passed = judge(rule, run["tests"], dry_tests, selection)
    if passed:
        status = "passed"
    elif not run["compiled"]:
        status = "compile_error"
    elif str(run["status"]).startswith("timeout"):
        status = "timeout"
    else:
        status = "failed"
    return {
        **run,
        "build_status": run["status"],
        "status": status,
        "passed": passed,
        "pass_tests": by_tests,
        "pass_dry_run_rule": by_dry_run,
        "fail_to_pass": _share(run["tests"], payload.fail_to_pass),
        "pass_to_pass": _share(run["tests"], payload.pass_to_pass),
    }


def _share(tests: Mapping[str, str], listed: Sequence[Any]) -> dict[str, int]:
    return {"passed": sum(1 for test in listed if tests.get(str(test)) == "passed"), "total": len(listed)}


def _judge_baseline(baseline: dict[str, Any], payload: RealcodeInstance, rule: str) -> None:
    """The references' verdicts under the run's rule (the cached runs stay rule-free)."""
    selection = [str(test) for test in payload.selection]
    dry = baseline["dry_run"]["tests"]
    baseline["pass_dry_run"] = judge(rule, dry, dry, selection)
    baseline["execution_success"] = bool(baseline["dry_run"].get("tests_run"))
    baseline["pass_oracle"] = judge(rule, baseline["oracle"]["tests"], dry, selection)
    stub = baseline.get("stub")
    baseline["pass_stub"] = None if stub is None else judge(rule, stub["tests"], dry, selection)


def _public_baseline(baseline: Mapping[str, Any]) -> dict[str, Any]:
    keys = (
        "cache", "java_version", "maven_version", "contexts_match", "dry_run", "oracle", "stub",
        "pass_dry_run", "pass_oracle", "pass_stub", "execution_success",
    )  # fmt: skip
    return {key: baseline.get(key) for key in keys}


def _content_key(payload: RealcodeInstance) -> str:
    digest = hashlib.sha256()
    for part in (
        payload.repo, payload.base_commit, payload.file_path, payload.left_context, payload.right_context,
        payload.gt, payload.stub or "", payload.intent,
        ",".join(str(t) for t in payload.pass_to_pass), ",".join(str(t) for t in payload.fail_to_pass),
    ):  # fmt: skip
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()


def create_adapter(
    values: Mapping[str, Any], cache_dir: Path, progress: Callable[[str], None] | None = None
) -> RealcodeAdapter:
    """The adapter for a run, from its option values (``REALCODE_OPTIONS``, keyed by dest)."""
    return RealcodeAdapter(RealcodeSettings.from_values(values, cache_dir))
