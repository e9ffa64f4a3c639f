"""Sources that are not UTF-8 (commons-* declare ISO-8859-1): gold's patches, predictions and
identification keep their bytes.

A Latin-1 test file's diff is not UTF-8 text: decoded with replacement characters it became a
gold patch that did not apply (the builder rejected such commits), two different literals became
one token, and a model's patch that writes ``caf\u00e9`` as text never matched the file's byte E9.
"""

from __future__ import annotations

import difflib
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_tebench.benchmarks.tebench.builder import Candidate
from pytest_tebench.benchmarks.tebench.builder import list_commits
from pytest_tebench.benchmarks.tebench.builder import static_check
from pytest_tebench.benchmarks.tebench.identification import test_changes as changes_of
from pytest_tebench.benchmarks.tebench.text import TebenchLayout
from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.text.build import TextSettings
from pytest_tebench.text.build import build_one
from pytest_tebench.workspace.checkout import PatchDoesNotApply
from pytest_tebench.workspace.checkout import Workspace
from pytest_tebench.workspace.checkout import source_texts
from pytest_tebench.workspace.gitcmd import git_text
from pytest_tebench.workspace.repos import RepositoryStore
from pytest_tebench.workspace.textdiff import legacy_encoding
from pytest_tebench.workspace.textdiff import text_diff

from conftest import History

MAIN = "src/main/java/p/Calc.java"
TEST = "src/test/java/p/CalcTest.java"
ATTRIBUTES = "*        text=auto\n*.java   text diff=java\n"
CALC = "package p;\nclass Calc {\n    int add(int a, int b) {\n        return a + b;\n    }\n}\n"


def _test_source(word: bytes, extra: int = 0) -> bytes:
    """A Latin-1 test class: ``named`` holds ``word`` in a literal; ``other`` is never changed."""
    lines = b"".join(b"        check(%d);\n" % i for i in range(extra))
    return (
        b"package p;\n// Fran\xe7ais\nclass CalcTest {\n"
        b'    @Test void named() {\n        check("' + word + b'");\n' + lines + b"    }\n"
        b'    @Test void other() {\n        check("\xe0 la carte");\n    }\n}\n'
    )


def _history(make_history: Callable[[str], History], new_word: bytes, extra: int) -> tuple[History, str]:
    history = make_history("latin")
    # as commons-* have it: the project's attributes outrank any the harness adds from outside
    history.commit({".gitattributes": ATTRIBUTES, MAIN: CALC, TEST: _test_source(b"caf\xe9")}, "v-1")
    v0 = history.commit({MAIN: CALC.replace("a + b", "b + a"), TEST: _test_source(new_word, extra)}, "v0")
    return history, v0


def _candidate(history: History, v0: str) -> Candidate:
    commit = next(c for c in list_commits(history.path, rev="HEAD", since=None, until=None) if c.sha == v0)
    outcome = static_check(history.path, commit, "calc", "acme/calc")
    assert isinstance(outcome, Candidate), outcome
    return outcome


def _workspace(history: History, candidate: Candidate, tmp_path: Path) -> Workspace:
    row = candidate.row
    return Workspace.create(
        history.path, row["v_minus_1_commit"], row["source_patch"], parent=tmp_path / "ws"
    )


def test_gold_of_a_latin1_test_file_is_a_binary_piece_that_rebuilds_v0(
    make_history: Callable[[str], History], tmp_path: Path
) -> None:
    history, v0 = _history(make_history, b"caf\xe9s", extra=5)
    candidate = _candidate(history, v0)
    test_patch = candidate.row["test_patch"]
    assert "GIT binary patch" in test_patch and "\ufffd" not in test_patch
    workspace = _workspace(history, candidate, tmp_path)
    workspace.commit_gold(test_patch)
    assert git_text(workspace.path, "rev-parse", "gold^{tree}") == git_text(
        history.path, "rev-parse", f"{v0}^{{tree}}"
    )


def test_a_bare_mirror_s_diff_sends_the_latin1_file_as_binary_too(
    make_history: Callable[[str], History], tmp_path: Path
) -> None:
    history, v0 = _history(make_history, b"caf\xe9s", extra=5)
    bare = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(history.path), str(bare)], check=True)
    patch = text_diff(bare, f"{v0}~1", v0, ["src/test"])
    assert patch == text_diff(history.path, f"{v0}~1", v0, ["src/test"])
    assert patch.count("GIT binary patch") == 1 and patch.count("diff --git") == 1


def test_a_literal_changed_from_one_latin1_letter_to_another_is_a_modified_method(
    make_history: Callable[[str], History], tmp_path: Path
) -> None:
    # é (E9) to è (E8): with replacement characters both were "\ufffd", and the method unchanged
    history, v0 = _history(make_history, b"caf\xe8", extra=5)
    workspace = _workspace(history, _candidate(history, v0), tmp_path)
    workspace.commit_gold(_candidate(history, v0).row["test_patch"])
    changes = changes_of(workspace.changed_files("v-0.5", "gold"))
    assert [(m.key, m.kind) for m in changes.methods] == [("CalcTest#named", "modified")]


def test_a_latin1_production_literal_changed_to_another_letter_changes_a_method_body(
    make_history: Callable[[str], History],
) -> None:
    history = make_history("latin-main")
    name = b'package p;\nclass Calc {\n    String name() {\n        return "caf\xe9";\n    }\n}\n'
    history.commit({MAIN: name, TEST: _test_source(b"caf\xe9")}, "v-1")
    v0 = history.commit({MAIN: name.replace(b"\xe9", b"\xe8"), TEST: _test_source(b"caf\xe8", 5)}, "v0")
    assert _candidate(history, v0).row["source_patch"].count("GIT binary patch") == 1


