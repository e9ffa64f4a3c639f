"""tebench build: the static filter on small histories, and the demo dataset rebuilt for real."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from scripted_maven import CONFTEST as SCRIPTED_MAVEN

from pytest_tebench.benchmarks.tebench.builder import BuildResult
from pytest_tebench.benchmarks.tebench.builder import list_commits
from pytest_tebench.benchmarks.tebench.builder import static_check

from conftest import TEST_MAVEN_REPO
from conftest import History

MAIN = "src/main/java/p/Calc.java"
TEST = "src/test/java/p/CalcTest.java"
CALC = "package p;\nclass Calc {\n    int add(int a, int b) {\n        return a + b;\n    }\n}\n"
CALC_TEST = "package p;\nclass CalcTest {\n    @Test void adds() {\n        check(1);\n    }\n}\n"


def _reason(history: History, files: dict[str, str | None], message: str = "change") -> str:
    sha = history.commit(files, message)
    commit = next(c for c in list_commits(history.path, rev="HEAD", since=None, until=None) if c.sha == sha)
    outcome = static_check(history.path, commit, "calc", "acme/calc")
    return outcome if isinstance(outcome, str) else "candidate"


def _more_test_lines(n: int) -> str:
    body = "".join(f"        check({i});\n" for i in range(n))
    return CALC_TEST.replace("        check(1);\n", body)


def test_static_filter_reasons(make_history: Callable[[str], History]) -> None:
    h = make_history("calc")
    first = h.commit({MAIN: CALC, TEST: CALC_TEST})
    root = next(c for c in list_commits(h.path, rev="HEAD", since=None, until=None) if c.sha == first)
    assert static_check(h.path, root, "calc", "acme/calc") == "root commit: no parent, so no V-1"
    swapped = CALC.replace("a + b", "b + a")
    assert _reason(h, {MAIN: swapped}) == "no change under src/test"
    # a comment-only production edit is no method-body change, whatever the test change
    commented = swapped.replace("return", "// sum\n        return")
    assert (
        _reason(h, {MAIN: commented, TEST: _more_test_lines(6)})
        == "no production method-body change under src/main"
    )
    # one test line out (check(0)), one in (check(-1))
    assert _reason(
        h,
        {
            MAIN: commented.replace("b + a", "a + b"),
            TEST: _more_test_lines(6).replace("check(0)", "check(-1)"),
        },
    ) == ("changed test lines outside 5-200 (2)")
    many = {f"src/main/java/p/F{i}.java": f"class F{i} {{ void f() {{ }} }}\n" for i in range(21)}
    assert _reason(h, {**many, TEST: _more_test_lines(12)}) == "more than 20 changed files (22)"
    assert _reason(h, {MAIN: CALC.replace("a + b", "a - b"), TEST: _more_test_lines(20)}) == "candidate"


def test_patches_of_a_candidate_split_source_from_tests(make_history: Callable[[str], History]) -> None:
    h = make_history("calc")
    h.commit({MAIN: CALC, TEST: CALC_TEST, "pom.xml": "<project/>\n"})
    sha = h.commit(
        {MAIN: CALC.replace("a + b", "a - b"), TEST: _more_test_lines(8), "pom.xml": "<project></project>\n"}
    )
    commit = next(c for c in list_commits(h.path, rev="HEAD", since=None, until=None) if c.sha == sha)
    candidate = static_check(h.path, commit, "calc", "acme/calc")
    assert not isinstance(candidate, str)
    row = candidate.row
    assert row["instance_id"] == f"calc__{sha[:8]}"
    assert (
        "pom.xml" in row["source_patch"] and MAIN in row["source_patch"] and TEST not in row["source_patch"]
    )
    assert TEST in row["test_patch"] and MAIN not in row["test_patch"]
    # Calc.java and pom.xml: one line out, one in each (4); the test keeps check(1) and gains 7 lines
    assert (row["num_changed_files"], row["src_changed_lines"], row["test_changed_lines"]) == (3, 4, 7)


@pytest.mark.maven
def test_rebuilding_the_demo_gives_the_shipped_dataset_and_resumes(tmp_path: Path) -> None:
    from pytest_tebench.demo import build_demo_mirror
    from pytest_tebench.instance.datasets import demo_dataset_path

    mirror = build_demo_mirror(tmp_path / "textkit.git")
    out = tmp_path / "dataset.jsonl"
    command = [
        sys.executable, "-m", "pytest_tebench.cli", "build", str(mirror), "--repo", "pytest-tebench/textkit",
        "--out", str(out), "-j", "2", "--cache-dir", str(tmp_path / "cache"), "--maven-repo", str(TEST_MAVEN_REPO),
    ]  # fmt: skip
    first = subprocess.run(command, capture_output=True, text=True, check=False)
    assert first.returncode == 0, first.stderr
    assert out.read_bytes() == demo_dataset_path().read_bytes()
    rejections = json.loads(out.with_name("dataset.jsonl.rejections.json").read_text())
    assert rejections["counts"] == {
        "changed test lines outside 5-200": 1,
        "gold's changed tests fail on V0": 1,
        "no change under src/test": 1,
        "no production method-body change under src/main": 1,
        "root commit": 1,
    }
    assert "9 instances written" in first.stdout
    # resumable: a second run decides nothing again and writes the same file
    second = subprocess.run(command, capture_output=True, text=True, check=False)
    assert second.returncode == 0, second.stderr
    assert "14 commits, 0 to build, 14 already decided" in second.stdout
    assert out.read_bytes() == demo_dataset_path().read_bytes()


def test_a_commit_no_jdk_here_builds_is_recorded_unsupported(
    make_history: Callable[[str], History], tmp_path: Path
) -> None:
    from pytest_tebench.benchmarks.tebench.builder import BuildConfig
    from pytest_tebench.benchmarks.tebench.builder import build
    from pytest_tebench.run.local import LocalExecutor
    from pytest_tebench.run.maven.jdk import choose_java_version

    pom = "<project><properties><maven.compiler.release>17</maven.compiler.release></properties></project>\n"
    h = make_history("calc")
    h.commit({MAIN: CALC, TEST: CALC_TEST, "pom.xml": pom})
    sha = h.commit({MAIN: CALC.replace("a + b", "a - b"), TEST: _more_test_lines(8)})
    executor = LocalExecutor(jdks={})
    state = tmp_path / "out.jsonl.state.jsonl"
    lines: list[str] = []

    def run(*, retry: bool = False) -> dict[str, str]:
        config = BuildConfig(
            repo_dir=h.path, repo="acme/calc", work_dir=tmp_path / "work", maven_repo=tmp_path / "m2",
            executor=lambda: executor,
            # the one chooser, on a machine whose only JDK (8) cannot compile release 17
            java_version=lambda requirement: choose_java_version((8,), requirement, None),
            retry_unsupported=retry,
        )  # fmt: skip
        return build(config, state, progress=lines.append).rejections

    reason = run()[sha]
    assert reason == (
        "unsupported environment: no installed JDK can build Java level 17 (found: 8); "
        "JDK 8: pom.xml: maven.compiler.release 17"
    )
    assert not any("will retry" in line for line in lines)
    # recorded: the next run builds nothing again, and counts it under its own reason
    lines.clear()
    assert run()[sha] == reason
    assert lines[0] == "2 commits, 0 to build, 2 already decided"
    # unless asked to
    lines.clear()
    assert run(retry=True)[sha] == reason
    assert lines[0] == "2 commits, 1 to build, 1 already decided"


def test_a_commit_needing_a_snapshot_nobody_publishes_is_unsupported_without_a_build(
    make_history: Callable[[str], History], tmp_path: Path
) -> None:
    from pytest_tebench.benchmarks.tebench.builder import BuildConfig
    from pytest_tebench.benchmarks.tebench.builder import build
    from pytest_tebench.run.maven.jdk import choose_java_version

    pom = (
        "<project><groupId>acme</groupId><artifactId>calc</artifactId><version>1</version><dependencies>"
        "<dependency><groupId>org.apache.commons</groupId><artifactId>commons-numbers-core</artifactId>"
        "<version>1.0-SNAPSHOT</version></dependency></dependencies></project>\n"
    )
    h = make_history("calc")
    h.commit({MAIN: CALC, TEST: CALC_TEST, "pom.xml": pom})
    sha = h.commit({MAIN: CALC.replace("a + b", "a - b"), TEST: _more_test_lines(8)})

    class NoBuild:
        """Fails the test if anything is built or downloaded: the POMs alone decide."""

        name = "none"

        def run(self, *args: object, **kwargs: object) -> object:
            raise AssertionError(f"nothing may run: {args}")

        def java_versions(self) -> tuple[int, ...]:
            return (17,)

    config = BuildConfig(
        repo_dir=h.path, repo="acme/calc", work_dir=tmp_path / "work", maven_repo=tmp_path / "m2",
        executor=NoBuild,  # type: ignore[arg-type]
        java_version=lambda requirement: choose_java_version((17,), requirement, None),
    )  # fmt: skip
    assert build(config, tmp_path / "out.jsonl.state.jsonl", progress=lambda line: None).rejections[sha] == (
        "unsupported environment: unbuildable here: the build needs artifacts published in no repository "
        "reachable from here: org.apache.commons:commons-numbers-core:jar:1.0-SNAPSHOT"
    )


@pytest.mark.maven
def test_gold_tests_jupiter_never_runs_are_left_out_and_a_commit_left_with_none_is_rejected(
    make_history: Callable[[str], History], tmp_path: Path
) -> None:
    # a private @Test method: Jupiter runs no private method, so the project's build never ran it
    counter = "src/main/java/org/tebench/order/Counter.java"
    counter_test = "src/test/java/org/tebench/order/CounterTest.java"
    source = "package org.tebench.order;\n\nclass Counter {\n    static int next(int n) {\n        return n + 1;\n    }\n}\n"

    def tests(on: str, twice: str) -> str:
        return (
            "package org.tebench.order;\n\nimport static org.junit.jupiter.api.Assertions.assertEquals;\n\n"
            "import org.junit.jupiter.api.Test;\n\nclass CounterTest {\n"
            f"    @Test\n    void countsOn() {{\n{on}    }}\n\n"
            f"    @Test\n    private void countsTwice() {{\n{twice}    }}\n}}\n"
        )

    def checks(step: int, offset: int) -> str:
        return "".join(
            f"        assertEquals({n + step + offset}, Counter.next({n}));\n" for n in range(1, 4)
        )

    h = make_history("order")
    pom = (Path(__file__).parent / "fixtures" / "mini-maven" / "pom.xml").read_text()
    h.commit({"pom.xml": pom, counter: source, counter_test: tests(checks(1, 0), checks(1, 100))}, "V-1")
    both = h.commit(
        {counter: source.replace("n + 1", "n + 2"), counter_test: tests(checks(2, 0), checks(2, 200))},
        "count by two",
    )
    private_only = h.commit(
        {counter: source.replace("n + 1", "n + 3"), counter_test: tests(checks(2, 0), checks(3, 300))},
        "count by three",
    )
    out = tmp_path / "dataset.jsonl"
    command = [
        sys.executable, "-m", "pytest_tebench.cli", "build", str(h.path), "--repo", "tebench/order",
        "--out", str(out), "--executor", "local", "--cache-dir", str(tmp_path / "cache"),
        "--maven-repo", str(TEST_MAVEN_REPO),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    # both changed: countsOn ran and countsTwice ran nowhere, not even in the module's whole test
    # phase where its class ran; the instance stands on countsOn (evaluation leaves countsTwice out)
    assert [row["instance_id"] for row in rows] == [f"order__{both[:8]}"]
    rejections = json.loads(out.with_name("dataset.jsonl.rejections.json").read_text())["commits"]
    assert rejections[private_only] == (
        "none of gold's selected tests runs in the project's own build: org.tebench.order.CounterTest#countsTwice "
        "(its class runs in the module's full test run and it does not: no test to the class's runner)"
    )


@pytest.mark.parametrize("scenario", ["jdk-21", "per-method"])
def test_the_builder_keeps_a_commit_whose_gold_passes_evaluation_s_check_on_v0(
    make_history: Callable[[str], History], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scenario: str
) -> None:
    """Gold on V0 is checked as evaluation checks it (gold_run): a commit whose gold's tests
    compile on JDK 21 only (``jdk-21``), or fail selected by method and pass when their class runs
    (``per-method``, Surefire before 2.19's one JUnit request per method), is an instance; the
    simpler check rejected both ("V0 does not compile", "gold's changed tests fail on V0")."""
    sha, result = _scripted_build(make_history, tmp_path, monkeypatch, scenario)
    assert sha not in result.rejections, result.rejections[sha]
    (row,) = result.rows
    # the old version of adds passes on V-0.5, run as gold's check settled: stale
    assert (row["v0_commit"], row["labels"]) == (sha, ["stale"])
    steps = [json.loads(line) for line in (tmp_path / "steps.jsonl").read_text().splitlines()]
    if scenario == "jdk-21":
        # gold's launch on 11 (chosen: nothing asks for more), the plain compile on 11, gold on
        # 17, gold on 21 (compiles: gold's JDK), then the old tests on V-0.5 on gold's JDK
        assert [(step["name"], step["java"]) for step in steps] == [
            ("compile+test", 11),
            ("test-compile", 11),
            ("compile+test", 17),
            ("compile+test", 21),
            ("compile+test", 21),
        ]
    else:
        selectors = [next((a for a in step["argv"] if a.startswith("-Dtest=")), None) for step in steps]
        # gold by method (fails), by class (passes: the rule), the old tests on V-0.5 by class
        assert selectors == ["-Dtest=p.CalcTest#adds+adds[*]", "-Dtest=p.CalcTest", "-Dtest=p.CalcTest"]


@pytest.mark.parametrize(
    ("scenario", "reason"),
    [
        (
            "uncompilable",
            "V0 does not compile: gold does not compile on V0 (test_compile_error): [ERROR] Failed to execute "
            "goal org.apache.maven.plugins:maven-compiler-plugin:3.13.0:testCompile (default-testCompile) on "
            "project calc: Compilation failure: src/test/java/p/CalcTest.java:[4,20] cannot find symbol; a "
            "plain cold `mvn test-compile` on JDK 11 fails too "
            "(test_compile_error), and so does gold's run on JDK 17 (test_compile_error), JDK 21 "
            "(test_compile_error)",
        ),
        (
            "failing",
            "gold's changed tests fail on V0: gold fails its own selected tests on V0, in the module's full "
            "test run too: p.CalcTest#adds failed: expected: <2> but was: <3>; and so does gold's run on JDK 17 "
            "(p.CalcTest#adds failed: expected: <2> but was: <3>), JDK 21 (p.CalcTest#adds failed: expected: <2> "
            "but was: <3>)",
        ),
        (
            "unknown-host",
            "unsupported environment: gold's selected tests need an external host: jsoup.org (p.CalcTest#adds); "
            "the sandbox has no network (evaluation's --tebench-network, tebench build's --network, lets the "
            "tests use it)",
        ),
        (
            "class-too",
            "harness error: gold's selected tests fail as the harness selects them (selected by method: "
            "p.CalcTest#adds failed: expected: <2> but was: <3>; selected by class: p.CalcTest#adds failed: "
            "expected: <2> but was: <3>) and pass in the module's full test run (p.CalcTest#adds passed): the "
            "harness's selection is at fault, not the instance",
        ),
    ],
)
def test_the_builder_rejects_as_gold_s_check_on_v0_decides(
    make_history: Callable[[str], History],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    scenario: str,
    reason: str,
) -> None:
    """Invalid by gold's check: rejected under the builder's old headings, the check's reason
    after; an external host is the environment's (recorded as unsupported), the harness's
    selection at fault the harness's error (not recorded: the next run tries the commit again)."""
    sha, result = _scripted_build(make_history, tmp_path, monkeypatch, scenario)
    assert result.rejections[sha] == reason and not result.rows
    state = [json.loads(line) for line in (tmp_path / "out.jsonl.state.jsonl").read_text().splitlines()]
    recorded = {entry["commit"]: entry for entry in state}
    assert (sha in recorded) == (scenario != "class-too")
    assert recorded.get(sha, {}).get("unsupported", False) == (scenario == "unknown-host")


def test_the_builder_keeps_a_commit_needing_a_host_when_the_tests_may_reach_the_network(
    make_history: Callable[[str], History], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tebench build --network``: gold's check and the V-0.5 run reach the network, as evaluation's
    --tebench-network lets them, so the commit the sandbox rejected above is written."""
    sha, result = _scripted_build(make_history, tmp_path, monkeypatch, "unknown-host", network=True)
    assert sha not in result.rejections and [row["v0_commit"] for row in result.rows] == [sha]
    steps = [json.loads(line) for line in (tmp_path / "steps.jsonl").read_text().splitlines()]
    tests = [step for step in steps if any(a.startswith("-Dtest=") for a in step["argv"])]
    assert tests and all(step["test_network"] for step in tests)


def test_tebench_build_network_option_reaches_the_build_settings(tmp_path: Path) -> None:
    from pytest_tebench.benchmarks.building import BuildEnvironment
    from pytest_tebench.cli import make_parser

    parser = make_parser()
    assert parser.parse_args(["build", "r", "--repo", "a/b", "--out", "o.jsonl"]).network is False
    args = parser.parse_args(["build", "r", "--repo", "a/b", "--out", "o.jsonl", "--network"])
    assert args.network is True
    (tmp_path / "pom.xml").write_text("<project/>\n")
    env = BuildEnvironment(
        repo_dir=tmp_path, repo="a/b", work_dir=tmp_path, maven_repo=tmp_path / "m2",
        executor=lambda: None,  # type: ignore[arg-type,return-value]
        java_version=lambda requirement: 17, network=args.network,
    )  # fmt: skip
    assert env.run_settings(tmp_path).test_network is True
    assert BuildEnvironment(**{**env.__dict__, "network": False}).run_settings(tmp_path).test_network is False


def _scripted_build(
    make_history: Callable[[str], History],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    scenario: str,
    *,
    network: bool = False,
) -> tuple[str, BuildResult]:
    """``tebench build`` of a two-commit history with the scripted Maven of test_update_scripted.py
    in ``scenario`` (JDKs 11, 17 and 21 here; its step log: tmp_path/steps.jsonl): the second
    commit's sha, and the result."""
    from pytest_tebench.benchmarks.tebench.builder import BuildConfig
    from pytest_tebench.benchmarks.tebench.builder import build
    from pytest_tebench.run.maven.jdk import choose_java_version

    (tmp_path / "scripted_maven.py").write_text(SCRIPTED_MAVEN)
    spec = importlib.util.spec_from_file_location("scripted_maven", tmp_path / "scripted_maven.py")
    assert spec is not None and spec.loader is not None
    scripted = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scripted)
    maven = scripted.ScriptedMaven()
    monkeypatch.setenv("SCRIPTED_MAVEN", scenario)
    monkeypatch.setenv("SCRIPTED_JDKS", "11,17,21")
    calc_test = "package p;\n\nclass CalcTest {\n    @Test void adds() {\n        check(1);\n    }\n}\n"
    h = make_history("calc")
    h.commit(
        {"pom.xml": "<project><modelVersion>4.0.0</modelVersion></project>\n", MAIN: CALC, TEST: calc_test}
    )
    changed = calc_test.replace("        check(1);\n", "".join(f"        check({i});\n" for i in range(6)))
    sha = h.commit({MAIN: CALC.replace("a + b", "a - b"), TEST: changed})
    config = BuildConfig(
        repo_dir=h.path, repo="acme/calc", work_dir=tmp_path / "work", maven_repo=tmp_path / "m2",
        executor=lambda: maven,
        java_version=lambda requirement: choose_java_version((11, 17, 21), requirement, None),
        network=network,
    )  # fmt: skip
    return sha, build(config, tmp_path / "out.jsonl.state.jsonl", progress=lambda line: None)
