"""What one RealCodeJava sample costs, against a bare Maven run of the same tests.

Harness: ``adapter.evaluate`` of a one-sample prediction on a prepared instance (answer cleaning,
the file rewritten, ``target/`` restored from the compiled copy, one offline ``mvn test`` of the
selected tests, Surefire reports read, both rules judged). Bare: the same file rewritten (its
timestamp changes, so Maven recompiles the module as it does for the harness) and
``mvn -o test -Dtest=<same tests>`` in the same workspace. Target: <= 1.3x. Also shown: a bare run
from an empty ``target/`` (what a sample would cost if the repository were not compiled once per
instance) and the one-off preparation (dry run, oracle, stub).

    python bench/realcode_cost.py [--rounds 3] [--instance 1]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pytest_tebench.benchmarks.realcode.adapter import create_adapter
from pytest_tebench.benchmarks.realcode.instances import RealcodeInstance
from pytest_tebench.benchmarks.realcode.predictions import encode_samples
from pytest_tebench.demo.realcode import DATASET
from pytest_tebench.instance.datasets import load_records
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.run.local import LocalExecutor
from pytest_tebench.run.maven.steps import selectors

from common import MAVEN_REPO
from common import context
from common import median
from common import show
from common import timed

COMPILING = re.compile(
    r"Compiling (\d+) source files? (?:with .*? )?to (?:\S*/)?target/(classes|test-classes)"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--instance", default="1")
    args = parser.parse_args()
    adapter = create_adapter({"maven_repo": MAVEN_REPO}, Path(tempfile.gettempdir()))
    instance = {i.instance_id: i for i in adapter.load_instances(load_records(str(DATASET)))}[args.instance]
    payload: RealcodeInstance = instance.payload
    executor = LocalExecutor()
    ctx = context(executor)
    prepared, prepare_seconds = timed(lambda: adapter.prepare(instance, ctx))
    workspace = prepared.workspace.path
    prediction = Prediction(args.instance, "bench", encode_samples([payload.gt]), "bench")
    java_home = executor.java_home(prepared.settings.java_version)
    env = {**os.environ, "JAVA_HOME": str(java_home)}
    bare = ["mvn", "-o", "-B", f"-Dmaven.repo.local={MAVEN_REPO}",
            f"-Dtest={selectors(payload.selection)}", "test"]  # fmt: skip
    target = workspace / payload.file_path

    compiled: dict[str, str] = {}

    def bare_run(clean: bool) -> None:
        target.write_text(payload.compose(payload.gt), encoding="utf-8")
        if clean:
            shutil.rmtree(workspace / "target", ignore_errors=True)
        done = subprocess.run(bare, cwd=workspace, env=env, capture_output=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"bare Maven failed:\n{done.stdout.decode()}\n{done.stderr.decode()}")
        if not clean:
            # what Maven's incremental build recompiles after one file changed (the harness's case)
            for files, where in COMPILING.findall(done.stdout.decode()):
                compiled[where] = files

    harness_times, bare_times, clean_times = [], [], []
    try:
        for _ in range(args.rounds):
            record, harness = timed(lambda: adapter.evaluate(instance, prepared, prediction, ctx))
            assert record["c"] == 1, record["samples"]
            _, incremental = timed(lambda: bare_run(clean=False))
            _, clean = timed(lambda: bare_run(clean=True))
            harness_times.append(harness)
            bare_times.append(incremental)
            clean_times.append(clean)
    finally:
        adapter.cleanup(prepared, ctx)
        shutil.rmtree(ctx.cache_dir, ignore_errors=True)

    show("instance", f"{args.instance} ({payload.intent_name}, {len(payload.selection)} tests)")
    show("rounds (medians below)", args.rounds)
    show("preparation: dry run, oracle, stub (once per instance) [s]", f"{prepare_seconds:.2f}")
    show("harness: one sample [s]", f"{median(harness_times):.2f}")
    show("bare mvn -o test -Dtest=... after the file changed [s]", f"{median(bare_times):.2f}")
    show("bare mvn -o test -Dtest=... from an empty target/ [s]", f"{median(clean_times):.2f}")
    show("recompiled per sample (main, test source files)",
         f"{compiled.get('classes', '0')}, {compiled.get('test-classes', '0')}")  # fmt: skip
    show("ratio harness / bare (target <= 1.3)", f"{median(harness_times) / median(bare_times):.2f}")


if __name__ == "__main__":
    main()
