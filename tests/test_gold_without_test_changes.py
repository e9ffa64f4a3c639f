"""Instances whose gold changes no test method are invalid instances, with the reason shown (no Maven).

Gold that only re-wraps or comments a test, or only adds a helper, names no item: a copy of gold
would score exactly like an empty patch, so such an instance cannot rank predictions
(docs/scoring.md, I11). Every item of it is ``invalid_instance``, excluded from the numbers and
listed in the summary; instances with a real gold change beside it are scored as usual.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import History
from conftest import write_jsonl

TEST = "src/test/java/p/CalcTest.java"
MAIN = "src/main/java/p/Calc.java"
CALC_TEST = """\
package p;

class CalcTest {
    @Test void adds() { check(1 + 1, 2); }
}
"""


def test_cosmetic_or_helper_only_gold_is_an_invalid_instance(
    make_history: Callable[[str], History], tmp_path: Path, pytester: pytest.Pytester
) -> None:
    h = make_history("calc")
    c0 = h.commit({MAIN: "class Calc { int add(int a, int b) { return a + b; } }\n", TEST: CALC_TEST})
    rewrapped = CALC_TEST.replace(
        "    @Test void adds() { check(1 + 1, 2); }",
        "    // one plus one\n    @Test\n    void adds() {\n        check(1 + 1, 2);\n    }",
    )
    c1 = h.commit({MAIN: "class Calc { int add(int a, int b) { return b + a; } }\n", TEST: rewrapped})
    helper = rewrapped.replace("}\n}\n", "}\n\n    void check(long a, long b) { }\n}\n")
    c2 = h.commit({MAIN: "class Calc { long add(long a, long b) { return a + b; } }\n", TEST: helper})
    real = helper.replace("check(1 + 1, 2);", "check(1L + 1L, 2L);")
    c3 = h.commit({MAIN: "class Calc { long add(long a, long b) { return b + a; } }\n", TEST: real})
    rows = [
        h.instance_row(c0, c1, instance_id="calc__rewrap", repo="acme/calc", labels=["stale"]),
        h.instance_row(c1, c2, instance_id="calc__helper", repo="acme/calc", labels=["stale"]),
        h.instance_row(c2, c3, instance_id="calc__real", repo="acme/calc", labels=["breaking"]),
    ]
    dataset = write_jsonl(tmp_path / "dataset.jsonl", rows)
    out = tmp_path / "report.json"
    result = pytester.runpytest(
        "--tebench-predictions=gold",
        f"--tebench-dataset={dataset}",
        f"--tebench-repos={h.path.parent}",
        f"--tebench-cache-dir={tmp_path / 'cache'}",
        "--tebench-offline",
        "--tebench-skip-update",
        f"--tebench-report={out}",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(
        ["*invalid instance: the gold test_patch of calc__rewrap modifies, deletes or adds no test method*"]
    )
    report = json.loads(out.read_text())
    statuses = {r["instance_id"]: r["status"] for r in report["results"]}
    assert statuses == {
        "calc__rewrap": "invalid_instance",
        "calc__helper": "invalid_instance",
        "calc__real": "evaluated",
    }
    summary = report["summary"]["gold"]
    assert summary["invalid_instances"] == ["calc__helper", "calc__rewrap"]
    assert summary["counts"]["invalid_instances"] == 2
    assert summary["identification"]["micro"]["items"] == 1  # only calc__real is scored
    assert summary["identification"]["micro"]["f1"] == 1.0
