"""Update evaluation, side by side: the reference harness's own code and ours, on real instances.

For each instance of the datasets (rows of ``tebench build``) and two systems, gold and one
non-gold patch made from gold (one added assertion dropped, see :func:`drop_one_assertion`), it
times in one run, with the same JDK, the same Maven and the same warmed Maven repository:

* **reference**: ``EvaluationOrchestrator.run_evaluation(worktree, gt_commit)`` of the checkout
  given by ``--reference`` (iSEngLab/TEBench), run by ``--reference-python`` (a venv with GitPython,
  javalang, lxml, pandas). Untimed before it: a ``git clone --shared`` of the mirror and a fresh
  V-0.5 worktree per system made by the reference's own ``baseline/build_worktrees.py``
  ``create_v05_worktree``, the system's test patch applied uncommitted (``git apply``, as an agent
  leaves its edits). Timed: the orchestrator's whole evaluation (compile, the selected tests with
  JaCoCo, the coverage run on the user's worktree, a fresh V0 worktree built and run with coverage).
  Every system pays all of it: the reference caches nothing.
* **ours**: ``prepare`` + ``evaluate`` + ``cleanup`` of the TEBench adapter, executor ``local``
  (one per instance, as one worker; its Maven builds in a warm Maven JVM unless ``--warm-jvm off``),
  offline: the first system from an empty cache (gold's runs on V0 included), the second with
  gold's record cached. Whatever our code does when this runs is what is measured.

and prints per instance one ``first system`` line and one ``second system`` line with the seconds
and the ratio reference / ours (``N.Nx``); then ours per prediction against a bare
``mvn -o test -Dtest=<our selection>`` (same JaCoCo agent, same reactor scope) on a compiled
workspace and from an empty ``target/``; then instances per hour for gold plus one system.
Then (``--worker-pass on``, the default) ours alone once more, every instance in one executor as one
worker of a long run meets them (:func:`worker_pass`: its warm Maven JVM has built another instance
before, each instance still gets a fresh cache), printed as ``first system, worker warm`` and
``second system, worker warm`` against the same reference seconds (``..., same project`` where the
instance before it in the datasets' order is of its own project, as most items of a long run meet),
and instances per hour from them.
``--gold-runs 1`` makes ours run gold once, as the reference does (no flakiness check): the
figures then show what that check costs; the default is the plugin's.

What is given to the reference beyond its published code, and why:

* One patch, at run time, in a copy of the checkout (:data:`PATCHES`): its two test launches name
  the JaCoCo report goal in full (``org.jacoco:jacoco-maven-plugin:0.8.11:report``) instead of
  ``jacoco:report``. The prefix resolves only where the POM declares the JaCoCo plugin
  (commons-parent does; jsoup does not, and Maven Central has no ``org.jacoco`` group metadata), so
  on jsoup every test launch stopped at ``No plugin found for prefix 'jacoco'`` before a test ran.
* ``AnalysisConfig.JAVA_HOME`` and ``AnalysisConfig.MAVEN_EXECUTABLE`` (its own settings) name the
  JDK and Maven our run chose for the instance; the Maven is a wrapper that counts its launches.
* Its Maven gets ``MAVEN_OPTS=-Duser.home=<work dir>/reference-home``, whose ``.m2/settings.xml``
  names the benchmark's Maven repository as ``localRepository`` (so its
  ``${settings.localRepository}`` agent path is the warmed repository). It still runs online, as
  published (no ``-o``).
* Untimed warm-up for it: the JaCoCo 0.8.11 agent its ``-DargLine`` names and the report plugin
  (``dependency:get``, the report goal once in a V0 tree). Anything it still downloads during the
  timed runs is counted and printed.

    python bench/reference_cost.py --reference /path/to/TEBench --repos /work/.mirror \
        --dataset lang.jsonl --dataset jsoup.jsonl --dataset gson.jsonl \
        --reference-python /path/to/refvenv/bin/python [--workdir DIR] [--maven-repo DIR]

Slow: several Maven builds per instance on each side.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_repos import combine
from real_repos import link_repos

from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.tebench.adapter import TebenchAdapter
from pytest_tebench.benchmarks.tebench.adapter import TebenchPrepared
from pytest_tebench.benchmarks.tebench.adapter import create_adapter
from pytest_tebench.benchmarks.tebench.settings import DEFAULT_GOLD_RUNS
from pytest_tebench.benchmarks.tebench.settings import gold_runs
from pytest_tebench.context import TebenchOptions
from pytest_tebench.context import build_context
from pytest_tebench.instance.datasets import load_records
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.run.executors import DEFAULT_WARM_JVM
from pytest_tebench.run.executors import WARM_JVM_CHOICES
from pytest_tebench.run.executors import warm_jvm
from pytest_tebench.run.local import LocalExecutor
from pytest_tebench.run.maven.dist import default_dist_cache
from pytest_tebench.run.maven.dist import maven_home
from pytest_tebench.run.maven.jacoco import AGENT_JAR
from pytest_tebench.run.maven.jacoco import project_includes
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.steps import SKIP_FLAGS
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.settings import default_cache_dir

from common import show
from common import timed

#: The line the reference driver prints its result on (everything else is the reference's log).
RESULT_MARK = "REFERENCE-RESULT "
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
#: The first line of an assertion statement: ``assertX(``, ``Assertions.assertX(``.
_ASSERTION_START = re.compile(r"^\s*(?:\w+\.)?assert\w*\(")
#: The most lines one assertion statement may span to be dropped as one.
_STATEMENT_LINES = 8

#: The least the reference needs to run its tests on every project: ``jacoco:report`` resolves its
#: prefix only where the POM declares the JaCoCo plugin (commons-parent does; jsoup does not, and
#: Maven Central publishes no ``org.jacoco`` group metadata), so there every test launch stopped
#: at "No plugin found for prefix 'jacoco'" before a test ran. Full coordinates, the version its
#: ``-Djacoco.version`` and agent already name.
_REPORT = "'org.jacoco:jacoco-maven-plugin:0.8.11:report'"
PATCHES = {
    "update_evaluation/executability_evaluator.py": ("'test', 'jacoco:report'", f"'test', {_REPORT}"),
    "update_evaluation/coverage_increment_analyzer.py": ("'test', 'jacoco:report'", f"'test', {_REPORT}"),
}

# Runs in the reference's venv, with the reference checkout first on sys.path.
DRIVER = """
import json, os, sys, time
reference, mode, MARK = sys.argv[1], sys.argv[2], "REFERENCE-RESULT "
sys.path.insert(0, reference)
if mode == "worktree":
    sys.path.insert(0, os.path.join(reference, "baseline"))
    from build_worktrees import create_v05_worktree
    repo, gt_commit, worktree = sys.argv[3:6]
    result = create_v05_worktree(repo, gt_commit, worktree, 1)
    print(MARK + json.dumps({"ok": result["success"], "error": result["error"]}))
