"""pytest side of ``--tebench-executor=dask://HOST:PORT``: a thin role on the only process.

Collection, ``-k``/``-m``/``--lf`` deselection, the result cache, reports and gates stay here;
once the selection is final (``pytest_collection_finish``) every selected item whose result is
not already stored is submitted to the cluster, and each item's setup waits for its own task
(``TebenchItem.setup`` through ``TebenchWorker.remote``). The domain work is in
``pytest_tebench/dispatch/``; see docs/dask.md.
"""

from __future__ import annotations

import pytest

from pytest_tebench.context import TebenchOptions
from pytest_tebench.context import build_context
from pytest_tebench.dispatch.client import DaskDispatcher
from pytest_tebench.dispatch.client import Job
from pytest_tebench.dispatch.client import workers_line
from pytest_tebench.dispatch.settings import DaskTarget
from pytest_tebench.dispatch.settings import dask_target
from pytest_tebench.errors import TebenchError
from pytest_tebench.items import TebenchItem
from pytest_tebench.roles import TebenchController
from pytest_tebench.roles import TebenchWorker
from pytest_tebench.roles import option_values


def target_from_options(options: TebenchOptions) -> DaskTarget | None:
    try:
        return dask_target(options.executor, options.values)
    except TebenchError as exc:
        raise pytest.UsageError(str(exc)) from None


def register(config: pytest.Config, target: DaskTarget, *, uses_xdist: bool) -> None:
    """Called by ``pytest_configure`` on the controller when the executor is Dask's."""
    if uses_xdist:
        raise pytest.UsageError(
            "--tebench-executor=dask dispatches items to the cluster itself: run it without -n (or with -n 0)"
        )
    worker = config.pluginmanager.get_plugin("tebench-worker")
    controller = config.pluginmanager.get_plugin("tebench-controller")
    assert isinstance(worker, TebenchWorker) and isinstance(controller, TebenchController)
    config.pluginmanager.register(TebenchDask(config, target, worker, controller), "tebench-dask")


class TebenchDask:
    def __init__(
        self, config: pytest.Config, target: DaskTarget, worker: TebenchWorker, controller: TebenchController
    ) -> None:
        self.config = config
        self.target = target
        self.worker = worker
        self.controller = controller
        self.dispatcher: DaskDispatcher | None = None
        self.cancelled = 0

    @pytest.hookimpl
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.config.getoption("collectonly"):
            return
        options = self.worker.options
        try:
            dispatcher = DaskDispatcher(
                self.target,
                adapter=self.worker.adapter,
                values=option_values(self.config),
                repos=build_context(options).repos,
                cache_dir=options.cache_dir,
            )
        except TebenchError as exc:
            raise pytest.UsageError(str(exc)) from None
        try:
            check = dispatcher.check_workers()
        except TebenchError as exc:
            dispatcher.close()
            raise pytest.UsageError(str(exc)) from None
        self.dispatcher = dispatcher
        self.worker.remote = dispatcher
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(
                f"dask: {len(check.able)} worker(s) at {self.target.shown}, "
                f"building with {dispatcher.executor_name}"
            )
            for address, why in sorted(check.unable.items()):
                reporter.write_line(f"dask: worker {address} is left out: {why}", yellow=True)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """The selection is final here (after -k, -m, --lf): submit what is not stored already."""
        if self.dispatcher is None:
            return
        jobs: list[Job] = []
        for item in session.items:
            if not isinstance(item, TebenchItem) or item.problem is not None or item.instance is None:
                continue
            key = self.worker.result_key(item.instance, item.prediction)
            if key is not None and not self.worker.options.rerun and self.worker.results.get(key) is not None:
                continue  # a stored result: the item reuses it and nothing is built
            jobs.append(Job(item.nodeid, item.instance, item.prediction))
        self.dispatcher.submit(jobs)

    @pytest.hookimpl
    def pytest_sessionfinish(self) -> None:
        """Ctrl-C, -x, a crash: whatever has not run is cancelled on the cluster."""
        if self.dispatcher is not None:
            self.cancelled = self.dispatcher.close()
            self.worker.remote = None
            self.dispatcher = None

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        line = workers_line(list(self.controller.records.values()))
        if line is not None:
            terminalreporter.write_line(line)
        if self.cancelled:
            terminalreporter.write_line(f"dask: {self.cancelled} unfinished task(s) cancelled on the cluster")
