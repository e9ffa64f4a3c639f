"""RealCodeJava instances from one commit of a Maven repository: ``tebench build --benchmark realcode``.

Stages, all in one workspace at the commit:

1. **Methods** (no build): every production file under ``src/main/java`` is parsed and cut
   around each candidate method (:mod:`~pytest_tebench.benchmarks.realcode.methods`).
2. **Tests with coverage**: the test methods of the test tree, grouped by the class that declares
   them, run with JaCoCo, one Maven launch per class (abstract classes through their concrete
   subclasses). JaCoCo's report of a launch is merged over its tests, so one launch per class is
   what tells which tests cover which method: coverage is attributed per test *class*. The first
   launch compiles; the sources do not change between these launches, so the others reuse
   ``target/``. A method is covered by a class when one of its body lines has a covered
   instruction in that class's launch.
3. **PASS_TO_PASS**: the test methods of the covering classes that pass at the commit.
4. **Stub**: the stub replaces the body, and only the method's PASS_TO_PASS tests run, offline,
   without coverage, from a clean ``target/``. **FAIL_TO_PASS**: the PASS_TO_PASS tests that do
   not pass with the stub (a subset of PASS_TO_PASS: the gt body passes all of them). A method
   whose stub fails no test is kept, with an empty FAIL_TO_PASS, as MERA's rows are
   (``require_fail_to_pass`` drops it); a stub that does not compile, or whose run times out, drops it.

Methods are taken round-robin over the files (first method of every file, then the second...),
so ``--max`` gives a spread of the code base. Every launch's outcome is appended to a state file;
the same command run again after an interruption only runs what is missing. A harness failure
(build error, missing coverage) stops the build and is never recorded, so the next run retries.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_tebench import __version__
from pytest_tebench.benchmarks.building import BuildEnvironment
from pytest_tebench.benchmarks.realcode.methods import DEFAULT_MIN_STATEMENTS
from pytest_tebench.benchmarks.realcode.methods import INSTRUCTION
from pytest_tebench.benchmarks.realcode.methods import INTENT_TYPE
from pytest_tebench.benchmarks.realcode.methods import MethodTask
from pytest_tebench.benchmarks.realcode.methods import method_tasks
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import InputError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.java.parser import parse_java
from pytest_tebench.run.maven.dist import DEFAULT_MAVEN
from pytest_tebench.run.maven.offline_run import run_warmed
from pytest_tebench.run.maven.selection import run_inherited
from pytest_tebench.run.maven.surefire import PASSED
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.testrun import COMPILE_ERROR
from pytest_tebench.run.maven.testrun import NO_TESTS
from pytest_tebench.run.maven.testrun import OK
from pytest_tebench.run.maven.testrun import TEST_COMPILE_ERROR
from pytest_tebench.run.maven.testrun import SelectionRun
from pytest_tebench.run.maven.unpublished import unbuildable_message
from pytest_tebench.workspace.checkout import Workspace
from pytest_tebench.workspace.gitcmd import git_text
from pytest_tebench.workspace.layout import MAVEN

BUILDER_VERSION = f"{__version__}/realcode-1"
#: The card's commands: what a MERA-style evaluator runs in ``image_name``.
BUILD_COMMAND = ""
TEST_COMMAND = "mvn test"
#: The card's Docker Hub image for a JDK; pytest-tebench's evaluator maps it to its own image.
IMAGE_TEMPLATE = "maven:{maven}-eclipse-temurin-{java}"
#: Test limit of a stub's run: this many times the launches of the covering classes, at least the minimum.
STUB_TIMEOUT_FACTOR = 3.0
STUB_MIN_TIMEOUT = 60.0


@dataclass(frozen=True)
class RealcodeBuildConfig(BuildEnvironment):
    """The repository and toolchain (shared with the TEBench builder), and what to cut."""

    commit: str = "HEAD"
    max_instances: int | None = None
    min_statements: int = DEFAULT_MIN_STATEMENTS
    require_fail_to_pass: bool = False


@dataclass
class RealcodeBuildResult:
    rows: list[dict[str, Any]]
    #: ``{method key: reason}`` of every method declared under src/main that is no instance.
    rejections: dict[str, str] = field(default_factory=dict)
    commit: str = ""

    def reason_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for reason in self.rejections.values():
            kind = reason.split(":")[0].split("(")[0].strip()
            counts[kind] = counts.get(kind, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def card_test_id(test: TestId) -> str:
    """The card's test id: ``pkg.Class::method`` (nested classes by binary name, ``Outer$Inner``)."""
    return f"{test.class_name}::{test.method}"


