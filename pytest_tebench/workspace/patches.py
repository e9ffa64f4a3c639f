"""The one diff parser: every file header of a patch, whatever its dialect, and each file's hunks.

Predictions arrive as text from models and are untrusted, so this module does not hand their
text to ``git apply`` or ``patch``. It reads the text into per-file pieces (:class:`FilePatch`),
deciding itself where each file begins and which file each hunk belongs to, and
:func:`render` writes a piece back out in one unambiguous form: the validated header lines and
hunks whose ``@@`` counts are the true line counts. Whatever the model did not attribute to a
file (prose, stray lines) is never passed on; a hunk it cannot attribute rejects the patch.

Dialects recognised, in any mix and order:

* ``git diff`` sections (``diff --git a/x b/y``, quoted paths, modes, renames, copies, binary
  patches), including a *second* ``---``/``+++`` header inside one section: git and
  ``patch`` both read it as a new file, so it is one here too;
* plain unified diffs (``---``/``+++`` then ``@@``), with ``/dev/null`` for created and
  deleted files;
* context diffs (``*** old``/``--- new`` then ``***************``): their paths are read so the
  caller can decide on them, but their hunks are not parsed (:attr:`FilePatch.dialect` is
  ``context``; the workspace does not apply them).

Hunks are delimited by their ``@@`` counts. A hunk whose body is shorter than its counts
(models miscount) ends at the next header and is recounted; when the text ends inside it in the
middle of a line, the output was cut off: a truncated patch, rejected. Lines after a satisfied
count that are still hunk lines (``+``, ``-``, `` ``) extend the hunk unless they start a
header. A hunk of context lines only (a model dropped the one line it meant to add) changes
nothing and is left out of the rendered piece (git and ``patch`` reject it as corrupt), counted
in :attr:`FilePatch.unchanged_hunks`. Applying is the workspace's job; this module never touches
git. Also used for git's own ``-U0`` output (changed line numbers).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field

from pytest_tebench.errors import PredictionError

_GIT_HEADER = re.compile(r"^diff --git (?P<a>\"(?:[^\"\\]|\\.)*\"|\S+) (?P<b>\"(?:[^\"\\]|\\.)*\"|\S+)$")
#: ASCII digits, as git reads them, and few enough for int() (it refuses 4,300 digits and more).
_HUNK = re.compile(r"^@@ -([0-9]{1,12})(?:,([0-9]{1,12}))? \+([0-9]{1,12})(?:,([0-9]{1,12}))? @@(.*)$")
_CONTEXT_SEPARATOR = "***************"
_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")
#: A ``diff -u`` timestamp after a path and a space instead of a tab, which git also drops.
_SPACED_TIMESTAMP = re.compile(
    r" +(?:[0-9]{2})?[0-9]{2}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?"
    r"(?: [+-][0-9]{2}:?[0-9]{2})?$"
)
#: A mode as git's ``strtoul(..., 8)`` reads it: octal digits, then white space or the end.
_MODE = re.compile(r"\+?([0-7]{1,7})(?:[ \t\n\v\f\r]|$)")
#: ``index <old>..<new> <mode>``: the mode of a file whose mode does not change.
_INDEX_MODE = re.compile(r"^index [^.]*\.\.\S* +(\S.*)$")
#: Lines of git's extended header that carry meaning; any other line ends the header.
_EXTENDED = (
    "old mode ",
    "new mode ",
    "deleted file mode ",
    "new file mode ",
    "copy from ",
    "copy to ",
    "rename from ",
    "rename to ",
    "similarity index ",
    "dissimilarity index ",
    "index ",
)


class PatchFormatError(PredictionError):
    """The text is not a diff we can apply (no file headers, an unattributable hunk, ...)."""


@dataclass(frozen=True)
class Hunk:
    """One ``@@`` hunk: the header's start lines, the heading after ``@@``, and the body lines
    (each with its prefix ``" "``, ``"-"``, ``"+"`` or ``"\\"`` and its line end)."""

    old_start: int
    new_start: int
    heading: str
    lines: tuple[str, ...]

    @property
    def old_len(self) -> int:
        return sum(1 for line in self.lines if line[:1] in " -")

    @property
    def new_len(self) -> int:
        return sum(1 for line in self.lines if line[:1] in " +")

    def removed(self) -> Iterator[tuple[int, str]]:
        """``(line number in the old file, text)`` of every removed line."""
        number = self.old_start if self.old_len else self.old_start + 1
        for line in self.lines:
            if line[:1] == "-":
                yield number, line[1:]
            if line[:1] in " -":
                number += 1

    def added(self) -> Iterator[tuple[int, str]]:
        """``(line number in the new file, text)`` of every added line."""
        number = self.new_start if self.new_len else self.new_start + 1
        for line in self.lines:
            if line[:1] == "+":
                yield number, line[1:]
            if line[:1] in " +":
                number += 1

    @property
    def changes_lines(self) -> bool:
        """Whether the hunk adds or removes a line: one of context lines only changes nothing."""
        return any(line[:1] in "+-" for line in self.lines)

    @property
    def context(self) -> tuple[int, int]:
        """Context lines before the first change and after the last one (what fuzz may drop)."""
        kinds = [line[:1] for line in self.lines if line[:1] != "\\"]
        changes = [i for i, kind in enumerate(kinds) if kind in "+-"]
        if not changes:
            return len(kinds), 0
        return changes[0], len(kinds) - 1 - changes[-1]

    def render(self) -> str:
        # git's own spelling: a count of 1 is left out, so an exact patch renders as itself
        old = f"{self.old_start}" + ("" if self.old_len == 1 else f",{self.old_len}")
        new = f"{self.new_start}" + ("" if self.new_len == 1 else f",{self.new_len}")
        return f"@@ -{old} +{new} @@{self.heading}\n" + "".join(self.lines)


@dataclass(frozen=True)
class FilePatch:
    """The part of a diff that concerns one file."""

    old_path: str | None  # None when the file is created
    new_path: str | None  # None when the file is deleted
    status: str  # added | deleted | modified | renamed | copied
    #: ``full`` for a GIT binary patch with data, ``no-data`` for "Binary files ... differ", else ``""``.
    binary: str
    #: The piece as :func:`render` writes it (validated headers, recounted hunks).
    text: str
    #: ``git`` (a ``diff --git`` section), ``unified`` (plain ``---``/``+++``) or ``context``.
    dialect: str = "git"
    #: File modes from the extended header as git reads them (:func:`git_mode`: ``"100644"``,
    #: ``"120000"`` = symlink, ``"160000"`` = submodule).
    old_mode: str = ""
    new_mode: str = ""
    #: The mode an ``index`` line names: GNU ``patch`` takes it as both sides' mode, git as the old one.
    index_mode: str = ""
    hunks: tuple[Hunk, ...] = ()
    #: Hunks whose ``@@`` counts did not match their bodies (recounted).
    recounted: int = 0
    #: Hunks of context lines only (a model dropped the one line it meant to add), left out of
    #: ``hunks`` and ``text``: they change nothing, and git and ``patch`` refuse them as corrupt.
    unchanged_hunks: int = 0

    @property
    def changes_nothing(self) -> bool:
        """A plain modification whose every hunk was context only: nothing to apply."""
        return (
            self.unchanged_hunks > 0
            and not self.hunks
            and self.status == "modified"
            and not (self.binary or self.old_mode or self.new_mode)
        )

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for p in (self.old_path, self.new_path) if p is not None))

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(m for m in (self.old_mode, self.new_mode, self.index_mode) if m)


@dataclass
class _Section:
    """A file piece while it is being read."""

    dialect: str
    header: list[str]
    start_line: int
    git_paths: tuple[str, str] | None = None
    old_path: str | None = None
    new_path: str | None = None
    old_null: bool = False
    new_null: bool = False
    status: str = "modified"
    binary: str = ""
    old_mode: str = ""
    new_mode: str = ""
    index_mode: str = ""
    has_file_lines: bool = False
    hunks: list[Hunk] = field(default_factory=list)
    binary_lines: list[str] = field(default_factory=list)
    recounted: int = 0


def parse_patch(text: str) -> list[FilePatch]:
    """Split ``text`` into :class:`FilePatch` values, in order; see the module docstring.

    Raises :class:`PatchFormatError` when no file header can be found, when a hunk comes before
    any file header, when a section's headers contradict each other, when the text ends
    inside a hunk (a truncated patch) or is not UTF-8 (lone surrogates).
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        # lone surrogates (a JSON "\\udc80"): no bytes to give git, so no diff
        line = text.count("\n", 0, exc.start) + 1
        raise PatchFormatError(f"line {line}: the patch is not UTF-8 text ({exc.reason})") from None
    return _Reader(_lines(text), cut=bool(text) and not text.endswith("\n")).read()


