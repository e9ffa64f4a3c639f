"""Collect what agents did in exported folders, as SWE-bench-style predictions.

``tebench collect DIR --model NAME --out run.jsonl`` looks at every folder of ``DIR`` made by
``tebench export`` (or at ``DIR`` itself when it is one) and writes one prediction per folder,
``{"instance_id", "model_name_or_path", "model_patch"}``, sorted by instance id. The patch is
the diff from the folder's V-0.5 commit to its working tree as it is now:

* it is made in a temporary index (``GIT_INDEX_FILE``, seeded from the agent's own index) with
  ``git add -A``, so new untracked files, deletions and renames count, and the agent's index,
  HEAD and branches are never touched;
* it is taken against V-0.5, not HEAD, so commits the agent made on top of V-0.5 count too;
* ``--binary --full-index``: binary files carry their data and exact blob ids, which is what
  the harness's ``git apply --binary`` needs; ``-M`` turns a move into a rename;
* build output (``target/``) and the task statement are left out;
* predictions travel as JSON text, so a file whose content is not UTF-8 is sent as a binary
  hunk (``-diff`` attribute) instead of being mangled.

A folder that is not an export, or whose diff cannot be made, is skipped and reported with its
reason; the other folders are still collected.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from pytest_tebench.benchmarks.tebench.export import METADATA_FILE
from pytest_tebench.benchmarks.tebench.export import ExportMetadata
from pytest_tebench.benchmarks.tebench.export import read_metadata
from pytest_tebench.errors import InputError
from pytest_tebench.errors import TebenchError
from pytest_tebench.workspace.gitcmd import GitError
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.gitcmd import git_env
from pytest_tebench.workspace.gitcmd import has_commit
from pytest_tebench.workspace.textdiff import UndecodableDiff
from pytest_tebench.workspace.textdiff import text_diff

#: Paths never collected: Maven build output (as the harness leaves it out of its commits too).
_BUILD_OUTPUT = ":(exclude,glob)**/target/**"


class CollectProblem(TebenchError):
    """One folder's diff could not be made; the folder is skipped with this reason."""


@dataclass
class CollectResult:
    #: Predictions sorted by instance id.
    predictions: list[dict[str, str]] = field(default_factory=list)
    #: ``(folder, reason)`` per folder that was skipped.
    skipped: list[tuple[Path, str]] = field(default_factory=list)


def collect(root: Path, model: str) -> CollectResult:
    """Make a prediction for ``model`` from every exported folder under ``root``.

    Hidden folders (``.name``) are ignored; every other folder that is not an export is
    skipped with a reason. Raises :class:`InputError` when ``root`` is not a directory.
    """
    if not model.strip():
        raise InputError("the model name must not be empty")
    if not root.is_dir():
        raise InputError("not a directory", source=str(root))
    if (root / ".git" / METADATA_FILE).is_file():
        folders = [root]  # DIR is one exported folder itself
    else:
        folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    result = CollectResult()
    seen: dict[str, Path] = {}
    for folder in folders:
        try:
            metadata = read_metadata(folder)
            if metadata.instance_id in seen:
                raise CollectProblem(
                    f"instance {metadata.instance_id} was already collected from {seen[metadata.instance_id]}"
                )
            patch = folder_patch(folder, metadata)
        except (TebenchError, OSError) as exc:
            result.skipped.append((folder, str(exc)))
            continue
        seen[metadata.instance_id] = folder
        result.predictions.append(
            {"instance_id": metadata.instance_id, "model_name_or_path": model, "model_patch": patch}
        )
    result.predictions.sort(key=lambda p: p["instance_id"])
    return result


def folder_patch(folder: Path, metadata: ExportMetadata) -> str:
    """The diff from V-0.5 to the working tree of one exported folder (untracked files included)."""
    base = metadata.commit
    if not has_commit(folder, base):
        raise CollectProblem(f"its V-0.5 commit {base} is missing from the repository")
    snapshot = (".", _BUILD_OUTPUT)
    # the task file is excluded from the diff only: naming an ignored file makes `git add` fail
    pathspec = (*snapshot, f":(exclude,literal,top){metadata.task_file}")
    git_dir = folder / ".git"
    # the scratch index lives in the git dir so that index extensions (split index) still resolve
    handle, name = tempfile.mkstemp(prefix="tebench-collect-", suffix=".index", dir=git_dir)
    os.close(handle)
    index = Path(name)
    try:
        if (git_dir / "index").is_file():
            # the agent's index as seed: its stat data spares rehashing every file, and files it
            # force-added (despite .gitignore) stay tracked
            shutil.copyfile(git_dir / "index", index)
        else:
            index.unlink()
            _git_indexed(folder, index, "read-tree", base)
        _git_indexed(folder, index, "add", "--all", "--", *snapshot)
        tree = _git_indexed(folder, index, "write-tree").decode().strip()
    except GitError as exc:
        raise CollectProblem(f"cannot snapshot the working tree: {exc}") from exc
    finally:
        index.unlink(missing_ok=True)
        Path(f"{index}.lock").unlink(missing_ok=True)
    try:
        return text_diff(folder, base, tree, pathspec)
    except UndecodableDiff as exc:
        # only a .gitattributes of the project that forces a text diff driver gets here
        raise CollectProblem(str(exc)) from exc


def write_predictions(predictions: Sequence[dict[str, str]], out: Path) -> Path:
    """Write predictions as JSONL, atomically (a reader never sees half a file)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            for prediction in predictions:
                stream.write(json.dumps(prediction, ensure_ascii=False) + "\n")
        os.replace(name, out)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return out


# -- internals ------------------------------------------------------------------------------
def _git_indexed(cwd: Path, index: Path, *args: str) -> bytes:
    """``git <args>`` on the index file ``index``.

    ``gitcmd.git`` drops every ``GIT_*`` variable on purpose, so this one call site that needs
    ``GIT_INDEX_FILE`` builds on the same environment and adds only that.
    """
    env = {**git_env(), "GIT_INDEX_FILE": str(index)}
    return git(cwd, "-c", "core.fsmonitor=false", *args, env=env).stdout