# -- stage 1: methods and tests, from the sources ------------------------------------------
def production_tasks(workspace: Path, min_statements: int) -> tuple[list[MethodTask], dict[str, str]]:
    """Candidate methods of every file under ``src/main/java``, in path and source order."""
    root = workspace / MAVEN.main_sources
    tasks: list[MethodTask] = []
    rejected: dict[str, str] = {}
    for path in sorted(root.rglob("*.java")) if root.is_dir() else ():
        if path.name in ("package-info.java", "module-info.java") or not path.is_file():
            continue
        found = method_tasks(
            path.relative_to(workspace).as_posix(), path.read_bytes(), min_statements=min_statements
        )
        tasks.extend(found.tasks)
        rejected.update(found.rejected)
    return tasks, rejected


def declared_tests(workspace: Path) -> dict[str, list[TestId]]:
    """Test methods under ``src/test/java``, by the binary name of the class declaring them."""
    root = workspace / MAVEN.test_sources
    classes: dict[str, list[TestId]] = {}
    for path in sorted(root.rglob("*.java")) if root.is_dir() else ():
        parsed = parse_java(path.read_bytes())
        prefix = f"{parsed.package}." if parsed.package else ""
        for method in parsed.test_methods():
            name = prefix + method.binary_class_name
            classes.setdefault(name, []).append(TestId(name, method.name))
    return {name: sorted(set(tests)) for name, tests in sorted(classes.items())}


def spread(tasks: Iterable[MethodTask]) -> list[MethodTask]:
    """Round-robin over files: every file's first method, then every file's second, and so on."""
    by_file: dict[str, list[MethodTask]] = {}
    for task in tasks:
        by_file.setdefault(task.file_path, []).append(task)
    ordered: list[MethodTask] = []
    rank = 0
    while len(ordered) < sum(len(v) for v in by_file.values()):
        ordered.extend(methods[rank] for _, methods in sorted(by_file.items()) if rank < len(methods))
        rank += 1
    return ordered


def covers(covered: dict[str, list[int]], task: MethodTask) -> bool:
    first, last = task.body_lines
    return any(first <= line <= last for line in covered.get(task.source_key, ()))


# -- the state file --------------------------------------------------------------------------
class _State:
    """Finished launches of one commit, appended as they finish (JSON lines)."""

    def __init__(self, path: Path, commit: str) -> None:
        self.path = path
        self.commit = commit
        self.classes: dict[str, dict[str, Any]] = {}
        self.stubs: dict[str, dict[str, Any]] = {}
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut by a crash: that launch is simply redone
                if entry.get("builder") != BUILDER_VERSION or entry.get("commit") != commit:
                    continue
                if entry.get("kind") == "class":
                    self.classes[entry["class"]] = entry
                elif entry.get("kind") == "stub":
                    self.stubs[entry["key"]] = entry

    def add(self, entry: dict[str, Any]) -> None:
        entry = {"builder": BUILDER_VERSION, "commit": self.commit, **entry}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")
        target = self.classes if entry["kind"] == "class" else self.stubs
        target[entry["class"] if entry["kind"] == "class" else entry["key"]] = entry


# -- stages 2 and 4: launches ----------------------------------------------------------------
def _check_harness(run: SelectionRun, what: str) -> None:
    if run.harness_failed:
        raise HarnessError(f"{what}: the build failed for harness reasons: {run.error}")


def _class_entry(name: str, run: SelectionRun) -> dict[str, Any]:
    """What the state keeps of one class's launch: outcomes and covered lines per source."""
    if run.status in (COMPILE_ERROR, TEST_COMPILE_ERROR):
        raise InputError(f"the commit does not build: {run.status}: {run.error}")
    entry: dict[str, Any] = {
        "kind": "class",
        "class": name,
        "status": run.status,
        "outcomes": {str(o.test): o.status for o in run.tests},
        "covered": {},
        "seconds": round(sum(run.timings.values()), 1),
    }
    if run.status == OK:
        if run.coverage is None:
            raise HarnessError(f"{name}: no coverage: {run.coverage_error}")
        entry["covered"] = {
            source: sorted(run.coverage.covered_lines(source)) for source in sorted(run.coverage.files)
        }
    elif run.status != NO_TESTS:
        entry["error"] = run.error  # a timeout: these tests cover nothing and pass nothing
    return entry


def _stub_entry(task: MethodTask, run: SelectionRun) -> dict[str, Any]:
    entry: dict[str, Any] = {"kind": "stub", "key": task.key, "status": run.status}
    if run.status in (COMPILE_ERROR, TEST_COMPILE_ERROR):
        entry["rejected"] = f"the stub does not compile: {run.error}"
    elif run.status != OK:
        entry["rejected"] = f"the stub's test run did not finish ({run.status}): {run.error}"
    else:
        entry["outcomes"] = {str(o.test): o.status for o in run.tests}
    return entry


