"""Every log parser SWE-bench Multilingual rows name, on log excerpts written by hand after the
real runners' output (the eval scripts run under ``set -x``), graded as SWE-bench grades them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from pytest_tebench.benchmarks.swebench.multilingual.grading import as_instance
from pytest_tebench.benchmarks.swebench.multilingual.grading import grade_multilingual
from pytest_tebench.errors import InputError

pytest.importorskip("swebench")

START = "+ : '>>>>> Start Test Output'\n"
END = "+ : '>>>>> End Test Output'\n"


@dataclass(frozen=True)
class Case:
    parser: str
    instance_id: str
    f2p: tuple[str, ...]
    p2p: tuple[str, ...]
    #: The test output of a fixed tree (everything passes) and of a broken one.
    fixed: str
    broken: str
    #: The F2P and P2P tests the broken output fails.
    broken_f2p: tuple[str, ...]
    broken_p2p: tuple[str, ...] = ()


def _row(case: Case) -> dict[str, Any]:
    owner_name, _, number = case.instance_id.rpartition("-")
    owner, _, name = owner_name.partition("__")
    return {
        "repo": f"{owner}/{name}",
        "instance_id": case.instance_id,
        "base_commit": "0" * 40,
        "patch": "diff --git a/a b/a\n",
        "test_patch": "diff --git a/t b/t\n",
        "version": number,
        "FAIL_TO_PASS": list(case.f2p),
        "PASS_TO_PASS": list(case.p2p),
        "log_parser": case.parser,
        "eval_type": "pass_and_fail",
        "image": f"swebench/sweb.eval.x86_64.{owner}_1776_{name}-{number}:latest",
        "eval_script": "#!/bin/bash\n",
    }


MAVEN_F2P = "org.apache.druid.query.aggregation.post.ArithmeticPostAggregatorTest#testPow"
MAVEN_P2P = "org.apache.druid.query.aggregation.post.ArithmeticPostAggregatorTest#testDiv"


def _maven(first: str, second: str) -> str:
    # one Maven call per test id: the xtrace line names the test, the next BUILD line is its verdict
    return (
        f"+ mvnd test -B -pl processing -Dtest={MAVEN_F2P}\n"
        "[INFO] Scanning for projects...\n"
        "[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0\n"
        "[INFO] ------------------------------------------------------------------------\n"
        f"[INFO] BUILD {first}\n"
        "[INFO] ------------------------------------------------------------------------\n"
        f"+ mvnd test -B -pl processing -Dtest={MAVEN_P2P}\n"
        "[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0\n"
        f"[INFO] BUILD {second}\n"
    )


LUCENE = "org.apache.lucene.queries.intervals.TestIntervalBuilder"
LOMBOK_F2P = "javac-ValInLambda.java(lombok.transform.TestWithDelombok)"
LOMBOK_P2P = "javac-Accessors.java(lombok.transform.TestWithDelombok)"
DOCTEST = """<?xml version="1.0" encoding="UTF-8"?>
<doctest binary="./build/tests/test-udt_cpp11">
  <Options order_by="file" rand_seed="0" first="0" last="4294967295" abort_after="0"/>
  <TestSuite>
    <TestCase name="basic usage" filename="tests/src/unit-udt.cpp" line="203">
      <SubCase name="conversion to json via free-functions" filename="tests/src/unit-udt.cpp" line="217">
        <Expression success="{to_json}" type="CHECK" filename="tests/src/unit-udt.cpp" line="220">
          <Original>j == R"({"age":23})"_json</Original>
        </Expression>
      </SubCase>
      <SubCase name="conversion from json via free-functions" filename="tests/src/unit-udt.cpp" line="240">
        <Expression success="true" type="CHECK" filename="tests/src/unit-udt.cpp" line="244">
          <Original>p == sfinae_addict</Original>
        </Expression>
      </SubCase>
      <OverallResultsAsserts successes="1" failures="0"/>
    </TestCase>
  </TestSuite>
  <OverallResultsAsserts successes="2" failures="0"/>
