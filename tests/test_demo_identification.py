"""Identification scores of the demo prediction files, computed by hand from the patches.

No builds: ``--tebench-skip-update``. The patches are real (see predictions/generate.py).
"""

from __future__ import annotations

import pytest

from conftest import PREDICTIONS
from conftest import DemoRun
from conftest import by_instance

T = "src/test/java/org/tebench/textkit/"
I1, I3, I4, I9 = "textkit__69c4649c", "textkit__6f3adb06", "textkit__389d5077", "textkit__50a6637a"


def test_partial_predictions_hand_computed(demo_run: DemoRun) -> None:
    # partial evaluation on purpose: only the 4 instances the file has lines for
    result, report = demo_run(
        str(PREDICTIONS / "partial.jsonl"), "--tebench-skip-update", "--tebench-skip-missing"
    )
    result.assert_outcomes(passed=4)
    results = by_instance(report)
    ident = {iid: r["identification"] for iid, r in results.items()}
    # I1 gold: WrapTest#handlesLongWord, #zeroWidth. The prediction fixes handlesLongWord and also edits
    # wrapsAtSpaces: TP 1, FP 1, FN 1 -> P = R = F1 = 1/2.
    assert ident[I1]["predicted_items"] == [
        f"{T}WrapTest.java::WrapTest#handlesLongWord",
        f"{T}WrapTest.java::WrapTest#wrapsAtSpaces",
    ]
    assert (ident[I1]["tp"], ident[I1]["fp"], ident[I1]["fn"], ident[I1]["f1"]) == (1, 1, 1, 0.5)
    # I3 gold: a new file StringUtilsUnicodeTest; the prediction adds its test to StringUtilsTest instead.
    assert ident[I3]["predicted_items"] == [f"{T}StringUtilsTest.java::<added>"]
    assert (ident[I3]["tp"], ident[I3]["fp"], ident[I3]["fn"], ident[I3]["f1"]) == (0, 1, 1, 0.0)
    # I4 gold: countsWords, hyphenSplitsWords (deleted), averagesWordLength, <added>. The prediction edits
    # countsWords, renames hyphenSplitsWords (= deletion + addition): TP 3, FP 0, FN 1 -> P 1, R 3/4, F1 6/7.
    assert (ident[I4]["tp"], ident[I4]["fp"], ident[I4]["fn"]) == (3, 0, 1)
    assert ident[I4]["f1"] == pytest.approx(6 / 7, abs=1e-6)
    # I9 gold: the two tests of the deleted CaseConverterLegacyTest, and ToKebab#spacesAroundWords.
    # The prediction only deletes the file: TP 2, FN 1 -> P 1, R 2/3, F1 4/5.
    assert (ident[I9]["tp"], ident[I9]["fp"], ident[I9]["fn"], ident[I9]["f1"]) == (2, 0, 1, 0.8)
    # the raw-output wrappers were unwrapped: <patch> for I1, a ```diff fence for I3
    assert results[I1]["status"] == results[I3]["status"] == "evaluated"

    summary = report["summary"]["partial"]["identification"]
    # micro: TP 6, FP 2, FN 4 -> P 6/8, R 6/10, F1 2PR/(P+R) = 0.9/1.35 = 2/3
    assert summary["micro"] == {
        "precision": 0.75,
        "recall": 0.6,
        "f1": 0.666667,
        "tp": 6,
        "fp": 2,
        "fn": 4,
        "items": 4,
    }
    # macro: P (1/2 + 0 + 1 + 1)/4, R (1/2 + 0 + 3/4 + 2/3)/4, F1 (1/2 + 0 + 6/7 + 4/5)/4
    assert summary["macro"]["precision"] == 0.625
    assert summary["macro"]["recall"] == pytest.approx((0.5 + 0.75 + 2 / 3) / 4, abs=1e-6)
    assert summary["macro"]["f1"] == pytest.approx((0.5 + 6 / 7 + 0.8) / 4, abs=1e-6)
    # by label (micro over the instances carrying it): breaking = I1, I4, I9 -> TP 6, FP 1, FN 3;
    # stale = I4 -> TP 3, FN 1; missing = I3, I4 -> TP 3, FP 1, FN 2
    by_label = summary["by_label"]
    assert (by_label["breaking"]["tp"], by_label["breaking"]["fp"], by_label["breaking"]["fn"]) == (6, 1, 3)
    assert by_label["breaking"]["f1"] == pytest.approx(2 * (6 / 7) * (6 / 9) / (6 / 7 + 6 / 9), abs=1e-6)
    assert by_label["stale"]["f1"] == pytest.approx(6 / 7, abs=1e-6)
    assert by_label["missing"]["f1"] == pytest.approx(2 * 0.75 * 0.6 / 1.35, abs=1e-6)


