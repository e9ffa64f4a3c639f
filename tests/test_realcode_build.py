"""tebench build --benchmark realcode: cutting files around methods, stubs, and one real build."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_tebench.benchmarks.realcode.builder import covers
from pytest_tebench.benchmarks.realcode.builder import spread
from pytest_tebench.benchmarks.realcode.methods import MethodTask
from pytest_tebench.benchmarks.realcode.methods import make_stub
from pytest_tebench.benchmarks.realcode.methods import method_tasks
from pytest_tebench.benchmarks.realcode.methods import stub_statement
from pytest_tebench.java.parser import original_offset
from pytest_tebench.workspace.gitcmd import git

from conftest import TEST_MAVEN_REPO

# The RealCodeJava card's example row (algorithm-tools/CausalAnalysis), cut to its first method.
CARD_LEFT = (
    "package org.algorithmtools.ca4j.utils;\n\nimport java.util.ArrayList;\nimport java.util.List;\n\n"
    "public class IndicatorSeriesUtil {\n\n    public static List<IndicatorSeries> transferFromArray(double[] array){\n"
)
CARD_GT = (
    "        List<IndicatorSeries> list = new ArrayList<IndicatorSeries>();\n"
    "        for (int i = 0; i < array.length; i++) {\n"
    "            list.add(i, new IndicatorSeries(i, array[i], String.valueOf(i)));\n"
    "        }\n        return list;\n    }"
)
CARD_RIGHT = (
    "\n\n    public static double[] transferToArray(List<IndicatorSeries> series){\n"
    "        double[] resultArray = new double[series.size()];\n"
    "        for (int i = 0; i < series.size(); i++) {\n"
    "            resultArray[i] = series.get(i).getValue();\n        }\n        return resultArray;\n    }\n\n}"
)
PATH = "src/main/java/org/algorithmtools/ca4j/utils/IndicatorSeriesUtil.java"


def test_the_cards_row_is_cut_exactly_as_mera_cut_it() -> None:
    data = (CARD_LEFT + CARD_GT + CARD_RIGHT).encode()
    found = method_tasks(PATH, data)
    first, second = found.tasks
    assert (first.left, first.gt, first.right) == (CARD_LEFT, CARD_GT, CARD_RIGHT)
    assert first.intent == "transferFromArray[function]"
    assert first.source_key == "org/algorithmtools/ca4j/utils/IndicatorSeriesUtil.java"
    assert first.class_name == "org.algorithmtools.ca4j.utils.IndicatorSeriesUtil"
    assert (
        first.stub == "        return null;\n    }"
    )  # the card's "return List.of();", for any reference type
    assert first.body_lines == (8, 14)
    assert second.name == "transferToArray" and second.return_type == "double[]"
    assert second.left + second.gt + second.right == (CARD_LEFT + CARD_GT + CARD_RIGHT)
    assert second.gt.endswith("        return resultArray;\n    }") and second.right == "\n\n}"


SNIPPET = """package p;

public abstract class Shapes<T> implements Runnable {
    private final int size;

    public Shapes(int size) {
        this.size = size;
        check();
    }

    abstract T make();

    public int area() {
        return size * size;
    }

    public void run() {
        check();
        System.out.println(size);
    }

    public boolean big() {
        int limit = 10;
        return size > limit;
    }

    char initial(String name) {
        String trimmed = name.trim();
        return trimmed.charAt(0);
    }

    protected double ratio() {
        double d = size;
        return d / 2;
    }

    T cached() {
        T made = make();
        return made;
    }

    String[] parts() { String a = "a"; return new String[] {a}; }

    public java.util.List<String> names() {
\t\tString first = "x";
\t\treturn java.util.List.of(first);
\t}

    interface Visitor {
        void visit(Object o);

        default String name() {
            String simple = getClass().getSimpleName();
            return simple;
        }
    }

