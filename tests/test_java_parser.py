"""Tests for the tree-sitter Java parser shared by identification and update scoring."""

from __future__ import annotations

import textwrap

import pytest

from pytest_tebench.java.parser import JavaFile
from pytest_tebench.java.parser import JavaMethod
from pytest_tebench.java.parser import identity_key
from pytest_tebench.java.parser import java_tokens
from pytest_tebench.java.parser import keyed_methods
from pytest_tebench.java.parser import lexical_tokens
from pytest_tebench.java.parser import overloaded_names
from pytest_tebench.java.parser import parse_java


def parse(source: str) -> JavaFile:
    return parse_java(textwrap.dedent(source))


def only(java_file: JavaFile, name: str) -> JavaMethod:
    found = [m for m in java_file.methods if m.name == name]
    assert len(found) == 1, [m.signature_key for m in java_file.methods]
    return found[0]


# ------------------------------------------------------------------------------------------ test detection

ANNOTATED_TEST_CASES = [
    ("own_line", "@Test\npublic void t() {}", True),
    ("same_line", "@Test public void t() {}", True),
    ("qualified_junit4", "@org.junit.Test\npublic void t() {}", True),
    ("qualified_jupiter", "@org.junit.jupiter.api.Test void t() {}", True),
    ("expected_arg", "@Test(expected = IllegalStateException.class)\npublic void t() {}", True),
    ("multiline_args", "@Test(\n    timeout = 100\n)\npublic void t() {}", True),
    ("final", "@Test public final void t() {}", True),
    ("synchronized", "@Test public synchronized void t() {}", True),
    ("static", "@Test static void t() {}", True),
    ("generic", "@Test public <T> void t() {}", True),
    ("non_void", "@Test public int t() { return 1; }", True),
    ("throws", "@Test void t() throws Exception {}", True),
    ("parameterized", '@ParameterizedTest\n@ValueSource(strings = {"a"})\nvoid t(String s) {}', True),
    ("repeated", "@RepeatedTest(3) void t() {}", True),
    ("factory", "@TestFactory Stream<DynamicTest> t() { return Stream.empty(); }", True),
    ("template", "@TestTemplate void t() {}", True),
    ("after_other_annotations", '@DisplayName("x")\n@Tag("slow")\n@Test\nvoid t() {}', True),
    ("disabled_still_test", "@Disabled @Test void t() {}", True),
    ("before_each", "@BeforeEach void t() {}", False),
    ("display_name_only", '@DisplayName("test") void t() {}', False),
    ("lookalike_annotation", "@Tested void t() {}", False),
    ("qualified_lookalike", "@org.example.TestHelper void t() {}", False),
    ("no_annotation_test_name", "public void testSomething() {}", False),
]


@pytest.mark.parametrize(
    ("member", "expected"), [c[1:] for c in ANNOTATED_TEST_CASES], ids=[c[0] for c in ANNOTATED_TEST_CASES]
)
def test_annotation_based_test_detection(member: str, expected: bool) -> None:
    java_file = parse_java("class FooTest {\n" + member + "\n}\n")
    assert not java_file.has_errors
    (method,) = java_file.methods
    assert method.is_test is expected


JUNIT3_CASES = [
    ("plain", "TestCase", "public void testAdd() {}", True),
    ("qualified_super", "junit.framework.TestCase", "public void testAdd() {}", True),
    ("custom_base", "AbstractDbTestCase", "public void testAdd() {}", True),
    ("generic_base", "BaseTestCase<Foo>", "public void testAdd() {}", True),
    ("not_public", "TestCase", "void testAdd() {}", False),
    ("private", "TestCase", "private void testAdd() {}", False),
    ("has_param", "TestCase", "public void testAdd(int x) {}", False),
    ("non_void", "TestCase", "public int testAdd() { return 0; }", False),
    ("wrong_prefix", "TestCase", "public void checkAdd() {}", False),
    ("capital_prefix", "TestCase", "public void TestAdd() {}", False),
    ("setup", "TestCase", "protected void setUp() {}", False),
    ("super_only_prefix", "TestCaseSupport", "public void testAdd() {}", False),
    ("plain_class", "Object", "public void testAdd() {}", False),
]


