"""Identification items on hand-written before/after pairs (no git, no Maven)."""

from __future__ import annotations

from pytest_tebench.benchmarks.tebench.identification import test_changes as changes_of
from pytest_tebench.workspace.checkout import FileChange

P = "src/test/java/p/WrapTest.java"

BEFORE = """\
package p;

import org.junit.jupiter.api.Test;

class WrapTest {
    @Test
    void wrapsLongLines() {
        assertEquals("a\\nb", Wrap.wrap("a b", 1));
    }

    @Test void keepsShortLines() { assertEquals("ab", Wrap.wrap("ab", 5)); }

    @Test
    void removedLater() { }

    void helper() { }

    @Nested
    class Edge {
        @Test void empty() { assertEquals("", Wrap.wrap("", 3)); }
    }
}
"""


def _items(before: str | None, after: str | None, old: str | None = P, new: str | None = P) -> list[str]:
    return changes_of([FileChange(old, new, before, after)]).items


def test_untouched_file_has_no_items() -> None:
    assert _items(BEFORE, BEFORE) == []


def test_whitespace_and_comment_edits_are_not_modifications() -> None:
    after = BEFORE.replace(
        '        assertEquals("a\\nb", Wrap.wrap("a b", 1));',
        '        // wrap at width one\n        assertEquals(  "a\\nb",\n  Wrap.wrap("a b", 1) );',
    )
    assert after != BEFORE
    assert _items(BEFORE, after) == []


def test_body_annotation_delete_and_add() -> None:
    after = (
        BEFORE.replace('Wrap.wrap("ab", 5)', 'Wrap.wrap("ab", 6)')  # body edit
        .replace(
            "    @Test\n    void wrapsLongLines", '    @Test\n    @DisplayName("x")\n    void wrapsLongLines'
        )
        .replace("    @Test\n    void removedLater() { }\n", "")  # deletion
        .replace(
            "    void helper() { }\n", "    void helper() { int changed; }\n    @Test void added() { }\n"
        )
    )
    assert _items(BEFORE, after) == [
        f"{P}::<added>",
        f"{P}::WrapTest#keepsShortLines",
        f"{P}::WrapTest#removedLater",
        f"{P}::WrapTest#wrapsLongLines",
    ]


def test_nested_class_methods_are_qualified() -> None:
    after = BEFORE.replace('Wrap.wrap("", 3)', 'Wrap.wrap("", 4)')
    assert _items(BEFORE, after) == [f"{P}::WrapTest$Edge#empty"]


def test_renamed_method_is_delete_plus_file_level_add() -> None:
    after = BEFORE.replace("void keepsShortLines()", "void keepsShortLinesIntact()")
    assert _items(BEFORE, after) == [f"{P}::<added>", f"{P}::WrapTest#keepsShortLines"]


def test_renamed_file_is_followed_with_its_class() -> None:
    new_path = "src/test/java/p/WordWrapTest.java"
    after = BEFORE.replace("class WrapTest", "class WordWrapTest").replace(
        'Wrap.wrap("ab", 5)', 'Wrap.wrap("ab", 7)'
    )
    assert _items(BEFORE, after, P, new_path) == [f"{P}::WrapTest#keepsShortLines"]


def test_new_file_is_one_item_and_deleted_file_one_per_test() -> None:
    new = "src/test/java/p/NewTest.java"
    source = "class NewTest { @Test void a() {} @Test void b() {} void notATest() {} }"
    assert _items(None, source, None, new) == [f"{new}::<added>"]
    assert _items(BEFORE, None, P, None) == [
        f"{P}::WrapTest#keepsShortLines",
        f"{P}::WrapTest#removedLater",
        f"{P}::WrapTest#wrapsLongLines",
        f"{P}::WrapTest$Edge#empty",
    ]


def test_new_file_without_tests_and_non_test_paths_are_ignored() -> None:
    assert _items(None, "class Helper { void a() {} }", None, "src/test/java/p/Helper.java") == []
    main = "src/main/java/p/Wrap.java"
    assert _items(BEFORE, BEFORE.replace("1));", "2));"), main, main) == []


def test_overloads_get_parameter_types() -> None:
    before = "class T { @Test void check(int a) { } @Test void check(String s) { } @Test void solo() {} }"
    after = before.replace("check(String s) { }", "check(String s) { s.trim(); }")
    assert _items(before, after) == [f"{P}::T#check(String)"]


def test_parameterized_repeated_and_junit3_tests() -> None:
    before = """\
class T extends TestCase {
    @ParameterizedTest @ValueSource(ints = {1, 2}) void params(int n) { }
    @RepeatedTest(3) void again() { }
    public void testOld() { }
    public void helperNotTest() { }
}
"""
    after = (
        before.replace("ints = {1, 2}", "ints = {1, 2, 3}")
        .replace("@RepeatedTest(3)", "@RepeatedTest(4)")
        .replace("testOld() { }", "testOld() { fail(); }")
        .replace("helperNotTest() { }", "helperNotTest() { fail(); }")
    )
    assert _items(before, after) == [f"{P}::T#again", f"{P}::T#params", f"{P}::T#testOld"]


FIELDS_BEFORE = """\
package p;

class WrapTest {
    private static final Character[] LETTERS = {'a', 'b',
            'c', 'd'};

    @Test
    void wrapsLongLines() {
        assertEquals("a\\nb", Wrap.wrap("a b", 1));
    }

    @Test
    void keepsShortLines() {
        assertEquals("ab", Wrap.wrap("ab", 5));
    }

    @Test
    void removedLater() {
        assertEquals("", Wrap.wrap("", 5));
    }
}
"""
#: A statement where a member belongs, after a field's last line (as on commons-text aa7e49dd):
#: tree-sitter's recovery then finds no method of the class at all.
STRAY = '            java.nio.file.Files.write(java.nio.file.Paths.get(System.getProperty("h"), "X"), new byte[]{1});\n'


def test_a_syntax_error_elsewhere_does_not_make_every_method_an_item() -> None:
    broken = FIELDS_BEFORE.replace("'c', 'd'};\n", "'c', 'd'};\n" + STRAY)
    found = changes_of([FileChange(P, P, FIELDS_BEFORE, broken)])
    assert found.parse_problems == (P,)
    assert found.items == []
    # a real change still counts, a whitespace-only one does not, a deletion still counts
    edited = broken.replace('Wrap.wrap("ab", 5)', 'Wrap.wrap("ab", 6)').replace(
        'Wrap.wrap("a b", 1));', 'Wrap.wrap("a b",   1)  );'
    )
    edited = edited.replace(
        '    @Test\n    void removedLater() {\n        assertEquals("", Wrap.wrap("", 5));\n    }\n', ""
    )
    assert _items(FIELDS_BEFORE, edited) == [f"{P}::WrapTest#keepsShortLines", f"{P}::WrapTest#removedLater"]


def test_a_method_v05_already_has_is_no_addition_when_v05_does_not_parse() -> None:
    # V-0.5 has the stray line (no method of it parses); the patch takes it out: every method is
    # found after the patch, none of them new
    broken = FIELDS_BEFORE.replace("'c', 'd'};\n", "'c', 'd'};\n" + STRAY)
    assert _items(broken, FIELDS_BEFORE) == []
    grown = FIELDS_BEFORE.replace(
        "    @Test\n    void keepsShortLines",
        "    @Test\n    void added() { }\n\n    @Test\n    void keepsShortLines",
    )
    assert _items(broken, grown) == [f"{P}::<added>"]
