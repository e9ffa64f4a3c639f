"""JaCoCo pieces that need no JVM: agent option, include patterns, report step, XML parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_tebench.errors import HarnessError
from pytest_tebench.run.maven.jacoco import TOOL_OPTIONS_MAX
from pytest_tebench.run.maven.jacoco import CoverageReport
from pytest_tebench.run.maven.jacoco import LineCoverage
from pytest_tebench.run.maven.jacoco import MethodInfo
from pytest_tebench.run.maven.jacoco import agent_option
from pytest_tebench.run.maven.jacoco import check_agent_paths
from pytest_tebench.run.maven.jacoco import fit_includes
from pytest_tebench.run.maven.jacoco import parse_report
from pytest_tebench.run.maven.jacoco import project_includes
from pytest_tebench.run.maven.jacoco import report_step

REPORT = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<!DOCTYPE report PUBLIC "-//JACOCO//DTD Report 1.1//EN" "report.dtd">
<report name="r">
  <sessioninfo id="a" start="1" dump="2"/>
  <sessioninfo id="b" start="1" dump="2"/>
  <group name="g">
    <package name="org/x">
      <class name="org/x/Outer" sourcefilename="Outer.java">
        <method name="&lt;init&gt;" desc="()V" line="3"><counter type="LINE" missed="1" covered="0"/></method>
        <method name="run" desc="(I)Z" line="5"/>
      </class>
      <class name="org/x/Outer$Inner" sourcefilename="Outer.java">
        <method name="go" desc="()V" line="12"/>
      </class>
      <sourcefile name="Outer.java">
        <line nr="3" mi="3" ci="0" mb="0" cb="0"/>
        <line nr="5" mi="0" ci="4" mb="1" cb="3"/>
        <line nr="12" mi="2" ci="0" mb="0" cb="0"/>
      </sourcefile>
    </package>
  </group>
  <package name="">
    <class name="Top" sourcefilename="Top.java"/>
    <sourcefile name="Top.java"><line nr="1" mi="0" ci="1" mb="0" cb="0"/></sourcefile>
  </package>
</report>
"""


def test_parse_report(tmp_path: Path) -> None:
    path = tmp_path / "jacoco.xml"
    path.write_text(REPORT, encoding="utf-8")
    report = parse_report(path)
    assert report.sessions == 2
    assert report.classes == {
        "org.x.Outer": "org/x/Outer.java",
        "org.x.Outer$Inner": "org/x/Outer.java",
        "Top": "Top.java",
    }
    assert report.files["org/x/Outer.java"] == {
        3: LineCoverage(mi=3, ci=0, mb=0, cb=0),
        5: LineCoverage(mi=0, ci=4, mb=1, cb=3),
        12: LineCoverage(mi=2, ci=0, mb=0, cb=0),
    }
    assert report.covered_lines("org/x/Outer.java") == frozenset({5})
    five = report.line("org/x/Outer.java", 5)
    assert five is not None and five.branches == 4 and five.covered
    assert report.line("org/x/Outer.java", 4) is None
    assert report.files["Top.java"] == {1: LineCoverage(0, 1, 0, 0)}
    assert MethodInfo("org.x.Outer$Inner", "go", "()V", 12) in report.methods
    assert report.to_dict()["files"]["org/x/Outer.java"]["5"] == [0, 4, 1, 3]


def test_parse_report_unreadable(tmp_path: Path) -> None:
    (tmp_path / "bad.xml").write_text("<report>", encoding="utf-8")
    with pytest.raises(HarnessError, match="unreadable JaCoCo report"):
        parse_report(tmp_path / "bad.xml")


def test_empty_report() -> None:
    report = CoverageReport(files={}, classes={})
    assert report.covered_lines("a/B.java") == frozenset()


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_project_includes(tmp_path: Path) -> None:
    main = tmp_path / "src" / "main"
    write(main / "java/org/a/A.java", "/* licence */\npackage org.a;\nclass A {}\n")
    write(main / "java/org/a/sub/B.java", "package org.a.sub;\nclass B {}\n")
    write(main / "java/org/ab/C.java", "package org.ab ;\nclass C {}\n")
    write(main / "java11/org/z/Z.java", "package org.z;\nclass Z {}\n")
    write(main / "java/Plain.java", "class Plain {}\n")
    write(main / "java/org/q/package-info.java", "package org.q;\n")
    write(tmp_path / "src/test/java/org/t/T.java", "package org.t;\nclass T {}\n")
    # org.a.sub is inside org.a.*; org.ab is a different package; tests are not main code.
    assert project_includes(tmp_path) == ("org.a.*", "org.ab.*", "org.z.*", "Plain*")
    assert project_includes(tmp_path / "nothing") == ()


