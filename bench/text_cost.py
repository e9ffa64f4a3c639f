"""What ``tebench text`` costs on a real repository: seconds per instance, peak memory, budget hits.

Two workloads, both BM25 with the 13,000-token budget:

* ``swebench``: the SWE-bench rows of one repository from a dataset file (e.g. the sqlfluff rows
  of ``shared/data/swebench-small-python-repos.jsonl.gz``, given ungzipped or gzipped);
* ``tebench``: TEBench-shaped rows made from a Java repository's own history (the last N
  non-merge commits that change both ``src/main`` and ``src/test``: ``source_patch`` = the
  non-test diff, ``test_patch`` = the test diff, as TEBench's V-0.5 split does). These rows are
  only a workload for the prompt builder: their labels are placeholders, not TEBench instances.

    python bench/text_cost.py swebench DATA.jsonl[.gz] --repo sqlfluff/sqlfluff --repos DIR [-j N]
    python bench/text_cost.py tebench --repo apache/commons-lang --repos DIR [--max 30] [-j N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.swebench.text import SwebenchLayout
from pytest_tebench.benchmarks.tebench.text import TebenchLayout
from pytest_tebench.text.build import PromptLayout
from pytest_tebench.text.build import TextSettings
from pytest_tebench.text.command import TextCommand
from pytest_tebench.text.command import make_texts
from pytest_tebench.text.command import peak_memory_mb
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.gitcmd import git_text
from pytest_tebench.workspace.repos import RepositoryStore


def swebench_rows(path: Path, repo: str) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [row for line in handle if line.strip() and (row := json.loads(line))["repo"] == repo]


def history_rows(git_dir: Path, repo: str, limit: int) -> list[dict[str, Any]]:
    """TEBench-shaped rows from the newest commits changing both the production and the test tree."""
    log = git_text(
        git_dir, "log", "--no-merges", "--format=%H %P", "-n", str(limit * 20), "HEAD", "--", "src/main"
    )
    rows: list[dict[str, Any]] = []
    for line in log.splitlines():
        commit, *parents = line.split()
        if len(parents) != 1:
            continue
        parent = parents[0]
        names = git_text(git_dir, "diff", "--name-only", parent, commit).splitlines()
        trees = {n.split("/")[1] for n in names if n.startswith("src/") and n.count("/") > 1}
        if not {"main", "test"} <= trees:
            continue

        def diff(*pathspec: str, parent: str = parent, commit: str = commit) -> str:
            out = git(git_dir, "diff", "--binary", "--full-index", parent, commit, "--", *pathspec).stdout
            return out.decode("utf-8", errors="replace")

        rows.append(
            {
                "instance_id": f"{repo.split('/')[1]}__{commit[:8]}",
                "project": repo.split("/")[1],
                "repo": repo,
                "v_minus_1_commit": parent,
                "v0_commit": commit,
                "v0_message": git_text(git_dir, "log", "-1", "--format=%B", commit),
                "labels": ["stale"],  # placeholder: labels play no part in the prompt
                "source_patch": diff(".", ":(exclude)src/test"),
                "test_patch": diff("src/test"),
            }
        )
        if len(rows) >= limit:
            break
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benchmark", choices=("swebench", "tebench"))
    parser.add_argument("dataset", nargs="?", help="swebench: the dataset file")
    parser.add_argument("--repo", required=True)
    parser.add_argument("--repos", required=True, type=Path, help="folder of local mirrors (owner+name)")
    parser.add_argument("--max", type=int, default=30, help="tebench: instances made from history")
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=13_000)
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="tebench-text-bench-"))
    layout: PromptLayout
    if args.benchmark == "swebench":
        if not args.dataset:
            sys.exit("swebench needs the dataset file")
        rows = swebench_rows(Path(args.dataset), args.repo)
        layout = SwebenchLayout()
    else:
        mirror = RepositoryStore(scratch, local_dirs=[args.repos], allow_network=False).locate(args.repo, [])
        rows = history_rows(mirror, args.repo, args.max)
        layout = TebenchLayout()
    dataset = scratch / "dataset.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    command = TextCommand(
        dataset=str(dataset), out=scratch / "text.jsonl",
        settings=TextSettings(style="bm25", max_tokens=args.max_tokens, scratch=scratch / "workspaces"),
        cache_dir=scratch, repos=(args.repos,), allow_network=False, jobs=args.jobs,
    )  # fmt: skip
    started = time.perf_counter()
    result = make_texts(command, layout, progress=lambda _: None)
    elapsed = time.perf_counter() - started
    built = [o for o in result.outcomes if o.row is not None]
    revisions = len({(r.get("base_commit") or r.get("v_minus_1_commit")) for r in rows})
    print(f"{args.benchmark} {args.repo}: {len(rows)} instances, {revisions} base revisions, -j {args.jobs}")
    print(f"  built {len(built)}, failed {len(result.failed)}")
    for outcome in result.failed:
        print(f"    {outcome.instance_id}: {outcome.error}")
    print(f"  wall time {elapsed:.1f} s = {elapsed / max(1, len(rows)):.2f} s per instance")
    if built:
        seconds = sorted(o.seconds for o in built)
        print(f"  per instance: median {seconds[len(seconds) // 2]:.2f} s, max {seconds[-1]:.2f} s")
        tokens = sorted(o.tokens for o in built)
        median = tokens[len(tokens) // 2]
        print(f"  prompt tokens: median {median}, max {tokens[-1]} (limit {args.max_tokens})")
        print(f"  prompts that hit the budget: {sum(o.budget_hit for o in built)} of {len(built)}")
        over = sum(o.tokens > args.max_tokens for o in built)
        print(f"  prompts over the budget without any file (the task text alone is longer): {over}")
        print(f"  files per prompt: median {sorted(len(o.files) for o in built)[len(built) // 2]}")
    print(f"  peak memory: {peak_memory_mb():.0f} MiB (largest of this process and its workers)")


if __name__ == "__main__":
    main()
