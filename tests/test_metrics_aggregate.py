"""Set metrics, per-model aggregation and threshold checks, against hand-computed values."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from pytest_tebench.benchmarks.tebench.adapter import TebenchAdapter
from pytest_tebench.benchmarks.tebench.aggregate import summarise
from pytest_tebench.metrics.outcomes import check_thresholds as generic_check
from pytest_tebench.metrics.scores import empty_scores
from pytest_tebench.metrics.scores import mean
from pytest_tebench.metrics.scores import prf
from pytest_tebench.metrics.scores import set_scores

approx = pytest.approx


def ident(tp: int, fp: int, fn: int) -> dict[str, Any]:
    precision, recall, f1 = prf(tp, fp, fn)
    return {"tp": tp, "fp": fp, "fn": fn, "precision": precision, "recall": recall, "f1": f1}


def upd(
    s_exec: float, s_line: float | None, s_branch: float | None, s_mod: float, s_update: float, *, cov: bool
) -> dict[str, Any]:
    return {
        "s_exec": s_exec,
        "s_line": s_line,
        "s_branch": s_branch,
        "s_mod": s_mod,
        "s_update": s_update,
        "gt_has_coverage_change": cov,
    }


def rec(
    iid: str,
    project: str,
    labels: list[str],
    status: str,
    identification: dict[str, Any] | None = None,
    *,
    update: dict[str, Any] | None = None,
    model: str = "m1",
) -> dict[str, Any]:
    return {
        "instance_id": iid,
        "model_name_or_path": model,
        "project": project,
        "labels": labels,
        "status": status,
        "error": "boom" if status in {"error", "timeout", "invalid_instance"} else None,
        "apply_method": "git-apply" if status == "evaluated" else None,
        "touched_non_test_files": [],
        "identification": identification,
        "update": update,
        "timings": {},
    }


def sample_records() -> list[dict[str, Any]]:
    return [
        # A: multi-label (breaking + stale). P = R = 2/3, F1 = 2/3.
        rec(
            "p1-1",
            "p1",
            ["breaking", "stale"],
            "evaluated",
            ident(2, 1, 1),
            update=upd(1.0, 0.5, None, 0.8, 0.7, cov=True),
        ),
        # B: P = 1/1 = 1, R = 1/4, F1 = 2*1*0.25/1.25 = 0.4.
        rec(
            "p1-2",
            "p1",
            ["stale"],
            "evaluated",
            ident(1, 0, 3),
            update=upd(0.5, None, None, 0.6, 0.3, cov=False),
        ),
        # C: empty prediction, a model failure: zeros, but it counts.
        rec("p2-1", "p2", ["stale"], "empty", ident(0, 0, 2), update=upd(0.0, 0.0, 0.0, 0.0, 0.0, cov=True)),
        # D, E, F: harness trouble; the huge numbers would show up if they leaked into a sum.
        rec(
            "p2-2",
            "p2",
            ["breaking"],
            "error",
            ident(100, 0, 0),
            update=upd(1.0, 1.0, 1.0, 1.0, 1.0, cov=True),
        ),
        rec("p2-3", "p2", ["missing"], "timeout"),
        rec("p3-1", "p3", ["missing"], "invalid_instance"),
        # Second model: one prediction that did not apply, no update scoring.
        rec("p1-1", "p1", ["breaking", "stale"], "not_applied", ident(0, 0, 3), model="m2"),
    ]


# --- scores ---------------------------------------------------------------------------------


def test_prf_reference_conventions() -> None:
    assert prf(0, 0, 0) == (0.0, 0.0, 0.0)  # empty gold and prediction: penalised, not 1
    assert prf(0, 3, 0) == (0.0, 0.0, 0.0)  # P = 0/3, R undefined -> 0
    assert prf(0, 0, 3) == (0.0, 0.0, 0.0)  # P undefined -> 0, R = 0/3
    assert prf(3, 0, 0) == (1.0, 1.0, 1.0)
    # tp=2 fp=1 fn=1: P = 2/3, R = 2/3, F1 = 2/3.
    assert prf(2, 1, 1) == approx((2 / 3, 2 / 3, 2 / 3))
    # tp=1 fp=3 fn=0: P = 0.25, R = 1, F1 = 2*0.25/1.25 = 0.4.
    assert prf(1, 3, 0) == approx((0.25, 1.0, 0.4))
    with pytest.raises(ValueError, match="non-negative"):
        prf(-1, 0, 0)


def test_set_scores_counts_and_sorted_lists() -> None:
    gold = ["B.java::b", "A.java::a", "A.java::__FILE_LEVEL_ADD__"]
    predicted = ["A.java::a", "C.java::c", "A.java::a"]  # duplicate ignored
    scores = set_scores(gold, predicted)
    # G & P = {A::a} -> tp 1; P - G = {C::c} -> fp 1; G - P = {B::b, A::ADD} -> fn 2.
    # P = 1/2, R = 1/3, F1 = 2*(1/6)/(5/6) = 0.4.
    assert (scores["tp"], scores["fp"], scores["fn"]) == (1, 1, 2)
    assert (scores["precision"], scores["recall"], scores["f1"]) == approx((0.5, 1 / 3, 0.4))
    assert scores["gold_items"] == ["A.java::__FILE_LEVEL_ADD__", "A.java::a", "B.java::b"]
    assert scores["predicted_items"] == ["A.java::a", "C.java::c"]


def test_empty_scores_all_gold_are_false_negatives() -> None:
    scores = empty_scores({"x", "y"})
    assert (scores["tp"], scores["fp"], scores["fn"], scores["f1"]) == (0, 0, 2, 0.0)
    assert scores["predicted_items"] == []


def test_mean_skips_none_and_is_none_when_empty() -> None:
    assert mean([1.0, None, 0.0]) == 0.5
    assert mean([None, None]) is None
    assert mean([]) is None


# --- summarise ------------------------------------------------------------------------------


def test_counts_and_error_lists() -> None:
    summary = summarise(sample_records(), update_scoring="readme")
    assert list(summary) == ["m1", "m2"]
    m1 = summary["m1"]
    assert m1["counts"] == {
        "items": 6,
        "scored": 3,
        "evaluated": 2,
        "empty": 1,
        "not_applied": 0,
        "missing_predictions": 0,
        "refused": 0,
        "tampered": 0,
        "errors": 1,
        "timeouts": 1,
        "invalid_instances": 1,
        "unsupported": 0,
    }
    assert m1["errors"] == ["p2-2", "p2-3"]  # error and timeout
    assert m1["invalid_instances"] == ["p3-1"]
    assert summary["m2"]["counts"]["not_applied"] == 1


def test_micro_and_macro_differ_and_exclude_errors() -> None:
    ident_summary = summarise(sample_records(), update_scoring=None)["m1"]["identification"]
    # Micro over A, B, C (D excluded): tp 2+1+0 = 3, fp 1+0+0 = 1, fn 1+3+2 = 6.
    # P = 3/4, R = 3/9 = 1/3, F1 = 2tp/(2tp+fp+fn) = 6/13 = 0.461538.
    micro = ident_summary["micro"]
    assert (micro["tp"], micro["fp"], micro["fn"], micro["items"]) == (3, 1, 6, 3)
    assert (micro["precision"], micro["recall"], micro["f1"]) == approx((0.75, 1 / 3, 6 / 13))
    # Macro: P = (2/3 + 1 + 0)/3 = 5/9; R = (2/3 + 1/4 + 0)/3 = 11/36; F1 = (2/3 + 0.4 + 0)/3 = 16/45.
    macro = ident_summary["macro"]
    assert (macro["precision"], macro["recall"], macro["f1"]) == approx((5 / 9, 11 / 36, 16 / 45))
    assert macro["f1"] != approx(micro["f1"])


def test_by_label_multi_label_and_empty_label() -> None:
    by_label = summarise(sample_records(), update_scoring=None)["m1"]["identification"]["by_label"]
    assert list(by_label) == ["breaking", "stale", "missing"]
    # Breaking: only A (D is an error): tp 2, fp 1, fn 1 -> P = R = F1 = 2/3.
    breaking = by_label["breaking"]
    assert (breaking["tp"], breaking["fp"], breaking["fn"], breaking["items"]) == (2, 1, 1, 1)
    assert breaking["f1"] == approx(2 / 3)
    # Stale: A (again: multi-label), B and C -> same sums as the micro: F1 = 6/13.
    stale = by_label["stale"]
    assert (stale["tp"], stale["fp"], stale["fn"], stale["items"]) == (3, 1, 6, 3)
    assert stale["f1"] == approx(6 / 13)
    # Missing: only error/invalid instances carry it -> not measured, null rather than 0.
    assert by_label["missing"] == {
        "precision": None,
        "recall": None,
        "f1": None,
        "tp": None,
        "fp": None,
        "fn": None,
        "items": 0,
    }


def test_by_project_micro() -> None:
    by_project = summarise(sample_records(), update_scoring=None)["m1"]["identification"]["by_project"]
    assert list(by_project) == ["p1", "p2"]  # p3 has no scored item
    # p1 = A + B: tp 3, fp 1, fn 4 -> P 3/4, R 3/7, F1 6/11.
    p1 = by_project["p1"]
    assert (p1["tp"], p1["fp"], p1["fn"], p1["items"]) == (3, 1, 4, 2)
    assert (p1["precision"], p1["recall"], p1["f1"]) == approx((0.75, 3 / 7, 6 / 11))
    # p2 = C only (empty prediction): everything 0 but measured.
    assert (by_project["p2"]["f1"], by_project["p2"]["items"]) == (0.0, 1)


def test_update_block() -> None:
    summary = summarise(sample_records(), update_scoring="readme")
    update = summary["m1"]["update"]
    # OA over A, B, C: (0.7 + 0.3 + 0)/3 = 1/3.
    assert update["oa"] == approx(1 / 3)
    assert update["items"] == 3
    # s_exec (1 + 0.5 + 0)/3 = 0.5; s_line over A, C: (0.5 + 0)/2 = 0.25; s_branch over C only: 0;
    # s_mod (0.8 + 0.6 + 0)/3 = 1.4/3.
    assert update["means"] == approx({"s_exec": 0.5, "s_line": 0.25, "s_branch": 0.0, "s_mod": 1.4 / 3})
    # Breaking: A -> 0.7; stale: A, B, C -> 1/3; missing: nothing scored.
    assert update["by_label"]["breaking"] == approx({"oa": 0.7, "items": 1})
    assert update["by_label"]["stale"] == approx({"oa": 1 / 3, "items": 3})
    assert update["by_label"]["missing"] == {"oa": None, "items": 0}
    assert update["by_project"]["p1"] == approx({"oa": 0.5, "items": 2})  # (0.7 + 0.3)/2
    assert update["no_coverage_change"] == 1  # B
    assert update["scoring"] == "readme"
    # m2 never ran update scoring.
    assert summary["m2"]["update"] is None


def test_not_applied_counts_as_zero_score() -> None:
    m2 = summarise(sample_records(), update_scoring=None)["m2"]["identification"]
    # One item, tp 0 fp 0 fn 3: measured, and zero.
    assert (m2["micro"]["f1"], m2["micro"]["fn"], m2["macro"]["f1"]) == (0.0, 3, 0.0)


def test_model_with_only_errors_has_null_scores() -> None:
    summary = summarise([rec("x-1", "p", ["stale"], "error")], update_scoring=None)["m1"]
    assert summary["identification"]["micro"]["f1"] is None
    assert summary["identification"]["macro"]["f1"] is None
    assert summary["update"] is None
    assert summary["errors"] == ["x-1"]


def test_unknown_status_is_an_error_not_a_score() -> None:
    summary = summarise([rec("x-1", "p", [], "weird", ident(5, 0, 0))], update_scoring=None)["m1"]
    assert summary["counts"]["errors"] == 1
    assert summary["errors"] == ["x-1"]
    assert summary["identification"]["micro"]["items"] == 0


def test_a_duplicate_line_is_a_record_of_its_own_never_a_replacement() -> None:
    # the scored line and a later duplicate of it (an error item): both count, the score stays
    scored = {**rec("b", "p", [], "evaluated", ident(1, 0, 0)), "origin": "run.jsonl:1"}
    duplicate = {**rec("b", "p", [], "error"), "origin": "run.jsonl:3"}
    other = rec("a", "p", [], "empty", ident(0, 0, 1))
    for order in ([scored, other, duplicate], [duplicate, other, scored]):
        summary = summarise(order, update_scoring=None)["m1"]
        assert summary["counts"]["items"] == 3
        assert summary["counts"]["errors"] == 1
        assert summary["identification"]["micro"]["tp"] == 1
        assert summary["identification"]["micro"]["fn"] == 1


def test_missing_prediction_is_scored_like_empty() -> None:
    summary = summarise(
        [
            rec("a", "p", [], "missing_prediction", ident(0, 0, 3)),
            rec("b", "p", [], "evaluated", ident(1, 0, 0)),
        ],
        update_scoring=None,
    )["m1"]
    assert summary["counts"]["scored"] == 2
    assert summary["counts"]["missing_predictions"] == 1
    assert summary["missing_predictions"] == ["a"]
    # tp 1, fn 3: P 1, R 1/4, F1 2/5
    assert summary["identification"]["micro"]["f1"] == approx(0.4)


def test_missing_identity_field_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="instance_id"):
        summarise([{"model_name_or_path": "m"}], update_scoring=None)


def test_summary_is_independent_of_arrival_order() -> None:
    records = sample_records()
    expected = summarise(records, update_scoring="readme")
    rng = random.Random(1234)
    for _ in range(20):
        shuffled = records[:]
        rng.shuffle(shuffled)
        assert summarise(shuffled, update_scoring="readme") == expected
    # Key order too, not just equality.
    assert list(summarise(reversed(records), update_scoring=None)) == ["m1", "m2"]


def test_float_sums_are_order_independent_bitwise() -> None:
    values = [0.1, 0.2, 0.3, 1e-16, 0.7]
    results = {mean(list(p)) for p in itertools.permutations(values)}
    # math.fsum rounds the exact sum once, so every permutation gives the same bits.
    assert len(results) == 1
    assert results.pop() == approx(1.3 / 5)


# --- thresholds -----------------------------------------------------------------------------
def check_thresholds(summary: dict[str, Any], *, min_f1: float | None, min_update: float | None) -> list[str]:
    """TEBench's --tebench-min-f1 / --tebench-min-update through the generic gate."""
    adapter = TebenchAdapter()
    wanted = [(m, v) for m, v in (("f1", min_f1), ("oa", min_update)) if v is not None]
    return generic_check(summary, wanted, adapter.metric_value)


