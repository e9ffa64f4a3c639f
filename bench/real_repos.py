"""Gold on real repositories from an empty cache: warm-ups per project, -n 2 over -n 1, warm-up share.

Evaluates gold of TEBench-format datasets (made with ``tebench build`` from local mirrors of real
projects) twice, each time through pytest from an empty cache and an empty Maven repository: once
with ``-p no:xdist`` and once with ``-n 2``. Per run it prints

* online resolutions per project, from the warm-up journal (``<maven repo>/.tebench/warmups.jsonl``);
  target: one per project (repository + Maven version);
* the statuses of the items (all gold should be ``evaluated`` with s_update 1);
* the share of wall time during which some warm-up was running (union of the journal's
  intervals) and the summed warm-up seconds over wall time;

and then the ratio wall(-n 1) / wall(-n 2) (target >= 1.6 on a quiet 2-core machine).

    python bench/real_repos.py --dataset cli.jsonl --dataset codec.jsonl --repos /work/.mirror \
        [--workdir DIR] [--only n1|n2] [-- extra pytest args]

``--repos`` holds mirrors named ``owner+name`` (or ``owner+name/repo``, as the ``fetch`` tool
lays them out). Needs Maven Central; never clones (``--tebench-offline``). Slow: tens of minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pytest_tebench.run.maven.journal import read_journal

from common import show


def combine(datasets: list[Path], out: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for path in datasets for line in path.read_text().splitlines() if line.strip()]
    rows = list({str(row["instance_id"]): row for row in rows}.values())  # a resumed build may repeat one
    out.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return rows


def link_repos(rows: list[dict[str, Any]], root: Path, links: Path) -> None:
    """``links/owner+name`` -> the mirror, whatever layout ``root`` has."""
    links.mkdir(parents=True, exist_ok=True)
    for slug in sorted({str(row["repo"]) for row in rows}):
        name = slug.replace("/", "+")
        for candidate in (root / name / "repo", root / name, root / f"{name}.git"):
            if (candidate / "HEAD").is_file() or (candidate / ".git").exists():
                target = links / name
                if not target.exists():
                    target.symlink_to(candidate.resolve())
                break
        else:
            raise SystemExit(f"no mirror of {slug} under {root}")


def union_seconds(intervals: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def run(
    label: str, workers: str, *, dataset: Path, links: Path, workdir: Path, extra: list[str]
) -> dict[str, Any]:
    cache = workdir / f"cache-{label}"
    shutil.rmtree(cache, ignore_errors=True)  # empty cache: mirrors' workspaces, gold, Maven repository
    report = workdir / f"report-{label}.json"
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "--tebench-predictions=gold",
        f"--tebench-dataset={dataset}",
        f"--tebench-repos={links}",
        f"--tebench-cache-dir={cache}",
        "--tebench-offline",
        f"--tebench-report={report}",
        "-p",
        "no:cacheprovider",
        "-q",
        *(["-p", "no:xdist"] if workers == "0" else ["-n", workers]),
        *extra,
    ]
    started = time.time()
    completed = subprocess.run(argv, cwd=workdir, capture_output=True, text=True, check=False)
    wall = time.time() - started
    (workdir / f"pytest-{label}.log").write_text(completed.stdout + completed.stderr, encoding="utf-8")
    journal = read_journal(cache / "maven-repository")
    results = json.loads(report.read_text())["results"] if report.is_file() else []
    intervals = [(float(e["started"]), float(e["ended"])) for e in journal]
    return {
        "wall": wall,
        "exit": completed.returncode,
        "statuses": Counter(str(r["status"]) for r in results),
        "s_update": [float(r["update"]["s_update"]) for r in results if r.get("update")],
        "resolutions": Counter(str(e["project"]) for e in journal if e.get("ok")),
        "attempts": len(journal),
        "warmup_union": union_seconds(intervals),
        "warmup_sum": sum(stop - start for start, stop in intervals),
        "errors": [
            f"{r['instance_id']}: {str(r.get('error'))[:160]}" for r in results if r["status"] != "evaluated"
        ],
    }


def report_run(label: str, result: dict[str, Any]) -> None:
    print(f"-- {label}")
    show("wall time (s)", f"{result['wall']:.0f} (pytest exit {result['exit']})")
    show("item statuses", dict(result["statuses"]))
    scores = result["s_update"]
    show("gold s_update: items at 1.0 / scored", f"{sum(1 for s in scores if s == 1.0)} / {len(scores)}")
    show("online resolutions per project (ok)", dict(result["resolutions"]))
    show("online attempts (incl. failed)", result["attempts"])
    share = result["warmup_union"] / result["wall"] if result["wall"] else 0.0
    show("wall time with a warm-up running", f"{result['warmup_union']:.0f} s = {share:.0%}")
    show("summed warm-up seconds / wall", f"{result['warmup_sum'] / result['wall']:.2f}")
    for line in result["errors"]:
        print(f"   not evaluated: {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, action="append", required=True)
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--only", choices=("n1", "n2"), default=None)
    parser.add_argument("extra", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="tebench-real-"))).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    dataset = workdir / "dataset.jsonl"
    rows = combine([p.resolve() for p in args.dataset], dataset)
    link_repos(rows, args.repos.resolve(), workdir / "repos")
    projects = Counter(str(row["repo"]) for row in rows)
    show("instances per project", dict(projects))
    show("work directory", workdir)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    results: dict[str, dict[str, Any]] = {}
    for label, workers in (("n1", "0"), ("n2", "2")):
        if args.only in (None, label):
            results[label] = run(
                label, workers, dataset=dataset, links=workdir / "repos", workdir=workdir, extra=args.extra
            )
            report_run(label, results[label])
    if len(results) == 2:
        show(
            "wall(-n 1) / wall(-n 2) (target >= 1.6)", f"{results['n1']['wall'] / results['n2']['wall']:.2f}x"
        )


if __name__ == "__main__":
    main()
