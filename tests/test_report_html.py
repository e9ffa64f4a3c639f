"""The HTML report on recorded JSON reports of real demo runs (tests/fixtures/reports/, see its README).

What the page shows is checked value by value against the reports; the browser side (scripts,
layout) is tested in test_report_html_browser.py.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench import cli
from pytest_tebench.report import html as html_report
from pytest_tebench.report.html import load_runs
from pytest_tebench.report.html import render_html
from pytest_tebench.report.html_diff import highlight_patch
from pytest_tebench.report.html_model import Run
from pytest_tebench.report.html_model import identification_sets
from pytest_tebench.report.html_model import item_scores
from pytest_tebench.report.html_model import item_timings
from pytest_tebench.report.html_model import leaderboards
from pytest_tebench.report.html_model import model_rows
from pytest_tebench.report.html_model import run_name
from pytest_tebench.report.json_report import build_report

REPORTS = Path(__file__).parent / "fixtures" / "reports"
GOLD = REPORTS / "gold.json"
MODELS = REPORTS / "models.json"


def unpack(page: str) -> dict[str, Any]:
    """The item data block of a page, as the page's script unpacks it."""
    match = re.search(r'<script id="tebench-data" type="application/octet-stream">([^<]*)</script>', page)
    assert match, "no item data in the page"
    data: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(match.group(1))))
    return data


@pytest.fixture(scope="module")
def runs() -> list[Run]:
    return load_runs([GOLD, MODELS])


@pytest.fixture(scope="module")
def page(runs: list[Run]) -> str:
    return render_html(runs)


# -- the merged model rows and the leaderboard --------------------------------------------------
def test_models_of_both_runs_are_rows_keyed_by_name(runs: list[Run]) -> None:
    rows = model_rows(runs)
    assert [(row.run, row.model) for row in rows] == [("gold", "gold")] + [
        ("models", model) for model in runs[1].report["summary"]
    ]
    assert [row.key for row in rows] == [row.model for row in rows]  # no name repeats: no "@ run"


def test_a_model_in_two_runs_is_told_apart_by_run() -> None:
    report = json.loads(GOLD.read_text())
    rows = model_rows([Run("monday", report), Run("tuesday", report)])
    assert [row.key for row in rows] == ["gold @ monday", "gold @ tuesday"]


def test_run_names_are_file_stems_numbered_when_equal() -> None:
    assert run_name("/a/run.json") == "run"
    assert run_name("/b/run.json", ["run"]) == "run-2"
    assert run_name("/c/run.json", ["run", "run-2"]) == "run-3"


def test_leaderboard_columns_are_the_summary_float_leaves(runs: list[Run]) -> None:
    (board,) = leaderboards(model_rows(runs))
    assert board.benchmark == "tebench"
    assert board.counts == [
        "items", "scored", "evaluated", "empty", "not_applied", "errors", "timeouts", "invalid_instances",
    ]  # fmt: skip
    paths = [column.path for column in board.columns]
    for label in ("breaking", "stale", "missing"):
        for score in ("precision", "recall", "f1"):
            assert f"identification.by_label.{label}.{score}" in paths
        assert f"update.by_label.{label}.oa" in paths
    assert paths[:6] == [
        "identification.micro.precision", "identification.micro.recall", "identification.micro.f1",
        "identification.macro.precision", "identification.macro.recall", "identification.macro.f1",
    ]  # fmt: skip
    assert {"update.oa", "update.means.s_exec", "update.means.s_mod"} <= set(paths)
    # counts (tp, items) are not score columns, and per-project scores have their own table
    assert not [p for p in paths if p.endswith((".tp", ".items")) or "by_project" in p]
    assert board.project_groups == ["identification.by_project", "update.by_project"]
    assert list(board.projects) == ["textkit"]


def test_leaderboard_cells_show_the_summary_values_with_their_item_counts(runs: list[Run], page: str) -> None:
    summary = runs[1].report["summary"]["partial"]
    micro = summary["identification"]["micro"]
    # the cell of partial's micro F1: its value in percent, and the items it stands on
    cell = f'data-v="{micro["f1"]}" style="--v:{micro["f1"]}">{micro["f1"] * 100:.1f}<small>{micro["items"]}</small>'
    assert cell in page
    counts = summary["counts"]
    assert counts["errors"] >= 1  # the recorded run has a harness error for this model
    assert f'<td class="count bad" data-v="{counts["errors"]}">{counts["errors"]}</td>' in page


