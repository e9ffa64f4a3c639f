"""JDK discovery from fake JDK homes, level detection from POMs, and the choice rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.run.maven.jdk import JdkInstall
from pytest_tebench.run.maven.jdk import JdkRequirement
from pytest_tebench.run.maven.jdk import choose_for
from pytest_tebench.run.maven.jdk import choose_java_version
from pytest_tebench.run.maven.jdk import choose_jdk
from pytest_tebench.run.maven.jdk import detect_java_level
from pytest_tebench.run.maven.jdk import discover_jdks
from pytest_tebench.run.maven.jdk import java_version_after
from pytest_tebench.run.maven.jdk import min_supported_level
from pytest_tebench.run.maven.jdk import parse_java_version
from pytest_tebench.run.maven.jdk import read_jdk
from pytest_tebench.run.maven.jdk import read_requirement
from pytest_tebench.run.maven.jdk import toolchain_jdk
from pytest_tebench.run.maven.jdk import why_not
from pytest_tebench.run.maven.jdkreq import Constraint
from pytest_tebench.run.maven.jdkreq import log_constraints
from pytest_tebench.run.maven.profiles import VersionRange
from pytest_tebench.run.maven.profiles import parse_range


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
    # the instance's environment, not a harness bug: unsupported_environment
    with pytest.raises(UnsupportedEnvironment, match="no installed JDK can build Java level 6"):
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


@pytest.mark.parametrize(
    ("text", "bare", "inside", "outside"),
    [
        ("[17,22)", "min", (17, 21), (11, 22, 25)),
        ("(,1.8]", "min", (7, 8), (9, 17)),
        ("[1.8,)", "min", (8, 25), (7,)),
        ("17", "min", (17, 25), (11,)),  # enforcer: a bare version is a minimum
        ("1.8", "exact", (8,), (7, 9, 17)),  # profile activation: a prefix, so one feature version
        ("!1.8", "exact", (7, 11), (8,)),
        ("[11,2000)", "exact", (11, 25), (8,)),
        ("(,11),[17,)", "min", (8, 17, 21), (11, 12)),
        ("[17]", "min", (17,), (16, 18)),
        ("(8,11]", "min", (9, 11), (8, 12)),
    ],
)
def test_parse_range(text: str, bare: str, inside: tuple[int, ...], outside: tuple[int, ...]) -> None:
    ranges = parse_range(text, bare=bare)
    assert ranges is not None
    for version in inside:
        assert any(version in r for r in ranges), version
    for version in outside:
        assert not any(version in r for r in ranges), version


@pytest.mark.parametrize("text", ["", "abc", "[x,17)", "[1,2,3]"])
def test_parse_range_unreadable(text: str) -> None:
    assert parse_range(text) is None


def test_version_range_bounds() -> None:
    assert 17 in VersionRange(17) and 16 not in VersionRange(17)
    assert 17 not in VersionRange(17, low_inclusive=False)


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def pom(body: str, properties: str = "") -> str:
    return f'<project xmlns="http://maven.apache.org/POM/4.0.0"><properties>{properties}</properties>{body}</project>'


def plugin(artifact: str, configuration: str, *, execution: bool = False) -> str:
    config = f"<configuration>{configuration}</configuration>"
    if execution:
        config = f"<executions><execution><id>e</id>{config}</execution></executions>"
    return f"<plugin><artifactId>{artifact}</artifactId>{config}</plugin>"


def build(*plugins: str) -> str:
    return f"<build><plugins>{''.join(plugins)}</plugins></build>"


JVM_CONFIG = "--add-exports jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED\n-Xmx1g\n"
#: google/gson's build, shortened: release 8 and test release 11 in the root, an enforcer range,
#: a module whose JDK-17 profile raises the test release, and jvm.config module flags.
GSON = {
    ".mvn/jvm.config": JVM_CONFIG,
    "pom.xml": pom(
        "<modules><module>gson</module><module>missing</module></modules>"
        + build(
            plugin(
                "maven-enforcer-plugin",
                "<rules><requireJavaVersion><version>[17,22)</version></requireJavaVersion></rules>",
                execution=True,
            )
        ),
        "<maven.compiler.release>8</maven.compiler.release>"
        "<maven.compiler.testRelease>11</maven.compiler.testRelease>",
    ),
    "gson/pom.xml": pom(
        "<profiles><profile><id>JDK17</id><activation><jdk>[17,)</jdk></activation><properties>"
        "<maven.compiler.testRelease>17</maven.compiler.testRelease></properties></profile></profiles>"
    ),
}


def test_gson_build_gets_a_jdk_its_enforcer_and_jvm_config_accept(tmp_path: Path) -> None:
    requirement = read_requirement(project(tmp_path, GSON))
    # the JDK-17 profile's test release counts: a JDK that takes the profile must compile it
    assert requirement.level == 17
    assert choose_for(requirement, jdks(8, 11, 17, 21, 25)).version == 17
    assert choose_for(requirement, jdks(8, 21, 25)).version == 21
    assert choose_java_version((8, 11, 17, 21), requirement, None) == 17
    with pytest.raises(UnsupportedEnvironment) as raised:
        choose_for(requirement, jdks(8, 11, 25))
    message = str(raised.value)
    assert raised.value.status == "unsupported_environment"
    assert "JDK 8: .mvn/jvm.config: --add-exports needs JDK 9+" in message
    assert "JDK 11: pom.xml: enforcer requireJavaVersion [17,22)" in message
    assert "JDK 25: pom.xml: enforcer requireJavaVersion [17,22)" in message


def test_jvm_config_module_flags_rule_out_jdk_8(tmp_path: Path) -> None:
    files = {
        ".mvn/jvm.config": JVM_CONFIG,
        "pom.xml": pom("", "<maven.compiler.source>1.8</maven.compiler.source>"),
    }
    requirement = read_requirement(project(tmp_path, files))
    assert requirement.level == 8
    # level 8 would pick JDK 8 exactly, but Maven's own JVM must know --add-exports
    assert choose_for(requirement, jdks(8, 11, 17)).version == 11
    without = read_requirement(project(tmp_path / "plain", {"pom.xml": files["pom.xml"]}))
    assert choose_for(without, jdks(8, 11, 17)).version == 8


def test_maven_config_properties_and_profiles(tmp_path: Path) -> None:
    profiles = (
        "<profiles><profile><id>modern</id><properties><maven.compiler.release>21</maven.compiler.release>"
        "</properties></profile></profiles>"
    )
    files = {
        "pom.xml": pom(
            build(plugin("maven-compiler-plugin", "<release>${jdk}</release>")) + profiles, "<jdk>8</jdk>"
        ),
    }
    assert read_requirement(project(tmp_path / "a", files)).level == 8
    files[".mvn/maven.config"] = "-Djdk=11\n"
    assert read_requirement(project(tmp_path / "b", files)).level == 11
    files[".mvn/maven.config"] = "-D jdk=11 -P modern"
    requirement = read_requirement(project(tmp_path / "c", files))
    assert requirement.level == 21
    assert choose_for(requirement, jdks(8, 11, 17, 21)).version == 21
    with pytest.raises(UnsupportedEnvironment, match=r"profile modern: maven\.compiler\.release 21"):
        choose_for(requirement, jdks(8, 11, 17))


def test_enforcer_property_and_toolchains(tmp_path: Path) -> None:
    enforcer = plugin(
        "maven-enforcer-plugin",
        "<rules><requireJavaVersion><version>${java.min}</version></requireJavaVersion></rules>",
    )
    files = {"pom.xml": pom(build(enforcer), "<java.min>11</java.min>")}
    # a bare version is a minimum: 8 is out, 17 is in
    assert choose_for(read_requirement(project(tmp_path / "a", files)), jdks(8, 17)).version == 17
    toolchains = plugin(
        "maven-toolchains-plugin",
        "<toolchains><jdk><version>[11,12)</version></jdk></toolchains>",
        execution=True,
    )
    files = {"pom.xml": pom(build(toolchains))}
    # the toolchains plugin picks JDK 11 among those offered: Maven itself runs on the level's JDK
    assert choose_for(read_requirement(project(tmp_path / "b", files)), jdks(8, 11, 17)).version == 8
    # ... and with no JDK of its range offered, the build fails, whatever JDK runs Maven
    with pytest.raises(UnsupportedEnvironment, match=r"JDK 8: pom.xml: toolchains jdk version \[11,12\)"):
        choose_for(read_requirement(project(tmp_path / "b", files)), jdks(8, 17))
    compiler = plugin("maven-compiler-plugin", "<jdkToolchain><version>[17,)</version></jdkToolchain>")
    files = {"pom.xml": pom(build(compiler))}
    # a jdkToolchain nothing offered matches falls back to Maven's JDK: recorded, never a limit
    requirement = read_requirement(project(tmp_path / "c", files))
    assert choose_for(requirement, jdks(8, 11)).version == 8
    assert [c.reason for c in requirement.constraints if c.kind == "info"] == [
        "pom.xml: maven-compiler-plugin jdkToolchain version [17,)"
    ]


#: google/gson between 2019 and 2021, shortened: module-info.java compiled for release 9 with a
#: JDK 9 toolchain, everything else at source 1.6 with a [1.5,9) toolchain (the plugin's
#: configuration, which its executions and the default testCompile inherit).
GSON_2020 = pom(
    "<build><pluginManagement><plugins><plugin><artifactId>maven-compiler-plugin</artifactId>"
    "<executions>"
    "<execution><id>default-compile</id><configuration><jdkToolchain><version>9</version></jdkToolchain>"
    "<release>9</release></configuration></execution>"
    "<execution><id>base-compile</id><goals><goal>compile</goal></goals><configuration><excludes>"
    "<exclude>module-info.java</exclude></excludes></configuration></execution>"
    "</executions>"
    "<configuration><jdkToolchain><version>[1.5,9)</version></jdkToolchain>"
    "<source>1.6</source><target>1.6</target></configuration>"
    "</plugin></plugins></pluginManagement></build>"
)


def test_jdk_toolchains_never_limit_the_jdk_running_maven(tmp_path: Path) -> None:
    """The chooser used to read [1.5,9) and 9 as limits on Maven's JDK: no JDK satisfied both,
    and gson's 2020 commits were declared unbuildable although its CI built them on JDK 11."""
    requirement = read_requirement(project(tmp_path, {"pom.xml": GSON_2020}))
    # source 1.6 is javac 8's (the offered toolchain); release 9 is Maven's JDK's (no JDK 9 here)
    choice = choose_for(requirement, jdks(8, 11, 17, 21))
    assert (choice.version, choice.level) == (11, 9)
    assert choose_for(requirement, jdks(8, 17)).version == 17
    # without a JDK 8 to take the [1.5,9) toolchain, source 1.6 falls to Maven's JDK: 17 refuses it
    with pytest.raises(
        UnsupportedEnvironment, match=r"JDK 17: pom.xml: compiler source 6 \(jdkToolchain \[1.5,9\)\)"
    ):
        choose_for(requirement, jdks(17, 21))
    assert choose_for(requirement, jdks(11, 17)).version == 11


