"""A diff between two trees as text that JSON can carry, byte for byte.

Patches travel as JSON strings (datasets' ``test_patch``, predictions' ``model_patch``), so a
diff must be valid UTF-8. git prints a file's lines as they are stored: a Latin-1 test source
(commons-* declare ISO-8859-1) would come out as bytes that are not UTF-8, and decoding them
with replacement characters makes a patch that no longer applies to the file it came from.
Such files go as GIT binary patches instead (a ``-diff`` attribute for just those paths), which
``git apply --binary`` turns back into the same bytes. Both the dataset builder (gold's
patches) and ``tebench collect`` (an agent's work) make their patches here.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from pytest_tebench.errors import HarnessError
from pytest_tebench.workspace.gitcmd import file_at
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.gitcmd import git_env

#: What makes the patch the same whatever the repository's own configuration says.
DIFF_OPTIONS = (
    "--binary", "--full-index", "-M", "--no-color", "--no-ext-diff", "--no-textconv",
    # explicit prefixes: a repository's diff.noprefix / diff.mnemonicPrefix must not change the patch
    "--src-prefix=a/", "--dst-prefix=b/",
)  # fmt: skip


class UndecodableDiff(HarnessError):
    """Non-UTF-8 text that could not be sent as binary (the git directory's own ``info/attributes``
    forcing a text diff)."""


def text_diff(repo: Path, base: str, new: str, pathspec: Sequence[str] = ()) -> str:
    """``git diff`` from ``base`` to ``new`` (commits or trees) limited to ``pathspec``, as text.

    The files whose old or new content is not UTF-8 are diffed as binary; every other file as
    git's ordinary text diff. Raises :class:`UndecodableDiff` when the repository forces text.
    """
    raw = _diff(repo, base, new, pathspec)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    paths = non_utf8_paths(repo, base, new, pathspec)
    git_dir = git(repo, "rev-parse", "--absolute-git-dir").stdout.decode("utf-8", "surrogateescape").strip()
    with tempfile.TemporaryDirectory(prefix="tebench-diff-") as scratch:
        attributes = Path(scratch) / "attributes"
        attributes.write_bytes(b"".join(_attribute_pattern(p) + b" -diff\n" for p in paths))
        # the project's own .gitattributes outrank core.attributesFile, and commons-* say
        # "*.java text diff=java": so this diff sees an empty work tree and index, where no
        # .gitattributes is, and the trees' contents from the repository alone
        empty = Path(scratch) / "tree"
        empty.mkdir()
        env = git_env() | {
            "GIT_DIR": git_dir,
            "GIT_WORK_TREE": str(empty),
            "GIT_INDEX_FILE": f"{empty}.index",
        }
        # run inside that empty tree: from a directory outside its work tree git still read them
        raw = _diff(empty, base, new, pathspec, "-c", f"core.attributesFile={attributes}", env=env)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        shown = ", ".join(p.decode("utf-8", "replace") for p in paths)
        raise UndecodableDiff(f"non-UTF-8 text that could not be sent as binary ({shown}): {exc}") from exc


def non_utf8_paths(repo: Path, base: str, new: str, pathspec: Sequence[str] = ()) -> list[bytes]:
    """Paths (both sides of a rename) of changed files whose old or new content is not UTF-8."""
    raw = git(repo, "diff", "--raw", "-z", "--no-abbrev", "-M", base, new, "--", *pathspec).stdout
    fields = raw.split(b"\0")
    found: list[bytes] = []
    index = 0
    while index < len(fields) and fields[index].startswith(b":"):
        _, _, old_oid, new_oid, status = fields[index][1:].decode().split(" ")
        paths = fields[index + 1 : index + (3 if status[0] in "RC" else 2)]
        index += 1 + len(paths)
        for oid in (old_oid, new_oid):
            if oid.strip("0") and not is_utf8(git(repo, "cat-file", "blob", oid).stdout):
                found.extend(paths)
                break
    return list(dict.fromkeys(found))


def is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def shown_text_diff(
    repo: Path, base: str, new: str, old_path: str | None, new_path: str | None
) -> str | None:
    """One file's diff as a person reads it, for prompts (never applied): a file whose bytes are
    not UTF-8 shown as text, each side's lines decoded in that side's own encoding (see
    :func:`legacy_encoding`), where :func:`text_diff` must send a GIT binary patch. None for a
    file that is binary (a NUL byte on either side)."""
    before = None if old_path is None else file_at(repo, base, old_path)
    after = None if new_path is None else file_at(repo, new, new_path)
    if any(b"\0" in data for data in (before, after) if data is not None):
        return None
    side = {
        b"-": (legacy_encoding(before) if before is not None else None) or "utf-8",
        b"+": (legacy_encoding(after) if after is not None else None) or "utf-8",
    }
    options = [option for option in DIFF_OPTIONS if option != "--binary"]
    paths = list(dict.fromkeys(p for p in (old_path, new_path) if p is not None))
    raw = git(repo, "-c", "core.quotePath=true", "diff", "--text", *options, base, new, "--", *paths).stdout
    # a context line has the same bytes on both sides: read it as the old file holds it
    lines = [line.decode(side.get(line[:1], side[b"-" if before is not None else b"+"]), "replace")
             for line in raw.split(b"\n")]  # fmt: skip
    return "\n".join(lines)


def legacy_encoding(data: bytes) -> str | None:
    """The single-byte encoding a source that is not UTF-8 is in: windows-1252 when its bytes are
    all defined there (its printable 0x80-0x9F are what such files hold in that range), else
    ISO-8859-1 (every byte is a character); None for UTF-8."""
    if is_utf8(data):
        return None
    try:
        data.decode("cp1252")
    except UnicodeDecodeError:
        return "iso-8859-1"
    return "cp1252"


def _diff(
    repo: Path, base: str, new: str, pathspec: Sequence[str], *config: str, env: dict[str, str] | None = None
) -> bytes:
    # quotePath: a header with raw non-ASCII bytes would not be valid UTF-8 text either
    args = ("-c", "core.quotePath=true", *config, "diff", *DIFF_OPTIONS, base, new, "--", *pathspec)
    return git(repo, *args, env=env).stdout


def _attribute_pattern(path: bytes) -> bytes:
    """A gitattributes pattern matching exactly ``path``: anchored, globs escaped, C-quoted."""
    escaped = b"".join(b"\\" + bytes([c]) if c in b"\\*?[" else bytes([c]) for c in b"/" + path)
    quoted = b"".join(
        b"\\" + bytes([c]) if c in b'"\\'
        else f"\\{c:03o}".encode() if c < 0x20 or c >= 0x7F
        else bytes([c])
        for c in escaped
    )  # fmt: skip
    return b'"' + quoted + b'"'
