"""The pure parts of ``bench/reference_cost.py``: the non-gold patch, ratios, the driver's result."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"

BEFORE = """\
class CalcTest {
    @Test
    void adds() {
        Calc calc = new Calc();
        assertEquals(2, calc.add(1, 1));
    }

    @Test
    void subtracts() {
        assertEquals(0, new Calc().sub(1, 1));
    }
}
"""

GOLD = """\
diff --git a/src/test/java/CalcTest.java b/src/test/java/CalcTest.java
--- a/src/test/java/CalcTest.java
+++ b/src/test/java/CalcTest.java
@@ -2,5 +2,6 @@ class CalcTest {
     @Test
     void adds() {
         Calc calc = new Calc();
-        assertEquals(2, calc.add(1, 1));
+        assertEquals(3, calc.add(1, 2));
+        Assertions.assertTrue(calc.isClean());
     }
@@ -9,3 +10,4 @@ class CalcTest {
     void subtracts() {
         assertEquals(0, new Calc().sub(1, 1));
+        assertEquals(1, new Calc().sub(2, 1));
     }
"""


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reference_cost", BENCH / "reference_cost.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["reference_cost"] = module
    spec.loader.exec_module(module)
    return module


def _applied(tmp_path: Path, patch: str) -> str:
    target = tmp_path / "src" / "test" / "java" / "CalcTest.java"
    target.parent.mkdir(parents=True)
    target.write_text(BEFORE, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "apply", "-"], cwd=tmp_path, input=patch, text=True, check=True)
    return target.read_text(encoding="utf-8")


def test_drops_one_assertion_and_the_patch_still_applies(bench: ModuleType, tmp_path: Path) -> None:
    patch = bench.drop_one_assertion(GOLD)
    # the first added assertion of a hunk that changes more goes; the counts and later starts follow
    assert "+        assertEquals(3, calc.add(1, 2));" not in patch
    assert "@@ -2,5 +2,5 @@ class CalcTest {" in patch
    assert "@@ -9,3 +9,4 @@ class CalcTest {" in patch
    assert len(patch.splitlines()) == len(GOLD.splitlines()) - 1
    after = _applied(tmp_path, patch)
    assert "calc.add" not in after
    assert "Assertions.assertTrue(calc.isClean());" in after
    assert "assertEquals(1, new Calc().sub(2, 1));" in after


LONE_FIRST = """\
diff --git a/src/test/java/CalcTest.java b/src/test/java/CalcTest.java
--- a/src/test/java/CalcTest.java
+++ b/src/test/java/CalcTest.java
@@ -3,3 +3,4 @@ class CalcTest {
     void adds() {
         Calc calc = new Calc();
+        assertNotNull(calc);
         assertEquals(2, calc.add(1, 1));
@@ -9,3 +10,3 @@ class CalcTest {
     void subtracts() {
-        assertEquals(0, new Calc().sub(1, 1));
+        assertEquals(1, new Calc().sub(2, 1));
     }
"""


def test_a_lone_assertion_hunk_is_the_last_choice(bench: ModuleType, tmp_path: Path) -> None:
    patch = bench.drop_one_assertion(LONE_FIRST)
    # dropping the first hunk's assertion would leave that hunk changing nothing
    assert "+        assertNotNull(calc);" in patch
    assert "assertEquals(1, new Calc().sub(2, 1))" not in patch
    assert "@@ -9,3 +10,2 @@" in patch
    after = _applied(tmp_path, patch)
    assert "assertNotNull(calc);" in after
    assert "sub(" not in after


def test_no_added_assertion_gives_none(bench: ModuleType) -> None:
    no_assertion = LONE_FIRST.replace("assertNotNull(calc);", "calc.reset();").replace(
        "+        assertEquals(1, new Calc().sub(2, 1));", "+        new Calc().sub(2, 1);"
    )
    assert bench.drop_one_assertion(no_assertion) is None


def test_ratio_and_rate(bench: ModuleType) -> None:
    assert bench.ratio(412.3, 95.1) == "4.3x"
    assert bench.ratio(10.0, 0.0) == "n/a"
    assert bench.per_hour(3, 1800.0) == "6.0"
    assert bench.per_hour(3, 0.0) == "n/a"


def test_result_line_skips_the_reference_log(bench: ModuleType) -> None:
    out = "2026-11-27 12:00:00 - tubench - INFO - Running executability evaluation...\n"
    out += (
        bench.RESULT_MARK + '{"seconds": 1.5}\n' + bench.RESULT_MARK + '{"seconds": 2.5, "success": true}\n'
    )
    assert bench.result_line(out) == {"seconds": 2.5, "success": True}
    with pytest.raises(ValueError, match="no result line"):
        bench.result_line("Traceback (most recent call last):\n")
    with pytest.raises(ValueError, match="not an object"):
        bench.result_line(bench.RESULT_MARK + "[1]\n")


MULTI_LINE = """\
diff --git a/src/test/java/CalcTest.java b/src/test/java/CalcTest.java
--- a/src/test/java/CalcTest.java
+++ b/src/test/java/CalcTest.java
@@ -4,3 +4,6 @@ class CalcTest {
         Calc calc = new Calc();
         assertEquals(2, calc.add(1, 1));
+
+        assertEquals(calc.add(2, 2),
+                calc.add(3, 1));
     }
@@ -9,3 +12,4 @@ class CalcTest {
     void subtracts() {
         assertEquals(0, new Calc().sub(1, 1));
+        assertEquals(1, new Calc().sub(2, 1));
     }
"""


def test_an_assertion_over_two_lines_goes_whole(bench: ModuleType, tmp_path: Path) -> None:
    patch = bench.drop_one_assertion(MULTI_LINE)
    assert "calc.add(2, 2)" not in patch
    assert "calc.add(3, 1)" not in patch
    assert "@@ -4,3 +4,4 @@" in patch
    assert "@@ -9,3 +10,4 @@" in patch
    after = _applied(tmp_path, patch)
    assert "calc.add(3, 1)" not in after
    assert "assertEquals(1, new Calc().sub(2, 1));" in after


def test_a_relative_reference_python_keeps_its_venv(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the reference runs from its own working directory, so a relative path must become absolute,
    # and a venv's python (a link to the base interpreter) must not be resolved out of its venv
    venv_bin = tmp_path / "refvenv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(sys.executable)
    monkeypatch.chdir(tmp_path)
    assert bench.python_path("refvenv/bin/python") == str(venv_bin / "python")
    assert bench.python_path("python3") == "python3"


def test_a_warm_worker_line_says_whether_the_worker_just_built_the_same_project(bench: ModuleType) -> None:
    from pytest_tebench.benchmarks.base import BenchmarkInstance

    lang = BenchmarkInstance("commons-lang__d47dc7af", "commons-lang", "apache/commons-lang", (), "x:1")
    after_lang = bench.WorkerTimes(20.0, 4.0, "evaluated", after_project="commons-lang")
    after_gson = bench.WorkerTimes(25.0, 4.0, "evaluated", after_project="gson")
    assert bench.warm_label("first", lang, after_lang) == "first system, same project"
    assert bench.warm_label("second", lang, after_gson) == "second system, worker warm"
    assert bench.warm_label("first", lang, bench.WorkerTimes(1.0, 1.0, "", after_project="")) == (
        "first system, worker warm"
    )
