"""Collection: one pytest item per (instance x prediction).

The anchor file (see ``roles.anchor_path``) is collected as a :class:`TebenchFile`. Items are
built in file order (dataset order for gold), then one item per instance a model has no line
for (status ``missing_prediction``, scored like an empty patch, unless ``--tebench-skip-missing``),
so every xdist worker collects the same ids in the same order. An entry that cannot be evaluated
(malformed line, unknown instance, duplicate line, broken instance row) still becomes an item: it
errors with a message that names the file and line, and every other item runs.

Phases, chosen so pytest's outcomes mean what users expect:

* ``setup`` prepares the workspace and evaluates the prediction. Any harness failure happens
  here, so it is a pytest *error* and never a score;
* ``call`` only judges the record: passed = evaluated, failed = the prediction was judged and
  failed (empty, missing, does not apply, timed out);
* ``teardown`` removes the workspace.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.base import Prepared
from pytest_tebench.benchmarks.base import base_record
from pytest_tebench.dispatch.client import Job
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import TebenchError
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.item_plan import PlannedItem
from pytest_tebench.item_plan import error_record
from pytest_tebench.report.properties import record_to_properties
from pytest_tebench.results import IDENTITY_FIELDS
from pytest_tebench.roles import TebenchWorker
from pytest_tebench.roles import record_key
from pytest_tebench.roles import worker_key

prepared_key = pytest.StashKey[Prepared]()


class PredictionFailed(Exception):
    """The prediction was judged and failed (empty, does not apply): a model failure."""


class TebenchFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        worker: TebenchWorker = self.config.stash[worker_key]
        try:
            planned = worker.plan()
        except TebenchError as exc:
            raise self.CollectError(str(exc)) from exc
        for entry in planned:
            item = TebenchItem.from_parent(self, name=entry.name, planned=entry)
            if entry.instance is not None:
                _add_markers(self.config, item, entry.instance, entry.prediction)
            yield item


def _restamped(cached: dict[str, Any], instance: BenchmarkInstance, prediction: Prediction) -> dict[str, Any]:
    """A stored record for this item: the same result, this line's identity, marked as reused."""
    identity = base_record(instance, prediction, str(cached.get("status")))
    record = {**cached, **{field: identity[field] for field in IDENTITY_FIELDS}}
    record.pop("workspace", None)  # an earlier run's workspace is not this item's
    record.pop("worker", None)  # nor is the Dask worker that built it then
    record["cache"] = "hit"
    return record


def _as_missing(record: dict[str, Any], prediction: Prediction) -> dict[str, Any]:
    """An empty result of a stand-in for a missing line is ``missing_prediction``."""
    if prediction.missing and record.get("status") == "empty":
        record["status"] = "missing_prediction"
        record["error"] = "the model has no prediction for this instance (scored as empty)"
    return record


def _marker_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", text).strip("_") or "unknown"


def _add_markers(
    config: pytest.Config, item: pytest.Item, instance: BenchmarkInstance, prediction: Prediction
) -> None:
    worker: TebenchWorker = config.stash[worker_key]
    adapter_markers = {line.split(":", 1)[0].split("(", 1)[0].strip() for line in worker.adapter.markers}
    for label in instance.labels:
        if label not in adapter_markers:
            # labels the adapter cannot list up front (SWE-bench: repo and version) are registered
            # on first use, so --strict-markers accepts them
            config.addinivalue_line("markers", f"{label}: instances labelled {label}")
        item.add_marker(label)
    project_marker = _marker_name(instance.project)
    if project_marker not in adapter_markers:
        # registered on first use so --strict-markers accepts one marker per project
        config.addinivalue_line("markers", f"{project_marker}: instances of project {instance.project}")
        item.add_marker(project_marker)
    item.add_marker(pytest.mark.tebench(project=instance.project, model=prediction.model_name_or_path))


def _with_evidence(record: dict[str, Any], exc: HarnessError) -> dict[str, Any]:
    """A harness error's record with what explains it: the build log's tail, the time each phase
    took before the failure, and the kept workspace."""
    record["timings"] = {name: round(seconds, 3) for name, seconds in exc.timings.items()}
    record["log_tail"] = exc.log_tail or None
    if exc.workspace:
        record["workspace"] = exc.workspace
    return record


