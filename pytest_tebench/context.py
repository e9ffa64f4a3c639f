"""Turn a run's option values into what evaluating needs: one place, without pytest.

The pytest plugin (``roles.py``), the ``tebench`` command, ``tebench export`` and the bench/
scripts all come through here, so an evaluation is set up identically wherever it starts:

* :func:`options_from_values` reads the option values (keyed by option ``dest``) into
  :class:`TebenchOptions`, the plain-data view every process shares;
* :func:`build_context` makes the benchmark-neutral :class:`EvalContext` (cache, workspaces,
  repositories, the executor factory);
* :func:`make_adapter` makes a built-in benchmark's adapter from the same values (the plugin
  asks its ``pytest_tebench_make_benchmark`` hook, whose default comes here too).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks import make_builtin
from pytest_tebench.benchmarks.base import BenchmarkAdapter
from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.errors import InputError
from pytest_tebench.instance.predictions import GOLD
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.executors import DEFAULT_EXECUTOR
from pytest_tebench.settings import default_cache_dir
from pytest_tebench.workspace.repos import DEFAULT_URL_TEMPLATE
from pytest_tebench.workspace.repos import RepositoryStore


@dataclass(frozen=True)
class TebenchOptions:
    """The benchmark-neutral options of a run, as plain data (identical on every process)."""

    predictions: str
    dataset: str = "demo"
    split: str = "test"
    benchmark: str = "tebench"
    repos: tuple[Path, ...] = ()
    repo_url: str = DEFAULT_URL_TEMPLATE
    offline: bool = False
    cache_dir: Path = field(default_factory=default_cache_dir)
    keep_workspaces: bool = False
    report: Path | None = None
    fail_under: tuple[tuple[str, float], ...] = ()
    skip_missing: bool = False
    rerun: bool = False
    executor: str = DEFAULT_EXECUTOR
    #: Every option's value by ``dest`` (benchmarks, executors and Maven builds read their own).
    values: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def is_gold(self) -> bool:
        return self.predictions == GOLD

    @property
    def anchor_nodeid(self) -> str:
        """The first part of every item id: the predictions file's name, or ``gold``."""
        return GOLD if self.is_gold else Path(self.predictions).name


def options_from_values(values: Mapping[str, Any]) -> TebenchOptions:
    """Read option values (keyed by dest, as the plugin and the command parse them).

    Raises :class:`InputError` for a predictions path that is not a readable file.
    """
    predictions = str(values.get("predictions") or "")
    if predictions != GOLD:
        path = Path(predictions).expanduser()
        if path.is_dir():
            raise InputError("is a directory, not a predictions file (or use 'gold')", source=predictions)
        if not path.is_file():
            raise InputError("file not found (or use 'gold')", source=predictions)
        if not os.access(path, os.R_OK):
            raise InputError("file is not readable", source=predictions)
        predictions = str(path.resolve())
    cache_dir = Path(values.get("cache_dir") or default_cache_dir()).expanduser().resolve()
    report = values.get("report")
    return TebenchOptions(
        predictions=predictions,
        dataset=str(values.get("dataset") or "demo"),
        split=str(values.get("split") or "test"),
        benchmark=str(values.get("benchmark") or "tebench"),
        repos=tuple(Path(p) for p in values.get("repos") or ()),
        repo_url=str(values.get("repo_url") or DEFAULT_URL_TEMPLATE),
        offline=bool(values.get("offline")),
        cache_dir=cache_dir,
        keep_workspaces=bool(values.get("keep_workspaces")),
        report=None if report is None else Path(report).expanduser().resolve(),
        fail_under=tuple(values.get("fail_under") or ()),
        skip_missing=bool(values.get("skip_missing")),
        rerun=bool(values.get("rerun")),
        executor=_executor_name(values),
        values=dict(values),
    )


def _executor_name(values: Mapping[str, Any]) -> str:
    name = str(values.get("executor") or DEFAULT_EXECUTOR)
    if values.get("dask_scheduler_file") and name == DEFAULT_EXECUTOR:
        return "dask"  # the scheduler file names the cluster that builds (docs/dask.md)
    return name


def embedded_repositories() -> dict[str, Callable[[Path], Path]]:
    """Repositories shipped inside the package (the demo's), built on first use."""
    from pytest_tebench.demo import DEMO_REPO
    from pytest_tebench.demo import build_demo_mirror
    from pytest_tebench.demo.multilingual import MULTILINGUAL_DEMO_REPO
    from pytest_tebench.demo.multilingual import build_multilingual_demo_mirror
    from pytest_tebench.demo.swebench import SWEBENCH_DEMO_REPO
    from pytest_tebench.demo.swebench import build_swebench_demo_mirror

    return {
        DEMO_REPO: build_demo_mirror,
        SWEBENCH_DEMO_REPO: build_swebench_demo_mirror,
        MULTILINGUAL_DEMO_REPO: build_multilingual_demo_mirror,
    }


def build_context(options: TebenchOptions, executor: Callable[[], Executor] | None = None) -> EvalContext:
    """The evaluation context of a run; ``executor`` makes this process's executor on first use."""
    cache = options.cache_dir
    return EvalContext(
        cache_dir=cache,
        work_dir=cache / "workspaces",
        repos=RepositoryStore(
            cache,
            local_dirs=options.repos,
            url_template=options.repo_url,
            allow_network=not options.offline,
            embedded=embedded_repositories(),
        ),
        keep_workspaces=options.keep_workspaces,
        executor=executor,
    )


def make_adapter(options: TebenchOptions) -> BenchmarkAdapter:
    """The built-in adapter ``options.benchmark`` (raises :class:`InputError` for an unknown one)."""
    adapter = make_builtin(options.benchmark, options.values, options.cache_dir)
    if adapter is None:
        raise InputError(f"no built-in benchmark called {options.benchmark!r}")
    return adapter
