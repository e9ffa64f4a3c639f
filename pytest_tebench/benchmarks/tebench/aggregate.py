"""Aggregate per-item result records into per-model benchmark scores.

Input is the stream of plain-dict result records the controller collects (one per
instance x prediction). Output is a JSON-ready summary keyed by ``model_name_or_path`` with
counts, identification scores (micro, macro, by label, by project) and update scores.

Decisions, all following the reference harness notes (sections 2.6 and 3.7):

* Statuses ``evaluated``, ``empty``, ``not_applied`` and ``missing_prediction`` are *scored*: the
  latter three are model failures and the harness already filled their blocks with zeros.
  ``error``, ``timeout`` and ``invalid_instance`` are harness/dataset trouble and never enter a
  mean or a sum; they are counted and listed by id instead (the reference silently shrank its
  denominator, we make the shrinkage visible). An unknown status is treated as an error for the
  same reason: it
  must never quietly become a score. One exception: a ``timeout`` record keeps the
  identification block computed before its build, and that block counts in identification
  (it is finished and the model's own); only its update block stays out. Otherwise a
  prediction whose tests hang would escape a poor identification score.
* Micro (the headline) sums TP/FP/FN then applies :func:`~.scores.prf`; macro averages the
  per-item P, R and F1 directly, as the reference does.
* Per-label numbers use reconstruction (a) of the reference notes: micro over the subset of
  instances carrying the label, so a multi-label instance counts in every one of its labels.
  A group without items reports ``None`` (``null``) rather than 0 so that "not measured"
  never reads as "scored zero".
* Update OA is the arithmetic mean of per-item ``s_update`` over scored items with an update
  block; per-label OA is the mean over the items carrying the label.

Determinism: there is one record per item (per submitted line: a duplicate line is an error
record of its own, never a replacement of the scored one), processed in (model, instance_id,
origin) order, so the summary does not depend on the order in which pytest-xdist workers finished.

Statuses (``metrics/outcomes.py``): ``missing_prediction`` (an instance the model has no line
for) is scored like ``empty``: all of gold is FN, every update score 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from pytest_tebench.benchmarks.tebench.settings import LABELS
from pytest_tebench.metrics.outcomes import SCORED_STATUSES
from pytest_tebench.metrics.outcomes import ids_with_status
from pytest_tebench.metrics.outcomes import is_scored
from pytest_tebench.metrics.outcomes import status_counts
from pytest_tebench.metrics.scores import mean
from pytest_tebench.metrics.scores import prf

#: A result record as produced by the item runner (plain, JSON-ready).
Record = Mapping[str, Any]

#: The group of records whose instance has no label (datasets made by other tools often have none).
UNLABELED = "unlabeled"
#: Statuses whose identification block is scored: a timeout hit the build, after identification.
IDENTIFIED_STATUSES: frozenset[str] = frozenset({*SCORED_STATUSES, "timeout"})

#: The component scores of the update stage, in the order the paper describes them.
UPDATE_COMPONENTS: tuple[str, ...] = ("s_exec", "s_line", "s_branch", "s_mod")


def summarise(records: Iterable[Record], *, update_scoring: str | None) -> dict[str, dict[str, Any]]:
    """Per-model summary of a run, keyed (and ordered) by ``model_name_or_path``.

    ``update_scoring`` names the composite formula the update scores were computed with (e.g.
    ``"paper"`` or ``"reference"``) and is echoed in the update block so a report is
    self-describing.
    """
    by_model: dict[str, list[Record]] = {}
    # one record per submitted line: a duplicate line is its own (error) record, never a
    # replacement of the scored one
    for record in sorted(records, key=_order):
        by_model.setdefault(str(record["model_name_or_path"]), []).append(record)
    return {model: _summarise_model(by_model[model], update_scoring) for model in sorted(by_model)}


def _order(record: Record) -> tuple[str, str, str]:
    try:
        return (str(record["model_name_or_path"]), str(record["instance_id"]), str(record.get("origin", "")))
    except KeyError as exc:
        raise ValueError(f"result record lacks required field {exc.args[0]!r}: {dict(record)!r}") from None


def _summarise_model(records: Sequence[Record], update_scoring: str | None) -> dict[str, Any]:
    scored = [record for record in records if is_scored(record)]
    return {
        "counts": status_counts(records),
        "identification": _identification([r for r in records if r.get("status") in IDENTIFIED_STATUSES]),
        "update": _update(scored, update_scoring),
        "errors": sorted(
            str(r["instance_id"])
            for r in records
            if not is_scored(r) and r.get("status") != "invalid_instance"
        ),
        "invalid_instances": ids_with_status(records, ["invalid_instance"]),
        "missing_predictions": ids_with_status(records, ["missing_prediction"]),
        # the Maven versions the builds really ran with (from Maven's -V banner)
        "maven_versions": sorted(
            {
                str(r["update"]["maven_version"])
                for r in records
                if (r.get("update") or {}).get("maven_version")
            }
        ),
        # instances whose gold had flaky selected tests (dropped from the selection, see the records)
        "flaky_gold": sorted(
            str(r["instance_id"]) for r in records if ((r.get("update") or {}).get("gold") or {}).get("flaky")
        ),
        # instances whose gold selected tests the project's build never runs (left out likewise)
        "not_tests_gold": sorted(
            str(r["instance_id"])
            for r in records
            if ((r.get("update") or {}).get("gold") or {}).get("not_tests")
        ),
        # instances whose gold, and so every prediction, ran on another JDK than the build files chose
        "jdk_moved_gold": sorted(
            str(r["instance_id"])
            for r in records
            if ((r.get("update") or {}).get("gold") or {}).get("jdk_retry")
        ),
    }


def labels_of(record: Record) -> list[str]:
    """The record's labels, deduplicated, in table order (paper labels first, then others
    sorted); ``["unlabeled"]`` for an instance without labels."""
    labels = {str(label) for label in record.get("labels") or ()} or {UNLABELED}
    return [label for label in LABELS if label in labels] + sorted(labels - set(LABELS))


def _label_order(records: Iterable[Record]) -> list[str]:
    """Every label to report: the paper's three always (even when empty), then any extra ones."""
    extra: set[str] = set()
    for record in records:
        extra.update(labels_of(record))
    return list(LABELS) + sorted(extra - set(LABELS))


