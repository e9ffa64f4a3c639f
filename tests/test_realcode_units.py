"""RealCodeJava without Maven: pass@k, the pass rules, answer cleaning, rows, predictions,
the demo dataset, and the metrics of the demo run's recorded outcomes."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.benchmarks.realcode.adapter import create_adapter
from pytest_tebench.benchmarks.realcode.adapter import judged
from pytest_tebench.benchmarks.realcode.answers import clean_answer
from pytest_tebench.benchmarks.realcode.instances import load_instances
from pytest_tebench.benchmarks.realcode.predictions import read_samples
from pytest_tebench.benchmarks.realcode.predictions import samples_of
from pytest_tebench.benchmarks.realcode.scoring import mean_pass_at_k
from pytest_tebench.benchmarks.realcode.scoring import pass_at_k
from pytest_tebench.benchmarks.realcode.scoring import passes_dry_run
from pytest_tebench.benchmarks.realcode.scoring import passes_tests
from pytest_tebench.benchmarks.realcode.summary import junit_properties
from pytest_tebench.benchmarks.realcode.summary import metric_value
from pytest_tebench.benchmarks.realcode.summary import overall
from pytest_tebench.benchmarks.realcode.summary import summarise
from pytest_tebench.benchmarks.realcode.summary import summary_lines
from pytest_tebench.demo import build_demo_mirror
from pytest_tebench.demo import realcode as demo
from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.instance.datasets import load_records
from pytest_tebench.instance.datasets import write_dataset
from pytest_tebench.metrics.outcomes import check_thresholds
from pytest_tebench.run.maven.surefire import TestId

RECORDED = Path(__file__).parent / "fixtures" / "realcode-demo-outcomes.json"


# -- pass@k ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 3, 1, 3 / 5),
        (5, 3, 5, 1.0),  # fewer than k failures: some draw of 5 always holds a pass
        (10, 2, 5, 1 - math.comb(8, 5) / math.comb(10, 5)),  # 1 - 56/252
        (10, 0, 10, 0.0),
        (3, 2, 1, 2 / 3),
        (20, 1, 10, 0.5),  # 1 - C(19,10)/C(20,10) = 1 - 10/20
    ],
)
def test_pass_at_k_is_the_unbiased_estimator(n: int, c: int, k: int, expected: float) -> None:
    value = pass_at_k(n, c, k)
    assert value is not None and value == pytest.approx(expected)


def test_pass_at_k_is_not_measured_below_k_samples_and_checks_its_input() -> None:
    assert pass_at_k(4, 4, 5) is None
    with pytest.raises(ValueError, match="between 0 and n"):
        pass_at_k(3, 4, 1)
    # an instance without any answer scores 0; one with too few samples is left out
    assert mean_pass_at_k([(5, 3), (0, 0), (3, 3)], 5) == (0.5, 2)
    assert mean_pass_at_k([(3, 3)], 10) == (None, 0)


# -- the two rules ---------------------------------------------------------------------------
def test_the_tests_rule_needs_every_selected_test_and_the_dry_run_rule_only_the_dry_runs_passes() -> None:
    selection = ["A#a", "A#b"]
    dry = {"A#a": "passed", "A#b": "failed"}  # b fails on the untouched repository here
    both = {"A#a": "passed", "A#b": "passed"}
    only_a = {"A#a": "passed", "A#b": "failed"}
    assert passes_tests(both, dry, selection) and passes_dry_run(both, dry)
    assert not passes_tests(only_a, dry, selection) and passes_dry_run(only_a, dry)
    assert not passes_dry_run({"A#a": "failed", "A#b": "passed"}, dry)
    assert not passes_dry_run({"A#a": "failed", "A#b": "failed"}, {"A#a": "failed", "A#b": "failed"})
    skipped = {"A#a": "passed", "A#b": "skipped"}
    assert passes_tests(skipped, {"A#a": "passed", "A#b": "skipped"}, selection)
    assert not passes_tests(skipped, dry, selection)
    assert not passes_tests({}, {}, [])


# -- cleaning answers ------------------------------------------------------------------------
SIGNATURE = "    public static String repeat(String s, int times) {"


@pytest.mark.parametrize(
    ("raw", "body", "steps"),
    [
        ("        return s;\n    }", "        return s;\n    }", ()),
        (f"Sure:\n```java\n{SIGNATURE}\n        return s;\n    }}\n```\nDone.", "        return s;\n    }",
         ("fence", "signature")),
        ("```\n        return s;\n    }\n```", "        return s;\n    }", ("fence",)),
        ("```java\n        return s;\n    }\n", "        return s;\n    }", ("fence",)),  # never closed
        ('        return "}{";\n    }\n\n    void other() {}\n}\n', '        return "}{";\n    }', ("cut",)),
        ("        // a } in a comment\n        return s;", "        // a } in a comment\n        return s;\n    }",
         ("closed",)),
        (f"@Override\n{SIGNATURE} return s; }}", " return s; }", ("signature",)),
        ("  \n", "", ()),
        # a syntax error (no semicolon) does not move the end: braces are counted as tokens
        ("        return list\n    }\n}", "        return list\n    }", ("cut",)),
        ('        String t = """\n  { }}\n  """;\n        char c = \'}\';\n        return t;\n    }\n}',
         '        String t = """\n  { }}\n  """;\n        char c = \'}\';\n        return t;\n    }', ("cut",)),
    ],
)  # fmt: skip
def test_answers_are_cleaned_into_bodies(raw: str, body: str, steps: tuple[str, ...]) -> None:
    cleaned = clean_answer(raw, method_name="repeat", indent="    ")
    assert (cleaned.body, cleaned.steps, cleaned.raw) == (body, steps, raw)


def test_a_signature_of_another_method_is_not_removed() -> None:
    raw = "    public static String other(String s) {\n        return s;\n    }"
    cleaned = clean_answer(raw, method_name="repeat")
    assert "signature" not in cleaned.steps and cleaned.body.startswith(raw)


# -- rows ------------------------------------------------------------------------------------
def _row(**meta: Any) -> dict[str, Any]:
    base = {
        "id": 7,
        "repo": "owner/name",
        "base_commit": "1b714e0f22ac2259154be581065a2d4ccdfdd4ba",
        "gt": "        return 1;\n    }",
        "stub": "        return 0;\n    }",
        "left_context": "class A {\n    int f() {\n",
        "right_context": "\n}\n",
        "file_path": "src/main/java/A.java",
        "PASS_TO_PASS": ["p.ATest::one"],
        "FAIL_TO_PASS": [],
        "intent": "f[function]",
        "intent_type": "function",
    }
    base.update(meta)
    return {"instruction": "x", "inputs": {"left_context": base["left_context"]}, "outputs": "", "meta": base}


def test_nested_and_flat_rows_give_the_same_instance() -> None:
    nested = _row(FAIL_TO_PASS=["p.ATest#two", "p.ATest::three[1]"])
    flat = {**nested["meta"], "instance_id": "7"}
    del flat["id"]
    flat["PASS_TO_PASS"] = json.dumps(flat["PASS_TO_PASS"])  # parquet exports keep lists as text
    first, second = load_instances([RawRecord(nested, "d:1"), RawRecord(flat, "d:2")])
    assert first.problem is None and first.payload.instance_id == "7"
    assert first.payload.selection == (
        TestId("p.ATest", "one"),
        TestId("p.ATest", "three"),
        TestId("p.ATest", "two"),
    )
    assert first.project == "name" and first.labels == ("function",)
    assert second.problem is not None and "duplicate instance_id (first at d:1)" in second.problem
    alone = load_instances([RawRecord(flat, "d:2")])[0]
    assert alone.problem is None and alone.payload.pass_to_pass == (TestId("p.ATest", "one"),)
    assert (
        first.payload.compose(first.payload.gt) == "class A {\n    int f() {\n        return 1;\n    }\n}\n"
    )


@pytest.mark.parametrize(
    ("meta", "problem"),
    [
        ({"id": None}, "'meta.id'"),
        ({"PASS_TO_PASS": ["not a test"]}, "'PASS_TO_PASS': 'not a test' is not a test id"),
        ({"PASS_TO_PASS": [], "FAIL_TO_PASS": []}, "both empty"),
        ({"file_path": "../A.java"}, "relative path to a .java file"),
        ({"base_commit": "main"}, "not a commit hash"),
        ({"repo": "name"}, "owner/name"),
        ({"gt": ""}, "'gt' is empty"),
        ({"left_context": "class A {\n    int f()\n"}, "must end with the method's signature"),
    ],
)
def test_bad_rows_name_their_problem(meta: dict[str, Any], problem: str) -> None:
    instance = load_instances([RawRecord(_row(**meta), "rows.jsonl:3")])[0]
    assert instance.problem is not None and "rows.jsonl:3" in instance.problem and problem in instance.problem


def test_differing_left_contexts_are_a_problem() -> None:
    row = _row()
    row["inputs"]["left_context"] = "class B {\n"
    problem = load_instances([RawRecord(row, "r:1")])[0].problem
    assert problem is not None and "differ" in problem


# -- predictions -----------------------------------------------------------------------------
def test_samples_are_grouped_per_instance_and_model_from_every_format(tmp_path: Path) -> None:
    folder = tmp_path / "org__model-7b"  # lm-eval names the folder after the model
    folder.mkdir()
    path = folder / "samples_realcodejava.jsonl"
    lines: list[object] = [
        {"instance_id": "1", "model_name_or_path": "m", "model_patch": "a"},
        {"instance_id": "2", "model_name_or_path": "m", "outputs": ["x", "y"]},
        {"instance_id": 1, "model_name_or_path": "m", "completion": "b"},
        {"id": "1", "model_name_or_path": "other", "samples": "only"},
        {"doc_id": 0, "doc": {"meta": {"id": 3}}, "resps": [["r1", "r2"]], "filtered_resps": ["r1"]},
        {"instance_id": "4", "model_name_or_path": "m", "outputs": [1]},
        {"instance_id": "4", "model_name_or_path": "m"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + "{broken\n")
    predictions = read_samples(path)
    good = {(p.instance_id, p.model_name_or_path): samples_of(p) for p in predictions if p.problem is None}
    assert good == {
        ("1", "m"): ["a", "b"],
        ("2", "m"): ["x", "y"],
        ("1", "other"): ["only"],
        ("3", "org__model-7b"): ["r1", "r2"],
    }
    assert predictions[0].origin.endswith("samples_realcodejava.jsonl:1 (+1 more lines)")
    problems = [p.problem for p in predictions if p.problem is not None]
    assert len(problems) == 3
    assert "'outputs' must be a string or a list of strings" in str(problems[0])
    assert "no answer" in str(problems[1]) and "malformed JSON" in str(problems[2])


# -- the demo --------------------------------------------------------------------------------
def test_the_demo_dataset_is_cut_from_the_demo_repository(tmp_path: Path) -> None:
    mirror = build_demo_mirror(tmp_path / "mirror.git")
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", str(mirror), str(checkout)], check=True)
    subprocess.run(["git", "-C", str(checkout), "checkout", "-q", demo.BASE_COMMIT], check=True)
    rows = demo.demo_rows(checkout)
    assert demo.dataset_text(rows) == demo.DATASET.read_text(encoding="utf-8")
    for row in rows:
        meta = row["meta"]
        original = (checkout / meta["file_path"]).read_text(encoding="utf-8")
        assert meta["left_context"] + meta["gt"] + meta["right_context"] == original
    instances = load_instances(load_records(str(demo.DATASET)))
    assert [i.problem for i in instances] == [None] * 4
    predictions = read_samples(demo.PREDICTIONS)
    assert [(p.instance_id, len(samples_of(p))) for p in predictions] == [
        ("1", 5),
        ("2", 3),
        ("3", 2),
        ("4", 1),
    ]


def test_the_metrics_of_the_recorded_demo_run_match_the_hand_computed_values() -> None:
    """Outcomes recorded from the demo run (tests/test_realcode_demo.py asserts the same per sample)."""
    records = json.loads(RECORDED.read_text())
    summary = summarise(records, "tests")["demo-model"]
    # samples passed per instance, by hand: repeat 3 of 5, reverse 2 of 3, center 0 of 2, wordCount 1 of 1
    assert summary["pass_at_1"] == pytest.approx((3 / 5 + 2 / 3 + 0 / 2 + 1 / 1) / 4)
    assert (summary["pass_at_5"], summary["pass_at_5_instances"]) == (1.0, 1)  # only repeat has 5 samples
    assert (summary["pass_at_10"], summary["pass_at_10_instances"]) == (None, 0)
    assert summary["compiled"] == pytest.approx(10 / 11)  # `return s * times;` does not compile
    assert (summary["pass_oracle"], summary["pass_stub"], summary["pass_dry_run"]) == (1.0, 0.0, 1.0)
    assert summary["execution_success"] == 1.0
    assert (summary["samples"], summary["samples_passed"]) == (11, 6)
    # a second model that errored on one instance and answered another empty: errors are not scores
    extra = [
        {**records[0], "model_name_or_path": "m2", "n": 2, "c": 1},
        {"instance_id": "2", "model_name_or_path": "m2", "status": "error"},
        {
            **records[2],
            "model_name_or_path": "m2",
            "status": "missing_prediction",
            "n": 0,
            "c": 0,
            "samples": [],
        },
    ]
    both = summarise([*records, *extra], "tests")
    # MERA's figure is the mean over every doc: the errored instance scores 0 there; the judged
    # share leaves it out
    assert both["m2"]["pass_at_1"] == pytest.approx((1 / 2 + 0 + 0) / 3)
    assert both["m2"]["pass_at_1_judged"] == pytest.approx((1 / 2 + 0) / 2)
    assert both["m2"]["pass_at_1_instances"] == 3
    # pass@5: only the missing prediction (0 at every k) is measured, and the error with it
    assert (both["m2"]["pass_at_5"], both["m2"]["pass_at_5_instances"]) == (0.0, 2)
    assert both["m2"]["pass_at_10_judged"] == 0.0
    assert both["m2"]["counts"]["errors"] == 1 and both["m2"]["missing_predictions"] == ["3"]
    pooled = overall(both)
    assert pooled["pass_at_1"] == pytest.approx((3 / 5 + 2 / 3 + 0 + 1 + 1 / 2 + 0 + 0) / 7)
    assert pooled["pass_at_1_judged"] == pytest.approx((3 / 5 + 2 / 3 + 0 + 1 + 1 / 2 + 0) / 6)
    assert pooled["pass_oracle"] == 1.0


def test_gates_terminal_lines_and_junit_properties_of_the_recorded_run() -> None:
    records = json.loads(RECORDED.read_text())
    summary = summarise(records, "tests")
    assert check_thresholds(summary, [("pass_at_1", 0.5), ("pass_oracle", 1.0)], metric_value) == []
    failures = check_thresholds(summary, [("pass_at_1", 0.6), ("pass_at_10", 0.1)], metric_value)
    assert failures == [
        "model 'demo-model': pass_at_1 0.567 < required 0.600; "
        "pass_at_10 not measured (no scored items; required >= 0.100)"
    ]
    lines = summary_lines(summary)
    assert lines[0].startswith("RealCodeJava (pass rule: tests")
    assert lines[3].split() == [
        "demo-model",
        "56.7",
        "100.0",
        "-",
        "100.0",
        "0.0",
        "100.0",
        "100.0",
        "90.9",
        "11",
    ]
    record = {**records[0], "rule": "tests", "pass_at_k": {"1": 0.6, "5": 1.0, "10": None}}
    properties = dict(junit_properties(record))
    assert properties["tebench.realcode.pass@1"] == 0.6 and properties["tebench.realcode.pass@10"] == ""
    assert properties["tebench.realcode.samples"] == "passed,passed,failed,compile_error,passed"


def test_the_demo_samples_are_cleaned_as_the_end_to_end_test_expects() -> None:
    instances = {i.instance_id: i.payload for i in load_instances(load_records(str(demo.DATASET)))}
    steps = {
        p.instance_id: [
            list(
                clean_answer(
                    raw,
                    method_name=instances[p.instance_id].intent_name,
                    indent=instances[p.instance_id].signature_indent(),
                ).steps
            )
            for raw in samples_of(p)
        ]
        for p in read_samples(demo.PREDICTIONS)
    }
    assert steps == {
        "1": [["fence", "signature"], [], [], [], ["cut"]],
        "2": [[], ["fence"], ["closed"]],
        "3": [[], []],
        "4": [[]],
    }


def test_a_parquet_export_of_the_card_schema_loads(tmp_path: Path) -> None:
    rows = [_row(), _row(id=8, FAIL_TO_PASS=["p.ATest::two"])]
    path = tmp_path / "realcode.parquet"
    write_dataset(rows, path)
    instances = load_instances(load_records(str(path)))
    assert [(i.instance_id, i.problem) for i in instances] == [("7", None), ("8", None)]
    assert instances[1].payload.fail_to_pass == (TestId("p.ATest", "two"),)


def test_the_rule_option_reaches_the_verdicts_and_the_cache_key(tmp_path: Path) -> None:
    tests_rule = create_adapter({}, tmp_path)
    mera_rule = create_adapter({"realcode_rule": "dry-run"}, tmp_path)
    instance = load_instances([RawRecord(_row(PASS_TO_PASS=["p.ATest::one", "p.ATest::two"]), "r:1")])[0]
    assert tests_rule.cache_key(instance) != mera_rule.cache_key(instance)
    assert mera_rule.report_fields()["realcode_rule"] == "dry-run"
    dry = {"p.ATest#one": "passed", "p.ATest#two": "failed"}
    run = {"status": "ok", "compiled": True, "tests_run": True, "tests": dict(dry)}
    assert judged(run, dry, instance.payload, "tests")["status"] == "failed"
    verdict = judged(run, dry, instance.payload, "dry-run")
    assert (verdict["status"], verdict["pass_tests"], verdict["pass_dry_run_rule"]) == ("passed", False, True)
    assert verdict["pass_to_pass"] == {"passed": 1, "total": 2}
    broken = {"status": "compile_error", "compiled": False, "tests_run": False, "tests": {}}
    assert judged(broken, dry, instance.payload, "dry-run")["status"] == "compile_error"
