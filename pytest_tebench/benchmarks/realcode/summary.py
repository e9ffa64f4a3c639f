"""RealCodeJava's per-model metrics, terminal lines and JUnit properties (controller side).

Per model: ``pass_at_k`` for k in 1, 5, 10 (the mean of the unbiased estimator over instances
with at least k samples; an instance without any answer scores 0; as in MERA, whose figure is the
mean over every doc, an instance the harness could not judge scores 0 too, and
``pass_at_k_judged`` beside it leaves those out). Over the scored items (one per instance):
``pass_oracle``, ``pass_stub`` and ``pass_dry_run`` (the references of the instances the model was
scored on, judged by the same rule), ``execution_success`` (the share of the model's instances
whose untouched repository built and ran its tests: invalid instances and dry-run timeouts count
against it, errors of the harness do not) and ``compiled`` (the share of samples that compiled)."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from pytest_tebench.benchmarks.realcode.scoring import KS
from pytest_tebench.benchmarks.realcode.scoring import mean_pass_at_k
from pytest_tebench.metrics.outcomes import is_scored
from pytest_tebench.metrics.outcomes import status_counts
from pytest_tebench.report.properties import PREFIX
from pytest_tebench.report.properties import Property
from pytest_tebench.report.properties import scalar
from pytest_tebench.report.terminal import format_counts_line
from pytest_tebench.report.terminal import format_ids
from pytest_tebench.report.terminal import percent
from pytest_tebench.report.terminal import render_table

#: ``--tebench-fail-under`` metrics (the summary's keys) and what they mean.
GATE_METRICS: dict[str, str] = {
    **{f"pass_at_{k}": f"pass@{k}: unbiased estimate over instances with at least {k} samples" for k in KS},
    "pass_oracle": "share of instances whose ground-truth body passes",
    "pass_stub": "share of instances whose stub body passes (should be 0)",
    "pass_dry_run": "share of instances whose untouched repository passes",
    "execution_success": "share of instances whose untouched repository built and ran its tests",
    "compiled": "share of samples that compiled",
}
#: Statuses of items whose instance could not execute at all (the dry run failed or timed out).
_NOT_EXECUTED = ("invalid_instance", "timeout")


def _mean(values: Sequence[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def instance_entry(record: Mapping[str, Any]) -> dict[str, Any]:
    """What the summary keeps of one scored record."""
    baseline = record.get("baseline") or {}
    return {
        "n": int(record.get("n") or 0),
        "c": int(record.get("c") or 0),
        "pass_oracle": baseline.get("pass_oracle"),
        "pass_stub": baseline.get("pass_stub"),
        "pass_dry_run": baseline.get("pass_dry_run"),
        "samples_compiled": sum(1 for s in record.get("samples") or () if s.get("compiled")),
    }


def metrics(
    instances: Mapping[str, Mapping[str, Any]], not_executed: int, unjudged: int = 0
) -> dict[str, Any]:
    """The metrics over ``{instance: entry}``; ``not_executed`` instances could not run at all;
    ``unjudged`` instances have no score (harness statuses).

    ``pass_at_k`` follows MERA's denominator, the mean over every doc: an unjudged instance scores
    0 in it, at each k some judged instance is measured at; ``pass_at_k_judged`` is over the judged
    ones only."""
    entries = list(instances.values())
    out: dict[str, Any] = {}
    for k in KS:
        value, used = mean_pass_at_k(((e["n"], e["c"]) for e in entries), k)
        out[f"pass_at_{k}"] = None if value is None else value * used / (used + unjudged)
        out[f"pass_at_{k}_instances"] = used + unjudged if used else 0
        out[f"pass_at_{k}_judged"] = value
    for name in ("pass_oracle", "pass_stub", "pass_dry_run"):
        out[name] = _mean([bool(e[name]) for e in entries if e.get(name) is not None])
    executed = len(entries)
    out["execution_success"] = executed / (executed + not_executed) if executed + not_executed else None
    samples = sum(e["n"] for e in entries)
    out["samples"] = samples
    out["samples_passed"] = sum(e["c"] for e in entries)
    out["compiled"] = sum(e["samples_compiled"] for e in entries) / samples if samples else None
    return out


def summarise(records: Sequence[Mapping[str, Any]], rule: str) -> dict[str, Any]:
    by_model: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        by_model.setdefault(str(record["model_name_or_path"]), []).append(record)
    summary: dict[str, Any] = {}
    for model in sorted(by_model):
        model_records = by_model[model]
        instances = {str(r["instance_id"]): instance_entry(r) for r in model_records if is_scored(r)}
        not_executed = sum(1 for r in model_records if r.get("status") in _NOT_EXECUTED)
        unjudged = sum(1 for r in model_records if not is_scored(r))
        summary[model] = {
            "counts": status_counts(model_records),
            "rule": rule,
            **metrics(instances, not_executed, unjudged),
            "instances": instances,
            "missing_predictions": sorted(
                str(r["instance_id"]) for r in model_records if r.get("status") == "missing_prediction"
            ),
            "not_executed": sorted(
                str(r["instance_id"]) for r in model_records if r.get("status") in _NOT_EXECUTED
            ),
        }
    return summary


def overall(summary: Mapping[str, Any]) -> dict[str, Any]:
    """Every model's (instance, model) pairs pooled; the references over the union of instances."""
    pairs: dict[str, dict[str, Any]] = {}
    references: dict[str, Mapping[str, Any]] = {}
    not_executed: set[str] = set()
    unjudged = 0
    for model, model_summary in summary.items():
        for instance, entry in (model_summary.get("instances") or {}).items():
            pairs[f"{model}\0{instance}"] = dict(entry)
            references[instance] = entry
        not_executed.update(model_summary.get("not_executed") or ())
        counts = model_summary.get("counts") or {}
        unjudged += int(counts.get("items", 0)) - int(counts.get("scored", 0))
    pooled = metrics(pairs, 0, unjudged)
    per_instance = metrics(references, len(not_executed - set(references)))
    for name in ("pass_oracle", "pass_stub", "pass_dry_run", "execution_success"):
        pooled[name] = per_instance[name]
    return pooled


