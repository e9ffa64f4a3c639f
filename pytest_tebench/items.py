"""Collection: one pytest item per (instance x prediction).

The predictions file (or, for ``gold``, a marker file) is collected as a :class:`TebenchFile`.
Items are built in file order (dataset order for gold), so every xdist worker collects the
same ids in the same order. An entry that cannot be evaluated (malformed line, unknown
instance, broken instance row) still becomes an item: it errors with a message that names
the file and line, and every other item runs.

Phases, chosen so pytest's outcomes mean what users expect:

* ``setup`` prepares the workspace and evaluates the prediction. Any harness failure happens
  here, so it is a pytest *error* and never a score;
* ``call`` only judges the record: passed = evaluated, failed = the prediction is empty or
  does not apply;
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
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import TebenchError
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.report.properties import record_to_properties
from pytest_tebench.roles import TebenchWorker
from pytest_tebench.roles import record_key
from pytest_tebench.roles import worker_key

LABEL_MARKERS = ("breaking", "stale", "missing")
prepared_key = pytest.StashKey[Prepared]()


class PredictionFailed(Exception):
    """The prediction was judged and failed (empty, does not apply): a model failure."""


class TebenchFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        worker: TebenchWorker = self.config.stash[worker_key]
        try:
            instances = worker.instances()
            predictions = worker.predictions()
        except TebenchError as exc:
            raise self.CollectError(str(exc)) from exc
        by_id = {i.instance_id: i for i in instances}
        names: dict[str, int] = {}
        for lineno, prediction in enumerate(predictions):
            instance = by_id.get(prediction.instance_id)
            problem = prediction.problem
            if problem is None and instance is None:
                dataset = worker.options.dataset
                problem = f"unknown instance_id {prediction.instance_id!r} (not in dataset {dataset!r})"
            if problem is not None:
                problem = f"{prediction.origin}: {problem}"
            elif instance is not None and instance.problem is not None:
                problem = instance.problem
            name = _unique(names, _item_name(prediction, lineno))
            item = TebenchItem.from_parent(
                self, name=name, instance=instance, prediction=prediction, problem=problem, lineno=lineno
            )
            if instance is not None:
                _add_markers(self.config, item, instance, prediction)
            yield item


def _item_name(prediction: Prediction, index: int) -> str:
    instance_id = prediction.instance_id or f"entry{index + 1}"
    model = prediction.model_name_or_path or "unknown-model"
    return f"{instance_id}[{model}]"


def _unique(names: dict[str, int], name: str) -> str:
    count = names.get(name, 0) + 1
    names[name] = count
    return name if count == 1 else f"{name}#{count}"


def _marker_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", text).strip("_") or "unknown"


def _add_markers(
    config: pytest.Config, item: pytest.Item, instance: BenchmarkInstance, prediction: Prediction
) -> None:
    for label in instance.labels:
        if label not in LABEL_MARKERS:
            # other benchmarks' labels (SWE-bench: repo and version) are registered on first use
            config.addinivalue_line("markers", f"{label}: instances labelled {label}")
        item.add_marker(label)
    project_marker = _marker_name(instance.project)
    if project_marker not in LABEL_MARKERS:
        # registered on first use so --strict-markers accepts one marker per project
        config.addinivalue_line("markers", f"{project_marker}: instances of project {instance.project}")
        item.add_marker(project_marker)
    item.add_marker(pytest.mark.tebench(project=instance.project, model=prediction.model_name_or_path))


class TebenchItem(pytest.Item):
    def __init__(
        self,
        *,
        instance: BenchmarkInstance | None,
        prediction: Prediction,
        problem: str | None,
        lineno: int,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.instance = instance
        self.prediction = prediction
        self.problem = problem
        self.lineno = lineno

    # -- phases -------------------------------------------------------------------------
    def setup(self) -> None:
        worker: TebenchWorker = self.config.stash[worker_key]
        if self.problem is not None:
            self._keep_record(self._error_record(self.problem))
            pytest.fail(f"harness error: {self.problem}", pytrace=False)
        assert self.instance is not None
        try:
            context = worker.context()
            prepared = worker.adapter.prepare(self.instance, context)
            self.stash[prepared_key] = prepared
            record = worker.adapter.evaluate(self.instance, prepared, self.prediction, context)
        except HarnessError as exc:
            self._keep_record(self._error_record(str(exc), status=exc.status))
            if exc.status == "unsupported_environment":
                # decided from the environment alone, before running: neither a score nor a failure
                pytest.skip(f"unsupported environment: {exc}")
            kind = "invalid instance" if exc.status == "invalid_instance" else "harness error"
            pytest.fail(f"{kind}: {exc}", pytrace=False)
        except Exception as exc:
            # a bug of ours or of a plugin's adapter: still an error record, never a score,
            # and the traceback stays visible
            self._keep_record(self._error_record(f"internal error: {type(exc).__name__}: {exc}"))
            raise
        self._keep_record(record)

    def runtest(self) -> None:
        record = self.stash[record_key]
        status = record["status"]
        if status == "empty":
            raise PredictionFailed("empty prediction: no patch to evaluate (scored 0)")
        if status == "not_applied":
            raise PredictionFailed(f"the prediction does not apply:\n{record.get('error') or ''}")
        if status == "timeout":
            raise PredictionFailed(f"timeout (not scored): {record.get('error') or ''}")
        if status != "evaluated":
            raise PredictionFailed(f"{status}: {record.get('error') or ''}")
        # a benchmark may judge evaluated items further (SWE-bench: unresolved fails)
        worker: TebenchWorker = self.config.stash[worker_key]
        verdict = getattr(worker.adapter, "verdict", None)
        failure = verdict(record) if callable(verdict) else None
        if failure:
            raise PredictionFailed(failure)

    def teardown(self) -> None:
        prepared = self.stash.get(prepared_key, None)
        if prepared is not None:
            worker: TebenchWorker = self.config.stash[worker_key]
            worker.adapter.cleanup(prepared, worker.context())

    # -- reporting ----------------------------------------------------------------------
    def _keep_record(self, record: dict[str, Any]) -> None:
        self.stash[record_key] = record
        self.user_properties.extend(record_to_properties(record))

    def _error_record(self, message: str, status: str = "error") -> dict[str, Any]:
        instance = self.instance or BenchmarkInstance(
            # a line with no readable id is named like its item, minus the model: "entry4"
            self.prediction.instance_id or self.name.split("[", 1)[0],
            "unknown",
            "",
            (),
            self.prediction.origin,
        )
        record = base_record(instance, self.prediction, status)
        record["model_name_or_path"] = self.prediction.model_name_or_path or "unknown-model"
        record["instance_id"] = instance.instance_id
        record["error"] = message
        return record

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
