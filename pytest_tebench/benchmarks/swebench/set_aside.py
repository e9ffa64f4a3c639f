"""A SWE-bench prediction's changes to test content, set aside before the tests run.

SWE-bench splits each pull request by path: every change whose path contains ``test`` or ``e2e``
goes into ``test_patch``, the rest into ``patch`` (:func:`~pytest_tebench.integrity.sandbox.
tebench_core.is_test_side`). Test content is therefore the benchmark's, not the prediction's: a
prediction that makes ``assert_identical`` of ``xarray/tests/__init__.py`` a no-op, rewrites
``raises`` in ``sympy/testing/pytest.py`` or adds a ``tests/<module>.py`` that shadows what the
tests import would otherwise resolve an instance without fixing anything (SWE-bench's harness keeps
such changes).

So after the prediction is applied and its runner files are judged (refusals come first), every
change it made to a test-side path is undone: a changed or deleted file is restored to
``base_commit``, a new one removed (both sides of a rename). Files the instance's gold ``patch``
touches are kept: by the dataset's own word they are the fix's (pytest's ``src/_pytest``, one
sympy row's ``sympy/utilities/randtest.py``). The item is then graded as usual on the tree without
those changes: a hostile helper has no effect, an honest one is simply not there (no finding).

Build mode restores the files in the host's clone (:func:`set_aside`); official mode, where the tree
lives in the image, chooses them from the same changes (:func:`choose`) and the eval script undoes
them in the container (:func:`shell_lines`).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pytest_tebench.benchmarks.swebench import evaluation
from pytest_tebench.benchmarks.swebench.instances import SwebenchInstance
from pytest_tebench.benchmarks.swebench.official_refusal import touched_paths
from pytest_tebench.integrity import paths
from pytest_tebench.integrity.sandbox.tebench_core import is_test_side
from pytest_tebench.workspace.gitcmd import git


@dataclass(frozen=True)
class SetAside:
    """One test-side change of a prediction to undo."""

    path: str
    #: Whether ``base_commit`` has the file (it is restored) or not (it is removed).
    existed: bool


def choose(changes: Iterable[paths.Change], instance: SwebenchInstance) -> list[SetAside]:
    """The ``changes`` (:func:`.evaluation.changed_files`) to test-side paths that the gold
    ``patch`` of ``instance`` does not touch, sorted by path."""
    gold = set(touched_paths(instance.patch))
    chosen = {
        change.path: SetAside(change.path, change.old is not None)
        for change in changes
        if is_test_side(change.path, instance.repo) and change.path not in gold
    }
    return [chosen[path] for path in sorted(chosen)]


def restore(tree: Path, base_commit: str, chosen: Iterable[SetAside]) -> None:
    """Undo ``chosen`` in ``tree``: new files removed (with the folders they leave empty: an empty
    ``tests/os/`` would still import as a package), then files of ``base_commit`` checked out again
    (in this order: a new folder may stand where a file of ``base_commit`` was)."""
    chosen = list(chosen)
    root = tree.resolve()
    for entry in chosen:
        if entry.existed:
            continue
        target = tree / entry.path
        target.unlink(missing_ok=True)
        folder = target.parent
        while folder.resolve() != root and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent
    existed = [entry.path for entry in chosen if entry.existed]
    if existed:
        git(tree, "checkout", base_commit, "--", *existed)


def set_aside(tree: Path, instance: SwebenchInstance, changes: list[paths.Change] | None = None) -> list[str]:
    """Set aside the prediction's test-side changes in ``tree`` (a clone of ``base_commit`` with
    the prediction applied; ``changes`` its :func:`.evaluation.changed_files` when the caller has
    them); return their paths, sorted."""
    if changes is None:
        changes = evaluation.changed_files(tree, instance.base_commit)
    chosen = choose(changes, instance)
    restore(tree, instance.base_commit, chosen)
    return [entry.path for entry in chosen]


def shell_lines(base_commit: str, chosen: Iterable[SetAside]) -> list[str]:
    """:func:`restore` as lines of a shell script run in the tree (official images)."""
    chosen = list(chosen)
    existed = " ".join(shlex.quote(entry.path) for entry in chosen if entry.existed)
    new = " ".join(shlex.quote(entry.path) for entry in chosen if not entry.existed)
    lines: list[str] = []
    if new:
        # rmdir -p stops at the first folder that is not empty (or is the tree's own)
        lines.append(f"rm -f -- {new}")
        folders = sorted({str(Path(entry.path).parent) for entry in chosen if not entry.existed} - {"."})
        if folders:
            lines.append(f"rmdir -p --ignore-fail-on-non-empty -- {' '.join(map(shlex.quote, folders))}")
    if existed:
        lines.append(f"git checkout {shlex.quote(base_commit)} -- {existed}")
    return lines