else:
    repo, gt_commit, worktree, java_home, mvn = sys.argv[3:8]
    from config import AnalysisConfig
    AnalysisConfig.JAVA_HOME = java_home
    AnalysisConfig.MAVEN_EXECUTABLE = mvn
    from update_evaluation import EvaluationOrchestrator
    orchestrator = EvaluationOrchestrator(repo)
    started = time.perf_counter()
    result = orchestrator.run_evaluation(worktree, gt_commit)
    seconds = time.perf_counter() - started
    execution = result["evaluation"].get("executability") or {}
    print(MARK + json.dumps({
        "seconds": seconds, "success": result.get("success"), "error": result.get("error"),
        "scores": result.get("scores"), "compile_success": execution.get("compile_success"),
        "test_success": execution.get("test_success"), "tests": execution.get("test_results"),
    }, default=str))
"""


# -- pure parts (tests/test_reference_cost.py) ---------------------------------------------
def drop_one_assertion(patch: str) -> str | None:
    """``patch`` without one added assertion statement (``assertX(...);``, ``Assertions.assertX``,
    over up to :data:`_STATEMENT_LINES` added lines), hunk counts mended; ``None`` if it adds none.

    Prefers the first assertion of a hunk that changes more than that statement, so the patch
    stays a change.
    """
    lines = patch.splitlines(keepends=True)
    hunks: list[tuple[int, list[int]]] = []  # header index, indexes of its +/- lines
    for index, line in enumerate(lines):
        if _HUNK.match(line):
            hunks.append((index, []))
        elif hunks and line[:1] in "+-" and not line.startswith(("+++ ", "--- ", "diff --git")):
            hunks[-1][1].append(index)
    candidates = []
    for header, changed in hunks:
        for index in changed:
            statement = _assertion_at(lines, index)
            if statement:
                candidates.append((len(changed) <= statement, index, statement, header))
    if not candidates:
        return None
    _, first, length, header = min(candidates)
    lines[header] = _shifted(lines[header], count=-length)
    # later hunks of the same file start ``length`` lines earlier in the new file
    for index in range(first + length, len(lines)):
        if lines[index].startswith("diff --git"):
            break
        if _HUNK.match(lines[index]):
            lines[index] = _shifted(lines[index], start=-length)
    del lines[first : first + length]
    return "".join(lines)


def _assertion_at(lines: list[str], index: int) -> int:
    """The number of added lines from ``index`` that make one assertion statement (0: none)."""
    if not (lines[index].startswith("+") and _ASSERTION_START.match(lines[index][1:])):
        return 0
    depth = 0
    for length, line in enumerate(lines[index : index + _STATEMENT_LINES], start=1):
        if not line.startswith("+"):
            return 0
        depth += line.count("(") - line.count(")")
        if depth == 0 and line.rstrip().endswith(";"):
            return length
    return 0


def _shifted(header: str, *, start: int = 0, count: int = 0) -> str:
    """A hunk header with the new side's start and count moved."""
    match = _HUNK.match(header)
    assert match is not None
    old_start, old_count, new_start, new_count, tail = match.groups()
    old = old_start + (f",{old_count}" if old_count is not None else "")
    new = str(int(new_start) + start)
    if count or new_count is not None:
        new += f",{(int(new_count) if new_count is not None else 1) + count}"
    return f"@@ -{old} +{new} @@{tail}\n"


