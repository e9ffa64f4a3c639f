#!/usr/bin/env python3
"""Print the tricky identification cases side by side: pytest-tebench's items and the reference's.

The cases are those of ``tests/test_identification_table.py``; docs/scoring.md's "tricky cases" table
was made with this script. The reference harness is not part of this repository: pass a checkout of
``iSEngLab/TEBench`` (it needs GitPython, ``pip install gitpython``). Each case becomes a two-commit
git repository, scored by the reference's own ``GTTestChangeExtractor`` (items as its
``extract_gt_obsolete_tests`` builds them) and by our ``test_changes``.

    python scripts/reference_side_by_side.py --reference /path/to/TEBench
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.tebench.identification import test_changes
from pytest_tebench.workspace.checkout import FileChange

ROOT = Path(__file__).resolve().parent.parent


def reference_items(extractor_class: Any, before: str, old_path: str, new_path: str, after: str) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)

        def git(*args: str) -> str:
            done = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True)
            return done.stdout.strip()

        git("init", "--quiet")
        git("config", "user.email", "side-by-side@invalid")
        git("config", "user.name", "side-by-side")
        (repo / old_path).parent.mkdir(parents=True)
        (repo / old_path).write_text(before, encoding="utf-8")
        git("add", "--all")
        git("commit", "--quiet", "-m", "V-0.5")
        base = git("rev-parse", "HEAD")
        if new_path != old_path:
            git("mv", old_path, new_path)
        (repo / new_path).write_text(after, encoding="utf-8")
        git("add", "--all")
        git("commit", "--quiet", "-m", "patch")
        changes = extractor_class(str(repo)).extract_test_changes(base, git("rev-parse", "HEAD"))
    items: set[str] = set()
    for info in changes["modified_files"]:
        items.update(info["modified_methods"] + info["deleted_methods"])
        if info["added_methods"]:
            items.add("<added>")
    for info in changes["deleted_files"]:
        items.update(info["deleted_methods"])
    items.update("<added>" for info in changes["added_files"] if info["added_methods"])
    return sorted(items)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reference", type=Path, required=True, help="a checkout of iSEngLab/TEBench")
    args = parser.parse_args()
    # the reference's own code, and the cases of our test: importable only once on sys.path
    sys.path[:0] = [str(args.reference), str(ROOT / "tests")]
    from identify_evaluation.gt_extractor import GTTestChangeExtractor  # type: ignore[import-not-found]
    from test_identification_table import CASES  # type: ignore[import-not-found]
    from test_identification_table import V05
    from test_identification_table import P

    print("| case | pytest-tebench | reference |\n|---|---|---|")
    for case, new_path, after, _ in CASES:
        ours = [item.split("::", 1)[1] for item in test_changes([FileChange(P, new_path, V05, after)]).items]
        theirs = reference_items(GTTestChangeExtractor, V05, P, new_path, after)
        print(f"| {case} | {', '.join(ours) or 'none'} | {', '.join(theirs) or 'none'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
