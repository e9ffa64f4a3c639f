"""A forked ``javac`` JIT-compiles with C1 only in the warm server (real Maven, real javac).

``tests/fixtures/mini-maven`` with ``<fork>true</fork>`` and an ``executable`` that writes its
arguments down and runs the JDK's ``javac``: in the warm server that javac gets
``-J-XX:TieredStopAtLevel=1`` first, a cold ``mvn`` runs it as configured, and both write the same
class files and fail the same way. A compile that does not fork is left in process, as configured.
"""

from __future__ import annotations

import shutil
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.local import LocalExecutor
from pytest_tebench.run.maven.dist import DEFAULT_MAVEN
from pytest_tebench.run.maven.dist import maven_tools
from pytest_tebench.run.maven.steps import compile_step

from conftest import TEST_MAVEN_REPO

pytestmark = pytest.mark.maven

FIXTURE = Path(__file__).parent / "fixtures" / "mini-maven"
FLAG = "-J-XX:TieredStopAtLevel=1"
COMPILER = "<artifactId>maven-compiler-plugin</artifactId>\n        <version>3.13.0</version>"
FORKED = COMPILER + (
    "\n        <configuration><fork>true</fork>"
    "<executable>${project.basedir}/tools/javac</executable>"
    "<compilerArgs><arg>-J-Xss2m</arg></compilerArgs></configuration>"
)
#: Writes its arguments down (one call a line) and runs the JDK's javac with them.
JAVAC = """#!/bin/sh
echo "$*" >> "$(dirname "$0")/../javac-calls.log"
exec "${JAVA_HOME:?}/bin/javac" "$@"
"""


def _project(tmp_path: Path, name: str, *, forked: bool = True, broken: bool = False) -> Path:
    target = tmp_path / name
    shutil.copytree(FIXTURE, target, ignore=shutil.ignore_patterns("target"))
    pom = target / "pom.xml"
    text = pom.read_text()
    assert COMPILER in text
    pom.write_text(text.replace(COMPILER, FORKED) if forked else text)
    javac = target / "tools" / "javac"
    javac.parent.mkdir()
    javac.write_text(JAVAC)
    javac.chmod(javac.stat().st_mode | stat.S_IXUSR)
    if broken:
        source = next((target / "src/main/java").rglob("*.java"))
        source.write_text(source.read_text().rstrip().rstrip("}") + "  int broken() { return missing; }\n}\n")
    return target


def _compile(executor: LocalExecutor, workspace: Path) -> StepResult:
    tools = maven_tools(DEFAULT_MAVEN, None)
    step = compile_step(java_version=17, timeout=300, maven=tools, extra_args=(), main_only=True)
    step = replace(step, argv=(*step.argv[:-1], "compile"), warm=True)
    return executor.run(workspace, step, maven_repo=TEST_MAVEN_REPO)


def _compiles(workspace: Path) -> list[str]:
    """The calls of the fake ``javac`` that compiled (not its ``-version`` probe)."""
    log = workspace / "javac-calls.log"
    calls = log.read_text().splitlines() if log.is_file() else []
    return [call for call in calls if "-version" not in call.split()]


def _classes(workspace: Path) -> dict[str, bytes]:
    root = workspace / "target" / "classes"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.class"))}


def test_a_forked_javac_runs_c1_only_warm_and_writes_a_cold_launchs_classes(tmp_path: Path) -> None:
    warm = LocalExecutor(warm_jvm=True, warm_cache=tmp_path / "warm-cache")
    try:
        warm_run = _compile(warm, _project(tmp_path, "warm"))
        in_process = _compile(warm, _project(tmp_path, "in-process", forked=False))
        warm_broken = _compile(warm, _project(tmp_path, "warm-broken", broken=True))
    finally:
        warm.close()
    cold = LocalExecutor()
    cold_run = _compile(cold, _project(tmp_path, "cold"))
    cold_broken = _compile(cold, _project(tmp_path, "cold-broken", broken=True))

    assert warm_run.ok and warm_run.extra["warm_jvm"] in ("started", "reused"), warm_run.output
    assert cold_run.ok and not cold_run.extra.get("warm_jvm"), cold_run.output
    (warm_call,) = _compiles(tmp_path / "warm")
    (cold_call,) = _compiles(tmp_path / "cold")
    # the argument file, then ours before the project's own -J (the JVM takes the last of a
    # repeated option); the rest of javac's arguments are in the file, as in a cold launch
    assert warm_call.split()[0].startswith("@") and warm_call.split()[1:] == [FLAG, "-J-Xss2m"]
    assert cold_call.split()[0].startswith("@") and cold_call.split()[1:] == ["-J-Xss2m"]
    assert _classes(tmp_path / "warm") == _classes(tmp_path / "cold") != {}

    # a compile that does not fork stays in process: plexus leaves -J arguments out of it
    assert in_process.ok, in_process.output
    assert _compiles(tmp_path / "in-process") == []
    assert _classes(tmp_path / "in-process") == _classes(tmp_path / "cold")

    # a compile error is the same failure either way
    assert not warm_broken.ok and not cold_broken.ok
    for result in (warm_broken, cold_broken):
        assert "COMPILATION ERROR" in result.output and "cannot find symbol" in result.output
    assert FLAG in _compiles(tmp_path / "warm-broken")[0].split()


def test_another_executable_is_left_as_configured(tmp_path: Path) -> None:
    project = _project(tmp_path, "other")
    # the same fake javac under another name: not a javac the listener knows, so no -J of ours
    (project / "tools" / "javac").rename(project / "tools" / "my-compiler")
    pom = project / "pom.xml"
    pom.write_text(pom.read_text().replace("tools/javac<", "tools/my-compiler<"))
    warm = LocalExecutor(warm_jvm=True, warm_cache=tmp_path / "warm-cache")
    try:
        result = _compile(warm, project)
    finally:
        warm.close()
    assert result.ok, result.output
    (call,) = _compiles(project)
    assert FLAG not in call.split() and "-J-Xss2m" in call.split()
