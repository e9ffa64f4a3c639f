"""Built-in implementations of pytest-tebench's own hooks.

All are ``trylast``: an implementation in a conftest or plugin that returns a value wins.
They run on whichever process calls the hook (see ``hookspec.py``).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench import __version__
from pytest_tebench.benchmarks.base import BenchmarkAdapter
from pytest_tebench.errors import InputError
from pytest_tebench.instance.datasets import describe_dataset
from pytest_tebench.report.json_report import build_report
from pytest_tebench.report.json_report import write_report
from pytest_tebench.roles import TebenchOptions
from pytest_tebench.roles import options_key


@pytest.hookimpl(trylast=True)
def pytest_tebench_make_benchmark(config: pytest.Config, name: str) -> BenchmarkAdapter | None:
    if name == "tebench":
        from pytest_tebench.benchmarks.tebench import TebenchAdapter

        return TebenchAdapter()
    return None


@pytest.hookimpl(trylast=True)
def pytest_tebench_generate_json(
    config: pytest.Config, records: list[dict[str, Any]], summary: dict[str, Any]
) -> dict[str, Any]:
    options = config.stash[options_key]
    return build_report(
        records,
        harness_version=__version__,
        dataset=describe_dataset(options.dataset),
        predictions=options.predictions if options.is_gold else Path(options.predictions).name,
        update_scoring=None,
        extra={"options": _plain_options(options)},
    )


@pytest.hookimpl(trylast=True)
def pytest_tebench_write_reports(config: pytest.Config, report: dict[str, Any]) -> None:
    path = config.stash[options_key].report
    if path is not None:
        try:
            write_report(report, path)
        except OSError as exc:
            raise InputError(f"cannot write the JSON report: {exc}", source=str(path)) from exc


def _plain_options(options: TebenchOptions) -> dict[str, Any]:
    plain = asdict(options)
    # machine-specific paths would make two identical runs' reports differ
    for key in ("cache_dir", "repos", "report", "predictions"):
        plain.pop(key, None)
    return plain
