"""The controller's side of Dask dispatch: connect, check the workers, submit items, wait, cancel.

Made by the pytest layer on the machine that runs pytest, after collection and deselection;
every item then waits for its own future (:meth:`DaskDispatcher.result`), so pytest reports,
``-x`` and the result cache work as with local builds. Never imports pytest.

Each task asks for ``resources={"sandbox": 1}`` (start workers with ``--resources sandbox=N``:
N concurrent builds per worker) and is pinned to the workers that passed the start-up probe; a
worker that dies mid-build is replaced by the scheduler (its items run elsewhere); a task that
raised is submitted again ``retries`` times.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections import Counter
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from pytest_tebench import __version__
from pytest_tebench.benchmarks.base import BenchmarkAdapter
from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.dispatch.bundles import make_bundle
from pytest_tebench.dispatch.gold import INDEX_SUBDIR
from pytest_tebench.dispatch.gold import GoldStore
from pytest_tebench.dispatch.gold import gold_dir
from pytest_tebench.dispatch.settings import DaskTarget
from pytest_tebench.dispatch.worker import ItemTask
from pytest_tebench.dispatch.worker import portable_values
from pytest_tebench.dispatch.worker import probe
from pytest_tebench.dispatch.worker import run_item
from pytest_tebench.dispatch.worker import worker_version
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import InputError
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.workspace.repos import RepositoryStore

#: Prefix of every item task's key (the scheduler shows it; the tests look for it).
TASK_PREFIX = "tebench-item"
#: The resource every item task needs one of.
SANDBOX = "sandbox"


class RemoteError(HarnessError):
    """A harness failure that happened on a worker, with the status and evidence it sent back."""

    def __init__(self, message: str, *, status: str = "error", **evidence: Any) -> None:
        super().__init__(message, **evidence)
        self.status = status


@dataclass(frozen=True)
class Job:
    nodeid: str
    instance: BenchmarkInstance
    prediction: Prediction


@dataclass
class WorkerCheck:
    """What the start-up probe learnt about the cluster."""

    able: dict[str, str] = field(default_factory=dict)  # address -> toolchain
    unable: dict[str, str] = field(default_factory=dict)  # address -> why


def repository_commits(adapter: BenchmarkAdapter, instance: BenchmarkInstance) -> tuple[str, ...]:
    """The commits of ``instance.repo`` an item needs, from the adapter's optional
    ``repository_commits`` (benchmarks without a repository need none)."""
    if not instance.repo:
        return ()
    commits: Callable[[BenchmarkInstance], Sequence[str]] | None = getattr(
        adapter, "repository_commits", None
    )
    if commits is None:
        raise HarnessError(
            f"benchmark {adapter.name!r} does not say which commits of {instance.repo} an item needs "
            "(its adapter has no repository_commits), so its items cannot be dispatched to Dask"
        )
    return tuple(commits(instance))


def task_key(nodeid: str, session: str) -> str:
    """A readable task key, unique across sessions sharing a cluster: the item id, a digest of it
    and the session's token."""
    digest = hashlib.sha256(nodeid.encode()).hexdigest()[:12]
    return f"{TASK_PREFIX}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', nodeid)[-80:]}-{digest}-{session}"


