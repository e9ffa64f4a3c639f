"""A build plugin the POM names without a version runs at its release by the commit's date: real
Maven 3.9.9, Maven Central's own jars for the dates.

``tests/fixtures/mini-maven`` with ``build-helper-maven-plugin`` added without a version. Its
releases, read from Central's jars by hand (the newest entry of each): 3.0.0 built 2017-01-29,
3.1.0 2020-03-03. So a commit of 2019-06-01 runs 3.0.0 and one of 2020-04-01 3.1.0, while Maven
left alone takes today's newest.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_tebench.run.local import LocalExecutor
from pytest_tebench.run.maven.dist import DEFAULT_MAVEN
from pytest_tebench.run.maven.jdk import choose_jdk
from pytest_tebench.run.maven.jdk import discover_jdks
from pytest_tebench.run.maven.journal import recorded_unversioned
from pytest_tebench.run.maven.offline_run import run_warmed
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.surefire import PASSED
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.testrun import run_selection

from conftest import TEST_MAVEN_REPO

pytestmark = pytest.mark.maven

FIXTURE = Path(__file__).parent / "fixtures" / "mini-maven"
TEST = TestId("org.tebench.textkit.ClampTest", "belowLow")
HELPER = """      <plugin>
        <groupId>org.codehaus.mojo</groupId>
        <artifactId>build-helper-maven-plugin</artifactId>
        <executions>
          <execution>
            <id>extra-tests</id>
            <phase>generate-test-sources</phase>
            <goals><goal>add-test-source</goal></goals>
            <configuration><sources><source>src/extra-test/java</source></sources></configuration>
          </execution>
        </executions>
      </plugin>
    </plugins>"""
PINNED = "org.codehaus.mojo:build-helper-maven-plugin:3.0.0 (released 2017-01-29, the newest by 2019-06-01)"


def project(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(FIXTURE, target, ignore=shutil.ignore_patterns("target"))
    pom = target / "pom.xml"
    pom.write_text(pom.read_text(encoding="utf-8").replace("    </plugins>", HELPER, 1), encoding="utf-8")
    return target


def helper_versions(output: str) -> set[str]:
    """The build-helper versions Maven's log shows running (``--- build-helper:3.0.0:add-test-source``)."""
    return {
        line.split("build-helper:", 1)[1].split(":", 1)[0]
        for line in output.splitlines()
        if "--- build-helper:" in line
    }


@pytest.fixture(scope="module")
def settings() -> RunSettings:
    return RunSettings(
        maven_repo=TEST_MAVEN_REPO,
        java_version=choose_jdk(8, discover_jdks()).version,
        maven_version=DEFAULT_MAVEN,
        compile_timeout=240,
        test_timeout=240,
        coverage=False,
        plugins_released_by="2019-06-01T12:00:00+02:00",
    )


def test_an_unversioned_plugin_runs_at_its_release_by_the_commits_date(
    tmp_path: Path, settings: RunSettings
) -> None:
    executor = LocalExecutor()
    first = project(tmp_path, "first")
    lines = (first / "pom.xml").read_text(encoding="utf-8").count("\n")
    warmed = run_warmed(executor, first, [TEST], settings, project="tebench/pins")
    assert warmed.warmup is None or warmed.warmup.ok, warmed.warmup and warmed.warmup.error
    run = warmed.run
    assert run.status == "ok", run.error
    assert run.outcomes[TEST].status == PASSED
    assert helper_versions("\n".join(step.output for step in run.steps)) == {"3.0.0"}
    assert run.plugins_pinned == (PINNED,)
    assert run.to_dict()["plugins_pinned"] == [PINNED]
    pom = (first / "pom.xml").read_text(encoding="utf-8")
    assert (
        "<artifactId>build-helper-maven-plugin</artifactId><version>3.0.0</version>"
        "<!-- pytest-tebench: pinned: the newest release by 2019-06-01 -->\n" in pom
    )
    assert pom.count("\n") == lines
    assert recorded_unversioned(settings.maven_repo, settings.digest(first)) == {
        "org.codehaus.mojo:build-helper-maven-plugin": ["mini-maven"]
    }

    # a fresh checkout of the same commit (a prediction's workspace): the journal's pins, no check
    second = project(tmp_path, "second")
    again = run_selection(executor, second, [TEST], settings)
    assert again.status == "ok", again.error
    assert [step.name for step in again.steps if "effective" in step.name] == []
    assert helper_versions("\n".join(step.output for step in again.steps)) == {"3.0.0"}
    assert again.plugins_pinned == (PINNED,)

    # the same tree of a commit of April 2020 (same digest, no new check): 3.1.0, built 2020-03-03
    later = replace(settings, plugins_released_by="2020-04-01")
    april = run_warmed(executor, project(tmp_path, "april"), [TEST], later, project="tebench/pins")
    assert april.run.status == "ok", april.run.error
    assert "effective-pom" not in [step.name for step in april.run.steps]
    assert helper_versions("\n".join(step.output for step in april.run.steps)) == {"3.1.0"}
    assert april.run.plugins_pinned == (
        "org.codehaus.mojo:build-helper-maven-plugin:3.1.0 (released 2020-03-03, the newest by 2020-04-01)",
    )

    # the control: without a date Maven takes today's newest, which is not 3.0.0
    unpinned = replace(settings, plugins_released_by="")
    today = run_warmed(executor, project(tmp_path, "today"), [TEST], unpinned, project="tebench/pins")
    assert today.run.status == "ok", today.run.error
    newest = helper_versions("\n".join(step.output for step in today.run.steps))
    assert len(newest) == 1 and newest != {"3.0.0"}
    assert today.run.plugins_pinned == ()