def ratio(numerator: float, denominator: float) -> str:
    """``N.Nx``; ``n/a`` when the denominator is not positive."""
    return f"{numerator / denominator:.1f}x" if denominator > 0 else "n/a"


def result_line(stdout: str) -> dict[str, Any]:
    """The driver's result (its last marked line); the reference's own log lines are ignored."""
    marked = [line[len(RESULT_MARK) :] for line in stdout.splitlines() if line.startswith(RESULT_MARK)]
    if not marked:
        raise ValueError("the reference driver printed no result line")
    value = json.loads(marked[-1])
    if not isinstance(value, dict):
        raise ValueError(f"the reference driver's result is not an object: {marked[-1][:200]}")
    return value


def per_hour(count: int, seconds: float) -> str:
    return f"{3600 * count / seconds:.1f}" if seconds > 0 else "n/a"


# -- running ---------------------------------------------------------------------------------
def patched_copy(checkout: Path, copy: Path) -> Path:
    """A copy of the reference's code whose test launches name the JaCoCo report goal in full
    (:data:`PATCHES`); the checkout itself is never changed."""
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(checkout, copy, ignore=shutil.ignore_patterns(".git"))
    for relative, (old, new) in PATCHES.items():
        path = copy / relative
        text = path.read_text(encoding="utf-8")
        if text.count(old) != 1:
            raise SystemExit(f"{relative}: expected {old!r} once; is this iSEngLab/TEBench at 5f60718?")
        path.write_text(text.replace(old, new), encoding="utf-8")
    return copy


