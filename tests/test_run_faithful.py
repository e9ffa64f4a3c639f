"""Real Maven: a selection runs as the project runs its tests (tests/fixtures/mini-selection).

* ``old-surefire`` pins Surefire 2.17, which runs each method of ``-Dtest=Class#m1+m2`` as its
  own JUnit request: ``@BeforeClass`` starts a "server" once per method, on a new port, while the
  class keeps the first port. The build's check records Surefire 2.17, so the run selects the
  class and reads the two selected methods' results: both pass.
* ``module-path`` is a named module: Surefire 3 opens to the tests only the packages of the test
  classes that survive ``-Dtest``. ``BoxTest`` (package ``shape``) has JUnit reflect into package
  ``core``, which only ``EngineTest`` opens: selected alone, it passes because every test package
  is opened (``JDK_JAVA_OPTIONS``), as in the full ``mvn test``.
* ``parameterized`` is JUnit 4's ``Parameterized`` under Surefire 2.22.1 (commons-codec's, 2019):
  invocations are named ``sums[0]``..``sums[2]``, which ``-Dtest=Class#sums`` alone never matched
  (nothing ran); selected, ``sums`` runs three times and ``sumsEmpty`` (same prefix) not at all.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_tebench.run.local import LocalExecutor
from pytest_tebench.run.maven.dist import DEFAULT_MAVEN
from pytest_tebench.run.maven.jdk import discover_jdks
from pytest_tebench.run.maven.journal import read_journal
from pytest_tebench.run.maven.offline_run import run_warmed
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.surefire import PASSED
from pytest_tebench.run.maven.surefire import TestId

from conftest import TEST_MAVEN_REPO

pytestmark = pytest.mark.maven

FIXTURES = Path(__file__).parent / "fixtures" / "mini-selection"


def test_selection_runs_as_the_full_build_runs_it(tmp_path: Path) -> None:
    executor = LocalExecutor()
    if 17 not in discover_jdks():
        pytest.skip("needs JDK 17")
    settings = RunSettings(
        maven_repo=TEST_MAVEN_REPO,
        java_version=17,
        maven_version=DEFAULT_MAVEN,
        coverage=False,
        compile_timeout=240,
        test_timeout=240,
    )
    outcomes = {}
    for name, tests in (
        ("old-surefire", [TestId("org.tebench.port.ServerTest", m) for m in ("connects", "connectsAgain")]),
        ("module-path", [TestId("org.tebench.modular.shape.BoxTest", "engineFieldIsReadable")]),
        ("parameterized", [TestId("org.tebench.digest.ChecksumTest", "sums")]),
    ):
        workspace = tmp_path / name
        shutil.copytree(FIXTURES / name, workspace)
        warmed = run_warmed(executor, workspace, tests, settings, project=f"tebench/{name}")
        assert warmed.warmup is None or warmed.warmup.ok, warmed.warmup.error
        run = warmed.run
        assert run.status == "ok", run.error + "\n" + run.steps[-1].output
        outcomes[name] = ({str(o.test): (o.status, o.message) for o in run.tests}, run.by_class)
        if name == "parameterized":
            assert [o.invocations for o in run.tests] == [3]
            reports = workspace / "target" / "surefire-reports"
            assert "sumsEmpty" not in "".join(p.read_text() for p in reports.glob("TEST-*.xml"))
        if name == "module-path":
            (step,) = [s for s in run.steps if s.name == "compile+test"]
            assert "JDK_JAVA_OPTIONS" in step.output  # the launcher says it read the opens
    assert {
        e.get("surefire")
        for e in read_journal(TEST_MAVEN_REPO)
        if e.get("project", "").startswith("tebench/old-surefire")
    } == {"2.17"}
    assert outcomes == {
        "old-surefire": (
            {
                "org.tebench.port.ServerTest#connects": (PASSED, ""),
                "org.tebench.port.ServerTest#connectsAgain": (PASSED, ""),
            },
            True,
        ),
        "module-path": ({"org.tebench.modular.shape.BoxTest#engineFieldIsReadable": (PASSED, "")}, False),
        "parameterized": ({"org.tebench.digest.ChecksumTest#sums": (PASSED, "")}, False),
    }