def test_instances_without_a_prediction_count_as_empty_by_default(demo_run: DemoRun) -> None:
    result, report = demo_run(str(PREDICTIONS / "partial.jsonl"), "--tebench-skip-update", count_missing=True)
    # the 4 lines as before, and one item per instance the model has no line for
    result.assert_outcomes(passed=4, failed=5)
    result.stdout.fnmatch_lines(["*no prediction for this instance (scored as empty)*"])
    missing = {iid for iid, r in by_instance(report).items() if r["status"] == "missing_prediction"}
    assert missing == {
        "textkit__c839cc1f", "textkit__d6ab324c", "textkit__18b8d221", "textkit__dcc8e655", "textkit__867ea90c"
    }  # fmt: skip
    summary = report["summary"]["partial"]
    assert summary["counts"]["scored"] == 9
    assert summary["counts"]["missing_predictions"] == 5
    assert summary["missing_predictions"] == sorted(missing)
    # the 4 answered instances: TP 6, FP 2, FN 4 (above); the 5 others hold 21 - 10 = 11 gold items,
    # all FN: TP 6, FP 2, FN 15 -> P 6/8, R 6/21, F1 = 2TP/(2TP+FP+FN) = 12/29
    micro = summary["identification"]["micro"]
    assert (micro["tp"], micro["fp"], micro["fn"], micro["items"]) == (6, 2, 15, 9)
    assert micro["f1"] == pytest.approx(12 / 29, abs=1e-6)
    result.stdout.fnmatch_lines(["*no prediction (scored as empty): textkit__*"])


def test_gold_copy_empty_and_not_applying_without_builds(demo_run: DemoRun) -> None:
    result, report = demo_run(str(PREDICTIONS / "gold-copy.jsonl"), "--tebench-skip-update")
    result.assert_outcomes(passed=9)
    assert report["summary"]["gold-copy"]["identification"]["micro"]["f1"] == 1.0

    result, report = demo_run(str(PREDICTIONS / "empty.jsonl"), "--tebench-skip-update")
    result.assert_outcomes(failed=9)
    result.stdout.fnmatch_lines(["*empty prediction: no patch to evaluate (scored 0)*"])
    summary = report["summary"]["empty"]
    assert summary["counts"]["empty"] == 9
    assert summary["identification"]["micro"]["f1"] == 0.0
    assert summary["identification"]["micro"]["fn"] == 21  # every gold item of the 9 instances

    result, report = demo_run(
        str(PREDICTIONS / "not-applying.jsonl"), "--tebench-skip-update", "--tebench-skip-missing"
    )
    result.assert_outcomes(failed=2)
    statuses = {iid: (r["status"], r["error"]) for iid, r in by_instance(report).items()}
    assert statuses["textkit__c839cc1f"][0] == statuses["textkit__50a6637a"][0] == "not_applied"
    assert "patch does not apply" in statuses["textkit__c839cc1f"][1]
    assert "Missing.java" in statuses["textkit__50a6637a"][1]


def test_edits_outside_the_test_tree_are_reported_and_not_applied(demo_run: DemoRun) -> None:
    result, report = demo_run(
        str(PREDICTIONS / "edits-main.jsonl"), "--tebench-skip-update", "--tebench-skip-missing"
    )
    result.assert_outcomes(passed=1)
    (record,) = report["results"]
    assert record["touched_non_test_files"] == ["src/main/java/org/tebench/textkit/StringUtils.java"]
    assert record["identification"]["f1"] == 1.0