class Reference:
    """The reference harness's update evaluation, run by its own Python, on our instance's commit."""

    def __init__(self, checkout: Path, python: str, work: Path, maven_repo: Path) -> None:
        self.python, self.work, self.maven_repo = python, work, maven_repo
        self.checkout = patched_copy(checkout, work / "reference-code")
        self.driver = work / "reference_driver.py"
        self.driver.write_text(DRIVER, encoding="utf-8")
        self.home = work / "reference-home"
        (self.home / ".m2").mkdir(parents=True, exist_ok=True)
        (self.home / ".m2" / "settings.xml").write_text(
            "<settings><localRepository>" + str(maven_repo) + "</localRepository></settings>\n",
            encoding="utf-8",
        )
        self.launches = work / "reference-mvn-launches.log"
        self.runs = 0

    def env(self, java_home: Path) -> dict[str, str]:
        return {
            **os.environ,
            "MAVEN_OPTS": f"-Duser.home={self.home}",
            "JAVA_HOME": str(java_home),
            "PATH": f"{java_home}/bin:{os.environ['PATH']}",
        }

    def mvn_wrapper(self, real_mvn: str) -> Path:
        wrapper = self.work / "reference-bin" / "mvn"
        wrapper.parent.mkdir(exist_ok=True)
        wrapper.write_text(
            f'#!/bin/sh\necho "$*" >> {self.launches}\nexec {real_mvn} "$@"\n', encoding="utf-8"
        )
        wrapper.chmod(0o755)
        return wrapper

    def clone(self, mirror: Path, project: str) -> Path:
        repo = self.work / "reference-repos" / project  # its basename names the V0 worktrees
        if not repo.exists():
            repo.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                ["git", "clone", "-q", "--shared", "--no-checkout", str(mirror), str(repo)], check=True
            )
        return repo

    def worktree(self, repo: Path, gt_commit: str, patch: str, java_home: Path) -> Path:
        self.runs += 1
        path = self.work / "reference-worktrees" / f"{repo.name}-task_{self.runs:03d}_eval"
        path.parent.mkdir(parents=True, exist_ok=True)
        done = self._drive(["worktree", str(repo), gt_commit, str(path)], java_home)
        if not done.get("ok"):
            raise SystemExit(f"the reference could not build V-0.5 of {gt_commit}: {done.get('error')}")
        applied = subprocess.run(
            ["git", "apply", "-"], cwd=path, input=patch, text=True, capture_output=True, check=False
        )
        if applied.returncode != 0:
            raise SystemExit(f"the test patch does not apply to the reference's V-0.5: {applied.stderr}")
        return path

    def evaluate(
        self, repo: Path, gt_commit: str, worktree: Path, java_home: Path, mvn: Path
    ) -> dict[str, Any]:
        return self._drive(
            ["evaluate", str(repo), gt_commit, str(worktree), str(java_home), str(mvn)], java_home
        )

    def _drive(self, args: list[str], java_home: Path) -> dict[str, Any]:
        done = subprocess.run(
            [self.python, str(self.driver), str(self.checkout), *args],
            cwd=self.work,
            env=self.env(java_home),
            capture_output=True,
            text=True,
            check=False,
        )
        (self.work / "reference.log").open("a", encoding="utf-8").write(done.stdout + done.stderr)
        if done.returncode != 0:
            raise SystemExit(f"the reference driver failed ({' '.join(args[:2])}):\n{done.stderr[-3000:]}")
        return result_line(done.stdout)

    def warm(self, repo: Path, gt_commit: str, java_home: Path, mvn: Path) -> None:
        """What the reference's flags need beyond our build: its agent jar, its report plugin."""
        tree = self.work / "reference-worktrees" / f"{repo.name}-v0-warm"
        subprocess.run(["git", "-C", str(repo), "worktree", "add", "-f", "--detach", str(tree), gt_commit],
                       check=True, capture_output=True)  # fmt: skip
        for goal in (
            ["dependency:get", "-Dartifact=org.jacoco:org.jacoco.agent:0.8.11:jar:runtime"],
            [_REPORT.strip("'")],
        ):
            subprocess.run([str(mvn), "-B", "-q", *goal], cwd=tree, env=self.env(java_home),
                           capture_output=True, check=False)  # fmt: skip
        subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)], check=False)

    def launch_count(self) -> int:
        return len(self.launches.read_text().splitlines()) if self.launches.is_file() else 0


def ours_context(cache: Path, links: Path, executor: LocalExecutor) -> EvalContext:
    options = TebenchOptions(predictions="gold", offline=True, cache_dir=cache, repos=(links,))
    return build_context(options, executor=lambda: executor)


