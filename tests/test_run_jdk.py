"""JDK discovery from fake JDK homes, level detection from POMs, and the choice rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_tebench.errors import HarnessError
from pytest_tebench.run.maven.jdk import JdkInstall
from pytest_tebench.run.maven.jdk import choose_jdk
from pytest_tebench.run.maven.jdk import detect_java_level
from pytest_tebench.run.maven.jdk import discover_jdks
from pytest_tebench.run.maven.jdk import min_supported_level
from pytest_tebench.run.maven.jdk import parse_java_version
from pytest_tebench.run.maven.jdk import read_jdk


def make_jdk(home: Path, java_version: str, *, javac: bool = True) -> Path:
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "java").write_text("", encoding="utf-8")
    if javac:
        (home / "bin" / "javac").write_text("", encoding="utf-8")
    (home / "release").write_text(f'IMPLEMENTOR="x"\nJAVA_VERSION="{java_version}"\n', encoding="utf-8")
    return home


def jdks(*versions: int) -> dict[int, JdkInstall]:
    return {v: JdkInstall(v, Path(f"/jdk/{v}"), str(v)) for v in versions}


@pytest.mark.parametrize(
    ("text", "version"), [("1.8.0_392", 8), ("17.0.15", 17), ("25", 25), ('"11.0.2"', 11)]
)
def test_parse_java_version(text: str, version: int) -> None:
    assert parse_java_version(text) == version


def test_parse_java_version_rejects_garbage() -> None:
    with pytest.raises(HarnessError):
        parse_java_version("unknown")


def test_read_jdk_needs_javac(tmp_path: Path) -> None:
    assert read_jdk(make_jdk(tmp_path / "jre", "17.0.1", javac=False)) is None
    jdk = read_jdk(make_jdk(tmp_path / "jdk", "1.8.0_392"))
    assert jdk == JdkInstall(8, (tmp_path / "jdk").resolve(), "1.8.0_392")


def test_discover_prefers_explicit_env_and_dedupes_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "jvm"
    make_jdk(root / "java-17-a", "17.0.15")
    (root / "java-1.17.0-link").symlink_to(root / "java-17-a")
    make_jdk(root / "temurin-25", "25.0.3")
    make_jdk(root / "java-8", "1.8.0_1")
    other17 = make_jdk(tmp_path / "opt" / "jdk17", "17.0.9")
    env = {"JAVA17_HOME": str(other17), "JAVA_HOME": str(root / "java-8"), "PATH": "/bin"}
    found = discover_jdks(env, roots=[root, tmp_path / "missing"])
    assert sorted(found) == [8, 17, 25]
    # JAVA17_HOME wins over the install root's JDK 17.
    assert found[17].home == other17.resolve()
    assert found[17].full_version == "17.0.9"
    assert found[25].home == (root / "temurin-25").resolve()


@pytest.mark.parametrize(("jdk", "oldest"), [(8, 3), (11, 6), (17, 7), (19, 7), (20, 8), (25, 8)])
def test_min_supported_level(jdk: int, oldest: int) -> None:
    assert min_supported_level(jdk) == oldest


POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <properties>{props}</properties>
  <build><plugins><plugin>
    <artifactId>maven-compiler-plugin</artifactId>
    <configuration>{config}</configuration>
  </plugin></plugins></build>
  {profiles}
</project>"""


def write_pom(tmp_path: Path, props: str = "", config: str = "", profiles: str = "") -> Path:
    pom = tmp_path / "pom.xml"
    pom.write_text(POM.format(props=props, config=config, profiles=profiles), encoding="utf-8")
    return pom


@pytest.mark.parametrize(
    ("props", "config", "profiles", "level"),
    [
        ("", "", "", 8),  # nothing named: the default
        ("<maven.compiler.source>1.7</maven.compiler.source>", "", "", 7),
        (
            "<maven.compiler.source>1.8</maven.compiler.source><maven.compiler.target>1.8</maven.compiler.target>",
            "",
            "",
            8,
        ),
        ("<maven.compiler.release>11</maven.compiler.release>", "", "", 11),
        ("<java.version>17</java.version>", "<release>${java.version}</release>", "", 17),
        ("", "<source>1.6</source><target>1.6</target>", "", 6),
        # Only profiles name a level (jsoup): the highest one, so multi-release code compiles.
        (
            "",
            "",
            "<profiles><profile><id>a</id><properties><maven.compiler.source>1.8</maven.compiler.source>"
            "</properties></profile><profile><id>b</id><build><plugins><plugin>"
            "<artifactId>maven-compiler-plugin</artifactId><executions><execution><configuration>"
            "<release>11</release></configuration></execution></executions></plugin></plugins></build>"
            "</profile></profiles>",
            11,
        ),
        # A top-level level wins over profiles.
        (
            "<maven.compiler.source>1.8</maven.compiler.source>",
            "",
            "<profiles><profile><id>b</id><properties><maven.compiler.release>21</maven.compiler.release>"
            "</properties></profile></profiles>",
            8,
        ),
    ],
)
def test_detect_java_level(tmp_path: Path, props: str, config: str, profiles: str, level: int) -> None:
    assert detect_java_level(write_pom(tmp_path, props, config, profiles)) == level


def test_detect_java_level_unreadable(tmp_path: Path) -> None:
    (tmp_path / "pom.xml").write_text("<project>", encoding="utf-8")
    with pytest.raises(HarnessError, match="cannot read"):
        detect_java_level(tmp_path / "pom.xml")


@pytest.mark.parametrize(
    ("level", "available", "chosen"),
    [
        (8, (8, 17, 25), 8),  # exact match
        (8, (17, 25), 17),  # smallest newer JDK
        (11, (17, 25), 17),
        (7, (17, 25), 17),  # 25 no longer accepts 7
        (17, (11, 25), 25),  # only 25 accepts 17, beyond JaCoCo's limit but the sole choice
        (21, (17, 25, 22), 22),
    ],
)
def test_choose_jdk(level: int, available: tuple[int, ...], chosen: int) -> None:
    choice = choose_jdk(level, jdks(*available))
    assert (choice.version, choice.level) == (chosen, level)


def test_choose_jdk_none_fits() -> None:
    with pytest.raises(HarnessError, match="no installed JDK can build Java level 6"):
        choose_jdk(6, jdks(17, 25))


def test_choose_jdk_override(tmp_path: Path) -> None:
    assert choose_jdk(8, jdks(17, 25), override=25).version == 25
    assert choose_jdk(8, jdks(17, 25), override="25").version == 25
    with pytest.raises(HarnessError, match="JDK 11 was requested"):
        choose_jdk(8, jdks(17, 25), override=11)
    home = make_jdk(tmp_path / "custom", "21.0.1")
    choice = choose_jdk(8, jdks(17), override=home)
    assert (choice.version, choice.home) == (21, home.resolve())
    with pytest.raises(HarnessError, match="not a JDK home"):
        choose_jdk(8, jdks(17), override=tmp_path / "nowhere")