@pytest.mark.parametrize(
    ("added", "expected"),
    [
        ("caf\u00e9s", b"caf\xe9s"),  # Latin-1 / windows-1252 alike
        ("caf\u00e9 \u20ac", b"caf\xe9 \x80"),  # the euro sign: windows-1252's 0x80
    ],
)
def test_a_prediction_written_as_text_lands_in_the_latin1_file_s_own_bytes(
    make_history: Callable[[str], History], tmp_path: Path, added: str, expected: bytes
) -> None:
    history, v0 = _history(make_history, b"caf\xe9s", extra=5)
    workspace = _workspace(history, _candidate(history, v0), tmp_path)
    # what a model that read the file as text answers: its lines as characters, not bytes
    text = _source_text(history, v0).replace('"caf\u00e9s"', f'"{added}"')
    prediction = _as_diff(_source_text(history, v0, "HEAD~1"), text)
    applied = workspace.commit_prediction(prediction)
    assert applied.method == "git-apply" and applied.applied_files == (TEST,)
    written = subprocess.run(
        ["git", "-C", str(workspace.path), "show", f"prediction:{TEST}"], capture_output=True, check=True
    ).stdout
    assert b'check("' + expected + b'");' in written
    assert b"// Fran\xe7ais" in written and b"\xc3" not in written


def test_a_character_the_file_s_encoding_lacks_leaves_the_prediction_as_written(
    make_history: Callable[[str], History], tmp_path: Path
) -> None:
    history, v0 = _history(make_history, b"caf\xe9s", extra=5)
    workspace = _workspace(history, _candidate(history, v0), tmp_path)
    # U+2192 is in neither Latin-1 nor windows-1252: sent as UTF-8, its context (é) cannot match
    text = _source_text(history, v0, "HEAD~1").replace('"caf\u00e9"', '"caf\u00e9 \u2192"')
    with pytest.raises(PatchDoesNotApply):
        workspace.commit_prediction(_as_diff(_source_text(history, v0, "HEAD~1"), text))


def test_a_dataset_gold_holding_latin1_lines_as_text_applies_in_the_file_s_encoding(
    make_history: Callable[[str], History], tmp_path: Path
) -> None:
    # a dataset made by another tool, which decoded the Latin-1 diff as text
    history, v0 = _history(make_history, b"caf\xe9s", extra=5)
    candidate = _candidate(history, v0)
    workspace = _workspace(history, candidate, tmp_path)
    workspace.commit_gold(_as_diff(_source_text(history, v0, "HEAD~1"), _source_text(history, v0)))
    assert git_text(workspace.path, "rev-parse", "gold^{tree}") == git_text(
        history.path, "rev-parse", f"{v0}^{{tree}}"
    )


def test_source_texts_decode_versions_alike_and_legacy_encoding_names_the_file_s() -> None:
    assert source_texts("caf\u00e9".encode(), b"caf\xe9", None) == ("caf\u00c3\u00a9", "caf\u00e9", None)
    assert source_texts("caf\u00e9".encode(), None) == ("caf\u00e9", None)
    assert legacy_encoding("caf\u00e9".encode()) is None
    assert legacy_encoding(b"caf\xe9 \x80") == "cp1252"
    assert legacy_encoding(b"caf\xe9 \x81") == "iso-8859-1"  # 0x81 is undefined in windows-1252


def _source_text(history: History, v0: str, rev: str | None = None) -> str:
    data = subprocess.run(
        ["git", "-C", str(history.path), "show", f"{rev or v0}:{TEST}"], capture_output=True, check=True
    ).stdout
    return data.decode("latin-1")


def _as_diff(old: str, new: str, path: str = TEST) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


def test_a_text_prompt_shows_latin1_sources_and_their_change_as_text(
    make_history: Callable[[str], History], tmp_path: Path
) -> None:
    # the change and the files as the model must read them: "café", never base85 or "caf\ufffd"
    history = make_history("latin-text")
    name = b'package p;\n// Fran\xe7ais\nclass Calc {\n    String name() {\n        return "caf\xe9";\n    }\n}\n'
    history.commit({MAIN: name, TEST: _test_source(b"caf\xe9")}, "v-1")
    v0 = history.commit(
        {MAIN: name.replace(b"caf\xe9", b"caf\xe9s"), TEST: _test_source(b"caf\xe9s", 5)}, "v0"
    )
    row = _candidate(history, v0).row
    assert "GIT binary patch" in row["source_patch"]
    (instance,) = TebenchLayout().load([RawRecord(row, "d.jsonl:1")])
    store = RepositoryStore(tmp_path / "cache", url_template=str(history.path))
    for style in ("oracle", "bm25"):
        outcome = build_one(instance, TebenchLayout(), store, TextSettings(style=style, scratch=tmp_path))
        assert outcome.error is None and outcome.row is not None, outcome.error
        text = outcome.row["text"]
        change, code = text.split("<code>")
        assert '-        return "caf\u00e9";\n+        return "caf\u00e9s";' in change, change
        assert "Binary file" not in text and "GIT binary patch" not in text and "\ufffd" not in text
        # both Latin-1 files are shown, V-0.5's production file with its change
        assert sorted(outcome.files) == [MAIN, TEST]
        assert 'return "caf\u00e9s";' in code and "// Fran\u00e7ais" in code and "\u00e0 la carte" in code
    assert outcome.row["source_patch"] == row["source_patch"]  # the row itself is written unchanged