def ours_item(
    adapter: TebenchAdapter,
    instance: BenchmarkInstance,
    ctx: EvalContext,
    name: str,
    patch: str,
    *,
    between: Callable[[TebenchPrepared, dict[str, Any]], None] | None = None,
) -> tuple[dict[str, Any], float]:
    """One item as the plugin runs it (prepare, evaluate, cleanup) and its seconds; ``between``
    runs untimed after the evaluation, on the item's workspace, before its cleanup."""
    started = time.perf_counter()
    prepared = adapter.prepare(instance, ctx)
    try:
        record = adapter.evaluate(
            instance, prepared, Prediction(instance.instance_id, name, patch, "bench"), ctx
        )
        if between is not None:
            paused = time.perf_counter()
            between(prepared, record)
            started += time.perf_counter() - paused
    finally:
        adapter.cleanup(prepared, ctx)
    return record, time.perf_counter() - started


def bare_times(prepared: TebenchPrepared, update: dict[str, Any], repo: Path) -> tuple[float, float]:
    """Bare ``mvn -o test -Dtest=<our selection>`` with our JaCoCo agent and reactor scope, on the
    prediction's tree of an evaluated item: (from an empty ``target/``, then on the tree it compiled)."""
    workspace = prepared.workspace
    workspace.checkout("prediction")
    tests = [TestId.parse(t) for t in update["selection"]]
    scope = RunSettings(maven_repo=repo, java_version=update["java_version"]).scoped(workspace.path, tests)
    includes = ":".join(f"{p}.*" for p in project_includes(workspace.path))
    agent = f"-javaagent:{repo / AGENT_JAR}=destfile={workspace.path}/target/bare.exec,includes={includes}"
    command = [_mvn(update.get("maven_version")), "-o", "-B", "-q", f"-Dmaven.repo.local={repo}", *SKIP_FLAGS,
               "-Dsurefire.failIfNoSpecifiedTests=false", "-DfailIfNoTests=false",
               f"-Dtest={','.join(update['selection'])}", *scope.scope, "test"]  # fmt: skip
    java_home = LocalExecutor().java_home(int(update["java_version"]))
    env = {**os.environ, "JAVA_TOOL_OPTIONS": agent, "JAVA_HOME": str(java_home)}
    results = []
    for clean in (True, False):
        if clean:
            for target in (workspace.path / "target", *workspace.path.glob("*/target")):
                shutil.rmtree(target, ignore_errors=True)
        done, seconds = timed(
            lambda: subprocess.run(command, cwd=workspace.path, env=env, capture_output=True, check=False)
        )
        if done.returncode != 0:
            raise SystemExit(f"bare Maven failed:\n{done.stdout.decode()[-3000:]}\n{done.stderr.decode()}")
        results.append(seconds)
    workspace.checkout("v-0.5")
    return results[0], results[1]


def _mvn(version: str | None) -> str:
    """The Maven our run used: a downloaded distribution, or the one on PATH."""
    if version:
        home = maven_home(version, default_dist_cache())
        if (home / "bin" / "mvn").is_file():
            return str(home / "bin" / "mvn")
    found = shutil.which("mvn")
    if found is None:
        raise SystemExit("no mvn on PATH")
    return found


def downloads_since(maven_repo: Path, since: float) -> int:
    """Artifacts (jars and POMs) that arrived in the Maven repository after ``since``."""
    return sum(
        1
        for path in maven_repo.rglob("*")
        if path.suffix in (".jar", ".pom") and path.stat().st_mtime > since
    )


@dataclass
class Measured:
    """One instance's figures: seconds per (side, system), what each side scored, bare runs."""

    seconds: dict[tuple[str, str], float] = field(default_factory=dict)
    outcome: dict[tuple[str, str], str] = field(default_factory=dict)
    bare_cold: float = 0.0
    bare_compiled: float = 0.0
    bare_error: str = ""
    reference_launches: int = 0
    downloads: int = 0
    toolchain: str = ""


