"""Per-item workspaces: a fresh clone at V-1, V-0.5 committed, gold and prediction on top.

A workspace is a ``git clone --shared`` of the repository (objects are borrowed, not copied,
so it is cheap) in a directory of its own. It never shares a working tree, index or HEAD with
the user's clone or the cache mirror, so any number of items can run side by side.

Inside it the harness makes commits with a fixed identity and date (see ``gitcmd``):

* ``V-0.5`` = V-1 + ``source_patch`` (binary hunks included): the state the system saw;
* ``gold``  = V-0.5 + the gold ``test_patch``;
* ``prediction`` = V-0.5 + the test-tree part of the prediction.

Identical inputs therefore give identical commit hashes on every machine, which is what makes
the gold cache and the reports reproducible.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import PredictionError
from pytest_tebench.workspace.gitcmd import GitError
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.gitcmd import git_text
from pytest_tebench.workspace.patches import FilePatch
from pytest_tebench.workspace.patches import PatchFormatError
from pytest_tebench.workspace.patches import join_patch
from pytest_tebench.workspace.patches import parse_patch
from pytest_tebench.workspace.patches import split_by_test_tree

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class BadInstance(HarnessError):
    """The instance itself is broken (its source patch does not apply to V-1)."""


class PatchDoesNotApply(PredictionError):
    """No application method could apply the prediction; ``details`` has git's explanation."""

    def __init__(self, message: str, details: str = "") -> None:
        super().__init__(message)
        self.details = details


@dataclass(frozen=True)
class FileChange:
    """One file as it was in V-0.5 and as it is after a patch (None = absent on that side)."""

    old_path: str | None
    new_path: str | None
    old_text: str | None
    new_text: str | None

    @property
    def canonical_path(self) -> str:
        return self.old_path if self.old_path is not None else (self.new_path or "")


@dataclass(frozen=True)
class AppliedPrediction:
    commit: str
    #: ``git-apply``, ``3way`` or ``fuzzy``; ``none`` when nothing was left to apply.
    method: str
    #: Files outside the test tree that the prediction tried to change (not applied by default).
    touched_non_test_files: tuple[str, ...]
    applied_files: tuple[str, ...] = field(default=())