@pytest.mark.parametrize(
    ("superclass", "member", "expected"), [c[1:] for c in JUNIT3_CASES], ids=[c[0] for c in JUNIT3_CASES]
)
def test_junit3_test_detection(superclass: str, member: str, expected: bool) -> None:
    java_file = parse_java(f"public class FooTest extends {superclass} {{\n{member}\n}}\n")
    assert not java_file.has_errors
    (method,) = java_file.methods
    assert method.is_test is expected


def test_junit3_rule_applies_to_the_declaring_class_only() -> None:
    java_file = parse(
        """
        public class FooTest extends TestCase {
            public void testOuter() {}
            static class Helper {
                public void testInner() {}
            }
            static class InnerTest extends TestCase {
                public void testNested() {}
            }
        }
        """
    )
    tests = {m.key: m.is_test for m in java_file.methods}
    assert tests == {
        "FooTest#testOuter": True,
        "FooTest$Helper#testInner": False,
        "FooTest$InnerTest#testNested": True,
    }


def test_nested_and_interface_tests_and_abstract_methods() -> None:
    java_file = parse(
        """
        class OuterTest {
            @Nested
            class WhenEmpty {
                @Test void isEmpty() {}
                @Nested class AfterPush { @Test void notEmpty() {} }
            }
            interface Contract {
                @Test default void honoured() {}
                Object create();
            }
            abstract static class Base {
                @Test abstract void mustOverride();
            }
        }
        """
    )
    assert [m.key for m in java_file.test_methods()] == [
        "OuterTest$WhenEmpty#isEmpty",
        "OuterTest$WhenEmpty$AfterPush#notEmpty",
        "OuterTest$Contract#honoured",
        "OuterTest$Base#mustOverride",
    ]
    create = only(java_file, "create")
    assert (create.is_test, create.start_line, create.end_line) == (False, 10, 10)
    assert create.tokens == ("Object", "create", "(", ")", ";")


def test_anonymous_local_and_lambda_code_belongs_to_the_enclosing_method() -> None:
    java_file = parse(
        """
        class FooTest {
            @Test
            void t() {
                Runnable r = new Runnable() {
                    @Override public void run() {}
                };
                class Local { @Test void notSeparate() {} }
                Runnable l = () -> { };
            }
            enum Mode { A { @Override void go() {} }; void go() {} }
        }
        """
    )
    assert [m.signature_key for m in java_file.methods] == ["FooTest#t()", "FooTest$Mode#go()"]
    t = only(java_file, "t")
    assert (t.start_line, t.end_line) == (3, 10)
    assert "run" in t.tokens and "notSeparate" in t.tokens
    assert [ty.class_path for ty in java_file.types] == [("FooTest",), ("FooTest", "Mode")]


# ------------------------------------------------------------------------------------------ keys and types

PARAM_CASES = [
    ("int a", ("int",)),
    ("String[] a", ("String[]",)),
    ("int a[]", ("int[]",)),
    ("int[][] a", ("int[][]",)),
    ("List<String> a", ("List",)),
    ("java.util.List<String> a", ("List",)),
    ("Map.Entry<K, V> e", ("Entry",)),
    ("final @Nullable Map<String, List<Integer>> m", ("Map",)),
    ("String... xs", ("String...",)),
    ("List<? extends T>... xs", ("List...",)),
    ("T t, long n, boolean[] b", ("T", "long", "boolean[]")),
    ("Foo this, int a", ("int",)),
    ("", ()),
]


@pytest.mark.parametrize(("params", "expected"), PARAM_CASES, ids=[c[0] or "none" for c in PARAM_CASES])
def test_param_types_are_erased_simple_names(params: str, expected: tuple[str, ...]) -> None:
    java_file = parse_java(f"class Foo {{ <T, K, V> void m({params}) {{}} }}")
    assert not java_file.has_errors
    assert only(java_file, "m").param_types == expected


def test_overloads_get_distinct_signature_keys() -> None:
    java_file = parse(
        """
        class CheckTest {
            void check(int value) {}
            void check(String value) {}
        }
        """
    )
    first, second = java_file.methods
    assert first.key == second.key == "CheckTest#check"
    assert (first.signature_key, second.signature_key) == ("CheckTest#check(int)", "CheckTest#check(String)")


