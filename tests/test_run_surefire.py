"""Surefire report parsing: invocations fold into methods, classes come from ``classname``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_tebench.errors import HarnessError
from pytest_tebench.run.maven.surefire import ERROR
from pytest_tebench.run.maven.surefire import FAILED
from pytest_tebench.run.maven.surefire import NOT_RUN
from pytest_tebench.run.maven.surefire import PASSED
from pytest_tebench.run.maven.surefire import SKIPPED
from pytest_tebench.run.maven.surefire import CaseResult
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.surefire import aggregate
from pytest_tebench.run.maven.surefire import check_against_console
from pytest_tebench.run.maven.surefire import compiled_names
from pytest_tebench.run.maven.surefire import method_of
from pytest_tebench.run.maven.surefire import outcomes_for
from pytest_tebench.run.maven.surefire import read_reports

PKG = "org.tebench.textkit"

# Shaped like Surefire 3.2.5's real output: the outer class's own methods sit in the file of
# its @Nested class, and that outer file reports tests="0".
NESTED_FILE = f"""<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="{PKG}.SlugTest$Blank" time="0.016" tests="4" errors="0" skipped="0" failures="1">
  <testcase name="slugs(String, String)[1]" classname="{PKG}.SlugTest" time="0.171"/>
  <testcase name="slugs(String, String)[2]" classname="{PKG}.SlugTest" time="0.008">
    <failure message="expected: &lt;a-b&gt; but was: &lt;a--b&gt;" type="org.opentest4j.AssertionFailedError"><![CDATA[trace
]]></failure>
  </testcase>
  <testcase name="lowercases" classname="{PKG}.SlugTest" time="0.008"/>
  <testcase name="nullGivesEmpty" classname="{PKG}.SlugTest$Blank" time="0.001"/>
</testsuite>
"""
OUTER_FILE = f"""<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="{PKG}.SlugTest" time="0.51" tests="0" errors="0" skipped="0" failures="0">
</testsuite>
"""
ODD_FILE = f"""<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="{PKG}.OddTest" tests="7" errors="1" skipped="2" failures="0">
  <testcase name="errors" classname="{PKG}.OddTest">
    <error type="java.lang.IllegalStateException"><![CDATA[java.lang.IllegalStateException: boom
\tat org.tebench.textkit.OddTest.errors(OddTest.java:22)
]]></error>
  </testcase>
  <testcase name="repeated" classname="{PKG}.OddTest"/>
  <testcase name="repeated" classname="{PKG}.OddTest"/>
  <testcase name="skipped" classname="{PKG}.OddTest"><skipped message="not today"/></testcase>
  <testcase name="mixed()[1]" classname="{PKG}.OddTest"><skipped message="assumption"/></testcase>
  <testcase name="mixed()[2]" classname="{PKG}.OddTest"/>
  <testcase name="junit4Style[0]" classname="{PKG}.OddTest"/>
</testsuite>
"""
BROKEN_FILE = f"""<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="{PKG}.OddTest$Broken" tests="1" errors="1" skipped="0" failures="0">
  <testcase name="" classname="{PKG}.OddTest$Broken">
    <error message="setup broke" type="java.lang.IllegalStateException"/>
  </testcase>