class _Builder:
    def __init__(self, config: RealcodeBuildConfig, workspace: Workspace, commit: str) -> None:
        self.config = config
        self.workspace = workspace
        self.commit = commit
        self.executor = config.executor()
        # the sources do not change between the class launches: the first compiles for all
        self.settings = config.run_settings(workspace.path, coverage=True, clean_target=False)
        self.java = self.settings.java_version

    def run_class(self, name: str, tests: list[TestId]) -> dict[str, Any]:
        warmed = run_warmed(
            self.executor, self.workspace.path, tests, self.settings, project=self.config.repo
        )
        if warmed.warmup is not None and not warmed.warmup.ok:
            if warmed.warmup.unpublished:  # the commit's environment, not the harness's fault
                raise UnsupportedEnvironment(f"{name}: {unbuildable_message(warmed.warmup.unpublished)}")
            raise HarnessError(f"{name}: the project's warm-up failed: {warmed.warmup.error}")
        _check_harness(warmed.run, name)
        return _class_entry(name, warmed.run)

    def run_stub(self, task: MethodTask, tests: list[TestId], seconds: float) -> dict[str, Any]:
        """The stub's run of ``tests``; ``seconds``: what the launches of their classes took."""
        path = self.workspace.path / task.file_path
        original = path.read_bytes()
        # A stub can make a loop spin forever (a "find the next position" returning 0): its tests
        # run a subset of what those launches ran, so a run many times longer is a hang.
        limit = min(self.config.test_timeout, max(STUB_MIN_TIMEOUT, STUB_TIMEOUT_FACTOR * seconds))
        settings = replace(self.settings, coverage=False, clean_target=True, test_timeout=limit)
        try:
            path.write_bytes((task.left + task.stub + task.right).encode("utf-8"))
            run = run_inherited(self.executor, self.workspace.path, tests, settings)
        finally:
            path.write_bytes(original)
        _check_harness(run, task.key)
        return _stub_entry(task, run)

    def row(self, task: MethodTask, pass_to_pass: list[str], fail_to_pass: list[str]) -> dict[str, Any]:
        maven = self.settings.maven_version or DEFAULT_MAVEN
        return {
            "instruction": INSTRUCTION,
            "inputs": {"left_context": task.left},
            "outputs": task.gt,
            "meta": {
                "id": 0,  # numbered when the dataset is written
                "repo": self.config.repo,
                "base_commit": self.commit,
                "gt": task.gt,
                "stub": task.stub,
                "right_context": task.right,
                "left_context": task.left,
                "image_name": IMAGE_TEMPLATE.format(maven=maven, java=self.java),
                "build_command": BUILD_COMMAND,
                "test_command": TEST_COMMAND,
                "file_path": task.file_path,
                "PASS_TO_PASS": pass_to_pass,
                "FAIL_TO_PASS": fail_to_pass,
                "intent": task.intent,
                "intent_type": INTENT_TYPE,
            },
        }


def resolve_commit(repo_dir: Path, commit: str) -> str:
    sha = git_text(repo_dir, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}", check=False).strip()
    if not sha:
        raise InputError(f"no commit {commit!r} in {repo_dir}")
    return sha


def build_realcode(
    config: RealcodeBuildConfig, state_file: Path, progress: Callable[[str], None] = print
) -> RealcodeBuildResult:
    """Every stage at ``config.commit``; ``state_file`` makes the build resumable."""
    if config.max_instances is not None and config.max_instances < 1:
        raise InputError(f"--max must be at least 1, not {config.max_instances}")
    if config.min_statements < 1:
        raise InputError(f"--min-statements must be at least 1, not {config.min_statements}")
    commit = resolve_commit(config.repo_dir, config.commit)
    state = _State(state_file, commit)
    workspace = Workspace.create(config.repo_dir, commit, "", parent=config.work_dir)
    try:
        return _build(config, workspace, commit, state, progress)
    finally:
        workspace.remove()


