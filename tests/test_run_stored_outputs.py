"""A bundle manifest written once per production tree, in the warm server (real Maven).

``tests/fixtures/mini-maven`` with maven-bundle-plugin's ``manifest`` bound to ``process-classes``
(as commons-parent binds it) and a test that reads the manifest of the classes it tests. In a warm
server the production launch runs the manifest once and every launch on the restored tree writes
that manifest back instead of running the mojo; a cold ``mvn`` runs it in every launch. Both give
the same verdict.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.local import LocalExecutor
from pytest_tebench.run.maven.dist import DEFAULT_MAVEN
from pytest_tebench.run.maven.dist import maven_tools
from pytest_tebench.run.maven.steps import compile_step
from pytest_tebench.run.maven.surefire import PASSED
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.testrun import SelectionRun

from conftest import TEST_MAVEN_REPO
from conftest import committed_checkout
from conftest import stored_build_run

pytestmark = pytest.mark.maven

FIXTURE = Path(__file__).parent / "fixtures" / "mini-maven"
PROJECT = "tebench/mini-maven-bundle"
MANIFEST_TEST = TestId("org.tebench.textkit.ManifestTest", "bundleNameIsInTheClassesManifest")
RECORD = "target/tebench-stored-outputs.txt"
BUNDLE = """
      <plugin>
        <groupId>org.apache.felix</groupId>
        <artifactId>maven-bundle-plugin</artifactId>
        <version>5.1.9</version>
        <executions>
          <execution>
            <id>bundle-manifest</id>
            <phase>process-classes</phase>
            <goals><goal>manifest</goal></goals>
          </execution>
        </executions>
        <configuration>
          <instructions><Bundle-SymbolicName>org.tebench.textkit</Bundle-SymbolicName></instructions>
        </configuration>
      </plugin>"""
#: Another mojo in ``process-classes``, not a pure writer the harness knows: the phase runs whole
#: in every launch.
COPY = """
        <executions>
          <execution>
            <id>copy-notes</id>
            <phase>process-classes</phase>
            <goals><goal>copy-resources</goal></goals>
            <configuration>
              <outputDirectory>${project.build.outputDirectory}/notes</outputDirectory>
              <resources><resource><directory>notes</directory></resource></resources>
            </configuration>
          </execution>
        </executions>"""
#: Where :data:`COPY` goes: the fixture's own maven-resources-plugin declaration.
RESOURCES_PLUGIN = "<artifactId>maven-resources-plugin</artifactId>\n        <version>3.3.1</version>"
MANIFEST_TEST_JAVA = """package org.tebench.textkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.io.FileInputStream;
import java.io.InputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.Test;

