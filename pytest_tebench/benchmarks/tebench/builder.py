"""Build TEBench instances from a Maven repository's history, the way the paper built them.

Stages per commit (each rejection carries a reason for the side report):

1. **Static filter**: a non-merge commit with a parent, in the date window, touching at most 20
   files, changing production *method bodies* under ``src/main`` (found with the Java parser:
   a method or constructor whose tokens changed, or a new one) and 5-200 non-blank test lines.
2. **Split and check**: ``source_patch`` = the non-test files, ``test_patch`` = the test files
   (``git diff --binary --full-index``); applied to V-1 in that order they must reproduce V0's
   tree exactly.
3. **Execution** (the project's executor): V0 builds and gold's changed tests pass, by
   evaluation's own check of gold on V0 (:mod:`.gold_run`: the JDK learnt from the log, other
   JDKs before "does not compile", failing tests by class and in the module's full test run
   before "fail"); V-0.5 compiles; the existing tests gold modifies or deletes, run in their
   V-0.5 versions, give the labels (``breaking`` if one fails to compile or fails, ``stale``
   if one passes; ``missing`` when gold adds tests).
4. **Dedup** by ``(project, Class.method)``: a later commit touching a test method an earlier
   instance touched is dropped.

Static checks run in this process; execution runs in a thread pool (``-j``), each commit in a
workspace of its own. Finished commits are appended to a state file, so an interrupted build
resumes where it stopped.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench import __version__
from pytest_tebench.benchmarks.building import BuildEnvironment
from pytest_tebench.benchmarks.tebench.gold_record import unjudged_error
from pytest_tebench.benchmarks.tebench.gold_run import GoldOnV0
from pytest_tebench.benchmarks.tebench.gold_run import GoldRunner
from pytest_tebench.benchmarks.tebench.identification import TestChanges
from pytest_tebench.benchmarks.tebench.identification import test_changes
from pytest_tebench.benchmarks.tebench.update_methods import selection_of
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.java.parser import identity_key
from pytest_tebench.java.parser import overloaded_names
from pytest_tebench.java.parser import parse_java
from pytest_tebench.run.maven.selection import run_inherited
from pytest_tebench.run.maven.surefire import PASSED
from pytest_tebench.run.maven.surefire import SKIPPED
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.workspace.checkout import BadInstance
from pytest_tebench.workspace.checkout import Workspace
from pytest_tebench.workspace.checkout import source_texts
from pytest_tebench.workspace.gitcmd import file_at
from pytest_tebench.workspace.gitcmd import git_text
from pytest_tebench.workspace.layout import MAVEN
from pytest_tebench.workspace.layout import is_test_path
from pytest_tebench.workspace.patches import parse_patch
from pytest_tebench.workspace.textdiff import UndecodableDiff
from pytest_tebench.workspace.textdiff import text_diff

MAX_FILES = 20
MIN_TEST_LINES = 5
MAX_TEST_LINES = 200
#: Decisions recorded by another version are made again: /2 checks gold on V0 as evaluation does
#: (:mod:`.gold_run`), so a commit the simpler check of /1 rejected may be an instance now; /3
#: tries gold's failing tests on every other JDK before it rejects the commit, and records a failure
#: that shows the build's resource limits as unsupported here; /4 pins a build plugin the POMs
#: leave without a version to its release by V0's date (run/maven/plugin_pins); /5 selects a test
#: whose name is not ASCII by the names javac gives it in other encodings too (run/maven/surefire);
#: /6 finds the module of a class declared in a file of another name (run/maven/reactor); /7
#: never rejects a commit for a build that died while the kernel killed for memory (run/oom); /8
#: identifies gold's changes in a file with syntax errors by the tokens it left standing
#: (identification.IDENTIFICATION_RULES 2); /9 sends a file that is not UTF-8 (a Latin-1 source) as
#: a binary piece (workspace/textdiff), where its replacement characters made gold not apply, and
#: reads it byte for byte (IDENTIFICATION_RULES 3).
BUILDER_VERSION = f"{__version__}/9"


@dataclass(frozen=True)
class Commit:
    sha: str
    parent: str
    date: str
    message: str


@dataclass(frozen=True)
class Candidate:
    """A commit that passed the static filter, with everything the row needs but labels."""

    commit: Commit
    row: dict[str, Any]


@dataclass(frozen=True)
class BuildConfig(BuildEnvironment):
    """The repository and toolchain (shared with the RealCodeJava builder), and the history."""

    since: str | None = None
    until: str | None = None
    rev: str = "HEAD"
    max_instances: int | None = None
    jobs: int = 1
    #: Build again the commits recorded as unbuildable here (``--retry-unsupported``).
    retry_unsupported: bool = False


# -- stage 1 and 2: static ----------------------------------------------------------------
def list_commits(repo_dir: Path, *, rev: str, since: str | None, until: str | None) -> list[Commit]:
    """Commits reachable from ``rev``, oldest first; merges are left out (their parent list is
    kept so a root commit can be reported)."""
    args = ["log", "--no-merges", "--reverse", "--format=%H%x00%P%x00%cI%x00%B%x1e"]
    args += [f"--since={since}"] if since else []
    args += [f"--until={until}"] if until else []
    raw = git_text(repo_dir, *args, rev)
    commits = []
    for raw_entry in raw.split("\x1e"):
        entry = raw_entry.strip("\n")
        if not entry:
            continue
        sha, parents, date, message = entry.split("\x00", 3)
        commits.append(Commit(sha, parents.split()[0] if parents else "", date, message.strip()))
    return commits


def static_check(repo_dir: Path, commit: Commit, project: str, repo: str) -> Candidate | str:
    """A :class:`Candidate`, or the reason the commit is rejected."""
    if not commit.parent:
        return "root commit: no parent, so no V-1"
    base, head = commit.parent, commit.sha
    status = git_text(repo_dir, "diff", "--name-status", "-z", "-M", base, head).split("\0")
    paths: list[tuple[str, ...]] = []
    index = 0
    while index < len(status) and status[index]:
        width = 3 if status[index][0] in "RC" else 2
        paths.append(tuple(status[index + 1 : index + width]))
        index += width
    if len(paths) > MAX_FILES:
        return f"more than {MAX_FILES} changed files ({len(paths)})"
    tests = [p for p in paths if all(is_test_path(x) for x in p)]
    others = [p for p in paths if not all(is_test_path(x) for x in p)]
    if any(any(is_test_path(x) for x in p) for p in others):
        return "a file moves across the src/test boundary"
    if not tests:
        return "no change under src/test"
    test_paths = sorted({x for p in tests for x in p})
    other_paths = sorted({x for p in others for x in p})
    if not _changes_method_bodies(repo_dir, base, head, other_paths):
        return "no production method-body change under src/main"
    test_lines = _nonblank_changed_lines(repo_dir, base, head, test_paths)
    if not MIN_TEST_LINES <= test_lines <= MAX_TEST_LINES:
        return f"changed test lines outside {MIN_TEST_LINES}-{MAX_TEST_LINES} ({test_lines})"

    def patch(selected: list[str]) -> str:
        # a Latin-1 source goes as a binary piece: replacement characters would not apply
        return text_diff(repo_dir, base, head, selected) if selected else ""

    try:
        source_patch, test_patch = patch(other_paths), patch(test_paths)
    except UndecodableDiff as exc:
        return str(exc)

    row: dict[str, Any] = {
        "instance_id": f"{project}__{head[:8]}",
        "project": project,
        "repo": repo,
        "v_minus_1_commit": base,
        "v0_commit": head,
        "v0_date": commit.date,
        "v0_message": commit.message,
        "labels": [],
        "changed_test_methods": [],
        "new_test_files": [],
        "new_test_methods": "{}",
        "num_changed_files": len(paths),
        "src_changed_lines": _nonblank_changed_lines(repo_dir, base, head, other_paths),
        "test_changed_lines": test_lines,
        "source_patch": source_patch,
        "test_patch": test_patch,
    }
    return Candidate(commit, row)


def _changes_method_bodies(repo_dir: Path, base: str, head: str, paths: Iterable[str]) -> bool:
    for path in paths:
        if not MAVEN.is_production_java(path):
            continue
        # decoded alike: a Latin-1 literal changed from one letter to another is a change
        old, new = source_texts(file_at(repo_dir, base, path), file_at(repo_dir, head, path))
        if new is None:
            continue
        new_file = parse_java(new)
        old_file = parse_java(old) if old is not None else None
        overloaded = overloaded_names(*(f for f in (old_file, new_file) if f is not None))
        before = {identity_key(m, overloaded): m.tokens for m in (old_file.methods if old_file else ())}
        for method in new_file.methods:
            if before.get(identity_key(method, overloaded)) != method.tokens:
                return True
    return False


def _nonblank_changed_lines(repo_dir: Path, base: str, head: str, paths: list[str]) -> int:
    if not paths:
        return 0
    diff = git_text(repo_dir, "diff", "-U0", "-M", "--no-color", "--no-ext-diff", base, head, "--", *paths)
    if not diff.strip():
        return 0
    return sum(
        1
        for piece in parse_patch(diff)
        for hunk in piece.hunks
        for _, text in (*hunk.removed(), *hunk.added())
        if text.strip()
    )


# -- stage 3: execution -------------------------------------------------------------------
def execute_check(candidate: Candidate, config: BuildConfig) -> dict[str, Any] | str:
    """Validate a candidate by building it; the finished row, or the rejection reason."""
    row = dict(candidate.row)
    try:
        workspace = Workspace.create(
            config.repo_dir, row["v_minus_1_commit"], row["source_patch"], parent=config.work_dir
        )
    except BadInstance as exc:
        return f"source_patch does not apply to V-1: {exc}"
    try:
        workspace.commit_gold(row["test_patch"])
        if (
            git_text(workspace.path, "rev-parse", "gold^{tree}").strip()
            != git_text(config.repo_dir, "rev-parse", f"{row['v0_commit']}^{{tree}}").strip()
        ):
            return "source_patch + test_patch do not reproduce V0's tree"
        gold = test_changes(workspace.changed_files("v-0.5", "gold"))
        if not gold.items:
            return "gold changes no test method"
        return _labelled(row, workspace, gold, config)
    except BadInstance as exc:
        return f"test_patch does not apply to V-0.5: {exc}"
    finally:
        workspace.remove()


def _labelled(
    row: dict[str, Any], workspace: Workspace, gold: TestChanges, config: BuildConfig
) -> dict[str, Any] | str:
    workspace.checkout("gold")  # gold's build files choose the first JDK
    # Gold's check on V0 is evaluation's own (gold_run), so no commit leaves a dataset for a
    # failure evaluation would have found to be the harness's: the JDK learnt from the log, the
    # compile ladder, failing tests by class and in the module's full test run, tests their
    # runner never runs left out. No coverage: labels need none. One gold run: a flakiness check
    # costs a launch per commit, and evaluation repeats gold anyway (--tebench-gold-runs).
    runner = GoldRunner(config.executor, gold_runs=1, network=config.network, forced_jdk=config.jdk)
    # the build's unversioned plugins at their release by V0's date, as evaluation pins them
    settings = config.run_settings(workspace.path, coverage=False, plugins_released_by=row["v0_date"])
    found = runner.gold_on_v0(workspace, selection_of(gold.methods), settings, project=config.repo)
    rejected = _gold_rejection(found)
    if rejected:
        return rejected
    old_tests = sorted(
        {
            TestId(_qualified(c.package, c.old.binary_class_name), c.old.name)
            for c in gold.methods
            if c.old is not None
        }
    )
    labels: set[str] = set()
    if old_tests:
        # on V-0.5 (checked out again by the check) with the settings gold's check settled on: its
        # JDK, and selection by class when gold's tests pass only so, as every prediction will run
        scoped = found.settings.scoped(workspace.path, old_tests)
        before = run_inherited(config.executor(), workspace.path, old_tests, scoped)
        if before.harness_failed or before.status.startswith("timeout"):
            raise HarnessError(
                f"{row['instance_id']}: V-0.5 build failed for harness reasons: {before.error}"
            )
        if not before.compile_ok:
            return "V-0.5 does not compile"
        if not before.test_compile_ok:
            labels.add("breaking")
        for outcome in before.tests:
            if outcome.status in (PASSED, SKIPPED):
                labels.add("stale")
            elif outcome.status != "not_run":
                labels.add("breaking")
    added = [c for c in gold.methods if c.kind == "added" and c.new is not None]
    if added:
        labels.add("missing")
    if not labels:
        return "no label: the old versions of gold's tests could not be run on V-0.5"
    new_methods: dict[str, list[str]] = {}
    for change in added:
        assert change.new is not None
        new_methods.setdefault(change.new.binary_class_name, []).append(change.new.name)
    row["labels"] = [label for label in ("breaking", "stale", "missing") if label in labels]
    row["changed_test_methods"] = sorted(
        {f"{c.new.binary_class_name}.{c.new.name}" for c in gold.methods if c.new is not None}
    )
    row["new_test_files"] = sorted({c.new_path or c.path for c in added})
    row["new_test_methods"] = json.dumps({k: sorted(set(v)) for k, v in sorted(new_methods.items())})
    row["_dedup"] = sorted(
        {f"{m.binary_class_name}.{m.name}" for c in gold.methods for m in (c.new or c.old,) if m is not None}
    )
    return row


def _gold_rejection(found: GoldOnV0) -> str:
    """Why gold's check on V0 rejects the commit ("" when it does not), worded as the builder's
    reasons always were ("V0 does not compile", "gold's changed tests fail on V0"), the check's
    own reason after."""
    if found.unjudged is not None:
        # Neither verdict blames the commit, so neither is its rejection: an external host is this
        # machine's environment (recorded as unsupported, like an artifact published nowhere
        # reachable), the harness's selection at fault is the harness's error (the next run tries
        # the commit again); evaluation raises the same for the same verdict.
        raise unjudged_error(found.unjudged.status, found.unjudged.reason)
    if not found.invalid:
        return ""
    if not (found.run.compile_ok and found.run.test_compile_ok):
        return f"V0 does not compile: {found.invalid}"
    if not found.selection:
        return found.invalid  # none of gold's tests left: the reason says why
    return f"gold's changed tests fail on V0: {found.invalid}"


def _qualified(package: str, binary: str) -> str:
    return f"{package}.{binary}" if package else binary


# -- the whole build -----------------------------------------------------------------------
@dataclass
class BuildResult:
    rows: list[dict[str, Any]]
    rejections: dict[str, str]  # commit sha -> reason

    def reason_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for reason in self.rejections.values():
            kind = reason.split(":")[0].split("(")[0].strip()
            counts[kind] = counts.get(kind, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def build(config: BuildConfig, state_file: Path, progress: Callable[[str], None] = print) -> BuildResult:
    """Run every stage over the history; ``state_file`` makes the build resumable."""
    done = _load_state(state_file)
    if config.retry_unsupported:
        done = {sha: entry for sha, entry in done.items() if not entry.get("unsupported")}
    commits = list_commits(config.repo_dir, rev=config.rev, since=config.since, until=config.until)
    lock = threading.Lock()
    pending: list[Candidate] = []
    for commit in commits:
        if commit.sha in done:
            continue
        outcome = static_check(config.repo_dir, commit, config.project, config.repo)
        if isinstance(outcome, str):
            done[commit.sha] = {"commit": commit.sha, "rejected": outcome}
            _append_state(state_file, done[commit.sha], lock)
        else:
            pending.append(outcome)
    progress(
        f"{len(commits)} commits, {len(pending)} to build, {len(commits) - len(pending)} already decided"
    )
    config.work_dir.mkdir(parents=True, exist_ok=True)

    def run(candidate: Candidate) -> None:
        unsupported = False
        try:
            outcome: dict[str, Any] | str = execute_check(candidate, config)
        except UnsupportedEnvironment as exc:
            # a fact about this machine and the commit (no JDK here fits, an artifact published
            # nowhere reachable): recorded, so later runs do not build it again unless asked to
            outcome, unsupported = f"unsupported environment: {exc}", True
        except HarnessError as exc:
            # not the commit's fault: reported, not remembered, so the next run tries it again
            with lock:
                done[candidate.commit.sha] = {
                    "commit": candidate.commit.sha,
                    "rejected": f"harness error: {exc}",
                }
                where = f"[{len(done)}/{len(commits)}] {candidate.commit.sha[:8]}"
                progress(f"{where} harness error (will retry): {exc}")
            return
        entry: dict[str, Any] = (
            {"commit": candidate.commit.sha, "rejected": outcome}
            if isinstance(outcome, str)
            else {"commit": candidate.commit.sha, "row": outcome}
        )
        if unsupported:
            entry["unsupported"] = True
        _append_state(state_file, entry, lock)
        with lock:
            done[candidate.commit.sha] = entry
            verdict = f"rejected: {outcome}" if isinstance(outcome, str) else f"instance {outcome['labels']}"
            progress(f"[{len(done)}/{len(commits)}] {candidate.commit.sha[:8]} {verdict}")

    with ThreadPoolExecutor(max_workers=max(1, config.jobs)) as pool:
        for future in [pool.submit(run, c) for c in pending]:
            future.result()
    return _finish(commits, done, config)


def _finish(commits: list[Commit], done: dict[str, dict[str, Any]], config: BuildConfig) -> BuildResult:
    rows: list[dict[str, Any]] = []
    rejections: dict[str, str] = {}
    seen: dict[str, str] = {}
    for commit in commits:  # chronological, so the earliest commit keeps a shared test method
        entry = done.get(commit.sha, {})
        if "rejected" in entry:
            rejections[commit.sha] = entry["rejected"]
            continue
        row = dict(entry["row"])
        keys = row.pop("_dedup", [])
        clash = sorted(k for k in keys if k in seen)
        if clash:
            rejections[commit.sha] = f"duplicate test method(s) of {seen[clash[0]]}: {', '.join(clash)}"
            continue
        if config.max_instances is not None and len(rows) >= config.max_instances:
            rejections[commit.sha] = f"over --max {config.max_instances}"
            continue
        seen.update({k: row["instance_id"] for k in keys})
        rows.append(row)
    return BuildResult(rows, rejections)


def _load_state(path: Path) -> dict[str, dict[str, Any]]:
    done: dict[str, dict[str, Any]] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a crash: that commit is simply redone
            if entry.get("builder") == BUILDER_VERSION:
                done[entry["commit"]] = entry
    return done


def _append_state(path: Path, entry: dict[str, Any], lock: threading.Lock) -> None:
    with lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({**entry, "builder": BUILDER_VERSION}) + "\n")