def test_release_wins_over_source_in_one_compiler_configuration(tmp_path: Path) -> None:
    compiler = plugin(
        "maven-compiler-plugin", "<release>11</release><source>1.6</source><target>1.6</target>"
    )
    requirement = read_requirement(project(tmp_path, {"pom.xml": pom(build(compiler))}))
    assert [c.level for c in requirement.constraints] == [11]
    assert choose_for(requirement, jdks(17)).version == 17


def test_jdk_activated_profiles_apply_to_their_jdks(tmp_path: Path) -> None:
    """jsoup: compiler setup only in profiles, 1.8 on JDK 8 and a multi-release build on 11+."""
    profiles = (
        "<profiles>"
        "<profile><id>java-8</id><activation><jdk>1.8</jdk></activation>"
        + build(plugin("maven-compiler-plugin", "<source>1.8</source><target>1.8</target>"))
        + "</profile><profile><id>mr</id><activation><jdk>[11,2000)</jdk></activation>"
        + build(plugin("maven-compiler-plugin", "<release>11</release>", execution=True))
        + "</profile></profiles>"
    )
    requirement = read_requirement(project(tmp_path, {"pom.xml": pom(profiles)}))
    assert requirement.level == 11
    assert choose_for(requirement, jdks(8, 11, 17)).version == 11
    assert choose_for(requirement, jdks(8, 17, 25)).version == 17
    # on JDK 8 only the java-8 profile is active, and it asks for 1.8: a JDK 8 alone still builds it
    assert choose_for(requirement, jdks(8)).version == 8


