"""``tebench text``: BM25, the token budget, prompt layouts, SWE-bench byte identity, the round trip.

Reference texts in ``fixtures/swebench-text/`` were made by running SWE-bench's own
``create_instance.add_text_inputs`` (style-3, oracle; ``scripts/swebench-reference-texts.py``)
on real SWE-bench Lite instances and their real repositories.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench import cli
from pytest_tebench.benchmarks.swebench.text import SwebenchLayout
from pytest_tebench.benchmarks.swebench.text import is_test
from pytest_tebench.benchmarks.swebench.text import oracle_paths
from pytest_tebench.benchmarks.swebench.text import prompt_style_3
from pytest_tebench.benchmarks.tebench.text import TebenchLayout
from pytest_tebench.benchmarks.tebench.text import shown_diff
from pytest_tebench.errors import InputError
from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.text import build
from pytest_tebench.text.bm25 import FileIndex
from pytest_tebench.text.bm25 import split_words
from pytest_tebench.text.build import TextInstance
from pytest_tebench.text.build import TextSettings
from pytest_tebench.text.command import TextCommand
from pytest_tebench.text.command import make_texts
from pytest_tebench.text.layout import add_lines
from pytest_tebench.text.layout import code_text
from pytest_tebench.text.tokens import MissingTextExtra
from pytest_tebench.text.tokens import cl100k
from pytest_tebench.text.tokens import require
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.gitcmd import git_text

from conftest import PREDICTIONS
from conftest import DemoRun
from conftest import by_instance

FIXTURES = Path(__file__).parent / "fixtures" / "swebench-text"
_BLOCK = re.compile(r"\[start of (?P<path>[^\]\n]+)\]\n(?P<body>.*?)\n\[end of (?P=path)\]", re.DOTALL)


# -- BM25 -------------------------------------------------------------------------------------
def test_bm25_scores_match_lucene_formula_by_hand() -> None:
    # documents are path + contents; "a.py" stays one token (as in Lucene's StandardTokenizer)
    index = FileIndex(
        {"a.py": "a.py\nfoo bar bar", "b.py": "b.py\nfoo baz", "c.py": "c.py\nqux quux corge foo"}
    )
    # lengths 4, 3, 5 -> avgdl 4. Lucene: idf = ln(1 + (N - df + .5) / (df + .5)),
    # score = idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)), k1 = 0.9, b = 0.4
    idf_bar = math.log(1 + 2.5 / 1.5)
    (hit,) = index.search("bar", 5)
    assert hit.docid == "a.py"
    assert hit.score == pytest.approx(idf_bar * 2 / (2 + 0.9 * 1.0), rel=1e-6)
    # a repeated query word counts twice (pyserini boosts a term by its count)
    assert index.search("bar bar", 5)[0].score == pytest.approx(2 * hit.score, rel=1e-6)
    idf_foo = math.log(1 + 0.5 / 3.5)
    hits = index.search("foo", 5)
    assert [h.docid for h in hits] == ["b.py", "a.py", "c.py"]  # shorter documents first
    expected = {"a.py": 1 / 1.9, "b.py": 1 / (1 + 0.9 * (0.6 + 0.4 * 0.75)), "c.py": 1 / (1 + 0.9 * 1.1)}
    for h in hits:
        assert h.score == pytest.approx(idf_foo * expected[h.docid], rel=1e-6)
    assert index.search("nothing here", 5) == []
    assert [h.docid for h in index.search("foo", 2)] == ["b.py", "a.py"]


def test_words_follow_lucenes_english_analyzer() -> None:
    words = split_words("The user's requests.get() call, os.path.join x_y 1.5 a")
    assert words == ["the", "user", "requests.get", "call", "os.path.join", "x_y", "1.5", "a"]
    # stop words and Porter stems: "connections" and "connected" both match "connect"
    index = FileIndex({"x.py": "x.py\nconnections", "y.py": "y.py\nthe and of"})
    assert [h.docid for h in index.search("connected", 5)] == ["x.py"]
    assert index.search("the and of", 5) == []


def test_a_missing_extra_says_how_to_install_it() -> None:
    with pytest.raises(MissingTextExtra, match=r"pip install 'pytest-tebench\[text\]'"):
        require("no_such_module_for_tebench")


def test_cl100k_is_the_official_encoding() -> None:
    encoding = cl100k()
    assert encoding.encode("hello world") == [15339, 1917]
    assert encoding.n_vocab == 100277


# -- layout -------------------------------------------------------------------------------------
def test_numbered_blocks_as_swebench_writes_them() -> None:
    assert add_lines("a\nb\n") == "1 a\n2 b\n3 "
    assert code_text({"z.py": "x", "a.py": "y\n"}) == (
        "[start of a.py]\n1 y\n2 \n[end of a.py]\n[start of z.py]\n1 x\n[end of z.py]"
    )
    assert code_text({}) == ""


def test_swebench_style_3_prompt_layout() -> None:
    text = prompt_style_3("Bug!", {"README.md": "hi"}, {"m.py": "x = 1"})
    head = (
        "You will be provided with a partial code base and an issue statement explaining a problem to resolve.\n"
        "<issue>\nBug!\n</issue>\n\n<code>\n[start of README.md]\n1 hi\n[end of README.md]\n"
        "[start of m.py]\n1 x = 1\n[end of m.py]\n</code>\n\nHere is an example of a patch file."
    )
    assert text.startswith(head)
    assert text.endswith(
        "    return points\n</patch>\n\nI need you to solve the provided issue by generating a single patch file "
        "that I can apply directly to this repository using git apply. Please respond with a single patch "
        "file in the format shown above.\nRespond below:"
    )


def test_swebench_oracle_paths_and_test_files() -> None:
    patch = (
        "diff --git a/pkg/new.py b/pkg/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/new.py\n"
        "@@ -0,0 +1 @@\n+x\n"
        "diff --git a/pkg/old.py b/pkg/old.py\n--- a/pkg/old.py\n+++ b/pkg/old.py\n@@ -1 +1 @@\n-a\n+b\n"
    )
    # unidiff names a created file's source /dev/null, and SWE-bench shows that (empty) file
    assert oracle_paths(patch) == ["/dev/null", "pkg/old.py"]
    assert is_test("tests/test_x.py") and is_test("pkg/testing/util.py") and is_test("a/b_test.py")
    assert not is_test("pkg/contest.py") and not is_test("pkg/latest/x.py")


# -- the budget ---------------------------------------------------------------------------------
class _WordLayout:
    """A layout whose texts are easy to count: one word per file block plus the file's words."""

    name = "words"

    def load(self, records: Any) -> list[TextInstance]:
        raise NotImplementedError

    def is_document(self, path: str) -> bool:
        return True

    def is_context(self, path: str) -> bool:
        return False

    def query(self, instance: TextInstance) -> str:
        return ""

    def oracle_files(self, instance: TextInstance) -> list[str]:
        return []

    def file_block(self, path: str, text: str) -> str:
        return f"FILE {text}"

    def render(self, instance: TextInstance, context: dict[str, str], files: dict[str, str]) -> str:
        return " ".join(["base"] * 10 + [self.file_block(p, files[p]) for p in files])

    def shorten(self, instance: TextInstance, max_tokens: int, count: Any) -> TextInstance:
        return instance