    private void check() {
        // comments are no statements
        if (size < 0) {
            throw new IllegalArgumentException();
        }
        System.out.println();
    }
}
"""


def test_candidates_stubs_and_reasons_on_a_snippet() -> None:
    found = method_tasks("src/main/java/p/Shapes.java", SNIPPET.encode())
    stubs = {task.signature: task.stub for task in found.tasks}
    assert stubs == {
        "Shapes#run()": "    }",
        "Shapes#big()": "        return false;\n    }",
        "Shapes#initial(String)": "        return '\\0';\n    }",
        "Shapes#ratio()": "        return 0;\n    }",
        "Shapes#cached()": "        return null;\n    }",
        "Shapes#names()": "\t\treturn null;\n\t}",
        "Shapes$Visitor#name()": "            return null;\n        }",
        "Shapes#check()": "    }",
    }
    assert found.rejected == {
        "src/main/java/p/Shapes.java::Shapes#Shapes(int)": "a constructor",
        "src/main/java/p/Shapes.java::Shapes#make()": "no body (abstract, native or an interface method)",
        "src/main/java/p/Shapes.java::Shapes#area()": "fewer than 2 statements (1)",
        "src/main/java/p/Shapes.java::Shapes#parts()": "the body's '{' does not end its line",
        "src/main/java/p/Shapes.java::Shapes$Visitor#visit(Object)": "no body (abstract, native or an interface method)",
    }
    for task in found.tasks:
        assert task.left + task.gt + task.right == SNIPPET
        assert task.left.endswith("{\n") and task.gt.endswith("}")
    # the file with the stub in place of each body is what the build compiles
    check = next(t for t in found.tasks if t.name == "check")
    assert "// comments are no statements" in check.gt
    assert (check.left + check.stub + check.right).count("{") == SNIPPET.count("{") - 1


def test_a_crlf_file_with_a_bom_is_cut_on_its_own_bytes() -> None:
    text = "\ufeffpackage p;\r\nclass A {\r\n    int f(int x) {\r\n        int y = x;\r\n        return y;\r\n    }\r\n}\r\n"
    data = text.encode("utf-8")
    (task,) = method_tasks("src/main/java/p/A.java", data).tasks
    assert (task.left + task.gt + task.right).encode("utf-8") == data
    assert task.gt == "        int y = x;\r\n        return y;\r\n    }"
    assert task.stub == "        return 0;\r\n    }"  # in the file's own line ends
    assert task.body_lines == (3, 6)
    # normalised offset 0 is after the BOM; after the first CRLF every offset moves by one more
    assert original_offset(data, 0) == 3
    assert original_offset(data, len("package p;\n")) == 3 + len("package p;\r\n")


def test_stub_statements_per_return_type() -> None:
    assert stub_statement("void") == ""
    assert [stub_statement(t) for t in ("int", "long", "byte", "short", "float", "double")] == [
        "return 0;"
    ] * 6
    assert stub_statement("boolean") == "return false;"
    assert stub_statement("char") == "return '\\0';"
    assert {stub_statement(t) for t in ("String", "int[]", "T", "List", "Integer")} == {"return null;"}
    # a body whose lines are all blank keeps the closing line and indents one level deeper
    assert make_stub("int", "\n  }") == "      return 0;\n  }"


def _task(path: str, name: str, lines: tuple[int, int] = (1, 2)) -> MethodTask:
    return MethodTask(path, path, "C", name, f"C#{name}()", "int", "", "", "", "", lines)


def test_spread_takes_every_files_first_method_first_and_coverage_is_per_body_line() -> None:
    tasks = [_task("b", "b1"), _task("b", "b2"), _task("a", "a1"), _task("b", "b3"), _task("c", "c1")]
    assert [t.name for t in spread(tasks)] == ["a1", "b1", "c1", "b2", "b3"]
    body = _task("x", "m", (10, 14))
    assert covers({"x": [3, 12]}, body) and covers({"x": [14]}, body)
    assert not covers({"x": [9, 15]}, body) and not covers({"y": [12]}, body)


# -- one real build ----------------------------------------------------------------------------
MINI = Path(__file__).parent / "fixtures" / "mini-maven"
PKG = "src/main/java/org/tebench/textkit"
TEST_PKG = "src/test/java/org/tebench/textkit"
COUNTER = """package org.tebench.textkit;

/** Counts words: void, boolean and char methods, one no test covers, one no test checks. */
public class Counter {
    private int count;
    private String last = "";

    public void add(String word) {
        count++;
        last = word;
    }

    public boolean isEmpty() {
        int seen = count;
        return seen == 0;
    }

    public char lastInitial() {
        String word = last;
        return word.isEmpty() ? '?' : word.charAt(0);
    }

    public void reset() {
        count = 0;
        last = "";
    }

    public int size() {
        return count;
    }

    public String describe() {
        String text = count + " words";
        return text;
    }
}
"""
COUNTER_CONTRACT = """package org.tebench.textkit;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

abstract class CounterContract {
    abstract Counter make();

    @Test
    void startsEmpty() {
        assertTrue(make().isEmpty());
    }
}
"""
COUNTER_TEST = """package org.tebench.textkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

class CounterTest extends CounterContract {
    @Override
    Counter make() {
        return new Counter();
    }

    @Test
    void addCounts() {
        Counter c = make();
        c.add("apple");
        assertFalse(c.isEmpty());
    }

    @Test
    void initial() {
        Counter c = make();
        c.add("kiwi");
        assertEquals('k', c.lastInitial());
    }

