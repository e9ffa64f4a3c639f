"""The Dask executor's parts without a cluster: options, bundles, the worker task, the summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.tebench.adapter import TebenchAdapter
from pytest_tebench.demo import DEMO_REPO
from pytest_tebench.demo import build_demo_mirror
from pytest_tebench.dispatch.bundles import make_bundle
from pytest_tebench.dispatch.bundles import repository_dir_name
from pytest_tebench.dispatch.bundles import unpack_bundle
from pytest_tebench.dispatch.client import DaskDispatcher
from pytest_tebench.dispatch.client import Job
from pytest_tebench.dispatch.client import WorkerCheck
from pytest_tebench.dispatch.client import repository_commits
from pytest_tebench.dispatch.client import task_key
from pytest_tebench.dispatch.client import workers_line
from pytest_tebench.dispatch.gold import GoldStore
from pytest_tebench.dispatch.settings import DaskTarget
from pytest_tebench.dispatch.settings import dask_target
from pytest_tebench.dispatch.worker import ItemTask
from pytest_tebench.dispatch.worker import portable_values
from pytest_tebench.dispatch.worker import probe
from pytest_tebench.dispatch.worker import run_item
from pytest_tebench.dispatch.worker import worker_cache_dir
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import InputError
from pytest_tebench.instance.datasets import load_records
from pytest_tebench.instance.predictions import gold_predictions
from pytest_tebench.workspace.gitcmd import git_text
from pytest_tebench.workspace.gitcmd import has_commit
from pytest_tebench.workspace.repos import RepositoryStore

from conftest import History


# -- options ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("executor", "address"),
    [
        ("dask://127.0.0.1:8786", "tcp://127.0.0.1:8786"),
        ("dask://scheduler.example.org:9000", "tcp://scheduler.example.org:9000"),
        ("dask+tls://scheduler.example.org:8786", "tls://scheduler.example.org:8786"),
        ("dask://[::1]:8786", "tcp://[::1]:8786"),
    ],
)
def test_dask_addresses(executor: str, address: str) -> None:
    target = dask_target(executor, {"dask_worker_executor": "local", "dask_retries": 0})
    assert target == DaskTarget(address, None, worker_executor="local", retries=0)


@pytest.mark.parametrize(
    ("executor", "values", "message"),
    [
        ("dask://127.0.0.1", {}, "is not dask://HOST:PORT"),
        ("dask://127.0.0.1:99999", {}, "is not dask://HOST:PORT"),
        ("dask://a b:1", {}, "is not dask://HOST:PORT"),
        ("dask", {}, "needs --tebench-dask-scheduler-file"),
        ("dask://127.0.0.1:8786", {"dask_scheduler_file": "/s.json"}, "both name a scheduler"),
        ("docker", {"dask_scheduler_file": "/s.json"}, "drop one of them"),
    ],
)
def test_bad_dask_options_are_refused(executor: str, values: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        dask_target(executor, values)


def test_other_executors_are_not_dask() -> None:
    assert dask_target("local", {}) is None
    assert dask_target("auto", {"dask_scheduler_file": None}) is None


def test_a_scheduler_file_alone_selects_dask(tmp_path: Path) -> None:
    from pytest_tebench.context import options_from_values

    assert (
        options_from_values({"predictions": "gold", "dask_scheduler_file": tmp_path / "s.json"}).executor
        == "dask"
    )
    assert options_from_values({"predictions": "gold"}).executor == "auto"


def test_paths_of_this_machine_do_not_travel(tmp_path: Path) -> None:
    values = {
        "maven_repo": tmp_path,
        "repos": [tmp_path],
        "scoring": "paper",
        "predictions": "run.jsonl",
        "jdk": "17",
    }
    assert portable_values(values) == {"scoring": "paper", "jdk": "17"}


DEMO_ARGS = ("-p", "no:cacheprovider", "--tebench-predictions=gold", "--tebench-skip-update")


def test_dask_refuses_xdist(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*DEMO_ARGS, f"--tebench-cache-dir={pytester.path / 'c'}",
                                "--tebench-executor=dask://127.0.0.1:8786", "-n", "2")  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*dispatches items to the cluster itself: run it without -n (or with -n 0)*"]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--tebench-executor=dask://nowhere",), "*is not dask://HOST:PORT or dask+tls://HOST:PORT*"),
        (("--tebench-dask-scheduler-file=missing.json",), "*no scheduler file at missing.json*"),
        (("--tebench-executor=dask",), "*--tebench-executor=dask needs --tebench-dask-scheduler-file*"),
    ],
)
def test_bad_dask_options_are_usage_errors(
    pytester: pytest.Pytester, args: tuple[str, ...], message: str
) -> None:
    result = pytester.runpytest(
        *DEMO_ARGS, f"--tebench-cache-dir={pytester.path / 'c'}", "-p", "no:xdist", *args
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


@pytest.mark.dask
def test_an_unreachable_scheduler_is_a_clear_error() -> None:
    target = DaskTarget("tcp://127.0.0.1:9", None, connect_timeout=2)
    adapter = TebenchAdapter()
    with pytest.raises(InputError, match=r"cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        DaskDispatcher(target, adapter=adapter, values={}, repos=RepositoryStore(Path("/nonexistent")),
                       cache_dir=Path("/nonexistent"))  # fmt: skip


# -- bundles ------------------------------------------------------------------------------
def test_a_bundle_carries_the_commits_and_leaves_the_source_alone(make_history: Any, tmp_path: Path) -> None:
    history: History = make_history("lib")
    first = history.commit({"a.txt": "one\n"})
    second = history.commit({"a.txt": "two\n"})
    history.commit({"a.txt": "three\n"})
    refs_before = git_text(history.path, "show-ref")
    bundle = make_bundle(history.path, "acme/lib", [second], tmp_path / "bundles")
    assert git_text(history.path, "show-ref") == refs_before  # the user's repository is only read
    assert make_bundle(history.path, "acme/lib", [second], tmp_path / "bundles") == bundle  # kept, not remade

    repos = tmp_path / "worker-repos"
    target = unpack_bundle(bundle.path.read_bytes(), "acme/lib", [second], repos)
    assert target == repos / repository_dir_name("acme/lib") == repos / "acme+lib.git"
    assert has_commit(target, second) and has_commit(target, first)  # with its history
    # the worker's store finds it like a local mirror, offline
    store = RepositoryStore(tmp_path / "cache", local_dirs=(repos,), allow_network=False)
    assert store.locate("acme/lib", [second]) == target
    # a worker that has the commits does not fetch again (even from garbage)
    assert unpack_bundle(b"not a bundle", "acme/lib", [second], repos) == target
    with pytest.raises(HarnessError):
        unpack_bundle(b"not a bundle", "acme/other", [second], repos)


class _NoCommits:
    name = "toy"


def test_an_adapter_must_say_which_commits_it_needs() -> None:
    instance = BenchmarkInstance("toy-1", "toy", "acme/toy", (), "row 1")
    with pytest.raises(HarnessError, match="has no repository_commits"):
        repository_commits(_NoCommits(), instance)  # type: ignore[arg-type]
    assert repository_commits(_NoCommits(), BenchmarkInstance("x", "toy", "", (), "row 1")) == ()  # type: ignore[arg-type]


def test_task_keys_are_readable_and_unique_per_session() -> None:
    key = task_key("gold::textkit__69c4649c[gold]", "s1")
    assert key.startswith("tebench-item-gold_textkit__69c4649c_gold_-") and key.endswith("-s1")
    assert key != task_key("gold::textkit__69c4649c[gold]", "s2")


# -- the worker task, in this process -----------------------------------------------------
@pytest.fixture
def demo_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ItemTask, bytes]:
    monkeypatch.setenv("TEBENCH_WORKER_CACHE_DIR", str(tmp_path / "worker"))
    adapter = TebenchAdapter()
    instance = adapter.load_instances(load_records("demo"))[0]
    [prediction] = gold_predictions([(instance.instance_id, adapter.gold_patch(instance))])
    mirror = build_demo_mirror(tmp_path / "mirror.git")
    commits = repository_commits(adapter, instance)
    bundle = make_bundle(mirror, DEMO_REPO, commits, tmp_path / "bundles")
    task = ItemTask("tebench", {"gold_runs": 1}, "docker", instance, prediction, commits)
    return task, bundle.path.read_bytes()


def test_a_worker_without_a_docker_engine_returns_a_harness_error(
    demo_task: tuple[ItemTask, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    task, bundle = demo_task
    outcome = run_item(task, bundle)
    assert outcome["record"] is None
    assert outcome["error"]["status"] == "error"
    assert "docker" in outcome["error"]["message"].lower()
    info = probe("tebench", {}, "docker", True)
    assert info["problem"] and "docker" in info["problem"].lower()


def test_a_worker_scores_identification_from_the_bundle_alone(demo_task: tuple[ItemTask, bytes]) -> None:
    task, bundle = demo_task
    identification_only = ItemTask(
        task.benchmark, {"skip_update": True}, "local", task.instance, task.prediction, task.commits
    )
    outcome = run_item(identification_only, bundle)
    assert outcome["error"] is None, outcome["error"]
    assert outcome["record"]["status"] == "evaluated"
    assert outcome["record"]["identification"]["f1"] == 1.0
    missing = run_item(identification_only, None)
    assert "no repository bundle reached this worker" in missing["error"]["message"]


def test_the_summary_names_the_workers() -> None:
    records = [{"worker": "tcp://a:1"}, {"worker": "tcp://b:2"}, {"worker": "tcp://a:1"}, {"cache": "hit"}]
    assert workers_line(records) == "dask: 3 item(s) ran on 2 worker(s): tcp://a:1 (2), tcp://b:2 (1)"
    assert workers_line([{"cache": "hit"}]) is None


class _Future:
    def __init__(self, done: bool) -> None:
        self._done = done

    def done(self) -> bool:
        return self._done


class _Client:
    def __init__(self) -> None:
        self.cancelled: list[Any] = []
        self.closed = False

    def cancel(self, futures: list[Any], force: bool) -> None:
        self.cancelled.extend(futures)

    def close(self) -> None:
        self.closed = True


def test_stopping_cancels_what_has_not_finished() -> None:
    dispatcher = DaskDispatcher.__new__(DaskDispatcher)
    finished, pending = _Future(True), _Future(False)
    dispatcher.client = _Client()
    dispatcher.futures = {"a": finished, "b": pending, "c": HarnessError("no bundle")}
    assert dispatcher.close() == 1
    assert dispatcher.client.cancelled == [pending] and dispatcher.client.closed


class _Done:
    def __init__(self, outcome: dict[str, Any]) -> None:
        self.outcome = outcome

    def result(self) -> dict[str, Any]:
        return self.outcome


def test_a_workers_harness_error_comes_back_as_one_with_its_evidence() -> None:
    dispatcher = DaskDispatcher.__new__(DaskDispatcher)
    error = {"message": "gold fails", "status": "invalid_instance", "log_tail": "BUILD FAILURE",
             "timings": {"gold_build": 1.5}, "workspace": ""}  # fmt: skip
    instance = BenchmarkInstance("i", "p", "", (), "row 1")
    [prediction] = gold_predictions([("i", "")])
    dispatcher.futures = {
        "bad": _Done({"worker": "tcp://w:1", "record": None, "error": error}),
        "good": _Done({"worker": "tcp://w:2", "record": {"status": "evaluated"}, "error": None}),
    }
    with pytest.raises(HarnessError) as raised:
        dispatcher.result(Job("bad", instance, prediction))
    assert str(raised.value) == "gold fails (on Dask worker tcp://w:1)"
    assert raised.value.status == "invalid_instance"
    assert raised.value.log_tail == "BUILD FAILURE" and raised.value.timings == {"gold_build": 1.5}
    assert dispatcher.result(Job("good", instance, prediction)) == {
        "status": "evaluated",
        "worker": "tcp://w:2",
    }


class _Submitting:
    def __init__(self) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def submit(self, *args: Any, **kwargs: Any) -> str:
        self.calls.append((args, kwargs))
        return f"future-{len(self.calls)}"


class _Builds:
    name = "toy"
    uses_executor = True


def test_later_items_of_an_instance_wait_for_its_first_one(tmp_path: Path) -> None:
    dispatcher = DaskDispatcher.__new__(DaskDispatcher)
    dispatcher.gold = GoldStore(tmp_path / "gold", tmp_path / "dask-gold", "toy")
    dispatcher.gold.keep("one", {"k1.json": b"gold of one"})
    dispatcher.client = _Submitting()
    dispatcher.adapter = _Builds()  # type: ignore[assignment]
    dispatcher.values, dispatcher.executor_name, dispatcher.session = {}, "local", "s1"
    dispatcher.target = DaskTarget("tcp://127.0.0.1:1", None, retries=3)
    dispatcher.futures, dispatcher.check = {}, WorkerCheck(able={"tcp://w:1": "t"})
    one, two = (BenchmarkInstance(i, "toy", "", (), "row") for i in ("one", "two"))
    [p1, p2] = gold_predictions([("one", ""), ("two", "")])
    jobs = [Job("a", one, p1), Job("b", two, p2), Job("c", one, p1), Job("d", one, p1)]
    keys = dispatcher.submit(jobs)
    assert [key.split("-")[-1] for key in keys] == ["s1"] * 4
    calls = dispatcher.client.calls
    assert [args[3] for args, _ in calls] == [None, None, "future-1", "future-1"]
    assert all(kwargs["resources"] == {"sandbox": 1} and kwargs["retries"] == 3 for _, kwargs in calls)
    assert all(kwargs["workers"] is None for _, kwargs in calls)  # every worker can build: none pinned
    # the gold this machine has for an instance travels with each of its tasks
    assert [dict(args[1].gold) for args, _ in calls] == [{"k1.json": b"gold of one"}, {}] + [
        {"k1.json": b"gold of one"}
    ] * 2
    assert dispatcher.submit(jobs) == []  # submitted once


class _Cluster:
    """A stand-in client for the start-up check: workers, their versions, resources and probes."""

    def __init__(
        self, versions: dict[str, str], resources: dict[str, dict[str, float]], probes: dict[str, Any]
    ):
        self.versions, self.resources, self.probes = versions, resources, probes

    def wait_for_workers(self, n: int, timeout: float) -> None:
        if not self.versions:
            raise TimeoutError

    def run(self, function: Any) -> dict[str, str]:
        return self.versions

    def scheduler_info(self, n_workers: int) -> dict[str, Any]:
        return {"workers": {a: {"resources": r} for a, r in self.resources.items()}}

    def submit(self, *args: Any, workers: list[str], **kwargs: Any) -> _Done:
        return _Done(self.probes[workers[0]])


def _checked(client: _Cluster) -> DaskDispatcher:
    dispatcher = DaskDispatcher.__new__(DaskDispatcher)
    dispatcher.client = client
    dispatcher.adapter = _Builds()  # type: ignore[assignment]
    dispatcher.values, dispatcher.executor_name, dispatcher.session = {}, "docker", "s1"
    dispatcher.target = DaskTarget("tcp://127.0.0.1:1", None)
    dispatcher.check_workers(wait=0)
    return dispatcher


def test_the_start_up_check_refuses_a_cluster_that_cannot_run_the_session() -> None:
    from pytest_tebench import __version__

    ok = {"problem": None, "toolchain": "docker:image=sha256:1"}
    sandbox = {"sandbox": 1.0}
    with pytest.raises(InputError, match="has no workers"):
        _checked(_Cluster({}, {}, {}))
    with pytest.raises(InputError, match=rf"must run pytest-tebench {__version__} .*: tcp://b:2 has 0.0.1"):
        _checked(_Cluster({"tcp://a:1": __version__, "tcp://b:2": "0.0.1"}, {}, {}))
    with pytest.raises(
        InputError, match=r"no Dask worker can build: tcp://a:1: no Docker engine; tcp://b:2: no 'sandbox'"
    ):
        _checked(_Cluster({"tcp://a:1": __version__, "tcp://b:2": __version__}, {"tcp://a:1": sandbox, "tcp://b:2": {}},
                          {"tcp://a:1": {"problem": "no Docker engine"}}))  # fmt: skip
    dispatcher = _checked(
        _Cluster({"tcp://a:1": __version__, "tcp://b:2": __version__}, {"tcp://a:1": sandbox, "tcp://b:2": sandbox},
                 {"tcp://a:1": ok, "tcp://b:2": {"problem": "no Docker engine"}})
    )  # fmt: skip
    assert dispatcher.check.able == {"tcp://a:1": "docker:image=sha256:1"}
    assert dispatcher.check.unable == {"tcp://b:2": "no Docker engine"}
    assert dispatcher.toolchain == "docker:image=sha256:1"


# -- gold references travel back to the controller and out with later tasks ----------------
class _GoldWriting:
    """A toy adapter that, like TEBench's, caches a gold reference under ``<cache>/gold/<key>.json``."""

    name = "toy"
    uses_executor = True

    def prepare(self, instance: BenchmarkInstance, context: Any) -> None:
        return None

    def evaluate(
        self, instance: BenchmarkInstance, prepared: None, prediction: Any, context: Any
    ) -> dict[str, Any]:
        path = context.cache_dir / "gold" / f"key-{instance.instance_id}.json"
        found = path.is_file()
        if not found:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(f"reference of {instance.instance_id}".encode())
        (context.cache_dir / "gold" / ".key.123.tmp").write_bytes(b"a writer in progress")
        return {"status": "evaluated", "gold_cache": "hit" if found else "computed"}

    def cleanup(self, prepared: None, context: Any) -> None:
        return None


