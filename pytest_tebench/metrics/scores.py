"""Set metrics for one item: precision, recall and F1 over gold and predicted item sets.

These are the per-task numbers of the reference harness (section 2.5 of the reference notes):
TP = |G & P|, FP = |P - G|, FN = |G - P|, each ratio 0 when its denominator is 0. In
particular an empty gold set with an empty prediction scores P = R = F1 = 0, not 1: the
reference penalises it in the macro mean and we keep that so numbers stay comparable.

The helpers here are the only place that divides by a count; :mod:`.aggregate` builds micro,
macro and per-group numbers from them, and :func:`mean` is shared so that "no values" is
always ``None`` rather than a misleading 0.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from collections.abc import Iterable
from typing import TypedDict


class SetScores(TypedDict):
    """Per-item identification scores, the shape of a result record's ``identification`` block."""

    tp: int
    fp: int
    fn: int
    precision: float
    recall: float
    f1: float
    gold_items: list[str]
    predicted_items: list[str]


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, or 0.0 when the denominator is 0 (reference convention)."""
    if denominator == 0:
        return 0.0
    return numerator / denominator


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Precision, recall and F1 from counts.

    P = 0 when tp + fp = 0, R = 0 when tp + fn = 0, F1 = 0 when P + R = 0, exactly as the
    reference's ``aggregate_metrics`` does. Negative counts are a caller bug and raise.
    """
    if tp < 0 or fp < 0 or fn < 0:
        raise ValueError(f"counts must be non-negative, got tp={tp} fp={fp} fn={fn}")
    precision = ratio(tp, tp + fp)
    recall = ratio(tp, tp + fn)
    f1 = ratio(2 * precision * recall, precision + recall)
    return precision, recall, f1


def set_scores(gold: Collection[str], predicted: Collection[str]) -> SetScores:
    """Compare two item collections by exact membership.

    Duplicates are ignored (items are a set in the reference); the returned item lists are
    sorted so that records are byte-identical across runs.
    """
    gold_set = set(gold)
    predicted_set = set(predicted)
    tp = len(gold_set & predicted_set)
    fp = len(predicted_set - gold_set)
    fn = len(gold_set - predicted_set)
    precision, recall, f1 = prf(tp, fp, fn)
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "gold_items": sorted(gold_set),
        "predicted_items": sorted(predicted_set),
    }


def empty_scores(gold: Collection[str]) -> SetScores:
    """Scores of a prediction that identified nothing (status ``empty`` / ``not_applied``).

    Every gold item is a false negative; P = R = F1 = 0 whatever the gold set is.
    """
    return set_scores(gold, ())


def mean(values: Iterable[float | None]) -> float | None:
    """Arithmetic mean of the non-``None`` values, or ``None`` when there are none.

    ``math.fsum`` keeps the result independent of summation order, which matters because
    records arrive in whatever order pytest-xdist workers finish.
    """
    present = [float(v) for v in values if v is not None]
    if not present:
        return None
    return math.fsum(present) / len(present)
