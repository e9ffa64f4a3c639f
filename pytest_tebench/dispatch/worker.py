"""What runs on a ``dask worker``: one item, from plain data to a plain-data record.

The task gets the benchmark's name and the run's option values (without the paths of the
machine that runs pytest), the instance, the prediction and the bundle of the commits it needs.
The worker makes the adapter and the executor itself, once per worker process, with a cache of
its own (``$TEBENCH_WORKER_CACHE_DIR``, else the host's default pytest-tebench cache): the Maven
repository (``$TEBENCH_WORKER_MAVEN_REPO`` overrides it), Maven distributions, gold references,
the sandbox image and the unpacked repositories persist per worker host. Gold references also
travel: the ones the task brings are installed before the item runs, and the ones written
while it runs go back to the controller with its outcome (:mod:`pytest_tebench.dispatch.gold`). The sandbox
image is built under a cluster-wide ``distributed.Lock`` named after the host, so the workers
of one host build it once.

A harness failure (no Docker engine, an unbuildable gold, a repository the bundle lacks) is a
result, never an exception: Dask would retry an exception, and the same worker would fail the
same way. What Dask retries is a worker that dies mid-build. Never imports pytest.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import socket
import threading
import traceback
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from contextlib import nullcontext
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from pytest_tebench import __version__
from pytest_tebench.benchmarks import make_builtin
from pytest_tebench.benchmarks.base import BenchmarkAdapter
from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.dispatch.gold import appeared
from pytest_tebench.dispatch.gold import gold_dir
from pytest_tebench.dispatch.gold import install
from pytest_tebench.dispatch.gold import snapshot
from pytest_tebench.errors import HarnessError
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.executors import ExecutorOptions
from pytest_tebench.run.executors import create_executor
from pytest_tebench.settings import default_cache_dir
from pytest_tebench.settings import without_paths
from pytest_tebench.workspace.repos import RepositoryStore

CACHE_ENV = "TEBENCH_WORKER_CACHE_DIR"
MAVEN_REPO_ENV = "TEBENCH_WORKER_MAVEN_REPO"


@dataclass(frozen=True)
class ItemTask:
    """Everything one item's build needs, as plain data."""

    benchmark: str
    #: The run's option values by dest, without machine-specific paths (:func:`portable_values`).
    values: Mapping[str, Any]
    #: ``docker`` or ``local``: where the worker runs build steps.
    executor: str
    instance: BenchmarkInstance
    prediction: Prediction
    #: The commits of ``instance.repo`` the bundle holds (empty: the benchmark needs no repository).
    commits: tuple[str, ...] = ()
    #: Gold files the controller has for the instance (name under the gold directory -> content).
    gold: Mapping[str, bytes] = field(default_factory=dict)


def portable_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """Option values a worker may use: paths of the machine that runs pytest mean nothing there."""
    return without_paths(values, drop=("predictions", "dataset"))


def worker_cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or default_cache_dir()).expanduser().resolve()


def worker_address() -> str:
    """This worker's address as the scheduler knows it (the process name outside a worker)."""
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except ValueError:
        return f"{socket.gethostname()}:{os.getpid()}"


