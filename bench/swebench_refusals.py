"""The runner-file policy and the test-side set-aside on every gold patch of SWE-bench datasets:
none may be refused, none may lose a file to the set-aside.

For each row, the gold ``patch`` is read by the harness's diff parser and every file it changes is
judged by :mod:`pytest_tebench.integrity.paths` with the policy of the row's test command
(SWE-bench's spec ``test_cmd``). Files whose verdict depends on their content (``setup.cfg``,
``tox.ini``, ``pyproject.toml``: only their pytest/tox sections are the runner's) are read from a
mirror at ``base_commit`` (``--repos DIR`` holding ``owner+name/repo`` as ``fetch`` leaves them, or
``owner+name.git``) and patched; without a mirror they are listed as undetermined.

The same changes are given to :func:`pytest_tebench.benchmarks.swebench.set_aside.choose` (what a
prediction of exactly gold's patch would lose); the gold files that are test-side by SWE-bench's own
split (:func:`~pytest_tebench.integrity.sandbox.tebench_core.is_test_side`, kept as gold's) and the
``test_patch`` files that are not are listed.

    python bench/swebench_refusals.py DATA/swebench-lite.jsonl DATA/swebench-verified.jsonl \
        --repos /work/.mirror
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench import set_aside
from pytest_tebench.benchmarks.swebench.instances import SwebenchInstance
from pytest_tebench.integrity import paths
from pytest_tebench.integrity.sandbox.tebench_core import is_test_side
from pytest_tebench.workspace.patches import FilePatch
from pytest_tebench.workspace.patches import parse_patch


def _mirror(roots: list[Path], repo: str) -> Path | None:
    name = repo.replace("/", "+")
    for root in roots:
        for candidate in (root / name / "repo", root / f"{name}.git", root / name):
            if (candidate / "HEAD").is_file() or (candidate / ".git").exists():
                return candidate
    return None


def _texts(mirror: Path, commit: str, piece: FilePatch) -> tuple[str | None, str | None]:
    """The file's text at ``commit`` and after ``piece`` (GNU patch on a scratch copy)."""
    old = None
    if piece.old_path is not None:
        shown = subprocess.run(
            ["git", "-C", str(mirror), "show", f"{commit}:{piece.old_path}"], capture_output=True, check=True
        )
        old = shown.stdout.decode("utf-8", errors="replace")
    if piece.new_path is None:
        return old, None
    with tempfile.TemporaryDirectory() as scratch:
        target = Path(scratch) / "file"
        target.write_text(old or "", encoding="utf-8")
        diff = "".join(hunk.render() for hunk in piece.hunks)
        subprocess.run(
            ["patch", "--batch", "--silent", str(target)],
            input=diff.encode(),
            check=True,
            capture_output=True,
        )
        return old, target.read_text(encoding="utf-8")


def _instance(row: dict[str, str]) -> SwebenchInstance:
    """The row as much as :func:`.set_aside.choose` reads of it (its repository and gold patch)."""
    return SwebenchInstance(
        instance_id=row["instance_id"], repo=row["repo"], version=str(row["version"]),
        base_commit=row["base_commit"], environment_setup_commit=row["base_commit"],
        patch=row["patch"], test_patch=row["test_patch"], fail_to_pass=(), pass_to_pass=(),
    )  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--repos", type=Path, action="append", default=[])
    args = parser.parse_args()
    failed = False
    for dataset in args.datasets:
        rows = [json.loads(line) for line in dataset.read_text(encoding="utf-8").splitlines() if line.strip()]
        refused: list[tuple[str, paths.Refusal]] = []
        undetermined: list[str] = []
        read: list[str] = []
        commands: Counter[str] = Counter()
        lost: list[str] = []
        gold_test_side: list[str] = []
        product_in_test_patch: list[str] = []
        for row in rows:
            spec = official.specs(row["repo"], row["version"]) or {}
            command = spec.get("test_cmd") or "pytest -rA"
            command = command[-1] if isinstance(command, list) else str(command)
            commands[command] += 1
            policy = paths.policy_for(command, row["repo"])
            changes: list[paths.Change] = []
            for piece in parse_patch(row["patch"]):
                path = piece.path
                old: str | None = None if piece.status == "added" else ""
                new: str | None = None if piece.status == "deleted" else ""
                if path.rsplit("/", 1)[-1] in paths.SECTIONED_FILES:
                    mirror = _mirror(args.repos, row["repo"])
                    if mirror is None:
                        undetermined.append(f"{row['instance_id']}: {path}")
                        continue
                    old, new = _texts(mirror, row["base_commit"], piece)
                    read.append(f"{row['instance_id']}: {path}")
                change = paths.Change(path, old, new, piece.new_mode)
                changes.append(change)
                if is_test_side(path, row["repo"]):
                    gold_test_side.append(f"{row['instance_id']}: {path}")
                refusal = paths.check(change, policy)
                if refusal is not None:
                    refused.append((row["instance_id"], refusal))
            lost += [f"{row['instance_id']}: {e.path}" for e in set_aside.choose(changes, _instance(row))]
            for piece in parse_patch(row["test_patch"]):
                if not is_test_side(piece.path, row["repo"]):
                    product_in_test_patch.append(f"{row['instance_id']}: {piece.path}")
        print(
            f"{dataset.name}: {len(rows)} gold patches, {len(refused)} refused, "
            f"{len(lost)} files set aside, {len(gold_test_side)} test-side files kept as gold's"
        )
        for command, n in commands.most_common():
            print(f"  test command {command!r}: {n} rows")
        for line in read:
            print(f"  read from the mirror and judged by section: {line}")
        for instance_id, refusal in refused:
            print(f"  REFUSED {instance_id}: {refusal.path} ({refusal.rule}: {refusal.reason})")
        for line in undetermined:
            print(f"  undetermined (no mirror): {line}")
        for line in lost:
            print(f"  SET ASIDE {line}")
        for line in gold_test_side:
            print(f"  test-side, kept as gold's: {line}")
        for line in product_in_test_patch:
            print(f"  test_patch file that is not test-side: {line}")
        failed = failed or bool(refused) or bool(undetermined) or bool(lost)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