def test_override_wins_over_the_requirement(tmp_path: Path) -> None:
    requirement = read_requirement(project(tmp_path, GSON))
    assert choose_for(requirement, jdks(8, 17), override=8).version == 8
    assert choose_java_version((8, 17), requirement, "8") == 8


# -- a failed build's log: what no build file says ------------------------------------------
JDK_LOGS = Path(__file__).parent / "fixtures" / "jdk-logs"


def recorded(name: str) -> str:
    return (JDK_LOGS / name).read_text(encoding="utf-8")


#: jfree/jfreechart's build, shortened: release 11, nothing else about the JDK.
JFREECHART = {"pom.xml": pom(build(plugin("maven-compiler-plugin", "<release>11</release>")))}


@pytest.mark.parametrize(
    ("log", "reasons"),
    [
        # javac 11 reading EqualsVerifier 4.0 (Java 17 class files); the compiler plugin's
        # warning says it first, and javac's lines twice more: one demand
        ("jfreechart-testcompile-jdk11.log", ["build log: class files of version 61 (Java 17)"]),
        (
            "java17-runs-java25-class.log",
            ["build log: class files of version 69 (Java 25)"],
        ),
        ("javac17-release-25.log", ["build log: release version 25 not supported"]),
        # source and target 5 refused: one demand, level 5
        ("javac17-source-5.log", ["build log: Source option 5 is no longer supported"]),
    ],
)
def test_log_constraints_of_recorded_failures(log: str, reasons: list[str]) -> None:
    assert [c.reason for c in log_constraints([recorded(log)])] == reasons