    @Test
    void resetKeepsWorking() {
        Counter c = make();
        c.add("a");
        c.reset();
        c.add("b");
        assertEquals('b', c.lastInitial());
    }
}
"""
T = "org.tebench.textkit."


def _project(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "textkit"
    shutil.copytree(MINI, repo)
    (repo / PKG / "Counter.java").write_text(COUNTER, encoding="utf-8")
    (repo / TEST_PKG / "CounterContract.java").write_text(COUNTER_CONTRACT, encoding="utf-8")
    (repo / TEST_PKG / "CounterTest.java").write_text(COUNTER_TEST, encoding="utf-8")
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "add", "--all")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "textkit")
    git(
        repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "--allow-empty", "-m", "later"
    )
    return repo, git(repo, "rev-parse", "HEAD~1").stdout.decode().strip()


@pytest.mark.maven
def test_build_at_a_commit_gives_exact_contexts_and_pass_and_fail_to_pass_by_hand(tmp_path: Path) -> None:
    repo, first = _project(tmp_path)
    out = tmp_path / "realcode.jsonl"
    command = [
        sys.executable, "-m", "pytest_tebench.cli", "build", str(repo), "--benchmark", "realcode",
        "--repo", "acme/textkit", "--commit", first, "--out", str(out), "--executor", "local",
        "--cache-dir", str(tmp_path / "cache"), "--maven-repo", str(TEST_MAVEN_REPO),
    ]  # fmt: skip
    built = subprocess.run(command, capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stdout + built.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    by_intent = {row["meta"]["intent"]: row for row in rows}
    # round-robin over Clamp.java, Counter.java, Slug.java
    assert [row["meta"]["intent"] for row in rows] == [
        "clamp[function]", "add[function]", "slugify[function]",
        "isEmpty[function]", "lastInitial[function]", "reset[function]",
    ]  # fmt: skip
    assert [row["meta"]["id"] for row in rows] == list(range(6))
    for row in rows:
        meta = row["meta"]
        original = git(repo, "show", f"{first}:{meta['file_path']}").stdout.decode("utf-8")
        assert meta["left_context"] + meta["gt"] + meta["right_context"] == original
        assert row["inputs"]["left_context"] == meta["left_context"] and row["outputs"] == meta["gt"]
        assert meta["base_commit"] == first and meta["repo"] == "acme/textkit"
        assert (meta["build_command"], meta["test_command"], meta["intent_type"]) == (
            "",
            "mvn test",
            "function",
        )
        assert meta["image_name"].endswith("-eclipse-temurin-17")
        assert set(meta["FAIL_TO_PASS"]) <= set(meta["PASS_TO_PASS"])
    # Worked out by hand from the tests (coverage is attributed per declaring test class):
    counter_tests = [
        f"{T}CounterTest::addCounts",
        f"{T}CounterTest::initial",
        f"{T}CounterTest::resetKeepsWorking",
    ]
    expected = {
        # clamp(-5, 0, 10) == 0 also holds for "return 0;"
        "clamp[function]": (
            [f"{T}ClampTest::aboveHigh", f"{T}ClampTest::belowLow", f"{T}ClampTest::inside"],
            [f"{T}ClampTest::aboveHigh", f"{T}ClampTest::inside"],
        ),
        "add[function]": (counter_tests, counter_tests),
        # the contract's test runs through CounterTest and is listed under its declaring class
        "isEmpty[function]": ([f"{T}CounterContract::startsEmpty", *counter_tests], [f"{T}CounterContract::startsEmpty"]),
        "lastInitial[function]": (counter_tests, [f"{T}CounterTest::initial", f"{T}CounterTest::resetKeepsWorking"]),
        # nothing checks reset(): kept, with an empty FAIL_TO_PASS, as MERA keeps such rows
        "reset[function]": (counter_tests, []),
        # argLineApplied passes with the stub too: it only shares the class with slugify's tests
        "slugify[function]": (
            [
                f"{T}SlugTest::argLineApplied", f"{T}SlugTest::lowercases", f"{T}SlugTest::slugs",
                f"{T}SlugTest$Blank::nullGivesEmpty", f"{T}SlugTest$Blank::spacesGiveEmpty",
            ],
            [
                f"{T}SlugTest::lowercases", f"{T}SlugTest::slugs",
                f"{T}SlugTest$Blank::nullGivesEmpty", f"{T}SlugTest$Blank::spacesGiveEmpty",
            ],
        ),
    }  # fmt: skip
    assert {
        k: (r["meta"]["PASS_TO_PASS"], r["meta"]["FAIL_TO_PASS"]) for k, r in by_intent.items()
    } == expected
    assert by_intent["clamp[function]"]["meta"]["stub"] == "        return 0;\n    }"
    assert by_intent["add[function]"]["meta"]["stub"] == "    }"
    assert by_intent["isEmpty[function]"]["meta"]["stub"] == "        return false;\n    }"
    assert by_intent["lastInitial[function]"]["meta"]["stub"] == "        return '\\0';\n    }"
    rejections = json.loads(out.with_name("realcode.jsonl.rejections.json").read_text())["methods"]
    counter = f"{PKG}/Counter.java::Counter#"
    assert rejections[counter + "describe()"] == "not covered by any test"
    assert rejections[counter + "size()"] == "fewer than 2 statements (1)"
    assert rejections[f"{PKG}/Clamp.java::Clamp#Clamp()"] == "a constructor"
    assert "6 instances written" in built.stdout and "(5 with FAIL_TO_PASS)" in built.stdout

    # resumed from the state file: no launch again; dropping the stub that fails nothing
    again = subprocess.run([*command, "--require-fail-to-pass"], capture_output=True, text=True, check=False)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "(5 already run)" in again.stdout and "[class " not in again.stdout
    assert again.stdout.count("(stored)") == 6
    kept = [json.loads(line)["meta"]["intent"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert kept == [row["meta"]["intent"] for row in rows if row["meta"]["intent"] != "reset[function]"]


def test_bad_build_options_are_clear_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_tebench.cli import main

    repo = tmp_path / "repo"
    git(tmp_path, "init", "--quiet", str(repo))
    base = ["build", str(repo), "--repo", "acme/x", "--out", str(tmp_path / "o.jsonl"), "--executor", "local"]
    assert main([*base, "--benchmark", "realcode", "--since", "2024-01-01"]) == 2
    assert (
        "--since: history options of the tebench builder; realcode takes --commit" in capsys.readouterr().err
    )
    assert main([*base, "--benchmark", "realcode", "--retry-unsupported"]) == 2
    assert "--retry-unsupported: history options of the tebench builder" in capsys.readouterr().err
    assert main([*base, "--commit", "HEAD"]) == 2
    assert "are options of --benchmark realcode" in capsys.readouterr().err
    assert (
        main([*base, "--benchmark", "realcode", "--commit", "nope", "--cache-dir", str(tmp_path / "c")]) == 2
    )
    assert "no commit 'nope' in" in capsys.readouterr().err
    assert main([*base, "--benchmark", "realcode", "--max", "0", "--cache-dir", str(tmp_path / "c")]) == 2
    assert "--max must be at least 1, not 0" in capsys.readouterr().err


def test_launch_outcomes_become_state_entries_or_reasons() -> None:
    from pytest_tebench.benchmarks.realcode.builder import _class_entry
    from pytest_tebench.benchmarks.realcode.builder import _stub_entry
    from pytest_tebench.errors import HarnessError
    from pytest_tebench.errors import InputError
    from pytest_tebench.run.maven.jacoco import CoverageReport
    from pytest_tebench.run.maven.jacoco import LineCoverage
    from pytest_tebench.run.maven.surefire import TestId
    from pytest_tebench.run.maven.surefire import TestOutcome
    from pytest_tebench.run.maven.testrun import SelectionRun

    passed = (TestOutcome(TestId("p.T", "a"), "passed", 1), TestOutcome(TestId("p.T", "b"), "failed", 1))
    lines = {3: LineCoverage(0, 2, 0, 0), 4: LineCoverage(1, 0, 0, 0), 7: LineCoverage(0, 1, 0, 0)}
    report = CoverageReport(files={"p/A.java": lines}, classes={"p.A": "p/A.java"})
    ok = SelectionRun("ok", True, True, passed, coverage=report, timings={"compile+test": 4.25})
    entry = _class_entry("p.T", ok)
    assert entry["outcomes"] == {"p.T#a": "passed", "p.T#b": "failed"}
    assert entry["covered"] == {"p/A.java": [3, 7]} and entry["seconds"] == 4.2
    with pytest.raises(HarnessError, match="no coverage: agent missing"):
        _class_entry("p.T", SelectionRun("ok", True, True, passed, coverage_error="agent missing"))
    with pytest.raises(InputError, match="the commit does not build: compile_error: boom"):
        _class_entry("p.T", SelectionRun("compile_error", False, None, error="boom"))
    timed_out = _class_entry("p.T", SelectionRun("timeout:test", True, True, passed, error="after 9 s"))
    assert timed_out["covered"] == {} and timed_out["error"] == "after 9 s"

    task = _task("src/main/java/p/A.java", "f")
    assert _stub_entry(task, SelectionRun("compile_error", False, None, error="x.java:[3] missing return"))[
        "rejected"
    ] == ("the stub does not compile: x.java:[3] missing return")
    assert _stub_entry(task, SelectionRun("timeout:test", True, True, error="timed out after 60 s"))[
        "rejected"
    ] == ("the stub's test run did not finish (timeout:test): timed out after 60 s")
    assert _stub_entry(task, ok)["outcomes"] == {"p.T#a": "passed", "p.T#b": "failed"}
