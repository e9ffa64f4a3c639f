"""The plugin end to end with pytester, on throwaway repositories (identification only, no Maven).

The demo benchmark's end-to-end tests, with real Maven builds, are in test_demo_e2e.py.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import History
from conftest import write_jsonl

TEST = "src/test/java/p/CalcTest.java"
MAIN = "src/main/java/p/Calc.java"
CALC_TEST = """\
package p;

class CalcTest {
    @Test void adds() { check(1 + 1, 2); }

    @Test void subtracts() { check(2 - 1, 1); }

    @Test void multiplies() { check(2 * 2, 4); }
}
"""


@pytest.fixture
def bench(make_history: Callable[[str], History], tmp_path: Path) -> dict[str, Any]:
    """Two instances of project 'calc': one stale+missing, one breaking."""
    h = make_history("calc")
    c0 = h.commit({MAIN: "class Calc { int add(int a, int b) { return a + b; } }\n", TEST: CALC_TEST})
    c1 = h.commit(
        {
            MAIN: "class Calc { int add(int a, int b) { return b + a; } }\n",
            TEST: CALC_TEST.replace("check(1 + 1, 2)", "check(1 + 2, 3)").replace(
                "    @Test void multiplies",
                "    @Test void addsZero() { check(0 + 1, 1); }\n\n    @Test void multiplies",
            ),
        }
    )
    c2 = h.commit(
        {
            MAIN: "class Calc { long add(long a, long b) { return a + b; } }\n",
            TEST: None,
            "src/test/java/p/CalcV2Test.java": "class CalcV2Test { @Test void addsLongs() { } }\n",
        }
    )
    rows = [
        h.instance_row(c0, c1, instance_id="calc__one", repo="acme/calc", labels=["stale", "missing"]),
        h.instance_row(c1, c2, instance_id="calc__two", repo="acme/calc", labels=["breaking"]),
    ]
    dataset = write_jsonl(tmp_path / "dataset.jsonl", rows)
    return {"rows": rows, "dataset": dataset, "repos": h.path.parent, "cache": tmp_path / "cache"}


def _args(bench: dict[str, Any], predictions: str, *extra: str) -> list[str]:
    return [
        f"--tebench-predictions={predictions}",
        f"--tebench-dataset={bench['dataset']}",
        f"--tebench-repos={bench['repos']}",
        f"--tebench-cache-dir={bench['cache']}",
        "--tebench-offline",
        "--tebench-skip-update",  # these repositories have no build: identification only
        "-p",
        "no:cacheprovider",
        *extra,
    ]


def _report(path: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(path.read_text())
    return report


@pytest.mark.parametrize("workers", ["0", "2"])
def test_gold_scores_perfectly_and_identically_with_xdist(
    pytester: pytest.Pytester, bench: dict[str, Any], workers: str
) -> None:
    out = pytester.path / "report.json"
    result = pytester.runpytest(*_args(bench, "gold", f"--tebench-report={out}", "-n", workers))
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["*tebench summary*", "model: gold*2 evaluated*", "*Overall (micro)*100.0*100.0*100.0*"]
    )
    report = _report(out)
    micro = report["summary"]["gold"]["identification"]["micro"]
    # calc__one: adds modified + <added> in CalcTest; calc__two: 4 deleted tests + <added> in CalcV2Test
    assert (micro["tp"], micro["fp"], micro["fn"], micro["f1"]) == (7, 0, 0, 1.0)
    assert [r["identification"]["gold_items"] for r in report["results"]] == [
        [f"{TEST}::<added>", f"{TEST}::CalcTest#adds"],
        [
            f"{TEST}::CalcTest#adds",
            f"{TEST}::CalcTest#addsZero",
            f"{TEST}::CalcTest#multiplies",
            f"{TEST}::CalcTest#subtracts",
            "src/test/java/p/CalcV2Test.java::<added>",
        ],
    ]
    baseline = pytester.path / "baseline.json"
    pytester.runpytest(
        *_args(bench, "gold", f"--tebench-report={baseline}", "-n", "0" if workers == "2" else "2"),
        "--tebench-rerun",  # evaluated again, not taken from the first run's stored results
    )

    def untimed(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in r.items() if k != "timings"} for r in results]

    assert untimed(_report(baseline)["results"]) == untimed(report["results"])


def test_every_kind_of_bad_prediction_gets_its_status(
    pytester: pytest.Pytester, bench: dict[str, Any]
) -> None:
    one, two = bench["rows"]
    partial = one["test_patch"].split("@@")[0]  # headers only: not a usable diff
    predictions = write_jsonl(
        pytester.path / "run.jsonl",
        [
            {"instance_id": "calc__one", "model_name_or_path": "m", "model_patch": one["test_patch"]},
            {"instance_id": "calc__two", "model_name_or_path": "m", "model_patch": ""},
            {
                "instance_id": "calc__one",
                "model_name_or_path": "broken",
                "model_patch": partial + "@@ -1 +1 @@\n-zzz\n+y\n",
            },
            "{this is not json",
            {"instance_id": "calc__nine", "model_name_or_path": "m", "model_patch": one["test_patch"]},
            {
                "instance_id": "calc__two",
                "model_name_or_path": "broken",
                "model_patch": f"<patch>\n{two['test_patch']}</patch>",
            },
        ],
    )
    out = pytester.path / "report.json"
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest(
        *_args(bench, str(predictions), f"--tebench-report={out}", f"--junitxml={junit}")
    )
    result.assert_outcomes(passed=2, failed=2, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*run.jsonl:4: malformed JSON*",
            "*run.jsonl:5: unknown instance_id 'calc__nine'*",
        ]
    )
    statuses = {(r["model_name_or_path"], r["instance_id"]): r["status"] for r in _report(out)["results"]}
    assert statuses == {
        ("m", "calc__one"): "evaluated",
        ("m", "calc__two"): "empty",
        ("broken", "calc__one"): "not_applied",
        ("broken", "calc__two"): "evaluated",
        ("unknown-model", "entry4"): "error",  # the malformed line 4: no id to name it by
        ("m", "calc__nine"): "error",
    }
    summary = _report(out)["summary"]
    assert summary["m"]["counts"] == {
        "items": 3, "scored": 2, "evaluated": 1, "empty": 1, "not_applied": 0, "missing_predictions": 0,
        "refused": 0, "tampered": 0,
        "errors": 1, "timeouts": 0, "invalid_instances": 0, "unsupported": 0,
    }  # fmt: skip
    # m: calc__one exact (tp 2), calc__two empty (fn 5) -> P 1, R 2/7, F1 (4/7)/(9/7) = 4/9
    assert summary["m"]["identification"]["micro"] == {
        "precision": 1.0, "recall": 0.285714, "f1": 0.444444, "tp": 2, "fp": 0, "fn": 5, "items": 2,
    }  # fmt: skip
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    props = {p.get("name"): p.get("value") for p in cases["calc__one[m]"].iter("property")}
    assert props["tebench.status"] == "evaluated"
    assert props["tebench.identification.f1"] == "1.0"
    assert props["tebench.labels"] == "stale,missing"
    assert cases["calc__two[m]"].find("failure") is not None  # empty: a model failure
    assert cases["calc__nine[m]"].find("error") is not None  # unknown id: not a score


def test_a_dataset_row_no_prediction_can_name_is_an_error_item_per_model(
    pytester: pytest.Pytester, bench: dict[str, Any]
) -> None:
    # an unreadable row has no instance_id: no prediction can name it, and it must not vanish
    dataset = Path(bench["dataset"])
    dataset.write_text(dataset.read_text() + "{this row is not json\n")
    one, two = bench["rows"]
    predictions = write_jsonl(
        pytester.path / "run.jsonl",
        [
            {"instance_id": "calc__one", "model_name_or_path": "m", "model_patch": one["test_patch"]},
            {"instance_id": "calc__two", "model_name_or_path": "m", "model_patch": two["test_patch"]},
        ],
    )
    out = pytester.path / "report.json"
    result = pytester.runpytest(*_args(bench, str(predictions), f"--tebench-report={out}"))
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [f"input error (not scored): {dataset}:3: instance <row {dataset}:3>: malformed JSON*"]
    )
    statuses = {(r["model_name_or_path"], r["instance_id"]): r["status"] for r in _report(out)["results"]}
    assert statuses == {
        ("m", "calc__one"): "evaluated",
        ("m", "calc__two"): "evaluated",
        ("m", f"<row {dataset}:3>"): "error",
    }
    # the file names it: gold too has one item of it (its own line), not two
    gold = pytester.runpytest(*_args(bench, "gold"))
    gold.assert_outcomes(passed=2, errors=1)


def test_min_f1_fails_the_session_with_a_reason(pytester: pytest.Pytester, bench: dict[str, Any]) -> None:
    one, _ = bench["rows"]
    predictions = write_jsonl(
        pytester.path / "run.jsonl",
        [{"instance_id": "calc__one", "model_name_or_path": "m", "model_patch": one["test_patch"]},
         {"instance_id": "calc__two", "model_name_or_path": "m", "model_patch": None}],
    )  # fmt: skip
    result = pytester.runpytest(*_args(bench, str(predictions), "--tebench-min-f1=0.6"))
    result.assert_outcomes(passed=1, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["FAIL model 'm': f1 0.444 < required 0.600"])
    passing = pytester.runpytest(*_args(bench, "gold", "--tebench-min-f1=0.6"))
    assert passing.ret == pytest.ExitCode.OK


def test_select_with_k_and_markers(pytester: pytest.Pytester, bench: dict[str, Any]) -> None:
    result = pytester.runpytest(*_args(bench, "gold", "-k", "calc__two", "--strict-markers"))
    result.assert_outcomes(passed=1, deselected=1)
    result = pytester.runpytest(*_args(bench, "gold", "-m", "stale and not breaking", "--strict-markers"))
    result.assert_outcomes(passed=1, deselected=1)
    result = pytester.runpytest(*_args(bench, "gold", "-m", "calc and breaking", "--strict-markers", "-v"))
    result.stdout.fnmatch_lines(["*gold::calc__two?gold? PASSED*"])
    result = pytester.runpytest(
        *_args(bench, "gold", "-m", "tebench(project='calc')", "--collect-only", "-q")
    )
    result.stdout.fnmatch_lines(["gold::calc__one[[]gold[]]", "gold::calc__two[[]gold[]]"])


def test_unavailable_repository_is_an_error_not_a_zero(
    pytester: pytest.Pytester, bench: dict[str, Any]
) -> None:
    out = pytester.path / "report.json"
    args = _args(bench, "gold", f"--tebench-report={out}")
    args[2] = f"--tebench-repos={pytester.path}"  # nothing there, and --tebench-offline
    result = pytester.runpytest(*args)
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*harness error: acme/calc is not available locally*"])
    summary = _report(out)["summary"]["gold"]
    assert summary["counts"]["errors"] == 2
    assert summary["identification"]["micro"]["f1"] is None


def test_plugin_is_inert_without_its_options(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_ok():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "tebench summary" not in out and "TebenchFile" not in out


def test_help_lists_the_option_group(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(
        ["pytest-tebench: evaluate benchmark predictions*", "*--tebench-predictions=PATH|gold*"]
    )


def test_bad_option_values_are_usage_errors(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--tebench-predictions=gold", "--tebench-min-f1=1.5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--tebench-min-f1: must be between 0 and 1, got 1.5*"])
    result = pytester.runpytest("--tebench-predictions=nope.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--tebench-predictions: nope.jsonl: file not found*"])


def test_a_cache_dir_that_cannot_be_written_is_a_usage_error(pytester: pytest.Pytester) -> None:
    not_a_dir = pytester.path / "cache"
    not_a_dir.write_text("")
    result = pytester.runpytest("--tebench-predictions=gold", f"--tebench-cache-dir={not_a_dir}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--tebench-cache-dir: cannot write to {not_a_dir}: Not a directory*"])


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--tebench-timeout-test=-3", "--tebench-timeout-test: must be positive, got -3"),
        ("--tebench-timeout-compile=soon", "--tebench-timeout-compile: not a number of seconds: 'soon'"),
        ("--tebench-docker-cpus=many", "--tebench-docker-cpus: not a number of CPUs: 'many'"),
        (
            "--tebench-docker-memory=lots",
            "--tebench-docker-memory: not a memory size like 4g or 512m: 'lots'",
        ),
        (
            "--tebench-docker-memory=0",
            "--tebench-docker-memory: '0' is less than Docker's smallest memory limit, 6m",
        ),
        (
            "--tebench-docker-memory=5m",
            "--tebench-docker-memory: '5m' is less than Docker's smallest memory limit",
        ),
        ("--tebench-docker-memory=\u0664g", "--tebench-docker-memory: not a memory size like 4g or 512m"),
        ("--tebench-jdk=seventeen", "--tebench-jdk: not a JDK feature version or directory: 'seventeen'"),
        ("--tebench-jdk=\u00b2", "--tebench-jdk: not a JDK feature version or directory"),
        ("--tebench-maven=3.9", "--tebench-maven: not a Maven version like 3.9.9: '3.9'"),
        ("--tebench-timeout-warmup=0", "--tebench-timeout-warmup: must be positive, got 0"),
        ("--tebench-gold-runs=0", "--tebench-gold-runs: not a number of gold runs from 1 to 20: '0'"),
        ("--tebench-scoring=median", "--tebench-scoring: invalid choice: 'median'*"),
        (
            "--tebench-repo-url=https://example.invalid/x.git",
            "--tebench-repo-url: the URL template must contain {repo}",
        ),
    ],
)
def test_option_values_are_validated(pytester: pytest.Pytester, option: str, message: str) -> None:
    result = pytester.runpytest("--tebench-predictions=gold", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])