def test_proguard_reading_the_jdk_is_a_reason_for_another_jdk(tmp_path: Path) -> None:
    """gson 2019-2021 hands ProGuard 6.0.2 ``${java.home}/jmods/java.base.jmod``: JDK 8 has no
    jmods, and ProGuard 6.0.2 reads class files up to Java 10 only."""
    (jmods,) = log_constraints([recorded("gson-proguard-without-jmods.log")])
    assert jmods.reason == "build log: a plugin reads the JDK's jmods, which exist from JDK 9"
    assert jmods.allowed == (VersionRange(9),)
    requirement = read_requirement(project(tmp_path, {"pom.xml": GSON_2020}))
    # the recorded run was on a JDK 17 without jmods: another JDK would not help, no retry
    assert (
        java_version_after((8, 11, 17), requirement, 17, [recorded("gson-proguard-without-jmods.log")])
        is None
    )
    too_new = (
        " [proguard] Error: Can't read [/opt/java/11/jmods/java.base.jmod] (Can't process class "
        "[java/lang/Object.class] (Unsupported version number [55.0] (maximum 54.0, Java 10)))"
    )
    (newest,) = log_constraints([too_new])
    assert newest.allowed == (VersionRange(high=10, high_inclusive=True),)
    assert newest.reason.startswith("build log: a plugin reads class files up to Java 10")
    # on 11 the build needs a JDK of 9 or 10 (release 9 rules 8 out): none here, the environment
    with pytest.raises(
        UnsupportedEnvironment, match=r"JDK 8: pom.xml: compiler release 9 \(jdkToolchain 9\)"
    ):
        java_version_after((8, 11, 17), requirement, 11, [too_new])
    choice = java_version_after((8, 10, 11, 17), requirement, 11, [too_new])
    assert choice is not None and choice.version == 10


