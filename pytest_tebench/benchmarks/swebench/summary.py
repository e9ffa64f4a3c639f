"""SWE-bench figures from result records: per model and per repository, and the official run report.

The headline is SWE-bench's own figure: resolved instances over **all** instances of the run for
the model (its run report's ``resolved_instances / total_instances``, the leaderboard's %), so an
instance the harness could not judge counts as not resolved there, as it does in SWE-bench.
Beside it: the share of the judged instances (``evaluated``, ``empty``, ``not_applied``,
``missing_prediction``, ``refused``: it changes the test runner's files, ``tampered``: the runner
was interfered with; the model's results, the last five unresolved), with the instances not judged
named by status (``error``, ``timeout``, ``invalid_instance``, ``unsupported_environment``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_tebench.metrics.outcomes import SCORED_STATUSES
from pytest_tebench.metrics.outcomes import is_scored
from pytest_tebench.metrics.outcomes import not_scored_by_status
from pytest_tebench.metrics.outcomes import status_counts
from pytest_tebench.report.properties import PREFIX
from pytest_tebench.report.properties import Property
from pytest_tebench.report.properties import scalar
from pytest_tebench.report.terminal import percent

#: Judged items: the model's results (a missing prediction is unresolved, as in SWE-bench).
MODEL_STATUSES = SCORED_STATUSES
UNSUPPORTED = "unsupported_environment"
#: The official run report's schema (SWE-bench ``reporting.make_run_report``).
RUN_REPORT_SCHEMA_VERSION = 2

Record = Mapping[str, Any]


def is_resolved(record: Record) -> bool:
    return record.get("status") == "evaluated" and bool((record.get("swebench") or {}).get("resolved"))


def _counts(records: Sequence[Record]) -> dict[str, Any]:
    statuses = [str(r.get("status")) for r in records]
    judged = [r for r in records if is_scored(r)]
    resolved = sum(1 for r in judged if is_resolved(r))
    not_judged = not_scored_by_status(records)
    return {
        # every instance of the run for the model: SWE-bench's total_instances
        "items": len(records),
        "judged": len(judged),
        "resolved": resolved,
        "unresolved": len(judged) - resolved,
        # the headline (SWE-bench's figure), then the share of the judged
        "resolved_rate": resolved / len(records) if records else None,
        "resolved_rate_judged": resolved / len(judged) if judged else None,
        "empty": statuses.count("empty"),
        "missing_prediction": statuses.count("missing_prediction"),
        "not_applied": statuses.count("not_applied"),
        "refused": statuses.count("refused"),
        "tampered": statuses.count("tampered"),
        "unsupported_environment": statuses.count(UNSUPPORTED),
        "harness_errors": sum(n for status, n in not_judged.items() if status != UNSUPPORTED),
        "not_judged": not_judged,
    }


def grouped(records: Sequence[Record], field: str) -> dict[str, list[Record]]:
    """The records by ``str(record.get(field))`` (a model, a repository), the keys sorted (SWE-bench,
    SWT-bench)."""
    groups: dict[str, list[Record]] = {}
    for record in records:
        groups.setdefault(str(record.get(field)), []).append(record)
    return {key: groups[key] for key in sorted(groups)}


def unsupported_reasons(records: Sequence[Record]) -> dict[str, str]:
    """``{instance_id: reason}`` of the records of an unsupported environment (SWE-bench, SWT-bench)."""
    return {
        str(r["instance_id"]): str(r.get("error") or "") for r in records if r.get("status") == UNSUPPORTED
    }


def harness_errors_by_instance(records: Sequence[Record]) -> dict[str, str]:
    """``{instance_id: status}`` of the records neither judged nor of an unsupported environment
    (SWE-bench, SWT-bench)."""
    return {
        str(r["instance_id"]): str(r.get("status"))
        for r in records
        if not is_scored(r) and r.get("status") != UNSUPPORTED
    }


def summarise(records: Sequence[Record]) -> dict[str, Any]:
    """``{model: {counts..., by_repo: {repo: counts}, unsupported: {id: reason}, errors: {id: status}}}``."""
    summary: dict[str, Any] = {}
    for model, model_records in grouped(records, "model_name_or_path").items():
        repos = grouped(model_records, "project")
        summary[model] = {
            **_counts(model_records),
            # the neutral counts per status (the HTML leaderboard shows them beside the figures)
            "counts": status_counts(model_records),
            "by_repo": {repo: _counts(repo_records) for repo, repo_records in repos.items()},
            "unsupported": unsupported_reasons(model_records),
            "refused_ids": sorted(
                str(r["instance_id"]) for r in model_records if r.get("status") == "refused"
            ),
            "tampered_ids": sorted(
                str(r["instance_id"]) for r in model_records if r.get("status") == "tampered"
            ),
            "harness_errors_by_instance": harness_errors_by_instance(model_records),
        }
    return summary


def _pct(value: float | None) -> str:
    shown = percent(value)
    return shown if value is None else f"{shown}%"


def not_judged_text(counts: Mapping[str, Any]) -> str:
    """``"9 (error 6, unsupported_environment 3)"``, or ``"0"``."""
    named = ", ".join(f"{status} {n}" for status, n in (counts.get("not_judged") or {}).items())
    total = sum((counts.get("not_judged") or {}).values())
    return f"{total} ({named})" if named else "0"


def summary_lines(summary: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    for model, block in summary.items():
        lines.append(
            f"model: {model}  resolved {block['resolved']}/{block['items']} = "
            f"{_pct(block['resolved_rate'])} of all instances (SWE-bench's figure); "
            f"{block['resolved']}/{block['judged']} = {_pct(block['resolved_rate_judged'])} of the judged"
        )
        lines.append(
            f"  not judged: {not_judged_text(block)}; judged: empty {block['empty']}, "
            f"missing {block['missing_prediction']}, not applied {block['not_applied']}, "
            f"refused {block['refused']}, tampered {block['tampered']}"
        )
        lines.append(
            f"  {'repository':<34} {'all':>5} {'judged':>6} {'resolved':>8} {'% all':>7} {'% judged':>8} "
            f"{'unsupp.':>7} {'errors':>6}"
        )
        for repo, counts in block["by_repo"].items():
            lines.append(
                f"  {repo:<34} {counts['items']:>5} {counts['judged']:>6} {counts['resolved']:>8} "
                f"{_pct(counts['resolved_rate']):>7} {_pct(counts['resolved_rate_judged']):>8} "
                f"{counts['unsupported_environment']:>7} {counts['harness_errors']:>6}"
            )
        for what, ids in (("refused", block["refused_ids"]), ("tampered", block["tampered_ids"])):
            lines += [f"  {what} (the prediction tried to grade itself): {', '.join(ids)}"] if ids else []
        reasons = sorted(set(block["unsupported"].values()))
        for reason in reasons:
            lines.append(f"  unsupported: {reason}")
        lines.append("")
    return lines


#: The run-level JUnit properties of each model (``tebench.swebench.<model>.<field>``).
SUITE_FIELDS = (
    "resolved", "items", "resolved_rate", "judged", "resolved_rate_judged",
    "empty", "missing_prediction", "not_applied", "refused", "tampered", "unsupported_environment",
    "harness_errors",
)  # fmt: skip


def summary_properties(summary: Mapping[str, Any]) -> list[Property]:
    """Each model's headline and the counts beside it, for ``<testsuite><properties>``; the
    statuses not judged as one ``status=n,...`` value."""
    properties: list[Property] = []
    for model, block in summary.items():
        name = f"{PREFIX}swebench.{model}."
        properties += [(name + key, scalar(block.get(key))) for key in SUITE_FIELDS]
        not_judged = block.get("not_judged") or {}
        properties.append((name + "not_judged", ",".join(f"{s}={n}" for s, n in not_judged.items())))
    return properties


def run_report(records: Sequence[Record], model: str) -> dict[str, Any]:
    """SWE-bench's run report (``<model>.<run_id>.json``, schema 2) for ``model``'s records.

    As ``reporting.make_run_report`` counts: ``total_instances`` = every instance of the run for
    the model; ``submitted`` = those with a prediction (a ``missing_prediction`` is ``incomplete``);
    ``empty_patch`` = an empty prediction; ``completed`` = graded; ``error`` = submitted, not empty,
    not graded (a patch that does not apply, a timeout, a harness error, an unsupported
    environment). ``unsupported_environment_ids`` is ours (also inside ``error_ids``), and so are
    ``refused_ids`` and ``tampered_ids`` (also inside ``unresolved_ids``: the model's results,
    never errors; a tampered run was graded, so it is ``completed`` too).
    """
    mine = sorted(
        (r for r in records if r.get("model_name_or_path") == model), key=lambda r: str(r["instance_id"])
    )
    ids = [str(r["instance_id"]) for r in mine]

    def having(*statuses: str) -> list[str]:
        return [str(r["instance_id"]) for r in mine if r.get("status") in statuses]

    completed = having("evaluated", "tampered")
    resolved = [str(r["instance_id"]) for r in mine if is_resolved(r)]
    refused = having("refused")
    # refused and tampered predictions are the model's unresolved results, not errors of the run
    unresolved = sorted([i for i in completed if i not in set(resolved)] + refused)
    incomplete = having("missing_prediction")
    submitted = [i for i in ids if i not in set(incomplete)]
    empty = having("empty")
    errors = [
        str(r["instance_id"])
        for r in mine
        if r.get("status") not in ("evaluated", "empty", "missing_prediction", "refused", "tampered")
    ]
    return {
        "total_instances": len(ids),
        "submitted_instances": len(submitted),
        "completed_instances": len(completed),
        "resolved_instances": len(resolved),
        "unresolved_instances": len(unresolved),
        "empty_patch_instances": len(empty),
        "error_instances": len(errors),
        "completed_ids": completed,
        "incomplete_ids": incomplete,
        "empty_patch_ids": empty,
        "submitted_ids": submitted,
        "resolved_ids": resolved,
        "unresolved_ids": unresolved,
        "error_ids": errors,
        "unsupported_environment_ids": having(UNSUPPORTED),
        "refused_ids": refused,
        "tampered_ids": having("tampered"),
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
