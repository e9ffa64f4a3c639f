"""SWE-bench Multilingual rows: loading, language, selection by repository and language, the
files a prediction may not change, where a row runs and the coverage table."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.swebench import coverage
from pytest_tebench.benchmarks.swebench.adapter import SwebenchAdapter
from pytest_tebench.benchmarks.swebench.multilingual import official_run
from pytest_tebench.benchmarks.swebench.multilingual import rows
from pytest_tebench.benchmarks.swebench.multilingual import runner_files
from pytest_tebench.benchmarks.swebench.multilingual import where
from pytest_tebench.instance.datasets import RawRecord

pytest.importorskip("swebench")

SHA = "7719e73a108c450666613c279bedaed724cd9cc9"
#: Modelled on google__gson-1014 (its eval script cut to the lines that matter).
GSON: dict[str, Any] = {
    "repo": "google/gson",
    "instance_id": "google__gson-1014",
    "base_commit": SHA,
    "patch": "diff --git a/gson/src/main/java/X.java b/gson/src/main/java/X.java\n",
    "test_patch": "diff --git a/gson/src/test/java/XTest.java b/gson/src/test/java/XTest.java\n",
    "problem_statement": "ignored",
    "hints_text": "",
    "created_at": "2017-02-21T22:09:05Z",
    "version": "1014",
    "FAIL_TO_PASS": ["com.google.gson.XTest#testA"],
    "PASS_TO_PASS": [],
    "log_parser": "parse_log_maven",
    "eval_type": "pass_and_fail",
    "image": "swebench/sweb.eval.x86_64.google_1776_gson-1014:latest",
    "eval_script": "#!/bin/bash\nset -uxo pipefail\ncd /testbed\n",
}
JQ: dict[str, Any] = {
    **GSON,
    "repo": "jqlang/jq",
    "instance_id": "jqlang__jq-2235",
    "version": "2235",
    "log_parser": "parse_log_jq",
    "FAIL_TO_PASS": '["tests/jqtest"]',
    "image": "swebench/sweb.eval.x86_64.jqlang_1776_jq-2235:latest",
}
LITE: dict[str, Any] = {
    "instance_id": "psf__requests-1142",
    "repo": "psf/requests",
    "version": "1.1",
    "base_commit": SHA,
    "patch": "diff --git a/x b/x\n",
    "test_patch": "diff --git a/test_requests.py b/test_requests.py\n",
    "FAIL_TO_PASS": ["test_requests.py::T::test_new"],
    "PASS_TO_PASS": [],
}


def _load(*data: dict[str, Any]) -> list[Any]:
    return SwebenchAdapter().load_instances(
        [RawRecord(row, f"rows.jsonl:{n}") for n, row in enumerate(data, 1)]
    )


def test_multilingual_rows_carry_their_language_eval_type_image_and_script() -> None:
    gson, jq, lite = _load(GSON, JQ, LITE)
    assert gson.problem is None and isinstance(gson.payload, rows.MultilingualInstance)
    assert gson.payload.language == "java" and jq.payload.language == "c"
    assert gson.payload.eval_type == "pass_and_fail"
    assert gson.payload.image == GSON["image"] and gson.payload.eval_script == GSON["eval_script"]
    assert jq.payload.fail_to_pass == ("tests/jqtest",)
    assert gson.labels == ("google_gson_1014", "lang_java")
    assert jq.labels == ("jqlang_jq_2235", "lang_c")
    # Lite and Verified rows are what they were: same payload type, same labels
    assert type(lite.payload).__name__ == "SwebenchInstance" and lite.labels == ("psf_requests_1_1",)


@pytest.mark.parametrize(
    ("parser", "language"),
    [
        ("parse_log_maven", "java"), ("parse_log_gradle_custom", "java"), ("parse_log_ant", "java"),
        ("parse_log_cargo", "rust"), ("parse_log_gotest", "go"), ("parse_log_phpunit", "php"),
        ("parse_log_rspec_transformed_json", "ruby"), ("parse_log_ruby_unit", "ruby"),
        ("parse_log_jekyll", "ruby"), ("parse_log_karma", "javascript"), ("parse_log_jest", "javascript"),
        ("parse_log_tap", "javascript"), ("parse_log_vitest", "javascript"),
        ("parse_log_immutable_js", "javascript"), ("parse_log_redis", "c"), ("parse_log_jq", "c"),
        ("parse_log_micropython_test", "c"), ("parse_log_googletest", "cpp"), ("parse_log_doctest", "cpp"),
        ("parse_log_pytest", None), ("parse_log_nonesuch", None),
    ],
)  # fmt: skip
def test_the_language_is_the_module_of_the_swebench_parser(parser: str, language: str | None) -> None:
    assert rows.language_of(parser) == language


def test_the_language_comes_from_the_repository_when_the_row_names_no_parser() -> None:
    (gson,) = _load({k: v for k, v in GSON.items() if k != "log_parser"})
    assert gson.payload.language == "java" and gson.payload.log_parser is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"eval_type": "sometimes"}, "'eval_type' must be one of"),
        ({"log_parser": "parse_log_nonesuch"}, "no log parser 'parse_log_nonesuch'"),
        ({"eval_script": 3}, "'eval_script' must be a string"),
    ],
)
def test_bad_multilingual_rows_become_problems(change: dict[str, Any], message: str) -> None:
    (instance,) = _load({**GSON, **change})
    assert instance.problem is not None and message in instance.problem and "rows.jsonl:1" in instance.problem


def test_select_multilingual_items_by_repository_and_by_language(pytester: pytest.Pytester) -> None:
    dataset = pytester.path / "multilingual.jsonl"
    dataset.write_text("".join(json.dumps(row) + "\n" for row in (GSON, JQ)), encoding="utf-8")
    common = [
        "--tebench-benchmark=swebench",
        f"--tebench-dataset={dataset}",
        "--tebench-predictions=gold",
        f"--tebench-cache-dir={pytester.path / 'cache'}",
        "--collect-only",
        "-q",
        "--strict-markers",
        "-p",
        "no:cacheprovider",
    ]
    by_language = pytester.runpytest(*common, "-m", "lang_java")
    assert _collected(by_language.outlines) == ["google__gson-1014[gold]"]
    by_repository = pytester.runpytest(*common, "-k", "jqlang_jq")
    assert _collected(by_repository.outlines) == ["jqlang__jq-2235[gold]"]
    by_keyword = pytester.runpytest(*common, "-k", "lang_c")
    assert _collected(by_keyword.outlines) == ["jqlang__jq-2235[gold]"]


def _collected(lines: list[str]) -> list[str]:
    return [line.rsplit("::", 1)[-1] for line in lines if "::" in line]


def _diff(*paths: str, mode: str = "") -> str:
    header = f"new file mode {mode}\n" if mode else ""
    return "".join(
        f"diff --git a/{p} b/{p}\n{header}--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-a\n+b\n" for p in paths
    )


@pytest.mark.parametrize(
    ("language", "path", "rule"),
    [
        ("java", "gson/src/test/java/XTest.java", "test-patch"),
        ("java", ".mvn/maven.config", "runner-config"),
        ("java", "gson/src/test/resources/junit-platform.properties", "runner-config"),
        ("java", "core/src/test/resources/META-INF/services/org.junit.platform.launcher.TestExecutionListener",
         "runner-config"),
        ("java", "buildScripts/tests.ant.xml", "runner-config"),
        ("java", "build.gradle", "runner-config"),
        ("rust", ".cargo/config.toml", "runner-config"),
        ("javascript", "karma.conf.js", "runner-config"),
        ("javascript", "packages/x/jest.config.js", "runner-config"),
        ("php", "phpunit.xml.dist", "runner-config"),
        ("ruby", ".rspec", "runner-config"),
        ("c", "tests/test_helper.tcl", "runner-config"),
        ("cpp", "test/gtest/gtest.h", "runner-config"),
        # what a fix may need is the prediction's: dependencies, build files gold patches change
        ("java", "pom.xml", None), ("rust", "Cargo.toml", None), ("go", "go.mod", None),
        ("javascript", "package.json", None), ("c", "Makefile", None),
        ("java", "gson/src/main/java/com/google/gson/Gson.java", None),
    ],
)  # fmt: skip
def test_multilingual_predictions_may_not_touch_the_rows_tests_nor_the_runners_files(
    language: str, path: str, rule: str | None
) -> None:
    found = runner_files.refusals(_diff(path), _diff("gson/src/test/java/XTest.java"), language)
    assert [(r.path, r.rule) for r in found] == ([] if rule is None else [(path, rule)])


def test_links_and_submodules_are_refused_in_every_language() -> None:
    found = runner_files.refusals(_diff("src/lib.c", mode="120000"), "", "c")
    assert [(r.path, r.rule) for r in found] == [("src/lib.c", "link")]


@pytest.mark.parametrize(
    "header",
    [
        "index 0000000..e69de29 120000\n",
        "new file mode 100644\nindex 0000000..e69de29 120000\n",
        "old mode 120000\nnew mode 100644\n",
        "deleted file mode 160000\n",
    ],
    ids=["index-line", "index-line-after-new-file", "from-a-link", "deleted-submodule"],
)
def test_a_link_in_any_mode_line_is_refused(header: str) -> None:
    # GNU patch, the official harness's fallback after git apply, takes an index line's mode as the file's
    patch = (
        f"diff --git a/src/lib.c b/src/lib.c\n{header}--- a/src/lib.c\n+++ b/src/lib.c\n@@ -1 +1 @@\n-a\n+b\n"
    )
    found = runner_files.refusals(patch, "", "c")
    assert [(r.path, r.rule) for r in found] == [("src/lib.c", "link")]


def test_where_a_multilingual_row_runs_and_the_build_hook() -> None:
    assert where.decide("projectlombok/lombok", "java", "build") == where.Decision(
        "unsupported", "projectlombok/lombok (java): " + where.NOT_BUILT_BECAUSE["projectlombok/lombok"]
    )
    official = where.decide("apache/druid", "java", "auto")
    assert official.where == "official" and "org.hyperic:sigar" in str(official.reason)
    assert "no build mode for go rows of x/y" in str(where.decide("x/y", "go", "official").reason)

    class Builder:
        def prepare(self, instance: Any, context: Any) -> Any:
            return None

        def run(self, payload: Any, built: Any, patch: str, context: Any) -> Any:
            return None

    assert where.decide("x/java", "java", "build").where == "unsupported"
    where.register_builder("x/java", Builder())
    try:
        assert where.decide("x/java", "java", "auto") == where.Decision("build", None)
        assert where.decide("x/java", "java", "build") == where.Decision("build", None)
        assert where.decide("x/java", "java", "official") == where.Decision("official", None)
    finally:
        del where.BUILDERS["x/java"]


def test_coverage_lists_multilingual_rows_by_repository_and_language_with_reasons() -> None:
    lite = {**LITE, "environment_setup_commit": SHA}
    entries = coverage.coverage([GSON, JQ, lite], "build")
    assert [(e.repo, e.language, e.where) for e in entries] == [
        ("google/gson", "java", "build"), ("jqlang/jq", "c", "unsupported"),
        ("psf/requests", None, "build"),
    ]  # fmt: skip
    text = coverage.table(entries)
    assert (
        "| google/gson | java | 1 | 1 | 0 | 0 |" in text
        and "| psf/requests | python | 1 | 1 | 0 | 0 |" in text
    )
    assert "| java | 1 | 1 | 0 | 0 |" in text
    assert "- 1: jqlang/jq (c): the repository and its Git submodules come from GitHub" in text
    official = coverage.as_json(coverage.coverage([GSON], "official"), "official")
    assert official["languages"] == {"java": {"build": 0, "official": 1, "unsupported": 0}}
    assert official["entries"][0]["image"] == GSON["image"]


def test_the_official_run_names_the_image_and_test_command_and_refuses_before_any_container(
    tmp_path: Path,
) -> None:
    (gson,) = _load(
        {**GSON, "eval_script": "set -x\n: '>>>>> Start Test Output'\n(mvnd test -Dtest=X) | cat\n"}
    )
    assert official_run.image_of(gson.payload) == GSON["image"]
    assert official_run.image_of(dataclasses.replace(gson.payload, image="")) == GSON["image"]
    assert official_run.test_command(gson.payload.eval_script) == "(mvnd test -Dtest=X) | cat"

    def no_executor(context: Any) -> Any:
        raise AssertionError("a refused prediction starts no container")

    runs = official_run.MultilingualRuns(no_executor, timeout=60, network=False, images="official")
    context = EvalContext(cache_dir=tmp_path, work_dir=tmp_path, repos=None)  # type: ignore[arg-type]
    prepared = official_run.MultilingualPrepared(GSON["image"], {}, None, "java")
    run = runs.run(gson.payload, prepared, _diff(".mvn/jvm.config"), context)
    assert [(r.path, r.rule) for r in run.refusals] == [(".mvn/jvm.config", "runner-config")]
    assert "tests" not in run.timings and run.guard_reason is not None and "java" in run.guard_reason
