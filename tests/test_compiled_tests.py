"""Which test sources a launch on gold's compiled test tree compiles (run/maven/compiled_tests.py).

Class files come from the machine's ``javac`` (every constant-pool kind a test class uses:
lambdas, string switches, long constants, records); the trees are small hand-made ones.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_tebench.run.maven.compiled_tests import ClassOrigin
from pytest_tebench.run.maven.compiled_tests import Plan
from pytest_tebench.run.maven.compiled_tests import class_origin
from pytest_tebench.run.maven.compiled_tests import code_only
from pytest_tebench.run.maven.compiled_tests import declared_names
from pytest_tebench.run.maven.compiled_tests import declared_package
from pytest_tebench.run.maven.compiled_tests import java_text
from pytest_tebench.run.maven.compiled_tests import plan
from pytest_tebench.run.maven.compiled_tests import scan_test_files
from pytest_tebench.run.maven.compiled_tests import tree_digest

RICH = """package p.q;

import java.util.function.Supplier;

/** A test class with every constant-pool kind javac writes for tests. */
public class RichTest {
    static final long BIG = 1L << 40;
    static final double HALF = 0.5;
    interface Named { String name(); }
    record Pair(int a, String b) {}
    enum Kind { ONE, TWO }

    String pick(String s) {
        switch (s) {
            case "a": return "A";
            default: return s + BIG + HALF;
        }
    }

    Supplier<Named> named() {
        Runnable local = () -> new Object() { };
        local.run();
        class Local implements Named { public String name() { return "local"; } }
        return Local::new;
    }
}

class Secondary {}
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    javac = shutil.which("javac")
    assert javac, "the tests need a JDK (javac on PATH)"
    root = tmp_path_factory.mktemp("javac")
    source = root / "src" / "p" / "q" / "RichTest.java"
    source.parent.mkdir(parents=True)
    source.write_text(RICH)
    subprocess.run([javac, "-d", str(root / "out"), str(source)], check=True)
    subprocess.run([javac, "-g:none", "-d", str(root / "bare"), str(source)], check=True)
    return root


def test_class_origin_reads_every_class_javac_writes(compiled: Path) -> None:
    origins = {
        path.name: class_origin(path.read_bytes()) for path in sorted((compiled / "out/p/q").glob("*.class"))
    }
    assert set(origins) == {
        "RichTest.class", "RichTest$Named.class", "RichTest$Pair.class", "RichTest$Kind.class",
        "RichTest$1.class", "RichTest$1Local.class", "Secondary.class",
    }  # fmt: skip
    assert origins["RichTest$1Local.class"] == ClassOrigin("p/q/RichTest$1Local", "RichTest.java")
    assert origins["Secondary.class"] == ClassOrigin("p/q/Secondary", "RichTest.java")
    assert all(origin is not None and origin.source_file == "RichTest.java" for origin in origins.values())
    # without debug information there is no SourceFile: the planner then stays off
    bare = class_origin((compiled / "bare/p/q/RichTest.class").read_bytes())
    assert bare == ClassOrigin("p/q/RichTest", "")
    assert class_origin(b"not a class") is None
    assert class_origin((compiled / "out/p/q/RichTest.class").read_bytes()[:200]) is None


def test_names_packages_and_unicode_escapes() -> None:
    text = java_text(RICH.encode())
    # top-level types only: a member type is named through its outer type, a local one nowhere
    assert declared_names(text) == {"RichTest", "Secondary"}
    # braces that do not balance: every declared name counts
    assert declared_names("class A { class B {} ") == {"A", "B"}
    assert declared_names("} class A { class B {} {") == {"A", "B"}
    assert declared_package(text) == "p.q"
    assert declared_package("// package fake;\n/* package fake2; */\nclass A {}") == ""
    assert declared_package("package a . b ;") == "a.b"
    assert declared_package("package 1x;") is None
    assert declared_names(java_text(b"public @interface Marker {}")) == {"Marker"}
    # javac reads \\u escapes before names: so does the planner (a surrogate pair too)
    assert declared_names(java_text(b"class \\u0055til {} // \\uD83D\\uDE00")) == {"Util"}
    # a non-ASCII name is kept whole in any encoding
    assert declared_names(java_text("class Café {}".encode())) == {"Café".encode().decode("latin-1")}


def test_names_come_from_code_not_from_comments_or_literals() -> None:
    text = r'''String s = "// not a comment /* "; char c = '"'; char d = '\''; /* a class for x */ class Real {}
// class Fake
String b = """
  class InBlock \""" still in the block
  """; class After {} String e = "esc \\"; class Z {}
String u = "unterminated
class Afterwards {}
'''
    assert declared_names(text) == {"Real", "After", "Z", "Afterwards"}
    assert "InBlock" not in code_only(text) and "not a comment" not in code_only(text)
    assert (
        declared_names("/** the class for this test */ int x = y instanceof Object ? 1 : 2; class for {}")
        == set()
    )


