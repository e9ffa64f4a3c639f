"""Hostile predictions end to end on the demo (issue 8), identification only: no builds.

Each prediction is gold's test patch plus one trick; the trick must be refused and said so in
the record, and never become part of what is scored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import PREDICTIONS
from conftest import DemoRun

INSTANCE = "textkit__867ea90c"
MAIN = "src/main/java/org/tebench/textkit/StringUtils.java"
T = "src/test/java/org/tebench/textkit/"


def _gold_and_main_edit() -> tuple[str, str]:
    (line,) = (json.loads(raw) for raw in (PREDICTIONS / "edits-main.jsonl").read_text().splitlines())
    patch = str(line["model_patch"])
    start = patch.index(f"diff --git a/{MAIN}")
    return patch[:start], patch[start:]


def _new_file(path: str, *lines: str) -> str:
    body = "".join(f"+{line}\n" for line in lines)
    return f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{body}"


def _predictions(path: Path, patches: dict[str, str]) -> Path:
    """A predictions file with one line per model, all for :data:`INSTANCE`."""
    path.write_text(
        "".join(
            json.dumps({"instance_id": INSTANCE, "model_name_or_path": model, "model_patch": patch}) + "\n"
            for model, patch in patches.items()
        ),
        encoding="utf-8",
    )
    return path


def test_hostile_predictions_are_refused_and_reported(demo_run: DemoRun, tmp_path: Path) -> None:
    gold, main_edit = _gold_and_main_edit()
    # the production hunk without its own `diff --git` line: it hides inside the test file's section
    smuggled = gold + main_edit[main_edit.index(f"--- a/{MAIN}") :]
    tricks = {
        "smuggle": smuggled,
        "shadow-production": gold
        + _new_file(
            f"{T}StringUtils.java", "package org.tebench.textkit;", "public final class StringUtils {}"
        ),
        "shadow-junit": gold
        + _new_file("src/test/java/org/junit/Assert.java", "package org.junit;", "public class Assert {}"),
        "platform": gold
        + _new_file("src/test/resources/junit-platform.properties", "junit.jupiter.conditions.deactivate=*"),
    }
    path = _predictions(tmp_path / "hostile.jsonl", tricks)
    result, report = demo_run(str(path), "--tebench-skip-update", "--tebench-skip-missing")
    results = report["results"]
    assert isinstance(results, list)
    records: dict[str, Any] = {r["model_name_or_path"]: r for r in results}
    result.assert_outcomes(passed=2, failed=2)

    smuggle = records["smuggle"]
    assert (smuggle["status"], smuggle["touched_non_test_files"]) == ("evaluated", [MAIN])
    assert smuggle["refused_files"] == [{"path": MAIN, "kind": "outside", "reason": "outside the test tree"}]
    assert smuggle["identification"]["f1"] == 1.0

    for model, declared in (
        ("shadow-production", "is a production class"),
        ("shadow-junit", "test-framework"),
    ):
        record = records[model]
        assert record["status"] == "not_applied", model
        assert declared in record["error"] and record["identification"]["tp"] == 0

    platform = records["platform"]
    assert platform["status"] == "evaluated"
    assert [(r["kind"], r["path"]) for r in platform["refused_files"]] == [
        ("test-platform", "src/test/resources/junit-platform.properties")
    ]


def test_a_prediction_that_leaves_the_tree_as_it_was_scores_as_an_empty_patch(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    # every piece refused, or context only: V-0.5's own tests must not score it (where they pass,
    # a patch of refused paths earned what an untouched tree does)
    _, main_edit = _gold_and_main_edit()
    test_file = f"{T}StringUtilsTest.java"
    context_only = (
        f"--- a/{test_file}\n+++ b/{test_file}\n@@ -1,2 +1,2 @@\n package org.tebench.textkit;\n \n"
    )
    tricks = {
        "production-only": main_edit,
        "escape": "--- a/../outside.txt\n+++ b/../outside.txt\n@@ -0,0 +1 @@\n+escaped\n",
        "context-only": context_only,
    }
    path = _predictions(tmp_path / "nothing.jsonl", tricks)
    _, report = demo_run(str(path), "--tebench-skip-update", "--tebench-skip-missing")
    records: dict[str, Any] = {r["model_name_or_path"]: r for r in report["results"]}
    production = records["production-only"]
    assert production["status"] == "not_applied"
    assert production["error"] == f"no piece of the prediction was applied: {MAIN} (outside the test tree)"
    assert records["escape"]["status"] == "not_applied"
    assert "../outside.txt (a path with '..')" in records["escape"]["error"]
    assert records["context-only"]["status"] == "empty" and records["context-only"]["error"] is None
    for record in records.values():
        assert record["identification"]["tp"] == 0 and record["identification"]["fn"] > 0