def test_gold_written_on_a_worker_comes_back_and_is_installed_on_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_tebench.dispatch import worker

    monkeypatch.setattr(worker._STATE, "adapter", lambda benchmark, values: _GoldWriting())
    instance = BenchmarkInstance("one", "toy", "", (), "row 1")
    [prediction] = gold_predictions([("one", "")])
    task = ItemTask("toy", {}, "local", instance, prediction)
    reference = {"key-one.json": b"reference of one"}

    # the first item builds gold on its worker and sends it back (not the temporary file)
    monkeypatch.setenv("TEBENCH_WORKER_CACHE_DIR", str(tmp_path / "w1"))
    first = run_item(task, None)
    assert first["error"] is None and first["record"]["gold_cache"] == "computed"
    assert first["gold"] == reference

    # a later item on another worker gets it through Dask (the first item's outcome): installed, not rebuilt
    monkeypatch.setenv("TEBENCH_WORKER_CACHE_DIR", str(tmp_path / "w2"))
    later = run_item(task, None, first)
    assert later["record"]["gold_cache"] == "hit" and later["gold"] == {}
    assert (worker_cache_dir() / "gold" / "key-one.json").read_bytes() == b"reference of one"

    # the controller keeps it, lists it for the instance, and its next tasks carry it
    controller = GoldStore(tmp_path / "controller" / "gold", tmp_path / "controller" / "dask-gold", "toy")
    dispatcher = DaskDispatcher.__new__(DaskDispatcher)
    dispatcher.gold = controller
    dispatcher.futures = {"a": _Done(first)}
    assert dispatcher.result(Job("a", instance, prediction))["status"] == "evaluated"
    assert (tmp_path / "controller" / "gold" / "key-one.json").read_bytes() == b"reference of one"
    assert controller.names("one") == ["key-one.json"] and controller.files("two") == {}
    monkeypatch.setenv("TEBENCH_WORKER_CACHE_DIR", str(tmp_path / "w3"))
    carried = run_item(ItemTask("toy", {}, "local", instance, prediction, gold=controller.files("one")), None)
    assert carried["record"]["gold_cache"] == "hit" and carried["gold"] == {}

    # a name outside the gold directory is never written; an existing file under a name is kept
    monkeypatch.setenv("TEBENCH_WORKER_CACHE_DIR", str(tmp_path / "w4"))
    (tmp_path / "w4" / "gold").mkdir(parents=True)
    (tmp_path / "w4" / "gold" / "key-one.json").write_bytes(b"built here")
    hostile = {"key-one.json": b"other", "../escaped.json": b"x", "/abs.json": b"x", ".hidden": b"x"}
    run_item(ItemTask("toy", {}, "local", instance, prediction, gold=hostile), None)
    assert (tmp_path / "w4" / "gold" / "key-one.json").read_bytes() == b"built here"
    assert sorted(p.name for p in (tmp_path / "w4").rglob("*") if p.is_file()) == [
        ".key.123.tmp",
        "key-one.json",
    ]
    assert controller.keep("one", {"../escaped.json": b"x"}) == []
    assert not (tmp_path / "controller" / "escaped.json").exists()