def test_thresholds_report_one_reason_per_failing_model() -> None:
    summary = summarise(sample_records(), update_scoring="readme")
    # m1 micro F1 = 6/13 = 0.4615 -> "0.462"; m2 micro F1 = 0.
    assert check_thresholds(summary, min_f1=0.5, min_update=None) == [
        "model 'm1': f1 0.462 < required 0.500",
        "model 'm2': f1 0.000 < required 0.500",
    ]
    # m1 OA = 1/3 passes 0.3; m2 has no update block at all, which fails a set threshold.
    assert check_thresholds(summary, min_f1=None, min_update=0.3) == [
        "model 'm2': oa not measured (no scored items; required >= 0.300)",
    ]
    # Both thresholds failing for one model stay on one line.
    assert check_thresholds(summary, min_f1=0.5, min_update=0.5)[0] == (
        "model 'm1': f1 0.462 < required 0.500; oa 0.333 < required 0.500"
    )


def test_thresholds_pass_at_equality_and_when_unset() -> None:
    # tp 1, fp 1, fn 1: P = R = 1/2, F1 = 1/2 exactly.
    summary = summarise([rec("a", "p", [], "evaluated", ident(1, 1, 1))], update_scoring=None)
    assert check_thresholds(summary, min_f1=0.5, min_update=None) == []
    assert check_thresholds(summary, min_f1=None, min_update=None) == []


