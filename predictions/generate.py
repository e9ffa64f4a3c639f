"""Regenerate the demo prediction files in this folder from readable edit specifications.

Every prediction is made the way a system would make it: start from the instance's V-0.5
workspace (built by the harness itself), edit files, and take ``git diff --binary``. The
expected scores of these files are computed by hand in ``tests/test_demo_predictions.py``;
this script only writes inputs.

    python predictions/generate.py        # rewrites predictions/*.jsonl
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

from pytest_tebench.demo import DEMO_REPO
from pytest_tebench.demo import build_demo_mirror
from pytest_tebench.instance.datasets import demo_dataset_path
from pytest_tebench.workspace.checkout import Workspace
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.gitcmd import git_text

HERE = Path(__file__).resolve().parent
T = "src/test/java/org/tebench/textkit/"
ROWS = {
    json.loads(line)["instance_id"]: json.loads(line) for line in demo_dataset_path().read_text().splitlines()
}

Edit = Callable[[Path], None]


def replace(path: str, old: str, new: str) -> Edit:
    def edit(root: Path) -> None:
        text = (root / path).read_text(encoding="utf-8")
        if old not in text:
            raise SystemExit(f"{path}: text to replace not found: {old!r}")
        (root / path).write_text(text.replace(old, new, 1), encoding="utf-8")

    return edit


def write(path: str, text: str) -> Edit:
    def edit(root: Path) -> None:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")

    return edit


def delete(path: str) -> Edit:
    return lambda root: (root / path).unlink()


def from_gold(instance_id: str, path: str, drop: str) -> Edit:
    """Gold's version of ``path`` with the text ``drop`` removed."""

    def edit(root: Path) -> None:
        text = git_text(MIRROR, "show", f"{ROWS[instance_id]['v0_commit']}:{path}")
        if drop not in text:
            raise SystemExit(f"{path}: text to drop not found")
        write(path, text.replace(drop, ""))(root)

    return edit


def diff(instance_id: str, edits: list[Edit]) -> str:
    row = ROWS[instance_id]
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.create(MIRROR, row["v_minus_1_commit"], row["source_patch"], parent=Path(tmp))
        for edit in edits:
            edit(ws.path)
        git(ws.path, "add", "--all")
        return git_text(ws.path, "diff", "--cached", "--binary", "--full-index", "v-0.5")


def entry(instance_id: str, model: str, patch: str) -> dict[str, str]:
    return {"instance_id": instance_id, "model_name_or_path": model, "model_patch": patch}


def dump(name: str, entries: list[dict[str, str]]) -> None:
    (HERE / name).write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")


I1, I2, I3, I4 = "textkit__69c4649c", "textkit__c839cc1f", "textkit__6f3adb06", "textkit__389d5077"
I7, I8, I9 = "textkit__dcc8e655", "textkit__867ea90c", "textkit__50a6637a"

LONG_WORD_OLD = 'assertEquals("a\\nsupercalifragilistic\\nb", WordWrap.wrap("a supercalifragilistic b", 8));'
LONG_WORD_NEW = (
    'assertEquals("a\\nsupercal\\nifragili\\nstic b", WordWrap.wrap("a supercalifragilistic b", 8));'
)
UNICODE_TEST = T + "StringUtilsUnicodeTest.java"
SECOND_UNICODE_TEST = """
    @Test
    void reverseOfOnlySupplementaryCharacters() {
        assertEquals(MUSICAL_G_CLEF + GRINNING_FACE, StringUtils.reverse(GRINNING_FACE + MUSICAL_G_CLEF));
        assertEquals(GRINNING_FACE, StringUtils.reverse(GRINNING_FACE));
    }
"""


