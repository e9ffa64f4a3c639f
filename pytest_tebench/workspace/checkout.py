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

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import PredictionError
from pytest_tebench.workspace.gitcmd import GitError
from pytest_tebench.workspace.gitcmd import file_at
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.gitcmd import git_text
from pytest_tebench.workspace.layout import FORBIDDEN
from pytest_tebench.workspace.layout import MAVEN
from pytest_tebench.workspace.layout import OUTSIDE
from pytest_tebench.workspace.layout import STRAY
from pytest_tebench.workspace.layout import STRAY_REASON
from pytest_tebench.workspace.layout import Refusal
from pytest_tebench.workspace.layout import link_change_reason
from pytest_tebench.workspace.patches import FilePatch
from pytest_tebench.workspace.patches import PatchFormatError
from pytest_tebench.workspace.patches import parse_patch
from pytest_tebench.workspace.removal import remove_tree
from pytest_tebench.workspace.textdiff import is_utf8
from pytest_tebench.workspace.textdiff import legacy_encoding

#: "Hunk #2 succeeded at 40 with fuzz 1 (offset 3 lines)." (GNU patch; git apply -v says the same
#: without the fuzz part).
_HUNK_REPORT = re.compile(r"Hunk #\d+ succeeded at \d+(?: with fuzz (\d+))?(?: \(offset (-?\d+) lines?\))?")
#: How a prediction is read and applied (this module and :mod:`.patches`), in the key of every
#: stored result whose verdict depends on it: a result applied under older rules is made again
#: (2: a hunk of context lines only is left out, so the rest of the prediction applies; GNU
#: ``patch`` runs with none of the user's environment; 3: a piece of text for a file that is not
#: UTF-8 goes in that file's encoding, a context line that lost its space before a tab is one, and
#: a hunk that goes on past a remark is corrupt rather than cut short; 4: a prediction that leaves
#: V-0.5's tree as it was, every piece refused or of context only, is scored as an empty patch).
APPLY_RULES = 4
#: GNU patch's whole environment besides ``PATH``: nothing of the user's reaches it.
_PATCH_ENV = {"LC_ALL": "C"}
#: GNU patch's fuzz may drop context lines at each end of a hunk; it is kept below every hunk's
#: larger context side, so at least one context line of each hunk must match, and never above 2.
MAX_FUZZ = 2


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
class TreeChange:
    """One entry of a tree that differs from another: git's modes on each side (``000000`` where
    absent) and its path."""

    old_mode: str
    new_mode: str
    path: str


@dataclass(frozen=True)
class AppliedPrediction:
    commit: str
    #: ``git-apply``, ``3way`` or ``fuzzy``; ``none`` when nothing was left to apply.
    method: str
    #: Files outside the test tree that the prediction tried to change (not applied by default).
    touched_non_test_files: tuple[str, ...]
    applied_files: tuple[str, ...] = field(default=())
    #: Every piece that was not applied, with the rule that refused it (see workspace/layout.py).
    refused: tuple[Refusal, ...] = field(default=())
    #: How the patch went in: fuzz allowed and used, largest offset, hunks recounted.
    details: dict[str, int] = field(default_factory=dict)