def test_other_benchmarks_summaries_render_without_code_of_their_own() -> None:
    swe = {"counts": {"items": 4, "evaluated": 4, "errors": 0}, "resolved": 0.25, "resolved_ids": ["a"]}
    rcj = {"counts": {"items": 10}, "pass@1": 0.3, "pass@5": 0.5, "by_project": {"p": {"pass@1": 0.3}}}
    runs = [
        Run("swe", {"benchmark": "swe-bench", "summary": {"m": swe}, "results": []}),
        Run(
            "rcj",
            {"extra": {"options": {"benchmark": "realcodejava"}}, "summary": {"m2": rcj}, "results": []},
        ),
    ]
    boards = leaderboards(model_rows(runs))
    assert [(b.benchmark, [c.path for c in b.columns]) for b in boards] == [
        ("swe-bench", ["resolved"]),
        ("realcodejava", ["pass@1", "pass@5"]),
    ]
    assert boards[1].projects == {"p": {"m2": {"by_project": 0.3}}}
    page = render_html(runs)
    assert ">25.0<" in page and ">30.0<" in page and ">50.0<" in page


# -- per-item data --------------------------------------------------------------------------------
def test_item_scores_are_the_records_scores_and_not_their_parts(runs: list[Run]) -> None:
    record = runs[0].report["results"][0]
    scores = item_scores(record)
    assert scores == {
        f"identification.{k}": record["identification"][k] for k in ("precision", "recall", "f1")
    } | {f"update.{k}": record["update"][k] for k in ("s_exec", "s_line", "s_branch", "s_mod", "s_update")}
    # per-method s_mod values and the gold build's seconds are parts, not the item's scores
    assert record["update"]["s_mod_by_method"] and not [k for k in scores if "by_method" in k]


def test_timings_top_level_phases_and_nested_build_steps_apart(runs: list[Run]) -> None:
    record = runs[0].report["results"][0]
    assert item_timings(record) == record["timings"]
    assert item_timings(record, nested=True) == {
        f"update.{k}": v for k, v in record["update"]["timings"].items()
    }


def test_identification_sets_agree_with_the_records_counts(runs: list[Run]) -> None:
    checked = 0
    for record in runs[1].report["results"]:
        identification = record.get("identification")
        if not identification:
            continue
        sets = identification_sets(record)
        assert sets is not None
        assert [len(sets[k]) for k in ("tp", "fp", "fn")] == [identification[k] for k in ("tp", "fp", "fn")]
        checked += 1
    assert checked >= 20


def test_the_page_carries_every_record_and_both_patches(runs: list[Run], page: str) -> None:
    data = unpack(page)
    records = [r for run in runs for r in run.report["results"]]
    assert len(data["items"]) == len(records)
    for item, record in zip(data["items"], records, strict=True):
        assert item["record"]["instance_id"] == record["instance_id"]
        assert "prediction_patch" not in item["record"]  # carried once, coloured, in "patches"
        for name in ("prediction_patch", "gold_patch"):
            text = record.get(name)
            if text:
                coloured = data["patches"][item["patches"][name]]
                # the coloured lines, tags removed, are the patch's lines: nothing lost or changed
                pieces = re.split(r'<span class="l \w">', coloured)[1:]
                assert [html.unescape(re.sub(r"<[^>]+>", "", p)) for p in pieces] == text.splitlines()
            else:
                assert item["patches"][name] is None
    # gold's patch is the same text for every model of an instance: coloured once
    assert len(data["patches"]) < sum(
        bool(r.get(n)) for r in records for n in ("prediction_patch", "gold_patch")
    )


def test_the_page_is_self_contained_and_deterministic(runs: list[Run], page: str) -> None:
    assert not re.search(r"""<(script|link|img|iframe)[^>]+(src|href)=["']?(https?:)?//""", page)
    assert "@import" not in page and "url(http" not in page
    assert page.count("<svg") >= 5  # distributions, label/project bars, two scatters, timings
    assert page.count("<script") == 2
    assert render_html(runs) == page


def test_missing_plots_are_left_out_rather_than_drawn_empty() -> None:
    empty = build_report(
        [], summary={}, harness_version="t", benchmark="tebench", dataset="d", predictions="p", fields={}
    )
    page = render_html([Run("empty", empty)])
    assert "Nothing to plot." in page
    assert unpack(page) == {"items": [], "patches": {}}


# -- patch colouring ------------------------------------------------------------------------------
PATCH = """diff --git a/src/test/java/A.java b/src/test/java/A.java
--- a/src/test/java/A.java
+++ b/src/test/java/A.java
@@ -1,3 +1,3 @@
 class A {
--- comment kept as a deleted line "-- comment"
-  int x = 1; // <old>
+  String s = "<new> & more";
 }
"""


