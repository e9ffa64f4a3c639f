"""A Dask cluster on 127.0.0.1: one ``dask scheduler`` and N ``dask worker`` subprocesses.

The same commands docs/dask.md gives for real hosts, on one machine: the test suite and
``bench/dask_throughput.py`` use it, and so can anyone trying the Dask executor locally. Workers
run without a nanny (a killed worker stays dead), one thread each, with ``sandbox=1``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: The ``dask`` command of the running interpreter's environment.
DASK = str(Path(sys.executable).parent / "dask")


class LoopbackCluster:
    """Start with :meth:`start`, stop with :meth:`stop` (or use it as a context manager)."""

    def __init__(self, base: Path, *, workers: int = 2, env: Mapping[str, str] | None = None) -> None:
        self.base = base
        self.workers = workers
        self.env = dict(env or {})
        self.scheduler_file = base / "scheduler.json"
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.address = ""
        self.client: Any = None

    def __enter__(self) -> LoopbackCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout: float = 60) -> LoopbackCluster:
        from distributed import Client

        self.base.mkdir(parents=True, exist_ok=True)
        self._spawn("scheduler", [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                  "--scheduler-file", str(self.scheduler_file)])  # fmt: skip
        _wait(self._read_address, "the scheduler's address", timeout)
        self.address = str(self._read_address())
        for index in range(1, self.workers + 1):
            self.start_worker(f"w{index}")
        self.client = Client(self.address, timeout=timeout, set_as_default=False)  # type: ignore[no-untyped-call]
        self.client.wait_for_workers(self.workers, timeout=timeout)
        return self

    @property
    def executor_option(self) -> str:
        """The ``--tebench-executor`` value that reaches this cluster."""
        return "--tebench-executor=dask://" + self.address.removeprefix("tcp://")

    def start_worker(self, name: str, env: Mapping[str, str] | None = None) -> None:
        """One more worker; ``env`` is added to the cluster's environment (e.g. a ``DOCKER_HOST``)."""
        argv = [DASK, "worker", "--scheduler-file", str(self.scheduler_file), "--resources", "sandbox=1",
                "--nthreads", "1", "--no-nanny", "--name", name, "--host", "127.0.0.1",
                "--no-dashboard"]  # fmt: skip
        self._spawn(name, argv, env)

    def _spawn(self, name: str, argv: list[str], env: Mapping[str, str] | None = None) -> None:
        with (self.base / f"{name}.log").open("wb") as log:
            self.processes[name] = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.env, **(env or {})},
                cwd=self.base,
            )

    def _read_address(self) -> str | None:
        try:
            return str(json.loads(self.scheduler_file.read_text())["address"])
        except (OSError, ValueError, KeyError):
            return None  # not written yet, or half written

    def worker_names(self) -> dict[str, str]:
        """Worker address -> name (w1, w2, ...)."""
        workers = self.client.scheduler_info(n_workers=-1)["workers"]
        return {str(address): str(info["name"]) for address, info in workers.items()}

    def task_keys(self) -> list[str]:
        """Every task key the scheduler has seen (its transition log)."""
        keys: list[str] = self.client.run_on_scheduler(
            lambda dask_scheduler: sorted({str(entry[0]) for entry in dask_scheduler.transition_log})
        )
        return keys

    def kill(self, name: str) -> None:
        """SIGKILL one worker (a host that dies mid-build)."""
        self.processes[name].send_signal(signal.SIGKILL)
        self.processes[name].wait(30)

    def stop(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        # workers first: a worker whose scheduler is gone keeps trying to reconnect for a while
        for process in reversed(self.processes.values()):
            if process.poll() is None:
                process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(15)


def _wait(ready: Callable[[], object], what: str, limit: float) -> None:
    deadline = time.monotonic() + limit
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not appear within {limit} s")
        time.sleep(0.2)
