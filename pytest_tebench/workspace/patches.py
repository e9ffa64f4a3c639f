"""Parse unified diffs into per-file pieces, and sort them into test and non-test files.

Predictions arrive as text from models, so the parser accepts both ``git diff`` output (with
renames, modes and binary hunks) and plain ``---``/``+++`` diffs, and reports what it cannot
use instead of guessing. Applying a patch is the workspace's job; this module never touches git.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from pytest_tebench.errors import PredictionError

_GIT_HEADER = re.compile(r"^diff --git (?P<a>\"(?:[^\"\\]|\\.)*\"|\S+) (?P<b>\"(?:[^\"\\]|\\.)*\"|\S+)$")
_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")


class PatchFormatError(PredictionError):
    """The text is not a diff we can apply (no file headers, a binary hunk without data...)."""


@dataclass(frozen=True)
class FilePatch:
    """The part of a diff that concerns one file."""

    old_path: str | None  # None when the file is created
    new_path: str | None  # None when the file is deleted
    status: str  # added | deleted | modified | renamed | copied
    #: ``full`` for a GIT binary patch with data, ``no-data`` for "Binary files ... differ", else ``""``.
    binary: str
    text: str

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for p in (self.old_path, self.new_path) if p is not None))

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""


def is_test_path(path: str) -> bool:
    """True when ``path`` lies in a Maven test tree: it has the components ``src/test``.

    The reference harness used substring tests (``test/java`` anywhere), which also caught
    production files under e.g. ``src/main/java/org/contest/``; components do not.
    """
    parts = path.replace("\\", "/").split("/")
    return any(a == "src" and b == "test" for a, b in itertools.pairwise(parts))


def parse_patch(text: str) -> list[FilePatch]:
    """Split ``text`` into :class:`FilePatch` values, in order.

    Raises :class:`PatchFormatError` when no file header can be found.
    """
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith("diff --git ")]
    if not starts:
        starts = _plain_diff_starts(lines)
    if not starts:
        raise PatchFormatError("no file header ('diff --git' or '---'/'+++') found in the patch")
    files: list[FilePatch] = []
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(lines)
        files.append(_parse_file(lines[start:end]))
    return files


def _plain_diff_starts(lines: list[str]) -> list[int]:
    return [
        i
        for i in range(len(lines) - 1)
        if lines[i].startswith("--- ")
        and lines[i + 1].startswith("+++ ")
        and (i + 2 >= len(lines) or lines[i + 2].startswith("@@"))
    ]


def _parse_file(chunk: list[str]) -> FilePatch:
    text = "".join(chunk)
    if not text.endswith("\n"):
        text += "\n"
    old_path: str | None = None
    new_path: str | None = None
    status = "modified"
    binary = ""
    header = _GIT_HEADER.match(chunk[0].rstrip("\n"))
    if header:
        old_path = _strip_prefix(_unquote(header["a"]))
        new_path = _strip_prefix(_unquote(header["b"]))
    for line in chunk[1:] if header else chunk:
        if line.startswith("@@"):
            break
        stripped = line.rstrip("\n")
        if stripped.startswith("new file mode"):
            status = "added"
        elif stripped.startswith("deleted file mode"):
            status = "deleted"
        elif stripped.startswith("rename from "):
            status, old_path = "renamed", _unquote(stripped[len("rename from ") :])
        elif stripped.startswith("rename to "):
            new_path = _unquote(stripped[len("rename to ") :])
        elif stripped.startswith("copy from "):
            status, old_path = "copied", _unquote(stripped[len("copy from ") :])
        elif stripped.startswith("copy to "):
            new_path = _unquote(stripped[len("copy to ") :])
        elif stripped.startswith("--- "):
            old_path = _header_path(stripped[4:], old_path)
        elif stripped.startswith("+++ "):
            new_path = _header_path(stripped[4:], new_path)
        elif stripped == "GIT binary patch":
            binary = "full"
        elif stripped.startswith("Binary files ") and stripped.endswith(" differ"):
            binary = "no-data"
    if status == "modified":
        if old_path is None and new_path is not None and _says_dev_null(chunk, "--- "):
            status = "added"
        elif new_path is None and old_path is not None and _says_dev_null(chunk, "+++ "):
            status = "deleted"
    if status == "added":
        old_path = None
    elif status == "deleted":
        new_path = None
    if old_path is None and new_path is None:
        raise PatchFormatError(f"cannot tell which file this diff section changes: {chunk[0].strip()!r}")
    return FilePatch(old_path, new_path, status, binary, text)


def _says_dev_null(chunk: list[str], marker: str) -> bool:
    return any(line.startswith(marker + "/dev/null") for line in chunk)


def _header_path(value: str, current: str | None) -> str | None:
    value = value.split("\t", 1)[0].rstrip()
    if value == "/dev/null":
        return None
    return _strip_prefix(_unquote(value)) if current is None else current


def _strip_prefix(path: str) -> str:
    return path[2:] if path.startswith(("a/", "b/")) else path


def _unquote(path: str) -> str:
    """Undo git's C-style quoting of unusual path names (``"a/caf\\303\\251.txt"``)."""
    if not (len(path) >= 2 and path[0] == path[-1] == '"'):
        return path
    body = path[1:-1]
    raw = _OCTAL_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), body)
    raw = raw.replace('\\"', '"').replace("\\t", "\t").replace("\\n", "\n").replace("\\\\", "\\")
    try:
        return raw.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return raw


def join_patch(files: Iterable[FilePatch]) -> str:
    return "".join(f.text for f in files)


def split_by_test_tree(files: Iterable[FilePatch]) -> tuple[list[FilePatch], list[FilePatch]]:
    """``(test_files, other_files)``; a rename that crosses the tree boundary counts as other."""
    tests: list[FilePatch] = []
    others: list[FilePatch] = []
    for file_patch in files:
        (tests if all(is_test_path(p) for p in file_patch.paths) else others).append(file_patch)
    return tests, others