class _WorkerState:
    """Adapters and executors of this worker process, made on first use, reused by later tasks."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.adapters: dict[str, BenchmarkAdapter] = {}
        self.executors: dict[str, Executor] = {}
        atexit.register(self.close)

    def adapter(self, benchmark: str, values: Mapping[str, Any]) -> BenchmarkAdapter:
        key = json.dumps([benchmark, values], sort_keys=True, default=str)
        with self.lock:
            if key not in self.adapters:
                local = dict(values)
                if os.environ.get(MAVEN_REPO_ENV):
                    local["maven_repo"] = Path(os.environ[MAVEN_REPO_ENV])
                adapter = make_builtin(benchmark, local, worker_cache_dir())
                if adapter is None:
                    raise HarnessError(
                        f"benchmark {benchmark!r} is not built into pytest-tebench on this worker; "
                        "only built-in benchmarks can be dispatched to Dask"
                    )
                self.adapters[key] = adapter
            return self.adapters[key]

    def executor(self, name: str, values: Mapping[str, Any]) -> Executor:
        key = json.dumps(
            [
                name,
                values.get("image"),
                values.get("docker_memory"),
                values.get("docker_cpus"),
                values.get("jdk"),
                values.get("warm_jvm"),
            ]
        )
        with self.lock:
            if key not in self.executors:
                options = ExecutorOptions.from_values(
                    name, values, run_id=f"dask-{socket.gethostname()}-{os.getpid()}"
                )
                # our image is built on first use: once per host, whichever worker gets there first
                guard = (
                    _cluster_lock(f"tebench-image-{socket.gethostname()}")
                    if name == "docker"
                    else nullcontext()
                )
                with guard:
                    executor = create_executor(options)
                    executor.toolchain()  # builds or finds the image now, under the lock
                self.executors[key] = executor
            return self.executors[key]

    def close(self) -> None:
        for executor in self.executors.values():
            # leaving: the next run's stale-container sweep gets what this misses
            with contextlib.suppress(Exception):
                executor.close()
        self.executors.clear()


@contextmanager
def _cluster_lock(name: str) -> Iterator[None]:
    try:
        from distributed import Lock
        from distributed import get_client

        get_client()
    except (ImportError, ValueError):
        yield  # not inside a worker (unit tests): nothing to coordinate with
        return
    with Lock(name):  # type: ignore[no-untyped-call]
        yield


_STATE = _WorkerState()


def probe(benchmark: str, values: Mapping[str, Any], executor: str, uses_executor: bool) -> dict[str, Any]:
    """Session start, once per worker: its version, and whether and with what it can build."""
    info: dict[str, Any] = {"version": __version__, "host": socket.gethostname(), "problem": None}
    try:
        _STATE.adapter(benchmark, values)
        info["toolchain"] = _STATE.executor(executor, values).toolchain() if uses_executor else "none"
    except Exception as exc:
        info["problem"] = f"{type(exc).__name__}: {exc}" if not isinstance(exc, HarnessError) else str(exc)
    return info


def worker_version() -> str:
    """Answered by every worker through ``Client.run`` before anything is submitted."""
    return __version__


def run_item(task: ItemTask, bundle: bytes | None, after: object = None) -> dict[str, Any]:
    """Prepare, evaluate and clean up one item: ``{"worker", "record", "error", "gold"}`` with
    one of ``record`` and ``error`` set, and ``gold`` the gold files written while it ran.

    ``after`` is the outcome of the instance's first item when this is a later one (Dask passes
    it once that task finished): its gold files are installed here before the item runs, with
    those the task carries from the controller."""
    inherited = dict(task.gold)
    if isinstance(after, Mapping) and isinstance(after.get("gold"), Mapping):
        inherited.update(after["gold"])
    where = worker_address()
    gold: dict[str, bytes] = {}
    try:
        record = _evaluate(task, bundle, inherited, gold)
        return {"worker": where, "record": record, "error": None, "gold": gold}
    except HarnessError as exc:
        return {"worker": where, "record": None, "error": _error(str(exc), exc.status, exc), "gold": gold}
    except Exception as exc:
        # a bug: it would fail the same way again, so it is a result (with its traceback), not a retry
        message = f"internal error on worker {where}: {type(exc).__name__}: {exc}"
        return {
            "worker": where,
            "record": None,
            "error": _error(message, "error", None, traceback.format_exc()),
            "gold": gold,
        }


def _error(message: str, status: str, exc: HarnessError | None, tail: str = "") -> dict[str, Any]:
    return {
        "message": message,
        "status": status,
        "log_tail": exc.log_tail if exc is not None else tail,
        "timings": dict(exc.timings) if exc is not None else {},
        "workspace": exc.workspace if exc is not None else "",
    }


def _evaluate(
    task: ItemTask, bundle: bytes | None, inherited: Mapping[str, bytes], gold_out: dict[str, bytes]
) -> dict[str, Any]:
    """The item's record; ``gold_out`` receives the gold files written meanwhile (even on failure:
    a gold reference built before the prediction's build broke is still worth keeping)."""
    from pytest_tebench.dispatch.bundles import unpack_bundle

    cache = worker_cache_dir()
    repos_dir = cache / "dask" / "repos"
    if task.commits:
        if bundle is None:
            raise HarnessError(f"no repository bundle reached this worker for {task.instance.repo}")
        unpack_bundle(bundle, task.instance.repo, task.commits, repos_dir)
    adapter = _STATE.adapter(task.benchmark, task.values)
    context = EvalContext(
        cache_dir=cache,
        work_dir=cache / "workspaces",
        # only what the bundles brought: a worker never clones, and never rebuilds embedded demos
        repos=RepositoryStore(cache, local_dirs=(repos_dir,), allow_network=False, embedded={}),
        keep_workspaces=bool(task.values.get("keep_workspaces")),
        executor=lambda: _STATE.executor(task.executor, task.values),
    )
    golds = gold_dir(adapter, cache)
    install(golds, inherited)
    before = snapshot(golds)
    try:
        prepared = adapter.prepare(task.instance, context)
        try:
            return adapter.evaluate(task.instance, prepared, task.prediction, context)
        finally:
            adapter.cleanup(prepared, context)
    finally:
        gold_out.update(appeared(golds, before))