def test_same_name_in_sibling_nested_classes_gets_distinct_keys() -> None:
    java_file = parse(
        """
        class Outer {
            class A { void m() {} }
            static class B { void m() {} }
        }
        """
    )
    assert [m.key for m in java_file.methods] == ["Outer$A#m", "Outer$B#m"]
    assert [m.binary_class_name for m in java_file.methods] == ["Outer$A", "Outer$B"]


def test_identity_keys_stay_stable_when_an_overload_appears() -> None:
    old = parse_java("class C { void check(int v) {} void other() {} }")
    new = parse_java("class C { void check(int v) {} void check(String s) {} void other() {} }")
    overloaded = overloaded_names(old, new)
    assert overloaded == {"C#check"}
    assert [identity_key(m, overloaded) for m in old.methods] == ["C#check(int)", "C#other"]
    assert list(keyed_methods(new.methods, overloaded)) == ["C#check(int)", "C#check(String)", "C#other"]
    # Without the old version only the new file decides, and the lone old method keeps its plain key.
    assert [identity_key(m, overloaded_names(old)) for m in old.methods] == ["C#check", "C#other"]


def test_keyed_methods_keeps_the_first_of_duplicate_declarations() -> None:
    java_file = parse_java("class C { void m() { a(); } void m() { b(); } }")
    keyed = keyed_methods(java_file.methods, overloaded_names(java_file))
    assert list(keyed) == ["C#m"]
    assert "a" in keyed["C#m"].tokens


def test_constructors_use_the_class_name() -> None:
    java_file = parse(
        """
        class Outer {
            Outer() {}
            static class Inner { private Inner(int x) { this.x = x; } }
            record Point(int x, String... tags) {
                Point { if (x < 0) throw new IllegalArgumentException(); }
                Point(int x) { this(x, new String[0]); }
            }
        }
        """
    )
    assert [(m.signature_key, m.kind, m.is_test) for m in java_file.methods] == [
        ("Outer#Outer()", "constructor", False),
        ("Outer$Inner#Inner(int)", "constructor", False),
        ("Outer$Point#Point(int,String...)", "constructor", False),
        ("Outer$Point#Point(int)", "constructor", False),
    ]


def test_types_kinds_lines_and_superclass() -> None:
    java_file = parse(
        """
        package com.example.app;

        /** Docs. */
        @SuppressWarnings("x")
        public class AppTest extends com.example.BaseTest<String> implements Runnable {
            interface Api extends Runnable {}
            enum Color { RED }
            record Pair(int a, int b) {}
            @interface Marker {}
            static class Sub extends AppTest {}
            public void run() {}
        }
        class Second {}
        """
    )
    assert java_file.package == "com.example.app"
    assert [(t.class_path, t.kind, t.start_line, t.end_line, t.superclass) for t in java_file.types] == [
        (("AppTest",), "class", 5, 13, "BaseTest"),
        (("AppTest", "Api"), "interface", 7, 7, None),
        (("AppTest", "Color"), "enum", 8, 8, None),
        (("AppTest", "Pair"), "record", 9, 9, None),
        (("AppTest", "Marker"), "annotation", 10, 10, None),
        (("AppTest", "Sub"), "class", 11, 11, "AppTest"),
        (("Second",), "class", 14, 14, None),
    ]
    assert [t.binary_class_name for t in java_file.types][-2:] == ["AppTest$Sub", "Second"]


def test_package_is_empty_without_declaration() -> None:
    assert parse_java("class A {}").package == ""


# ------------------------------------------------------------------------------------------ line ranges

LINES_SOURCE = """\
package p;

class LinesTest {
    /**
     * Javadoc is not part of the method.
     */
    @Test
    @DisplayName("first")
    public void first() {
        assertTrue(true);
    }

    // a line comment is not part of it either
    @Test public void second() { }

    abstract void third(
        int a);
}
"""