def _micro(blocks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Micro P/R/F1 over identification blocks; all values ``None`` when there are none."""
    if not blocks:
        return {"precision": None, "recall": None, "f1": None, "tp": None, "fp": None, "fn": None, "items": 0}
    tp = sum(int(block["tp"]) for block in blocks)
    fp = sum(int(block["fp"]) for block in blocks)
    fn = sum(int(block["fn"]) for block in blocks)
    precision, recall, f1 = prf(tp, fp, fn)
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "items": len(blocks),
    }


def _macro(blocks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "precision": mean(float(block["precision"]) for block in blocks),
        "recall": mean(float(block["recall"]) for block in blocks),
        "f1": mean(float(block["f1"]) for block in blocks),
        "items": len(blocks),
    }


def _identification(scored: Sequence[Record]) -> dict[str, Any]:
    # A scored record may lack the block when identification was not requested for the run.
    with_block = [record for record in scored if record.get("identification") is not None]
    blocks = [record["identification"] for record in with_block]
    by_label = {
        label: _micro([r["identification"] for r in with_block if label in labels_of(r)])
        for label in _label_order(with_block)
    }
    projects = sorted({str(record.get("project", "")) for record in with_block})
    by_project = {
        project: _micro([r["identification"] for r in with_block if str(r.get("project", "")) == project])
        for project in projects
    }
    return {
        "micro": _micro(blocks),
        "macro": _macro(blocks),
        "by_label": by_label,
        "by_project": by_project,
    }


def _oa_group(blocks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {"oa": mean(float(block["s_update"]) for block in blocks), "items": len(blocks)}


def _update(scored: Sequence[Record], update_scoring: str | None) -> dict[str, Any] | None:
    with_block = [record for record in scored if record.get("update") is not None]
    if not with_block:
        return None
    blocks = [record["update"] for record in with_block]
    projects = sorted({str(record.get("project", "")) for record in with_block})
    return {
        "oa": mean(float(block["s_update"]) for block in blocks),
        "items": len(blocks),
        # Coverage components are None when the ground truth has nothing to cover; such items
        # are left out of that component's mean instead of counting as 0.
        "means": {
            name: mean(None if block.get(name) is None else float(block[name]) for block in blocks)
            for name in UPDATE_COMPONENTS
        },
        "by_label": {
            label: _oa_group([r["update"] for r in with_block if label in labels_of(r)])
            for label in _label_order(with_block)
        },
        "by_project": {
            project: _oa_group([r["update"] for r in with_block if str(r.get("project", "")) == project])
            for project in projects
        },
        "no_coverage_change": sum(1 for block in blocks if block.get("gt_has_coverage_change") is False),
        "scoring": update_scoring,
    }