def test_budget_adds_files_in_rank_order_and_skips_what_does_not_fit(
    make_history: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tokens counted as words: base prompt 10, blocks: big 1+8 = 9, mid 1+4 = 5, small 1+2 = 3, tiny 1+1 = 2
    monkeypatch.setattr(build, "count_tokens", lambda text: len(text.split()))
    monkeypatch.setattr(build, "_CACHES", build._Caches())
    history = make_history()
    commit = history.commit({"big": "w " * 8, "mid": "w " * 4, "small": "w " * 2, "tiny": "w"}, "files")
    instance = TextInstance("i", "o/r", commit, "", {}, ("i",))
    tree = build.read_tree(history.path, commit)
    # budget 18: 10 + mid 5 = 15 < 18; big (24) skipped; small (18) is not *below* 18; tiny 17 fits
    chosen, hit = build._fit(
        instance, _WordLayout(), tree, {}, ["mid", "big", "small", "tiny"], max_tokens=18
    )
    assert (chosen, hit) == (["mid", "tiny"], True)
    chosen, hit = build._fit(instance, _WordLayout(), tree, {}, ["tiny", "small"], max_tokens=100)
    assert (chosen, hit) == (["tiny", "small"], False)
    # the second call counted no block again: tiny and small were cached by (path, blob)
    assert build._CACHES.tokens.hits >= 2


def test_a_change_too_long_for_the_budget_shows_whole_file_diffs_and_names_the_rest() -> None:
    patch = "".join(
        f"diff --git a/src/main/F{i}.java b/src/main/F{i}.java\n--- a/src/main/F{i}.java\n"
        f"+++ b/src/main/F{i}.java\n@@ -1 +1 @@\n-old{i}\n+{'word ' * 100}\n"
        for i in range(3)
    )
    row = {"instance_id": "p__1", "project": "p", "repo": "o/p", "v0_message": "msg", "source_patch": patch}
    instance = TextInstance("p__1", "o/p", "0" * 40, patch, row, ("p__1",))
    layout = TebenchLayout()

    def words(text: str) -> int:
        return len(text.split())

    def size(keep: int) -> int:
        return words(layout.render(replace(instance, shown_task=shown_diff(patch, keep=keep)), {}, {}))

    # each file diff adds about 100 words; a limit between one and two files keeps exactly one
    assert size(0) < size(1) < size(2) < size(3) == words(layout.render(instance, {}, {}))
    shortened = layout.shorten(instance, (size(1) + size(2)) // 2, words)
    assert shortened.shown_task == shown_diff(patch, keep=1)
    assert shortened.shown_task.endswith(
        "[diffs of 2 more file(s) left out for length: src/main/F1.java, src/main/F2.java]"
    )
    assert shortened.row == row and "F1.java" not in shortened.shown_task.split("[diffs")[0]
    assert layout.shorten(instance, 1, words).shown_task == shown_diff(patch, keep=0)
    # SWE-bench prompts are never cut
    swebench = TextInstance("x", "o/r", "0" * 40, "", {"problem_statement": "long " * 100}, ("x",))
    assert SwebenchLayout().shorten(swebench, 1, words) is swebench


# -- SWE-bench byte identity ----------------------------------------------------------------------
def _references() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / "oracle-references.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("reference", _references(), ids=lambda r: r["row"]["instance_id"])
def test_swebench_oracle_text_is_byte_identical_to_swebenchs_own(
    reference: dict[str, Any], tmp_path: Path
) -> None:
    """The repository is rebuilt from the files the reference shows (README and oracle files, at
    their paths), so the whole pipeline runs: git tree reading, oracle paths, README detection,
    the prompt; plus a test file and a nested README that must not show."""
    row, expected = reference["row"], reference["text"]
    repo = tmp_path / "mirrors" / row["repo"].replace("/", "+")
    repo.mkdir(parents=True)
    git(repo, "init", "--quiet")
    files = {
        m["path"]: "\n".join(line.split(" ", 1)[1] for line in m["body"].split("\n"))
        for m in _BLOCK.finditer(expected)
    }
    assert files and all(not p.startswith("/") for p in files)
    for path, content in {**files, "tests/test_extra.py": "x\n", "docs/README.rst": "nested\n"}.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_bytes(content.replace("\n", "\r\n" if path.endswith(".py") else "\n").encode())
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "base")
    commit = git_text(repo, "rev-parse", "HEAD").strip()
    dataset = tmp_path / "dataset.jsonl"
    dataset.write_text(json.dumps({**row, "base_commit": commit}) + "\n")
    command = TextCommand(
        dataset=str(dataset), out=tmp_path / "out.jsonl", settings=TextSettings(style="oracle", scratch=tmp_path),
        cache_dir=tmp_path / "cache", repos=(tmp_path / "mirrors",), allow_network=False,
    )  # fmt: skip
    (outcome,) = make_texts(command, SwebenchLayout(), progress=lambda _: None).outcomes
    assert outcome.row is not None
    assert outcome.row["text"] == expected  # CRLF files read as open() reads them: universal newlines
    assert {k: v for k, v in outcome.row.items() if k != "text"} == {**row, "base_commit": commit}


# -- TEBench prompts on the demo ----------------------------------------------------------------
def test_tebench_demo_oracle_and_bm25_prompts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = str(tmp_path / "cache")
    oracle = tmp_path / "oracle.jsonl"
    assert cli.main(["text", "demo", "--style", "oracle", "--out", str(oracle), "--cache-dir", cache,
                     "--offline", "-k", "69c4649c"]) == 0  # fmt: skip
    (row,) = [json.loads(line) for line in oracle.read_text().splitlines()]
    assert row["instance_id"] == "textkit__69c4649c" and "labels" in row and "test_patch" in row
    text = row["text"]
    shown = [m["path"] for m in _BLOCK.finditer(text.split("<code>")[1])]
    # the production file the change touches and the test file gold changes (renamed in V0: shown as in V-0.5)
    assert shown == [
        "src/main/java/org/tebench/textkit/WordWrap.java",
        "src/test/java/org/tebench/textkit/WrapTest.java",
    ]
    assert "<change>\nWordWrap: reject widths below 1 and split over-long words\n" in text
    assert "+        if (width < 1) {\n+            throw new IllegalArgumentException" in text  # the diff
    # V-0.5: the production file already has the change, the test file does not
    assert "throw new IllegalArgumentException" in text.split("[start of src/main")[1]
    assert text.endswith("Respond below:\n\n") and "<patch>\n--- a/src/test/java/" in text

    bm25 = tmp_path / "bm25.parquet"
    assert cli.main(["text", "demo", "--style", "bm25", "--max-tokens", "3000", "--out", str(bm25),
                     "--cache-dir", cache, "--offline", "-k", "69c4649c or 389d5077", "-j", "2"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "2 prompt(s) hit the 3000-token budget; 0 over it with no file" in out
    import datasets

    loaded = datasets.Dataset.from_parquet(str(bm25))
    assert sorted(loaded["instance_id"]) == ["textkit__389d5077", "textkit__69c4649c"]
    for text in loaded["text"]:
        assert 0 < len(cl100k().encode(text, disallowed_special=())) <= 3000
    # test files are BM25 documents for TEBench (SWE-bench leaves them out)
    assert any("[start of src/test/java/" in text for text in loaded["text"])


def test_bad_rows_and_options_are_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    layout = SwebenchLayout()
    (instance,) = layout.load([RawRecord({"instance_id": "x", "repo": "o/r"}, "d.jsonl:1")])
    assert instance.problem == "d.jsonl:1: field 'base_commit' is missing or not a non-empty string"
    assert cli.main(["text", "demo", "--out", str(tmp_path / "x.csv"), "--offline"]) == 2
    assert "--out must end in .jsonl or .parquet" in capsys.readouterr().err
    with pytest.raises(InputError, match="unknown style"):
        TextSettings(style="all")
    assert TebenchLayout().is_document("src/test/java/A.java")


# -- round trip -----------------------------------------------------------------------------------
def test_raw_lm_outputs_evaluate_with_the_plugin(demo_run: DemoRun) -> None:
    """predictions/raw-outputs.jsonl: gold test patches as an LM answers a text prompt
    (``full_output`` only, ``<patch>`` in ``model_patch``, a diff fence); no builds."""
    result, report = demo_run(str(PREDICTIONS / "raw-outputs.jsonl"), "--tebench-skip-update")
    result.assert_outcomes(passed=9)
    assert report["summary"]["lm-raw"]["identification"]["micro"]["f1"] == 1.0
    assert all(r["status"] == "evaluated" for r in by_instance(report).values())
