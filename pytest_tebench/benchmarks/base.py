"""The benchmark seam: what every benchmark adapter provides to the pytest side.

An adapter turns raw dataset rows into instances, prepares a workspace for an
(instance, prediction) pair, evaluates the prediction there and returns a plain-data result
record, and summarises records into the per-model summary. TEBench is the first adapter;
SWE-bench-style patch evaluation and RealCodeJava completion plug in through the
``pytest_tebench_make_benchmark`` hook without touching the core.

Process roles: ``load_instances`` runs during collection on every process; ``prepare``,
``evaluate`` and ``cleanup`` run on the process that runs the item (an xdist worker, or the
only process); ``summarise`` runs on the controller only, from records.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import Protocol

from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.run.executor import Executor
from pytest_tebench.workspace.repos import RepositoryStore

#: Every status a result record can carry. Only the first three are model scores.
SCORED_STATUSES = ("evaluated", "empty", "not_applied")
HARNESS_STATUSES = ("error", "timeout", "invalid_instance")


@dataclass(frozen=True)
class BenchmarkInstance:
    """An instance as the pytest side sees it; ``payload`` is the adapter's own validated data."""

    instance_id: str
    project: str
    repo: str
    labels: tuple[str, ...]
    origin: str
    payload: Any = None
    #: Set when the row is unusable; items of this instance become pytest errors with this text.
    problem: str | None = None


@dataclass(frozen=True)
class UpdateSettings:
    """How update scoring runs (None in the context when it is switched off)."""

    scoring: str  # "paper" | "reference"
    jdk: str | None
    timeout_compile: float
    timeout_test: float
    maven_version: str | None
    #: The Maven local repository shared by every build of the run.
    maven_repo: Path
    #: Limit of each online warm-up step (a cold one downloads a project's whole build).
    timeout_warmup: float = 1800.0
    #: Runs of gold's selected tests on V0; tests whose outcome changes are flaky and dropped.
    gold_runs: int = 2


@dataclass
class EvalContext:
    """Per-process services an adapter may use while evaluating an item."""

    cache_dir: Path
    work_dir: Path
    repos: RepositoryStore
    allow_non_test_edits: bool = False
    keep_workspaces: bool = False
    update: UpdateSettings | None = None
    #: Returns the process's executor, created on first use (Docker clients are not free).
    executor: Callable[[], Executor] | None = None


class Prepared(Protocol):
    """Whatever ``prepare`` returns; only the adapter looks inside."""


class BenchmarkAdapter(Protocol):
    name: str

    def load_instances(self, records: Sequence[RawRecord]) -> list[BenchmarkInstance]:
        """Validate rows; a bad row becomes an instance with ``problem`` set, never an exception."""
        ...

    def gold_patch(self, instance: BenchmarkInstance) -> str:
        """The reference answer, evaluated when predictions are ``gold``."""
        ...

    def prepare(self, instance: BenchmarkInstance, context: EvalContext) -> Prepared:
        """Build what evaluating any prediction of this instance needs (raise HarnessError if impossible)."""
        ...

    def evaluate(
        self, instance: BenchmarkInstance, prepared: Prepared, prediction: Prediction, context: EvalContext
    ) -> dict[str, Any]:
        """Evaluate ``prediction``; return the plain-data result record (see docs/report-format.md)."""
        ...

    def cleanup(self, prepared: Prepared, context: EvalContext) -> None:
        """Remove the workspace unless the user keeps workspaces."""
        ...

    def summarise(self, records: Sequence[dict[str, Any]], *, options: dict[str, Any]) -> dict[str, Any]:
        """Per-model summary for the JSON report (controller side)."""
        ...

    def summary_lines(self, summary: dict[str, Any]) -> list[str]:
        """Terminal summary lines for the per-model summary."""
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
        "apply_method": None,
        "touched_non_test_files": [],
        "identification": None,
        "update": None,
        "timings": {},
    }
