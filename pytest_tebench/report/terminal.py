"""Building blocks of terminal summaries, shared by every benchmark's tables.

Pure functions to lines of text; the pytest side decides where to print them. Scores are shown
as percentages with one decimal ("47.1"), and a value that was not measured shows "-" rather
than a misleading "0.0". Only ASCII, so tables survive any console encoding and CI log viewer.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

#: Placeholder for a value that does not exist (no items in the group).
MISSING = "-"
INDENT = "  "
#: How many instance ids a summary line names before abbreviating.
MAX_IDS_SHOWN = 10


def percent(value: float | None) -> str:
    """``0.4712 -> "47.1"``; ``None -> "-"``."""
    if value is None:
        return MISSING
    # Round to 6 decimals first, as the JSON report does, so the table and the report agree on
    # half-way cases instead of depending on binary representation noise.
    return f"{round(float(value), 6) * 100:.1f}"


def count(value: int | None) -> str:
    return MISSING if value is None else str(value)


def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    return f"{n} {singular if n == 1 else (plural_form or singular + 's')}"


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A fixed-width table: first column left-aligned, the others right-aligned."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    # Numeric columns get a minimum width so tables of different models line up.
    widths = [widths[0]] + [max(width, 5) for width in widths[1:]]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True)]
        return (INDENT + "   ".join([first, *rest])).rstrip()

    rule = INDENT + "   ".join("-" * width for width in widths)
    return [line(header), rule, *(line(row) for row in rows)]


def format_counts_line(summary: Mapping[str, Any]) -> str:
    """One line of item counts, e.g. ``"12 items: 10 evaluated, 1 empty, 1 not applied, 0 errors"``.

    Missing predictions, refused and tampered predictions, timeouts, invalid instances and
    unsupported environments are only mentioned when there are some.
    """
    counts = summary.get("counts", summary)
    parts = [
        f"{counts.get('evaluated', 0)} evaluated",
        f"{counts.get('empty', 0)} empty",
        f"{counts.get('not_applied', 0)} not applied",
    ]
    if counts.get("missing_predictions"):
        parts.append(f"{counts['missing_predictions']} without a prediction")
    for key in ("refused", "tampered"):
        if counts.get(key):
            parts.append(f"{counts[key]} {key}")
    parts.append(plural(int(counts.get("errors", 0)), "error"))
    for key, word in (
        ("timeouts", "timeout"),
        ("invalid_instances", "invalid instance"),
        ("unsupported", "unsupported environment"),
    ):
        if counts.get(key):
            parts.append(plural(int(counts[key]), word))
    return f"{plural(int(counts.get('items', 0)), 'item')}: " + ", ".join(parts)


def format_ids(what: str, ids: Sequence[str]) -> list[str]:
    """``"  what: a, b, c ... and 4 more"``, or nothing when ``ids`` is empty."""
    if not ids:
        return []
    # The JSON report has the full list; the terminal only needs enough to start digging.
    shown = ", ".join(ids[:MAX_IDS_SHOWN])
    more = f" ... and {len(ids) - MAX_IDS_SHOWN} more" if len(ids) > MAX_IDS_SHOWN else ""
    return [f"{INDENT}{what}: {shown}{more}"]