def _lines(text: str) -> list[str]:
    """The lines of ``text`` as git and ``patch`` read them: only ``\\n`` ends one (``splitlines``
    also ends lines at ``\\r``, form feeds, ``\\x1c``-``\\x1e``, ``\\x85`` and U+2028/U+2029,
    which source lines may contain)."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


class _Reader:
    def __init__(self, lines: list[str], *, cut: bool = False) -> None:
        #: The text stops in the middle of a line: output cut off (a token limit), not a diff.
        self.cut = cut
        self.lines = [line if line.endswith("\n") else line + "\n" for line in lines]
        self.index = 0
        self.files: list[FilePatch] = []
        self.current: _Section | None = None

    # -- what starts a file ---------------------------------------------------------------
    def _at(self, offset: int = 0) -> str:
        position = self.index + offset
        return self.lines[position] if position < len(self.lines) else ""

    def _header_kind(self, offset: int = 0) -> str:
        """``git``, ``unified`` or ``context`` when a file header starts here, else ``""``."""
        line = self._at(offset)
        if line.startswith("diff --git "):
            return "git"
        if line.startswith("--- ") and self._at(offset + 1).startswith("+++ "):
            return "unified"
        if (
            line.startswith("*** ")
            and self._at(offset + 1).startswith("--- ")
            and self._at(offset + 2).rstrip("\r\n") == _CONTEXT_SEPARATOR
        ):
            return "context"
        return ""

    # -- the loop -------------------------------------------------------------------------
    def read(self) -> list[FilePatch]:
        while self.index < len(self.lines):
            line = self.lines[self.index]
            kind = self._header_kind()
            section = self.current
            if kind == "git":
                self._finish()
                self._start_git(line)
            elif kind == "unified":
                if section is not None and section.dialect == "git" and self._in_git_header(section):
                    self._file_lines(section)
                else:
                    self._finish()
                    self.current = _Section("unified", [], self.index + 1)
                    self._file_lines(self.current)
            elif kind == "context":
                self._finish()
                self._context_section()
            elif line.startswith("@@"):
                if section is None or section.dialect == "context":
                    raise PatchFormatError(
                        f"line {self.index + 1}: a hunk ('@@') that belongs to no file header"
                    )
                self._hunk(section)
            elif section is not None and self._in_git_header(section) and line.startswith(_EXTENDED):
                self._extended(section, line.rstrip("\r\n"))
                self.index += 1
            elif section is not None and self._in_git_header(section) and _is_binary_marker(line):
                self._binary(section)
            else:
                self.index += 1  # prose, blank lines, "Index:" lines: never passed on
        self._finish()
        if not self.files:
            raise PatchFormatError(
                "no file header ('diff --git', '---'/'+++' or '***'/'---') found in the patch"
            )
        return self.files

    def _in_git_header(self, section: _Section) -> bool:
        return (
            section.dialect == "git"
            and not section.hunks
            and not section.binary
            and not section.has_file_lines
        )

    # -- git sections ---------------------------------------------------------------------
    def _start_git(self, line: str) -> None:
        match = _GIT_HEADER.match(line.rstrip("\r\n"))
        if not match:
            raise PatchFormatError(f"line {self.index + 1}: unreadable 'diff --git' header: {line.strip()!r}")
        a, b = self._git_path(_unquote(match["a"])), self._git_path(_unquote(match["b"]))
        self.current = _Section("git", [line], self.index + 1, git_paths=(a, b), old_path=a, new_path=b)
        self.index += 1

    def _git_path(self, path: str) -> str:
        """A path of a ``diff --git`` section as git and ``patch -p1`` read it: the first component
        goes, whatever it is (``src/test/X`` without ``a/`` is ``test/X``), since the raw header
        lines are passed on and the path judged must be the one they write."""
        if "/" not in path:
            raise PatchFormatError(
                f"line {self.index + 1}: {path!r} has no leading directory (a/, b/) for git to drop"
            )
        return path.split("/", 1)[1]

    def _extended(self, section: _Section, line: str) -> None:
        section.header.append(line + "\n")
        for prefix, attribute in (("old mode ", "old_mode"), ("new mode ", "new_mode")):
            if line.startswith(prefix):
                setattr(section, attribute, git_mode(line[len(prefix) :]))
        index = _INDEX_MODE.match(line)
        if index:
            section.index_mode = git_mode(index[1])
        if line.startswith("new file mode "):
            section.status, section.new_mode = "added", git_mode(line[len("new file mode ") :])
        elif line.startswith("deleted file mode "):
            section.status, section.old_mode = "deleted", git_mode(line[len("deleted file mode ") :])
        elif line.startswith(("rename from ", "copy from ")):
            section.status = "renamed" if line.startswith("rename") else "copied"
            self._agree(section, "old", _unquote(line.split(" ", 2)[2]))
        elif line.startswith(("rename to ", "copy to ")):
            self._agree(section, "new", _unquote(line.split(" ", 2)[2]))

    def _agree(self, section: _Section, side: str, path: str) -> None:
        """A path named again inside a git section must be the one its ``diff --git`` line named."""
        assert section.git_paths is not None
        expected = section.git_paths[0 if side == "old" else 1]
        if path != expected:
            raise PatchFormatError(
                f"line {self.index + 1}: the section of {expected!r} names another file, {path!r}"
            )

    def _binary(self, section: _Section) -> None:
        line = self.lines[self.index]
        section.binary_lines.append(line)
        self.index += 1
        if line.startswith("Binary files "):
            section.binary = "no-data"
            return
        section.binary = "full"
        # base85 data lines and the blank lines between the forward and reverse blocks
        while self.index < len(self.lines) and not self._header_kind():
            data = self.lines[self.index]
            if not (data.strip() == "" or data.startswith(("literal ", "delta ")) or _is_base85(data)):
                break
            section.binary_lines.append(data)
            self.index += 1

    # -- ---/+++ lines ----------------------------------------------------------------------
    def _file_lines(self, section: _Section) -> None:
        old_line, new_line = self.lines[self.index], self.lines[self.index + 1]
        old, old_null = _header_path(old_line[4:])
        new, new_null = _header_path(new_line[4:])
        if section.dialect == "git":
            if not old_null:
                self._agree(section, "old", self._git_path(_header_value(old_line[4:])))
            if not new_null:
                self._agree(section, "new", self._git_path(_header_value(new_line[4:])))
            contradiction = (old_null and new_null) or (
                section.status not in ("modified", "added") if old_null else
                section.status not in ("modified", "deleted") if new_null else False
            )  # fmt: skip
            if contradiction:
                raise PatchFormatError(f"line {self.index + 1}: '/dev/null' contradicts the section's header")
            section.status = "added" if old_null else "deleted" if new_null else section.status
        else:
            if not (old_null or new_null) and old != new:
                old, new = _common_tail(old, new)
            section.old_path, section.new_path = old, new
            section.old_null, section.new_null = old_null, new_null
            if old_null and new_null:
                raise PatchFormatError(f"line {self.index + 1}: both sides of a file header are /dev/null")
            section.status = "added" if old_null else "deleted" if new_null else "modified"
        section.header += [old_line, new_line]
        section.has_file_lines = True
        self.index += 2

    # -- hunks ------------------------------------------------------------------------------
    def _hunk(self, section: _Section) -> None:
        line = self.lines[self.index]
        match = _HUNK.match(line.rstrip("\r\n"))
        if not match:
            raise PatchFormatError(f"line {self.index + 1}: unreadable hunk header {line.strip()!r}")
        if not section.has_file_lines:
            raise PatchFormatError(f"line {self.index + 1}: a hunk before the file's '---'/'+++' lines")
        old_start, old_len = int(match[1]), int(match[2] if match[2] is not None else 1)
        new_start, new_len = int(match[3]), int(match[4] if match[4] is not None else 1)
        start = self.index + 1
        self.index += 1
        body: list[str] = []
        old_left, new_left = old_len, new_len
        while self.index < len(self.lines):
            current = self.lines[self.index]
            satisfied = old_left <= 0 and new_left <= 0
            if current.startswith("\\"):
                body.append(current)
            elif satisfied and (self._header_kind() or not current.startswith((" ", "-", "+"))):
                break  # a new file, a new hunk or prose: the counts said the hunk is over
            elif not satisfied and (self._header_kind() == "git" or current.startswith("@@")):
                break  # a hunk shorter than its counts: recounted below
            elif current[:1] in (" ", "-", "+"):
                body.append(current)
                old_left -= current[:1] in " -"
                new_left -= current[:1] in " +"
            elif (current in ("\n", "\r\n") or current.startswith("\t")) and not satisfied:
                # models drop the space of a context line that is empty or starts with a tab;
                # GNU patch reads both as context lines ("assume the space got eaten")
                body.append(" " + current)
                old_left -= 1
                new_left -= 1
            else:
                self._refuse_interrupted(start, old_left, new_left)
                break
            self.index += 1
        if old_left > 0 or new_left > 0:
            if self.index >= len(self.lines) and self.cut:
                raise PatchFormatError(
                    f"line {start}: the patch ends inside a hunk (truncated): the header announces "
                    f"-{old_len} +{new_len} lines"
                )
            section.recounted += 1
        elif old_left < 0 or new_left < 0:
            section.recounted += 1
        if not body:
            raise PatchFormatError(f"line {start}: an empty hunk")
        section.hunks.append(Hunk(old_start, new_start, match[5], tuple(body)))

    def _refuse_interrupted(self, start: int, old_left: int, new_left: int) -> None:
        """A hunk cut short by a line that is no hunk line (a remark) must not lose what follows:
        when that line, read as context, and the hunk lines after it make up exactly the lines its
        header announces, with a change among them, the hunk goes on past it, and the patch is
        corrupt (git: "corrupt patch", GNU patch: "malformed patch"). Recounted instead, the hunk
        would apply without its later changes, which the parser would pass over as prose. A hunk
        that merely announces too many lines (models miscount) still ends here."""
        old, new = old_left - 1, new_left - 1
        changes = False
        offset = 1
        while old > 0 or new > 0:
            line = self._at(offset)
            if not line.startswith((" ", "-", "+")) or self._header_kind(offset):
                return
            old -= line[0] in " -"
            new -= line[0] in " +"
            changes = changes or line[0] != " "
            offset += 1
        if old == new == 0 and changes:
            bad = self.lines[self.index].rstrip("\r\n")
            raise PatchFormatError(
                f"line {self.index + 1}: {bad[:60]!r} inside the hunk of line {start}, which goes on "
                "after it: a hunk line starts with ' ', '+', '-' or '\\' (git: corrupt patch)"
            )

    # -- context diffs ------------------------------------------------------------------------
    def _context_section(self) -> None:
        old, old_null = _header_path(self.lines[self.index][4:])
        new, new_null = _header_path(self.lines[self.index + 1][4:])
        section = _Section("context", [], self.index + 1, old_path=old, new_path=new)
        section.old_null, section.new_null = old_null, new_null
        section.status = "added" if old_null else "deleted" if new_null else "modified"
        section.has_file_lines = True
        self.current = section
        self.index += 3
        # The body is skipped up to the next header: context hunks are never applied.
        while self.index < len(self.lines) and not self._header_kind():
            self.index += 1

    # -- closing a piece ------------------------------------------------------------------------
    def _finish(self) -> None:
        section, self.current = self.current, None
        if section is None:
            return
        old_path, new_path = section.old_path, section.new_path
        if section.status == "added" or section.old_null:
            old_path = None
        if section.status == "deleted" or section.new_null:
            new_path = None
        if not (old_path or new_path):
            raise PatchFormatError(
                f"line {section.start_line}: cannot tell which file this diff section changes"
            )
        if section.dialect != "git" and not section.hunks and section.dialect != "context":
            raise PatchFormatError(f"line {section.start_line}: a file header without hunks")
        piece = FilePatch(
            old_path,
            new_path,
            section.status,
            section.binary,
            "",
            dialect=section.dialect,
            old_mode=section.old_mode,
            new_mode=section.new_mode,
            index_mode=section.index_mode,
            hunks=tuple(h for h in section.hunks if h.changes_lines),
            recounted=section.recounted,
            unchanged_hunks=sum(not h.changes_lines for h in section.hunks),
        )
        text = _render_section(section) if section.dialect != "context" else ""
        self.files.append(_with_text(piece, text))


def _with_text(piece: FilePatch, text: str) -> FilePatch:
    return FilePatch(
        piece.old_path,
        piece.new_path,
        piece.status,
        piece.binary,
        text,
        dialect=piece.dialect,
        old_mode=piece.old_mode,
        new_mode=piece.new_mode,
        index_mode=piece.index_mode,
        hunks=piece.hunks,
        recounted=piece.recounted,
        unchanged_hunks=piece.unchanged_hunks,
    )


def _render_section(section: _Section) -> str:
    out = list(section.header)
    if section.dialect == "unified":
        # plain pieces get git's a/ and b/ prefixes, so `-p1` means the same to git and to patch
        old = "/dev/null" if section.old_null else _quote("a/" + (section.old_path or ""))
        new = "/dev/null" if section.new_null else _quote("b/" + (section.new_path or ""))
        out = [f"--- {old}\n", f"+++ {new}\n"]
    out += section.binary_lines
    out += [hunk.render() for hunk in section.hunks if hunk.changes_lines]
    return "".join(out)


def render(files: Iterable[FilePatch]) -> str:
    """The pieces as one patch text for ``git apply`` or ``patch`` (context pieces have none)."""
    return "".join(f.text for f in files)


join_patch = render


def git_mode(value: str) -> str:
    """A mode line's value as git reads it: ``strtoul`` in octal (leading white space, ``+``,
    leading zeros and anything after a space are accepted), then the file type, so ``120644``,
    ``0120000`` and ``120000 x`` are all the symbolic link ``120000`` (``canon_mode``).

    A value git would not read as a regular file, a link or a gitlink comes back as it was, for
    the caller to refuse.
    """
    match = _MODE.match(value.lstrip(" \t\n\v\f\r"))
    if not match:
        return value.strip()
    number = int(match[1], 8)
    kind = number & 0o170000
    if kind == 0o100000:
        return "100755" if number & 0o100 else "100644"
    if kind in (0o120000, 0o160000):
        return f"{kind:o}"
    return value.strip()


def _is_binary_marker(line: str) -> bool:
    stripped = line.rstrip("\r\n")
    if stripped == "GIT binary patch":
        return True
    return stripped.startswith("Binary files ") and stripped.endswith(" differ")


_BASE85 = re.compile(r"^[A-Za-z][0-9A-Za-z!#$%&()*+;<=>?@^_`{|}~-]+$")


def _is_base85(line: str) -> bool:
    return bool(_BASE85.match(line.rstrip("\r\n")))


def _header_path(value: str) -> tuple[str, bool]:
    """``(path without a/ or b/, is /dev/null)`` of a ``---``/``+++``/``***`` header's value."""
    path = _header_value(value)
    if path == "/dev/null":
        return "", True
    return _strip_prefix(path), False