def test_a_timeout_keeps_its_identification_but_not_its_update() -> None:
    # issue 8 item 3: a prediction whose tests hang must not escape its identification score
    records = [
        rec("a", "p", ["stale"], "evaluated", ident(1, 0, 0), update=upd(1.0, 1.0, 1.0, 1.0, 1.0, cov=True)),
        rec("b", "p", ["stale"], "timeout", ident(0, 1, 2), update=None),
    ]
    summary = summarise(records, update_scoring="paper")["m1"]
    micro = summary["identification"]["micro"]
    assert (micro["tp"], micro["fp"], micro["fn"], micro["items"]) == (1, 1, 2, 2)
    assert summary["update"]["items"] == 1 and summary["update"]["oa"] == 1.0
    assert summary["counts"]["timeouts"] == 1 and summary["errors"] == ["b"]


def test_thresholds_fail_without_scored_items() -> None:
    summary = summarise([rec("a", "p", [], "timeout")], update_scoring=None)
    assert check_thresholds(summary, min_f1=0.1, min_update=None) == [
        "model 'm1': f1 not measured (no scored items; required >= 0.100)"
    ]
    assert check_thresholds({}, min_f1=0.1, min_update=None) == [
        "no model was evaluated, so no threshold can be met (f1 >= 0.100)"
    ]
    assert check_thresholds({}, min_f1=None, min_update=None) == []