</doctest>
"""
KARMA = """\
+ npx karma start karma.conf.js --single-run '--grep=test/browser/render.test.js'
27 11 2026 11:02:41.163:INFO [launcher]: Starting browser ChromeHeadless
27 11 2026 11:02:42.010:INFO [Chrome Headless]: Connected on socket
  render()
    {first} should set progress value to 0
    ✔ should rerender when value from "" to 0
  Fragment
    ✔ should render a single child
SUMMARY:
✔ 3 tests completed
"""
RSPEC = "./fastlane/spec/actions_specs/zip_spec.rb"
VITEST = "packages/runtime-core/__tests__/apiWatch.spec.ts > api: watch"

CASES: tuple[Case, ...] = (
    Case(
        "parse_log_maven", "apache__druid-13704", (MAVEN_F2P,), (MAVEN_P2P,),
        _maven("SUCCESS", "SUCCESS"), _maven("FAILURE", "SUCCESS"), (MAVEN_F2P,),
    ),
    Case(
        "parse_log_gradle_custom", "apache__lucene-11760",
        (f"{LUCENE} > testEmptyIntervals",), (f"{LUCENE} > testUnordered",),
        f"> Task :lucene:queries:test\n{LUCENE} > testEmptyIntervals PASSED\n{LUCENE} > testUnordered PASSED\n",
        # the task's own FAILED line is no test; a verdict split off its test name by other output
        # (parallel test tasks) names no test, so testEmptyIntervals is missing: failed
        f"> Task :lucene:queries:test FAILED\n{LUCENE} > testEmptyIntervals\n"
        "WARNING: A command line option has enabled the Security Manager\n PASSED\n"
        f"{LUCENE} > testUnordered PASSED\n",
        (f"{LUCENE} > testEmptyIntervals",),
    ),
    Case(
        "parse_log_ant", "projectlombok__lombok-2792", (LOMBOK_F2P,), (LOMBOK_P2P,),
        f"test.instance:\n    [junit] [PASS] {LOMBOK_F2P}\n    [junit] [PASS] {LOMBOK_P2P}\nBUILD SUCCESSFUL\n",
        f"test.instance:\n    [junit] [ERR] {LOMBOK_F2P}\n    [junit] [FAIL] {LOMBOK_P2P}\n"
        f"    [junit] Test {LOMBOK_P2P} FAILED\nBUILD FAILED\n",
        (LOMBOK_F2P,), (LOMBOK_P2P,),
    ),
    Case(
        "parse_log_cargo", "astral-sh__ruff-15309",
        ("rules::pyflakes::tests::f523",), ("rules::pyflakes::tests::f525",),
        "running 2 tests\ntest rules::pyflakes::tests::f523 ... ok\ntest rules::pyflakes::tests::f525 ... ok\n"
        "\ntest result: ok. 2 passed; 0 failed; 0 ignored\n",
        "running 2 tests\ntest rules::pyflakes::tests::f523 ... FAILED\ntest rules::pyflakes::tests::f525 ... ok\n"
        "\ntest result: FAILED. 1 passed; 1 failed; 0 ignored\n",
        ("rules::pyflakes::tests::f523",),
    ),
    Case(
        "parse_log_doctest", "nlohmann__json-4237",
        ("basic usage > conversion to json via free-functions",),
        ("basic usage > conversion from json via free-functions",),
        DOCTEST.replace("{to_json}", "true"), DOCTEST.replace("{to_json}", "false"),
        ("basic usage > conversion to json via free-functions",),
    ),
    Case(
        "parse_log_googletest", "fmtlib__fmt-1683", ("PrintfTest.MinusFlag",), ("PrintfTest.NoArgs",),
        "5: [ RUN      ] PrintfTest.NoArgs\n5: [       OK ] PrintfTest.NoArgs (0 ms)\n"
        "5: [ RUN      ] PrintfTest.MinusFlag\n5: [       OK ] PrintfTest.MinusFlag (0 ms)\n",
        "5: [       OK ] PrintfTest.NoArgs (0 ms)\n5: [ RUN      ] PrintfTest.MinusFlag\n"
        "5: /testbed/test/printf-test.cc:152: Failure\n5: [  FAILED  ] PrintfTest.MinusFlag (0 ms)\n",
        ("PrintfTest.MinusFlag",),
    ),
    Case(
        "parse_log_gotest", "caddyserver__caddy-4774", ("TestCaddyfileAdaptToJSON",), ("TestReplacer",),
        "=== RUN   TestCaddyfileAdaptToJSON\n--- PASS: TestCaddyfileAdaptToJSON (0.01s)\n"
        "--- PASS: TestReplacer (0.00s)\nPASS\nok  \tgithub.com/caddyserver/caddy/v2/caddytest/integration\t0.051s\n",
        "=== RUN   TestCaddyfileAdaptToJSON\n    caddyfile_adapt_test.go:46: mismatch\n"
        "--- FAIL: TestCaddyfileAdaptToJSON (0.01s)\n--- SKIP: TestReplacer (0.00s)\nFAIL\n",
        # a skipped P2P test is no failure: SWE-bench grades only a passed or a failed/missing one
        ("TestCaddyfileAdaptToJSON",),
    ),
    Case(
        "parse_log_immutable_js", "immutable-js__immutable-js-2005",
        ("OrderedSet > hashCode should return the same value if the values are the same",),
        ("OrderedSet > provides initial values in a mixed order",),
        "[PASSED] OrderedSet > hashCode should return the same value if the values are the same\n"
        "[PASSED] OrderedSet > provides initial values in a mixed order\n",
        "[FAILED] OrderedSet > hashCode should return the same value if the values are the same\n"
        "[PASSED] OrderedSet > provides initial values in a mixed order\n",
        ("OrderedSet > hashCode should return the same value if the values are the same",),
    ),
    Case(
        "parse_log_jekyll", "jekyll__jekyll-8047",
        ("TestFilters#test_: filters where_exp filter should filter objects across multiple conditions",),
        ("TestFilters#test_: filters where_exp filter should filter objects appropriately",),
        "TestFilters#test_: filters where_exp filter should filter objects across multiple conditions. = 0.01 s = .\n"
        "TestFilters#test_: filters where_exp filter should filter objects appropriately. = 0.00 s = .\n",
        "TestFilters#test_: filters where_exp filter should filter objects across multiple conditions. = 0.01 s = E\n"
        "TestFilters#test_: filters where_exp filter should filter objects appropriately. = 0.00 s = .\n",
        ("TestFilters#test_: filters where_exp filter should filter objects across multiple conditions",),
    ),
    Case(
        "parse_log_jest", "babel__babel-13928",
        ("es2015/yield/yield following arrow in params",), ("comments/basic/arrow function",),
        " PASS  packages/babel-parser/test/index.js\n    ✓ es2015/yield/yield following arrow in params (3 ms)\n"
        "    ✓ comments/basic/arrow function (1 ms)\n    ○ skipped es2015/other\n",
        " FAIL  packages/babel-parser/test/index.js\n    ✕ es2015/yield/yield following arrow in params (5 ms)\n"
        "    ✓ comments/basic/arrow function (1 ms)\n",
        ("es2015/yield/yield following arrow in params",),
    ),
    Case(
        "parse_log_jq", "jqlang__jq-2235", ("tests/shtest",), ("test_utf8",),
        "PASS: test_utf8\nPASS: tests/shtest\n# TOTAL: 2\n# PASS:  2\n",
        "PASS: test_utf8\nFAIL: tests/shtest\n# TOTAL: 2\n# FAIL:  1\n",
        ("tests/shtest",),
    ),
    Case(
        "parse_log_karma", "preactjs__preact-2757",
        ("render() > should set progress value to 0",), ('render() > should rerender when value from "" to 0',),
        KARMA.replace("{first}", "✔"), KARMA.replace("{first}", "✖"),
        ("render() > should set progress value to 0",),
    ),
    Case(
        "parse_log_micropython_test", "micropython__micropython-10095",
        ("basics/fun_calldblstar.py",), ("basics/fun_defargs.py",),
        "pass  basics/fun_calldblstar.py\npass  basics/fun_defargs.py\n2 tests performed\n",
        "FAIL  basics/fun_calldblstar.py\npass  basics/fun_defargs.py\n1 tests failed: fun_calldblstar\n",
        ("basics/fun_calldblstar.py",),
    ),
    Case(
        "parse_log_phpunit", "briannesbitt__carbon-2665", ("Round > Floor year",), ("Round > Round with default unit",),
        "PHPUnit 9.5.10 by Sebastian Bergmann and contributors.\n\nRound (Tests\\Carbon\\Round)\n"
        " ✔ Floor year\n ✔ Round with default unit\n\nOK (2 tests, 4 assertions)\n",
        "Round (Tests\\Carbon\\Round)\n ✘ Floor year\n   │ Failed asserting that 2022 is 2021.\n"
        " ✔ Round with default unit\n\nFAILURES!\n",
        ("Round > Floor year",),
    ),
    Case(
        "parse_log_redis", "redis__redis-10068",
        ("XTRIM with MINID option, big delta from master record",), ("XTRIM with MINID option",),
        "[ok]: XTRIM with MINID option (2 ms)\n[ok]: XTRIM with MINID option, big delta from master record (104 ms)\n",
        "[ok]: XTRIM with MINID option (2 ms)\n"
        "[err]: XTRIM with MINID option, big delta from master record in tests/unit/type/stream.tcl\n",
        ("XTRIM with MINID option, big delta from master record",),
    ),
    Case(
        "parse_log_rspec_transformed_json", "fastlane__fastlane-19207",
        (f"archives a directory with shell escaped path - {RSPEC}[1:1:1:8]",),
        (f"generates a valid zip command - {RSPEC}[1:1:1:1]",),
        f"archives a directory with shell escaped path - {RSPEC}[1:1:1:8] - passed\n"
        f"generates a valid zip command - {RSPEC}[1:1:1:1] - passed\n",
        f"archives a directory with shell escaped path - {RSPEC}[1:1:1:8] - failed\n"
        f"generates a valid zip command - {RSPEC}[1:1:1:1] - failed\n",
        (f"archives a directory with shell escaped path - {RSPEC}[1:1:1:8]",),
        (f"generates a valid zip command - {RSPEC}[1:1:1:1]",),
    ),
    Case(
        "parse_log_ruby_unit", "faker-ruby__faker-2705", ("test_password",), ("test_deterministic_password",),
        "Started\nTestFakerInternet:\n  test_deterministic_password:\t.: (0.001)\n  test_password:\t\t.: (0.002)\n",
        "Started\nTestFakerInternet:\n  test_deterministic_password:\t.: (0.001)\n  test_password:\t\tF\n"
        "===============================================================================\nFailure: test_password\n",
        ("test_password",),
    ),
    Case(
        "parse_log_tap", "axios__axios-4731",
        ("supports http with nodejs should properly support default max body length",),
        ("supports http with nodejs should support max body length",),
        "TAP version 13\nok 1 supports http with nodejs should support max body length\n"
        "ok 2 supports http with nodejs should properly support default max body length\n1..2\n# tests 2\n",
        "TAP version 13\nok 1 supports http with nodejs should support max body length\n"
        "not ok 2 supports http with nodejs should properly support default max body length\n"
        "  Error: maxContentLength size of -1 exceeded\n1..2\n",
        ("supports http with nodejs should properly support default max body length",),
    ),
    Case(
        "parse_log_vitest", "vuejs__core-11589",
        (f"{VITEST} > should be executed correctly",), (f"{VITEST} > effect",),
        f" ✓ {VITEST} > effect 3ms\n ✓ {VITEST} > should be executed correctly 1ms\n",
        f" ✓ {VITEST} > effect 3ms\n \u00d7 {VITEST} > should be executed correctly 4ms\n"
        "   → expected 'spy' to be called 1 times\n",
        (f"{VITEST} > should be executed correctly",),
    ),
)  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[case.parser for case in CASES])
def test_every_parser_grades_a_fixed_and_a_broken_log(case: Case) -> None:
    row = _row(case)
    fixed = grade_multilingual(row, START + case.fixed + END)
    assert fixed["log_parser"] == case.parser and fixed["test_output_found"]
    assert fixed["resolution"] == "RESOLVED_FULL" and fixed["resolved"] is True
    assert fixed["tests_status"]["FAIL_TO_PASS"] == {"success": list(case.f2p), "failure": []}
    broken = grade_multilingual(row, START + case.broken + END)
    assert broken["resolved"] is False and broken["test_output_found"]
    assert broken["tests_status"]["FAIL_TO_PASS"]["failure"] == list(case.broken_f2p)
    assert broken["tests_status"]["PASS_TO_PASS"]["failure"] == list(case.broken_p2p)


def test_the_nineteen_parsers_of_the_dataset_are_all_covered() -> None:
    assert len({case.parser for case in CASES}) == 19


def test_maven_pairs_each_build_line_with_the_test_of_the_call_before_it() -> None:
    case = CASES[0]
    # the chain is `mvnd ... && mvnd ...`: a failing first call stops it, the second test never runs
    log = (
        START
        + _maven("FAILURE", "SUCCESS").split(f"+ mvnd test -B -pl processing -Dtest={MAVEN_P2P}")[0]
        + END
    )
    report = grade_multilingual(_row(case), log)
    assert report["status_map"] == {MAVEN_F2P: "FAILED"}
    assert report["tests_status"]["PASS_TO_PASS"]["failure"] == [MAVEN_P2P]
    # a BUILD line before any traced call names no test of the row
    early = grade_multilingual(_row(case), START + "[INFO] BUILD SUCCESS\n" + END)
    assert early["resolved"] is False and early["status_map"] == {"---NO TEST NAME FOUND YET---": "PASSED"}


def test_a_log_without_the_markers_is_no_test_output_and_unresolved() -> None:
    report = grade_multilingual(_row(CASES[3]), CASES[3].fixed)
    assert report["test_output_found"] is False and report["resolved"] is False
    assert report["resolution"] == "RESOLVED_NO"


def test_fail_only_counts_a_missing_test_as_a_success() -> None:
    row = {**_row(CASES[3]), "eval_type": "fail_only"}
    only_p2p = "test rules::pyflakes::tests::f525 ... ok\n"
    assert grade_multilingual(row, START + only_p2p + END)["resolved"] is True
    assert (
        grade_multilingual({**row, "eval_type": "pass_and_fail"}, START + only_p2p + END)["resolved"] is False
    )


def test_a_loaded_row_grades_like_its_mapping() -> None:
    row = _row(CASES[0])
    log = START + CASES[0].fixed + END
    assert grade_multilingual(as_instance(row), log) == grade_multilingual(row, log)


def test_rows_that_cannot_be_graded_say_why() -> None:
    with pytest.raises(InputError, match="not a SWE-bench Multilingual row"):
        as_instance({**_row(CASES[0]), "repo": "psf/requests", "log_parser": "parse_log_pytest"})
    with pytest.raises(InputError, match="no specification for apache/druid version 1"):
        grade_multilingual({**_row(CASES[0]), "version": "1"}, START + END)
