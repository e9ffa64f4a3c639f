"""One self-contained HTML file from one or more JSON reports: leaderboard, plots, per-item drill-down.

    html = render_html([Run("gold", report), Run("run-2", other)])
    write_html([...], "report.html")

The page needs nothing but a browser: styles, scripts and plots (matplotlib SVG) are inline, the
item data (records and their pygments-coloured patches) is one gzip+base64 JSON block the page
unpacks with the browser's own ``DecompressionStream``, which keeps 1,000 items with patches to a
few megabytes. Needs the ``html`` extra (matplotlib, pygments, jinja2): :func:`missing_dependencies`
says which are absent, so callers can fail with a clear message before a long run.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Mapping
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from pytest_tebench import __version__
from pytest_tebench.errors import InputError
from pytest_tebench.metrics.outcomes import SCORED_STATUSES
from pytest_tebench.report import html_model
from pytest_tebench.report.html_model import PATCH_FIELDS
from pytest_tebench.report.html_model import Run
from pytest_tebench.report.json_report import read_report

#: Modules the HTML report needs, and the distribution that provides each.
REQUIREMENTS = {"matplotlib": "matplotlib", "pygments": "pygments", "jinja2": "jinja2"}
INSTALL_HINT = "pip install 'pytest-tebench[html]'"
_ASSETS = "html_assets"


def missing_dependencies() -> list[str]:
    """Distributions the HTML report needs that are not installed."""
    return [dist for module, dist in REQUIREMENTS.items() if importlib.util.find_spec(module) is None]


def require_dependencies(what: str) -> None:
    """Raise :class:`InputError` naming what to install when the ``html`` extra is missing."""
    missing = missing_dependencies()
    if missing:
        raise InputError(f"{what} needs {', '.join(missing)}, which is not installed: {INSTALL_HINT}")


def load_runs(paths: Sequence[str | os.PathLike[str]]) -> list[Run]:
    """Read JSON reports (schema checked) as runs named after their files."""
    runs: list[Run] = []
    for path in paths:
        try:
            report = read_report(path)
        except (OSError, ValueError) as exc:  # JSONDecodeError is a ValueError
            raise InputError(f"cannot read the report: {exc}", source=str(path)) from exc
        runs.append(Run(html_model.run_name(path, (run.name for run in runs)), report))
    return runs


def render_html(runs: Sequence[Run], *, title: str | None = None) -> str:
    """The whole page for ``runs`` (models of several runs side by side)."""
    import jinja2

    from pytest_tebench.report import html_diff

    if not runs:
        raise ValueError("no report to render")
    rows = html_model.model_rows(runs)
    records = html_model.records(runs, rows)
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("pytest_tebench.report", _ASSETS),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["percent"] = _percent
    template = environment.get_template("report.html.j2")
    return template.render(
        title=title or "pytest-tebench report: " + ", ".join(run.name for run in runs),
        version=__version__,
        runs=[_run_info(run) for run in runs],
        boards=html_model.leaderboards(rows),
        items_in_group=html_model.items_in_group,
        items_of=html_model.items_of,
        get_path=html_model.get_path,
        plots=_plots(rows, records),
        css=_asset("report.css") + "\n" + html_diff.stylesheet(),
        js=_asset("report.js"),
        data=_item_data(records),
        item_count=len(records),
    )


def write_html(runs: Sequence[Run], path: str | os.PathLike[str], *, title: str | None = None) -> Path:
    """Render and write atomically (a reader sees the old page or the new one); returns the path."""
    text = render_html(runs, title=title)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return target.resolve()


def _asset(name: str) -> str:
    return (resources.files("pytest_tebench.report") / _ASSETS / name).read_text(encoding="utf-8")


def _percent(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-"
    return f"{round(float(value), 6) * 100:.1f}"


def _run_info(run: Run) -> dict[str, Any]:
    report = run.report
    return {
        "name": run.name,
        "benchmark": run.benchmark,
        "dataset": report.get("dataset"),
        "predictions": report.get("predictions"),
        "update_scoring": report.get("update_scoring"),
        "harness_version": report.get("harness_version"),
        "item_count": len(report.get("results") or []),
        "model_count": len(report.get("summary") or {}),
    }


def _plots(
    rows: Sequence[html_model.ModelRow], records: Sequence[tuple[str, Mapping[str, Any]]]
) -> list[dict[str, str]]:
    """Every plot the data allows, as ``{"title", "svg", "note"}``, most telling first."""
    from pytest_tebench.report import html_plots

    plots = html_plots.Plots()
    models = [row.key for row in rows]
    scored = [(m, r) for m, r in records if r.get("status") in SCORED_STATUSES]
    paths = html_model.score_paths(r for _, r in scored)
    values: dict[str, dict[str, list[float]]] = {}
    per_instance: dict[str, dict[str, dict[str, float]]] = {}
    totals: dict[str, dict[str, float]] = {}
    steps: dict[str, dict[str, float]] = {}
    for model, record in scored:
        for path, value in html_model.item_scores(record).items():
            values.setdefault(path, {}).setdefault(model, []).append(value)
            per_instance.setdefault(path, {}).setdefault(model, {})[str(record.get("instance_id"))] = value
    for model, record in records:
        for table, nested in ((totals, False), (steps, True)):
            for phase, seconds in html_model.item_timings(record, nested=nested).items():
                sums = table.setdefault(model, {})
                sums[phase] = sums.get(phase, 0.0) + seconds
    out: list[dict[str, str]] = []

    def add(title: str, svg: str | None, note: str = "") -> None:
        if svg is not None:
            out.append({"title": title, "svg": svg, "note": note})

    add(
        "Score distributions per model",
        html_plots.distributions(plots, models, paths, values),
        "Scored items only (evaluated, empty, not applied); harness errors are never scores.",
    )
    for board in html_model.leaderboards(rows):
        add(
            f"{board.benchmark}: per label and per project",
            html_plots.group_bars(plots, board.rows, _by_groups(board.rows)),
            "Each group's headline score (F1, OA...); a missing bar is a group without items.",
        )
    for path in paths[:2]:
        add(
            f"Model against model per instance: {path}",
            html_plots.scatters(plots, models, path, per_instance.get(path, {})),
            "Points near the diagonal: both models scored the instance alike.",
        )
    add(
        "Where the time went",
        html_plots.timings(plots, models, totals),
        "Phases of every item, summed (a gold build is cached: it costs once per instance).",
    )
    add(
        "Inside the builds",
        html_plots.timings(plots, models, steps),
        "Steps of the builds (parts of the phases above), summed over items.",
    )
    return out


def _by_groups(rows: Sequence[html_model.ModelRow]) -> list[str]:
    """Summary paths of ``by_*`` mappings (per label, per project...), in first-seen order."""
    found: dict[str, None] = {}
    for row in rows:
        for path, _ in html_model.leaves(row.summary):
            parts = path.split(".")
            for index, part in enumerate(parts[:-2]):
                if part.startswith("by_"):
                    found.setdefault(".".join(parts[: index + 1]))
    return list(found)


def _item_data(records: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """The items and their details as gzip+base64 JSON; each distinct patch is coloured once."""
    from pytest_tebench.report import html_diff

    patches: dict[str, str] = {}
    items: list[dict[str, Any]] = []

    def patch_id(text: Any) -> str | None:
        if not isinstance(text, str) or not text.strip():
            return None
        digest = hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        if digest not in patches:
            patches[digest] = html_diff.highlight_patch(text)
        return digest

    for model, record in records:
        items.append(
            {
                "model": model,
                "record": {k: v for k, v in record.items() if k not in PATCH_FIELDS},
                "scores": html_model.item_scores(record),
                "timings": html_model.item_timings(record),
                "sets": html_model.identification_sets(record),
                "patches": {name: patch_id(record.get(name)) for name in PATCH_FIELDS},
            }
        )
    payload = json.dumps({"items": items, "patches": patches}, ensure_ascii=False, separators=(",", ":"))
    # mtime=0: equal reports give byte-equal pages
    packed = gzip.compress(payload.encode("utf-8"), compresslevel=9, mtime=0)
    return base64.b64encode(packed).decode("ascii")