def test_unlabeled_instances_have_their_own_group() -> None:
    # Datasets made by other tools often carry no labels: such items still score, in "unlabeled".
    records = [
        rec("a", "p", [], "evaluated", ident(1, 1, 0), update=upd(1.0, None, None, 0.5, 0.5, cov=False)),
        rec(
            "b", "p", ["stale"], "evaluated", ident(2, 0, 2), update=upd(1.0, None, None, 1.0, 1.0, cov=False)
        ),
    ]
    summary = summarise(records, update_scoring="paper")["m1"]
    by_label = summary["identification"]["by_label"]
    assert list(by_label) == ["breaking", "stale", "missing", "unlabeled"]
    assert (by_label["unlabeled"]["tp"], by_label["unlabeled"]["fp"], by_label["unlabeled"]["fn"]) == (
        1,
        1,
        0,
    )
    assert by_label["unlabeled"]["precision"] == approx(0.5)
    assert by_label["stale"]["recall"] == approx(0.5)
    assert summary["identification"]["micro"]["tp"] == 3  # unlabeled items count in Overall too
    assert summary["update"]["by_label"]["unlabeled"] == {"oa": approx(0.5), "items": 1}


def test_flaky_gold_instances_are_flagged() -> None:
    flaky = {**upd(1.0, None, None, 1.0, 1.0, cov=False), "gold": {"flaky": ["p.ATest#t"]}}
    stable = {**upd(1.0, None, None, 1.0, 1.0, cov=False), "gold": {"flaky": []}}
    records = [
        rec("a", "p", ["stale"], "evaluated", ident(1, 0, 0), update=flaky),
        rec("b", "p", ["stale"], "evaluated", ident(1, 0, 0), update=stable),
    ]
    assert summarise(records, update_scoring="paper")["m1"]["flaky_gold"] == ["a"]