class Workspace:
    """One isolated checkout of an instance."""

    def __init__(self, path: Path) -> None:
        self.path = path

    # -- creation -----------------------------------------------------------------------
    @classmethod
    def create(cls, source_repo: Path, v_minus_1: str, source_patch: str, *, parent: Path) -> Workspace:
        """Clone ``source_repo`` into a new directory under ``parent`` and commit V-0.5."""
        # absolute: git runs in ``parent``, so a relative path would name a folder inside it
        parent = parent.absolute()
        parent.mkdir(parents=True, exist_ok=True)
        path = Path(tempfile.mkdtemp(prefix="ws-", dir=parent))
        workspace = cls(path)
        try:
            git(parent, "clone", "--quiet", "--shared", "--no-checkout", str(source_repo), str(path))
            git(path, "checkout", "--quiet", "--detach", v_minus_1)
            # git checks out what it can and exits 0 when the clone lacks a blob (a snapshot without
            # its largest files): the tree would silently miss that file, and V-0.5 would delete it
            absent = git_text(path, "ls-files", "--deleted").split("\n")
            if any(absent):
                shown = ", ".join(name for name in absent[:5] if name)
                raise HarnessError(
                    f"the repository {source_repo} lacks the content of {shown} at {v_minus_1} "
                    "(an incomplete clone): give a complete clone with --tebench-repos"
                )
            git(path, "tag", "v-1")
            if source_patch.strip():
                try:
                    workspace._apply_dataset_patch(source_patch, "v-1")
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
        # gone from its path now, deleted by a background thread (removal.py)
        remove_tree(self.path)

    # -- revisions ----------------------------------------------------------------------
    def rev(self, name: str) -> str:
        return git_text(self.path, "rev-parse", "--verify", f"{name}^{{commit}}").strip()

    def commit_date(self, rev: str) -> str:
        """The committer date of ``rev`` (ISO 8601): V-1's is real, the harness's commits' fixed."""
        return git_text(self.path, "log", "-1", "--format=%cI", rev).strip()

    def checkout(self, rev: str) -> None:
        git(self.path, "checkout", "--quiet", "--force", "--detach", rev)
        git(self.path, "clean", "-fdqx", "-e", "target/")

    def read(self, rev: str, path: str) -> str | None:
        """The text of ``path`` at ``rev`` (None when absent), decoded as :func:`source_texts` does."""
        return source_texts(self.read_bytes(rev, path))[0]

    def read_pair(self, base: str, old_path: str, new: str, new_path: str) -> tuple[str | None, str | None]:
        """Two versions of one file, decoded alike (:func:`source_texts`), to be compared."""
        old_text, new_text = source_texts(self.read_bytes(base, old_path), self.read_bytes(new, new_path))
        return old_text, new_text

    def read_bytes(self, rev: str, path: str) -> bytes | None:
        return file_at(self.path, rev, path)

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
                changes.append(FileChange(old_path, new_path, *self.read_pair(base, old_path, new, new_path)))
        return changes

    def changed_line_numbers(self, base: str, new: str) -> dict[str, tuple[frozenset[int], frozenset[int]]]:
        """``{path: (removed lines in base, added lines in new)}`` from a zero-context diff.

        A file is keyed by its path in ``new`` (its ``base`` path when deleted). Read with the one
        diff parser (:mod:`~pytest_tebench.workspace.patches`), so quoted paths are unquoted.
        """
        raw = git_text(self.path, "diff", "-U0", "-M", "--no-color", "--no-ext-diff", base, new)
        return changed_line_numbers(raw)

    # -- gold and predictions -----------------------------------------------------------
    def commit_gold(self, test_patch: str) -> str:
        """Commit V-0.5 + ``test_patch`` as tag ``gold``; a gold patch must apply exactly."""
        self.checkout("v-0.5")
        try:
            self._apply_dataset_patch(test_patch, "v-0.5")
        except GitError as exc:
            raise BadInstance(f"the gold test_patch does not apply to V-0.5: {exc}") from exc
        commit = self._commit_all("gold", tag="gold")
        self.checkout("v-0.5")
        return commit

    def commit_prediction(self, patch: str, *, allow_non_test_edits: bool = False) -> AppliedPrediction:
        """Apply the prediction on V-0.5 and commit it as tag ``prediction``.

        The patch is read into per-file pieces; each is judged by the layout's rules
        (:meth:`~pytest_tebench.workspace.layout.MavenLayout.refusal`) and only the accepted
        pieces, as the parser renders them, reach ``git apply`` or ``patch``. Raises
        :class:`PatchDoesNotApply` (a model failure) when the patch is not a diff or no method
        applies it. Links and submodules stay as V-0.5 has them: pieces that touch one are
        refused, and so are those whose application changed one all the same (then the others
        are applied again without them). Any other path the application changed that no applied
        piece names is put back as V-0.5 has it and refused as :data:`~.layout.STRAY`.
        """
        self.checkout("v-0.5")
        try:
            files = parse_patch(patch)
        except PatchFormatError as exc:
            raise PatchDoesNotApply(str(exc)) from exc
        links = self._links("v-0.5")
        to_apply: list[FilePatch] = []
        refused: list[Refusal] = []
        for piece in files:
            if piece.changes_nothing:
                continue  # context-only hunks: nothing of the file to apply, or to refuse
            refusal = MAVEN.refusal(piece, allow_non_test_edits=allow_non_test_edits, links=links)
            if refusal is None:
                to_apply.append(piece)
            else:
                refused.append(refusal)
                if piece.dialect == "context" and refusal.kind != OUTSIDE:
                    raise PatchDoesNotApply(
                        f"{piece.path}: a context diff ('***'/'---'); submit a unified diff (git diff)"
                    )
        touched = tuple(
            sorted({p for f in files if not f.changes_nothing for p in f.paths if not MAVEN.is_test_path(p)})
        )
        broken = [f.path for f in to_apply if f.binary == "no-data"]
        if broken:
            raise PatchDoesNotApply(
                "binary hunk without data ('Binary files ... differ') for "
                + ", ".join(broken)
                + "; produce the patch with `git diff --binary`"
            )
        method, details = self._apply_pieces(to_apply)
        # whatever the route (git, 3-way, patch) and the pieces' headers, the tree decides: a
        # link's target is its content to git, and a copy or rename carries a link's mode along
        tree = self._tree_changes("v-0.5")
        while changed := _link_changes(tree):
            dropped = [f for f in to_apply if changed.keys() & set(f.paths)]
            if not dropped:
                self.checkout("v-0.5")
                path, reason = next(iter(changed.items()))
                raise PatchDoesNotApply(f"{path}: {reason}, and no piece of the prediction names it")
            refused += [
                Refusal(f.path, FORBIDDEN, next(changed[p] for p in f.paths if p in changed)) for f in dropped
            ]
            to_apply = [f for f in to_apply if f not in dropped]
            self.checkout("v-0.5")
            method, details = self._apply_pieces(to_apply)
            tree = self._tree_changes("v-0.5")
        # and only what the accepted pieces name changed: whatever else the route wrote (a backup
        # or reject file of `patch`, a file through a link, a path it resolved another way) is
        # put back as V-0.5 has it, and listed
        named = {p for f in to_apply for p in f.paths}
        stray = [change.path for change in tree if change.path not in named]
        if stray:
            self._restore("v-0.5", stray)
            refused += [Refusal(path, STRAY, STRAY_REASON) for path in stray]
        # staged already: _tree_changes added the tree, and _restore put strays back in the index too
        commit = self._commit_staged("prediction", tag="prediction")
        if unchanged := sum(f.unchanged_hunks for f in files):
            details["unchanged_hunks"] = unchanged
        return AppliedPrediction(
            commit, method, touched, tuple(f.path for f in to_apply), tuple(refused), details
        )

    # -- internals ----------------------------------------------------------------------
    def _apply_pieces(self, files: list[FilePatch]) -> tuple[str, dict[str, int]]:
        details = {"recounted_hunks": sum(f.recounted for f in files)}
        return (self._apply_with_fallbacks(files, details) if files else "none"), details

    def _links(self, rev: str) -> dict[str, str]:
        """``{path: mode}`` of the symbolic links and submodules of ``rev``."""
        raw = git(self.path, "ls-tree", "-r", "-z", "--full-tree", rev).stdout.decode(
            "utf-8", errors="surrogateescape"
        )
        entries = (entry.split("\t", 1) for entry in raw.split("\0") if entry)
        # "<mode> <type> <sha>\t<path>"
        return {path: meta[:6] for meta, path in entries if meta.startswith(("120000 ", "160000 "))}

    def _tree_changes(self, base: str) -> list[TreeChange]:
        """Every entry of the work tree (staged, build output left out) that differs from
        ``base``, with its modes on both sides; renames are a deletion and an addition."""
        self._stage_all()
        raw = git(self.path, "diff-index", "--cached", "-r", "-z", "--no-renames", base).stdout.decode(
            "utf-8", errors="surrogateescape"
        )
        fields = raw.split("\0")
        changes: list[TreeChange] = []
        # ":<old mode> <new mode> <old sha> <new sha> <status>", then the path
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            old_mode, new_mode = meta.lstrip(":").split(" ")[:2]
            changes.append(TreeChange(old_mode, new_mode, path))
        return changes

    def _restore(self, rev: str, paths: list[str]) -> None:
        """Put ``paths`` back in the index and the work tree as ``rev`` has them (deleted where
        it lacks them); the paths are literal, never patterns."""
        listed = "".join(f"{path}\0" for path in paths).encode("utf-8", errors="surrogateescape")
        git(
            self.path, "--literal-pathspecs", "restore", f"--source={rev}", "--staged", "--worktree",
            "--pathspec-from-file=-", "--pathspec-file-nul", input=listed,
        )  # fmt: skip

    def _stage_all(self) -> None:
        # --force: a patch may add a file the project's .gitignore matches; build output stays out
        git(self.path, "add", "--all", "--force", "--", ".", ":(exclude,glob)**/target/**")

    def _apply_exact(self, patch: str | bytes, *, three_way: bool) -> str:
        args = ["apply", "-v", "--binary", "--whitespace=nowarn"] + (["--3way"] if three_way else []) + ["-"]
        data = patch.encode("utf-8") if isinstance(patch, str) else patch
        return git(self.path, *args, input=data).stderr.decode("utf-8", errors="replace")

    def _apply_dataset_patch(self, patch: str, rev: str) -> None:
        """A dataset's patch, which must apply exactly to ``rev`` (checked out): as written, or
        else (a dataset made elsewhere that holds a Latin-1 source's lines as text) with its
        pieces in their files' encodings."""
        try:
            self._apply_exact(patch, three_way=False)
        except GitError as exc:
            if patch.isascii():
                raise
            try:
                encoded = self._encoded(parse_patch(patch), rev)
            except PatchFormatError:
                raise exc from None
            if encoded == patch.encode("utf-8"):
                raise
            self.checkout(rev)
            self._apply_exact(encoded, three_way=False)

    def _encoded(self, files: list[FilePatch], rev: str = "v-0.5") -> bytes:
        """The pieces as bytes for git or ``patch``: UTF-8, but a piece of text for a file whose
        bytes at ``rev`` are not UTF-8 in that file's own single-byte encoding (see
        :func:`legacy_encoding`), as an editor would save it: a model writes ``caf\u00e9`` where a
        Latin-1 source holds the byte E9, and in UTF-8 its context would never match."""
        parts: list[bytes] = []
        for piece in files:
            # only a piece of non-ASCII text for an existing file can differ between encodings;
            # its headers are encoded too, so its paths must read alike in every encoding
            legacy = piece.hunks and not piece.text.isascii() and all(p.isascii() for p in piece.paths)
            data = self.read_bytes(rev, piece.old_path) if legacy and piece.old_path else None
            encoding = legacy_encoding(data) if data is not None else None
            try:
                parts.append(piece.text.encode(encoding or "utf-8"))
            except UnicodeEncodeError:  # a character the file's encoding lacks: as the model wrote it
                parts.append(piece.text.encode("utf-8"))
        return b"".join(parts)

    def _apply_with_fallbacks(self, files: list[FilePatch], details: dict[str, int]) -> str:
        patch = self._encoded(files)
        attempts: list[str] = []
        for method in ("git-apply", "3way", "fuzzy"):
            try:
                if method == "fuzzy":
                    report = self._apply_fuzzy(files, patch, details)
                else:
                    report = self._apply_exact(patch, three_way=method == "3way")
                details.update(_hunk_report(report))
                return method
            except GitError as exc:
                attempts.append(f"{method}: {exc.stderr.strip() or exc}")
                self.checkout("v-0.5")  # each attempt starts from a clean V-0.5
        raise PatchDoesNotApply("the prediction does not apply to V-0.5", "\n".join(attempts))

    def _apply_fuzzy(self, files: list[FilePatch], patch: bytes, details: dict[str, int]) -> str:
        """git ignoring white space (all context must match), then GNU patch ignoring white space
        with a fuzz that leaves at least one context line of every hunk to match. (git's ``-C``
        drops context silently, so fuzz is left to ``patch``, which reports it per hunk.) ``patch``
        is ``files`` as :meth:`_encoded` gives them."""
        relaxed = git(
            self.path, "apply", "-v", "--ignore-whitespace", "--whitespace=nowarn", "-",
            input=patch, check=False,
        )  # fmt: skip
        if relaxed.returncode == 0:
            return relaxed.stderr.decode("utf-8", errors="replace")
        self.checkout("v-0.5")
        fuzz, problem = fuzz_limit(files)
        details["fuzz_limit"] = fuzz
        if problem:
            raise GitError("fuzzy apply", relaxed.stderr.decode(errors="replace") + problem)
        try:
            # --get=0 and a closed environment: the user's POSIXLY_CORRECT, PATCH_GET, backup and
            # locale variables would change which file patch writes, fetch files from RCS/SCCS,
            # or translate the hunk reports read above
            result = subprocess.run(
                ["patch", "-p1", "--batch", "--forward", "-l", f"--fuzz={fuzz}", "--no-backup-if-mismatch",
                 "--get=0", "-r", "-"],
                cwd=self.path, input=patch, capture_output=True, timeout=120, check=False,
                env=_PATCH_ENV | {"PATH": os.environ.get("PATH", os.defpath)},
            )  # fmt: skip
        except FileNotFoundError:
            raise GitError("fuzzy apply", relaxed.stderr.decode(errors="replace")) from None
        if result.returncode != 0:
            raise GitError(
                "fuzzy apply", (relaxed.stderr + result.stdout + result.stderr).decode(errors="replace")
            )
        return result.stdout.decode("utf-8", errors="replace")

    def _commit_all(self, message: str, *, tag: str) -> str:
        self._stage_all()
        return self._commit_staged(message, tag=tag)

    def _commit_staged(self, message: str, *, tag: str) -> str:
        git(self.path, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", message)
        git(self.path, "tag", "--force", tag)
        return self.rev("HEAD")


def source_texts(*versions: bytes | None) -> tuple[str | None, ...]:
    """Versions of one source file as text to parse and compare: UTF-8 when every version is;
    otherwise (a Latin-1 source) each byte one character, for all of them. Replacement characters
    would make ``"\u00e9"`` and ``"\u00e8"`` the same token, and two versions decoded differently
    would differ in every non-ASCII literal."""
    present = [data for data in versions if data is not None]
    encoding = "utf-8" if all(is_utf8(data) for data in present) else "latin-1"
    return tuple(None if data is None else data.decode(encoding) for data in versions)


def changed_line_numbers(diff: str) -> dict[str, tuple[frozenset[int], frozenset[int]]]:
    """``{path: (removed line numbers, added line numbers)}`` of a diff's text (git's output)."""
    if not diff.strip():
        return {}
    result: dict[str, tuple[frozenset[int], frozenset[int]]] = {}
    for piece in parse_patch(diff):
        removed = {number for hunk in piece.hunks for number, _ in hunk.removed()}
        added = {number for hunk in piece.hunks for number, _ in hunk.added()}
        old_removed, old_added = result.get(piece.path, (frozenset(), frozenset()))
        result[piece.path] = (old_removed | removed, old_added | added)
    return result


def fuzz_limit(files: list[FilePatch]) -> tuple[int, str]:
    """``(fuzz, problem)``: the largest ``--fuzz`` that leaves a context line of every hunk to
    match, and why fuzzy matching cannot be used at all (a hunk that changes an existing file
    with no context line has nothing to be matched by)."""
    limit = MAX_FUZZ
    for piece in files:
        if piece.status in ("added", "deleted"):
            continue
        for hunk in piece.hunks:
            lead, trail = hunk.context
            if max(lead, trail) == 0:
                return 0, f"\n{piece.path}: a hunk without context lines cannot be placed by fuzzy matching"
            limit = min(limit, max(lead, trail) - 1)
    return limit, ""


def _link_changes(changes: list[TreeChange]) -> dict[str, str]:
    """``{path: why}`` for every change that
    :func:`~pytest_tebench.workspace.layout.link_change_reason` refuses."""
    reasons = {change.path: link_change_reason(change.old_mode, change.new_mode) for change in changes}
    return {path: reason for path, reason in reasons.items() if reason}


def _hunk_report(output: str) -> dict[str, int]:
    """Fuzz and offsets that git (-v) or GNU patch report for the hunks they placed."""
    fuzz = [int(m[1]) for m in _HUNK_REPORT.finditer(output) if m[1]]
    offsets = [abs(int(m[2])) for m in _HUNK_REPORT.finditer(output) if m[2]]
    return {
        "fuzz": max(fuzz, default=0),
        "max_offset": max(offsets, default=0),
        "hunks_moved": len(offsets),
    }
