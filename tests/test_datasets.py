from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pytest_tebench.benchmarks.tebench.adapter import TebenchAdapter
from pytest_tebench.errors import InputError
from pytest_tebench.instance.datasets import load_records
from pytest_tebench.instance.datasets import write_dataset

ROW = {
    "instance_id": "textkit__abc1234",
    "project": "textkit",
    "repo": "pytest-tebench/textkit",
    "v_minus_1_commit": "a" * 40,
    "labels": ["stale", "breaking"],
    "source_patch": "",
    "test_patch": "diff --git a/x b/x\n",
}


def _adapter_problems(path: Path) -> list[str | None]:
    return [i.problem for i in TebenchAdapter().load_instances(load_records(str(path)))]


def test_jsonl_json_and_parquet_give_the_same_instances(tmp_path: Path) -> None:
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text(json.dumps(ROW) + "\n")
    as_json = tmp_path / "d.json"
    as_json.write_text(json.dumps([ROW]))
    parquet = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist([ROW]), parquet)
    loaded = [TebenchAdapter().load_instances(load_records(str(p))) for p in (jsonl, as_json, parquet)]
    payloads = [[i.payload for i in instances] for instances in loaded]
    assert payloads[0] == payloads[1] == payloads[2]
    (instance,) = loaded[0]
    assert instance.problem is None
    assert instance.labels == ("breaking", "stale")  # canonical order


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"test_patch": None}, "field 'test_patch' is missing"),
        ({"v_minus_1_commit": "not-a-sha"}, "field 'v_minus_1_commit' is not a commit hash"),
        ({"repo": "no-slash"}, "field 'repo' must look like 'owner/name'"),
        ({"labels": ["flaky"]}, "unknown label(s) ['flaky']"),
        ({"labels": 7}, "field 'labels' must be a list"),
        ({"project": 7}, "field 'project' must be a string, not int"),
        ({"v0_date": "last Tuesday"}, "field 'v0_date' is not an ISO 8601 date: 'last Tuesday'"),
        ({"v0_date": 20210830}, "field 'v0_date' must be a string, not int"),
    ],
)
def test_bad_fields_name_the_instance_and_the_field(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    row = {k: v for k, v in {**ROW, **change}.items() if v is not None}
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(row) + "\n")
    (problem,) = _adapter_problems(path)
    assert problem is not None
    assert problem.startswith(f"{path}:1: instance textkit__abc1234: ")
    assert message in problem


def test_bad_rows_do_not_hide_good_ones(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    second = {**ROW, "instance_id": "textkit__def5678"}
    path.write_text(json.dumps(ROW) + "\n{oops\n" + json.dumps(second) + "\n" + json.dumps(ROW) + "\n")
    problems = _adapter_problems(path)
    assert problems[0] is None and problems[2] is None
    assert problems[1] is not None and "malformed JSON" in problems[1]
    assert problems[3] is not None and f"duplicate instance_id (first at {path}:1)" in problems[3]


@pytest.mark.parametrize("labels", [None, [], "", "[]"])
def test_rows_without_labels_are_accepted(tmp_path: Path, labels: object) -> None:
    # labels feed no score, only the per-label tables (an "unlabeled" group there)
    row = {k: v for k, v in {**ROW, "labels": labels}.items() if v is not None}
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(row) + "\n")
    (instance,) = TebenchAdapter().load_instances(load_records(str(path)))
    assert instance.problem is None and instance.labels == ()


def test_labels_as_json_string(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({**ROW, "labels": '["missing"]'}) + "\n")
    (instance,) = TebenchAdapter().load_instances(load_records(str(path)))
    assert instance.labels == ("missing",)


def test_written_datasets_read_back_with_unicode_line_separators(tmp_path: Path) -> None:
    # write_dataset leaves U+2028, U+2029 and U+0085 raw; they are no line ends of a JSONL file
    row = {**ROW, "test_patch": "diff --git a/x b/x\n+\u2028\u2029\x85\n"}
    path = tmp_path / "d.jsonl"
    write_dataset([row, {**ROW, "instance_id": "textkit__def5678"}], path)
    first, second = load_records(str(path))
    assert (first.problem, first.data, first.origin) == (None, row, f"{path}:1")
    assert (second.problem, second.origin) == (None, f"{path}:2")