def test_agent_option() -> None:
    option = agent_option(["org.a.*", "org.b.*"])
    assert option == (
        "-javaagent:{maven_repo}/org/jacoco/org.jacoco.agent/0.8.12/org.jacoco.agent-0.8.12-runtime.jar"
        "=destfile={workspace}/target/tebench-jacoco.exec,append=true,includes=org.a.*:org.b.*"
    )
    with pytest.raises(HarnessError, match="no JaCoCo include patterns"):
        agent_option([])
    with pytest.raises(HarnessError, match="unsupported characters"):
        agent_option(["a,b"])


def test_check_agent_paths() -> None:
    check_agent_paths("/tmp/ws", "/root/.m2/repository")
    with pytest.raises(HarnessError, match="white space"):
        check_agent_paths("/tmp/my ws", "/repo")


def test_report_step() -> None:
    step = report_step(java_version=11, timeout=60)
    assert step.java_version == 11
    assert step.argv == (
        "java",
        "-XX:TieredStopAtLevel=1",
        "-jar",
        "{maven_repo}/org/jacoco/org.jacoco.cli/0.8.12/org.jacoco.cli-0.8.12-nodeps.jar",
        "report",
        "{workspace}/target/tebench-jacoco.exec",
        "--classfiles",
        "{workspace}/target/classes",
        "--xml",
        "{workspace}/target/tebench-jacoco.xml",
        "--quiet",
    )


#: apache/commons-math a84f6eb7: the package prefixes of its reactor's main sources (24).
MATH_INCLUDES = (
    "org.apache.commons.math3.examples.neuralnet.sofm.tsp.*", "org.apache.commons.math4.core.jdkmath.*",
    "org.apache.commons.math4.examples.kmeans.image.*", "org.apache.commons.math4.examples.sofm.chineserings.*",
    "org.apache.commons.math4.examples.sofm.tsp.*", "org.apache.commons.math4.legacy.analysis.*",
    "org.apache.commons.math4.legacy.core.*", "org.apache.commons.math4.legacy.distribution.*",
    "org.apache.commons.math4.legacy.exception.*", "org.apache.commons.math4.legacy.field.linalg.*",
    "org.apache.commons.math4.legacy.filter.*", "org.apache.commons.math4.legacy.fitting.*",
    "org.apache.commons.math4.legacy.genetics.*", "org.apache.commons.math4.legacy.linear.*",
    "org.apache.commons.math4.legacy.ml.clustering.*", "org.apache.commons.math4.legacy.ml.distance.*",
    "org.apache.commons.math4.legacy.ode.*", "org.apache.commons.math4.legacy.optim.*",
    "org.apache.commons.math4.legacy.random.*", "org.apache.commons.math4.legacy.special.*",
    "org.apache.commons.math4.legacy.stat.*", "org.apache.commons.math4.legacy.util.*",
    "org.apache.commons.math4.neuralnet.*", "org.apache.commons.math4.transform.*",
)  # fmt: skip


def test_includes_are_widened_until_jdk_8_reads_the_agent_option() -> None:
    paths = {"workspace": "/workspace", "maven_repo": "/maven-repo"}
    # as found: 1,200 characters in the Docker image, which JDK 8 ignores without a word
    assert len(agent_option(MATH_INCLUDES, maven_repo="/maven-repo")) > TOOL_OPTIONS_MAX
    fitted = fit_includes(MATH_INCLUDES, **paths)
    # the deepest prefixes go first (sofm.tsp, kmeans.image, ... then legacy.field.linalg,
    # legacy.ml.*), until legacy's eighteen packages are one
    assert fitted == (
        "org.apache.commons.math3.examples.neuralnet.*",
        "org.apache.commons.math4.core.jdkmath.*",
        "org.apache.commons.math4.examples.kmeans.*",
        "org.apache.commons.math4.examples.sofm.*",
        "org.apache.commons.math4.legacy.*",
        "org.apache.commons.math4.neuralnet.*",
        "org.apache.commons.math4.transform.*",
    )
    assert len(agent_option(fitted, maven_repo="/maven-repo")) <= TOOL_OPTIONS_MAX
    # a short list stays as it is; class names of the default package are never widened
    assert fit_includes(("org.tebench.textkit.*", "Calc*"), **paths) == ("Calc*", "org.tebench.textkit.*")