def measure(
    adapter: TebenchAdapter, instance: BenchmarkInstance, row: dict[str, Any], other: str, setup: Setup
) -> Measured:
    """Ours on gold first (its record names the JDK and Maven the reference then gets), the
    reference on gold and on ``other``, ours on ``other`` (gold cached)."""
    gold = adapter.gold_patch(instance)
    reference = setup.reference
    # one executor per instance, as one worker: with a warm Maven JVM, gold's runs start it and
    # the prediction's launch finds it warm (a worker's steady state)
    executor = LocalExecutor(warm_jvm=setup.warm_jvm)
    ctx = ours_context(setup.work / f"cache-{instance.instance_id}", setup.work / "repos", executor)
    result = Measured()
    first, result.seconds["ours", "first"] = ours_item(adapter, instance, ctx, "first", gold)
    result.outcome["ours", "first"] = _ours_outcome(first)
    update = first.get("update") or {}
    if "java_version" not in update:
        raise SystemExit(f"{instance.instance_id}: ours did not build gold: {json.dumps(first)[:3000]}")
    result.toolchain = f"JDK {update['java_version']}, Maven {update.get('maven_version') or 'on PATH'}"
    java_home = LocalExecutor().java_home(int(update["java_version"]))
    mvn = reference.mvn_wrapper(_mvn(update.get("maven_version")))
    repo = reference.clone(setup.work / "repos" / row["repo"].replace("/", "+"), row["project"])
    reference.warm(repo, row["v0_commit"], java_home, mvn)  # untimed
    started = time.time()  # ours is offline from here on: what arrives now is the reference's
    launches = reference.launch_count()
    for system, patch in (("first", gold), ("second", other)):
        tree = reference.worktree(repo, row["v0_commit"], patch, java_home)
        ref = reference.evaluate(repo, row["v0_commit"], tree, java_home, mvn)
        result.seconds["reference", system] = float(ref["seconds"])
        result.outcome["reference", system] = (
            f"compile {ref['compile_success']}, tests {ref['test_success']} {ref.get('tests')}, "
            f"overall {(ref.get('scores') or {}).get('overall')}, error {ref.get('error')}"
        )
        print(f"{instance.instance_id}  reference, {system} system: {ref['seconds']:.1f} s", flush=True)
    result.reference_launches = reference.launch_count() - launches
    bare = functools.partial(_bare_into, result, setup.maven_repo)
    second, result.seconds["ours", "second"] = ours_item(
        adapter, instance, ctx, "second", other, between=bare
    )
    result.outcome["ours", "second"] = _ours_outcome(second)
    result.downloads = downloads_since(setup.maven_repo, started)
    executor.close()
    shutil.rmtree(ctx.cache_dir, ignore_errors=True)
    return result


@dataclass(frozen=True)
class WorkerTimes:
    """One instance of :func:`worker_pass`: its two systems' seconds, and what came before it."""

    first: float
    second: float
    outcome: str
    #: The project of the instance the worker built just before (a long run's items go in the
    #: predictions file's order, which is project by project for `tebench collect`'s files).
    after_project: str


def worker_pass(
    adapter: TebenchAdapter, instances: list[tuple[BenchmarkInstance, str]], setup: Setup
) -> dict[str, WorkerTimes]:
    """Ours again, every instance in ONE executor, as one worker of a long run sees them: its
    warm Maven JVM has built an earlier instance already (JIT-compiled ``javac`` and Maven's core),
    while each instance gets a fresh cache (gold built again, nothing stored carries over). The
    first instance follows an untimed run of the last one (of itself when there is one); the
    others follow the one before them in the datasets' order, so two instances of one project
    given one after the other show a worker that has just built that project."""
    executor = LocalExecutor(warm_jvm=setup.warm_jvm)
    times: dict[str, WorkerTimes] = {}
    try:
        order = [(instances[-1], False)] + [(pair, True) for pair in instances]
        before = ""
        for k, ((instance, other), counted) in enumerate(order):
            ctx = ours_context(setup.work / f"worker-cache-{k}", setup.work / "repos", executor)
            gold = adapter.gold_patch(instance)
            first, first_seconds = ours_item(adapter, instance, ctx, "first", gold)
            _, second_seconds = ours_item(adapter, instance, ctx, "second", other)
            shutil.rmtree(ctx.cache_dir, ignore_errors=True)
            if counted:
                times[instance.instance_id] = WorkerTimes(
                    first_seconds, second_seconds, _ours_outcome(first), before
                )
            before = instance.project
    finally:
        executor.close()
    return times