def test_start_line_includes_annotations_but_not_javadoc() -> None:
    java_file = parse_java(LINES_SOURCE)
    assert [(m.name, m.start_line, m.end_line) for m in java_file.methods] == [
        ("first", 7, 11),
        ("second", 14, 14),
        ("third", 16, 17),
    ]
    assert only(java_file, "first").annotations == ("Test", "DisplayName")
    assert java_file.methods[0].tokens[:2] == ("@", "Test")


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ([1, 2, 3], []),
        ([5], []),
        ([7], ["first"]),
        ([11], ["first"]),
        ([12, 13], []),
        ([14], ["second"]),
        ([10, 17], ["first", "third"]),
        ([16, 17, 99], ["third"]),
    ],
)
def test_methods_at_lines(lines: list[int], expected: list[str]) -> None:
    assert [m.name for m in parse_java(LINES_SOURCE).methods_at_lines(lines)] == expected


def test_crlf_gives_the_same_lines_and_tokens_as_lf() -> None:
    lf = parse_java(LINES_SOURCE)
    crlf = parse_java(LINES_SOURCE.replace("\n", "\r\n"))
    assert crlf.methods == lf.methods
    text_block = 'class A { String s = """\n  x\n  """; }'
    assert java_tokens(text_block.replace("\n", "\r\n")) == java_tokens(text_block)


def test_bytes_input_and_bom_match_str_input() -> None:
    source = 'class Ünïcode { @Test void prüfe() { String s = "日本語 ✓"; } }'
    from_str = parse_java(source)
    assert parse_java(source.encode("utf-8")) == from_str
    assert parse_java(b"\xef\xbb\xbf" + source.encode("utf-8")) == from_str


def test_non_utf8_bytes_match_surrogateescape_text() -> None:
    latin1 = 'class A { void f() { s = "caf\xe9"; } }'.encode("latin-1")
    from_bytes = parse_java(latin1)
    assert not from_bytes.has_errors
    assert parse_java(latin1.decode("utf-8", "surrogateescape")) == from_bytes
    assert '"caf\ufffd"' in only(from_bytes, "f").tokens


def test_unicode_identifiers_and_strings() -> None:
    java_file = parse(
        """
        class Ünïcode {
            @Test
            void prüfe日本() {
                String s = "日本語 ✓ // not a comment";
                int ñ = 1;
            }
        }
        """
    )
    assert not java_file.has_errors
    method = only(java_file, "prüfe日本")
    assert method.key == "Ünïcode#prüfe日本"
    assert (method.start_line, method.end_line, method.is_test) == (3, 7, True)
    assert '"日本語 ✓ // not a comment"' in method.tokens
    assert method.tokens[-6:] == ("int", "ñ", "=", "1", ";", "}")


# ------------------------------------------------------------------------------------------ robustness

MODERN_SOURCES = {
    "record_compact": "record R(int a) { R { if (a < 0) throw new IllegalArgumentException(); } }",
    "sealed_permits": (
        "sealed interface Shape permits Circle, Square {}\n"
        "final class Circle implements Shape {}\n"
        "non-sealed class Square implements Shape { void m() {} }"
    ),
    "switch_expression": (
        "class A { int f(Object o) { return switch (o) {"
        " case Integer i when i > 0 -> i; case String s -> { yield s.length(); } default -> 0; }; } }"
    ),
    "text_block": 'class A { String f() { return """\n  {"a": 1}\n  // not a comment\n  """; } }',
    "var_and_lambda": "class A { void f() { var xs = List.of(1); xs.forEach((var x) -> use(x)); } }",
    "pattern_instanceof": "class A { void f(Object o) { if (o instanceof String s && !s.isEmpty()) {} } }",
    "enum_with_bodies": (
        'enum Op { PLUS("+") { int apply(int a, int b) { return a + b; } };'
        " final String sym; Op(String s) { sym = s; } abstract int apply(int a, int b); }"
    ),
    "annotation_type": (
        "@interface Tag { String value(); int[] ids() default {}; Class<?> k() default Object.class; }"
    ),
    "wildcards": (
        "class A<T extends Comparable<? super T>> {"
        " Map<?, ? extends T> f(List<? super T> l) { return null; } }"
    ),
    "module_info": "module com.example { requires transitive java.sql; exports com.example.api; }",
    "method_reference": "class A { void f() { list.forEach(System.out::println); } }",
}