def main() -> None:
    ids = list(ROWS)
    dump("gold-copy.jsonl", [entry(i, "gold-copy", ROWS[i]["test_patch"]) for i in ids])
    dump("empty.jsonl", [entry(i, "empty", "") for i in ids])

    partial = [
        # I1: the right fix of handlesLongWord, zeroWidth forgotten, an unrelated test touched
        entry(
            I1,
            "partial",
            "I updated the tests.\n<patch>\n"
            + diff(
                I1,
                [
                    replace(T + "WrapTest.java", LONG_WORD_OLD, LONG_WORD_NEW),
                    replace(
                        T + "WrapTest.java",
                        'WordWrap.wrap("the quick brown fox", 10));',
                        'WordWrap.wrap("the quick brown fox", 10));\n        assertEquals("a b", WordWrap.wrap("a b", 5));',
                    ),
                ],
            )
            + "</patch>\n",
        ),
        # I3: a new test, but in the old StringUtilsTest instead of a new file
        entry(
            I3,
            "partial",
            "```diff\n"
            + diff(
                I3,
                [
                    replace(
                        T + "StringUtilsTest.java",
                        "    @Test\n    void abbreviatesLongText()",
                        "    @Test\n    void reverseKeepsEmoji() {\n"
                        '        assertEquals("b\\uD83D\\uDE00a", StringUtils.reverse("a\\uD83D\\uDE00b"));\n    }\n\n'
                        "    @Test\n    void abbreviatesLongText()",
                    ),
                ],
            )
            + "```\n",
        ),
        # I4: countsWords and its data fixed, the old hyphen test replaced; averagesWordLength missed
        entry(
            I4,
            "partial",
            diff(
                I4,
                [
                    replace(
                        T + "TextStatsTest.java",
                        'Arguments.of("well-known fact", 3)',
                        'Arguments.of("well-known fact", 2)',
                    ),
                    replace(
                        T + "TextStatsTest.java",
                        "assertEquals(expected, TextStats.wordCount(text));",
                        "assertEquals(expected, TextStats.wordCount(text), text);",
                    ),
                    replace(
                        T + "TextStatsTest.java",
                        '    void hyphenSplitsWords() {\n        assertEquals(2, TextStats.wordCount("x-ray"));',
                        '    void hyphenatedWordIsOneWord() {\n        assertEquals(1, TextStats.wordCount("x-ray"));',
                    ),
                ],
            ),
        ),
        # I9: the dead legacy tests removed, the kebab-case test not updated
        entry(I9, "partial", diff(I9, [delete(T + "CaseConverterLegacyTest.java")])),
    ]
    dump("partial.jsonl", partial)

    update_cases = [
        # I3: one of gold's two new tests, verbatim
        entry(I3, "update-cases", diff(I3, [from_gold(I3, UNICODE_TEST, SECOND_UNICODE_TEST)])),
        # I1: handlesLongWord fixed, zeroWidth (which throws on V-0.5) left as it was
        entry(I1, "update-cases", diff(I1, [replace(T + "WrapTest.java", LONG_WORD_OLD, LONG_WORD_NEW)])),
        # I7: zeroMaxLength rewritten against a constructor that does not exist: test compilation fails
        entry(
            I7,
            "update-cases",
            diff(
                I7,
                [
                    replace(
                        T + "SlugifierTest.java",
                        "assertEquals(\"a-fairly-long-title-with-many-words\", new Slugifier('-', 0).slugify(title));",
                        "assertEquals(\"\", new Slugifier('-', 0, true).slugify(title));",
                    ),
                ],
            ),
        ),
        # I2: camelWords expects the old, wrong snake case of an acronym: the assertion fails
        entry(
            I2,
            "update-cases",
            diff(
                I2,
                [
                    replace(
                        T + "CaseConverterTest.java",
                        'assertEquals("hello_world", CaseConverter.toSnakeCase("helloWorld"));',
                        'assertEquals("hello_world", CaseConverter.toSnakeCase("helloWorld"));\n'
                        '            assertEquals("parse_x_m_l", CaseConverter.toSnakeCase("parseXML"));',
                    ),
                ],
            ),
        ),
    ]
    dump("update-cases.jsonl", update_cases)
    dump(
        "null-only.jsonl",
        [
            # I3: a new test of reverse(null) only: a sliver of gold's coverage, nothing like gold's tests
            entry(
                I3,
                "null-only",
                diff(
                    I3,
                    [
                        write(
                            T + "StringUtilsNullTest.java",
                            "package org.tebench.textkit;\n\nimport static org.junit.jupiter.api.Assertions.assertNull;\n\n"
                            "import org.junit.jupiter.api.Test;\n\nclass StringUtilsNullTest {\n\n    @Test\n"
                            "    void reverseOfNull() {\n        assertNull(StringUtils.reverse(null));\n    }\n}\n",
                        )
                    ],
                ),
            ),
        ],
    )

    main_edit = (
        "diff --git a/src/main/java/org/tebench/textkit/StringUtils.java b/src/main/java/org/tebench/textkit/StringUtils.java\n"
        + diff(
            I8,
            [
                replace(
                    "src/main/java/org/tebench/textkit/StringUtils.java",
                    "        if (s == null || s.isEmpty()) {",
                    "        if (s == null || s.isEmpty() {",
                )
            ],
        ).split(
            "diff --git a/src/main/java/org/tebench/textkit/StringUtils.java b/src/main/java/org/tebench/textkit/StringUtils.java\n",
            1,
        )[1]
    )
    dump("edits-main.jsonl", [entry(I8, "edits-main", ROWS[I8]["test_patch"] + main_edit)])

    # written against a test that never existed: the removed line is nowhere in V-0.5, and without
    # an index line git cannot fall back to a three-way merge
    stale = "".join(
        line.replace("helloWorld", "helloThere") if line.startswith("-    ") else line
        for line in ROWS[I2]["test_patch"].splitlines(keepends=True)
        if not line.startswith("index ")
    )
    dump(
        "not-applying.jsonl",
        [
            entry(I2, "stale-context", stale),
            entry(
                I9,
                "stale-context",
                "diff --git a/src/test/java/org/tebench/textkit/Missing.java b/src/test/java/org/tebench/textkit/Missing.java\n"
                "--- a/src/test/java/org/tebench/textkit/Missing.java\n+++ b/src/test/java/org/tebench/textkit/Missing.java\n"
                "@@ -1,3 +1,3 @@\n class Missing {\n-    int a;\n+    int b;\n }\n",
            ),
        ],
    )

    dump("raw-outputs.jsonl", raw_outputs(ids))


def raw_outputs(ids: list[str]) -> list[dict[str, str]]:
    """Gold patches wrapped as a language model answers a ``tebench text`` prompt, in the shapes seen:
    ``full_output`` only (the raw completion), or ``model_patch`` holding ``<patch>`` or a diff fence."""
    outputs: list[dict[str, str]] = []
    for number, instance_id in enumerate(ids):
        patch = ROWS[instance_id]["test_patch"]
        if number % 3 == 0:
            raw = f"The change breaks these tests; here is the fix.\n\n<patch>\n{patch}</patch>\n"
            outputs.append({"instance_id": instance_id, "model_name_or_path": "lm-raw", "full_output": raw})
        elif number % 3 == 1:
            outputs.append(entry(instance_id, "lm-raw", f"<patch>\n{patch}</patch>"))
        else:
            outputs.append(entry(instance_id, "lm-raw", f"Updated tests:\n\n```diff\n{patch}```\nDone."))
    return outputs


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as mirror_dir:
        MIRROR = build_demo_mirror(Path(mirror_dir) / f"{DEMO_REPO.replace('/', '+')}.git")
        main()
