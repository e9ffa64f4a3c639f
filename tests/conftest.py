"""Shared fixtures: throwaway git histories, and the CI rule for Maven, Docker and browser tests.

Tests marked ``maven``, ``docker`` or ``browser`` skip on a developer machine that lacks the tool, but in
CI (``CI=true``) a missing tool is a failure: those tests must really run there.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.run.executor import Executor
from pytest_tebench.run.maven.dist import DEFAULT_MAVEN
from pytest_tebench.run.maven.offline_run import run_warmed
from pytest_tebench.run.maven.prebuilt import Prebuilt
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.testrun import SelectionRun
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.gitcmd import git_text

# the fixture projects' own tests (tests/fixtures/runner-scripts/*/tests) run inside their sandboxes,
# never in this session
collect_ignore_glob = ["fixtures/*"]

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _require(what: str, ok: bool) -> None:
    if ok:
        return
    if IN_CI:
        pytest.fail(f"{what} is required in CI but is not available", pytrace=False)
    pytest.skip(f"{what} is not available")


@pytest.fixture(autouse=True)
def _tool_requirements(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("maven"):
        _require("Maven and a JDK", bool(shutil.which("mvn")) and bool(shutil.which("java")))
    if request.node.get_closest_marker("docker"):
        ok = (
            bool(shutil.which("docker"))
            and subprocess.run(["docker", "info"], capture_output=True, check=False, timeout=60).returncode
            == 0
        )
        _require("a running Docker engine", ok)
    if request.node.get_closest_marker("dask"):
        _require(
            "Dask (pip install 'pytest-tebench[dask]')", importlib.util.find_spec("distributed") is not None
        )
    if request.node.get_closest_marker("browser"):
        ok = chromium_path() is not None and importlib.util.find_spec("playwright") is not None
        _require("Chromium and playwright (scripts/ensure-browser)", ok)


def chromium_path() -> str | None:
    """The headless browser of the browser tests: $TEBENCH_CHROMIUM, else Debian's chromium."""
    return os.environ.get("TEBENCH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


Files = Mapping[str, str | bytes | None]  # path -> content; None deletes the file


class History:
    """A git repository built commit by commit from file dictionaries."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.commits: list[str] = []
        path.mkdir(parents=True, exist_ok=True)
        git(path, "init", "--quiet", "--initial-branch=main")

    def commit(self, files: Files, message: str = "change", *, renames: Mapping[str, str] = {}) -> str:
        for old, new in renames.items():
            (self.path / new).parent.mkdir(parents=True, exist_ok=True)
            git(self.path, "mv", old, new)
        for rel, content in files.items():
            target = self.path / rel
            if content is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
        git(self.path, "add", "--all")
        git(self.path, "commit", "--quiet", "--allow-empty", "-m", message)
        sha = git_text(self.path, "rev-parse", "HEAD").strip()
        self.commits.append(sha)
        return sha

    def instance_row(
        self, v1: str, v0: str, *, instance_id: str, repo: str, labels: list[str]
    ) -> dict[str, object]:
        """A TEBench row for the commit v1 -> v0, split into source and test patches."""
        from pytest_tebench.workspace.layout import is_test_path

        names = git_text(self.path, "diff", "--name-only", "--no-renames", v1, v0).split()
        tests = [n for n in names if is_test_path(n)]
        others = [n for n in names if not is_test_path(n)]

        def diff(paths: list[str]) -> str:
            if not paths:
                return ""
            return git_text(self.path, "diff", "--binary", "--full-index", v1, v0, "--", *paths)

        return {
            "instance_id": instance_id,
            "project": repo.split("/")[1],
            "repo": repo,
            "v_minus_1_commit": v1,
            "v0_commit": v0,
            "labels": labels,
            "source_patch": diff(others),
            "test_patch": diff(tests),
        }


@pytest.fixture
def make_history(tmp_path: Path) -> Callable[[str], History]:
    def factory(name: str = "repo") -> History:
        return History(tmp_path / "repos" / name)

    return factory


def write_text(path: Path, text: str) -> None:
    """``text`` at ``path`` (UTF-8), its directories made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def committed_checkout(root: Path, files: Mapping[str, str]) -> Path:
    """A git checkout at ``root`` holding ``files`` (relative path -> text), all committed."""
    for relative, text in files.items():
        write_text(root / relative, text)
    for args in (
        ("init", "-q"),
        ("add", "-A"),
        ("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "v"),
    ):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    return root


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text(
        "".join((json.dumps(r) if not isinstance(r, str) else r) + "\n" for r in rows), encoding="utf-8"
    )
    return path


# -- the demo benchmark, evaluated for real ----------------------------------------------------
PREDICTIONS = Path(__file__).resolve().parent.parent / "predictions"
#: The Maven repository is only a download cache (results never depend on it), so test sessions
#: share one; everything that is scored (gold builds, workspaces) lives in the session's own cache.
TEST_MAVEN_REPO = Path(
    os.environ.get(
        "TEBENCH_TEST_MAVEN_REPO", Path.home() / ".cache" / "pytest-tebench-tests" / "maven-repository"
    )
)


def stored_build_run(
    executor: Executor, workspace: Path, store: Path, tests: list[TestId], *, project: str
) -> SelectionRun:
    """A trusted run of ``tests`` in ``workspace`` on JDK 17 and the default Maven, storing and
    reusing its build in ``store`` (what gold's runs do); the warm-up, when one is needed, must
    succeed."""
    settings = RunSettings(
        maven_repo=TEST_MAVEN_REPO,
        java_version=17,
        maven_version=DEFAULT_MAVEN,
        compile_timeout=300,
        test_timeout=300,
        coverage=False,
        prebuilt=Prebuilt(store, create=True),
    )
    warmed = run_warmed(executor, workspace, tests, settings, project=project)
    assert warmed.warmup is None or warmed.warmup.ok, warmed.warmup.error if warmed.warmup else ""
    return warmed.run


@pytest.fixture(scope="session")
def demo_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache per test session, shared by its xdist workers, so gold is built once per instance."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the workers' basetemps are siblings under the session's
    return base / "tebench-demo-cache"


class DemoRun:
    """Runs the plugin in-process on the demo benchmark and returns the parsed JSON report."""

    def __init__(self, pytester: pytest.Pytester, cache: Path) -> None:
        self.pytester = pytester
        self.cache = cache
        self.count = 0

    def __call__(
        self, predictions: str, *extra: str, count_missing: bool = False
    ) -> tuple[pytest.RunResult, dict[str, object]]:
        """Run the demo; files of a few lines are evaluated on their own (``--tebench-skip-missing``)
        unless ``count_missing`` asks for the default, every instance an item."""
        self.count += 1
        report = self.pytester.path / f"report-{self.count}.json"
        if predictions != "gold":
            # a copy beside the run: collecting a file inside this repository would load its conftest
            copy = self.pytester.path / f"{self.count}-{Path(predictions).name}"
            copy.write_bytes(Path(predictions).read_bytes())
            predictions = str(copy)
        if predictions != "gold" and not count_missing:
            extra = ("--tebench-skip-missing", *extra)
        if not any(arg.startswith("--tebench-executor") for arg in extra):
            # local unless a test asks for Docker (the default, auto, would pick Docker where it runs)
            extra = ("--tebench-executor=local", *extra)
        result = self.pytester.runpytest(
            f"--tebench-predictions={predictions}",
            f"--tebench-cache-dir={self.cache}",
            f"--tebench-maven-repo={TEST_MAVEN_REPO}",
            f"--tebench-report={report}",
            "-p",
            "no:cacheprovider",
            *extra,
        )
        data: dict[str, object] = json.loads(report.read_text()) if report.is_file() else {}
        return result, data


@pytest.fixture
def demo_run(pytester: pytest.Pytester, demo_cache: Path) -> DemoRun:
    return DemoRun(pytester, demo_cache)


def by_instance(report: dict[str, object]) -> dict[str, dict[str, object]]:
    results = report["results"]
    assert isinstance(results, list)
    return {r["instance_id"]: r for r in results}


# -- the arithmetic benchmark, written in a conftest (tests/fixtures/arithmetic_conftest.py) -----
ARITHMETIC_CONFTEST = Path(__file__).parent / "fixtures" / "arithmetic_conftest.py"
QUESTIONS = [
    {"instance_id": "q1", "question": "1 + 1"},
    {"instance_id": "q2", "question": "2 * 3 + 1", "project": "algebra"},
    {"instance_id": "q3", "question": "10 - 4"},
]
ANSWERS = [
    {"instance_id": "q1", "model_name_or_path": "good", "model_patch": "2"},
    {"instance_id": "q2", "model_name_or_path": "good", "model_patch": "7"},
    {"instance_id": "q3", "model_name_or_path": "good", "model_patch": "6"},
    {"instance_id": "q1", "model_name_or_path": "sloppy", "model_patch": "3"},
    {"instance_id": "q2", "model_name_or_path": "sloppy", "model_patch": "7"},
    # sloppy has no line for q3: an item of status missing_prediction, scored as wrong
]
# pytest outcomes of ANSWERS: an evaluated answer passes (right or wrong: it was scored); the
# missing one fails


@pytest.fixture
def toy(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(ARITHMETIC_CONFTEST.read_text())
    write_jsonl(pytester.path / "questions.jsonl", QUESTIONS)
    write_jsonl(pytester.path / "run.jsonl", ANSWERS)
    return pytester


def run(pytester: pytest.Pytester, *extra: str, predictions: str = "run.jsonl") -> pytest.RunResult:
    return pytester.runpytest(
        f"--tebench-predictions={predictions}",
        "--tebench-benchmark=arithmetic",
        "--tebench-dataset=questions.jsonl",
        f"--tebench-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
        *extra,
    )


def without_provenance(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records without what differs between equal runs by design: timings, cache provenance."""
    return [{k: v for k, v in r.items() if k not in ("timings", "cache")} for r in results]


def report(pytester: pytest.Pytester, name: str = "report.json") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((pytester.path / name).read_text())
    return data


def coverage_report_warmth(cache: Path) -> set[str | None]:
    """How the coverage reports of the gold records under ``cache`` ran: each report step's
    ``warm_jvm`` ("started"/"reused": in a warm server's JVM; None: in a JVM of its own)."""
    records = [json.loads(path.read_text(encoding="utf-8")) for path in cache.rglob("gold/*.json")]
    found = {s["warm_jvm"] for r in records for s in r["run"]["steps"] if s["name"] == "coverage-report"}
    assert found, f"no gold record with a coverage report under {cache}"
    return found


def comparable_result(record: dict) -> dict:  # type: ignore[type-arg]
    """A result without what differs run to run by design (timings, cache provenance, step logs)."""
    drop = {"timings", "cache", "steps", "gold", "prebuilt", "warm_jvm"}

    def clean(value: object) -> object:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if k not in drop}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return clean(record)  # type: ignore[return-value]


def result_differences(warm: object, cold: object, at: str = "") -> list[str]:
    """Where two results differ, as ``path: warm != cold`` (``at``: the path so far)."""
    if isinstance(warm, dict) and isinstance(cold, dict):
        return [
            d
            for k in sorted({*warm, *cold}, key=str)
            for d in result_differences(warm.get(k), cold.get(k), f"{at}/{k}")
        ]
    if isinstance(warm, list) and isinstance(cold, list) and len(warm) == len(cold):
        return [
            d
            for i, (w, c) in enumerate(zip(warm, cold, strict=True))
            for d in result_differences(w, c, f"{at}[{i}]")
        ]
    return [] if warm == cold else [f"{at}: {warm!r} != {cold!r}"]
