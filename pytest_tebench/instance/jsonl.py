"""JSON and JSON Lines as the user's files hold them (predictions, datasets): lines, values.

Shared by the predictions and dataset readers, so a line means the same to both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

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