def warm_label(system: str, instance: BenchmarkInstance, times: WorkerTimes) -> str:
    """``first system, worker warm`` after another project's instance; ``..., same project`` after
    one of its own project's (what most items of a long run meet)."""
    state = "same project" if times.after_project == instance.project else "worker warm"
    return f"{system} system, {state}"


def _ours_outcome(record: dict[str, Any]) -> str:
    update = record.get("update") or {}
    timings = update.get("timings") or {}
    return (
        f"{record['status']}, s_exec {update.get('s_exec')}, s_update {update.get('s_update')}, "
        f"gold {(update.get('gold') or {}).get('cache')} ({(update.get('gold') or {}).get('seconds')} s), "
        f"timings {timings}, warm JVM {update.get('warm_jvm')}, error {record.get('error')}; "
        f"prebuilt: {update.get('prebuilt')}"
    )


def _bare_into(result: Measured, repo: Path, prepared: TebenchPrepared, record: dict[str, Any]) -> None:
    update = record.get("update") or {}
    if not update.get("selection"):
        result.bare_error = "no selection to run"
        return
    try:
        result.bare_cold, result.bare_compiled = bare_times(prepared, update, repo)
    except (SystemExit, OSError, ValueError) as exc:  # the side-by-side figures still print
        result.bare_error = str(exc)[-2000:]


def report(name: str, got: Measured) -> None:
    for system, label in (("first", "first system (gold built)"), ("second", "second system (gold cached)")):
        theirs, ours = got.seconds["reference", system], got.seconds["ours", system]
        print(f"{name}  {label:<28} reference {theirs:7.1f} s  ours {ours:7.1f} s  {ratio(theirs, ours)}")
        print(f"    reference: {got.outcome['reference', system]}")
        print(f"    ours: {got.outcome['ours', system]}")
    ours = got.seconds["ours", "second"]
    if got.bare_error:
        print(f"{name}  bare mvn -o test: not measured: {got.bare_error}")
    print(
        f"{name}  ours per prediction / bare mvn -o test: compiled workspace {got.bare_compiled:.1f} s "
        f"{ratio(ours, got.bare_compiled)}, from an empty target/ {got.bare_cold:.1f} s "
        f"{ratio(ours, got.bare_cold)}"
    )
    print(
        f"{name}  reference Maven launches (both systems) {got.reference_launches}; artifacts downloaded "
        f"while timed {got.downloads}; {got.toolchain}"
    )


@dataclass(frozen=True)
class Setup:
    work: Path
    maven_repo: Path
    reference: Reference
    warm_jvm: bool = False
    worker_pass: bool = True