class DaskDispatcher:
    def __init__(
        self,
        target: DaskTarget,
        *,
        adapter: BenchmarkAdapter,
        values: dict[str, Any],
        repos: RepositoryStore,
        cache_dir: Path,
    ) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise InputError(
                "the Dask executor needs Dask: pip install 'pytest-tebench[dask]'",
                source="--tebench-executor",
            ) from None
        self.target = target
        self.adapter = adapter
        self.values = portable_values(values)
        self.repos = repos
        self.bundle_dir = cache_dir / "dask" / "bundles"
        #: Gold references the workers build come back here, into this machine's cache.
        self.gold = GoldStore(gold_dir(adapter, cache_dir), cache_dir / INDEX_SUBDIR, adapter.name)
        self.executor_name = target.worker_executor
        #: Part of every result key (with ``executor_name``): the toolchains the able workers build with.
        self.toolchain = ""
        self.futures: dict[str, Any] = {}
        self._bundles: dict[str, Any] = {}
        self.check = WorkerCheck()
        self.session = uuid.uuid4().hex[:8]
        try:
            self.client = Client(  # type: ignore[no-untyped-call]
                target.address,
                scheduler_file=None if target.scheduler_file is None else str(target.scheduler_file),
                timeout=target.connect_timeout,
                set_as_default=False,
            )
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(
                f"cannot reach the Dask scheduler at {target.shown}: {exc}", source="--tebench-executor"
            ) from None

    # -- session start --------------------------------------------------------------------
    def check_workers(self, wait: float = 30.0) -> WorkerCheck:
        """Every worker runs our version and can build: else a clear error before anything runs."""
        try:
            self.client.wait_for_workers(1, timeout=wait)
        except TimeoutError:
            raise InputError(
                f"the Dask scheduler at {self.target.shown} has no workers (start some: docs/dask.md)",
                source="--tebench-executor",
            ) from None
        versions: dict[str, str] = self.client.run(worker_version)
        wrong = {address: version for address, version in versions.items() if version != __version__}
        if wrong:
            listed = ", ".join(f"{address} has {version}" for address, version in sorted(wrong.items()))
            raise InputError(
                f"Dask workers must run pytest-tebench {__version__} like this machine: {listed}",
                source="--tebench-executor",
            )
        workers = self.client.scheduler_info(n_workers=-1)["workers"]
        without = sorted(a for a, info in workers.items() if not (info.get("resources") or {}).get(SANDBOX))
        probes = {
            address: self.client.submit(
                probe, self.adapter.name, self.values, self.executor_name, self.adapter.uses_executor,
                workers=[address], allow_other_workers=False, pure=False, 
                key=f"tebench-probe-{self.session}-{address}",
            )
            for address in sorted(versions)
            if address not in without
        }  # fmt: skip
        check = WorkerCheck(
            unable={a: f"no '{SANDBOX}' resource (start it with --resources {SANDBOX}=1)" for a in without}
        )
        for address, future in probes.items():
            info = future.result()
            if info["problem"]:
                check.unable[address] = str(info["problem"])
            else:
                check.able[address] = str(info["toolchain"])
        if not check.able:
            reasons = "; ".join(f"{a}: {why}" for a, why in sorted(check.unable.items()))
            raise InputError(f"no Dask worker can build: {reasons}", source="--tebench-executor")
        self.check = check
        self.toolchain = "|".join(sorted(set(check.able.values())))
        return check

    # -- submitting and waiting -------------------------------------------------------------
    def submit(self, jobs: Sequence[Job]) -> list[str]:
        """Submit one task per job; returns the task keys. A job whose repository cannot be
        bundled is not submitted: its item reports that error when it waits."""
        wanted: dict[str, tuple[str, ...]] = {}
        for job in jobs:
            if job.nodeid in self.futures:
                continue
            try:
                wanted[job.nodeid] = repository_commits(self.adapter, job.instance)
            except HarnessError as exc:
                self.futures[job.nodeid] = exc
        # one bundle per repository for the whole selection: its items share most of their history
        by_repo: dict[str, set[str]] = {}
        for job in jobs:
            if wanted.get(job.nodeid):
                by_repo.setdefault(job.instance.repo, set()).update(wanted[job.nodeid])
        bundles: dict[str, Any] = {}
        for repo, shas in by_repo.items():
            try:
                bundles[repo] = self._bundle(repo, tuple(sorted(shas)))
            except HarnessError as exc:
                bundles[repo] = exc
        keys: list[str] = []
        # the first item of an instance builds its gold reference unless this machine has it; the
        # instance's other items wait for it and get its gold files through Dask (``after``)
        first: dict[str, Any] = {}
        carried: dict[str, dict[str, bytes]] = {}
        for job in jobs:
            if job.nodeid not in wanted:
                continue
            commits = wanted[job.nodeid]
            bundle = bundles.get(job.instance.repo) if commits else None
            if isinstance(bundle, HarnessError):
                self.futures[job.nodeid] = bundle
                continue
            instance_id = job.instance.instance_id
            if self.adapter.uses_executor and instance_id not in carried:
                carried[instance_id] = self.gold.files(instance_id)
            task = ItemTask(
                self.adapter.name, self.values, self.executor_name, job.instance, job.prediction, commits,
                gold=carried.get(instance_id, {}),
            )  # fmt: skip
            key = task_key(job.nodeid, self.session)
            after = first.get(job.instance.instance_id) if self.adapter.uses_executor else None
            self.futures[job.nodeid] = self.client.submit(
                run_item, task, bundle, after,
                key=key, resources={SANDBOX: 1}, retries=self.target.retries, pure=False,
                # pinned only when some workers cannot build: a pinned task waits for its workers
                # forever, and a worker restarted by its nanny comes back under a new address
                workers=sorted(self.check.able) if self.check.unable else None, allow_other_workers=False,
            )  # fmt: skip
            first.setdefault(job.instance.instance_id, self.futures[job.nodeid])
            keys.append(key)
        return keys

    def _bundle(self, repo: str, commits: tuple[str, ...]) -> Any:
        bundle = make_bundle(self.repos.locate(repo, commits), repo, commits, self.bundle_dir)
        if bundle.digest not in self._bundles:
            # sent to the cluster once; each task that needs it refers to the same data
            [self._bundles[bundle.digest]] = self.client.scatter(  # type: ignore[no-untyped-call]
                [bundle.path.read_bytes()], hash=False
            )
        return self._bundles[bundle.digest]

    def result(self, job: Job) -> dict[str, Any]:
        """The item's record, waiting for its task (submitted now if it was not yet)."""
        if job.nodeid not in self.futures:
            self.submit([job])
        future = self.futures[job.nodeid]
        if isinstance(future, HarnessError):
            raise future
        try:
            outcome: dict[str, Any] = future.result()
        except Exception as exc:
            # KilledWorker (the workers running it kept dying), a cancelled or lost task, or an
            # exception the retries did not cure: the harness's failure, never a score
            raise HarnessError(f"the Dask task of this item failed: {type(exc).__name__}: {exc}") from exc
        if outcome.get("gold"):
            # kept whatever the item's outcome: gold built before a prediction's build broke is good
            self.gold.keep(job.instance.instance_id, outcome["gold"])
        if outcome["error"] is not None:
            error = outcome["error"]
            raise RemoteError(
                f"{error['message']} (on Dask worker {outcome['worker']})",
                status=str(error["status"]),
                log_tail=str(error["log_tail"] or ""),
                timings=error["timings"],
                workspace=str(error["workspace"] or ""),
            )
        record: dict[str, Any] = outcome["record"]
        record["worker"] = outcome["worker"]
        return record

    # -- the end ------------------------------------------------------------------------
    def close(self) -> int:
        """Cancel what has not finished (Ctrl-C, -x) and disconnect; returns how many were cancelled."""
        pending = [f for f in self.futures.values() if not isinstance(f, HarnessError) and not f.done()]
        if pending:
            self.client.cancel(pending, force=True)  # type: ignore[no-untyped-call]
        self.client.close()  # type: ignore[no-untyped-call]
        return len(pending)


def workers_line(records: Sequence[dict[str, Any]]) -> str | None:
    """The summary line naming the workers that ran items, or None when none ran on one."""
    ran = Counter(str(r["worker"]) for r in records if r.get("worker") and r.get("cache") != "hit")
    if not ran:
        return None
    listed = ", ".join(f"{address} ({count})" for address, count in sorted(ran.items()))
    return f"dask: {sum(ran.values())} item(s) ran on {len(ran)} worker(s): {listed}"
