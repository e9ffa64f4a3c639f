from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_tebench.errors import InputError
from pytest_tebench.instance.predictions import extract_patch
from pytest_tebench.instance.predictions import load_predictions

DIFF = "diff --git a/src/test/A.java b/src/test/A.java\n--- a/src/test/A.java\n+++ b/src/test/A.java\n@@ -1 +1 @@\n-a\n+b\n"


def test_plain_diff_passes_through() -> None:
    assert extract_patch(DIFF) == (DIFF, "as-is")


def test_patch_tag_is_extracted() -> None:
    raw = f"Here is my fix.\n<patch>\n{DIFF}</patch>\nThanks!"
    assert extract_patch(raw) == (DIFF, "patch-tag")


def test_diff_fences_are_extracted_and_joined() -> None:
    second = DIFF.replace("A.java", "B.java")
    raw = f"First:\n```diff\n{DIFF}```\nand some java:\n```java\nclass X {{}}\n```\n```patch\n{second}```"
    assert extract_patch(raw) == (DIFF + second, "diff-fence")


def test_jsonl_bad_lines_are_kept_with_their_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"instance_id": "a", "model_name_or_path": "m", "model_patch": DIFF}),
                "{not json",
                "",
                json.dumps({"instance_id": "b", "model_patch": DIFF}),
                json.dumps(["a list"]),
                json.dumps({"instance_id": "a", "model_name_or_path": "m", "model_patch": "x"}),
                json.dumps({"instance_id": "c", "model_name_or_path": "m", "model_patch": None}),
                json.dumps({"instance_id": "d", "model_name_or_path": "m", "model_patch": 3}),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    predictions = load_predictions(path)
    problems = [(p.origin.rsplit(":", 1)[1], p.problem) for p in predictions if p.problem]
    assert problems == [
        ("2", "malformed JSON: Expecting property name enclosed in double quotes (column 2)"),
        ("4", "field 'model_name_or_path' is missing or not a non-empty string"),
        ("5", "an entry must be a JSON object"),
        ("6", f"duplicate of {path}:1"),
        ("8", "field 'model_patch' must be a string or null"),
    ]
    good = [p for p in predictions if p.problem is None]
    assert [(p.instance_id, p.is_empty) for p in good] == [("a", False), ("c", True)]


