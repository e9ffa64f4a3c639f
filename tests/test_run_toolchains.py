"""The toolchains.xml offered to every Maven build: its contents, and both executors using it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.local import LocalExecutor
from pytest_tebench.run.maven.toolchains import TOOLCHAINS_DIR
from pytest_tebench.run.maven.toolchains import offer
from pytest_tebench.run.maven.toolchains import toolchains_xml
from pytest_tebench.run.maven.toolchains import with_toolchains

IMAGE_HOMES = {21: "/opt/java/21", 8: "/opt/java/8", 17: "/opt/java/17", 11: "/opt/java/11"}


def offered(text: str) -> list[tuple[str, str, str]]:
    """(type, version, jdkHome) of each toolchain, in file order."""
    root = ET.fromstring(text)
    return [
        (
            node.findtext("type", ""),
            node.findtext("provides/version", ""),
            node.findtext("configuration/jdkHome", ""),
        )
        for node in root.findall("toolchain")
    ]


def test_every_jdk_is_a_jdk_toolchain_mavens_own_first_then_oldest_first() -> None:
    # a range matching several JDKs gets the first listed: Maven's own when it admits it, else the
    # oldest; 8 under both of its names
    assert offered(toolchains_xml(IMAGE_HOMES, 17)) == [
        ("jdk", "17", "/opt/java/17"),
        ("jdk", "1.8", "/opt/java/8"),
        ("jdk", "8", "/opt/java/8"),
        ("jdk", "11", "/opt/java/11"),
        ("jdk", "21", "/opt/java/21"),
    ]
    assert offered(toolchains_xml(IMAGE_HOMES, 8))[:3] == [
        ("jdk", "1.8", "/opt/java/8"),
        ("jdk", "8", "/opt/java/8"),
        ("jdk", "11", "/opt/java/11"),
    ]
    # no JDK runs Maven (a non-Java step) or one not offered: oldest first
    assert offered(toolchains_xml(IMAGE_HOMES, 25)) == offered(toolchains_xml(IMAGE_HOMES))
    assert offered(toolchains_xml(IMAGE_HOMES)) == [
        ("jdk", "1.8", "/opt/java/8"),
        ("jdk", "8", "/opt/java/8"),
        ("jdk", "11", "/opt/java/11"),
        ("jdk", "17", "/opt/java/17"),
        ("jdk", "21", "/opt/java/21"),
    ]
    assert offered(toolchains_xml({})) == []
    # a home is text in XML, whatever its characters
    assert offered(toolchains_xml({17: "/jdks/a&b<17>"})) == [("jdk", "17", "/jdks/a&b<17>")]


def test_the_file_is_written_once_per_content(tmp_path: Path) -> None:
    first = offer(tmp_path, IMAGE_HOMES)
    assert first.startswith(f"{TOOLCHAINS_DIR}/toolchains-") and first.endswith(".xml")
    assert (tmp_path / first).read_text(encoding="utf-8") == toolchains_xml(IMAGE_HOMES)
    assert offer(tmp_path, dict(IMAGE_HOMES)) == first
    # other JDKs (another executor sharing the repository), or Maven on another of them:
    # another file, the first one stays
    other = offer(tmp_path, {17: "/usr/lib/jvm/java-17"})
    assert other != first and (tmp_path / first).is_file()
    running = offer(tmp_path, IMAGE_HOMES, 17)
    assert running not in (first, other)
    assert (tmp_path / running).read_text(encoding="utf-8") == toolchains_xml(IMAGE_HOMES, 17)
    assert [p.name for p in (tmp_path / TOOLCHAINS_DIR).iterdir() if p.name.startswith(".")] == []


def test_only_maven_commands_are_given_the_file() -> None:
    assert with_toolchains(("mvn", "-B", "test"), "/r/t.xml") == (
        "mvn",
        "--toolchains",
        "/r/t.xml",
        "-B",
        "test",
    )
    assert with_toolchains(("/opt/tools/maven/bin/mvn", "test"), "/t.xml")[1:3] == ("--toolchains", "/t.xml")
    assert with_toolchains(("./mvnw", "test"), "/t.xml")[1] == "--toolchains"
    assert with_toolchains(("java", "-jar", "x.jar"), "/t.xml") == ("java", "-jar", "x.jar")


def test_the_local_executor_offers_its_jdks_to_maven(tmp_path: Path) -> None:
    homes = {}
    for version in (11, 17):
        home = tmp_path / f"jdk{version}"
        (home / "bin").mkdir(parents=True)
        (home / "bin" / "java").write_text("", encoding="utf-8")
        homes[version] = home
    # a stand-in for Maven (its name is what makes it a Maven launch) printing its arguments
    fake = tmp_path / "bin" / "mvn"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\nfor a in "$@"; do echo "arg:$a"; done\n', encoding="utf-8")
    fake.chmod(0o755)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    repo = tmp_path / "m2"
    executor = LocalExecutor(jdks=homes)
    result = executor.run(
        workspace, BuildStep("c", (str(fake), "-B", "compile"), 30, java_version=17), maven_repo=repo
    )
    args = [line.removeprefix("arg:") for line in result.output.splitlines() if line.startswith("arg:")]
    assert args[0] == "--toolchains" and args[2:] == ["-B", "compile"]
    # the JDK running Maven (17) first
    assert offered(Path(args[1]).read_text(encoding="utf-8")) == [
        ("jdk", "17", str(homes[17])),
        ("jdk", "11", str(homes[11])),
    ]
    # a command that is not Maven is left alone
    result = executor.run(
        workspace, BuildStep("s", ("sh", "-c", "echo $0 $1", "x"), 30, java_version=17), maven_repo=repo
    )
    assert "--toolchains" not in result.output
