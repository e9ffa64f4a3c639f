"""Built-in implementations of pytest-tebench's own hooks.

All are ``trylast``: an implementation in a conftest or plugin that returns a value wins.
They run on whichever process calls the hook (see ``hookspec.py``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench import __version__
from pytest_tebench.benchmarks.base import BenchmarkAdapter
from pytest_tebench.errors import InputError
from pytest_tebench.instance.datasets import describe_dataset
from pytest_tebench.report.json_report import build_report
from pytest_tebench.report.json_report import round_floats
from pytest_tebench.report.json_report import write_report
from pytest_tebench.roles import TebenchOptions
from pytest_tebench.roles import options_key
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.executors import EXECUTORS
from pytest_tebench.run.executors import ExecutorOptions
from pytest_tebench.run.executors import create_executor


@pytest.hookimpl(trylast=True)
def pytest_tebench_make_benchmark(config: pytest.Config, name: str) -> BenchmarkAdapter | None:
    if name == "tebench":
        from pytest_tebench.benchmarks.tebench import TebenchAdapter

        return TebenchAdapter()
    if name == "swebench":
        from pytest_tebench.benchmarks.swebench.adapter import SwebenchAdapter
        from pytest_tebench.benchmarks.swebench.environment import DEFAULT_PYPI_DATE

        date = config.getoption("tebench_swebench_pypi_date", None) or DEFAULT_PYPI_DATE
        return SwebenchAdapter(
            progress=_live_printer(config),
            network=bool(config.getoption("tebench_swebench_network", False)),
            pypi_date="" if date == "today" else str(date),
        )
    return None


@pytest.hookimpl(trylast=True)
def pytest_tebench_generate_json(
    config: pytest.Config, records: list[dict[str, Any]], summary: dict[str, Any]
) -> dict[str, Any]:
    options = config.stash[options_key]
    report = build_report(
        records,
        harness_version=__version__,
        dataset=describe_dataset(options.dataset),
        predictions=options.predictions if options.is_gold else Path(options.predictions).name,
        update_scoring=None if options.skip_update else options.scoring,
        extra={"options": _plain_options(options)},
    )
    if options.benchmark != "tebench":
        # the TEBench figures mean nothing for another benchmark: keep the adapter's own summary
        report["summary"] = round_floats(summary)
    return report


@pytest.hookimpl(trylast=True)
def pytest_tebench_write_reports(config: pytest.Config, report: dict[str, Any]) -> None:
    path = config.stash[options_key].report
    swebench_path = config.getoption("tebench_swebench_report", None)
    if swebench_path is not None:
        _write_swebench_run_reports(report, swebench_path)
    if path is not None:
        try:
            write_report(report, path)
        except OSError as exc:
            raise InputError(f"cannot write the JSON report: {exc}", source=str(path)) from exc


def _write_swebench_run_reports(report: dict[str, Any], path: Path) -> None:
    """``--tebench-swebench-report``: SWE-bench's own run report, one per model."""
    from pytest_tebench.benchmarks.swebench.summary import run_report
    from pytest_tebench.benchmarks.swebench.summary import run_report_paths

    records = report.get("results") or []
    models = sorted({str(r.get("model_name_or_path")) for r in records})
    for model, target in run_report_paths(path, models).items():
        try:
            write_report(run_report(records, model), target)
        except OSError as exc:
            raise InputError(f"cannot write the SWE-bench run report: {exc}", source=str(target)) from exc


def _plain_options(options: TebenchOptions) -> dict[str, Any]:
    plain = asdict(options)
    # machine-specific paths would make two identical runs' reports differ
    for key in ("cache_dir", "maven_repo", "repos", "report", "predictions"):
        plain.pop(key, None)
    return plain


@pytest.hookimpl(trylast=True)
def pytest_tebench_make_executor(config: pytest.Config, name: str) -> Executor | None:
    if name not in EXECUTORS:
        return None
    options = config.stash[options_key]
    # per process: an executor's close() removes its run's leftovers, never another worker's containers
    workerinput = getattr(config, "workerinput", {})
    run_id = f"{workerinput.get('testrunuid', 'main')}-{workerinput.get('workerid', 'main')}-{os.getpid()}"
    return create_executor(
        ExecutorOptions(
            name=name,
            jdk=options.jdk,
            image=options.image,
            memory=options.docker_memory,
            cpus=options.docker_cpus,
            maven_cache=options.cache_dir / "maven-dist",
            run_id=str(run_id),
        ),
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
