"""Which packages a named module's tests get opened (run/maven/modulepath.py), and how."""

from __future__ import annotations

from pathlib import Path

from pytest_tebench.run.maven.modulepath import declared_module
from pytest_tebench.run.maven.modulepath import opens_for_tests
from pytest_tebench.run.maven.steps import selection_step
from pytest_tebench.run.maven.surefire import TestId

FIXTURE = Path(__file__).parent / "fixtures" / "mini-selection" / "module-path"


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_every_test_package_is_opened_not_only_the_selected_ones() -> None:
    # Surefire 3 would open only org.tebench.modular.shape for -Dtest=...BoxTest#...
    assert opens_for_tests(FIXTURE, [""]) == (
        "--add-opens=org.tebench.modular/org.tebench.modular.core=ALL-UNNAMED",
        "--add-opens=org.tebench.modular/org.tebench.modular.shape=ALL-UNNAMED",
    )


def test_modules_of_a_reactor_open_modules_and_class_path_projects(tmp_path: Path) -> None:
    # jfreechart's module-info starts with a licence comment; an annotation may precede it
    write(tmp_path / "a/src/main/java/module-info.java", "/* module x { */\n@Deprecated module org.a {\n}\n")
    write(
        tmp_path / "a/src/test/java/org/a/t/XTest.java",
        "// package wrong;\npackage org.a.t;\nclass XTest {}\n",
    )
    write(tmp_path / "a/src/test/java/org/a/t/YTest.java", "package org.a.t;\nclass YTest {}\n")
    write(tmp_path / "b/src/main/java/module-info.java", "open module org.b { requires org.a; }\n")
    write(tmp_path / "b/src/test/java/org/b/BTest.java", "package org.b;\nclass BTest {}\n")
    write(tmp_path / "c/src/test/java/org/c/CTest.java", "package org.c;\nclass CTest {}\n")
    assert declared_module(tmp_path / "a") == ("org.a", False)
    assert declared_module(tmp_path / "b") == ("org.b", True)
    assert declared_module(tmp_path / "c") is None
    # an open module needs nothing, a class-path project has no module to open
    assert opens_for_tests(tmp_path, ["a", "b", "c"]) == ("--add-opens=org.a/org.a.t=ALL-UNNAMED",)


def test_opens_ride_in_jdk_java_options_next_to_the_agent() -> None:
    step = selection_step(
        [TestId("p.ATest", "a")],
        java_version=17,
        timeout=60,
        includes=("p.*",),
        java_options=("--add-opens=m/p=ALL-UNNAMED", "--add-opens=m/q=ALL-UNNAMED"),
    )
    env = dict(step.env)
    assert env["JDK_JAVA_OPTIONS"] == "--add-opens=m/p=ALL-UNNAMED --add-opens=m/q=ALL-UNNAMED"
    assert "-javaagent:" in env["JAVA_TOOL_OPTIONS"]  # JaCoCo keeps its own variable
    assert not any("argLine" in arg for arg in step.argv)  # the project's argLine is left alone
    assert "JDK_JAVA_OPTIONS" not in dict(selection_step([], java_version=17, timeout=60).env)
