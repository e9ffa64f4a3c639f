"""How big and how slow is the HTML report of a large run? A synthetic report, rendered.

    python bench/html_report_size.py [--instances 500] [--models 2] [--out /tmp/big.html]

The records have the JSON report's real shape (summary computed by the harness's own
``build_report``) and Java test patches of a typical TEBench size (60-200 changed lines) made of
varied identifiers, so the gzip ratio is not flattered by repetition. Prints the file size, its
parts, and the size per item.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.tebench.adapter import create_adapter
from pytest_tebench.report.html import render_html
from pytest_tebench.report.html_model import Run
from pytest_tebench.report.json_report import build_report

WORDS: tuple[str, ...] = ("parse", "wrap", "reverse", "slug", "count", "center", "pad", "encode")
WORDS += ("split", "join", "trim", "title", "camel", "snake", "token", "word")
LABELS = ("breaking", "stale", "missing")
STATUSES = ("evaluated",) * 85 + ("empty",) * 5 + ("not_applied",) * 5 + ("error",) * 3 + ("timeout",) * 2


def java_patch(rng: random.Random, name: str) -> str:
    lines = [
        f"diff --git a/src/test/java/org/example/{name}Test.java b/src/test/java/org/example/{name}Test.java",
        "index 1111111..2222222 100644",
        f"--- a/src/test/java/org/example/{name}Test.java",
        f"+++ b/src/test/java/org/example/{name}Test.java",
    ]
    for hunk in range(rng.randint(2, 6)):
        lines.append(f"@@ -{10 + hunk * 40},20 +{10 + hunk * 40},24 @@ class {name}Test {{")
        for _ in range(rng.randint(15, 40)):
            a, b = rng.sample(WORDS, 2)
            number = rng.randint(0, 10_000)
            code = rng.choice(
                [
                    f'    assertEquals("{a}-{number}", {name}.{b}("{a} {b}"));',
                    f"    @Test void {a}{b.capitalize()}{number}() {{",
                    f'        var {a} = new {name}({number}, "{b}"); // {a} {b}',
                    "    }",
                    f"        assertThrows(IllegalStateException.class, () -> {name}.{a}(null, {number}));",
                ]
            )
            lines.append(rng.choice(" ++-") + code)
    return "\n".join(lines) + "\n"


def synthetic_records(instances: int, models: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    records: list[dict[str, Any]] = []
    for i in range(instances):
        name = "".join(w.capitalize() for w in rng.sample(WORDS, 2))
        project = f"project-{i % 12}"
        labels = sorted(rng.sample(LABELS, rng.randint(1, 2)))
        gold = java_patch(rng, name)
        gold_items = [f"src/test/java/org/example/{name}Test.java::{w}" for w in rng.sample(WORDS, 4)]
        for m in range(models):
            status = rng.choice(STATUSES)
            predicted = [x for x in gold_items if rng.random() < 0.7] + (
                ["extra::x"] if rng.random() < 0.3 else []
            )
            tp = len(set(predicted) & set(gold_items))
            p = tp / len(predicted) if predicted else 0.0
            r = tp / len(gold_items)
            scored = status in ("evaluated", "empty", "not_applied")
            s = [rng.random() for _ in range(4)]
            records.append(
                {
                    "instance_id": f"{project}__{i:05d}",
                    "model_name_or_path": f"model-{m}",
                    "project": project,
                    "labels": labels,
                    "status": status,
                    "error": None if status == "evaluated" else f"{status}: synthetic\n" + "log line\n" * 20,
                    "apply_method": "git-apply",
                    "touched_non_test_files": [],
                    "identification": {
                        "tp": tp, "fp": len(predicted) - tp, "fn": len(gold_items) - tp,
                        "precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
                        "gold_items": gold_items, "predicted_items": predicted,
                    } if scored else None,
                    "update": {
                        "s_exec": s[0], "s_line": s[1], "s_branch": s[2], "s_mod": s[3],
                        "s_update": s[0] * (0.3 * s[1] + 0.3 * s[2] + 0.4 * s[3]),
                        "gt_has_coverage_change": True, "scoring": "paper", "status": "ok",
                        "tests": [{"class": f"org.example.{name}Test", "method": w, "status": "passed",
                                   "invocations": 1, "message": None} for w in rng.sample(WORDS, 5)],
                        "coverage": {"gold_lines": 40, "pred_lines_in_gold": 30, "gold_branches": 8,
                                     "pred_branches_in_gold": 5, "changed_methods": []},
                        "timings": {"compile": rng.random() * 5, "test": rng.random() * 20},
                    } if scored else None,
                    "timings": {"workspace": rng.random(), "gold_build": rng.random() * 30,
                                "prediction_build": rng.random() * 30},
                    "prediction_patch": java_patch(rng, name) if status != "empty" else "",
                    "gold_patch": gold,
                }
            )  # fmt: skip
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", type=int, default=500)
    parser.add_argument("--models", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    records = synthetic_records(args.instances, args.models)
    adapter = create_adapter({}, Path(tempfile.gettempdir()))
    report = build_report(
        records,
        summary=adapter.summarise(records),
        harness_version="bench",
        benchmark="tebench",
        dataset="synthetic",
        predictions="synthetic",
        fields=adapter.report_fields(),
        record_fields=adapter.record_fields,
    )
    started, cpu = time.perf_counter(), time.process_time()
    html = render_html([Run("synthetic", report)])
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    data = html.split('<script id="tebench-data" type="application/octet-stream">', 1)[1].split(
        "</script>", 1
    )[0]
    svgs = html.count("<svg")
    patches = sum(len(r["gold_patch"]) + len(r["prediction_patch"]) for r in records)
    size = len(html.encode("utf-8"))
    print(f"items: {len(records)} ({args.instances} instances x {args.models} models)")
    print(f"raw patch text in the records: {patches / 1e6:.2f} MB")
    print(
        f"HTML file: {size / 1e6:.2f} MB ({size / len(records) / 1e3:.1f} kB per item); "
        f"rendered in {seconds:.1f} s ({cpu:.1f} s of CPU)"
    )
    print(f"  item data (gzip+base64): {len(data) / 1e6:.2f} MB; {svgs} inline SVG plots and the rest: "
          f"{(size - len(data)) / 1e6:.2f} MB")  # fmt: skip
    if args.out:
        args.out.write_text(html, encoding="utf-8")
        print(f"written to {args.out}")


if __name__ == "__main__":
    main()
