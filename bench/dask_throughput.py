"""Dask dispatch on one machine, as ratios measured in one run (the machine is noisy).

    python bench/dask_throughput.py [--instances N] [--maven-repo DIR]

Evaluates the gold patches of N demo instances (``-k``-selected, gold reference builds warm, so
each item is one prediction build) three times, as a user would (pytest subprocesses,
``--tebench-rerun`` so every item is built):

1. with the local executor (``-n 0``);
2. through a loopback Dask cluster of one worker (``--resources sandbox=1 --nthreads 1``);
3. through one of two workers.

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
    parser.add_argument("--maven-repo", type=Path, default=MAVEN_REPO)
    args = parser.parse_args()
    select = " or ".join(list(demo_instances())[: args.instances])
    with tempfile.TemporaryDirectory(prefix="tebench-dask-bench-") as scratch:
        base = Path(scratch)
        cache = base / "cache"
        env = {CACHE_ENV: str(cache), MAVEN_REPO_ENV: str(args.maven_repo.resolve())}
        # untimed: warms the Maven repository and the gold references every timed run reuses
        _, warm = run_pytest(base, cache, args.maven_repo, select, "--tebench-executor=local")
        local, local_statuses = run_pytest(base, cache, args.maven_repo, select, "--tebench-executor=local")
        timings: dict[int, float] = {}
        for workers in (1, 2):
            with LoopbackCluster(base / f"cluster-{workers}", workers=workers, env=env) as cluster:
                seconds, statuses = run_pytest(
                    base, cache, args.maven_repo, select, cluster.executor_option,
                    "--tebench-dask-worker-executor=local",
                )  # fmt: skip
            assert statuses == local_statuses == warm == ["evaluated"] * args.instances, (statuses, warm)
            timings[workers] = seconds
    show("items (gold patches, one prediction build each)", args.instances)
    show("local executor, -n 0 [s]", f"{local:.1f}")
    show("Dask, one worker [s]", f"{timings[1]:.1f}")
    show("Dask, two workers [s]", f"{timings[2]:.1f}")
    show(
        "throughput, two workers / one worker (expect ~1.8x where cores allow)",
        f"{timings[1] / timings[2]:.2f}x",
    )
    show("per-item overhead, one Dask worker / local (target <= 1.1x)", f"{timings[1] / local:.2f}x")


if __name__ == "__main__":
    main()
