"""The report's plots, drawn with matplotlib and inlined as SVG text.

Figures are made with the object API (``Figure``, never ``pyplot``): no global state, no GUI
backend, safe in any process. SVG text is kept as ``<text>`` (not glyph paths) to stay small,
hashes are salted so two equal runs give equal files, and every ``id`` is prefixed per figure so
several SVGs can live in one page without their clip paths colliding.
"""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any

import matplotlib
from matplotlib.figure import Figure

from pytest_tebench.report.html_model import ModelRow
from pytest_tebench.report.html_model import get_path
from pytest_tebench.report.html_model import headline

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

#: Most (model, model) pairs drawn as scatter plots; the rest would only repeat the picture.
MAX_SCATTER_PAIRS = 3
#: Bins of a score histogram (scores are fractions in [0, 1]).
BINS = 20
_RC: dict[RcKeyType, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "pytest-tebench",
    "font.size": 9,
    "font.family": "sans-serif",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
}
_ID = re.compile(r'(id="|url\(#|href="#)')


class Plots:
    """Numbers the SVGs it makes, so their ids are unique in the page."""

    def __init__(self) -> None:
        self.count = 0

    def svg(self, figure: Figure) -> str:
        self.count += 1
        buffer = io.StringIO()
        with matplotlib.rc_context(_RC):
            figure.savefig(buffer, format="svg", metadata={"Date": None})
        text = buffer.getvalue()
        text = text[text.index("<svg") :]  # drop the XML declaration and doctype: it is inlined
        return _ID.sub(lambda m: f"{m.group(1)}p{self.count}-", text)


def _figure(width: float, height: float) -> Figure:
    with matplotlib.rc_context(_RC):
        return Figure(figsize=(width, height), layout="constrained")


def distributions(
    plots: Plots, models: Sequence[str], paths: Sequence[str], values: Mapping[str, Mapping[str, list[float]]]
) -> str | None:
    """Per score path, one panel: each model's histogram of per-item scores. ``values[path][model]``."""
    paths = [p for p in paths if any(values.get(p, {}).get(m) for m in models)]
    if not paths:
        return None
    columns = min(4, len(paths))
    rows = (len(paths) + columns - 1) // columns
    figure = _figure(2.4 * columns, 0.6 + 1.9 * rows)
    bins = [i / BINS for i in range(BINS + 1)]
    with matplotlib.rc_context(_RC):
        axes = figure.subplots(rows, columns, squeeze=False, sharey=False)
        for ax, path in itertools.zip_longest(axes.flat, paths):
            if path is None:
                ax.set_visible(False)
                continue
            for index, model in enumerate(models):
                data = values[path].get(model) or []
                # a step line per model: bars of several models would hide each other
                ax.hist(data, bins=bins, histtype="step", linewidth=1.4, color=f"C{index % 10}",
                        label=_short(model) if path == paths[0] else None)  # fmt: skip
            ax.set_xlim(0, 1)
            ax.set_title(path, loc="left", fontsize=8)
            ax.tick_params(labelsize=7)
        figure.supylabel("items", fontsize=8)
        figure.legend(fontsize=7, ncols=min(len(models), 4), loc="outside lower center")
    return plots.svg(figure)


