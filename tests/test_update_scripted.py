"""Update scoring end to end through the plugin, with the scripted executor of scripted_maven.py
instead of Maven: flaky gold tests, an empty selection, a warm-up that fails and the evidence
kept for it, the network, artifacts published nowhere. Gold's checks on V0 are in
test_gold_check_scripted.py; real Maven runs are in test_demo_update.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from scripted_maven import make_bench
from scripted_maven import run_bench
from scripted_maven import selector
from scripted_maven import steps_seen

from conftest import History


@pytest.fixture
def bench(make_history: Callable[[str], History], pytester: pytest.Pytester) -> dict[str, Any]:
    return make_bench(make_history, pytester)


def test_flaky_gold_tests_are_dropped_and_flagged(pytester: pytest.Pytester, bench: dict[str, Any]) -> None:
    result, report = run_bench(pytester, bench)
    records = {r["instance_id"]: r for r in report["results"]}
    one = records["calc__one"]["update"]
    # addsFlaky passed in gold's first run and failed in the second: flaky, out of every selection
    assert one["gold"]["flaky"] == ["p.CalcTest#addsFlaky"]
    assert one["gold"]["selection"] == ["p.CalcTest#adds"]
    assert one["selection"] == ["p.CalcTest#adds"] and one["s_exec"] == 1.0
    assert one["maven_version"] == "3.9.9"
    summary = report["summary"]["m"]
    assert summary["flaky_gold"] == ["calc__one"]
    assert summary["maven_versions"] == ["3.9.9"]
    # the unlabeled instance has its own row in the per-label tables
    assert summary["identification"]["by_label"]["unlabeled"]["items"] == 1
    result.stdout.fnmatch_lines(
        [
            "*builds ran on: scripted with Maven 3.9.9*",
            "*flaky gold tests were dropped from the selection of 1 instance(s): calc__one*",
            "*Unlabeled*",
        ]
    )


def test_one_gold_run_finds_no_flakiness(pytester: pytest.Pytester, bench: dict[str, Any]) -> None:
    _, report = run_bench(pytester, bench, "--tebench-gold-runs=1")
    one = next(r for r in report["results"] if r["instance_id"] == "calc__one")["update"]
    assert one["gold"]["flaky"] == [] and "p.CalcTest#addsFlaky" in one["gold"]["selection"]


def test_a_prediction_leaving_no_test_to_run_is_not_executable(
    pytester: pytest.Pytester, bench: dict[str, Any]
) -> None:
    # calc__two's gold only adds CalcV2Test#addsLongs; the prediction adds an import: nothing of
    # U exists in its tree, so no test runs on the changed code
    _, report = run_bench(pytester, bench)
    two = next(r for r in report["results"] if r["instance_id"] == "calc__two")
    assert two["status"] == "evaluated"
    update = two["update"]
    assert update["status"] == "no_tests" and update["selection"] == []
    assert (update["s_exec"], update["s_update"]) == (0.0, 0.0)


@pytest.mark.parametrize("keep", [True, False])
def test_a_failed_warm_up_keeps_its_evidence(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch, keep: bool
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "broken")
    result, report = run_bench(pytester, bench, *(["--tebench-keep-workspaces"] if keep else []))
    result.assert_outcomes(errors=2)
    record = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert record["status"] == "error"
    assert record["error"].startswith(
        "cannot prepare the Maven repository for this project: warm-up test-compile"
    )
    # the build log's tail, and what the item spent before it failed
    assert "Could not transfer artifact org.apache:commons-parent:pom:70" in record["log_tail"]
    assert {"repository", "workspace", "offline_probe", "warmup", "total"} <= set(record["timings"])
    assert record["timings"]["warmup"] >= 0
    workspaces = pytester.path / "cache" / "workspaces"
    if keep:
        assert Path(record["workspace"]).is_dir() and (Path(record["workspace"]) / "pom.xml").is_file()
    else:
        assert "workspace" not in record and not any(workspaces.iterdir())
    out = result.stdout.str()
    assert "During handling of the above exception" not in out
    # the message once per item's error section (the short summary may repeat it, width permitting)
    sections = out.split("short test summary info")[0]
    assert sections.count("cannot prepare the Maven repository") == 2


def test_gold_needing_an_external_host_is_unsupported_unless_the_network_is_allowed(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "unknown-host")
    result, report = run_bench(pytester, bench)
    result.assert_outcomes(skipped=2)
    one = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert one["status"] == "unsupported_environment"
    assert one["error"] == (
        "gold's selected tests need an external host: jsoup.org (p.CalcTest#adds); "
        "the sandbox has no network (evaluation's --tebench-network, tebench build's --network, lets the "
        "tests use it)"
    )
    assert report["tests_network"] is False
    # no rerun by class or module: a host is not a selection's doing
    assert all(selector(step["argv"]) != "p.CalcTest" for step in steps_seen(pytester))
    # with the network allowed, gold and predictions run with it, and the instance is scored
    result, report = run_bench(pytester, bench, "--tebench-network")
    result.assert_outcomes(passed=2)
    assert report["tests_network"] is True
    launched = steps_seen(pytester)[-1]
    assert launched["test_network"] is True


def test_gold_running_out_of_the_build_s_memory_is_unsupported_not_invalid(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "out-of-memory")
    result, report = run_bench(pytester, bench)
    result.assert_outcomes(skipped=2)
    one = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert one["status"] == "unsupported_environment"
    assert one["error"] == (
        "gold's selected tests ran into what this build's environment gives (memory): p.CalcTest#adds error: Java heap space; "
        "--tebench-docker-memory gives a Docker build more"
    )
    # gold twice (addsFlaky is flaky), again without it; then no rerun by class or module and no
    # other JDK: a limit is neither a selection's doing nor a JDK's
    assert [selector(step["argv"]) for step in steps_seen(pytester)][:4] == [
        "p.CalcTest#adds+adds[*]+addsFlaky+addsFlaky[*]",
        "p.CalcTest#adds+adds[*]+addsFlaky+addsFlaky[*]",
        "p.CalcTest#adds+adds[*]",
        "p.CalcV2Test#addsLongs+addsLongs[*]",
    ]


def test_a_build_needing_artifacts_no_repository_has_is_named_unbuildable(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "absent")
    result, report = run_bench(pytester, bench)
    result.assert_outcomes(skipped=2)  # as SWE-bench's unsupported environments: neither scored nor failed
    record = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert record["status"] == "unsupported_environment"
    assert record["error"] == (
        "unbuildable here: the build needs artifacts published in no repository reachable from here: "
        "org.apache.commons:commons-statistics-bom:pom:1.3"
    )


def test_an_artifact_published_nowhere_makes_the_instance_unsupported(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "unpublished")
    result, report = run_bench(pytester, bench)
    # a fact about the instances' environment: skipped, never a score and never a harness error
    result.assert_outcomes(skipped=2)
    record = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert record["status"] == "unsupported_environment"
    assert record["error"] == (
        "unbuildable here: the build needs artifacts published in no repository reachable from here: "
        "org.x:parent:pom:2-SNAPSHOT"
    )
    assert report["summary"]["m"]["counts"]["unsupported"] == 2