def metric_value(model_summary: Mapping[str, Any], metric: str) -> float | None:
    value = model_summary.get(metric)
    return None if value is None else float(value)


def _row(name: str, values: Mapping[str, Any]) -> list[str]:
    return [
        name,
        *(percent(values.get(f"pass_at_{k}")) for k in KS),
        percent(values.get("pass_oracle")),
        percent(values.get("pass_stub")),
        percent(values.get("pass_dry_run")),
        percent(values.get("execution_success")),
        percent(values.get("compiled")),
        str(values.get("samples", 0)),
    ]


def summary_lines(summary: Mapping[str, Any]) -> list[str]:
    if not summary:
        return []
    rule = next(iter(summary.values())).get("rule")
    lines = [f"RealCodeJava (pass rule: {rule}; pass@k over instances with n >= k samples)"]
    header = [
        "model",
        *(f"pass@{k}" for k in KS),
        "oracle",
        "stub",
        "dry run",
        "executed",
        "compiled",
        "samples",
    ]
    rows = [_row(model, values) for model, values in summary.items()]
    if len(summary) > 1:
        rows.append(_row("(all models)", overall(summary)))
    lines.extend(render_table(header, rows))
    for model, values in summary.items():
        lines.append(f"model: {model}  ({format_counts_line(values)})")
        used = ", ".join(f"pass@{k} {values.get(f'pass_at_{k}_instances', 0)}" for k in KS)
        lines.append(f"  instances measured: {used}")
        counts = values.get("counts") or {}
        unjudged = int(counts.get("items", 0)) - int(counts.get("scored", 0))
        if unjudged:
            judged = ", ".join(f"pass@{k} {percent(values.get(f'pass_at_{k}_judged'))}" for k in KS)
            lines.append(
                f"  {unjudged} not judged score 0 above (MERA's mean over all docs); judged only: {judged}"
            )
        lines.extend(format_ids("no prediction (scored as empty)", values.get("missing_predictions") or []))
        lines.extend(format_ids("untouched repository could not run", values.get("not_executed") or []))
    return lines


def junit_properties(record: Mapping[str, Any]) -> list[Property]:
    baseline = record.get("baseline") or {}
    properties: list[Property] = [
        (f"{PREFIX}realcode.rule", scalar(record.get("rule"))),
        (f"{PREFIX}realcode.n", scalar(record.get("n"))),
        (f"{PREFIX}realcode.c", scalar(record.get("c"))),
    ]
    for k, value in (record.get("pass_at_k") or {}).items():
        properties.append((f"{PREFIX}realcode.pass@{k}", scalar(value)))
    for name in ("pass_oracle", "pass_stub", "pass_dry_run"):
        if name in baseline:
            properties.append((f"{PREFIX}realcode.{name}", scalar(baseline[name])))
    statuses = [str(sample.get("status")) for sample in record.get("samples") or ()]
    properties.append((f"{PREFIX}realcode.samples", scalar(statuses)))
    return properties
