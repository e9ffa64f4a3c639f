"""Docker vs local executor on the demo benchmark, as ratios measured in one run.

Evaluates the gold patches of every demo instance (gold builds included, in a fresh cache) once
with each executor, sequentially, and prints the wall-time ratio (target <= 1.15x). Also prints
the cost of warming a fresh Maven repository for the demo with each executor, and, unless
``--skip-image-build``, of building the sandbox image from scratch (several minutes).

    python bench/docker_overhead.py [--skip-image-build] [--instances N]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.executors import ExecutorOptions
from pytest_tebench.run.executors import create_executor

from common import adapter as make_adapter
from common import context
from common import demo_instances
from common import predictions
from common import show
from common import timed


def evaluate_all(executor: Executor, count: int) -> float:
    adapter = make_adapter()
    gold = predictions("gold-copy.jsonl")
    ctx = context(executor)

    def run() -> None:
        for instance_id, instance in list(demo_instances().items())[:count]:
            prepared = adapter.prepare(instance, ctx)
            try:
                record = adapter.evaluate(
                    instance, prepared, Prediction(instance_id, "gold", gold[instance_id], "b"), ctx
                )
            finally:
                adapter.cleanup(prepared, ctx)
            assert record["update"]["s_update"] == 1.0, record

    _, seconds = timed(run)
    shutil.rmtree(ctx.cache_dir, ignore_errors=True)
    return seconds


def warm_up_cost(executor: Executor) -> float:
    """One demo instance evaluated against an empty Maven repository (downloads included)."""
    instance = next(iter(demo_instances().values()))
    with tempfile.TemporaryDirectory() as repo:
        adapter = make_adapter(Path(repo))
        ctx = context(executor)
        prepared, seconds = timed(lambda: adapter.prepare(instance, ctx))
        adapter.cleanup(prepared, ctx)
        shutil.rmtree(ctx.cache_dir, ignore_errors=True)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-image-build", action="store_true")
    parser.add_argument("--instances", type=int, default=9)
    args = parser.parse_args()
    local = create_executor(ExecutorOptions(name="local"))
    docker = create_executor(ExecutorOptions(name="docker"))
    try:
        evaluate_all(local, 1)  # untimed: warm the shared Maven repository and the page cache
        evaluate_all(docker, 1)
        local_time = evaluate_all(local, args.instances)
        docker_time = evaluate_all(docker, args.instances)
        show("instances (gold patches, gold builds included)", args.instances)
        show("local executor [s]", f"{local_time:.1f}")
        show("docker executor [s]", f"{docker_time:.1f}")
        show("ratio docker / local (target <= 1.15)", f"{docker_time / local_time:.2f}")
        show("warm-up of an empty Maven repository, local [s]", f"{warm_up_cost(local):.1f}")
        show("warm-up of an empty Maven repository, docker [s]", f"{warm_up_cost(docker):.1f}")
    finally:
        local.close()
        docker.close()
    if not args.skip_image_build:
        from pytest_tebench.run import docker_image

        client = docker_image.connect()
        with tempfile.TemporaryDirectory() as work:
            _, seconds = timed(lambda: docker_image.build_image(client, work_dir=Path(work)))
        show("cold image build (debootstrap + docker import) [s]", f"{seconds:.0f}")


if __name__ == "__main__":
    main()