def test_duplicates_keep_the_first_line_scored(tmp_path: Path) -> None:
    # issue 8 item 2: a later line with the same (instance, model) must never replace the first
    path = tmp_path / "run.jsonl"
    lines = [
        {"instance_id": "a", "model_name_or_path": "m", "model_patch": DIFF},
        {"instance_id": "a", "model_name_or_path": "other", "model_patch": DIFF},
        {"instance_id": "a", "model_name_or_path": "m", "model_patch": "garbage"},
        {"instance_id": "a", "model_name_or_path": "m", "model_patch": DIFF},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    first, other, second, third = load_predictions(path)
    assert (first.problem, first.patch, other.problem) == (None, DIFF, None)
    assert second.problem == third.problem == f"duplicate of {path}:1"
    assert (second.origin, third.origin) == (f"{path}:3", f"{path}:4")


def test_a_byte_order_mark_is_not_part_of_the_first_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    line = json.dumps({"instance_id": "a", "model_name_or_path": "m", "model_patch": DIFF})
    path.write_bytes(b"\xef\xbb\xbf" + line.encode() + b"\n")
    (only,) = load_predictions(path)
    assert (only.problem, only.patch) == (None, DIFF)


def test_a_diff_fence_is_not_cut_at_backticks_inside_the_patch() -> None:
    markdown = DIFF.replace("+b\n", "+```java\n+code\n+```\n").replace("-1 +1", "-1 +1,3")
    raw = f"Sure:\n```diff\n{markdown}```\nDone, and `inline` code ```is``` fine.\n"
    assert extract_patch(raw) == (markdown, "diff-fence")
    longer = f"````patch\n{markdown}````\n"
    assert extract_patch(longer) == (markdown, "diff-fence")


def test_json_list_and_id_keyed_dict(tmp_path: Path) -> None:
    as_list = tmp_path / "list.json"
    as_list.write_text(json.dumps([{"instance_id": "a", "model_name_or_path": "m", "model_patch": DIFF}]))
    as_dict = tmp_path / "dict.json"
    as_dict.write_text(json.dumps({"a": {"model_name_or_path": "m", "model_patch": DIFF}}))
    for path in (as_list, as_dict):
        (only,) = load_predictions(path)
        assert (only.instance_id, only.model_name_or_path, only.patch, only.problem) == ("a", "m", DIFF, None)


def test_unreadable_files_raise(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load_predictions(tmp_path / "missing.jsonl")
    other = tmp_path / "run.txt"
    other.write_text("x")
    with pytest.raises(InputError, match=r"\.jsonl or \.json"):
        load_predictions(other)
    broken = tmp_path / "broken.json"
    broken.write_text("[{")
    with pytest.raises(InputError, match=r"broken\.json:1: malformed JSON"):
        load_predictions(broken)


def test_unicode_line_separators_inside_a_patch_do_not_split_its_line(tmp_path: Path) -> None:
    # json.dumps(ensure_ascii=False), as `tebench collect` writes, leaves U+2028, U+2029 and U+0085
    # raw in a string; only \n, \r\n and \r end a JSONL line
    patch = DIFF.replace("+b\n", "+b\u2028c\u2029d\x85e\n")
    lines = [
        {"instance_id": "a", "model_name_or_path": "m", "model_patch": patch},
        {"instance_id": "b", "model_name_or_path": "m", "model_patch": DIFF},
    ]
    path = tmp_path / "run.jsonl"
    path.write_bytes("\r\n".join(json.dumps(line, ensure_ascii=False) for line in lines).encode())
    first, second = load_predictions(path)
    assert (first.problem, first.patch, first.origin) == (None, patch, f"{path}:1")
    assert (second.problem, second.instance_id, second.origin) == (None, "b", f"{path}:2")


def test_a_line_nested_too_deeply_is_one_bad_entry(tmp_path: Path) -> None:
    # json.loads recurses per level: a RecursionError must not lose the whole file
    good = json.dumps({"instance_id": "a", "model_name_or_path": "m", "model_patch": DIFF})
    path = tmp_path / "run.jsonl"
    path.write_text("[" * 100_000 + "\n" + good + "\n", encoding="utf-8")
    deep, only = load_predictions(path)
    assert (deep.origin, deep.problem) == (f"{path}:1", "malformed JSON: nested too deeply (column 1)")
    assert (only.problem, only.patch) == (None, DIFF)
    as_json = tmp_path / "run.json"
    as_json.write_text("[" * 100_000, encoding="utf-8")
    with pytest.raises(InputError, match=r"run\.json:1: malformed JSON: nested too deeply"):
        load_predictions(as_json)


def test_a_lone_surrogate_escape_is_one_bad_entry(tmp_path: Path) -> None:
    # "\ud800" is valid JSON but no UTF-8 file, report or PYTEST_CURRENT_TEST can hold it
    good = {"instance_id": "a", "model_name_or_path": "m", "model_patch": DIFF}
    bad = [
        {**good, "model_name_or_path": "m\ud800"},
        {**good, "instance_id": "\udfff"},
        {**good, "model_patch": DIFF + "+\ud800\n"},
    ]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in [*bad, good]), encoding="utf-8")
    *rejected, only = load_predictions(path)
    assert [p.problem for p in rejected] == [
        f"field {name!r} is not valid Unicode (a lone surrogate escape like \\ud800)"
        for name in ("model_name_or_path", "instance_id", "model_patch")
    ]
    assert all((p.instance_id, p.model_name_or_path) == ("", "") for p in rejected)
    assert (only.problem, only.patch) == (None, DIFF)
    as_json = tmp_path / "run.json"
    as_json.write_text(json.dumps({"a": {"model_name_or_path": "m\ud800"}, "b": good}), encoding="utf-8")
    first, second = load_predictions(as_json)
    assert first.problem is not None and "not valid Unicode" in first.problem
    assert (second.problem, second.instance_id) == (None, "a")


def test_a_byte_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    good = json.dumps({"instance_id": "a", "model_name_or_path": "m", "model_patch": DIFF}).encode()
    path = tmp_path / "run.jsonl"
    path.write_bytes(good + b"\n" + good.replace(b'"m"', b'"m\xe9"') + b"\n")
    with pytest.raises(InputError) as raised:
        load_predictions(path)
    assert (
        str(raised.value) == f"{path}:2: cannot read predictions: not UTF-8 (invalid continuation byte 0xe9)"
    )