def test_log_constraints_class_versions_are_java_versions() -> None:
    # major 52 is Java 8, 55 is 11, 61 is 17, 65 is 21
    for major, java in ((52, 8), (55, 11), (61, 17), (65, 21)):
        (constraint,) = log_constraints([f"class file has wrong version {major}.0, should be 50.0"])
        assert constraint.allowed == (VersionRange(java),)
    assert log_constraints(["[ERROR] /ws/src/test/java/a/BTest.java:[3,8] cannot find symbol"]) == ()


def test_jfreechart_on_jdk_11_is_built_again_with_17(tmp_path: Path) -> None:
    requirement = read_requirement(project(tmp_path, JFREECHART))
    log = [recorded("jfreechart-testcompile-jdk11.log")]
    # the build files alone: JDK 11, the exact match of release 11 (what the Docker image chose)
    assert choose_java_version((8, 11, 17, 21), requirement, None) == 11
    choice = java_version_after((8, 11, 17, 21), requirement, 11, log)
    assert choice is not None and choice.version == 17
    assert choice.reason.startswith(
        "JDK 11 could not build it (build log: class files of version 61 (Java 17))"
    )
    # the lowest JDK that reads the class files, whatever the order; 17 itself is fine
    assert java_version_after((21, 11, 8), requirement, 11, log).version == 21  # type: ignore[union-attr]
    assert java_version_after((8, 11, 17, 21), requirement, 17, log) is None
    # a failure that names no JDK demand leaves the JDK as it is
    assert java_version_after((8, 11, 17), requirement, 11, ["[ERROR] Tests run: 3, Failures: 1"]) is None


def test_no_jdk_for_the_log_is_unsupported_environment(tmp_path: Path) -> None:
    requirement = read_requirement(project(tmp_path, JFREECHART))
    with pytest.raises(UnsupportedEnvironment) as raised:
        java_version_after((8, 11), requirement, 11, [recorded("jfreechart-testcompile-jdk11.log")])
    assert raised.value.status == "unsupported_environment"
    assert "JDK 11: build log: class files of version 61 (Java 17)" in str(raised.value)


def test_log_demand_against_an_override_is_the_harness_error(tmp_path: Path) -> None:
    requirement = read_requirement(project(tmp_path, JFREECHART))
    with pytest.raises(HarnessError, match=r"--tebench-jdk \(11\) cannot build this") as raised:
        java_version_after((11, 17), requirement, 11, [recorded("jfreechart-testcompile-jdk11.log")], "11")
    assert not isinstance(raised.value, UnsupportedEnvironment)


def test_a_level_javac_refuses_goes_to_a_jdk_that_accepts_it(tmp_path: Path) -> None:
    requirement = read_requirement(project(tmp_path, JFREECHART))
    # javac 17 has no release 25 (a level set where the build files are not read)
    choice = java_version_after((11, 17, 25), requirement, 17, [recorded("javac17-release-25.log")])
    assert choice is not None and choice.version == 25
    # javac 17 dropped source 5: the oldest JDK here that still takes it (a POM naming no level)
    unnamed = read_requirement(project(tmp_path / "old", {"pom.xml": pom("")}))
    choice = java_version_after((8, 11, 17), unnamed, 17, [recorded("javac17-source-5.log")])
    assert choice is not None and choice.version == 8


