"""What the content-keyed result store saves, as ratios measured in one run (the machine is noisy).

    python bench/result_cache.py [--maven-repo DIR]

1. The demo's gold-copy predictions, evaluated from an empty result store (warm Maven
   repository), then the same command again: second / first wall time (target <= 0.05).
2. A predictions file of two models, then the same file with a third model added: only the new
   model's items are evaluated (every other item is a hit); prints the counts. ``--tebench-skip-missing``
   throughout, so only submitted lines are items.

Runs pytest as a user would (subprocesses, local executor, ``-n 0``), each scenario in a fresh
cache directory.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import MAVEN_REPO
from common import ROOT
from common import show


def run_pytest(predictions: Path, cache: Path, report: Path, maven_repo: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
            f"--tebench-predictions={predictions}", f"--tebench-cache-dir={cache}",
            f"--tebench-maven-repo={maven_repo}", f"--tebench-report={report}",
            "--tebench-executor=local", "--tebench-skip-missing", f"--rootdir={predictions.parent}",
        ],
        cwd=predictions.parent, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return time.perf_counter() - started


def cache_states(report: Path) -> dict[str, int]:
    states: dict[str, int] = {}
    for record in json.loads(report.read_text())["results"]:
        key = f"{record['model_name_or_path']}:{record.get('cache', '-')}"
        states[key] = states.get(key, 0) + 1
    return states


def with_models(source: Path, target: Path, models: list[str]) -> Path:
    lines = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    target.write_text(
        "".join(
            json.dumps({**line, "model_name_or_path": model}) + "\n" for model in models for line in lines
        )
    )
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--maven-repo", type=Path, default=MAVEN_REPO)
    args = parser.parse_args()
    gold_copy = ROOT / "predictions" / "gold-copy.jsonl"
    with tempfile.TemporaryDirectory(prefix="tebench-bench-cache-") as scratch:
        work = Path(scratch)
        predictions = work / "gold-copy.jsonl"
        predictions.write_bytes(gold_copy.read_bytes())
        first = run_pytest(predictions, work / "cache-1", work / "first.json", args.maven_repo)
        second = run_pytest(predictions, work / "cache-1", work / "second.json", args.maven_repo)
        show("first run (empty result store) [s]", f"{first:.1f}")
        show("second identical run [s]", f"{second:.1f}")
        show("second / first (target <= 0.05)", f"{second / first:.3f}")
        show("second run's items", cache_states(work / "second.json"))

        # model-b submits gold's patches too: the same content as model-a's, so its items are hits
        two = with_models(gold_copy, work / "models.jsonl", ["model-a", "model-b"])
        before = run_pytest(two, work / "cache-2", work / "two.json", args.maven_repo)
        partial = with_models(ROOT / "predictions" / "partial.jsonl", work / "c.jsonl", ["model-c"])
        two.write_text(two.read_text() + partial.read_text())  # a third model, with patches of its own
        after = run_pytest(two, work / "cache-2", work / "three.json", args.maven_repo)
        show("two models [s]", f"{before:.1f}")
        show("the same file with a third model added [s]", f"{after:.1f}")
        show("items of the second run", cache_states(work / "three.json"))


if __name__ == "__main__":
    main()
