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
    path = tmp_path / "hostile.jsonl"
    path.write_text(
        "".join(
            json.dumps({"instance_id": INSTANCE, "model_name_or_path": model, "model_patch": patch}) + "\n"
            for model, patch in tricks.items()
        ),
        encoding="utf-8",
    )
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