class TebenchItem(pytest.Item):
    def __init__(self, *, planned: PlannedItem, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.planned = planned
        self.instance = planned.instance
        self.prediction = planned.prediction
        self.problem = planned.problem
        self.lineno = planned.lineno

    # -- phases -------------------------------------------------------------------------
    def setup(self) -> None:
        worker: TebenchWorker = self.config.stash[worker_key]
        if self.problem is not None:
            self._keep_record(self._error_record(self.problem))
            # the input's fault (a bad prediction line, an unknown id, a broken row), not the harness's
            pytest.fail(f"input error (not scored): {self.problem}", pytrace=False)
        assert self.instance is not None
        failure: str | None = None
        skip: str | None = None
        key: str | None = None
        try:
            # a benchmark may score a prediction that needs no environment (SWE-bench: an empty or
            # missing patch is unresolved whatever the environment does) without building anything
            without_build = getattr(worker.adapter, "record_without_build", None)
            settled = without_build(self.instance, self.prediction) if without_build is not None else None
            if settled is not None:
                self._keep_record(_as_missing(settled, self.prediction))
                return
            key = worker.result_key(self.instance, self.prediction)
            cached = None if key is None or worker.options.rerun else worker.results.get(key)
            if cached is not None:
                self._keep_record(_restamped(cached, self.instance, self.prediction))
                return
            if worker.remote is not None:
                # built on a Dask worker (docs/dask.md); its harness errors come back as HarnessError
                record = worker.remote.result(Job(self.nodeid, self.instance, self.prediction))
            else:
                context = worker.context()
                prepared = worker.adapter.prepare(self.instance, context)
                self.stash[prepared_key] = prepared
                record = worker.adapter.evaluate(self.instance, prepared, self.prediction, context)
        except HarnessError as exc:
            self._keep_record(_with_evidence(self._error_record(str(exc), status=exc.status), exc))
            if exc.status == "unsupported_environment":
                # decided from the environment alone, before running: neither a score nor a failure
                skip = f"unsupported environment: {exc}"
            kind = "invalid instance" if exc.status == "invalid_instance" else "harness error"
            failure = f"{kind}: {exc}"
        except Exception as exc:
            # a bug of ours or of a plugin's adapter: still an error record, never a score,
            # and the traceback stays visible
            self._keep_record(self._error_record(f"internal error: {type(exc).__name__}: {exc}"))
            raise
        if skip is not None:
            pytest.skip(skip)
        if failure is not None:
            # outside the except block: the message is shown once, not chained to its cause
            pytest.fail(failure, pytrace=False)
        record = _as_missing(record, self.prediction)
        if key is not None:
            # stored as soon as it exists: a run killed later resumes from here
            worker.results.put(key, record)
            record["cache"] = "miss"
        self._keep_record(record)

    def runtest(self) -> None:
        record = self.stash[record_key]
        status = record["status"]
        if status == "evaluated":
            # a benchmark may judge evaluated items further (SWE-bench: an unresolved issue fails)
            worker: TebenchWorker = self.config.stash[worker_key]
            verdict = worker.adapter.verdict(record)
            if verdict:
                raise PredictionFailed(verdict)
            return
        if status == "empty":
            raise PredictionFailed("empty prediction: no patch to evaluate (scored 0)")
        if status == "missing_prediction":
            raise PredictionFailed("no prediction for this instance (scored as empty)")
        if status == "not_applied":
            raise PredictionFailed(f"the prediction does not apply:\n{record.get('error') or ''}")
        if status == "timeout":
            raise PredictionFailed(f"timeout (its build is not scored): {record.get('error') or ''}")
        raise PredictionFailed(f"{status}: {record.get('error') or ''}")

    def teardown(self) -> None:
        prepared = self.stash.get(prepared_key, None)
        if prepared is not None:
            worker: TebenchWorker = self.config.stash[worker_key]
            worker.adapter.cleanup(prepared, worker.context())

    # -- reporting ----------------------------------------------------------------------
    def _keep_record(self, record: dict[str, Any]) -> None:
        worker: TebenchWorker = self.config.stash[worker_key]
        self.stash[record_key] = record
        self.user_properties.extend(record_to_properties(record, worker.adapter.junit_properties(record)))

    def _error_record(self, message: str, status: str = "error") -> dict[str, Any]:
        return error_record(self.planned, message, status)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | Any:
        if isinstance(excinfo.value, PredictionFailed | TebenchError):
            kind = "harness error" if isinstance(excinfo.value, HarnessError) else "prediction failed"
            return f"{self.name}: {kind}: {excinfo.value}"
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, self.lineno, f"tebench: {self.name}"
