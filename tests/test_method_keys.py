"""Method keys depend on V-0.5 alone, in identification and in the update stage's method sets.

The issue's example (instance I7 of the demo, ``textkit__dcc8e655``): gold changes
``SlugifierTest#zeroMaxLength()``; a prediction makes exactly gold's change and also adds an
overload ``zeroMaxLength(int)``. Keys used to be computed per side (gold ``#zeroMaxLength``, the
prediction ``#zeroMaxLength()``), so the same method was an FP and an FN. Git only, no Maven.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_tebench.benchmarks.tebench.identification import test_changes as changes_of
from pytest_tebench.benchmarks.tebench.update_methods import method_sets
from pytest_tebench.demo import HISTORY_DIR
from pytest_tebench.demo import build_demo_mirror
from pytest_tebench.metrics.scores import set_scores
from pytest_tebench.workspace.checkout import FileChange
from pytest_tebench.workspace.checkout import Workspace
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.gitcmd import git_text

from conftest import History

DEMO_DATASET = HISTORY_DIR.parent / "dataset.jsonl"
I7 = "textkit__dcc8e655"
SLUG = "src/test/java/org/tebench/textkit/SlugifierTest.java"
OVERLOAD = """
    @ParameterizedTest
    @ValueSource(ints = {-1, 0})
    void zeroMaxLength(int maxLength) {
        assertThrows(IllegalArgumentException.class, () -> new Slugifier('-', maxLength));
    }
"""


def _with_overload(gold_text: str) -> str:
    """Gold's version of the file plus the overload, added after gold's zeroMaxLength()."""
    head, tail = gold_text.rsplit("}\n", 1)  # the class's closing brace
    assert tail == ""
    return head + OVERLOAD + "}\n"


def _diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


@pytest.fixture(scope="module")
def i7_workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    root = tmp_path_factory.mktemp("keys")
    mirror = build_demo_mirror(root / "textkit.git")
    rows = [json.loads(line) for line in DEMO_DATASET.read_text(encoding="utf-8").splitlines() if line]
    row = next(r for r in rows if r["instance_id"] == I7)
    workspace = Workspace.create(mirror, row["v_minus_1_commit"], row["source_patch"], parent=root)
    workspace.commit_gold(row["test_patch"])
    before = workspace.read("v-0.5", SLUG)
    gold_text = workspace.read("gold", SLUG)
    assert before is not None and gold_text is not None
    workspace.commit_prediction(_diff(SLUG, before, _with_overload(gold_text)))
    yield workspace
    workspace.remove()


def test_added_overload_does_not_rename_gold_items(i7_workspace: Workspace) -> None:
    gold = changes_of(i7_workspace.changed_files("v-0.5", "gold"))
    predicted = changes_of(i7_workspace.changed_files("v-0.5", "prediction"))
    assert gold.items == [
        f"{SLUG}::SlugifierTest#slugifiesTitles",
        f"{SLUG}::SlugifierTest#truncatesToMaxLength",
        f"{SLUG}::SlugifierTest#zeroMaxLength",
    ]
    # gold's three items, named the same way, plus the file-level addition of the overload
    assert predicted.items == sorted([*gold.items, f"{SLUG}::<added>"])
    scores = set_scores(gold.items, predicted.items)
    assert (scores["tp"], scores["fp"], scores["fn"]) == (3, 1, 0)
    added = [c for c in predicted.methods if c.kind == "added"]
    assert [c.key for c in added] == ["SlugifierTest#zeroMaxLength(int)"]


def test_s_mod_pairs_the_same_methods(i7_workspace: Workspace) -> None:
    gold = changes_of(i7_workspace.changed_files("v-0.5", "gold"))
    predicted = changes_of(i7_workspace.changed_files("v-0.5", "prediction"))
    sets = method_sets(i7_workspace, gold, predicted)
    # U = gold's three methods (identical in both trees: 1 each) + the overload (gold lacks it: 0)
    assert sets.s_mod_by_method() == {
        f"{SLUG}::SlugifierTest#slugifiesTitles": 1.0,
        f"{SLUG}::SlugifierTest#truncatesToMaxLength": 1.0,
        f"{SLUG}::SlugifierTest#zeroMaxLength": 1.0,
        f"{SLUG}::SlugifierTest#zeroMaxLength(int)": 0.0,
    }
    # both zeroMaxLength methods run: the selector names the method, Surefire runs every overload
    assert [str(t) for t in sets.prediction_selection()] == [
        "org.tebench.textkit.SlugifierTest#slugifiesTitles",
        "org.tebench.textkit.SlugifierTest#truncatesToMaxLength",
        "org.tebench.textkit.SlugifierTest#zeroMaxLength",
    ]


V05 = """\
class T {
    @Test void check(int a) { use(a); }
    @Test void check(String s) { use(s); }
    @Test void solo() { }
}
"""
P = "src/test/java/T.java"


def _keys(before: str, after: str) -> dict[str, str]:
    return {c.key: c.kind for c in changes_of([FileChange(P, P, before, after)]).methods}


def test_v05_overloads_keep_parameter_types_when_one_side_removes_one() -> None:
    # V-0.5 overloads check: its keys carry parameter types, even after a side deletes an overload
    removed = V05.replace("    @Test void check(String s) { use(s); }\n", "")
    assert _keys(V05, removed) == {"T#check(String)": "deleted"}
    edited = removed.replace("use(a)", "use(a + 1)")
    assert _keys(V05, edited) == {"T#check(String)": "deleted", "T#check(int)": "modified"}


def test_changed_parameter_list_is_a_modification() -> None:
    # solo is the only "solo" on both sides: its parameter list changed, it is the same test
    after = V05.replace("void solo() { }", "void solo(int n) { }")
    assert _keys(V05, after) == {"T#solo": "modified"}
    # an overload changing its parameters among others that stay: the one left over on each side
    after = V05.replace("void check(String s)", "void check(CharSequence s)")
    assert _keys(V05, after) == {"T#check(String)": "modified"}


def test_added_methods_always_carry_parameter_types() -> None:
    # whether the side adds one method of a name or two, each keeps the same key
    one = V05.replace(
        "    @Test void solo() { }\n", "    @Test void solo() { }\n    @Test void fresh(int n) { }\n"
    )
    two = one.replace(
        "    @Test void fresh(int n) { }\n", "    @Test void fresh(int n) { }\n    @Test void fresh() { }\n"
    )
    assert _keys(V05, one) == {"T#fresh(int)": "added"}
    assert _keys(V05, two) == {"T#fresh(int)": "added", "T#fresh()": "added"}


WRAP = "src/test/java/p/WrapTest.java"
WORD_WRAP = "src/test/java/p/WordWrapTest.java"
WRAP_TEST = """\
package p;

