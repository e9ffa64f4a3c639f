"""SWE-bench harness time per prediction over a bare ``pytest`` of the same test files, same image.

For each instance of the SWE-bench demo (or ``--dataset`` with ``--repos``): the environment is
prepared once (built if missing, not timed), then the harness evaluates gold ``--repeat`` times
(clone, apply, reset tests, apply test_patch, container, grading) and the bare run is the same
test command in a fresh container of the same image on an already patched tree. Prints the ratio
per instance and overall (target <= 1.3x), and checks that a second prediction rebuilds nothing.

    python bench/swebench_cost.py [--dataset D --repos DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import shlex
import tempfile
import time
from pathlib import Path

from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.swebench import evaluation
from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench.adapter import SwebenchAdapter
from pytest_tebench.benchmarks.swebench.adapter import SwebenchPrepared
from pytest_tebench.demo import swebench as demo
from pytest_tebench.instance.datasets import load_records
from pytest_tebench.instance.predictions import gold_predictions
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.workspace.checkout import Workspace
from pytest_tebench.workspace.repos import RepositoryStore


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=str(demo.DATASET))
    parser.add_argument("--repos", type=Path, action="append", default=[])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="swebench-bench-"))
    # built environments are what this measures (an official image has no bare-pytest twin here)
    adapter = SwebenchAdapter(images="build")
    context = EvalContext(
        cache_dir=cache,
        work_dir=cache / "workspaces",
        repos=RepositoryStore(
            cache,
            local_dirs=tuple(args.repos),
            allow_network=False,
            embedded={demo.SWEBENCH_DEMO_REPO: demo.build_swebench_demo_mirror},
        ),
    )
    instances = [i for i in adapter.load_instances(load_records(args.dataset)) if i.problem is None]
    golds = {
        p.instance_id: p for p in gold_predictions((i.instance_id, adapter.gold_patch(i)) for i in instances)
    }
    total_harness = total_bare = 0.0
    for instance in instances:
        prepared = adapter.prepare(instance, context)  # builds the image if missing: not timed
        assert isinstance(prepared, SwebenchPrepared)
        again = time.perf_counter()
        adapter.prepare(instance, context)
        second_prepare = time.perf_counter() - again
        harness = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            record = adapter.evaluate(instance, prepared, golds[instance.instance_id], context)
            harness.append(time.perf_counter() - started)
            assert record["status"] == "evaluated", record
        bare = []
        payload = instance.payload
        tree = Workspace.create(prepared.source, payload.base_commit, "", parent=context.work_dir)
        try:
            evaluation.apply_model_patch(tree.path, payload.patch)
            evaluation.apply_test_patch(tree.path, payload)
            command = " ".join(
                [
                    prepared.plan.test_cmd,
                    *map(shlex.quote, official.test_directives(payload.repo, payload.test_patch)),
                ]
            )
            step = BuildStep(name="bare", argv=("bash", "-c", command), timeout=1800, image=prepared.image)
            for _ in range(args.repeat):
                started = time.perf_counter()
                adapter.executor(context).run(tree.path, step, maven_repo=cache / "scratch")
                bare.append(time.perf_counter() - started)
        finally:
            tree.remove()
        h, b = min(harness), min(bare)
        total_harness += h
        total_bare += b
        print(
            f"{instance.instance_id}: harness {h:.2f} s, bare pytest {b:.2f} s, ratio {h / b:.2f}x; "
            f"second prepare (image cached) {second_prepare:.2f} s"
        )
    print(
        f"overall: harness {total_harness:.2f} s, bare {total_bare:.2f} s, "
        f"ratio {total_harness / total_bare:.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