def test_patch_lines_keep_their_diff_kind_and_java_colours() -> None:
    coloured = highlight_patch(PATCH)
    lines = re.findall(r'<span class="l (\w)">', coloured)
    assert lines == ["m", "m", "m", "h", "c", "d", "d", "a", "c"]
    assert '<span class="kt">int</span>' in coloured  # a Java keyword type, coloured by the Java lexer
    assert (
        '<span class="s">&quot;&lt;new&gt; &amp; more&quot;</span>' in coloured
        or "&lt;new&gt; &amp; more" in coloured
    )
    assert "<old>" not in coloured and "<new>" not in coloured


def test_text_that_is_no_diff_is_shown_escaped() -> None:
    coloured = highlight_patch("I could not write the test <sorry>")
    assert "&lt;sorry&gt;" in coloured and "<sorry>" not in coloured
    assert highlight_patch("  \n") == ""


def test_huge_patches_are_shown_without_colours() -> None:
    huge = PATCH + "+" + "x" * html_report_diff_limit() + "\n"
    coloured = highlight_patch(huge)
    assert "shown without colours" in coloured and '<span class="kt">' not in coloured


def html_report_diff_limit() -> int:
    from pytest_tebench.report.html_diff import MAX_COLOURED

    return MAX_COLOURED


# -- the command ----------------------------------------------------------------------------------
def test_tebench_report_merges_runs_into_one_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out" / "report.html"
    assert cli.main(["report", str(GOLD), str(MODELS), "--html", str(out), "--title", "Demo <runs>"]) == 0
    page = out.read_text(encoding="utf-8")
    assert "<title>Demo &lt;runs&gt;</title>" in page
    items = len(json.loads(GOLD.read_text())["results"]) + len(json.loads(MODELS.read_text())["results"])
    assert f"2 report(s), {items} item(s): {out}" in capsys.readouterr().out


def test_tebench_report_says_which_file_is_bad(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 99}')
    assert cli.main(["report", str(GOLD), str(bad), "--html", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: cannot read the report" in err and "schema version 1" in err
    assert not (tmp_path / "x.html").exists()


def test_tebench_report_names_the_missing_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(html_report, "missing_dependencies", lambda: ["matplotlib"])
    assert cli.main(["report", str(GOLD), "--html", str(tmp_path / "x.html")]) == 2
    assert (
        "needs matplotlib, which is not installed: pip install 'pytest-tebench[html]'"
        in capsys.readouterr().err
    )


# -- the plugin option ----------------------------------------------------------------------------
def test_plugin_writes_the_html_report_with_both_patches(pytester: pytest.Pytester, demo_cache: Path) -> None:
    from pytest_tebench.demo import DEMO_REPO  # noqa: F401  (the demo benchmark is what runs)
    from pytest_tebench.instance.datasets import demo_dataset_path

    html_path = pytester.path / "site" / "report.html"
    result = pytester.runpytest(
        "--tebench-predictions=gold", "--tebench-skip-update", f"--tebench-cache-dir={demo_cache}",
        f"--tebench-html={html_path}", "-p", "no:cacheprovider", "-k", "textkit__69c4649c or textkit__6f3adb06",
    )  # fmt: skip
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([f"HTML report: {html_path}"])
    data = unpack(html_path.read_text(encoding="utf-8"))
    rows = {
        json.loads(line)["instance_id"]: json.loads(line)
        for line in demo_dataset_path().read_text().splitlines()
    }
    assert sorted(item["record"]["instance_id"] for item in data["items"]) == [
        "textkit__69c4649c",
        "textkit__6f3adb06",
    ]
    for item in data["items"]:
        # gold's prediction is gold's patch: one coloured text serves both columns
        assert item["patches"]["prediction_patch"] == item["patches"]["gold_patch"] is not None
        gold = rows[item["record"]["instance_id"]]["test_patch"]
        first_file = gold.splitlines()[0]
        assert first_file.replace("&", "&amp;") in data["patches"][item["patches"]["gold_patch"]]


def test_plugin_refuses_to_start_without_the_html_extra(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(html_report, "missing_dependencies", lambda: ["pygments"])
    result = pytester.runpytest(
        "--tebench-predictions=gold", "--tebench-skip-update", "--tebench-html=r.html"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    # (not fnmatch: "[html]" would be a character class there)
    assert "--tebench-html needs pygments, which is not installed: pip install 'pytest-tebench[html]'" in (
        result.stderr.str()
    )


def test_per_project_cells_show_their_item_counts(runs: list[Run], page: str) -> None:
    by_project = runs[1].report["summary"]["partial"]["update"]["by_project"]["textkit"]
    oa = by_project["oa"]
    assert f'style="--v:{oa}">{oa * 100:.1f}<small>{by_project["items"]}</small>' in page