class ManifestTest {
    @Test
    void bundleNameIsInTheClassesManifest() throws Exception {
        File classes = new File(Clamp.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        try (InputStream in = new FileInputStream(new File(classes, "META-INF/MANIFEST.MF"))) {
            Manifest manifest = new Manifest(in);
            assertEquals("org.tebench.textkit", manifest.getMainAttributes().getValue("Bundle-SymbolicName"));
        }
    }
}
"""

Copy = Callable[..., Path]


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    def make(name: str, *, copying: str = "") -> Path:
        target = tmp_path / name
        shutil.copytree(FIXTURE, target, ignore=shutil.ignore_patterns("target"))
        pom = target / "pom.xml"
        text = pom.read_text().replace("    <plugins>", "    <plugins>" + BUNDLE, 1)
        assert RESOURCES_PLUGIN in text
        pom.write_text(text.replace(RESOURCES_PLUGIN, RESOURCES_PLUGIN + copying))
        test = target / "src/test/java/org/tebench/textkit/ManifestTest.java"
        test.write_text(MANIFEST_TEST_JAVA)
        return committed_checkout(target, {"notes/read-me.txt": "notes\n"})

    return make


def _run(executor: LocalExecutor, workspace: Path, store: Path) -> SelectionRun:
    return stored_build_run(executor, workspace, store, [MANIFEST_TEST], project=PROJECT)


def _outputs(run: SelectionRun, name: str) -> list[str]:
    return [step.output for step in run.steps if step.name == name]


def _stored_record(store: Path) -> str:
    records = list(store.glob(f"*/trees/target/{Path(RECORD).name}"))
    return records[0].read_text() if records else ""


def test_the_manifest_is_written_once_and_the_verdict_is_a_cold_launchs(copy: Copy, tmp_path: Path) -> None:
    warm = LocalExecutor(warm_jvm=True, warm_cache=tmp_path / "warm-cache")
    try:
        built = _run(warm, copy("built"), tmp_path / "store")
        again = _run(warm, copy("again"), tmp_path / "store")
    finally:
        warm.close()
    cold = _run(LocalExecutor(), copy("cold"), tmp_path / "cold-store")

    for run in (built, again, cold):
        assert run.status == "ok", run.error
        assert run.outcomes[MANIFEST_TEST].status == PASSED
    assert built.prebuilt.startswith("built ") and again.prebuilt.startswith("reused ")
    assert built.warm_jvm in ("started", "reused") and again.warm_jvm == "reused"
    # the production launch ran the manifest once, and the tree was stored with what it wrote
    (production,) = _outputs(built, "prebuild")
    assert "(bundle-manifest) @" in production
    assert _stored_record(tmp_path / "store").splitlines()[1:] == [
        "execution org.apache.felix:maven-bundle-plugin:manifest@bundle-manifest",
        "file classes/META-INF/MANIFEST.MF",
    ]
    # every launch on the restored tree wrote it back instead
    for output in [*_outputs(built, "compile+test"), *_outputs(again, "compile+test")]:
        assert "(bundle-manifest) @" not in output
        assert "maven-bundle-plugin:manifest@bundle-manifest] not run again" in output
    # a cold mvn ignores the switches: the mojo runs in its launches, and its tree holds no record
    assert all("(bundle-manifest) @" in output for output in _outputs(cold, "compile+test"))
    assert _stored_record(tmp_path / "cold-store") == ""
    assert not (tmp_path / "again" / RECORD).exists()  # taken away before any mojo ran


def test_a_phase_with_another_mojo_runs_whole_in_every_launch(copy: Copy, tmp_path: Path) -> None:
    warm = LocalExecutor(warm_jvm=True, warm_cache=tmp_path / "warm-cache")
    try:
        run = _run(warm, copy("mixed", copying=COPY), tmp_path / "store")
    finally:
        warm.close()
    assert run.status == "ok", run.error
    assert run.outcomes[MANIFEST_TEST].status == PASSED
    # neither ran in the production launch (its classes stay as compile left them) ...
    (production,) = _outputs(run, "prebuild")
    assert "(bundle-manifest) @" not in production and "(copy-notes) @" not in production
    assert _stored_record(tmp_path / "store") == ""
    assert not list((tmp_path / "store").glob("*/trees/target/classes/META-INF/MANIFEST.MF"))
    # ... and both ran in the test launch
    (launch,) = _outputs(run, "compile+test")
    assert "(bundle-manifest) @" in launch and "(copy-notes) @" in launch
    assert (tmp_path / "mixed" / "target/classes/notes/read-me.txt").is_file()

    # the same copy named as a pure writer (the switch's own list): stored when it writes under
    # target/, written back before the next mojo; never stored when it writes elsewhere
    tools = maven_tools(DEFAULT_MAVEN, None)
    warm = LocalExecutor(warm_jvm=True, warm_cache=tmp_path / "warm-cache")
    try:
        pure = copy("pure", copying=COPY)
        mojos = "-Dtebench.outputs.mojos=org.apache.maven.plugins:maven-resources-plugin:copy-resources," + (
            "org.apache.felix:maven-bundle-plugin:manifest"
        )
        stored = warm.run(
            pure, _step(tools, "-Dtebench.outputs=store", mojos, goal="compile"), maven_repo=TEST_MAVEN_REPO
        )
        assert stored.ok and stored.extra["warm_jvm"] in ("started", "reused"), stored.output
        assert (pure / RECORD).read_text().splitlines()[1:] == [
            "execution org.apache.felix:maven-bundle-plugin:manifest@bundle-manifest",
            "execution org.apache.maven.plugins:maven-resources-plugin:copy-resources@copy-notes",
            "file classes/META-INF/MANIFEST.MF",
            "file classes/notes/read-me.txt",
        ]
        # a newer source the copy would take: what comes back is the stored output, so it did not run
        (pure / "notes/read-me.txt").write_text("changed\n")
        replayed = warm.run(
            pure, _step(tools, "-Dtebench.outputs=replay", goal="test-compile"), maven_repo=TEST_MAVEN_REPO
        )
        assert replayed.ok and "(copy-notes) @" not in replayed.output, replayed.output
        assert "copy-resources@copy-notes] not run again" in replayed.output
        assert (pure / "target/classes/notes/read-me.txt").read_text() == "notes\n"
        assert not (pure / RECORD).exists()

        outside = copy(
            "outside",
            copying=COPY.replace("${project.build.outputDirectory}/notes", "${project.basedir}/copied"),
        )
        stored = warm.run(
            outside,
            _step(tools, "-Dtebench.outputs=store", mojos, goal="compile"),
            maven_repo=TEST_MAVEN_REPO,
        )
        assert (
            stored.ok
            and "will run in every launch: it wrote copied/read-me.txt, outside target/" in stored.output
        )
        assert not (outside / RECORD).exists()
    finally:
        warm.close()


def _step(tools: tuple[tuple[str, str], ...], *args: str, goal: str) -> BuildStep:
    step = compile_step(java_version=17, timeout=300, maven=tools, extra_args=args, main_only=True)
    return replace(step, argv=(*step.argv[:-1], goal), warm=True)