@pytest.mark.parametrize("source", MODERN_SOURCES.values(), ids=MODERN_SOURCES.keys())
def test_modern_java_parses_without_errors(source: str) -> None:
    java_file = parse_java(source)
    assert not java_file.has_errors
    for method in java_file.methods:
        assert method.tokens
        assert method.start_line <= method.end_line


def test_modern_java_members() -> None:
    assert [m.signature_key for m in parse_java(MODERN_SOURCES["record_compact"]).methods] == ["R#R(int)"]
    assert [m.signature_key for m in parse_java(MODERN_SOURCES["enum_with_bodies"]).methods] == [
        "Op#Op(String)",
        "Op#apply(int,int)",
    ]
    assert parse_java(MODERN_SOURCES["annotation_type"]).methods == ()
    assert parse_java(MODERN_SOURCES["module_info"]).types == ()
    sealed = parse_java(MODERN_SOURCES["sealed_permits"])
    assert [t.kind for t in sealed.types] == ["interface", "class", "class"]
    assert [m.key for m in sealed.methods] == ["Square#m"]


def test_syntax_error_keeps_recovered_methods() -> None:
    java_file = parse(
        """
        public class BrokenTest {
            @Test public void before() { int x = ; }
            @Test public void call() { foo( }
            @Test void after() { }
        }
        """
    )
    assert java_file.has_errors
    assert [(m.name, m.start_line, m.is_test) for m in java_file.methods] == [
        ("before", 3, True),
        ("call", 4, True),
        ("after", 5, True),
    ]


def test_missing_closing_brace_keeps_following_methods() -> None:
    java_file = parse(
        """
        public class BrokenTest {
            @Test void first() { }
            int int int;
            @Test void second() { }
        """
    )
    assert java_file.has_errors
    assert [m.key for m in java_file.methods] == ["BrokenTest#first", "BrokenTest#second"]


def test_clean_file_has_no_errors() -> None:
    assert not parse_java(LINES_SOURCE).has_errors
    assert parse_java("").methods == ()


def test_deeply_nested_expression_does_not_hit_recursion_limit() -> None:
    terms = " + ".join(f'"s{i}"' for i in range(3000))
    java_file = parse_java(f"class A {{ String f() {{ return {terms}; }} }}")
    assert len(only(java_file, "f").tokens) == 3000 * 2 - 1 + 8


# ------------------------------------------------------------------------------------------ tokens

TOKEN_CASES = [
    ("a + b", ["a", "+", "b"]),
    ("x >>>= 3;", ["x", ">>>=", "3", ";"]),
    ("f(a -> a::b, c...)", ["f", "(", "a", "->", "a", "::", "b", ",", "c", "...", ")"]),
    ('s = "a // b /* c */";', ["s", "=", '"a // b /* c */"', ";"]),
    ('s = "esc \\" q";', ["s", "=", '"esc \\" q"', ";"]),
    ("c = '\\n';", ["c", "=", "'\\n'", ";"]),
    ('t = """\n  hi "x"\n  """;', ["t", "=", '"""\n  hi "x"\n  """', ";"]),
    ("a /* block */ b // line\n c", ["a", "b", "c"]),
    ("/** doc */ @Test void x() {}", ["@", "Test", "void", "x", "(", ")", "{", "}"]),
    ("n = 0x1F + 1_000L + 3.5e-2f;", ["n", "=", "0x1F", "+", "1_000L", "+", "3.5e-2f", ";"]),
    ("", []),
]


@pytest.mark.parametrize(("fragment", "expected"), TOKEN_CASES, ids=[c[0] or "empty" for c in TOKEN_CASES])
def test_java_tokens(fragment: str, expected: list[str]) -> None:
    assert java_tokens(fragment) == expected


@pytest.mark.parametrize(
    "fragment",
    [
        "class A { void f() { ` x; } }",
        "class { } } } { ) ( ] [",
        'class A { void f() { String s = "abc; } }',
        "x @ @ 1e+ 0x 09. ### ;;",
        "} else { return x; }\n  @Test\n  public void t(",
    ],
)
def test_tokens_lose_no_text_on_broken_input(fragment: str) -> None:
    # tree-sitter puts skipped input into ERROR leaves, so every non-blank character survives tokenizing.
    assert "".join("".join(token.split()) for token in java_tokens(fragment)) == "".join(fragment.split())


