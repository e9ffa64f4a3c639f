"""Artifacts published nowhere the harness reaches: Maven 3.8's and 3.9's words for them, and the
static rule on -SNAPSHOTs the reactor does not build (known from the POMs, before any download).

The log lines are modelled on real Maven 3.8.7 / 3.9.9 output of apache/commons-math 4 commits
(2019-2022) needing commons-numbers / commons-rng / commons-geometry snapshots; the POMs are
hand-written miniatures of the same layouts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_tebench.run.maven import log as mavenlog
from pytest_tebench.run.maven.unpublished import foreign_snapshots
from pytest_tebench.run.maven.unpublished import unbuildable_message

NUMBERS = "org.apache.commons:commons-numbers-core:jar:1.0-SNAPSHOT"
GAMMA = "org.apache.commons:commons-numbers-gamma:jar:1.0-SNAPSHOT"


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        pytest.param(
            "[ERROR] Failed to execute goal on project commons-math4-legacy: Could not resolve dependencies for "
            "project org.apache.commons:commons-math4-legacy:jar:4.0-SNAPSHOT: The following artifacts could not "
            f"be resolved: {NUMBERS}, {GAMMA}: Could not find artifact {NUMBERS} in central "
            "(https://repo.maven.apache.org/maven2) -> [Help 1]",
            [NUMBERS, GAMMA],
            id="3.8-could-not-resolve-dependencies",
        ),
        pytest.param(
            "[ERROR] Failed to execute goal on project commons-math4-legacy: Could not resolve dependencies for "
            f"project org.apache.commons:commons-math4-legacy:jar:4.0-SNAPSHOT: Failure to find {NUMBERS} in "
            "https://repo.maven.apache.org/maven2 was cached in the local repository, resolution will not be "
            "reattempted until the update interval of central has elapsed or updates are forced -> [Help 1]",
            [NUMBERS],
            id="3.8-was-cached-in-the-local-repository",
        ),
        pytest.param(
            "[ERROR] Failed to execute goal on project commons-math4-legacy: Could not resolve dependencies for "
            "project org.apache.commons:commons-math4-legacy:jar:4.0-SNAPSHOT: The following artifacts could not "
            f"be resolved: {NUMBERS} (absent), {GAMMA} (absent): Could not find artifact {NUMBERS} in central "
            "(https://repo.maven.apache.org/maven2) -> [Help 1]",
            [NUMBERS, GAMMA],
            id="3.9-absent",
        ),
        pytest.param(
            "[ERROR] Failed to execute goal on project commons-math4-legacy: Could not resolve dependencies for "
            "project org.apache.commons:commons-math4-legacy:jar:4.0-SNAPSHOT\n"
            f"[ERROR] dependency: {NUMBERS} (compile)\n"
            f"[ERROR] \t{NUMBERS} was not found in https://repo.maven.apache.org/maven2 during a previous attempt. "
            "This failure was cached in the local repository and resolution is not reattempted until the update "
            "interval of central has elapsed or updates are forced",
            [NUMBERS],
            id="3.9-cached-previous-attempt",
        ),
        pytest.param(
            "[ERROR] Failed to execute goal on project x: Could not resolve dependencies for project p:x:jar:1: "
            "The following artifacts could not be resolved: org.apache.commons:commons-rng-core:jar:1.4-SNAPSHOT "
            "(absent): Could not transfer artifact org.apache.commons:commons-rng-core:jar:1.4-SNAPSHOT from/to "
            "apache.snapshots (https://repository.apache.org/snapshots): Transfer failed for "
            "https://repository.apache.org/snapshots/org/apache/commons/commons-rng-core/1.4-SNAPSHOT/"
            "commons-rng-core-1.4-20210312.123456-7.jar -> [Help 1]",
            ["org.apache.commons:commons-rng-core:jar:1.4-SNAPSHOT"],
            id="3.9-transfer-failed-from-a-snapshot-repository",
        ),
        pytest.param(
            "[ERROR] Failed to execute goal on project x: Could not resolve dependencies for project p:x:jar:1: "
            "Failed to collect dependencies at com.corp:lib:jar:1: Failed to read artifact descriptor for "
            "com.corp:lib:jar:1: Could not transfer artifact com.corp:lib:pom:1 from/to corp "
            "(https://maven.corp.example/releases): status code: 401, reason phrase: Unauthorized (401) -> [Help 1]",
            ["com.corp:lib:pom:1"],
            id="401",
        ),
        pytest.param(
            "[ERROR] Failed to execute goal on project x: Could not resolve dependencies for project p:x:jar:1: "
            "Could not transfer artifact com.corp:lib:pom:1 from/to central "
            "(https://repo.maven.apache.org/maven2): Transfer failed for "
            "https://repo.maven.apache.org/maven2/com/corp/lib/1/lib-1.pom 403 Forbidden -> [Help 1]",
            ["com.corp:lib:pom:1"],
            id="403-from-central",
        ),
        pytest.param(
            "[FATAL] Non-resolvable parent POM for org.x:y:1.0: Could not transfer artifact org.x:parent:pom:7 "
            "from/to jboss (https://repository.jboss.org/nexus/content/groups/public): "
            "repository.jboss.org: Temporary failure in name resolution and 'parent.relativePath' points at "
            "no local POM @ line 5, column 11",
            ["org.x:parent:pom:7"],
            id="unknown-host",
        ),
        pytest.param(
            "[ERROR] Failed to execute goal on project x: Could not resolve dependencies for project p:x:jar:1: "
            "Failure to transfer org.x:lib:jar:2 from http://maven.example.org/repo was cached in the local "
            "repository, resolution will not be reattempted until the update interval of example has elapsed "
            "or updates are forced. Original error: Could not transfer artifact org.x:lib:jar:2 from/to "
            "maven-default-http-blocker (http://0.0.0.0/): Blocked mirror for repositories: [example "
            "(http://maven.example.org/repo, default, releases+snapshots)] -> [Help 1]",
            ["org.x:lib:jar:2"],
            id="3.8-blocked-http-repository",
        ),
        # Central broke a download: no verdict, the warm-up is retried
        pytest.param(
            "[ERROR] Failed to execute goal on project x: Could not resolve dependencies for project p:x:jar:1: "
            "Could not transfer artifact junit:junit:jar:4.13.2 from/to central "
            "(https://repo.maven.apache.org/maven2): Transfer failed for "
            "https://repo.maven.apache.org/maven2/junit/junit/4.13.2/junit-4.13.2.jar: Connection reset",
            [],
            id="central-connection-reset",
        ),
        # a snapshot repository's metadata a build could do without: a warning, no verdict
        pytest.param(
            "[WARNING] Could not transfer metadata org.x:y:1.0-SNAPSHOT/maven-metadata.xml from/to "
            "apache.snapshots (https://repository.apache.org/snapshots): Transfer failed",
            [],
            id="metadata-warning",
        ),
    ],
)
def test_unpublished_artifacts_in_maven_38_and_39_words(log: str, expected: list[str]) -> None:
    assert mavenlog.unpublished_coordinates(log) == expected


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def project_pom(body: str, *, artifact: str, parent: str = "", version: str = "") -> str:
    own = f"<version>{version}</version>" if version else ""
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        f"{parent}<groupId>org.apache.commons</groupId><artifactId>{artifact}</artifactId>{own}{body}</project>"
    )


PARENT_IN_CHECKOUT = (
    "<parent><groupId>org.apache.commons</groupId><artifactId>commons-math4-parent</artifactId>"
    "<version>4.0-SNAPSHOT</version></parent>"
)

#: commons-math 4 (2020), shortened: the root manages commons-numbers at a property's -SNAPSHOT,
#: the legacy module uses it without a version, and depends on its sibling at ${project.version}.
MATH_2020 = {
    "pom.xml": project_pom(
        "<packaging>pom</packaging>"
        "<parent><groupId>org.apache.commons</groupId><artifactId>commons-parent</artifactId>"
        "<version>51</version></parent>"
        "<properties><numbers.version>1.0-SNAPSHOT</numbers.version></properties>"
        "<modules><module>commons-math-legacy</module><module>commons-math-core</module></modules>"
        "<dependencyManagement><dependencies>"
        "<dependency><groupId>org.apache.commons</groupId><artifactId>commons-numbers-core</artifactId>"
        "<version>${numbers.version}</version></dependency>"
        "<dependency><groupId>org.apache.commons</groupId><artifactId>commons-numbers-gamma</artifactId>"
        "<version>${numbers.version}</version></dependency>"
        "</dependencies></dependencyManagement>",
        artifact="commons-math4-parent",
        version="4.0-SNAPSHOT",
    ),
    "commons-math-core/pom.xml": project_pom(
        "<dependencies><dependency><groupId>org.apache.commons</groupId>"
        "<artifactId>commons-numbers-core</artifactId></dependency></dependencies>",
        artifact="commons-math4-core",
        parent=PARENT_IN_CHECKOUT,
    ),
    "commons-math-legacy/pom.xml": project_pom(
        "<dependencies>"
        "<dependency><groupId>${project.groupId}</groupId><artifactId>commons-math4-core</artifactId>"
        "<version>${project.version}</version></dependency>"
        "<dependency><groupId>org.apache.commons</groupId><artifactId>commons-numbers-gamma</artifactId>"
        "</dependency>"
        "<dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13</version>"
        "<scope>test</scope></dependency>"
        "</dependencies>",
        artifact="commons-math4-legacy",
        parent=PARENT_IN_CHECKOUT,
    ),
}


def test_snapshots_the_reactor_does_not_build_are_known_from_the_poms(tmp_path: Path) -> None:
    project = write(tmp_path, MATH_2020)
    # the sibling at ${project.version} (a -SNAPSHOT too) is built here; commons-numbers is not
    assert foreign_snapshots(project) == (NUMBERS, GAMMA)
    # -pl commons-math-core -am builds core and its parent only: gamma is not needed
    assert foreign_snapshots(project, ("-pl", "commons-math-core", "-am")) == (NUMBERS,)
    # legacy pulls in core (-am): both
    assert foreign_snapshots(project, ("-Dx=1", "-pl", "commons-math-legacy", "-am")) == (GAMMA, NUMBERS)
    assert unbuildable_message((NUMBERS,)) == (
        f"unbuildable here: the build needs artifacts published in no repository reachable from here: {NUMBERS}"
    )


def test_released_versions_and_unresolvable_ones_are_left_to_maven(tmp_path: Path) -> None:
    released = {**MATH_2020, "pom.xml": MATH_2020["pom.xml"].replace("1.0-SNAPSHOT", "1.0")}
    assert foreign_snapshots(write(tmp_path / "a", released)) == ()
    # a version a parent outside the checkout would set: not guessed
    unknown = {
        **MATH_2020,
        "pom.xml": MATH_2020["pom.xml"].replace("<numbers.version>1.0-SNAPSHOT</numbers.version>", ""),
    }
    assert foreign_snapshots(write(tmp_path / "b", unknown)) == ()
    # a -SNAPSHOT only a profile asks for: the profile may be inactive, Maven will tell
    profiled = project_pom(
        "<profiles><profile><id>p</id><dependencies><dependency><groupId>o</groupId><artifactId>a</artifactId>"
        "<version>1-SNAPSHOT</version></dependency></dependencies></profile></profiles>",
        artifact="single",
    )
    assert foreign_snapshots(write(tmp_path / "c", {"pom.xml": profiled})) == ()


def test_snapshot_parents_plugins_boms_and_extensions(tmp_path: Path) -> None:
    pom = project_pom(
        "<parent><groupId>org.apache.commons</groupId><artifactId>commons-parent</artifactId>"
        "<version>53-SNAPSHOT</version><relativePath/></parent>"
        "<properties><plugin.version>2.1-SNAPSHOT</plugin.version></properties>"
        "<dependencyManagement><dependencies><dependency><groupId>org.x</groupId><artifactId>bom</artifactId>"
        "<version>3-SNAPSHOT</version><type>pom</type><scope>import</scope></dependency>"
        "<dependency><groupId>org.x</groupId><artifactId>unused</artifactId><version>9-SNAPSHOT</version>"
        "</dependency></dependencies></dependencyManagement>"
        "<build><extensions><extension><groupId>org.x</groupId><artifactId>ext</artifactId>"
        "<version>1-SNAPSHOT</version></extension></extensions>"
        "<pluginManagement><plugins><plugin><artifactId>maven-x-plugin</artifactId>"
        "<version>${plugin.version}</version></plugin></plugins></pluginManagement>"
        "<plugins><plugin><artifactId>maven-x-plugin</artifactId><dependencies><dependency>"
        "<groupId>org.x</groupId><artifactId>helper</artifactId><version>4-SNAPSHOT</version></dependency>"
        "</dependencies></plugin></plugins></build>",
        artifact="single",
        version="1-SNAPSHOT",
    )
    # the managed-only dependency is never resolved: not named
    assert foreign_snapshots(write(tmp_path, {"pom.xml": pom})) == (
        "org.apache.commons:commons-parent:pom:53-SNAPSHOT",
        "org.x:bom:pom:3-SNAPSHOT",
        "org.apache.maven.plugins:maven-x-plugin:maven-plugin:2.1-SNAPSHOT",
        "org.x:helper:jar:4-SNAPSHOT",
        "org.x:ext:jar:1-SNAPSHOT",
    )
