"""Built-in implementations of pytest-tebench's own hooks.

All are ``trylast``: an implementation in a conftest or plugin that returns a value wins.
They run on whichever process calls the hook (see ``hookspec.py``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench import __version__
from pytest_tebench.benchmarks import make_builtin
from pytest_tebench.benchmarks.base import BenchmarkAdapter
from pytest_tebench.context import TebenchOptions
from pytest_tebench.errors import InputError
from pytest_tebench.instance.datasets import describe_dataset
from pytest_tebench.report.json_report import build_report
from pytest_tebench.report.json_report import write_report
from pytest_tebench.roles import option_values
from pytest_tebench.roles import options_key
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.executors import EXECUTORS
from pytest_tebench.run.executors import ExecutorOptions
from pytest_tebench.run.executors import create_executor
from pytest_tebench.settings import without_paths


@pytest.hookimpl(trylast=True)
def pytest_tebench_make_benchmark(config: pytest.Config, name: str) -> BenchmarkAdapter | None:
    options = config.stash[options_key]
    return make_builtin(name, option_values(config), options.cache_dir, progress=_live_printer(config))


@pytest.hookimpl(trylast=True)
def pytest_tebench_executor_names(config: pytest.Config) -> list[str]:
    from pytest_tebench.dispatch.settings import DASK_EXECUTOR_PATTERNS

    return [*EXECUTORS, *DASK_EXECUTOR_PATTERNS]


@pytest.hookimpl(trylast=True)
def pytest_tebench_generate_json(
    config: pytest.Config, records: list[dict[str, Any]], summary: dict[str, Any]
) -> dict[str, Any]:
    options = config.stash[options_key]
    controller = config.pluginmanager.get_plugin("tebench-controller")
    adapter: BenchmarkAdapter | None = getattr(controller, "adapter", None)
    return build_report(
        records,
        summary=summary,
        harness_version=__version__,
        benchmark=options.benchmark,
        dataset=describe_dataset(options.dataset),
        predictions=options.predictions if options.is_gold else Path(options.predictions).name,
        fields=adapter.report_fields() if adapter is not None else {},
        record_fields=adapter.record_fields if adapter is not None else (),
        extra={"options": _plain_options(options)},
    )


@pytest.hookimpl(trylast=True)
def pytest_tebench_write_reports(config: pytest.Config, report: dict[str, Any]) -> None:
    options = config.stash[options_key]
    path = options.report
    if path is not None:
        try:
            write_report(report, path)
        except OSError as exc:
            raise InputError(f"cannot write the JSON report: {exc}", source=str(path)) from exc
    controller = config.pluginmanager.get_plugin("tebench-controller")
    adapter: BenchmarkAdapter | None = getattr(controller, "adapter", None)
    if adapter is not None:
        adapter.write_reports(report)  # the benchmark's own formats (SWE-bench's run report)
    html_path = config.getoption("tebench_html", None)
    if html_path is not None:
        _write_html_report(config, report, html_path, run=options.anchor_nodeid)


def _write_html_report(config: pytest.Config, report: dict[str, Any], path: Path, *, run: str) -> None:
    from pytest_tebench.report.html import write_html
    from pytest_tebench.report.html_model import Run
    from pytest_tebench.report.html_model import run_name

    try:
        written = write_html([Run(run_name(run), report)], path)
    except Exception as exc:  # a rendering bug must not cost the summary and the JSON report
        raise InputError(
            f"cannot write the HTML report: {type(exc).__name__}: {exc}", source=str(path)
        ) from exc
    config.stash[_html_written_key] = written


_html_written_key = pytest.StashKey[Path]()


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    # after the tebench summary (the controller's), beside its "JSON report:" line
    written = config.stash.get(_html_written_key, None)
    if written is not None:
        terminalreporter.write_line(f"HTML report: {written}")


def _plain_options(options: TebenchOptions) -> dict[str, Any]:
    """The run's option values for the report, without paths: they are machine-specific, and two
    identical runs' reports must not differ."""
    return without_paths(dict(sorted(options.values.items())), drop=("predictions",))


@pytest.hookimpl(trylast=True)
def pytest_tebench_make_executor(config: pytest.Config, name: str) -> Executor | None:
    if name not in EXECUTORS:
        return None
    options = config.stash[options_key]
    # per process: an executor's close() removes its run's leftovers, never another worker's containers
    workerinput = getattr(config, "workerinput", {})
    run_id = f"{workerinput.get('testrunuid', 'main')}-{workerinput.get('workerid', 'main')}-{os.getpid()}"
    return create_executor(
        ExecutorOptions.from_values(name, options.values, run_id=str(run_id)),
        progress=_progress_printer(config),
    )


def _live_printer(config: pytest.Config) -> Callable[[str], None]:
    """Progress shown while an item runs (pytest captures output then, so step around it)."""
    show = _progress_printer(config, prefix="")
    capture = config.pluginmanager.get_plugin("capturemanager")

    def live(line: str) -> None:
        if capture is None:
            show(line)
            return
        with capture.global_and_fixture_disabled():
            show(line)

    return live


def _progress_printer(config: pytest.Config, prefix: str = "[tebench image] ") -> Callable[[str], None]:
    """Image builds take minutes: show their progress on the terminal (the controller's, if any)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")

    def show(line: str) -> None:
        if reporter is not None:
            reporter.write_line(f"{prefix}{line}")
        else:
            print(f"{prefix}{line}", file=sys.stderr, flush=True)

    return show