def python_path(value: str) -> str:
    """A path names the same file from the reference's own working directory; a bare command is
    looked up on PATH."""
    # absolute, not resolved: a venv's python is a link, and only its own path finds the venv
    return str(Path(value).absolute()) if os.sep in value else value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", type=Path, required=True, help="a checkout of iSEngLab/TEBench")
    parser.add_argument("--repos", type=Path, required=True, help="mirrors as owner+name[/repo]")
    parser.add_argument("--dataset", type=Path, action="append", required=True, help="rows of tebench build")
    parser.add_argument(
        "--reference-python",
        type=python_path,
        default=sys.executable,
        help="Python with the reference's deps (a path, or a command on PATH)",
    )
    parser.add_argument(
        "--maven-repo",
        type=Path,
        default=None,
        help="the Maven repository of both sides (<workdir>/maven-repository)",
    )
    parser.add_argument(
        "--seed-maven-repo",
        type=Path,
        default=None,
        help="copy this repository into --maven-repo first when that is empty (e.g. the shared "
        f"{default_cache_dir() / 'maven-repository'}): a private copy, so that what lands in it while "
        "timed is this run's own",
    )
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument(
        "--warm-jvm",
        choices=WARM_JVM_CHOICES,
        default=DEFAULT_WARM_JVM,
        help="ours' Maven builds in a warm Maven JVM (--tebench-warm-jvm); the bare mvn runs stay cold. "
        "Default: %(default)s.",
    )
    parser.add_argument(
        "--worker-pass",
        choices=("on", "off"),
        default="on",
        help="after the per-instance figures, time ours again with every instance in one worker "
        "(its warm JVM already used by an earlier instance: a long run's steady state). "
        "Default: %(default)s.",
    )
    parser.add_argument(
        "--gold-runs",
        type=gold_runs,
        default=DEFAULT_GOLD_RUNS,
        help="ours' runs of gold on V0 (--tebench-gold-runs): 1 does the reference's work, no "
        "flakiness check. Default: %(default)s, the plugin's.",
    )
    args = parser.parse_args()
    work = (args.workdir or Path(tempfile.mkdtemp(prefix="tebench-refcost-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    maven_repo = (args.maven_repo or work / "maven-repository").resolve()
    if args.seed_maven_repo and not (maven_repo.is_dir() and any(maven_repo.iterdir())):
        shutil.copytree(args.seed_maven_repo, maven_repo, symlinks=True, dirs_exist_ok=True)
    rows = combine([p.resolve() for p in args.dataset], work / "dataset.jsonl")
    link_repos(rows, args.repos.resolve(), work / "repos")
    # limits far above any build here: this measures cost, and a machine shared by several
    # builds must not turn a slow build into a harness error
    limits = {"timeout_compile": 3600, "timeout_test": 3600, "timeout_warmup": 3600}
    adapter = create_adapter({"maven_repo": maven_repo, "gold_runs": args.gold_runs, **limits}, work)
    setup = Setup(
        work,
        maven_repo,
        Reference(args.reference.resolve(), args.reference_python, work, maven_repo),
        warm_jvm=warm_jvm(args.warm_jvm),
        worker_pass=args.worker_pass == "on",
    )
    show("work directory", work)
    show("ours: warm Maven JVM (--warm-jvm)", args.warm_jvm)
    show("ours: gold's runs on V0 (--gold-runs)", args.gold_runs)
    show("load average at start (1, 5, 15 min)", " ".join(f"{x:.1f}" for x in os.getloadavg()))
    totals = {"reference": 0.0, "ours": 0.0}
    done: list[tuple[BenchmarkInstance, str]] = []
    got_by_id: dict[str, Measured] = {}
    for instance in adapter.load_instances(load_records(str(work / "dataset.jsonl"))):
        other = drop_one_assertion(adapter.gold_patch(instance))
        if other is None:
            print(f"{instance.instance_id}: gold adds no one-line assertion to drop; skipped")
            continue
        row = next(r for r in rows if r["instance_id"] == instance.instance_id)
        got = measure(adapter, instance, row, other, setup)
        report(instance.instance_id, got)
        for side in totals:
            totals[side] += got.seconds[side, "first"] + got.seconds[side, "second"]
        done.append((instance, other))
        got_by_id[instance.instance_id] = got
    show("instances per hour, gold + one system (reference)", per_hour(len(done), totals["reference"]))
    show("instances per hour, gold + one system (ours)", per_hour(len(done), totals["ours"]))
    if setup.worker_pass and done:
        steady = worker_pass(adapter, done, setup)
        total = 0.0
        by_id = {instance.instance_id: instance for instance, _ in done}
        for instance_id, times in steady.items():
            got = got_by_id[instance_id]
            for system, seconds in (("first", times.first), ("second", times.second)):
                theirs = got.seconds["reference", system]
                label = warm_label(system, by_id[instance_id], times)
                print(f"{instance_id}  {label:<28} reference {theirs:7.1f} s  ours {seconds:7.1f} s  "
                      f"{ratio(theirs, seconds)}")  # fmt: skip
            print(f"    ours: {times.outcome}")
            total += times.first + times.second
        show("instances per hour, gold + one system (ours, worker warm)", per_hour(len(steady), total))
    show("load average at end (1, 5, 15 min)", " ".join(f"{x:.1f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
