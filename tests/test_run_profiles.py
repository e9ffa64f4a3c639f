"""Maven profile activation (run/maven/profiles.py) on small POMs written by hand, and what it
decides for the reactor's modules, the JDK chooser's reading and a JDK retry's reactor scope.

Each expectation is Maven's rule applied by hand (DefaultProfileSelector and the activators of
Maven 3.2.2+: every condition of an activation must hold; ``activeByDefault`` only while no
other profile of the POM is active).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

import pytest

from pytest_tebench.benchmarks.tebench.gold_run import GoldRunner
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.maven.jdk import JdkInstall
from pytest_tebench.run.maven.jdk import choose_for
from pytest_tebench.run.maven.jdk import read_requirement
from pytest_tebench.run.maven.profiles import JDKS
from pytest_tebench.run.maven.profiles import BuildContext
from pytest_tebench.run.maven.profiles import OsInfo
from pytest_tebench.run.maven.profiles import VersionRange
from pytest_tebench.run.maven.profiles import active_profiles
from pytest_tebench.run.maven.profiles import maven_config
from pytest_tebench.run.maven.profiles import profile_jdks
from pytest_tebench.run.maven.profiles import ranges_of
from pytest_tebench.run.maven.profiles import walk_modules
from pytest_tebench.run.maven.reactor import read_reactor
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.workspace.checkout import Workspace

LINUX = OsInfo("linux", "amd64", "6.1.0-18-amd64")


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def profile(ident: str, activation: str = "", body: str = "") -> str:
    act = f"<activation>{activation}</activation>" if activation else ""
    return f"<profile><id>{ident}</id>{act}{body}</profile>"


def pom(*profiles: str, modules: tuple[str, ...] = (), properties: str = "") -> str:
    listed = "".join(f"<module>{m}</module>" for m in modules)
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0">'
        f"<properties>{properties}</properties><modules>{listed}</modules>"
        f"<profiles>{''.join(profiles)}</profiles></project>"
    )


def active(
    text: str, java: int, context: BuildContext | None = None, basedir: Path = Path("/nowhere")
) -> list[str]:
    """Ids of the profiles of POM ``text`` active on JDK ``java``."""
    chosen = active_profiles(ET.fromstring(text), basedir, context or BuildContext(os=LINUX), java)
    return [p.findtext("{http://maven.apache.org/POM/4.0.0}id") or "" for p in chosen]


def test_active_by_default_only_while_no_other_profile_of_the_pom_is() -> None:
    text = pom(
        profile("dflt", "<activeByDefault>true</activeByDefault>"),
        profile("j11", "<jdk>[11,)</jdk>"),
        profile("never"),  # no activation: only -P activates it
    )
    assert active(text, 8) == ["dflt"]
    assert active(text, 11) == ["j11"]
    # -P never is an activation too: it switches dflt off
    assert active(text, 8, BuildContext(active_ids=frozenset({"never"}), os=LINUX)) == ["never"]
    # -P !j11: deactivated, so it does not count as active and dflt comes back on JDK 11
    assert active(text, 11, BuildContext(inactive_ids=frozenset({"j11"}), os=LINUX)) == ["dflt"]
    # a deactivated default profile stays off
    assert active(text, 8, BuildContext(inactive_ids=frozenset({"dflt"}), os=LINUX)) == []


@pytest.mark.parametrize(
    ("jdk", "on", "off"),
    [
        ("1.8", (8,), (7, 9, 11)),  # a prefix: the feature version
        ("11", (11,), (8, 17)),
        ("!1.8", (7, 9, 11, 21), (8,)),
        ("[1.8,11)", (8, 9, 10), (7, 11, 17)),
        ("(,9)", (5, 8), (9, 11)),
        ("[17,)", (17, 21, 25), (11, 16)),
        ("[17", (), (17, 21)),  # commons-math's unreadable range activates nothing
    ],
)
def test_jdk_activation(jdk: str, on: tuple[int, ...], off: tuple[int, ...]) -> None:
    text = pom(profile("p", f"<jdk>{jdk}</jdk>"))
    for java in on:
        assert active(text, java) == ["p"], java
    for java in off:
        assert active(text, java) == [], java


def test_property_activation() -> None:
    context = BuildContext(
        user_properties={"release": "", "mode": "fast", "skipTests": "false"},
        system_properties={"from.jvm": "yes"},
        os=LINUX,
    )

    def on(condition: str, java: int = 11) -> bool:
        text = pom(profile("p", f"<property>{condition}</property>"))
        return active(text, java, context) == ["p"]

    # name: set and not empty (Maven's StringUtils.isNotEmpty); -Drelease= is empty
    assert on("<name>mode</name>") and not on("<name>release</name>") and not on("<name>nope</name>")
    assert on("<name>!nope</name>") and not on("<name>!mode</name>")
    assert on("<name>mode</name><value>fast</value>") and not on("<name>mode</name><value>slow</value>")
    # name=!value: any other value, or none
    assert on("<name>mode</name><value>!slow</value>") and on("<name>nope</name><value>!slow</value>")
    assert not on("<name>mode</name><value>!fast</value>")
    assert on("<name>from.jvm</name><value>yes</value>")
    # the JVM's own properties: its specification version, a home; java.version is there but
    # its exact value unknown here, so it equals none
    assert on("<name>java.specification.version</name><value>11</value>")
    assert on("<name>java.specification.version</name><value>1.8</value>", java=8)
    assert on("<name>user.home</name>") and on("<name>java.version</name>")
    assert not on("<name>java.version</name><value>11.0.2</value>")
    # environment variables are not known: absent (commons-math's travis profile stays off)
    assert not on("<name>env.TRAVIS</name><value>true</value>")


def test_property_activation_reads_the_harness_flags_and_the_mvn_files(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            ".mvn/maven.config": "-Dci -D level=high -Pextra,!slow --activate-profiles=-old,+new,?maybe\n",
            ".mvn/jvm.config": "-Xmx1g -Djvm.flag=1\n",
        },
    )
    config = maven_config(root)
    assert dict(config.properties) == {"ci": "true", "level": "high"}
    assert config.active == {"extra", "new", "maybe"} and config.inactive == {"slow", "old"}
    context = BuildContext.read(root)
    assert context.property("jvm.flag", 17) == "1"
    # the harness's own -D flags are the build's user properties: the test launch's -DskipTests=false
    assert context.property("skipTests", 17) == "false"
    assert context.property("enforcer.skip", 17) == "true"
    text = pom(
        profile("skip", "<property><name>skipTests</name><value>true</value></property>"),
        profile("ci", "<property><name>ci</name></property>"),
    )
    assert active(text, 17, context) == ["ci"]


def test_file_activation_relative_to_the_pom_folder_with_basedir(tmp_path: Path) -> None:
    module = (
        write(tmp_path, {"core/src/site/resources/profile.jacoco": "", "core/pom.xml": "<project/>"}) / "core"
    )
    text = pom(
        profile("jacoco", "<file><exists>src/site/resources/profile.jacoco</exists></file>"),
        profile("noanimal", "<file><missing>src/site/resources/profile.noanimal</missing></file>"),
        profile("child", "<file><missing>${basedir}/CONTRIBUTING.md</missing></file>"),
        profile("pb", "<file><exists>${project.basedir}/pom.xml</exists></file>"),
        # an expression nothing resolves stays a literal name: no such file
        profile("scm", "<file><exists>${commons.scmPubCheckoutDirectory}</exists></file>"),
        profile("abs", f"<file><exists>{tmp_path}/core/pom.xml</exists></file>"),
    )
    assert active(text, 17, basedir=module) == ["jacoco", "noanimal", "child", "pb", "abs"]
    # from the root, the module's files are not there (the absolute path is, from anywhere)
    write(tmp_path, {"CONTRIBUTING.md": ""})
    assert active(text, 17, basedir=tmp_path) == ["noanimal", "abs"]


def test_os_activation() -> None:
    def on(condition: str, system: OsInfo = LINUX) -> bool:
        text = pom(profile("p", f"<os>{condition}</os>"))
        return active(text, 17, BuildContext(os=system)) == ["p"]

    assert on("<family>unix</family>") and on("<family>!windows</family>") and not on("<family>mac</family>")
    assert on("<name>Linux</name>") and on("<arch>amd64</arch>") and not on("<arch>aarch64</arch>")
    assert on("<family>unix</family><arch>!x86</arch><version>regex:6\\..*</version>")
    assert not on("<family>unix</family><arch>x86</arch>")  # every part must hold
    assert on("<family>windows</family>", OsInfo("windows 11", "amd64", "10.0"))
    assert on("<family>mac</family>", OsInfo("mac os x", "aarch64", "14.4"))
    assert on("<family>unix</family>", OsInfo("mac os x", "aarch64", "14.4"))


def test_every_condition_of_an_activation_must_hold(tmp_path: Path) -> None:
    write(tmp_path, {"src/site/resources/profile.japicmp": ""})
    context = BuildContext(user_properties={"fast": "true"}, os=LINUX)
    # commons-parent's japicmp: a JDK range and a file
    text = pom(
        profile(
            "japicmp", "<jdk>[1.8,)</jdk><file><exists>src/site/resources/profile.japicmp</exists></file>"
        ),
        profile(
            "fast11", "<jdk>[11,)</jdk><property><name>fast</name></property><os><family>unix</family></os>"
        ),
        profile("fast-win", "<property><name>fast</name></property><os><family>windows</family></os>"),
    )
    assert active(text, 8, context, tmp_path) == ["japicmp"]
    assert active(text, 11, context, tmp_path) == ["japicmp", "fast11"]
    assert active(text, 7, context, tmp_path) == []
    assert active(text, 11, BuildContext(os=LINUX), tmp_path) == ["japicmp"]


def test_profile_jdks_and_ranges() -> None:
    text = pom(
        profile("dflt", "<activeByDefault>true</activeByDefault>"),
        profile("mid", "<jdk>[9,11)</jdk>"),
        profile("new", "<jdk>[17,)</jdk>"),
    )
    found = {
        p.findtext("{http://maven.apache.org/POM/4.0.0}id"): on
        for p, on in profile_jdks(ET.fromstring(text), Path("/x"), BuildContext(os=LINUX))
    }
    # dflt: wherever neither mid (9, 10) nor new (17 and up) is active
    assert found["dflt"] == JDKS - {9, 10} - set(range(17, 41))
    assert ranges_of(found["dflt"]) == (VersionRange(None, True, 8, True), VersionRange(11, True, 16, True))
    assert ranges_of(found["mid"]) == (VersionRange(9, True, 10, True),)
    assert ranges_of(found["new"]) == (VersionRange(17, True, None, True),)
    assert ranges_of(JDKS) == () and ranges_of(()) == ()


#: A reactor whose JDK-11 profile lists a module ``jpms`` (release 11, its test JpmsTest), whose
#: JDK-8 profile lists ``legacy`` (an enforcer range below 9), and a module ``dist`` listed in a
#: profile activated by a property of .mvn/maven.config.
REACTOR = {
    "pom.xml": pom(
        profile("java8", "<jdk>1.8</jdk>", "<modules><module>legacy</module></modules>"),
        profile("java11", "<jdk>[11,)</jdk>", "<modules><module>jpms</module></modules>"),
        profile("dist", "<property><name>dist</name></property>", "<modules><module>dist</module></modules>"),
        modules=("core",),
        properties="<maven.compiler.release>8</maven.compiler.release>",
    ),
    "core/pom.xml": pom(),
    "core/src/test/java/p/CoreTest.java": "package p; class CoreTest {}",
    "jpms/pom.xml": pom(properties="<maven.compiler.release>11</maven.compiler.release>"),
    "jpms/src/test/java/p/JpmsTest.java": "package p; class JpmsTest {}",
    "legacy/pom.xml": (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><build><plugins><plugin>'
        "<artifactId>maven-enforcer-plugin</artifactId><configuration><rules><requireJavaVersion>"
        "<version>[1.8,9)</version></requireJavaVersion></rules></configuration></plugin></plugins></build></project>"
    ),
    "dist/pom.xml": pom(properties="<maven.compiler.release>17</maven.compiler.release>"),
}


def jdks(*versions: int) -> dict[int, JdkInstall]:
    return {v: JdkInstall(v, Path(f"/jdk/{v}"), str(v)) for v in versions}


def test_a_module_of_a_jdk_profile_is_built_and_read_on_that_jdk_only(tmp_path: Path) -> None:
    root = write(tmp_path, REACTOR)
    assert read_reactor(root, 8).modules == ("", "core", "legacy")
    assert read_reactor(root, 11).modules == ("", "core", "jpms")
    assert read_reactor(root).modules == ("", "core", "legacy", "jpms")
    walked = {m.module: m.jdks for m in walk_modules(root, BuildContext.read(root))}
    assert walked["jpms"] == frozenset(range(11, 41)) and walked["legacy"] == frozenset({8})
    # the JDK chooser reads the same modules: jpms's release 11 applies on 11 and up, legacy's
    # enforcer range on JDK 8 only
    requirement = read_requirement(root)
    reasons = {c.reason: c.when for c in requirement.constraints}
    assert reasons["jpms/pom.xml: maven.compiler.release 11"] == (VersionRange(11, True, None, True),)
    assert reasons["legacy/pom.xml: enforcer requireJavaVersion [1.8,9)"] == (VersionRange(8, True, 8, True),)
    assert requirement.level == 11
    assert choose_for(requirement, jdks(8, 11, 17)).version == 11
    # JDK 8 alone builds it: jpms is no module there, and legacy's range admits it
    assert choose_for(requirement, jdks(8)).version == 8
    # a JDK the legacy range refuses would be fine as well, without legacy: 17 builds jpms
    assert choose_for(requirement, jdks(8, 17)).version == 17


def test_a_module_of_a_property_profile_counts_for_the_jdk(tmp_path: Path) -> None:
    root = write(tmp_path, {**REACTOR, ".mvn/maven.config": "-Ddist\n"})
    assert read_reactor(root, 11).modules == ("", "core", "jpms", "dist")
    # dist's release 17 is read (the old walk followed no profile's modules): the level is 17
    requirement = read_requirement(root)
    assert requirement.level == 17
    assert choose_for(requirement, jdks(8, 11, 17, 21)).version == 17
    # -P !dist switches it off again
    write(tmp_path, {".mvn/maven.config": "-Ddist -P !dist\n"})
    assert read_reactor(root, 11).modules == ("", "core", "jpms")
    assert read_requirement(root).level == 11


def test_a_jdk_retry_scopes_the_run_again(tmp_path: Path) -> None:
    root = write(tmp_path, REACTOR)
    jpms, core = TestId("p.JpmsTest", "t"), TestId("p.CoreTest", "t")
    on8 = RunSettings(maven_repo=tmp_path / "m2", java_version=8, extra_args=("-Dx=1",)).scoped(
        root, [jpms, core]
    )
    # on JDK 8 jpms is no module: only core is located
    assert on8.maven_args == ("-Dx=1", "-pl", "core", "-am")
    # the retry's JDK 11 activates java11: jpms is a module, and the scope names it
    on11 = on8.on_jdk(root, 11)
    assert (on11.java_version, on11.maven_args) == (11, ("-Dx=1", "-pl", "core,jpms", "-am"))
    assert on11.on_jdk(root, 8).maven_args == on8.maven_args
    # settings never scoped stay unscoped
    plain = RunSettings(maven_repo=tmp_path / "m2", java_version=8).on_jdk(root, 11)
    assert (plain.java_version, plain.maven_args) == (11, ())


#: Real javac 8 reading a dependency compiled for Java 11 (the line java_version_after reads).
WRONG_VERSION = (
    "Apache Maven 3.9.9 (8e8579a9e76f7d015ee5ec7bfcdc97d260186937)\n"
    "[ERROR] COMPILATION ERROR :\n"
    "[ERROR] /ws/core/src/test/java/p/CoreTest.java:[3,1] cannot access q.Dep\n"
    "  bad class file: /m2/q/dep/1/dep-1.jar(q/Dep.class)\n"
    "    class file has wrong version 55.0, should be 52.0\n"
    "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.13.0:testCompile "
    "(default-testCompile) on project core: Compilation failure\n"
)


@dataclass
class RetryMaven:
    """JDK 8 cannot compile the tests (a dependency's class files are Java 11); JDK 11 runs them
    and reports every selected test, in the module whose target/ the run reads."""

    name: str = "scripted"
    seen: list[BuildStep] = field(default_factory=list)

    def java_versions(self) -> tuple[int, ...]:
        return (8, 11)

    def toolchain(self) -> str:
        return "scripted"

    def close(self) -> None:
        pass

    def run(self, workspace: Path, step: BuildStep, *, maven_repo: Path) -> StepResult:
        self.seen.append(step)

        def done(code: int, output: str = "Apache Maven 3.9.9 (x)\n") -> StepResult:
            return StepResult(step.name, step.argv, code, False, 0.1, output)

        if step.name == "effective-pom":
            output = workspace / next(a for a in step.argv if a.startswith("-Doutput="))[len("-Doutput=") :]
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text("<project><artifactId>x</artifactId></project>")
            return done(0)
        if step.java_version == 8:
            return done(1, WRONG_VERSION)
        selector = next(a for a in step.argv if a.startswith("-Dtest="))[len("-Dtest=") :]
        console = ["Apache Maven 3.9.9 (x)\n[INFO]  T E S T S\n"]
        for part in selector.split(","):
            cls, _, methods = part.partition("#")
            module = "jpms" if "Jpms" in cls else "core"
            reports = workspace / module / "target" / "surefire-reports"
            reports.mkdir(parents=True, exist_ok=True)
            plain = [m for m in methods.split("+") if "[" not in m]  # m[*]: Parameterized only
            cases = "".join(f"<testcase name='{m}' classname='{cls}'/>" for m in plain)
            (reports / f"TEST-{cls}.xml").write_text(f"<testsuite name='{cls}'>{cases}</testsuite>")
            console.append(
                f"[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.1 s -- in {cls}\n"
            )
        return done(0, "".join(console))


def test_gold_retried_on_another_jdk_builds_that_jdks_modules(tmp_path: Path) -> None:
    """Gold's JDK retry (:class:`GoldRunner`, evaluation's and the dataset builder's): JDK 8
    fails on class files of Java 11, the run goes again on 11, and there java11's module jpms is
    part of the reactor: the scope names it, its report is read (on JDK 8 it was no module: the
    whole selection could not be located in it)."""
    root = write(tmp_path / "ws", REACTOR)
    executor = RetryMaven()
    runner = GoldRunner(lambda: executor)
    jpms, core = TestId("p.JpmsTest", "t"), TestId("p.CoreTest", "t")
    settings = RunSettings(maven_repo=tmp_path / "m2", java_version=8, coverage=False).scoped(
        root, [jpms, core]
    )
    warmed, ran, note = runner.run(Workspace(root), [jpms, core], settings, project="o/x", learn_jdk=True)
    tested = [s for s in executor.seen if s.name == "compile+test"]
    assert [(s.java_version, s.argv[s.argv.index("-pl") + 1]) for s in tested] == [
        (8, "core"),
        (11, "core,jpms"),
    ]
    assert (ran.java_version, ran.maven_args) == (11, ("-pl", "core,jpms", "-am"))
    assert note.startswith(
        "JDK 11: JDK 8 could not build it (build log: class files of version 55 (Java 11))"
    )
    assert {str(o.test): o.status for o in warmed.run.tests} == {
        "p.CoreTest#t": "passed",
        "p.JpmsTest#t": "passed",
    }