class Workspace:
    """One isolated checkout of an instance."""

    def __init__(self, path: Path) -> None:
        self.path = path

    # -- creation -----------------------------------------------------------------------
    @classmethod
    def create(cls, source_repo: Path, v_minus_1: str, source_patch: str, *, parent: Path) -> Workspace:
        """Clone ``source_repo`` into a new directory under ``parent`` and commit V-0.5."""
        parent.mkdir(parents=True, exist_ok=True)
        path = Path(tempfile.mkdtemp(prefix="ws-", dir=parent))
        workspace = cls(path)
        try:
            git(parent, "clone", "--quiet", "--shared", "--no-checkout", str(source_repo), str(path))
            git(path, "checkout", "--quiet", "--detach", v_minus_1)
            git(path, "tag", "v-1")
            if source_patch.strip():
                try:
                    workspace._apply_exact(source_patch, three_way=False)
                except GitError as exc:
                    raise BadInstance(
                        f"source_patch does not apply to v_minus_1_commit {v_minus_1}: {exc}"
                    ) from exc
            workspace._commit_all("V-0.5", tag="v-0.5")
        except BaseException:
            workspace.remove()
            raise
        return workspace

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)

    # -- revisions ----------------------------------------------------------------------
    def rev(self, name: str) -> str:
        return git_text(self.path, "rev-parse", "--verify", f"{name}^{{commit}}").strip()

    def checkout(self, rev: str) -> None:
        git(self.path, "checkout", "--quiet", "--force", "--detach", rev)
        git(self.path, "clean", "-fdqx", "-e", "target/")

    def read(self, rev: str, path: str) -> str | None:
        result = git(self.path, "show", f"{rev}:{path}", check=False)
        return result.stdout.decode("utf-8", errors="replace") if result.returncode == 0 else None

    def changed_files(self, base: str, new: str) -> list[FileChange]:
        """Every file that differs between two revisions, renames detected (git's default 50 %)."""
        raw = git(self.path, "diff", "--name-status", "-z", "-M", "--no-color", base, new).stdout.decode(
            "utf-8", errors="surrogateescape"
        )
        fields = raw.split("\0")
        changes: list[FileChange] = []
        index = 0
        while index < len(fields) and fields[index]:
            status = fields[index]
            if status[0] in "RC":
                old_path, new_path = fields[index + 1], fields[index + 2]
                index += 3
            else:
                old_path = new_path = fields[index + 1]
                index += 2
            if status[0] == "A":
                changes.append(FileChange(None, new_path, None, self.read(new, new_path)))
            elif status[0] == "D":
                changes.append(FileChange(old_path, None, self.read(base, old_path), None))
            else:
                changes.append(
                    FileChange(old_path, new_path, self.read(base, old_path), self.read(new, new_path))
                )
        return changes

    def changed_line_numbers(self, base: str, new: str) -> dict[str, tuple[frozenset[int], frozenset[int]]]:
        """``{path: (removed lines in base, added lines in new)}`` from a zero-context diff.

        A file is keyed by its path in ``new`` (its ``base`` path when deleted).
        """
        raw = git_text(self.path, "diff", "-U0", "-M", "--no-color", "--no-ext-diff", base, new)
        result: dict[str, tuple[set[int], set[int]]] = {}
        old_path = new_path = ""
        current: tuple[set[int], set[int]] | None = None
        for line in raw.splitlines():
            if line.startswith("diff --git "):
                current = None
                old_path = new_path = ""
            elif line.startswith("--- "):
                old_path = line[6:] if line.startswith("--- a/") else ""
            elif line.startswith("+++ "):
                new_path = line[6:] if line.startswith("+++ b/") else ""
                current = result.setdefault(new_path or old_path, (set(), set()))
            elif line.startswith("@@") and current is not None:
                match = _HUNK.match(line)
                if match:
                    old_start, old_len = int(match[1]), int(match[2] or 1)
                    new_start, new_len = int(match[3]), int(match[4] or 1)
                    current[0].update(range(old_start, old_start + old_len))
                    current[1].update(range(new_start, new_start + new_len))
        return {path: (frozenset(r), frozenset(a)) for path, (r, a) in result.items()}

    # -- gold and predictions -----------------------------------------------------------
    def commit_gold(self, test_patch: str) -> str:
        """Commit V-0.5 + ``test_patch`` as tag ``gold``; a gold patch must apply exactly."""
        self.checkout("v-0.5")
        try:
            self._apply_exact(test_patch, three_way=False)
        except GitError as exc:
            raise BadInstance(f"the gold test_patch does not apply to V-0.5: {exc}") from exc
        commit = self._commit_all("gold", tag="gold")
        self.checkout("v-0.5")
        return commit

    def commit_prediction(self, patch: str, *, allow_non_test_edits: bool = False) -> AppliedPrediction:
        """Apply the prediction on V-0.5 and commit it as tag ``prediction``.

        Raises :class:`PatchDoesNotApply` (a model failure) when the patch is not a diff or no
        method applies it.
        """
        self.checkout("v-0.5")
        try:
            files = parse_patch(patch)
        except PatchFormatError as exc:
            raise PatchDoesNotApply(str(exc)) from exc
        tests, others = split_by_test_tree(files)
        touched = tuple(sorted({p for f in others for p in f.paths}))
        to_apply = files if allow_non_test_edits else tests
        broken = [f.path for f in to_apply if f.binary == "no-data"]
        if broken:
            raise PatchDoesNotApply(
                "binary hunk without data ('Binary files ... differ') for "
                + ", ".join(broken)
                + "; produce the patch with `git diff --binary`"
            )
        method = self._apply_with_fallbacks(to_apply) if to_apply else "none"
        commit = self._commit_all("prediction", tag="prediction")
        return AppliedPrediction(commit, method, touched, tuple(f.path for f in to_apply))

    # -- internals ----------------------------------------------------------------------
    def _apply_exact(self, patch: str, *, three_way: bool) -> None:
        args = ["apply", "--binary", "--whitespace=nowarn"] + (["--3way"] if three_way else []) + ["-"]
        git(self.path, *args, input=patch.encode("utf-8"))

    def _apply_with_fallbacks(self, files: list[FilePatch]) -> str:
        patch = join_patch(files)
        attempts: list[str] = []
        for method in ("git-apply", "3way", "fuzzy"):
            try:
                if method == "fuzzy":
                    self._apply_fuzzy(patch)
                else:
                    self._apply_exact(patch, three_way=method == "3way")
                return method
            except GitError as exc:
                attempts.append(f"{method}: {exc.stderr.strip() or exc}")
                self.checkout("v-0.5")  # each attempt starts from a clean V-0.5
        raise PatchDoesNotApply("the prediction does not apply to V-0.5", "\n".join(attempts))

    def _apply_fuzzy(self, patch: str) -> None:
        # git first with relaxed context and whitespace, then GNU patch's fuzz as the last resort
        relaxed = git(
            self.path, "apply", "--recount", "--ignore-whitespace", "-C1", "--whitespace=nowarn", "-",
            input=patch.encode("utf-8"), check=False,
        )  # fmt: skip
        if relaxed.returncode == 0:
            return
        self.checkout("v-0.5")
        try:
            result = subprocess.run(
                ["patch", "-p1", "--batch", "--forward", "--fuzz=3", "--no-backup-if-mismatch", "-r", "-"],
                cwd=self.path, input=patch.encode("utf-8"), capture_output=True, timeout=120, check=False,
            )  # fmt: skip
        except FileNotFoundError:
            raise GitError("fuzzy apply", relaxed.stderr.decode(errors="replace")) from None
        if result.returncode != 0:
            raise GitError(
                "fuzzy apply", (relaxed.stderr + result.stdout + result.stderr).decode(errors="replace")
            )

    def _commit_all(self, message: str, *, tag: str) -> str:
        # --force: a patch may add a file the project's .gitignore matches; build output stays out
        git(self.path, "add", "--all", "--force", "--", ".", ":(exclude,glob)**/target/**")
        git(self.path, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", message)
        git(self.path, "tag", "--force", tag)
        return self.rev("HEAD")