# -- plan ---------------------------------------------------------------------------------------
def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


GOLD = {
    "src/test/java/p/ATest.java": "package p;\nclass ATest { Helper h; }\n",
    "src/test/java/p/Helper.java": "package p;\nclass Helper { static int X = 1; }\n",
    "src/test/java/p/BTest.java": "package p;\nclass BTest extends Base {}\n",
    "src/test/java/p/Base.java": "package p;\nabstract class Base { Helper h; }\n",
    "src/test/java/p/CTest.java": "package p;\nclass CTest { class Inner {} Runnable r = () -> {}; }\n",
    "src/test/resources/data.txt": "data\n",
}
#: gold's classes, as its test compile wrote them
CLASSES = {
    "target/test-classes/p/ATest.class": ClassOrigin("p/ATest", "ATest.java"),
    "target/test-classes/p/Helper.class": ClassOrigin("p/Helper", "Helper.java"),
    "target/test-classes/p/BTest.class": ClassOrigin("p/BTest", "BTest.java"),
    "target/test-classes/p/Base.class": ClassOrigin("p/Base", "Base.java"),
    "target/test-classes/p/CTest.class": ClassOrigin("p/CTest", "CTest.java"),
    "target/test-classes/p/CTest$Inner.class": ClassOrigin("p/CTest$Inner", "CTest.java"),
}


def planned(
    tmp_path: Path,
    changes: dict[str, str | None],
    *,
    classes: dict[str, ClassOrigin | None] | None = None,
    generated: dict[str, bytes] | None = None,
) -> Plan:
    gold_ws, ws = tmp_path / "gold", tmp_path / "ws"
    for path, text in GOLD.items():
        write(gold_ws / path, text)
        write(ws / path, text)
    for path, changed in changes.items():
        if changed is None:
            (ws / path).unlink()
        else:
            write(ws / path, changed)
    gold_files, current = scan_test_files(gold_ws, ("",)), scan_test_files(ws, ("",))
    differing = {p for p in {*gold_files, *current} if gold_files.get(p) != current.get(p)}
    return plan(
        ws,
        modules=("",),
        gold_files=gold_files,
        gold_sources={p: (gold_ws / p).read_bytes() for p in differing if (gold_ws / p).is_file()},
        current_files=current,
        classes=CLASSES if classes is None else classes,
        generated=generated or {},
    )


def test_the_same_tree_compiles_nothing(tmp_path: Path) -> None:
    same = planned(tmp_path, {})
    assert same == Plan(sources=5)
    assert same.describe() == "0 of 5 test sources compiled"


def test_a_changed_test_nobody_names_is_compiled_alone_and_its_classes_go(tmp_path: Path) -> None:
    changed = planned(tmp_path, {"src/test/java/p/CTest.java": "package p;\nclass CTest { void m() {} }\n"})
    assert changed.recompile == changed.changed == ("src/test/java/p/CTest.java",)
    assert changed.delete == ("target/test-classes/p/CTest$Inner.class", "target/test-classes/p/CTest.class")


def test_every_source_naming_a_changed_type_joins_and_so_do_its_namers(tmp_path: Path) -> None:
    """Helper changes: ATest and Base name it; BTest names only Base (it inherits Helper's use)."""
    changed = planned(
        tmp_path, {"src/test/java/p/Helper.java": "package p;\nclass Helper { static int X = 2; }\n"}
    )
    assert changed.changed == ("src/test/java/p/Helper.java",)
    assert changed.recompile == tuple(
        f"src/test/java/p/{name}.java" for name in ("ATest", "BTest", "Base", "Helper")
    )
    assert "target/test-classes/p/CTest.class" not in changed.delete
    assert len(changed.delete) == 4


def test_a_member_type_sharing_a_name_pulls_in_nobody(tmp_path: Path) -> None:
    """ATest gains a nested ``Inner``; CTest declares (so mentions) its own ``Inner``: a member
    type is named through its outer type, so CTest keeps gold's classes."""
    changed = planned(
        tmp_path,
        {"src/test/java/p/ATest.java": "package p;\nclass ATest { Helper h; static class Inner {} }\n"},
    )
    assert changed.recompile == ("src/test/java/p/ATest.java",)


def test_a_new_type_shadowing_a_name_pulls_in_its_users(tmp_path: Path) -> None:
    """A new file declaring (through a unicode escape) a class CTest's text names: CTest joins."""
    new = planned(
        tmp_path,
        {"src/test/java/p/NewTest.java": "package p;\nclass NewTest {}\nclass \\u0049nner {}\n"},
    )
    assert new.recompile == ("src/test/java/p/CTest.java", "src/test/java/p/NewTest.java")