def test_a_row_nested_too_deeply_is_one_bad_row(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("[" * 100_000 + "\n" + json.dumps(ROW) + "\n")
    deep, row = load_records(str(path))
    assert deep.problem == "malformed JSON: nested too deeply (column 1)"
    assert (row.problem, row.data) == (None, ROW)
    as_json = tmp_path / "d.json"
    as_json.write_text("[" * 100_000)
    with pytest.raises(InputError, match="nested too deeply"):
        load_records(str(as_json))


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_byte_order_mark_is_not_part_of_the_first_row(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"d{suffix}"
    text = json.dumps(ROW) + "\n" if suffix == ".jsonl" else json.dumps([ROW])
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    (only,) = load_records(str(path))
    assert (only.problem, only.data) == (None, ROW)


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_lone_surrogate_escape_is_one_bad_row(tmp_path: Path, suffix: str) -> None:
    # valid JSON, but no item name, file or report can hold "\ud800"
    rows = [{**ROW, "test_patch": "+\ud800\n"}, ROW]
    path = tmp_path / f"d{suffix}"
    path.write_text(
        "".join(json.dumps(row) + "\n" for row in rows) if suffix == ".jsonl" else json.dumps(rows)
    )
    bad, good = load_records(str(path))
    assert (bad.problem, bad.data) == (
        "field 'test_patch' is not valid Unicode (a lone surrogate escape like \\ud800)",
        {},
    )
    assert (good.problem, good.data) == (None, ROW)


def test_a_byte_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(
        json.dumps(ROW).encode() + b"\n\n" + json.dumps(ROW).encode().replace(b"textkit", b"t\xff")
    )
    with pytest.raises(InputError) as raised:
        load_records(str(path))
    assert str(raised.value) == f"{path}:3: cannot read dataset: not UTF-8 (invalid start byte 0xff)"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="dataset file not found"):
        load_records(str(tmp_path / "nope.jsonl"))


def test_hub_names_go_through_datasets(monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    calls: list[tuple[str, str]] = []

    def fake_load(name: str, *, split: str) -> list[dict[str, object]]:
        calls.append((name, split))
        if name == "iSEngLab/TEBench":
            return [ROW]
        raise ConnectionError("hub unreachable")

    monkeypatch.setattr(datasets, "load_dataset", fake_load)
    (record,) = load_records("iSEngLab/TEBench", split="test")
    assert (record.data, record.origin) == (ROW, "iSEngLab/TEBench[0]")
    with pytest.raises(InputError, match=r"other/name: cannot load dataset \(split 'dev'\): hub unreachable"):
        load_records("other/name", split="dev")
    assert calls == [("iSEngLab/TEBench", "test"), ("other/name", "dev")]


def test_cache_key_names_the_gold_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a stored result made under older selection/judging rules must not be reused
    from pytest_tebench.benchmarks.tebench import adapter as adapter_module
    from pytest_tebench.benchmarks.tebench.settings import TebenchSettings
    from pytest_tebench.benchmarks.tebench.settings import UpdateSettings

    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(ROW) + "\n")
    settings = UpdateSettings("paper", None, 60.0, 60.0, None, tmp_path / "m2")
    update = TebenchAdapter(TebenchSettings(update=settings))
    (instance,) = update.load_instances(load_records(str(path)))
    before = update.cache_key(instance)
    monkeypatch.setattr(adapter_module, "GOLD_RULES", adapter_module.GOLD_RULES + 1)
    assert update.cache_key(instance) != before
    # the test limit decides whether a hung test phase is scored (update.hung_tests)
    from dataclasses import replace

    longer = TebenchAdapter(TebenchSettings(update=replace(settings, timeout_test=120.0)))
    assert longer.cache_key(instance) != update.cache_key(instance)
    # identification only: no Maven run, nothing gold's rules decide
    plain = TebenchAdapter()
    assert "gold_rules" not in (plain.cache_key(instance) or "")
    # how the prediction is applied decides both
    keys = plain.cache_key(instance), update.cache_key(instance)
    monkeypatch.setattr(adapter_module, "APPLY_RULES", adapter_module.APPLY_RULES + 1)
    assert plain.cache_key(instance) != keys[0] and update.cache_key(instance) != keys[1]
    # and so do the rules that say which test methods a patch changed
    keys = plain.cache_key(instance), update.cache_key(instance)
    monkeypatch.setattr(adapter_module, "IDENTIFICATION_RULES", adapter_module.IDENTIFICATION_RULES + 1)
    assert plain.cache_key(instance) != keys[0] and update.cache_key(instance) != keys[1]


def test_v0_date_is_kept_and_keys_gold(tmp_path: Path) -> None:
    # the date pins the build's unversioned plugins (run/maven/plugin_pins): a different date is
    # another gold build, an absent one is V-1's date (update.UpdateEvaluator)
    from pytest_tebench.benchmarks.tebench.settings import TebenchSettings
    from pytest_tebench.benchmarks.tebench.settings import UpdateSettings

    rows = [{**ROW, "v0_date": "2021-08-30T09:57:08-07:00"}, {**ROW, "v0_date": "2021-09-30"}, ROW]
    update = TebenchAdapter(TebenchSettings(update=UpdateSettings("paper", None, 60.0, 60.0, None, tmp_path)))
    keys, dates = [], []
    for number, row in enumerate(rows):
        path = tmp_path / f"d{number}.jsonl"
        path.write_text(json.dumps(row) + "\n")
        (instance,) = update.load_instances(load_records(str(path)))
        assert instance.problem is None
        keys.append(update.cache_key(instance))
        dates.append(instance.payload.v0_date)
    assert dates == ["2021-08-30T09:57:08-07:00", "2021-09-30", ""]
    assert len(set(keys)) == 3
