"""What update scoring costs per prediction, as ratios measured in one run (the machine is noisy).

1. Harness vs bare Maven: evaluating one prediction (workspace checkout, one offline Maven launch
   with JaCoCo, the JaCoCo report, parsing, scoring) against a bare
   ``mvn -o test -Dtest=<same selection>`` with the same JaCoCo agent on the same workspace, both
   from an empty ``target/`` (the harness never trusts old build output). Target: <= 1.3x.
2. Second prediction vs first on one instance: the first pays for gold's build on V0 (and the
   one compile of the production code), the second finds both in the cache. Target: <= 0.6x.
3. The second prediction on the stored production build vs the same prediction compiling it in
   its launch (``--tebench-recompile``, as before the production build was reused). The demo's
   production code is 7 small classes, so this ratio is near 1 here; on commons-lang it is what
   the main compile costs (docs/building.md has the figures).

    python bench/update_cost.py [--rounds 3] [--instance textkit__6f3adb06]
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.tebench.adapter import TebenchAdapter
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.run.local import LocalExecutor
from pytest_tebench.run.maven.jacoco import AGENT_JAR
from pytest_tebench.run.maven.jacoco import project_includes

from common import MAVEN_REPO
from common import adapter as make_adapter
from common import context
from common import demo_instances
from common import median
from common import predictions
from common import show
from common import timed

SCORES = ("s_exec", "s_line", "s_branch", "s_mod", "s_update", "status")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--instance", default="textkit__6f3adb06")
    args = parser.parse_args()
    adapter = make_adapter()
    recompiling = make_adapter(recompile=True)
    instance = demo_instances()[args.instance]
    gold_patch = predictions("gold-copy.jsonl")[args.instance]
    other_patch = predictions("update-cases.jsonl").get(args.instance, gold_patch)
    executor = LocalExecutor()

    # untimed: fill the shared Maven repository, so no round pays for downloads
    warm = context(executor)
    adapter.cleanup(adapter.prepare(instance, warm), warm)
    shutil.rmtree(warm.cache_dir, ignore_errors=True)

    # -- 2. first vs second prediction (fresh cache: gold is built by the first) ------------
    def evaluate(prediction: Prediction, ctx: EvalContext, by: TebenchAdapter = adapter) -> dict[str, Any]:
        """prepare + evaluate + cleanup: what one item costs."""
        prepared = by.prepare(instance, ctx)
        try:
            return by.evaluate(instance, prepared, prediction, ctx)
        finally:
            by.cleanup(prepared, ctx)

    firsts, seconds, recompiled = [], [], []
    for _ in range(args.rounds):
        ctx = context(executor)
        first_pred = Prediction(args.instance, "first", gold_patch, "bench")
        second_pred = Prediction(args.instance, "second", other_patch, "bench")
        _, first = timed(functools.partial(evaluate, first_pred, ctx))
        record, second = timed(functools.partial(evaluate, second_pred, ctx))
        assert record["update"]["gold"]["cache"] == "hit"
        assert str(record["update"]["prebuilt"]).startswith("reused "), record["update"]["prebuilt"]
        again, third = timed(functools.partial(evaluate, second_pred, ctx, recompiling))
        assert again["update"]["prebuilt"] is None
        assert {k: again["update"][k] for k in SCORES} == {k: record["update"][k] for k in SCORES}
        firsts.append(first)
        seconds.append(second)
        recompiled.append(third)
        shutil.rmtree(ctx.cache_dir, ignore_errors=True)

    # -- 1. harness vs bare Maven on the same workspace ---------------------------------------
    ctx = context(executor)
    prepared = adapter.prepare(instance, ctx)
    workspace = prepared.workspace
    harness_times, bare_times = [], []
    record = adapter.evaluate(instance, prepared, Prediction(args.instance, "m", gold_patch, "bench"), ctx)
    selection = ",".join(record["update"]["selection"])
    workspace.checkout("prediction")
    includes = ":".join(f"{p}.*" for p in project_includes(workspace.path))
    agent = (
        f"-javaagent:{MAVEN_REPO / AGENT_JAR}=destfile={workspace.path}/target/bare.exec,includes={includes}"
    )
    bare = ["mvn", "-o", "-B", "-q", f"-Dmaven.repo.local={MAVEN_REPO}", f"-Dtest={selection}", "test"]
    env = {**os.environ, "JAVA_TOOL_OPTIONS": agent, "JAVA_HOME": str(executor.java_home(17))}
    for _ in range(args.rounds):
        _, harness = timed(
            lambda: adapter.evaluate(
                instance, prepared, Prediction(args.instance, "m", gold_patch, "bench"), ctx
            )
        )
        workspace.checkout("prediction")
        shutil.rmtree(workspace.path / "target", ignore_errors=True)
        done, bare_time = timed(
            lambda: subprocess.run(bare, cwd=workspace.path, env=env, capture_output=True, check=False)
        )
        if done.returncode != 0:
            raise SystemExit(f"bare Maven failed:\n{done.stdout.decode()}\n{done.stderr.decode()}")
        harness_times.append(harness)
        bare_times.append(bare_time)
    adapter.cleanup(prepared, ctx)
    shutil.rmtree(ctx.cache_dir, ignore_errors=True)

    show("instance", args.instance)
    show("rounds (medians below)", args.rounds)
    show("harness: one prediction, warm workspace [s]", f"{median(harness_times):.2f}")
    show("bare mvn -o test -Dtest=... with JaCoCo [s]", f"{median(bare_times):.2f}")
    show("ratio harness / bare (target <= 1.3)", f"{median(harness_times) / median(bare_times):.2f}")
    show("first prediction, gold built [s]", f"{median(firsts):.2f}")
    show("second prediction, gold cached [s]", f"{median(seconds):.2f}")
    show("ratio second / first (target <= 0.6)", f"{median(seconds) / median(firsts):.2f}")
    show("second prediction, production compiled in its launch [s]", f"{median(recompiled):.2f}")
    show("ratio reused / compiled in the launch", f"{median(seconds) / median(recompiled):.2f}")


if __name__ == "__main__":
    main()
