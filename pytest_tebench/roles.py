"""The two process roles of a pytest-tebench session, and what they share.

``TebenchWorker`` lives wherever items run (each xdist worker, or the only process); it owns
the benchmark adapter, the loaded instances and predictions, and the evaluation context.
``TebenchController`` lives where reports arrive (the xdist controller, or the only process);
it only ever sees plain-data result records attached to reports, so ``-n 0`` and ``-n 8``
aggregate through the same code path. Neither knows anything of a particular benchmark: that is
the adapter's, reached through the ``pytest_tebench_make_benchmark`` hook.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
from collections.abc import Generator
from pathlib import Path
from typing import Any
from typing import Protocol

import pytest

from pytest_tebench import __version__
from pytest_tebench.benchmarks import builtin_options
from pytest_tebench.benchmarks.base import BenchmarkAdapter
from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.context import TebenchOptions
from pytest_tebench.context import build_context
from pytest_tebench.context import options_from_values
from pytest_tebench.dispatch.client import Job
from pytest_tebench.dispatch.settings import DASK_OPTIONS
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import InputError
from pytest_tebench.errors import TebenchError
from pytest_tebench.instance.datasets import load_records
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.instance.predictions import gold_predictions
from pytest_tebench.instance.predictions import load_predictions
from pytest_tebench.item_plan import PlannedItem
from pytest_tebench.item_plan import error_record
from pytest_tebench.item_plan import plan_items
from pytest_tebench.metrics.outcomes import check_thresholds
from pytest_tebench.report.properties import record_to_properties
from pytest_tebench.results import ResultCache
from pytest_tebench.results import result_key
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.executors import EXECUTOR_OPTIONS
from pytest_tebench.run.executors import UNSANDBOXED_WARNING
from pytest_tebench.run.executors import docker_available
from pytest_tebench.settings import CORE_OPTIONS
from pytest_tebench.settings import OptionSpec
from pytest_tebench.settings import unique_specs
from pytest_tebench.workspace.removal import wait_for_removals


class RemoteBuilds(Protocol):
    """Where items are built when not in this process (the Dask dispatcher, dispatch/client.py)."""

    executor_name: str
    toolchain: str

    def result(self, job: Job) -> dict[str, Any]: ...


options_key = pytest.StashKey[TebenchOptions]()
record_key = pytest.StashKey[dict[str, Any]]()
worker_key = pytest.StashKey["TebenchWorker"]()
#: ``workerinput`` key carrying the controller's resolved executor name to xdist workers.
EXECUTOR_INPUT = "tebench_executor"


def all_option_specs() -> list[OptionSpec]:
    """Every ``--tebench-*`` option: the core's, the executors', every built-in benchmark's."""
    return unique_specs(CORE_OPTIONS, EXECUTOR_OPTIONS, DASK_OPTIONS, builtin_options())


def option_values(config: pytest.Config) -> dict[str, Any]:
    """The run's option values keyed by dest, as plain data."""
    return {spec.dest: config.getoption(spec.pytest_dest) for spec in all_option_specs()}


def options_from_config(config: pytest.Config) -> TebenchOptions:
    try:
        return options_from_values(option_values(config))
    except InputError as exc:
        raise pytest.UsageError(f"--tebench-predictions: {exc}") from None


def anchor_path(options: TebenchOptions) -> Path:
    """The file pytest collects: a small marker file in our cache, never the predictions file.

    Its name and content depend only on the run's inputs, so every xdist worker writes the same
    file and collects the same items.
    """
    spec = json.dumps(
        {
            "predictions": options.predictions,
            "dataset": options.dataset,
            "split": options.split,
            "benchmark": options.benchmark,
        }
    )
    digest = hashlib.sha256(spec.encode()).hexdigest()[:16]
    path = options.cache_dir / "anchors" / f"{digest}.tebench"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(spec + "\n", encoding="utf-8")
        os.replace(tmp, path)
    return path


def adapter_from_hook(config: pytest.Config, options: TebenchOptions) -> BenchmarkAdapter:
    adapter: BenchmarkAdapter | None = config.hook.pytest_tebench_make_benchmark(
        config=config, name=options.benchmark
    )
    if adapter is None:
        raise pytest.UsageError(f"--tebench-benchmark: no adapter called {options.benchmark!r}")
    return adapter


def check_executor_name(config: pytest.Config, name: str) -> None:
    """Ask the ``pytest_tebench_executor_names`` hook which names exist (a conftest may add some)."""
    patterns = [p for names in config.hook.pytest_tebench_executor_names(config=config) for p in names]
    if not any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns):
        raise pytest.UsageError(
            f"--tebench-executor: unknown executor {name!r}; known: {', '.join(patterns)}"
        )