</testsuite>
"""


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    for name, text in (
        (f"TEST-{PKG}.SlugTest$Blank.xml", NESTED_FILE),
        (f"TEST-{PKG}.SlugTest.xml", OUTER_FILE),
        (f"TEST-{PKG}.OddTest.xml", ODD_FILE),
        (f"TEST-{PKG}.OddTest$Broken.xml", BROKEN_FILE),
        # Not a TEST-*.xml report: must be ignored.
        (f"{PKG}.SlugTest.txt", "plain text summary"),
    ):
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("name", "method"),
    [
        ("inside(int)[1]", "inside"),
        ("slugs(String, String)[2]", "slugs"),
        ("m{int}[1]", "m"),
        ("testFoo[case 1]", "testFoo"),
        ("repeated", "repeated"),
        ("$weird_name1()", "$weird_name1"),
        ("", ""),
        ("[1] 2, 3", ""),
    ],
)
def test_method_of(name: str, method: str) -> None:
    assert method_of(name) == method


def test_read_reports_uses_classname_not_file(reports: Path) -> None:
    cases = read_reports(reports)
    # 4 + 0 + 7 + 1 test cases in the four TEST-*.xml files.
    assert len(cases) == 12
    in_nested_file = [c for c in cases if c.name == "lowercases"]
    assert in_nested_file == [CaseResult(f"{PKG}.SlugTest", "lowercases", PASSED, "")]


def test_read_reports_missing_dir(tmp_path: Path) -> None:
    assert read_reports(tmp_path / "absent") == []


def test_unreadable_report_is_harness_error(tmp_path: Path) -> None:
    (tmp_path / "TEST-x.xml").write_text("<testsuite><testcase", encoding="utf-8")
    with pytest.raises(HarnessError, match="unreadable Surefire report"):
        read_reports(tmp_path)


def test_aggregate_invocations(reports: Path) -> None:
    outcomes = aggregate(read_reports(reports))
    slugs = outcomes[TestId(f"{PKG}.SlugTest", "slugs")]
    # Invocation [1] passed, [2] failed -> the method failed, with [2]'s message.
    assert (slugs.status, slugs.invocations, slugs.message) == (FAILED, 2, "expected: <a-b> but was: <a--b>")
    repeated = outcomes[TestId(f"{PKG}.OddTest", "repeated")]
    assert (repeated.status, repeated.invocations) == (PASSED, 2)
    # One skipped and one passed invocation: the method passed.
    mixed = outcomes[TestId(f"{PKG}.OddTest", "mixed")]
    assert (mixed.status, mixed.invocations) == (PASSED, 2)
    # No message attribute: the first line of the stack trace stands in.
    errors = outcomes[TestId(f"{PKG}.OddTest", "errors")]
    assert (errors.status, errors.message) == (ERROR, "java.lang.IllegalStateException: boom")
    assert outcomes[TestId(f"{PKG}.OddTest", "skipped")].status == SKIPPED
    assert outcomes[TestId(f"{PKG}.OddTest", "junit4Style")].status == PASSED
    # The class-level <testcase name=""> is not a method.
    assert all(test.method for test in outcomes)


def test_outcomes_for_selection(reports: Path) -> None:
    selection = [
        TestId(f"{PKG}.SlugTest", "lowercases"),
        TestId(f"{PKG}.SlugTest$Blank", "nullGivesEmpty"),
        TestId(f"{PKG}.SlugTest", "absent"),
        TestId(f"{PKG}.Nope", "x"),
        TestId(f"{PKG}.OddTest$Broken", "never"),
        TestId(f"{PKG}.OddTest$Broken$Inner", "deeper"),
        TestId(f"{PKG}.SlugTest", "lowercases"),  # duplicates collapse
    ]
    outcomes = outcomes_for(selection, read_reports(reports))
    assert list(outcomes) == sorted(set(selection))
    assert outcomes[TestId(f"{PKG}.SlugTest", "lowercases")].status == PASSED
    assert outcomes[TestId(f"{PKG}.SlugTest$Blank", "nullGivesEmpty")].status == PASSED
    assert outcomes[TestId(f"{PKG}.SlugTest", "absent")].status == NOT_RUN
    assert outcomes[TestId(f"{PKG}.Nope", "x")].status == NOT_RUN
    broken = outcomes[TestId(f"{PKG}.OddTest$Broken", "never")]
    assert (broken.status, broken.message) == (ERROR, "class-level failure: setup broke")
    # A class nested in the broken one fails with it.
    assert outcomes[TestId(f"{PKG}.OddTest$Broken$Inner", "deeper")].status == ERROR


def test_test_id_parse_and_str() -> None:
    test = TestId.parse("pkg.Outer$Inner#m")
    assert test == TestId("pkg.Outer$Inner", "m")
    assert str(test) == "pkg.Outer$Inner#m"
    with pytest.raises(ValueError, match="not a test id"):
        TestId.parse("pkg.Outer")


# Maven 3.9 / Surefire 3.2.5 console of a real run (mini-maven with a nested class and a test
# printing a fake summary line, which redirectTestOutputToFile kept off the console).
CONSOLE = """\
[INFO]  T E S T S
[INFO] -------------------------------------------------------
[INFO] Running org.tebench.textkit.SlugTest
[INFO] Tests run: 5, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 1.894 s -- in org.tebench.textkit.SlugTest
[INFO] Running org.tebench.textkit.ClampTest
[INFO] Running org.tebench.textkit.ClampTest$Inner
[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.340 s <<< FAILURE! -- in org.tebench.textkit.ClampTest$Inner
[ERROR] org.tebench.textkit.ClampTest$Inner.innerFails -- Time elapsed: 0.246 s <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <1> but was: <3>

[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.621 s <<< FAILURE! -- in org.tebench.textkit.ClampTest
[ERROR] org.tebench.textkit.ClampTest.fails -- Time elapsed: 0.148 s <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <1> but was: <2>

[INFO] Results:
[ERROR] Tests run: 9, Failures: 2, Errors: 0, Skipped: 0
"""


def test_reports_rewritten_by_a_test_are_caught_by_the_console() -> None:
    # issue 8: a test that runs later rewrites earlier classes' reports to show passes
    from pytest_tebench.run.maven.surefire import CaseResult
    from pytest_tebench.run.maven.surefire import check_against_console

    pkg = "org.tebench.textkit"
    tests = [
        TestId(f"{pkg}.ClampTest", "fails"),
        TestId(f"{pkg}.ClampTest", "belowLow"),
        TestId(f"{pkg}.ClampTest$Inner", "innerFails"),
        TestId(f"{pkg}.ClampTest$Inner", "innerPasses"),
        TestId(f"{pkg}.SlugTest", "lowercases"),
        TestId(f"{pkg}.GhostTest", "neverRan"),
    ]
    forged = [CaseResult(t.class_name, t.method, PASSED, "") for t in tests]
    outcomes = outcomes_for(tests, forged)
    checked = check_against_console(outcomes, forged, CONSOLE)
    assert {str(t): o.status for t, o in checked.items()} == {
        f"{pkg}.ClampTest#fails": "failed",
        f"{pkg}.ClampTest#belowLow": "passed",
        f"{pkg}.ClampTest$Inner#innerFails": "failed",
        f"{pkg}.ClampTest$Inner#innerPasses": "passed",
        f"{pkg}.SlugTest#lowercases": "passed",
        f"{pkg}.GhostTest#neverRan": "not_run",
    }
    # honest reports agree with the console: nothing changes
    honest = [
        CaseResult(
            t.class_name,
            t.method,
            "failed" if t.method.endswith("Fails") or t.method == "fails" else PASSED,
            "",
        )
        for t in tests[:5]
    ]
    assert check_against_console(outcomes_for(tests[:5], honest), honest, CONSOLE) == outcomes_for(
        tests[:5], honest
    )
    # without the console's test section (no banner) only the failure lines count
    assert check_against_console(outcomes, forged, "")[tests[5]].status == PASSED


def test_a_class_count_the_reports_do_not_match_fails_the_class_passes() -> None:
    from pytest_tebench.run.maven.surefire import CaseResult
    from pytest_tebench.run.maven.surefire import check_against_console

    tests = [TestId("p.ATest", "a"), TestId("p.ATest", "b")]
    forged = [CaseResult("p.ATest", t.method, PASSED, "") for t in tests]
    console = (
        "[INFO]  T E S T S\n[ERROR] Tests run: 2, Failures: 0, Errors: 1, Skipped: 0, "
        "Time elapsed: 0.1 s <<< FAILURE! - in p.ATest\n"
    )
    checked = check_against_console(outcomes_for(tests, forged), forged, console)
    assert [o.status for o in checked.values()] == [FAILED, FAILED]


def test_a_flaky_class_line_still_counts_as_a_console_record() -> None:
    from pytest_tebench.run.maven.surefire import CaseResult
    from pytest_tebench.run.maven.surefire import check_against_console

    test = TestId("p.ATest", "a")
    cases = [CaseResult("p.ATest", "a", PASSED, "")]
    console = (
        "[INFO]  T E S T S\n[WARNING] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0, Flakes: 1, "
        "Time elapsed: 0.1 s -- in p.ATest\n"
    )
    assert check_against_console(outcomes_for([test], cases), cases, console)[test].status == PASSED


def test_surefire_before_2_19_names_the_class_on_its_running_line() -> None:
    """Surefire 2.12.4 (Maven 3.8's default binding) leaves the class out of its count line."""
    from pytest_tebench.run.maven.surefire import CaseResult
    from pytest_tebench.run.maven.surefire import check_against_console

    tests = [TestId("p.ATest", "a"), TestId("p.BTest", "b"), TestId("p.CTest", "c")]
    cases = [CaseResult(t.class_name, t.method, PASSED, "") for t in tests]
    console = (
        "-------------------------------------------------------\n T E S T S\n"
        "-------------------------------------------------------\n"
        "Running p.ATest\nTests run: 1, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.428 sec\n"
        "Running p.BTest\nPicked up JAVA_TOOL_OPTIONS: -Xss1m\n"
        "Tests run: 1, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.1 sec <<< FAILURE!\n"
        "\nResults :\n\nTests run: 3, Failures: 1, Errors: 0, Skipped: 0\n"
    )
    checked = check_against_console(outcomes_for(tests, cases), cases, console)
    # A is confirmed; B's forged pass is caught by the count; C never ran according to the console
    assert [o.status for o in checked.values()] == [PASSED, FAILED, "not_run"]


# JDK 8's words for a chart test (jfreechart b31740fd, 2026-12-01, Debian's JDK 8 in the image
# before its accessibility bridge was commented out): the first test to touch the class gets the
# initializer's own error; every later one only "Could not initialize class".
FIRST_TOUCH = """java.lang.ExceptionInInitializerError
\tat org.jfree.chart.ChartFactory.createPieChart(ChartFactory.java:214)
\tat org.jfree.chart.AreaChartTest.setUp(AreaChartTest.java:80)
Caused by: java.awt.AWTError: Assistive Technology not found: org.GNOME.Accessibility.AtkWrapper
\tat java.awt.Toolkit.loadAssistiveTechnologies(Toolkit.java:807)
\tat javax.swing.UIManager.getColor(UIManager.java:696)
\tat org.jfree.chart.JFreeChart.<clinit>(JFreeChart.java:262)
\t... 30 more"""
LATER_TOUCH = "java.lang.NoClassDefFoundError: Could not initialize class org.jfree.chart.JFreeChart\n\tat org.jfree.chart.PieChartTest.setUp(PieChartTest.java:70)"


def test_could_not_initialize_names_the_root_cause_another_test_saw() -> None:
    from pytest_tebench.run.maven.limits import limit_needs

    cases = [
        CaseResult("org.jfree.chart.AreaChartTest", "testDrawWithNullInfo", ERROR, "", FIRST_TOUCH),
        CaseResult(
            "org.jfree.chart.PieChartTest",
            "testReplaceDataset",
            ERROR,
            "Could not initialize class org.jfree.chart.JFreeChart",
            LATER_TOUCH,
        ),
    ]
    selected = TestId("org.jfree.chart.PieChartTest", "testReplaceDataset")
    (outcome,) = outcomes_for([selected], cases).values()
    assert outcome.message == (
        "Could not initialize class org.jfree.chart.JFreeChart (org.jfree.chart.JFreeChart's static "
        "initializer failed in org.jfree.chart.AreaChartTest#testDrawWithNullInfo: java.awt.AWTError: "
        "Assistive Technology not found: org.GNOME.Accessibility.AtkWrapper)"
    )
    assert outcome.trace.startswith(LATER_TOUCH) and "[root cause]" in outcome.trace
    # the same with a missing native library as the root cause: the limits reader sees it
    linked = FIRST_TOUCH.replace(
        "java.awt.AWTError: Assistive Technology not found: org.GNOME.Accessibility.AtkWrapper",
        "java.lang.UnsatisfiedLinkError: /usr/lib/jvm/java-8/jre/lib/amd64/libfontmanager.so: "
        "libfreetype.so.6: cannot open shared object file: No such file or directory",
    )
    (unlinked,) = outcomes_for([selected], [replace(cases[0], trace=linked), cases[1]]).values()
    assert limit_needs([unlinked]) == {str(selected): ["native library libfreetype.so.6"]}
    assert limit_needs([outcomes_for([selected], cases[1:])[selected]]) == {}  # nothing to add alone
    # where the test's own trace carries the cause (later JDKs), nothing is added
    own = replace(
        cases[1],
        trace=LATER_TOUCH + "\nCaused by: java.lang.ExceptionInInitializerError: Exception java.awt.AWTError",
    )
    assert outcomes_for([selected], [cases[0], own])[selected].message == own.message


def test_compiled_names_of_a_name_read_in_another_encoding() -> None:
    # U+00DC is C3 9C in UTF-8: ISO-8859-1 reads U+00C3 U+009C, and javac drops the
    # identifier-ignorable U+009C; cp1252 reads U+00C3 U+0153
    assert compiled_names("probe\u00dcnicode") == ("probe\u00c3nicode", "probe\u00c3\u0153nicode")
    assert compiled_names("plainAscii") == ()
    # U+00E9 is C3 A9: both encodings read U+00C3 U+00A9, one name
    assert compiled_names("caf\u00e9") == ("caf\u00c3\u00a9",)
    # U+0441 is D1 81: ISO-8859-1 reads U+00D1 and the dropped U+0081; 81 is undefined in cp1252,
    # whose javac would not compile the name, so it has no cp1252 reading
    assert compiled_names("x\u0441") == ("x\u00d1",)


# As Surefire 2.22.2 wrote it on commons-collections 26b0f41a (2022), whose compiler reads test
# sources as ISO-8859-1 (commons-parent's commons.encoding): the prediction's UTF-8 source named
# the method probe\u00dcnicode, and its string literal came out 10 characters long
MISREAD_FILE = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="org.apache.commons.collections4.MapUtilsTest" time="0.241" tests="2" errors="0" skipped="0" failures="1">
  <testcase name="tebenchProbe\u00c3nicode" classname="org.apache.commons.collections4.MapUtilsTest" time="0.006">
    <failure message="source encoding: 10" type="java.lang.AssertionError">java.lang.AssertionError: source encoding: 10
\tat org.apache.commons.collections4.MapUtilsTest.tebenchProbe\u00c3nicode(MapUtilsTest.java:1321)
</failure>
  </testcase>
  <testcase name="testGetString" classname="org.apache.commons.collections4.MapUtilsTest" time="0.001"/>
</testsuite>
"""


def test_a_method_compiled_under_another_name_is_read_by_it(tmp_path: Path) -> None:
    (tmp_path / "TEST-org.apache.commons.collections4.MapUtilsTest.xml").write_text(
        MISREAD_FILE, encoding="utf-8"
    )
    cls = "org.apache.commons.collections4.MapUtilsTest"
    probe, plain = TestId(cls, "tebenchProbe\u00dcnicode"), TestId(cls, "testGetString")
    cases = read_reports(tmp_path)
    outcomes = outcomes_for([probe, plain], cases)
    assert outcomes[probe].status == FAILED and outcomes[probe].invocations == 1
    assert outcomes[probe].message == (
        "source encoding: 10 (compiled as tebenchProbe\u00c3nicode: the build reads this test source "
        "in another encoding than UTF-8)"
    )
    assert outcomes[plain].status == PASSED and outcomes[plain].message == ""
    # a passing report of the compiled name: passed, and the note is the message
    passing = [replace(case, status=PASSED, message="", trace="") for case in cases]
    assert outcomes_for([probe], passing)[probe].status == PASSED
    assert outcomes_for([probe], passing)[probe].message.startswith("(compiled as tebenchProbe\u00c3nicode:")
    # the console names the compiled name failing: a forged passing report is caught (a console
    # line alone, without the test section's counts, which would catch it on their own)
    console = f"[ERROR] tebenchProbe\u00c3nicode({cls})  Time elapsed: 0.04 s  <<< FAILURE!\n"
    checked = check_against_console(outcomes_for([probe], passing), passing, console)
    assert checked[probe].status == FAILED
    assert checked[probe].message == "the Maven console reports this test failing"
    # without a report of either name it stays not run
    assert outcomes_for([probe], cases[1:])[probe].status == NOT_RUN