METHOD_V1 = """\
class T {
    @Test
    public void t() {
        int x = compute(1, 2); // why
        assertEquals(3, x);
    }
}
"""

SAME_TOKENS_EDITS = {
    "reindent": METHOD_V1.replace("        int x", "            int x"),
    "split_line": METHOD_V1.replace("compute(1, 2)", "compute(\n            1,\n            2)"),
    "comment_edit": METHOD_V1.replace("// why", "// because reasons"),
    "comment_removed": METHOD_V1.replace(" // why", ""),
    "block_comment_added": METHOD_V1.replace("assertEquals", "/* check */ assertEquals"),
    "javadoc_added": METHOD_V1.replace("    @Test", "    /** Checks t. */\n    @Test"),
}

CHANGED_TOKENS_EDITS = {
    "disabled_added": METHOD_V1.replace("    @Test", "    @Disabled\n    @Test"),
    "expected_changed": METHOD_V1.replace("@Test", "@Test(expected = IllegalStateException.class)"),
    "literal_changed": METHOD_V1.replace("assertEquals(3", "assertEquals(4"),
    "string_whitespace": METHOD_V1.replace("compute(1, 2)", 'compute(1, " 2")'),
}


@pytest.mark.parametrize("edited", SAME_TOKENS_EDITS.values(), ids=SAME_TOKENS_EDITS.keys())
def test_layout_and_comment_edits_keep_tokens(edited: str) -> None:
    assert only(parse_java(edited), "t").tokens == only(parse_java(METHOD_V1), "t").tokens


@pytest.mark.parametrize("edited", CHANGED_TOKENS_EDITS.values(), ids=CHANGED_TOKENS_EDITS.keys())
def test_annotation_and_code_edits_change_tokens(edited: str) -> None:
    assert only(parse_java(edited), "t").tokens != only(parse_java(METHOD_V1), "t").tokens


def test_method_tokens_are_the_whole_declaration() -> None:
    method = only(parse_java(METHOD_V1), "t")
    assert method.tokens == (
        "@", "Test", "public", "void", "t", "(", ")", "{",
        "int", "x", "=", "compute", "(", "1", ",", "2", ")", ";",
        "assertEquals", "(", "3", ",", "x", ")", ";",
        "}",
    )  # fmt: skip
    assert java_tokens(METHOD_V1)[3:-1] == list(method.tokens)


# ------------------------------------------------------------------------------------------ paths


def test_deeply_nested_classes_parse_without_recursion_error() -> None:
    # issue 8 item 3: 1,500 nested classes raised RecursionError and turned the item into an error
    depth = 1500
    source = "".join(f"class C{i} {{ " for i in range(depth)) + "@Test void m() {}" + " }" * depth
    parsed = parse_java(source)
    assert len(parsed.types) == depth
    (method,) = parsed.methods
    assert method.class_path == tuple(f"C{i}" for i in range(depth)) and method.is_test
    # source order is kept: the outer class first, methods after the types that hold them
    assert parsed.types[0].class_path == ("C0",)


def test_the_lexer_alone_reads_literals_whole_and_skips_comments() -> None:
    text = 'void a() { /* c */ x("a\\nb", \'}\', 1.5e3f); // end\n  String s = """\n  hi """; $y = Ünï; }'
    assert lexical_tokens(text) == (
        "void", "a", "(", ")", "{", "x", "(", '"a\\nb"', ",", "'}'", ",", "1.5e3f", ")", ";",
        "String", "s", "=", '"""\n  hi """', ";", "$y", "=", "Ünï", ";", "}",
    )  # fmt: skip
    # the same tokens however the code is laid out, and an open comment runs to the end
    assert lexical_tokens("x (  \"a\\nb\" ,'}'\n,1.5e3f) ;") == lexical_tokens("x(\"a\\nb\",'}',1.5e3f);")
    assert lexical_tokens("a /* open") == ("a",)
