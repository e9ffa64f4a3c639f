"""The items of a run: one per prediction line, then one per instance a model has no line for.

One plan, two readers. An xdist worker (or the single process) collects its pytest items from
it; the controller derives it again only when a worker dies in the middle of an item, to give
that item the record its worker never sent (:func:`error_record`), so a crash is listed as a
harness error by instance and model, never dropped from the report and its denominators.
Plain data in, plain data out: no pytest here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.base import base_record
from pytest_tebench.benchmarks.base import is_row_id
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.instance.predictions import missing_prediction


@dataclass(frozen=True)
class PlannedItem:
    """One item: its name (``id[model]``, ``#2`` for a repeated one), what it evaluates, and why
    it cannot be evaluated (``problem``: it becomes an error item naming the file and line)."""

    name: str
    prediction: Prediction
    instance: BenchmarkInstance | None
    problem: str | None
    lineno: int


def plan_items(
    instances: Sequence[BenchmarkInstance],
    predictions: Sequence[Prediction],
    *,
    dataset: str,
    with_missing: bool,
) -> list[PlannedItem]:
    """Items in file order (dataset order for gold), then, with ``with_missing``, a stand-in per
    (model, instance) the file has no evaluable line for, so every process plans the same ids in
    the same order."""
    by_id: dict[str, BenchmarkInstance] = {}
    for row in instances:
        # a later row repeating an id is the adapter's duplicate: the first usable row stands
        known = by_id.get(row.instance_id)
        if known is None or (known.problem is not None and row.problem is None):
            by_id[row.instance_id] = row
    names: dict[str, int] = {}
    planned: list[PlannedItem] = []

    def add(
        prediction: Prediction, instance: BenchmarkInstance | None, problem: str | None, lineno: int
    ) -> None:
        name = _unique(names, _item_name(prediction, lineno))
        planned.append(PlannedItem(name, prediction, instance, problem, lineno))

    for lineno, prediction in enumerate(predictions):
        instance = by_id.get(prediction.instance_id)
        problem = prediction.problem
        if problem is None and instance is None:
            problem = f"unknown instance_id {prediction.instance_id!r} (not in dataset {dataset!r})"
        if problem is not None:
            problem = f"{prediction.origin}: {problem}"
        elif instance is not None and instance.problem is not None:
            problem = instance.problem
        add(prediction, instance, problem, lineno)
    if with_missing:
        for prediction in _missing(instances, predictions):
            instance = by_id[prediction.instance_id]
            # a dataset row no prediction could name (unreadable, no instance_id) is an error
            # item per model, never dropped unseen
            add(prediction, instance, instance.problem, len(predictions))
    return planned


def error_record(item: PlannedItem, message: str, status: str = "error") -> dict[str, Any]:
    """The record of an item that could not be evaluated: a harness failure, never a score."""
    instance = item.instance or BenchmarkInstance(
        # a line with no readable id is named like its item, minus the model: "entry4"
        item.prediction.instance_id or item.name.split("[", 1)[0],
        "unknown",
        "",
        (),
        item.prediction.origin,
    )
    record = base_record(instance, item.prediction, status)
    record["model_name_or_path"] = item.prediction.model_name_or_path or "unknown-model"
    record["instance_id"] = instance.instance_id
    record["error"] = message
    return record


def _missing(instances: Sequence[BenchmarkInstance], predictions: Sequence[Prediction]) -> list[Prediction]:
    """A stand-in per (model, valid instance) the file has no evaluable line for.

    A malformed line for an instance does not excuse it: the line is an error item, and the
    instance still counts for the model, as empty. A dataset row that is no instance at all (its
    ``<row file:N>`` id, which no prediction can name) gets one too: its item is the row's error.
    Models in order of first appearance, instances in dataset order.
    """
    models = list(dict.fromkeys(p.model_name_or_path for p in predictions if p.model_name_or_path))
    answered = {(p.model_name_or_path, p.instance_id) for p in predictions if p.problem is None}
    named = {p.instance_id for p in predictions}
    return [
        missing_prediction(instance.instance_id, model)
        for model in models
        for instance in instances
        if (model, instance.instance_id) not in answered
        and (
            instance.problem is None
            or (is_row_id(instance.instance_id) and instance.instance_id not in named)
        )
    ]


def _item_name(prediction: Prediction, index: int) -> str:
    instance_id = prediction.instance_id or f"entry{index + 1}"
    model = prediction.model_name_or_path or "unknown-model"
    return f"{instance_id}[{model}]"


def _unique(names: dict[str, int], name: str) -> str:
    count = names.get(name, 0) + 1
    names[name] = count
    return name if count == 1 else f"{name}#{count}"