def group_bars(plots: Plots, rows: Sequence[ModelRow], groups: Sequence[str]) -> str | None:
    """Per ``by_*`` group (per label, per project...), a panel of each member's headline score by model."""
    panels: list[tuple[str, list[str]]] = []
    for group in groups:
        names: dict[str, None] = {}
        for row in rows:
            found = get_path(row.summary, group)
            if isinstance(found, Mapping):
                names.update(dict.fromkeys(str(k) for k in found))
        if names:
            panels.append((group, list(names)))
    if not panels:
        return None
    columns = min(2, len(panels))
    height = 2.4 if max(len(m) for _, m in panels) <= 6 else 3.0
    figure = _figure(9, 0.5 + height * ((len(panels) + columns - 1) // columns))
    width = 0.8 / max(len(rows), 1)
    with matplotlib.rc_context(_RC):
        axes = figure.subplots((len(panels) + columns - 1) // columns, columns, squeeze=False)
        for ax, panel in itertools.zip_longest(axes.flat, panels):
            if panel is None:
                ax.set_visible(False)
                continue
            group, members = panel
            for index, row in enumerate(rows):
                found = get_path(row.summary, group) or {}
                heights = [_headline(found.get(m)) for m in members]
                xs = [i + (index - (len(rows) - 1) / 2) * width for i in range(len(members))]
                ax.bar(xs, [h if h is not None else 0.0 for h in heights], width, color=f"C{index % 10}",
                       label=_short(row.key) if panel == panels[0] else None)  # fmt: skip
            rotate = len(members) > 6
            ax.set_xticks(
                range(len(members)), members, rotation=30 if rotate else 0, ha="right" if rotate else "center"
            )
            ax.set_ylim(0, 1.05)
            ax.set_title(group, loc="left", fontsize=8)
        figure.legend(fontsize=7, ncols=min(len(rows), 4), loc="outside lower center")
    return plots.svg(figure)


def _headline(group: Any) -> float | None:
    return headline(group) if isinstance(group, Mapping) else None


def scatters(
    plots: Plots, models: Sequence[str], path: str, per_instance: Mapping[str, Mapping[str, float]]
) -> str | None:
    """Model against model, one point per instance both scored (``per_instance[model][instance]``)."""
    pairs = [
        (a, b)
        for a, b in itertools.combinations(models, 2)
        if set(per_instance.get(a, {})) & set(per_instance.get(b, {}))
    ][:MAX_SCATTER_PAIRS]
    if not pairs:
        return None
    columns = min(3, len(pairs))
    rows = (len(pairs) + columns - 1) // columns
    figure = _figure(3 * columns, 3 * rows)
    with matplotlib.rc_context(_RC):
        axes = figure.subplots(rows, columns, squeeze=False)
        for ax, pair in itertools.zip_longest(axes.flat, pairs):
            if pair is None:
                ax.set_visible(False)
                continue
            a, b = pair
            shared = sorted(set(per_instance[a]) & set(per_instance[b]))
            # equal scores pile up on one point (F1 is often exactly 0 or 1): a little spread shows how many
            spread = [0.02 * (((i * 7919) % 101) / 100 - 0.5) for i in range(len(shared))]
            xs = [per_instance[a][i] + d for i, d in zip(shared, spread, strict=True)]
            ys = [per_instance[b][i] + d for i, d in zip(shared, reversed(spread), strict=True)]
            ax.plot([0, 1], [0, 1], color="0.7", linewidth=0.8)
            ax.scatter(xs, ys, s=10, alpha=0.6, linewidths=0)
            ax.set_xlim(-0.05, 1.05)
            ax.set_ylim(-0.05, 1.05)
            ax.set_aspect("equal")
            ax.set_xlabel(_short(a))
            ax.set_ylabel(_short(b))
            ax.set_title(f"{path} ({len(shared)} instances)", fontsize=8)
    return plots.svg(figure)


def timings(plots: Plots, models: Sequence[str], totals: Mapping[str, Mapping[str, float]]) -> str | None:
    """Where the time went: per model, seconds per phase stacked (``totals[model][phase]``)."""
    phases: dict[str, None] = {}
    for model in models:
        phases.update(dict.fromkeys(totals.get(model, {})))
    if not phases:
        return None
    figure = _figure(9, 1.4 + 0.4 * len(models))
    with matplotlib.rc_context(_RC):
        ax = figure.subplots()
        left = [0.0] * len(models)
        for phase in phases:
            widths = [totals.get(m, {}).get(phase, 0.0) for m in models]
            ax.barh(range(len(models)), widths, left=left, label=phase)
            left = [x + w for x, w in zip(left, widths, strict=True)]
        ax.set_yticks(range(len(models)), [_short(m) for m in models])
        ax.invert_yaxis()
        ax.set_xlabel("seconds, summed over items (parallel workers overlap in wall time)")
        figure.legend(fontsize=7, ncols=min(len(phases), 5), loc="outside lower center")
    return plots.svg(figure)


def _short(name: str, limit: int = 28) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "\u2026"
