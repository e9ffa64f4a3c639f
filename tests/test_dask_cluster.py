"""The Dask executor for real: a scheduler and two workers on 127.0.0.1, started as subprocesses
(the commands docs/dask.md gives), running a few demo items with real Maven builds."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.dispatch.loopback import LoopbackCluster

from conftest import PREDICTIONS
from conftest import TEST_MAVEN_REPO
from conftest import DemoRun
from conftest import by_instance

pytestmark = [pytest.mark.dask, pytest.mark.maven]

#: Two instances run (one per worker), the other seven are deselected.
SELECTED = ("textkit__69c4649c", "textkit__c839cc1f")
SELECT = " or ".join(SELECTED)
#: One gold run per instance is enough here (what is tested is where builds run); no xdist.
FAST = ("--tebench-gold-runs=1", "-p", "no:xdist")


@pytest.fixture(scope="module")
def worker_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Shared by the module's clusters: the second one finds gold references and repositories."""
    return tmp_path_factory.mktemp("dask-worker-cache")


@pytest.fixture
def cluster(tmp_path_factory: pytest.TempPathFactory, worker_cache: Path) -> Iterator[LoopbackCluster]:
    env = {"TEBENCH_WORKER_CACHE_DIR": str(worker_cache), "TEBENCH_WORKER_MAVEN_REPO": str(TEST_MAVEN_REPO)}
    with LoopbackCluster(tmp_path_factory.mktemp("dask-cluster"), workers=2, env=env) as running:
        yield running


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """A record without what differs between two runs of the same build: times, where, cache (a
    Dask worker's stored production build is its own: ``prebuilt`` says whether it had one)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                key: strip(item)
                for key, item in value.items()
                if key not in ("timings", "seconds", "worker", "cache", "key", "prebuilt", "warm_jvm")
            }
        if isinstance(value, list):
            return [strip(item) for item in value]
        return value

    stripped: dict[str, Any] = strip(record)
    return stripped


def item_keys(keys: list[str]) -> list[str]:
    return [key for key in keys if key.startswith("tebench-item-")]


def test_selected_items_run_on_both_workers_equal_local_and_stored_ones_are_never_submitted(
    cluster: LoopbackCluster, demo_run: DemoRun, demo_cache: Path, worker_cache: Path
) -> None:
    dask = cluster.executor_option
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
    # the gold references the workers built came back into this machine's cache, listed per instance
    indexes = {json.loads(p.read_text())["instance_id"]: p for p in (demo_cache / "dask-gold").glob("*.json")}
    assert sorted(indexes) == sorted(SELECTED)
    for index in indexes.values():
        names = json.loads(index.read_text())["files"]
        assert names and all(name.endswith(".json") for name in names)
        assert all((demo_cache / "gold" / name).is_file() for name in names)
        assert all((worker_cache / "gold" / name).is_file() for name in names)  # built there, not here

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


def test_a_worker_killed_mid_build_gives_a_complete_report(
    cluster: LoopbackCluster, demo_run: DemoRun
) -> None:
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
    dask = cluster.executor_option
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


def test_stopping_early_cancels_what_the_cluster_has_not_run(
    cluster: LoopbackCluster, demo_run: DemoRun
) -> None:
    # identification only (no builds, about a second an item): -x stops at the first empty, failing item
    result, report = demo_run(
        str(PREDICTIONS / "empty.jsonl"), cluster.executor_option, "--tebench-skip-update", "-p", "no:xdist",
        "-x", "--tebench-rerun",
    )  # fmt: skip
    result.assert_outcomes(failed=1)
    assert report["interrupted"] is True
    result.stdout.fnmatch_lines(["dask: * unfinished task(s) cancelled on the cluster"])
    assert len(item_keys(cluster.task_keys())) == 9  # all were submitted; the rest never ran


@pytest.mark.docker
def test_workers_build_in_the_sandbox_and_one_without_an_engine_is_left_out(
    tmp_path_factory: pytest.TempPathFactory, worker_cache: Path, demo_run: DemoRun
) -> None:
    env = {"TEBENCH_WORKER_CACHE_DIR": str(worker_cache), "TEBENCH_WORKER_MAVEN_REPO": str(TEST_MAVEN_REPO)}
    with LoopbackCluster(tmp_path_factory.mktemp("dask-cluster"), workers=1, env=env) as cluster:
        cluster.start_worker("no-engine", {"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
        cluster.client.wait_for_workers(2, timeout=60)
        names = cluster.worker_names()
        result, report = demo_run(
            "gold", cluster.executor_option, *FAST, "-k", SELECTED[0], "--tebench-rerun"
        )
    result.assert_outcomes(passed=1, deselected=8)
    result.stdout.fnmatch_lines(
        ["*dask: 1 worker(s) at tcp://127.0.0.1:*, building with docker*",
         "*dask: worker tcp://127.0.0.1:* is left out: *Docker*"]
    )  # fmt: skip
    [record] = report["results"]  # type: ignore[index]
    assert names[record["worker"]] == "w1"
    assert record["update"]["executor"] == "docker"
    assert record["update"]["s_update"] == 1.0
    result.stdout.fnmatch_lines(["*builds ran on: docker*"])