def test_a_mention_is_a_whole_name_in_a_source_and_any_substring_in_a_generated_one(tmp_path: Path) -> None:
    """CTest's text holds "BaseX" and "p.Helper2" (other names), then "p.Base" qualified: it
    joins only for the last; a generated source joins for "Base_Gen"-like names too."""
    gold_text = 'package p;\nclass CTest { Object a = new BaseX(); String b = "x"; }\nclass BaseX {}\n'
    GOLD_C = GOLD["src/test/java/p/CTest.java"]
    try:
        GOLD["src/test/java/p/CTest.java"] = gold_text
        base = "package p;\nabstract class Base { int changed; }\n"
        alone = planned(tmp_path / "a", {"src/test/java/p/Base.java": base})
        assert "src/test/java/p/CTest.java" not in alone.recompile
        GOLD["src/test/java/p/CTest.java"] = gold_text.replace("String b", "p.Base c; String b")
        joined = planned(tmp_path / "b", {"src/test/java/p/Base.java": base})
        assert "src/test/java/p/CTest.java" in joined.recompile
        generated = {
            "target/generated-test-sources/test-annotations/p/Gen.java": b"package p; class Gen { BaseX_Impl i; }"
        }
        off = planned(
            tmp_path / "c",
            {"src/test/java/p/Base.java": base},
            classes={**CLASSES, "target/test-classes/p/Gen.class": ClassOrigin("p/Gen", "Gen.java")},
            generated=generated,
        )
        assert off.off.startswith("the generated source")
    finally:
        GOLD["src/test/java/p/CTest.java"] = GOLD_C


def test_a_removed_file_takes_its_classes_and_its_users_along(tmp_path: Path) -> None:
    removed = planned(tmp_path, {"src/test/java/p/Helper.java": None})
    assert "src/test/java/p/Helper.java" in removed.recompile
    assert "target/test-classes/p/Helper.class" in removed.delete
    assert "src/test/java/p/ATest.java" in removed.recompile


@pytest.mark.parametrize(
    ("changes", "classes", "generated", "off"),
    [
        (
            {"src/test/resources/data.txt": "other\n"},
            None,
            None,
            "a test file other than Java source differs",
        ),
        ({"src/test/java/module-info.java": "module m {}"}, None, None, "module-info.java differs"),
        ({"src/test/java/p/CTest.java": "package 9p;"}, None, None, "cannot read the package"),
        (
            {},
            {**CLASSES, "target/test-classes/p/ATest.class": ClassOrigin("p/ATest", "")},
            None,
            "has no SourceFile attribute",
        ),
        (
            {},
            {**CLASSES, "target/test-classes/q/Gen.class": ClassOrigin("q/Gen", "Gen.java")},
            None,
            "came from q/Gen.java, a source outside src/test",
        ),
        (
            {"src/test/java/p/CTest.java": "package p;\nclass CTest {}\n"},
            {
                **CLASSES,
                "target/test-classes/p/CTest_Gen.class": ClassOrigin("p/CTest_Gen", "CTest_Gen.java"),
            },
            {
                "target/generated-test-sources/test-annotations/p/CTest_Gen.java": b"package p; class CTest_Gen {}"
            },
            "the generated source target/generated-test-sources/test-annotations/p/CTest_Gen.java mentions",
        ),
    ],
)
def test_what_keeps_the_whole_tree_compiled(
    tmp_path: Path,
    changes: dict[str, str | None],
    classes: dict[str, ClassOrigin | None] | None,
    generated: dict[str, bytes] | None,
    off: str,
) -> None:
    assert off in planned(tmp_path, changes, classes=classes, generated=generated).off


def test_a_generated_source_naming_nothing_changed_is_kept(tmp_path: Path) -> None:
    kept = planned(
        tmp_path,
        {"src/test/java/p/CTest.java": "package p;\nclass CTest {}\n"},
        classes={
            **CLASSES,
            "target/test-classes/p/BTest_Gen.class": ClassOrigin("p/BTest_Gen", "BTest_Gen.java"),
        },
        generated={
            "target/generated-test-sources/test-annotations/p/BTest_Gen.java": b"package p; class BTest_Gen {}"
        },
    )
    assert kept.off == "" and kept.recompile == ("src/test/java/p/CTest.java",)


def test_scan_and_digest_follow_every_test_file(tmp_path: Path) -> None:
    write(tmp_path / "m/src/test/java/A.java", "class A {}")
    write(tmp_path / "m/src/main/java/B.java", "class B {}")
    files = scan_test_files(tmp_path, ("m",))
    assert list(files) == ["m/src/test/java/A.java"]
    before = tree_digest(files)
    write(tmp_path / "m/src/test/resources/x", "x")
    assert tree_digest(scan_test_files(tmp_path, ("m",))) != before