# -- parents outside the checkout, from the local Maven repository ----------------------------
def parent_pom(repo: Path, group: str, artifact: str, version: str, body: str) -> None:
    where = repo.joinpath(*group.split("."), artifact, version)
    where.mkdir(parents=True)
    (where / f"{artifact}-{version}.pom").write_text(body, encoding="utf-8")


def parent_ref(group: str, artifact: str, version: str, relative: str | None = None) -> str:
    path = "" if relative is None else f"<relativePath>{relative}</relativePath>"
    return (
        f"<parent><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
        f"<version>{version}</version>{path}</parent>"
    )


def test_a_parent_only_in_the_maven_repository_counts(tmp_path: Path) -> None:
    repo = tmp_path / "m2"
    # the top of the chain: an enforcer range over a property its child sets
    parent_pom(
        repo, "org.acme", "acme-top", "1",
        pom(
            build(plugin("maven-enforcer-plugin", "<rules><requireJavaVersion><version>${minimalJava}"
                         "</version></requireJavaVersion></rules>", execution=True)),
            "<minimalJava>8</minimalJava>",
        ),
    )  # fmt: skip
    # commons-parent's way: a level property the project may override, and a JDK-activated profile
    parent_pom(
        repo, "org.acme", "acme-parent", "7",
        pom(
            parent_ref("org.acme", "acme-top", "1")
            + "<profiles><profile><id>java-9-up</id><activation><jdk>[9,)</jdk></activation><properties>"
            "<maven.compiler.release>${acme.release}</maven.compiler.release></properties></profile></profiles>",
            "<acme.release>8</acme.release><minimalJava>11</minimalJava>",
        ),
    )  # fmt: skip
    checkout = project(
        tmp_path / "ws",
        {"pom.xml": pom(parent_ref("org.acme", "acme-parent", "7"), "<acme.release>17</acme.release>")},
    )
    # without the repository, nothing names a level: Maven's default 8, and JDK 8 would do
    assert read_requirement(checkout).level == 8
    requirement = read_requirement(checkout, repo)
    reasons = [c.reason for c in requirement.constraints]
    assert reasons == [
        "parent org.acme:acme-parent:7 profile java-9-up (on JDK [9,)): maven.compiler.release 17",
        "parent org.acme:acme-top:1: enforcer requireJavaVersion 11",
    ]
    assert requirement.level == 17
    # JDK 8 fails the enforcer range of the grandparent (11, the nearer parent's value), 11 the
    # release its profile sets from the project's own property
    assert choose_for(requirement, jdks(8, 11, 17, 21)).version == 17
    with pytest.raises(UnsupportedEnvironment, match=r"JDK 8: parent org\.acme:acme-top:1: enforcer"):
        choose_for(requirement, jdks(8, 11))


def test_a_parent_in_the_checkout_is_not_read_from_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "m2"
    parent_pom(
        repo, "org.acme", "acme-parent", "7", pom("", "<maven.compiler.release>21</maven.compiler.release>")
    )
    local_parent = pom(
        "<artifactId>acme-parent</artifactId>", "<maven.compiler.release>11</maven.compiler.release>"
    )
    files = {
        "pom.xml": local_parent.replace(
            "<properties>", "<modules><module>core</module></modules><properties>"
        ),
        "core/pom.xml": pom(parent_ref("org.acme", "acme-parent", "7")),
    }
    assert read_requirement(project(tmp_path / "ws", files), repo).level == 11
    # <relativePath/> says "from the repository", whatever the checkout has
    files["core/pom.xml"] = pom(parent_ref("org.acme", "acme-parent", "7", relative=""))
    assert read_requirement(project(tmp_path / "ws2", files), repo).level == 21


