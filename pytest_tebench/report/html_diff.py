"""Patches as syntax-coloured HTML, with pygments.

A diff is split per file with the project's diff parser; each file's lines (their ``+``/``-``/
`` `` prefix removed) are lexed together by the lexer of the file's name, so a multi-line comment
or text block is coloured as such, then cut back into lines that keep their diff marker. The
output is compact (pygments' short token classes, adjacent tokens of a class merged) because a
report holds up to thousands of patches; colours come from :func:`stylesheet`.
"""

from __future__ import annotations

from html import escape

from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import DiffLexer
from pygments.lexers import TextLexer
from pygments.lexers import get_lexer_for_filename
from pygments.token import STANDARD_TYPES
from pygments.token import Token
from pygments.token import _TokenType
from pygments.util import ClassNotFound

from pytest_tebench.workspace.patches import PatchFormatError
from pytest_tebench.workspace.patches import parse_patch

#: The CSS scope of coloured code in the page.
SCOPE = ".hl"
#: Longer patches are shown uncoloured: lexing is the slow part of writing a report.
MAX_COLOURED = 200_000
_LINE_CLASS = {"+": "a", "-": "d", " ": "c"}
_META_PREFIXES = ("diff --git", "index ", "--- ", "+++ ", "new file", "deleted file", "similarity", "rename ")


def stylesheet(style: str = "default") -> str:
    """pygments' CSS for the token classes :func:`highlight_patch` emits."""
    return str(HtmlFormatter(style=style).get_style_defs(SCOPE))


def highlight_patch(patch: str) -> str:
    """HTML for ``patch``: one ``<div class="f">`` per file, each line a ``<span class="l X">``.

    ``X`` is ``a`` (added), ``d`` (deleted), ``c`` (context), ``h`` (hunk header) or ``m``
    (file header). Text that is no diff at all is shown as it is, escaped.
    """
    if not patch.strip():
        return ""
    if len(patch) > MAX_COLOURED:
        lines = "".join(
            f'<span class="l c">{escape(line, quote=False)}</span>' for line in patch.splitlines()
        )
        note = f"patch of {len(patch):,} characters: shown without colours"
        return f'<div class="f"><span class="l m">{note}</span>{lines}</div>'
    try:
        files = parse_patch(patch)
    except PatchFormatError:
        return f'<div class="f">{_lex_lines(patch.splitlines(), DiffLexer(), "c")}</div>'
    return "".join(f'<div class="f">{_file(piece.path, piece.text)}</div>' for piece in files)


def _file(path: str, text: str) -> str:
    try:
        lexer: Lexer = get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        lexer = TextLexer(stripnl=False, ensurenl=False)
    out: list[str] = []
    body: list[tuple[str, str]] = []  # (line class, code without the marker)

    def flush() -> None:
        if body:
            out.append(_code_lines(body, lexer))
            body.clear()

    in_hunk = False  # inside a hunk, "--- x" is a deleted line "-- x", not a file header
    for line in text.splitlines():
        marker = line[:1]
        if line.startswith("@@"):
            flush()
            in_hunk = True
            out.append(f'<span class="l h">{escape(line)}</span>')
        elif marker in _LINE_CLASS and (in_hunk or not line.startswith(_META_PREFIXES)):
            body.append((_LINE_CLASS[marker], line[1:]))
        else:  # file headers, "\ No newline at end of file", binary markers
            flush()
            out.append(f'<span class="l m">{escape(line)}</span>')
    flush()
    return "".join(out)


def _code_lines(body: list[tuple[str, str]], lexer: Lexer) -> str:
    """Lex the code of consecutive diff lines as one text, then put each line back in its marker."""
    lines = _lex("\n".join(code for _, code in body) + "\n", lexer)
    markers = {"a": "+", "d": "-", "c": " "}
    return "".join(
        f'<span class="l {kind}">{markers[kind]}{line}</span>'
        for (kind, _), line in zip(body, lines, strict=False)
    )


def _lex_lines(lines: list[str], lexer: Lexer, kind: str) -> str:
    coloured = _lex("\n".join(lines) + "\n", lexer)
    return "".join(f'<span class="l {kind}">{line}</span>' for line in coloured[: len(lines)])


def _lex(text: str, lexer: Lexer) -> list[str]:
    """HTML per line of ``text``: one ``<span>`` per run of a token class, none for plain text."""
    lines: list[str] = []
    out: list[str] = []  # pieces of the current line
    current, buffer = "", ""  # the class being collected and its text

    def close() -> None:
        if buffer:
            out.append(
                f'<span class="{current}">{escape(buffer, quote=False)}</span>'
                if current
                else escape(buffer, quote=False)
            )

    for token, value in lexer.get_tokens(text):
        css = _css_class(token)
        for index, part in enumerate(value.split("\n")):
            if index:
                close()
                lines.append("".join(out))
                out, buffer = [], ""
            if not part:
                continue
            if css != current:
                close()
                current, buffer = css, part
            else:
                buffer += part
    close()
    if out:
        lines.append("".join(out))
    return lines


_CLASS_CACHE: dict[_TokenType, str] = {}


def _css_class(token: _TokenType) -> str:
    cached = _CLASS_CACHE.get(token)
    if cached is None:
        if token in (Token.Text, Token.Text.Whitespace):
            cached = ""
        else:
            found = token
            while found not in STANDARD_TYPES and found.parent is not None:
                found = found.parent
            cached = STANDARD_TYPES.get(found, "")
        _CLASS_CACHE[token] = cached
    return cached
