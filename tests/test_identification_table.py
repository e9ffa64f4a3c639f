"""Identification side by side with the reference harness: tricky cases, items written by hand.

Each case is one patch of ``WrapTest.java`` (V-0.5 below); the expected items are what the rules
of docs/scoring.md give. Where the reference harness's result differs, docs/scoring.md says so in
its table of tricky cases (it was computed by running the reference's own ``gt_extractor.py`` on
the same files). No git, no Maven.
"""

from __future__ import annotations

import pytest

from pytest_tebench.benchmarks.tebench.identification import test_changes as changes_of
from pytest_tebench.metrics.scores import set_scores
from pytest_tebench.workspace.checkout import FileChange

P = "src/test/java/p/WrapTest.java"
RENAMED = "src/test/java/p/WordWrapTest.java"

V05 = """\
package p;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

public class WrapTest {
    @Test public void inline() { check(1); }

    @Test
    public void plain() {
        check(2);
    }

    @Test
    public void other() {
        check(3);
    }

    @Nested
    class Short {
        @Test
        void fits() {
            check(4);
        }
    }

    @Nested
    class Long {
        @Test
        void splits() {
            check(5);
        }
    }
}

class Extra {
    @Test void x() { check(7); }
}
"""

PLAIN = """\
    @Test
    public void plain() {
        check(2);
    }
"""
OTHER = PLAIN.replace("plain", "other").replace("check(2)", "check(3)")
FITS = """\
        @Test
        void fits() {
            check(4);
        }
"""
SPLITS = FITS.replace("fits", "splits").replace("check(4)", "check(5)")
OVERLOAD = """
    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void plain(int n) {
        check(n);
    }
"""


def _moved_between_nested_classes(text: str) -> str:
    """``fits`` leaves ``Short`` for ``Long``, unchanged."""
    return text.replace(FITS, "").replace(SPLITS, SPLITS + "\n" + FITS)


# (case, new path, patched text, expected items)
CASES = [
    ("inline @Test edited", P, V05.replace("check(1)", "check(10)"), ["WrapTest#inline"]),
    ("final added", P, V05.replace("public void plain()", "public final void plain()"), ["WrapTest#plain"]),
    ("method moved within the file", P, V05.replace(PLAIN + "\n" + OTHER, OTHER + "\n" + PLAIN), []),
    ("method moved between nested classes", P, _moved_between_nested_classes(V05), []),
    (
        "method moved between nested classes and edited",
        P,
        _moved_between_nested_classes(V05).replace("check(4)", "check(44)"),
        ["WrapTest$Short#fits"],
    ),
    (
        "test file renamed with its class, one test edited",
        RENAMED,
        V05.replace("class WrapTest", "class WordWrapTest").replace("check(2)", "check(20)"),
        ["WrapTest#plain"],
    ),
    ("overload added", P, V05.replace(PLAIN, PLAIN + OVERLOAD), ["<added>"]),
    (
        "overload added, original edited",
        P,
        V05.replace(PLAIN, PLAIN.replace("check(2)", "check(22)") + OVERLOAD),
        ["<added>", "WrapTest#plain"],
    ),
    ("comment-only change", P, V05.replace("check(2);", "check(2); // two"), []),
    ("nested class renamed", P, V05.replace("class Short", "class Fits"), []),
    (
        "nested class renamed, a test edited",
        P,
        V05.replace("class Short", "class Fits").replace("check(4)", "check(40)"),
        ["WrapTest$Short#fits"],
    ),
    ("package-private class renamed", P, V05.replace("class Extra", "class Additional"), []),
    (
        "package-private class renamed, its test edited",
        P,
        V05.replace("class Extra", "class Additional").replace("check(7)", "check(8)"),
        ["Extra#x"],
    ),
]


def _items(new_path: str, after: str, before: str = V05) -> list[str]:
    return changes_of([FileChange(P, new_path, before, after)]).items


@pytest.mark.parametrize(("case", "new_path", "after", "expected"), CASES, ids=[c[0] for c in CASES])
def test_items_of_tricky_patches(case: str, new_path: str, after: str, expected: list[str]) -> None:
    assert after != V05, case
    assert _items(new_path, after) == sorted(f"{P}::{item}" for item in expected)


def test_same_names_in_two_renamed_nested_classes_are_ambiguous() -> None:
    # both nested classes renamed and both hold a test named "works": no way to tell which is
    # which, so each V-0.5 test is deleted and the file gains tests (the rule's documented limit)
    before = (
        "class T {\n"
        "    @Nested class A { @Test void works() { a(); } }\n"
        "    @Nested class B { @Test void works() { b(); } }\n"
        "}\n"
    )
    after = before.replace("class A", "class C").replace("class B", "class D")
    assert _items(P, after, before) == [f"{P}::<added>", f"{P}::T$A#works", f"{P}::T$B#works"]


@pytest.mark.parametrize(
    ("gold", "prediction", "tp_fp_fn"),
    [
        # gold renames the file and edits plain; the prediction edits plain in place
        (
            (RENAMED, V05.replace("class WrapTest", "class WordWrapTest").replace("check(2)", "check(20)")),
            (P, V05.replace("check(2)", "check(21)")),
            (1, 0, 0),
        ),
        # gold moves fits to Long and edits it; the prediction edits it where it is
        (
            (P, _moved_between_nested_classes(V05).replace("check(4)", "check(44)")),
            (P, V05.replace("check(4)", "check(44)")),
            (1, 0, 0),
        ),
        # gold edits plain; the prediction edits plain and adds an overload of it
        (
            (P, V05.replace("check(2)", "check(22)")),
            (P, V05.replace(PLAIN, PLAIN.replace("check(2)", "check(22)") + OVERLOAD)),
            (1, 1, 0),  # plain matches; the overload's <added> is the prediction's own
        ),
        # gold renames the nested class only; the prediction does nothing there but edits other
        (
            (P, V05.replace("class Short", "class Fits").replace("check(3)", "check(33)")),
            (P, V05.replace("check(3)", "check(33)")),
            (1, 0, 0),
        ),
    ],
    ids=["file renamed", "moved and edited", "overload added", "nested class renamed"],
)
def test_gold_against_prediction(
    gold: tuple[str, str], prediction: tuple[str, str], tp_fp_fn: tuple[int, int, int]
) -> None:
    scores = set_scores(_items(*gold), _items(*prediction))
    assert (scores["tp"], scores["fp"], scores["fn"]) == tp_fp_fn
