"""The Dask executor for real: a scheduler and two workers on 127.0.0.1, started as subprocesses
(the commands docs/dask.md gives), running a few demo items with real Maven builds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import TEST_MAVEN_REPO
from conftest import DemoRun
from conftest import by_instance

pytestmark = [pytest.mark.dask, pytest.mark.maven]

BIN = Path(sys.executable).parent
#: Two instances run (one per worker), the other seven are deselected.
SELECTED = ("textkit__69c4649c", "textkit__c839cc1f")
SELECT = " or ".join(SELECTED)
#: One gold run per instance is enough here (what is tested is where builds run); no xdist.
FAST = ("--tebench-gold-runs=1", "-p", "no:xdist")


class Cluster:
    """``dask scheduler`` and ``dask worker --resources sandbox=1 --nthreads 1`` processes."""

    def __init__(self, base: Path, worker_cache: Path) -> None:
        self.base = base
        self.worker_cache = worker_cache
        self.scheduler_file = base / "scheduler.json"
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self._start("scheduler", [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                                  "--no-dashboard", "--scheduler-file", str(self.scheduler_file)])  # fmt: skip
        self._wait(self._read_address, "the scheduler's address")
        self.address = str(self._read_address())
        for name in ("w1", "w2"):
            self.start_worker(name)
        from distributed import Client

        self.client = Client(self.address, timeout=30, set_as_default=False)
        self.client.wait_for_workers(2, timeout=60)

    def _start(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        with (self.base / f"{name}.log").open("wb") as log:
            self.processes[name] = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}, cwd=self.base
            )

    def start_worker(self, name: str) -> None:
        env = {
            "TEBENCH_WORKER_CACHE_DIR": str(self.worker_cache),
            "TEBENCH_WORKER_MAVEN_REPO": str(TEST_MAVEN_REPO),
        }
        self._start(name, [str(BIN / "dask"), "worker", "--scheduler-file", str(self.scheduler_file),
                           "--resources", "sandbox=1", "--nthreads", "1", "--no-nanny", "--name", name,
                           "--host", "127.0.0.1", "--no-dashboard"], env)  # fmt: skip

    def _read_address(self) -> str | None:
        try:
            return str(json.loads(self.scheduler_file.read_text())["address"])
        except (OSError, ValueError, KeyError):
            return None  # not written yet, or half written

    @staticmethod
    def _wait(ready: Any, what: str, limit: float = 60) -> None:
        deadline = time.monotonic() + limit
        while not ready():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} did not appear within {limit} s")
            time.sleep(0.2)

    def worker_names(self) -> dict[str, str]:
        """address -> worker name (w1, w2)."""
        workers = self.client.scheduler_info(n_workers=-1)["workers"]
        return {address: str(info["name"]) for address, info in workers.items()}

    def task_keys(self) -> list[str]:
        """Every key the scheduler has seen (its transition log)."""
        keys: list[str] = self.client.run_on_scheduler(
            lambda dask_scheduler: sorted({str(entry[0]) for entry in dask_scheduler.transition_log})
        )
        return keys

    def kill(self, name: str) -> None:
        self.processes[name].send_signal(signal.SIGKILL)
        self.processes[name].wait(30)

    def stop(self) -> None:
        self.client.close()
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest.fixture(scope="module")
def worker_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Shared by the module's clusters: the second one finds gold references and repositories."""
    return tmp_path_factory.mktemp("dask-worker-cache")


@pytest.fixture
def cluster(tmp_path_factory: pytest.TempPathFactory, worker_cache: Path) -> Iterator[Cluster]:
    running = Cluster(tmp_path_factory.mktemp("dask-cluster"), worker_cache)
    try:
        yield running
    finally:
        running.stop()


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """A record without what differs between two runs of the same build: times, where, cache."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                key: strip(item)
                for key, item in value.items()
                if key not in ("timings", "seconds", "worker", "cache", "key")
            }
        if isinstance(value, list):
            return [strip(item) for item in value]
        return value

    stripped: dict[str, Any] = strip(record)
    return stripped


def item_keys(keys: list[str]) -> list[str]:
    return [key for key in keys if key.startswith("tebench-item-")]


def test_selected_items_run_on_both_workers_equal_local_and_stored_ones_are_never_submitted(
    cluster: Cluster, demo_run: DemoRun
) -> None:
    dask = f"--tebench-executor=dask://{cluster.address.removeprefix('tcp://')}"
    common = ("--tebench-dask-worker-executor=local", *FAST, "-k", SELECT, "--tebench-rerun")
    result, report = demo_run("gold", dask, *common)
    result.assert_outcomes(passed=2, deselected=7)
    records = by_instance(report)
    assert sorted(records) == sorted(SELECTED)
    # both workers built an item, and every record names its worker
    names = cluster.worker_names()
    assert sorted(names[str(r["worker"])] for r in records.values()) == ["w1", "w2"]
    result.stdout.fnmatch_lines(["*dask: 2 worker(s) at tcp://127.0.0.1:*, building with local*",
                                 "dask: 2 item(s) ran on 2 worker(s): tcp://127.0.0.1:* (1), tcp://127.0.0.1:* (1)"])  # fmt: skip
    # the deselected seven were never submitted: the scheduler saw exactly the two selected tasks
    submitted = item_keys(cluster.task_keys())
    assert len(submitted) == 2
    assert all(any(instance in key for instance in SELECTED) for key in submitted)

    # the same items built by the local executor give the same records
    local_result, local_report = demo_run(
        "gold", "--tebench-executor=local", *FAST, "-k", SELECT, "--tebench-rerun"
    )
    local_result.assert_outcomes(passed=2, deselected=7)
    local_records = by_instance(local_report)
    for instance in SELECTED:
        assert "worker" not in local_records[instance]
        assert comparable(records[instance]) == comparable(local_records[instance])

    # stored results are reused where pytest runs: nothing more reaches the cluster
    again, again_report = demo_run("gold", dask, *common[:-1])
    again.assert_outcomes(passed=2, deselected=7)
    assert all(r["cache"] == "hit" and "worker" not in r for r in by_instance(again_report).values())
    assert item_keys(cluster.task_keys()) == submitted
    assert "item(s) ran on" not in again.stdout.str()


def test_a_worker_killed_mid_build_gives_a_complete_report(cluster: Cluster, demo_run: DemoRun) -> None:
    names = cluster.worker_names()
    killed: list[str] = []
    finished = threading.Event()

    def kill_the_first_busy_worker() -> None:
        from distributed import Client

        with Client(cluster.address, timeout=30, set_as_default=False) as watcher:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and not killed and not finished.is_set():
                for address, keys in watcher.processing().items():
                    if item_keys([str(k) for k in keys]):
                        time.sleep(3)  # well inside its Maven build
                        cluster.kill(names[address])
                        killed.append(address)
                        break
                time.sleep(0.2)

    killer = threading.Thread(target=kill_the_first_busy_worker)
    killer.start()
    dask = f"--tebench-executor=dask://{cluster.address.removeprefix('tcp://')}"
    result, report = demo_run(
        "gold", dask, "--tebench-dask-worker-executor=local", *FAST, "-k", SELECT, "--tebench-rerun"
    )
    finished.set()
    killer.join()
    assert len(killed) == 1
    result.assert_outcomes(passed=2, deselected=7)
    records = by_instance(report)
    assert sorted(records) == sorted(SELECTED)
    assert all(r["status"] == "evaluated" for r in records.values())
    # what the dead worker was building ran again on the other one
    survivors = {str(r["worker"]) for r in records.values()}
    assert killed[0] not in survivors and len(survivors) == 1
