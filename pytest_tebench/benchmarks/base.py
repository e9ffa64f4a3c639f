"""The benchmark contract: what every benchmark adapter provides to the benchmark-neutral core.

An adapter turns raw dataset rows into instances, prepares what evaluating an instance needs,
evaluates one prediction into a plain-data result record, and summarises records per model. It
also declares what the generic pytest layer shows for it: its markers, the metrics
``--tebench-fail-under`` may gate on, its JUnit properties and its terminal lines. TEBench is in
``benchmarks/tebench/``; a plugin or a conftest adds a benchmark through the
``pytest_tebench_make_benchmark`` hook without touching the core (the test suite has one written
entirely in a conftest: tests/test_hooks.py).

Process roles: ``load_instances`` runs during collection on every process; ``prepare``,
``evaluate`` and ``cleanup`` run on the process that runs the item (an xdist worker, or the only
process); ``summarise``, ``metric_value``, ``summary_lines`` and ``report_fields`` run on the
controller only, from records.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import Protocol

from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.metrics.outcomes import HARNESS_STATUSES
from pytest_tebench.metrics.outcomes import SCORED_STATUSES
from pytest_tebench.report.properties import Property
from pytest_tebench.run.executor import Executor
from pytest_tebench.workspace.repos import RepositoryStore

__all__ = ["HARNESS_STATUSES", "SCORED_STATUSES", "BenchmarkAdapter", "BenchmarkInstance", "EvalContext"]


#: The id of a dataset row that names no instance, before its origin (``<row file.jsonl:4>``).
_ROW_ID = "<row "


def row_id(origin: str) -> str:
    """The id an adapter gives a row without a usable ``instance_id``: its origin, which no
    prediction can name."""
    return f"{_ROW_ID}{origin}>"


def is_row_id(instance_id: str) -> bool:
    """``instance_id`` is :func:`row_id`'s: the row named no instance."""
    return instance_id.startswith(_ROW_ID)


@dataclass(frozen=True)
class BenchmarkInstance:
    """An instance as the core sees it; ``payload`` is the adapter's own validated data."""

    instance_id: str
    #: Grouping for markers and per-project tables (a repository's name, say).
    project: str
    #: ``owner/name`` of the repository, or "" for benchmarks without one.
    repo: str
    #: Marker names the adapter gives this instance (registered through ``BenchmarkAdapter.markers``).
    labels: tuple[str, ...]
    origin: str
    payload: Any = None
    #: Set when the row is unusable; items of this instance become pytest errors with this text.
    problem: str | None = None


@dataclass
class EvalContext:
    """Per-process services an adapter may use while evaluating an item (benchmark-neutral).

    What is particular to one benchmark (TEBench's scoring, Maven settings) is the adapter's
    own state, made from the run's option values when the adapter is made.
    """

    cache_dir: Path
    work_dir: Path
    repos: RepositoryStore
    keep_workspaces: bool = False
    #: Returns the process's executor, created on first use (Docker clients are not free).
    executor: Callable[[], Executor] | None = None


class Prepared(Protocol):
    """Whatever ``prepare`` returns; only the adapter looks inside."""


class BenchmarkAdapter(Protocol):
    #: The ``--tebench-benchmark`` name.
    name: str
    #: Marker lines (``"name: description"``) registered when this benchmark runs; instance labels
    #: not listed here are registered on first use.
    markers: tuple[str, ...]
    #: Metrics ``--tebench-fail-under=METRIC=X`` accepts, with a one-line description each.
    gate_metrics: Mapping[str, str]
    #: Thresholds the adapter's own options ask for (e.g. TEBench's ``--tebench-min-f1``).
    thresholds: tuple[tuple[str, float], ...]
    #: Whether items run builds through an executor (no executor is made otherwise).
    uses_executor: bool
    #: The benchmark's own record fields, in the order the JSON report shows them.
    record_fields: tuple[str, ...]

    def load_instances(self, records: Sequence[RawRecord]) -> list[BenchmarkInstance]:
        """Validate rows; a bad row becomes an instance with ``problem`` set, never an exception."""
        ...

    def gold_patch(self, instance: BenchmarkInstance) -> str:
        """The reference answer, evaluated when predictions are ``gold``."""
        ...

    def cache_key(self, instance: BenchmarkInstance) -> str | None:
        """What decides an item's result besides the prediction and the toolchain: the instance's
        content and the benchmark's scoring settings (a string; hashed by the core). None: never
        reuse results of this instance."""
        ...

    def prepare(self, instance: BenchmarkInstance, context: EvalContext) -> Prepared:
        """Build what evaluating any prediction of this instance needs (raise HarnessError if impossible)."""
        ...

    def evaluate(
        self, instance: BenchmarkInstance, prepared: Prepared, prediction: Prediction, context: EvalContext
    ) -> dict[str, Any]:
        """Evaluate ``prediction``; return the result record: :func:`base_record` plus the
        benchmark's own fields (see docs/report-format.md). An empty prediction is scored."""
        ...

    def cleanup(self, prepared: Prepared, context: EvalContext) -> None:
        """Remove the workspace unless the user keeps workspaces."""
        ...

    def summarise(self, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """Per-model summary ``{model: {...}}`` for the JSON report (controller side)."""
        ...

    def metric_value(self, model_summary: Mapping[str, Any], metric: str) -> float | None:
        """The value of a gateable metric in one model's summary (None: not measured)."""
        ...

    def summary_lines(self, summary: Mapping[str, Any]) -> list[str]:
        """Terminal summary lines for the per-model summary."""
        ...

    def junit_properties(self, record: Mapping[str, Any]) -> list[Property]:
        """The benchmark's own JUnit properties of a record (the core adds the neutral ones)."""
        ...

    def report_fields(self) -> dict[str, Any]:
        """Top-level fields of the JSON report that describe this benchmark's settings."""
        ...

    def verdict(self, record: Mapping[str, Any]) -> str | None:
        """Why an ``evaluated`` item fails as a pytest item (SWE-bench: unresolved), or None."""
        ...

    def write_reports(self, report: Mapping[str, Any]) -> None:
        """Write the benchmark's own report formats from the final JSON report (controller;
        SWE-bench's run report). Raise :class:`~pytest_tebench.errors.InputError` on failure."""
        ...


def base_record(instance: BenchmarkInstance, prediction: Prediction, status: str) -> dict[str, Any]:
    """The fields every result record starts with, whatever the benchmark."""
    return {
        "instance_id": instance.instance_id,
        "model_name_or_path": prediction.model_name_or_path,
        "project": instance.project,
        "labels": list(instance.labels),
        "status": status,
        "error": None,
        # which submitted line this is ("run.jsonl:12"): duplicates are records of their own
        "origin": Path(prediction.origin).name,
        "extraction": prediction.extraction,
        "timings": {},
    }
