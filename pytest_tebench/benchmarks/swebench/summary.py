"""SWE-bench figures from result records: per model and per repository, and the official run report.

Statuses: ``evaluated`` (the log was graded; ``swebench.resolved`` says whether it resolved),
``empty``, ``not_applied``, ``refused`` (it changes the test runner's files) and ``tampered`` (the
runner was interfered with) are a model's results, the last four unresolved; ``error``,
``timeout``, ``invalid_instance`` and ``unsupported_environment`` are the harness's and never
count for or against a model: the resolved percentage is over the model's results only, and the
excluded items are listed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Judged items: a missing prediction counts as unresolved against the total, as SWE-bench's
#: leaderboards count an instance without a patch.
MODEL_STATUSES = ("evaluated", "empty", "not_applied", "missing_prediction", "refused", "tampered")
UNSUPPORTED = "unsupported_environment"
#: The official run report's schema (SWE-bench ``reporting.make_run_report``).
RUN_REPORT_SCHEMA_VERSION = 2

Record = Mapping[str, Any]


def is_resolved(record: Record) -> bool:
    return record.get("status") == "evaluated" and bool((record.get("swebench") or {}).get("resolved"))


def _counts(records: Sequence[Record]) -> dict[str, Any]:
    statuses = [str(r.get("status")) for r in records]
    judged = [r for r in records if r.get("status") in MODEL_STATUSES]
    resolved = sum(1 for r in judged if is_resolved(r))
    return {
        "items": len(records),
        "judged": len(judged),
        "resolved": resolved,
        "unresolved": len(judged) - resolved,
        "resolved_pct": round(100.0 * resolved / len(judged), 2) if judged else None,
        "empty": statuses.count("empty"),
        "not_applied": statuses.count("not_applied"),
        "refused": statuses.count("refused"),
        "tampered": statuses.count("tampered"),
        "unsupported_environment": statuses.count(UNSUPPORTED),
        "harness_errors": sum(1 for s in statuses if s not in MODEL_STATUSES and s != UNSUPPORTED),
    }


def summarise(records: Sequence[Record]) -> dict[str, Any]:
    """``{model: {counts..., by_repo: {repo: counts}, unsupported: {id: reason}, errors: {id: status}}}``."""
    by_model: dict[str, list[Record]] = {}
    for record in records:
        by_model.setdefault(str(record.get("model_name_or_path")), []).append(record)
    summary: dict[str, Any] = {}
    for model in sorted(by_model):
        model_records = by_model[model]
        repos: dict[str, list[Record]] = {}
        for record in model_records:
            repos.setdefault(str(record.get("project")), []).append(record)
        summary[model] = {
            **_counts(model_records),
            "by_repo": {repo: _counts(repos[repo]) for repo in sorted(repos)},
            "unsupported": {
                str(r["instance_id"]): str(r.get("error") or "")
                for r in model_records
                if r.get("status") == UNSUPPORTED
            },
            "refused_ids": sorted(
                str(r["instance_id"]) for r in model_records if r.get("status") == "refused"
            ),
            "tampered_ids": sorted(
                str(r["instance_id"]) for r in model_records if r.get("status") == "tampered"
            ),
            "harness_errors_by_instance": {
                str(r["instance_id"]): str(r.get("status"))
                for r in model_records
                if r.get("status") not in MODEL_STATUSES and r.get("status") != UNSUPPORTED
            },
        }
    return summary


def _pct(counts: Mapping[str, Any]) -> str:
    pct = counts.get("resolved_pct")
    return "  n/a" if pct is None else f"{pct:5.1f}%"


def summary_lines(summary: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    for model, block in summary.items():
        lines.append(
            f"model: {model}  resolved {block['resolved']}/{block['judged']} ({_pct(block).strip()})  "
            f"[empty {block['empty']}, not applied {block['not_applied']}, "
            f"refused {block['refused']}, tampered {block['tampered']}; not scored: "
            f"unsupported environment {block['unsupported_environment']}, "
            f"harness errors {block['harness_errors']}]"
        )
        lines.append(
            f"  {'repository':<34} {'judged':>6} {'resolved':>8} {'%':>7} {'unsupp.':>7} {'errors':>6}"
        )
        for repo, counts in block["by_repo"].items():
            lines.append(
                f"  {repo:<34} {counts['judged']:>6} {counts['resolved']:>8} {_pct(counts):>7} "
                f"{counts['unsupported_environment']:>7} {counts['harness_errors']:>6}"
            )
        for what, ids in (("refused", block["refused_ids"]), ("tampered", block["tampered_ids"])):
            lines += [f"  {what} (the prediction tried to grade itself): {', '.join(ids)}"] if ids else []
        reasons = sorted(set(block["unsupported"].values()))
        for reason in reasons:
            lines.append(f"  unsupported: {reason}")
        lines.append("")
    return lines


def run_report(records: Sequence[Record], model: str) -> dict[str, Any]:
    """SWE-bench's run report (``<model>.<run_id>.json``, schema 2) for ``model``'s records.

    ``completed`` = graded; ``error`` = not graded for any reason other than an empty patch (a
    patch that does not apply, a timeout, a harness error, an unsupported environment), as in
    SWE-bench. ``total_instances`` is the number of instances the run evaluated for the model.
    ``unsupported_environment_ids`` is ours (also inside ``error_ids``), and so are ``refused_ids``
    and ``tampered_ids`` (also inside ``unresolved_ids``: the model's results, never errors).
    """
    mine = sorted(
        (r for r in records if r.get("model_name_or_path") == model), key=lambda r: str(r["instance_id"])
    )
    ids = [str(r["instance_id"]) for r in mine]
    completed = [str(r["instance_id"]) for r in mine if r.get("status") in ("evaluated", "tampered")]
    resolved = [str(r["instance_id"]) for r in mine if is_resolved(r)]
    refused = [str(r["instance_id"]) for r in mine if r.get("status") == "refused"]
    tampered = [str(r["instance_id"]) for r in mine if r.get("status") == "tampered"]
    # refused and tampered predictions are the model's unresolved results, not errors of the run
    unresolved = sorted([i for i in completed if i not in set(resolved)] + refused)
    empty = [str(r["instance_id"]) for r in mine if r.get("status") == "empty"]
    errors = [
        str(r["instance_id"])
        for r in mine
        if r.get("status") not in ("evaluated", "empty", "refused", "tampered")
    ]
    unsupported = [str(r["instance_id"]) for r in mine if r.get("status") == UNSUPPORTED]
    return {
        "total_instances": len(ids),
        "submitted_instances": len(ids),
        "completed_instances": len(completed),
        "resolved_instances": len(resolved),
        "unresolved_instances": len(unresolved),
        "empty_patch_instances": len(empty),
        "error_instances": len(errors),
        "completed_ids": completed,
        "incomplete_ids": [],
        "empty_patch_ids": empty,
        "submitted_ids": ids,
        "resolved_ids": resolved,
        "unresolved_ids": unresolved,
        "error_ids": errors,
        "unsupported_environment_ids": unsupported,
        "refused_ids": refused,
        "tampered_ids": tampered,
        "schema_version": RUN_REPORT_SCHEMA_VERSION,
    }


def run_report_paths(path: Path, models: Sequence[str]) -> dict[str, Path]:
    """Where each model's run report goes: ``path`` for one model, ``<stem>.<model><suffix>`` for several."""
    if len(models) == 1:
        return {models[0]: path}
    return {
        model: path.with_name(f"{path.stem}.{re.sub(r'[^A-Za-z0-9_.-]+', '__', model)}{path.suffix}")
        for model in models
    }
