"""Gold's test tree kept from gold's own launch in a warm server (real Maven).

``tests/fixtures/mini-maven`` with one more test, which fails if the harness's switch reached the
test JVM (Surefire hands Maven's user properties to it). In a warm server gold's first launch
compiles the whole test tree and runs the tests, and the server keeps the test side as the
``test-compile`` phase left it: no ``mvn test-compile`` launch of its own. A cold ``mvn`` keeps
nothing, so there the next trusted launch compiles the tree apart, as before; a cold ``mvn`` is
never given the switches (it would hand them to the tests as system properties), and the same
test checks it. Both store the same classes, and a later launch restores either and compiles
nothing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_tebench.run.local import LocalExecutor
from pytest_tebench.run.maven.prebuilt import MANIFEST
from pytest_tebench.run.maven.surefire import PASSED
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.testrun import SelectionRun

from conftest import committed_checkout
from conftest import stored_build_run

pytestmark = pytest.mark.maven

FIXTURE = Path(__file__).parent / "fixtures" / "mini-maven"
PROJECT = "tebench/mini-maven-test-side"
SWITCH_TEST = TestId("org.tebench.textkit.SwitchTest", "noSwitchOfTheHarnessReachesTheTests")
SWITCH_TEST_JAVA = """package org.tebench.textkit;

import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class SwitchTest {
    @Test
    void noSwitchOfTheHarnessReachesTheTests() {
        assertNull(System.getProperty("tebench.testside"));
        assertNull(System.getProperty("tebench.outputs"));
    }
}
"""


def _checkout(root: Path) -> Path:
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("target"))
    return committed_checkout(root, {"src/test/java/org/tebench/textkit/SwitchTest.java": SWITCH_TEST_JAVA})


def _run(executor: LocalExecutor, workspace: Path, store: Path, test: TestId = SWITCH_TEST) -> SelectionRun:
    run = stored_build_run(executor, workspace, store, [test], project=PROJECT)
    assert run.status == "ok", run.error
    assert run.outcomes[test].status == PASSED, run.outcomes
    return run


def _stored(store: Path) -> tuple[dict[str, bytes], dict[str, object]]:
    """The stored test classes (and copied resources) and what the manifest says of them."""
    (entry,) = store.glob(f"*/tests/*/{MANIFEST}")
    classes = entry.parent / "trees" / "target" / "test-classes"
    files = {p.relative_to(classes).as_posix(): p.read_bytes() for p in classes.rglob("*") if p.is_file()}
    manifest = json.loads(entry.read_text())
    return files, {key: manifest[key] for key in ("files", "modules", "classes", "generated", "usable")}


def test_gold_keeps_the_test_tree_its_own_launch_compiled(tmp_path: Path) -> None:
    warm = LocalExecutor(warm_jvm=True, warm_cache=tmp_path / "warm-cache")
    try:
        gold = _run(warm, _checkout(tmp_path / "gold"), tmp_path / "store")
        later = _run(warm, _checkout(tmp_path / "later"), tmp_path / "store")
    finally:
        warm.close()
    assert gold.warm_jvm in ("started", "reused")
    assert [step.name for step in gold.steps] == ["prebuild", "compile+test"]
    assert gold.prebuilt.startswith("built ")
    assert gold.prebuilt.endswith(": the whole test tree compiled in this launch"), gold.prebuilt
    assert (tmp_path / "gold/target/tebench-test-side/done").is_file()
    # a later launch restores it and compiles nothing of it
    assert [step.name for step in later.steps] == ["compile+test"]
    assert later.prebuilt.startswith("reused ") and "tests reused " in later.prebuilt
    assert later.prebuilt.endswith(": 0 of 3 test sources compiled"), later.prebuilt

    cold = LocalExecutor()
    first = _run(cold, _checkout(tmp_path / "cold-first"), tmp_path / "cold-store")
    second = _run(cold, _checkout(tmp_path / "cold-second"), tmp_path / "cold-store")
    assert [step.name for step in first.steps] == ["prebuild", "compile+test"]
    assert first.prebuilt.endswith(
        "tests off: not kept: no module's test side was kept (a cold launch keeps none)"
    ), first.prebuilt
    assert [step.name for step in second.steps] == ["prebuild-tests", "compile+test"]
    assert ": 0 of 3 test sources compiled" in second.prebuilt

    # the same classes, resources and manifest as the separate mvn test-compile stored
    warm_files, warm_manifest = _stored(tmp_path / "store")
    cold_files, cold_manifest = _stored(tmp_path / "cold-store")
    assert "org/tebench/textkit/SwitchTest.class" in warm_files
    assert warm_files == cold_files
    assert warm_manifest == cold_manifest
