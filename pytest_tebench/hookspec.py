"""Hook specifications: the replaceable seams of pytest-tebench.

Each provider hook is ``firstresult``; the plugin's own implementation is registered with
``trylast=True``, so an implementation in a ``conftest.py`` or another plugin wins. Example, a
conftest that runs builds on a remote builder::

    @pytest.hookimpl
    def pytest_tebench_executor_names(config):
        return ["remote"]

    @pytest.hookimpl
    def pytest_tebench_make_executor(config, name):
        if name == "remote":
            return RemoteExecutor(config.getoption("tebench_remote_host"))
        return None  # fall through to the built-in executors
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

import pytest

if TYPE_CHECKING:
    from pytest_tebench.benchmarks.base import BenchmarkAdapter
    from pytest_tebench.run.executor import Executor


@pytest.hookspec(firstresult=True)
def pytest_tebench_make_benchmark(config: pytest.Config, name: str) -> BenchmarkAdapter | None:
    """Return the benchmark adapter called ``name`` (``--tebench-benchmark``), or None.

    The adapter follows ``pytest_tebench.benchmarks.base.BenchmarkAdapter`` (its markers, gateable
    metrics, records, summary and terminal lines are its own). Called once per process
    (controller and every xdist worker) in ``pytest_configure``.
    """


@pytest.hookspec
def pytest_tebench_executor_names(config: pytest.Config) -> list[str]:  # type: ignore[empty-body]
    """Return the ``--tebench-executor`` names (fnmatch patterns) this plugin provides.

    Called on the controller in ``pytest_configure`` to validate the option; every
    implementation's names are accepted. Provide the executor itself with
    ``pytest_tebench_make_executor``.
    """


@pytest.hookspec(firstresult=True)
def pytest_tebench_make_executor(config: pytest.Config, name: str) -> Executor | None:
    """Return the executor called ``name`` (``--tebench-executor``), or None.

    ``auto`` has been resolved by then (to ``docker`` or ``local``). Called lazily, once per
    process that runs items (an xdist worker, or the only process), the first time an item
    needs a build.
    """


@pytest.hookspec(firstresult=True)
def pytest_tebench_generate_json(
    config: pytest.Config, records: list[dict[str, Any]], summary: dict[str, Any]
) -> dict[str, Any] | None:
    """Build the JSON report from result records and the per-model summary.

    Called on the controller only, at session finish.
    """


@pytest.hookspec()
def pytest_tebench_update_json(config: pytest.Config, report: dict[str, Any]) -> None:
    """Edit the JSON report in place (add fields) before it is written. Controller only."""


@pytest.hookspec()
def pytest_tebench_write_reports(config: pytest.Config, report: dict[str, Any]) -> None:
    """Write the report wherever you like (built-in: ``--tebench-report`` and ``--tebench-html``).

    Called on the controller only, after ``pytest_tebench_update_json``.
    """
