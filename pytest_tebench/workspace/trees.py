"""Read a whole tree of a git repository into memory, without a checkout.

Text datasets need the files of a repository at one revision (BM25 documents, README files,
the oracle files). Reading blobs straight from the object store with one ``git cat-file
--batch`` is much faster than a checkout and never touches a working tree, so many instances
can read the same mirror at once.

Contents are decoded the way Python's ``open(path)`` reads a checked-out file in text mode
(UTF-8, universal newlines), because that is how SWE-bench's own dataset builder reads them;
byte-identical prompts depend on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pytest_tebench.workspace.gitcmd import GitError
from pytest_tebench.workspace.gitcmd import git

_SYMLINK_MODE = "120000"


@dataclass(frozen=True)
class TreeEntry:
    path: str
    mode: str
    sha: str


@dataclass(frozen=True)
class Tree:
    """The regular files of one revision: ``path -> (blob sha, raw bytes)``."""

    revision: str
    blobs: dict[str, tuple[str, bytes]]

    def text(self, path: str) -> str | None:
        """The file as ``open(path).read()`` gives it; None when absent or not UTF-8."""
        entry = self.blobs.get(path)
        return None if entry is None else decode_text(entry[1])

    def sha(self, path: str) -> str | None:
        entry = self.blobs.get(path)
        return None if entry is None else entry[0]


def decode_text(data: bytes) -> str | None:
    """UTF-8 with universal newlines (``\\r\\n`` and ``\\r`` become ``\\n``); None if not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def list_tree(git_dir: Path, revision: str) -> list[TreeEntry]:
    """Every blob of ``revision`` (recursively; submodules, which have no blob, are left out)."""
    raw = git(git_dir, "ls-tree", "-r", "-z", "--full-tree", revision).stdout
    entries: list[TreeEntry] = []
    for record in raw.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        if kind == "blob":
            entries.append(TreeEntry(path.decode("utf-8", errors="surrogateescape"), mode, sha))
    return entries


def read_blobs(git_dir: Path, shas: list[str]) -> dict[str, bytes]:
    """The contents of the blobs ``shas``, read with a single ``git cat-file --batch``."""
    unique = list(dict.fromkeys(shas))
    if not unique:
        return {}
    out = git(git_dir, "cat-file", "--batch", input=("\n".join(unique) + "\n").encode()).stdout
    blobs: dict[str, bytes] = {}
    position = 0
    for sha in unique:
        header_end = out.index(b"\n", position)
        header = out[position:header_end].decode().split()
        if len(header) != 3 or header[1] != "blob":
            raise GitError(f"git cat-file: unexpected answer {' '.join(header)!r} for {sha}")
        size = int(header[2])
        start = header_end + 1
        blobs[sha] = out[start : start + size]
        position = start + size + 1
    return blobs


def read_tree(git_dir: Path, revision: str, *, wanted: Callable[[str], bool] | None = None) -> Tree:
    """The regular files of ``revision`` (symbolic links resolved inside the tree, as a checkout would).

    ``wanted`` is an optional predicate on paths; only those files are read.
    """
    entries = list_tree(git_dir, revision)
    by_path = {e.path: e for e in entries}
    targets: dict[str, TreeEntry] = {}
    for entry in entries:
        if wanted is not None and not wanted(entry.path):
            continue
        resolved = _resolve(entry, by_path, git_dir)
        if resolved is not None:
            targets[entry.path] = resolved
    blobs = read_blobs(git_dir, [e.sha for e in targets.values()])
    return Tree(revision, {path: (e.sha, blobs[e.sha]) for path, e in targets.items()})


def _resolve(entry: TreeEntry, by_path: dict[str, TreeEntry], git_dir: Path) -> TreeEntry | None:
    # a link to a file of the same tree reads as that file; links leaving the tree read as nothing
    seen: set[str] = set()
    while entry.mode == _SYMLINK_MODE:
        if entry.path in seen:
            return None
        seen.add(entry.path)
        target = read_blobs(git_dir, [entry.sha])[entry.sha].decode("utf-8", errors="replace")
        joined = normalise_relative(str(Path(entry.path).parent / target))
        if joined is None or joined not in by_path:
            return None
        entry = by_path[joined]
    return entry


def normalise_relative(path: str) -> str | None:
    """``path`` relative to a root without ``.``/``..``/empty parts ("" for the root itself), or
    None when it leaves the root."""
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)
