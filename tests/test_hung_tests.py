"""When a prediction's timed-out test phase is its tests' doing (scored) and when it is not."""

from __future__ import annotations

from typing import Any

from pytest_tebench.benchmarks.tebench.update import hung_tests


def gold_run(*launches: tuple[str, float, bool]) -> dict[str, Any]:
    return {"steps": [{"name": n, "duration": d, "timed_out": t} for n, d, t in launches]}


def test_a_test_phase_past_the_limit_is_the_tests_doing_when_gold_ran_well_within_it() -> None:
    gold = gold_run(("prebuild", 80.0, False), ("compile+test", 12.5, False), ("compile+test", 9.0, False))
    why = hung_tests("timeout:test", gold, 900.0)
    assert why == (
        "the prediction's test phase ran past its 900 s limit, while gold's longest test launch of "
        "this instance took 12.5 s: the tests that had not reported score as failing"
    )
    # the production compile (prebuild) is no test launch: 80 s of it does not count
    assert hung_tests("timeout:test", gold, 37.5)  # 12.5 s is a third of 37.5 s


def test_a_timeout_stays_unscored_near_gold_s_own_time_or_outside_the_test_phase() -> None:
    gold = gold_run(("compile+test", 12.5, False))
    assert hung_tests("timeout:test", gold, 37.4) == ""  # gold took more than a third of the limit
    assert hung_tests("timeout:test-compile", gold, 900.0) == ""  # the tests never ran
    assert hung_tests("timeout:test", gold_run(), 900.0) == ""  # nothing known of gold's launches
    # a launch of gold that fell back and compiled again counts; so does its split test step
    slow_again = gold_run(("compile+test", 5.0, False), ("compile+test-again", 400.0, False))
    assert hung_tests("timeout:test", slow_again, 900.0) == ""
    assert hung_tests("timeout:test", gold_run(("test", 400.0, False)), 900.0) == ""