def load_instances(options: TebenchOptions, adapter: BenchmarkAdapter) -> list[BenchmarkInstance]:
    return adapter.load_instances(load_records(options.dataset, split=options.split))


def plan_run(
    options: TebenchOptions, adapter: BenchmarkAdapter, instances: list[BenchmarkInstance]
) -> list[PlannedItem]:
    """The items of this run, the same in every process that reads the same files."""
    predictions: list[Prediction]
    if options.is_gold:
        predictions = gold_predictions(
            (i.instance_id, adapter.gold_patch(i) if i.problem is None else "") for i in instances
        )
    else:
        # a benchmark whose predictions are not one patch a line (RealCodeJava: n samples) reads them itself
        reader = getattr(adapter, "read_predictions", None)
        predictions = (
            reader(Path(options.predictions))
            if reader is not None
            else load_predictions(Path(options.predictions))
        )
    if not predictions:
        raise InputError(f"{options.predictions}: no predictions in this file")
    return plan_items(
        instances,
        predictions,
        dataset=str(options.dataset),
        with_missing=not options.is_gold and not options.skip_missing,
    )


class TebenchWorker:
    """Role object of a process that runs items."""

    def __init__(
        self, config: pytest.Config, options: TebenchOptions, controller: TebenchController | None = None
    ) -> None:
        self.config = config
        self.options = options
        self.adapter = controller.adapter if controller is not None else adapter_from_hook(config, options)
        workerinput: dict[str, Any] = getattr(config, "workerinput", {})
        self.executor_name = str(
            workerinput.get(EXECUTOR_INPUT)
            or (controller.executor_name if controller is not None else options.executor)
        )
        self._instances: list[BenchmarkInstance] | None = None
        self._context: EvalContext | None = None
        self._executor: Executor | None = None
        self.results = ResultCache(options.cache_dir / "results")
        #: Set by the Dask role (dask_plugin.py): items wait for the cluster's result instead of building.
        self.remote: RemoteBuilds | None = None
        if controller is None:
            # an xdist worker: the markers its items carry must be known here too (--strict-markers)
            for line in self.adapter.markers:
                config.addinivalue_line("markers", line)
        config.stash[worker_key] = self

    # -- collection ---------------------------------------------------------------------
    def instances(self) -> list[BenchmarkInstance]:
        if self._instances is None:
            self._instances = load_instances(self.options, self.adapter)
        return self._instances

    def plan(self) -> list[PlannedItem]:
        """This run's items (:mod:`pytest_tebench.item_plan`); raises :class:`TebenchError` when the
        dataset or the predictions file cannot be read at all."""
        return plan_run(self.options, self.adapter, self.instances())

    # -- running ------------------------------------------------------------------------
    def context(self) -> EvalContext:
        if self._context is None:
            self._context = build_context(self.options, executor=self.executor)
        return self._context

    def executor(self) -> Executor:
        """This process's executor, made on first use through ``pytest_tebench_make_executor``."""
        if self._executor is None:
            executor = self.config.hook.pytest_tebench_make_executor(
                config=self.config, name=self.executor_name
            )
            if executor is None:
                raise HarnessError(f"no executor called {self.executor_name!r}")
            self._executor = executor
        return self._executor

    def result_key(self, instance: BenchmarkInstance, prediction: Prediction) -> str | None:
        """The content key of this item's result, or None when the adapter never reuses results."""
        instance_key = self.adapter.cache_key(instance)
        if instance_key is None:
            return None
        if not self.adapter.uses_executor:
            executor_name, toolchain = "none", "none"
        elif self.remote is not None:
            # built by the cluster's workers: their executor and toolchains, never this machine's
            executor_name, toolchain = self.remote.executor_name, self.remote.toolchain
        else:
            executor_name, toolchain = self.executor_name, self.executor().toolchain()
        return result_key(
            harness_version=__version__,
            benchmark=self.adapter.name,
            instance_key=instance_key,
            patch=prediction.patch,
            missing=prediction.missing,
            executor=executor_name,
            toolchain=toolchain,
        )

    @pytest.hookimpl
    def pytest_sessionfinish(self) -> None:
        """Worker side: release the executor (containers, clients), and wait for the finished
        workspaces still being deleted in the background."""
        if self._executor is not None:
            self._executor.close()
            self._executor = None
        wait_for_removals()


