"""Sample TEBench-era commits (2019-2022) of the ten TEBench projects for a gold trial.

Runs the dataset builder's static stages on every commit in the window: stage 1
(:func:`builder.static_check`) and stage 2 (the patch split reproduces V0's tree, and gold
changes at least one test method, as :func:`builder.execute_check` checks before it builds).
Stage 3 (execution) is deliberately NOT run: a commit it would reject is what the trial must
see. So labels are only what can be known without a build: ``missing`` when gold adds test
methods; ``breaking``/``stale`` need V-0.5 runs and are left out (labels feed no score).

From each project's stage-2 candidates it picks ``--per-project`` commits with a fixed seed and
writes the rows (builder's row format) as JSON lines, plus a summary of the candidate counts.

Usage::

    python scripts/era_sample.py --repos /work/.mirror --out /work/trial/era.jsonl \\
        --seed 2026 --per-project 4 --work /work/scratch/trial/ws
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.tebench.builder import Candidate
from pytest_tebench.benchmarks.tebench.builder import list_commits
from pytest_tebench.benchmarks.tebench.builder import static_check
from pytest_tebench.benchmarks.tebench.identification import test_changes
from pytest_tebench.errors import HarnessError
from pytest_tebench.workspace.checkout import BadInstance
from pytest_tebench.workspace.checkout import Workspace
from pytest_tebench.workspace.gitcmd import git_text

PROJECTS = (
    "apache/commons-cli",
    "apache/commons-codec",
    "apache/commons-collections",
    "apache/commons-compress",
    "apache/commons-csv",
    "apache/commons-lang",
    "apache/commons-math",
    "google/gson",
    "jfree/jfreechart",
    "jhy/jsoup",
)
SINCE = "2019-01-01T00:00:00Z"
UNTIL = "2022-12-31T23:59:59Z"


def stage2(repo_dir: Path, candidate: Candidate, work: Path) -> dict[str, Any] | str:
    """The row with the statically known gold fields, or stage 2's rejection reason."""
    row = dict(candidate.row)
    try:
        workspace = Workspace.create(repo_dir, row["v_minus_1_commit"], row["source_patch"], parent=work)
    except BadInstance as exc:
        return f"source_patch does not apply to V-1: {exc}"
    except HarnessError as exc:
        # not the commit's fault (e.g. a mirror lacking large blobs): counted apart, never sampled
        return f"harness error: {exc}"
    try:
        workspace.commit_gold(row["test_patch"])
        gold_tree = git_text(workspace.path, "rev-parse", "gold^{tree}").strip()
        v0_tree = git_text(repo_dir, "rev-parse", f"{row['v0_commit']}^{{tree}}").strip()
        if gold_tree != v0_tree:
            return "source_patch + test_patch do not reproduce V0's tree"
        gold = test_changes(workspace.changed_files("v-0.5", "gold"))
        if not gold.items:
            return "gold changes no test method"
    except BadInstance as exc:
        return f"test_patch does not apply to V-0.5: {exc}"
    finally:
        workspace.remove()
    added = [c for c in gold.methods if c.kind == "added" and c.new is not None]
    new_methods: dict[str, list[str]] = {}
    for change in added:
        assert change.new is not None
        new_methods.setdefault(change.new.binary_class_name, []).append(change.new.name)
    # breaking/stale need V-0.5 runs (stage 3); only "missing" is known statically
    row["labels"] = ["missing"] if added else []
    row["changed_test_methods"] = sorted(
        {f"{c.new.binary_class_name}.{c.new.name}" for c in gold.methods if c.new is not None}
    )
    row["new_test_files"] = sorted({c.new_path or c.path for c in added})
    row["new_test_methods"] = json.dumps({k: sorted(set(v)) for k, v in sorted(new_methods.items())})
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=Path, required=True, help="folder of <owner>+<name>/repo mirrors")
    parser.add_argument("--out", type=Path, required=True, help="the JSON-lines dataset to write")
    parser.add_argument("--work", type=Path, required=True, help="scratch folder for workspaces")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--per-project", type=int, default=4)
    parser.add_argument("--projects", nargs="*", default=list(PROJECTS))
    args = parser.parse_args(argv)

    args.work.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    summary: dict[str, Any] = {"seed": args.seed, "since": SINCE, "until": UNTIL, "projects": {}}
    for repo in args.projects:
        owner, name = repo.split("/")
        repo_dir = args.repos / f"{owner}+{name}" / "repo"
        commits = list_commits(repo_dir, rev="HEAD", since=SINCE, until=UNTIL)
        stage1 = []
        for commit in commits:
            outcome = static_check(repo_dir, commit, name, repo)
            if isinstance(outcome, Candidate):
                stage1.append(outcome)
        # one generator per project: a project's pick does not depend on which others ran. Stage 1's
        # candidates are shuffled once and stage 2 (a workspace per commit, the slow part) runs in that
        # order until the pick is full: the same seed gives the same pick as checking them all would
        # give for a sample drawn in this order.
        rng = random.Random(f"{args.seed}:{repo}")
        order = list(stage1)
        rng.shuffle(order)
        passed: list[dict[str, Any]] = []
        rejected: dict[str, str] = {}
        harness_errors = 0
        for candidate in order:
            if len(passed) >= args.per_project:
                break
            outcome2 = stage2(repo_dir, candidate, args.work)
            if isinstance(outcome2, str):
                rejected[candidate.commit.sha] = outcome2
                if outcome2.startswith("harness error"):
                    harness_errors += 1
            else:
                passed.append(outcome2)
        picked = sorted(passed, key=lambda r: str(r["v0_date"]))
        rows.extend(picked)
        summary["projects"][repo] = {
            "commits": len(commits),
            "stage1": len(stage1),
            "stage2_checked": len(passed) + len(rejected),
            "stage2_harness_errors": harness_errors,
            "stage2_rejected": rejected,
            "picked": [r["instance_id"] for r in picked],
        }
        print(
            f"{repo}: {len(commits)} commits, {len(stage1)} pass stage 1, "
            f"{len(passed) + len(rejected)} checked in stage 2, "
            f"{harness_errors} not checkable (harness error), "
            f"picked {[r['instance_id'] for r in picked]}",
            flush=True,
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    args.out.with_suffix(".summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"{len(rows)} rows -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