def _header_value(value: str) -> str:
    """The path a ``---``/``+++``/``***`` header's value names, unquoted, prefix and all."""
    value = value.rstrip("\r\n")
    if not value.startswith('"'):
        value = _SPACED_TIMESTAMP.sub("", value.split("\t", 1)[0]).rstrip()
    return value if value == "/dev/null" else _unquote(value)


def _common_tail(old: str, new: str) -> tuple[str, str]:
    """``diff -ruN old/ new/`` names one file with two different first components: drop them."""
    old_parts, new_parts = old.split("/", 1), new.split("/", 1)
    if len(old_parts) == len(new_parts) == 2 and old_parts[1] == new_parts[1]:
        return old_parts[1], new_parts[1]
    return old, new


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


def _quote(path: str) -> str:
    """git's quoting for a path with white space, quotes, backslashes or non-ASCII bytes."""
    if re.fullmatch(r"[\x21-\x7e]+", path) and '"' not in path and "\\" not in path:
        return path
    escaped = "".join(
        {"\\": "\\\\", '"': '\\"', "\t": "\\t", "\n": "\\n"}.get(ch, ch)
        if ch.isascii() and (ch.isprintable() or ch in "\t\n")
        else "".join(f"\\{byte:03o}" for byte in ch.encode("utf-8"))
        for ch in path
    )
    return f'"{escaped}"'