class TebenchController:
    """Role object of the process that receives reports: aggregation, reports, quality gates."""

    def __init__(self, config: pytest.Config, options: TebenchOptions) -> None:
        self.config = config
        self.options = options
        self.adapter = adapter_from_hook(config, options)
        self.thresholds = (*options.fail_under, *self.adapter.thresholds)
        for metric, _ in self.thresholds:
            if metric not in self.adapter.gate_metrics:
                known = ", ".join(sorted(self.adapter.gate_metrics)) or "none"
                raise pytest.UsageError(
                    f"--tebench-fail-under: benchmark {self.adapter.name!r} has no metric {metric!r} "
                    f"(it has: {known})"
                )
        check_executor_name(config, options.executor)
        self.executor_name = options.executor
        self.unsandboxed = False
        if options.executor == "auto" and self.adapter.uses_executor:
            # resolved once, here, so every worker builds in the same place
            self.executor_name = "docker" if docker_available() else "local"
            self.unsandboxed = self.executor_name == "local"
        for line in self.adapter.markers:
            config.addinivalue_line("markers", line)
        for flag, path in (
            ("--tebench-report", options.report),
            ("--tebench-html", options.values.get("html")),
        ):
            if path is not None:
                _check_writable(flag, Path(path))
        self.records: dict[str, dict[str, Any]] = {}
        #: nodeid -> planned item, derived only when a worker crashes (crash_record)
        self._plan: dict[str, PlannedItem] | None = None
        #: every nodeid a report came for (a skipped item ran; an item never started did not)
        self.reported: set[str] = set()
        self.not_run = 0
        self.summary: dict[str, Any] = {}
        self.threshold_failures: list[str] = []
        self.report_problem: str | None = None

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """Controller (xdist): hand the resolved executor to each worker (optional: no xdist)."""
        node.workerinput[EXECUTOR_INPUT] = self.executor_name

    @pytest.hookimpl
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Controller: build a missing sandbox image here, once, with progress on the terminal
        (xdist workers have no terminal, and N of them would only wait for each other's lock)."""
        if (
            self.executor_name != "docker"
            or not self.adapter.uses_executor
            or self.options.values.get("image") is not None
        ):
            return
        from pytest_tebench.run.executors import prepare_docker_image

        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        try:
            prepare_docker_image(
                required=True,
                progress=(lambda line: reporter.write_line(f"[tebench image] {line}")) if reporter else print,
            )
        except TebenchError as exc:
            # every item will report the same harness error; say it once, up front
            if reporter is not None:
                reporter.write_line(f"[tebench image] cannot prepare the Docker image: {exc}", red=True)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        """Controller (xdist): a worker died in the middle of ``crashitem`` (killed for memory, a
        segfault), so no record of it will come. Give its report one, an ``error``: the item stays
        in the report and its counts as a harness failure instead of vanishing from them, and its
        JUnit testcase gets the record's properties (:meth:`_close_crashed`)."""
        record = self.crash_record(crashitem, str(getattr(report, "longrepr", "") or "its worker crashed"))
        report.tebench_record = record  # type: ignore[attr-defined]
        report.user_properties = [*record_to_properties(record, self.adapter.junit_properties(record))]

    def crash_record(self, nodeid: str, reason: str) -> dict[str, Any]:
        """The error record of an item whose process died: the plan is derived again here (the
        controller of an xdist run collects nothing), once, on the first crash."""
        if self._plan is None:
            try:
                instances = load_instances(self.options, self.adapter)
                self._plan = {
                    f"{self.options.anchor_nodeid}::{entry.name}": entry
                    for entry in plan_run(self.options, self.adapter, instances)
                }
            except TebenchError:
                self._plan = {}
        name = nodeid.rpartition("::")[2]
        entry = self._plan.get(nodeid) or PlannedItem(
            name, Prediction(name.split("[", 1)[0], "", "", name), None, None, 0
        )
        message = (
            f"the process evaluating this item died ({reason}): a harness failure, not scored; "
            "nothing of it was stored, so the next run evaluates it again"
        )
        return error_record(entry, message)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, None, None]:
        """Controller: collect records from every report (xdist replays worker reports here).

        Keyed by item: one record per submitted line, so a duplicate line never replaces the
        record of the line it duplicates."""
        self.reported.add(report.nodeid)
        record = getattr(report, "tebench_record", None)
        if isinstance(record, dict):
            self.records[report.nodeid] = record
        yield
        if isinstance(record, dict) and report.when not in ("setup", "call", "teardown"):
            self._close_crashed(report)

    def _close_crashed(self, report: pytest.TestReport) -> None:
        """Controller (xdist): the teardown report a crashed item never sent, after xdist's crash
        report has been logged: junitxml writes a testcase's properties only from its teardown,
        so without it the crashed item's testcase had no ``tebench.*`` properties for dashboards."""
        closing = pytest.TestReport(
            nodeid=report.nodeid,
            location=report.location,
            keywords={},
            outcome="passed",
            longrepr=None,
            when="teardown",
            user_properties=list(report.user_properties),
        )
        closing.node = getattr(report, "node", None)  # type: ignore[attr-defined]  # junitxml's key
        self.config.hook.pytest_runtest_logreport(report=closing)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        # Decide the gates here: by pytest_sessionfinish it is too late to set testsfailed
        # (pytest-cov's approach), and under xdist this wraps the loop that receives all reports.
        result = yield
        self.summary = self.adapter.summarise(self.sorted_records())
        _add_suite_properties(self.config, self.adapter, self.summary)
        self.threshold_failures = check_thresholds(self.summary, self.thresholds, self.adapter.metric_value)
        if self.threshold_failures:
            session.testsfailed += 1
        return result

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Controller: build and write the reports."""
        if not self.records:
            # an interrupted or empty run must not replace an earlier report with an empty one
            return
        if not self.summary:
            self.summary = self.adapter.summarise(self.sorted_records())
        # Ctrl-C, -x/--maxfail, xdist out of worker restarts (which stops without saying so to
        # the session): items were left unrun, and the report says so and how many
        self.not_run = max(0, session.testscollected - len(self.reported))
        interrupted = (
            exitstatus == pytest.ExitCode.INTERRUPTED
            or bool(session.shouldstop or session.shouldfail)
            or self.not_run > 0
        )
        hook = self.config.hook
        try:
            report = hook.pytest_tebench_generate_json(
                config=self.config, records=self.sorted_records(), summary=self.summary
            )
            if interrupted:
                report["interrupted"] = True
            if self.not_run:
                report["items_not_run"] = self.not_run
            hook.pytest_tebench_update_json(config=self.config, report=report)
            hook.pytest_tebench_write_reports(config=self.config, report=report)
        except TebenchError as exc:
            # the summary still prints; the run fails
            self.report_problem = str(exc)
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.records:
            terminalreporter.write_sep("=", "tebench summary")
            for line in self.adapter.summary_lines(self.summary):
                terminalreporter.write_line(line)
            reused = sum(1 for record in self.records.values() if record.get("cache") == "hit")
            if reused:
                terminalreporter.write_line(
                    f"results: {reused} of {len(self.records)} reused from earlier runs with the same "
                    "content key (--tebench-rerun evaluates them again)"
                )
            if self.unsandboxed:
                terminalreporter.write_line(UNSANDBOXED_WARNING, yellow=True, bold=True)
            if self.not_run:
                terminalreporter.write_line(
                    f"tebench: {self.not_run} of {self.not_run + len(self.reported)} items did not run "
                    "(the run stopped early), so the figures above count only those that did; the "
                    "same command again runs the rest and reuses every stored result",
                    yellow=True,
                    bold=True,
                )
            if self.options.report is not None and self.report_problem is None:
                terminalreporter.write_line(f"JSON report: {self.options.report}")
        elif self.options.report is not None:
            terminalreporter.write_line(
                f"tebench: no item ran, so {self.options.report} was not written (an earlier one is kept)"
            )
        if self.report_problem is not None:
            terminalreporter.write_line(f"ERROR {self.report_problem}", red=True, bold=True)
        for reason in self.threshold_failures:
            terminalreporter.write_line(f"FAIL {reason}", red=True, bold=True)

    # -- helpers ------------------------------------------------------------------------
    def sorted_records(self) -> list[dict[str, Any]]:
        return sorted(
            self.records.values(),
            key=lambda r: (str(r["model_name_or_path"]), str(r["instance_id"]), str(r.get("origin", ""))),
        )


def _add_suite_properties(config: pytest.Config, adapter: BenchmarkAdapter, summary: dict[str, Any]) -> None:
    """The adapter's run-level figures as ``<testsuite>`` properties of the JUnit XML (``--junitxml``;
    its writer, registered as a plugin, writes them at session finish, after this)."""
    properties = getattr(adapter, "summary_properties", None)
    if properties is None:
        return
    writers = [
        p for p in config.pluginmanager.get_plugins() if callable(getattr(p, "add_global_property", None))
    ]
    for writer in writers:
        for name, value in properties(summary):
            writer.add_global_property(name, value)


def _check_writable(flag: str, path: Path) -> None:
    """Fail at start, not after hours of builds, when a report cannot be written."""
    if path.is_dir():
        raise pytest.UsageError(f"{flag}: {path} is a directory")
    directory = path.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".{path.name}.{os.getpid()}.probe"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise pytest.UsageError(f"{flag}: cannot write to {directory}: {exc.strerror}") from None
    if path.exists() and not os.access(path, os.W_OK):
        raise pytest.UsageError(f"{flag}: {path} is not writable")
