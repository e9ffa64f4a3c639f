"""Dask dispatch on one machine, as ratios measured in one run (the machine is noisy).

    python bench/dask_throughput.py [--instances N] [--rounds R] [--maven-repo DIR]

Evaluates the gold patches of N demo instances (``-k``-selected, gold reference builds warm, so
each item is one prediction build) as a user would (pytest subprocesses, ``--tebench-rerun`` so
every item is built), in R rounds that each run, back to back:

1. the local executor (``-n 0``);
2. a loopback Dask cluster of one worker (``--resources sandbox=1 --nthreads 1``);
3. a loopback cluster of two such workers.

The clusters are started once and warmed by one untimed run each, as long-lived workers are in
use (the workers' imports and repository caches are a start-up cost, not a per-item one); every
timed run still connects, checks the workers, bundles and submits. Interleaving the rounds
spreads the machine's noise over the three; the figures are medians over the rounds.

Prints two workers over one worker throughput (one/two wall time; about 1.8x where cores allow:
a Maven build uses more than one core, so a 2-core machine gives less) and the per-item overhead
of dispatch over the local executor (one worker / local wall time; target <= 1.1x).

The controller and the workers share one cache directory and Maven repository, so the gold
references of the untimed warm-up run are found by every timed run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_tebench.dispatch.loopback import LoopbackCluster
from pytest_tebench.dispatch.worker import CACHE_ENV
from pytest_tebench.dispatch.worker import MAVEN_REPO_ENV

from common import MAVEN_REPO
from common import demo_instances
from common import median
from common import show


def run_pytest(
    base: Path, cache: Path, maven_repo: Path, select: str, *extra: str
) -> tuple[float, list[str]]:
    report = base / "report.json"
    report.unlink(missing_ok=True)
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
            f"--rootdir={base}", "--tebench-predictions=gold", f"--tebench-cache-dir={cache}",
            f"--tebench-maven-repo={maven_repo}", f"--tebench-report={report}", "--tebench-rerun",
            "-k", select, *extra,
        ],
        cwd=base, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    results = json.loads(report.read_text())["results"] if report.is_file() else []
    statuses = [str(r["status"]) for r in results]
    return seconds, statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--maven-repo", type=Path, default=MAVEN_REPO)
    args = parser.parse_args()
    select = " or ".join(list(demo_instances())[: args.instances])
    expected = ["evaluated"] * args.instances
    with tempfile.TemporaryDirectory(prefix="tebench-dask-bench-") as scratch:
        base = Path(scratch)
        cache = base / "cache"
        env = {CACHE_ENV: str(cache), MAVEN_REPO_ENV: str(args.maven_repo.resolve())}

        def run(*extra: str) -> float:
            seconds, statuses = run_pytest(base, cache, args.maven_repo, select, *extra)
            assert statuses == expected, (extra, statuses)
            return seconds

        # untimed: warms the Maven repository and the gold references every timed run reuses
        run("--tebench-executor=local")
        with (
            LoopbackCluster(base / "cluster-1", workers=1, env=env) as one,
            LoopbackCluster(base / "cluster-2", workers=2, env=env) as two,
        ):
            dask = ("--tebench-dask-worker-executor=local",)
            run(one.executor_option, *dask)  # untimed: the workers' first run
            run(two.executor_option, *dask)
            timings: dict[str, list[float]] = {"local": [], "one": [], "two": []}
            for _ in range(args.rounds):
                timings["local"].append(run("--tebench-executor=local"))
                timings["one"].append(run(one.executor_option, *dask))
                timings["two"].append(run(two.executor_option, *dask))
    local, one_worker, two_workers = (median(timings[k]) for k in ("local", "one", "two"))
    show("items (gold patches, one prediction build each)", args.instances)
    show("rounds (figures are medians)", args.rounds)
    show("local executor, -n 0 [s]", f"{local:.1f}  {_listed(timings['local'])}")
    show("Dask, one worker [s]", f"{one_worker:.1f}  {_listed(timings['one'])}")
    show("Dask, two workers [s]", f"{two_workers:.1f}  {_listed(timings['two'])}")
    show(
        "throughput, two workers / one worker (expect ~1.8x where cores allow)",
        f"{one_worker / two_workers:.2f}x",
    )
    show("per-item overhead, one Dask worker / local (target <= 1.1x)", f"{one_worker / local:.2f}x")


def _listed(values: list[float]) -> str:
    return "(" + ", ".join(f"{v:.1f}" for v in values) + ")"


if __name__ == "__main__":
    main()