def test_a_parent_brought_by_the_warm_up_changes_the_jdk_of_a_failed_build(tmp_path: Path) -> None:
    repo = tmp_path / "m2"
    checkout = project(tmp_path / "ws", {"pom.xml": pom(parent_ref("org.acme", "acme-parent", "7"))})
    chosen = choose_java_version((8, 11, 17), read_requirement(checkout, repo), None)
    assert chosen == 8  # the repository has no parent yet
    parent_pom(
        repo, "org.acme", "acme-parent", "7", pom("", "<maven.compiler.release>17</maven.compiler.release>")
    )
    failed = [
        "[ERROR] Failed to execute goal ...:compile (default-compile) on project x: Fatal error compiling"
    ]
    choice = java_version_after((8, 11, 17), read_requirement(checkout, repo), chosen, failed)
    assert choice is not None and choice.version == 17
    assert "parent org.acme:acme-parent:7: maven.compiler.release 17" in choice.reason
    # a build that did not fail is not run again
    assert java_version_after((8, 11, 17), read_requirement(checkout, repo), chosen, []) is None


def test_a_failed_runs_output_is_read_for_the_jdk_and_a_passing_one_is_not() -> None:
    from pytest_tebench.run.executor import StepResult
    from pytest_tebench.run.maven.surefire import TestId
    from pytest_tebench.run.maven.surefire import TestOutcome
    from pytest_tebench.run.maven.testrun import SelectionRun

    log = recorded("jfreechart-testcompile-jdk11.log")
    step = StepResult("compile+test", ("mvn",), 0, False, 30.0, output="[WARNING] ... " + log.splitlines()[2])
    test = TestId("org.jfree.chart.plot.CrosshairTest", "testEquals")
    # the test JVM refused EqualsVerifier's class files: the message of the errored test says so
    message = recorded("java17-runs-java25-class.log").splitlines()[1].strip()
    errored = SelectionRun("ok", True, True, (TestOutcome(test, "error", 1, message),), steps=(step,))
    assert errored.failure_output() == (step.output, message)
    choice = java_version_after(
        (8, 11, 17, 21, 25), JdkRequirement.at_level(11), 17, errored.failure_output()
    )
    assert choice is not None and choice.version == 25  # version 69 (Java 25) outranks 61 (17)
    # a run that passed is not read: the compiler plugin's warning alone changes nothing
    passed = SelectionRun("ok", True, True, (TestOutcome(test, "passed", 1),), steps=(step,))
    assert passed.failure_output() == ()
    assert java_version_after((11, 17), JdkRequirement.at_level(11), 11, passed.failure_output()) is None


def test_a_toolchain_range_gets_mavens_own_jdk_when_it_admits_it(tmp_path: Path) -> None:
    # google/gson (2023): the compiler's jdkToolchain is [11,), and on JDK 17 a profile raises
    # the test release to 17; Maven's own JDK compiles it, as with no toolchains file (the file
    # lists it first: test_run_toolchains.py)
    tests_17 = Constraint("testRelease 17", level=17, toolchain=(VersionRange(11),))
    assert toolchain_jdk(tests_17, (8, 11, 17, 21), running=17) == 17
    assert toolchain_jdk(tests_17, (8, 11, 17, 21), running=21) == 21
    assert not why_not(17, JdkRequirement(17, (tests_17,)), (8, 11, 17, 21))
    # a range without Maven's JDK gets the oldest it admits (gson 2019-2021: [1.5,9) on JDK 11)
    main_8 = Constraint("release 8", level=8, toolchain=(VersionRange(5, high=9),))
    assert toolchain_jdk(main_8, (8, 11, 17, 21), running=11) == 8
    assert not why_not(11, JdkRequirement(8, (main_8,)), (8, 11, 17))
    assert toolchain_jdk(tests_17, (8,), running=8) is None

    toolchain = "<jdkToolchain><version>[11,)</version></jdkToolchain>"
    enforcer = GSON["pom.xml"].split("<build><plugins>")[1].split("</plugins></build>")[0]
    files = {
        **GSON,
        "pom.xml": GSON["pom.xml"].replace(enforcer, enforcer + plugin("maven-compiler-plugin", toolchain)),
    }
    assert choose_for(read_requirement(project(tmp_path, files)), jdks(8, 11, 17, 21, 25)).version == 17