def _build(
    config: RealcodeBuildConfig,
    workspace: Workspace,
    commit: str,
    state: _State,
    progress: Callable[[str], None],
) -> RealcodeBuildResult:
    tasks, rejections = production_tasks(workspace.path, config.min_statements)
    classes = declared_tests(workspace.path)
    progress(
        f"{config.repo} @ {commit[:12]}: {len(tasks)} candidate methods, {len(rejections)} other methods, "
        f"{len(classes)} test classes ({len(state.classes)} already run)"
    )
    if not classes:
        raise InputError(f"{config.repo} at {commit[:12]} has no test methods under {MAVEN.test_sources}")
    builder = _Builder(config, workspace, commit)
    for index, (name, tests) in enumerate(classes.items(), 1):
        if name not in state.classes:
            state.add(builder.run_class(name, tests))
            entry = state.classes[name]
            passed = sum(1 for s in entry["outcomes"].values() if s == PASSED)
            progress(
                f"[class {index}/{len(classes)}] {name}: {entry['status']}, {passed}/{len(tests)} passed"
            )

    outcomes = {
        test: status for entry in state.classes.values() for test, status in entry["outcomes"].items()
    }
    passing: dict[str, list[TestId]] = {}
    seconds: dict[str, float] = {}
    for task in tasks:
        covering = [name for name in classes if covers(state.classes[name]["covered"], task)]
        tests = [t for name in covering for t in classes[name] if outcomes.get(str(t)) == PASSED]
        if not covering:
            rejections[task.key] = "not covered by any test"
        elif not tests:
            rejections[task.key] = "no passing test covers it"
        else:
            passing[task.key] = tests
            seconds[task.key] = sum(float(state.classes[name].get("seconds", 0.0)) for name in covering)

    builder_rows: list[dict[str, Any]] = []
    for task in spread(t for t in tasks if t.key in passing):
        if config.max_instances is not None and len(builder_rows) >= config.max_instances:
            rejections[task.key] = f"over --max {config.max_instances}"
            continue
        tests = passing[task.key]
        stored = task.key in state.stubs
        if not stored:
            state.add(builder.run_stub(task, tests, seconds[task.key]))
        entry = state.stubs[task.key]
        how = " (stored)" if stored else ""
        if "rejected" in entry:
            rejections[task.key] = entry["rejected"]
            progress(f"[method] {task.key}{how}: rejected: {entry['rejected']}")
            continue
        fail_to_pass = [card_test_id(t) for t in tests if entry["outcomes"].get(str(t)) != PASSED]
        if config.require_fail_to_pass and not fail_to_pass:
            rejections[task.key] = "the stub fails no test"
            progress(f"[method] {task.key}{how}: rejected: the stub fails no test")
            continue
        builder_rows.append(builder.row(task, [card_test_id(t) for t in tests], fail_to_pass))
        progress(
            f"[method {len(builder_rows)}] {task.key}{how}: "
            f"{len(tests)} PASS_TO_PASS, {len(fail_to_pass)} FAIL_TO_PASS"
        )
    for number, row in enumerate(builder_rows):
        row["meta"]["id"] = number
    return RealcodeBuildResult(builder_rows, rejections, commit)


# -- the command ----------------------------------------------------------------------------
def main(args: argparse.Namespace) -> int:
    """``tebench build --benchmark realcode``: the parsed arguments of ``tebench build``."""
    from pytest_tebench.benchmarks.building import open_environment
    from pytest_tebench.instance.datasets import write_dataset

    history = {
        "--since": args.since,
        "--until": args.until,
        "--rev": args.rev != "HEAD",
        "-j": args.jobs != 1,
        "--retry-unsupported": args.retry_unsupported,
    }
    misplaced = [name for name, value in history.items() if value]
    if misplaced:
        raise InputError(
            f"{', '.join(misplaced)}: history options of the tebench builder; realcode takes --commit"
        )
    out = Path(args.out)
    with open_environment(args, what="the tests") as environment:
        config = RealcodeBuildConfig(
            **environment,
            commit=args.commit or "HEAD",
            max_instances=args.max,
            min_statements=DEFAULT_MIN_STATEMENTS if args.min_statements is None else args.min_statements,
            require_fail_to_pass=args.require_fail_to_pass,
        )
        result = build_realcode(config, out.with_name(out.name + ".state.jsonl"), progress=print)
    write_dataset(result.rows, out)
    rejections = out.with_name(out.name + ".rejections.json")
    rejections.write_text(
        json.dumps(
            {"commit": result.commit, "counts": result.reason_counts(), "methods": result.rejections},
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    with_f2p = sum(1 for row in result.rows if row["meta"]["FAIL_TO_PASS"])
    print(
        f"{len(result.rows)} instances written to {out} ({with_f2p} with FAIL_TO_PASS); "
        f"{len(result.rejections)} methods left out:"
    )
    for reason, count in result.reason_counts().items():
        print(f"  {count:5d}  {reason}")
    print(f"reasons per method: {rejections}")
    return 0
