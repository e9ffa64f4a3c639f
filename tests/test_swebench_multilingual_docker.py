"""A SWE-bench Multilingual row in official-image mode, end to end on a tiny Java project of ours
(no real repository): the image made here in the official layout (``/testbed`` = the project at
``base_commit``, a JDK), the row's own ``eval_script`` run there after the prediction, the log
graded by the row's ``log_parser`` (Ant's ``[junit]`` lines). Gold resolves, a wrong fix does not,
an empty patch is empty, and a patch touching the row's test file is refused before anything runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.run import docker_image
from pytest_tebench.workspace.gitcmd import git

pytest.importorskip("swebench")
pytestmark = pytest.mark.docker

REPO = "tebench-demo/jcalc"
INSTANCE = "tebench-demo__jcalc-1"
CALC = """public class Calc {
    static int clamp(int value, int low, int high) {
        return Math.max(low, Math.min(high, value));
    }
}
"""
FIXED = CALC.replace(
    "        return Math.max",
    '        if (low > high) throw new IllegalArgumentException("low > high");\n        return Math.max',
)
#: A tiny runner printing Ant's formatter lines ([junit] [PASS]/[FAIL] name(class)).
TEST = """public class CalcTest {
    static void check(String name, Runnable test) {
        try { test.run(); System.out.println("    [junit] [PASS] " + name + "(CalcTest)"); }
        catch (Throwable e) { System.out.println("    [junit] [FAIL] " + name + "(CalcTest)"); }
    }
    public static void main(String[] args) {
        check("clampsLow", () -> { if (Calc.clamp(-5, 0, 10) != 0) throw new AssertionError(); });
    }
}
"""
NEW_TEST = TEST.replace(
    "    }\n}\n",
    '        check("rejectsInvertedBounds", () -> {\n'
    "            try { Calc.clamp(1, 5, 0); } catch (IllegalArgumentException e) { return; }\n"
    '            throw new AssertionError("no exception"); });\n    }\n}\n',
)


def _diff(tree: Path, path: str, text: str) -> str:
    (tree / path).write_text(text)
    diff = git(tree, "diff", "--", path).stdout.decode()
    git(tree, "checkout", "--quiet", "--", path)
    return diff


def _eval_script(base: str, test_patch: str) -> str:
    # SWE-bench Multilingual's shape: reset the test files, apply test_patch, the test command
    # between the traced markers, reset again
    return "\n".join([
        "#!/bin/bash", "set -uxo pipefail", "cd /testbed",
        "git config --global --add safe.directory /testbed", "git status",
        f"git checkout {base} test/CalcTest.java",
        f"git apply -v - <<'EOF_114329324912'\n{test_patch}\nEOF_114329324912",
        ": '>>>>> Start Test Output'",
        "mkdir -p /tmp/classes",
        "(javac -d /tmp/classes src/Calc.java test/CalcTest.java && java -cp /tmp/classes CalcTest) | cat",
        ": '>>>>> End Test Output'",
        f"git checkout {base} test/CalcTest.java", "",
    ])  # fmt: skip


def _project(tmp_path: Path) -> tuple[Path, str]:
    tree = tmp_path / "context" / "testbed"
    (tree / "src").mkdir(parents=True)
    (tree / "test").mkdir()
    (tree / "src/Calc.java").write_text(CALC)
    (tree / "test/CalcTest.java").write_text(TEST)
    (tree / "src/Current.java").symlink_to("Calc.java")  # a link the image's repository has
    git(tree, "init", "--quiet")
    git(tree, "add", "--all")
    git(tree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "base")
    return tree, git(tree, "rev-parse", "HEAD").stdout.decode().strip()


def test_a_multilingual_row_runs_its_eval_script_in_an_official_layout_image(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    tree, base = _project(tmp_path)
    gold, test_patch = _diff(tree, "src/Calc.java", FIXED), _diff(tree, "test/CalcTest.java", NEW_TEST)
    wrong = _diff(tree, "src/Calc.java", CALC.replace("Math.max(low", "Math.max(low - 0"))
    image = f"swebench/sweb.eval.x86_64.tebench-demo_1776_jcalc-1:{base[:12]}"
    (tmp_path / "context/Dockerfile").write_text(
        f"FROM {docker_image.image_tag()}\nUSER root\nCOPY testbed /testbed\nWORKDIR /testbed\n"
    )
    # the grading looks the repository up as SWE-bench does: registered as the demo registers its own
    official.register_repository(REPO, {"1": {"test_cmd": "java CalcTest"}}, "parse_log_ant")
    row: dict[str, Any] = {
        "repo": REPO, "instance_id": INSTANCE, "base_commit": base, "version": "1",
        "patch": gold, "test_patch": test_patch,
        "FAIL_TO_PASS": ["rejectsInvertedBounds(CalcTest)"], "PASS_TO_PASS": ["clampsLow(CalcTest)"],
        "log_parser": "parse_log_ant", "eval_type": "pass_and_fail", "image": image,
        "eval_script": _eval_script(base, test_patch),
    }  # fmt: skip
    dataset = pytester.path / "rows.jsonl"
    dataset.write_text(json.dumps(row) + "\n")
    predictions = pytester.path / "preds.jsonl"
    # a plain hunk on the image's link, no mode line: git would retarget it
    retarget = (
        "diff --git a/src/Current.java b/src/Current.java\n--- a/src/Current.java\n+++ b/src/Current.java\n"
        "@@ -1 +1 @@\n-Calc.java\n\\ No newline at end of file\n+/etc/passwd\n\\ No newline at end of file\n"
    )
    lines = [
        ("fixer", gold), ("wrong", wrong), ("empty", ""), ("test-editor", test_patch + gold),
        ("retargeter", gold + retarget),
    ]  # fmt: skip
    predictions.write_text(
        "".join(
            json.dumps({"instance_id": INSTANCE, "model_name_or_path": m, "model_patch": p}) + "\n"
            for m, p in lines
        )
    )
    client = docker_image.connect()
    try:
        client.images.build(path=str(tmp_path / "context"), tag=image, rm=True, forcerm=True)
        report = tmp_path / "report.json"
        result = pytester.runpytest(
            "-p", "no:cacheprovider", "--tebench-benchmark=swebench", f"--tebench-dataset={dataset}",
            f"--tebench-predictions={predictions}", f"--tebench-cache-dir={tmp_path / 'cache'}",
            "--tebench-swebench-images=official", f"--tebench-report={report}", "-m", "lang_java",
        )  # fmt: skip
        result.assert_outcomes(passed=1, failed=4)
    finally:
        client.images.remove(image, force=True)
        client.close()
    records = {r["model_name_or_path"]: r for r in json.loads(report.read_text())["results"]}
    fixed = records["fixer"]
    assert (fixed["status"], fixed["apply_method"]) == ("evaluated", "git apply --verbose")
    block = fixed["swebench"]
    assert (block["environment"], block["image"], block["language"]) == ("official", image, "java")
    assert (block["resolved"], block["log_parser"], block["eval_type"]) == (
        True,
        "parse_log_ant",
        "pass_and_fail",
    )
    assert block["f2p_success"] == ["rejectsInvertedBounds(CalcTest)"] and block["p2p_failure"] == []
    assert fixed["guard"]["active"] is False and "no in-process guard for java" in fixed["guard"]["reason"]
    wrong_block = records["wrong"]["swebench"]
    assert (records["wrong"]["status"], wrong_block["resolution"]) == ("evaluated", "RESOLVED_NO")
    assert wrong_block["f2p_failure"] == ["rejectsInvertedBounds(CalcTest)"]
    assert records["empty"]["status"] == "empty"
    refused = records["test-editor"]
    assert (refused["status"], refused["swebench"]["resolved"]) == ("refused", False)
    assert [(f["path"], f["rule"]) for f in refused["refused_files"]] == [
        ("test/CalcTest.java", "test-patch")
    ]
    assert "tests" not in refused["timings"]
    retargeted = records["retargeter"]
    assert retargeted["status"] == "refused" and "tests" not in retargeted["timings"]
    assert [(f["path"], f["rule"]) for f in retargeted["refused_files"]] == [("src/Current.java", "link")]