class WrapTest {
    @Test
    void plain() {
        check(2);
    }

    @Test
    void other() {
        check(3);
    }
}
"""


def test_a_side_that_only_renames_the_file_keeps_its_methods(
    make_history: Callable[[str], History], tmp_path: Path
) -> None:
    # gold renames WrapTest.java (class too) and edits plain; the prediction only renames the file.
    # plain is in U: the prediction's version is V-0.5's plain, found at the new path, and runs.
    h = make_history("wrap")
    v1 = h.commit({"src/main/java/p/Wrap.java": "class Wrap { }\n", WRAP: WRAP_TEST})
    renamed = WRAP_TEST.replace("class WrapTest", "class WordWrapTest")
    v0 = h.commit(
        {"src/main/java/p/Wrap.java": "class Wrap { int w; }\n", WORD_WRAP: renamed.replace("(2)", "(20)")},
        renames={WRAP: WORD_WRAP},
    )
    row = h.instance_row(v1, v0, instance_id="wrap__1", repo="acme/wrap", labels=["stale"])
    git(h.path, "checkout", "--quiet", v1)
    predicted_commit = h.commit({WORD_WRAP: renamed}, renames={WRAP: WORD_WRAP})
    prediction = git_text(h.path, "diff", "-M", "--full-index", v1, predicted_commit)
    assert "rename from" in prediction
    workspace = Workspace.create(h.path, v1, str(row["source_patch"]), parent=tmp_path / "ws")
    try:
        workspace.commit_gold(str(row["test_patch"]))
        workspace.commit_prediction(prediction)
        gold = changes_of(workspace.changed_files("v-0.5", "gold"))
        predicted = changes_of(workspace.changed_files("v-0.5", "prediction"))
        assert (gold.items, predicted.items) == ([f"{WRAP}::WrapTest#plain"], [])
        sets = method_sets(workspace, gold, predicted)
        # V-0.5 plain {@Test void plain ( ) { check ( 2 ) ; }} against gold's (20 for 2): 12 / 14
        assert sets.s_mod_by_method() == {f"{WRAP}::WrapTest#plain": pytest.approx(12 / 14)}
        assert [str(t) for t in sets.prediction_selection()] == ["p.WordWrapTest#plain"]
    finally:
        workspace.remove()
