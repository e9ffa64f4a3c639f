"""JSON and JSON Lines as the user's files hold them (predictions, datasets): text, lines, values.

Shared by the predictions and dataset readers, so a line means the same to both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pytest_tebench.errors import InputError

# Only these end a line. ``str.splitlines`` also splits at U+2028, U+2029 and U+0085, which
# ``json.dumps(..., ensure_ascii=False)`` (our own writers too) leaves raw inside a string: a
# patch holding one would become two malformed lines.
_LINE_END = re.compile(r"\r\n|\r|\n")


def jsonl_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of every line that is not blank, numbered from 1."""
    for lineno, line in enumerate(_LINE_END.split(text), start=1):
        if line.strip():
            yield lineno, line


def decode_json(text: str) -> Any:
    """``json.loads``, with a value nested too deeply for it raised as malformed JSON too."""
    try:
        return json.loads(text)
    except RecursionError:
        # json recurses once per level: a line of a few thousand '[' would otherwise be a
        # traceback that loses the whole file, not one bad entry
        raise json.JSONDecodeError("nested too deeply", text, 0) from None


def invalid_unicode(value: Any) -> str | None:
    """Why a decoded entry cannot be used, None when it can: JSON's ``\\ud800`` escape decodes
    to a lone surrogate, which no file, report or environment variable (pytest's
    ``PYTEST_CURRENT_TEST``) can hold, so the entry's item would crash far from its line."""
    for key, item in value.items() if isinstance(value, dict) else [(None, value)]:
        try:
            json.dumps([key, item], ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            where = "the entry" if key is None else f"field {key!r}"
            return f"{where} is not valid Unicode (a lone surrogate escape like \\ud800)"
    return None


def read_text(path: Path, what: str) -> str:
    """The text of a UTF-8 file; a byte order mark (Windows editors write one) is not part of it.

    Raises :class:`InputError` naming the file, and for a byte that is not UTF-8 its line: a
    byte offset alone leaves the user counting bytes in a file of patches."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc}", source=str(path)) from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"cannot read {what}: not UTF-8 ({exc.reason} 0x{data[exc.start]:02x})",
            source=str(path),
            line=line,
        ) from exc
