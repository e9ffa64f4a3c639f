"""Gold's compiled test tree, stored once and reused: a launch compiles only what its tree changed.

On top of the stored production build (:mod:`~pytest_tebench.run.maven.prebuilt`), the first
trusted launch of a test tree (gold's) keeps what the ``test-compile`` phase left on the test side
of every built module: the classes in ``target/test-classes`` (with the test resources copied
there), annotation processors' sources in ``target/generated-test-sources`` and the compiler's own
state for the test compile. In a warm server that launch is gold's own ``mvn test``: the server
copies each module's test side aside before the module's first mojo after ``test-compile``
(``-Dtebench.testside=snapshot``, ``java/TebenchStoredOutputs.java``) and :func:`keep_snapshot`
stores it after the launch, so no launch of its own compiles the tree. Where that cannot be
trusted (the launch ran cold, failed, timed out, changed the test tree or wrote outside
``target/``: its tests may have), the tree is marked and the next trusted launch runs one offline
``mvn test-compile`` with the production compile skipped first, stored the same way. Every later
launch of the same production tree restores the stored test tree closest to its own, deletes the
classes of the sources :func:`~pytest_tebench.run.maven.compiled_tests.plan` says must be compiled
again, and runs its one ``mvn test`` with ``-Dmaven.compiler.useIncrementalCompilation=false``: the
compiler plugin then compiles the sources whose classes are missing or older than them (its
documented stale-source mode), with every other class of the tree on the class path. Gold's own
repeated runs compile nothing.

Why the verdict is the full compile's: the recompiled set is closed over mentions (see
:mod:`~pytest_tebench.run.maven.compiled_tests`), so every class kept is the one a full compile of
this tree writes; the set's classes are compiled by the project's own compiler execution with the
project's own options. Guarded after the launch, and compiled again whole when it fails (the full
compile then decides): a test compile error, or a build error, in a launch that compiled part of
the tree; any restored file the test compile may write besides classes (generated sources,
outputs that are not a copied resource: a processor's aggregate file) changed or gone.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import time
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_tebench import __version__
from pytest_tebench.jsonfiles import read_versioned_json
from pytest_tebench.locking import file_lock
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.maven import log as mavenlog
from pytest_tebench.run.maven.compiled_tests import GENERATED_TEST_SOURCES
from pytest_tebench.run.maven.compiled_tests import TEST_CLASSES
from pytest_tebench.run.maven.compiled_tests import ClassOrigin
from pytest_tebench.run.maven.compiled_tests import Plan
from pytest_tebench.run.maven.compiled_tests import class_origin
from pytest_tebench.run.maven.compiled_tests import plan
from pytest_tebench.run.maven.compiled_tests import scan_test_files
from pytest_tebench.run.maven.compiled_tests import tree_digest
from pytest_tebench.run.maven.prebuilt import MANIFEST
from pytest_tebench.run.maven.prebuilt import OFF
from pytest_tebench.run.maven.prebuilt import Prebuilt
from pytest_tebench.run.maven.prebuilt import PrebuiltUse
from pytest_tebench.run.maven.prebuilt import compile_launch
from pytest_tebench.run.maven.prebuilt import compiling_main
from pytest_tebench.run.maven.prebuilt import remove_tree
from pytest_tebench.run.maven.prebuilt import restore_production
from pytest_tebench.run.maven.prebuilt import store_whole
from pytest_tebench.run.maven.prebuilt import untracked_outside_targets
from pytest_tebench.run.maven.prebuilt import went_away
from pytest_tebench.run.maven.warm import SERVER_SWITCH

#: The compiler plugin's stale-source mode: only sources newer than their classes are compiled.
STALE_ONLY = "-Dmaven.compiler.useIncrementalCompilation=false"
#: The test side of a module's ``target/``, as the ``test-compile`` phase leaves it.
TEST_SIDE = (TEST_CLASSES, GENERATED_TEST_SOURCES, "target/maven-status/maven-compiler-plugin/testCompile")
#: Restored generated sources get this modification time: older than every restored class, so
#: no generated source counts as stale.
_OLD = 1_000_000_000
#: Has a warm server keep each module's test side, under :data:`SNAPSHOT_DIR`, as the
#: ``test-compile`` phase left it (a cold ``mvn`` ignores it).
SNAPSHOT_SWITCH = f"{SERVER_SWITCH}testside=snapshot"
SNAPSHOT_DIR = "target/tebench-test-side"
#: Written last into a module's :data:`SNAPSHOT_DIR`: its snapshot is whole.
SNAPSHOT_DONE = "done"
#: Beside a stored tree's entry: its launch kept no snapshot, the next one compiles it apart.
NO_SNAPSHOT = ".no-snapshot"

REUSED = "reused"
BUILT = "built"
#: The launch compiles the whole test tree and its test side is stored after it (:func:`keep_snapshot`).
SNAPSHOT = "snapshot"


@dataclass(frozen=True)
class PendingSnapshot:
    """What :func:`keep_snapshot` needs after a :data:`SNAPSHOT` launch."""

    entry: Path
    #: The test tree's files before the launch (:func:`scan_test_files`).
    current: dict[str, str]
    #: Untracked paths outside every ``target/`` before the launch.
    before: tuple[str, ...]
    modules: tuple[str, ...]


@dataclass(frozen=True)
class CompiledTestsUse:
    """What :func:`prepare` did for one launch on the stored production build."""

    launch: BuildStep
    #: :data:`REUSED` (a stored test tree restored), :data:`BUILT` (stored by this launch) or ``off``.
    state: str
    digest: str = ""
    plan: Plan | None = None
    note: str = ""
    #: The ``mvn test-compile`` this call ran (``None``: none).
    compiled: StepResult | None = None
    restore_seconds: float = 0.0
    #: Kept files of the restored tree (workspace-relative) -> SHA-256, checked after the launch.
    kept: tuple[tuple[str, str], ...] = ()
    #: For a :data:`SNAPSHOT` launch, until :func:`keep_snapshot` stored its test side.
    pending: PendingSnapshot | None = None

    @property
    def used(self) -> bool:
        return self.state in (REUSED, BUILT)

    @property
    def partial(self) -> bool:
        """The launch compiles only part of the test tree."""
        return self.used and self.plan is not None and len(self.plan.recompile) < self.plan.sources

    def describe(self) -> str:
        if not self.used:
            return f"tests off: {self.note}"
        return f"tests {self.state} {self.digest}: {self.plan.describe() if self.plan else self.note}"


def stale_only(launch: BuildStep) -> BuildStep:
    return replace(launch, argv=(*launch.argv[:-1], STALE_ONLY, launch.argv[-1]))


def _side(module: str, relative: str) -> str:
    return f"{module}/{relative}" if module else relative


def _files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()) if root.is_dir() else []


def prepare(
    executor: Executor,
    workspace: Path,
    prebuilt: Prebuilt,
    production: PrebuiltUse,
    *,
    modules: tuple[str, ...],
    maven_repo: Path,
) -> CompiledTestsUse:
    """Restore the stored test tree closest to the workspace's (compiling and storing the
    workspace's own first when ``prebuilt.create`` and none is stored for it) over the restored
    production build, and return the launch to run; ``off`` leaves ``production.launch`` as it is."""
    launch = production.launch
    if not production.used:
        return CompiledTestsUse(launch, OFF, note="no stored production build")
    try:
        current = scan_test_files(workspace, modules)
    except OSError as exc:
        return CompiledTestsUse(launch, OFF, note=f"cannot read the test tree ({exc})")
    digest = tree_digest(current)
    store = prebuilt.store / production.key / "tests"
    if prebuilt.create and read_versioned_json(store / digest / MANIFEST) is None:
        if not (store / f"{digest}{NO_SNAPSHOT}").exists():
            return _snapshot(workspace, launch, store / digest, current=current, modules=modules)
        with file_lock(prebuilt.store / "locks" / f"{production.key}-{digest}.lock"):
            if read_versioned_json(store / digest / MANIFEST) is None:
                return _build(
                    executor,
                    workspace,
                    production,
                    store / digest,
                    current=current,
                    modules=modules,
                    maven_repo=maven_repo,
                )
    return _reuse(workspace, launch, store, current=current, modules=modules)


def _snapshot(
    workspace: Path, launch: BuildStep, entry: Path, *, current: dict[str, str], modules: tuple[str, ...]
) -> CompiledTestsUse:
    """The launch itself compiles the whole test tree, and a warm server keeps its test side."""
    before = tuple(untracked_outside_targets(workspace, modules))
    return CompiledTestsUse(
        replace(launch, argv=(*launch.argv[:-1], SNAPSHOT_SWITCH, launch.argv[-1])),
        SNAPSHOT,
        entry.name,
        note="the whole test tree compiled in this launch",
        pending=PendingSnapshot(entry, current, before, modules),
    )


def keep_snapshot(
    workspace: Path, use: CompiledTestsUse, tested: StepResult, *, trusted: bool
) -> CompiledTestsUse:
    """After a :data:`SNAPSHOT` launch: the test side the warm server kept, stored as
    :func:`_build` stores its own (state :data:`BUILT`); or, when it cannot be trusted (``trusted``
    false: the launch failed on the harness's side), the tree marked so the next trusted launch
    compiles it apart (state ``off``). Any other ``use`` comes back as it is."""
    pending = use.pending
    if pending is None:
        return use
    built = [m for m in pending.modules if (workspace / _side(m, SNAPSHOT_DIR) / SNAPSHOT_DONE).is_file()]
    why = (
        _untrusted_snapshot(workspace, pending, tested, set(built)) if trusted else "the launch is run again"
    )
    if not why:
        classes, generated = _compiled_side(workspace, built, snapshot=True)
        record: dict[str, Any] = {
            "harness_version": __version__,
            "created": time.time(),
            "compile_seconds": round(tested.duration, 3),
            "files": pending.current,
            "usable": True,
            "modules": built,
            "classes": classes,
            "generated": generated,
        }
        sources = sorted(p for p in pending.current if p.endswith(".java"))
        _store(pending.entry, workspace, built, sources, record, snapshot=True)
        return replace(use, state=BUILT, pending=None)
    marker = pending.entry.parent / f"{pending.entry.name}{NO_SNAPSHOT}"
    with contextlib.suppress(OSError):
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(why + "\n", encoding="utf-8")
    return replace(use, state=OFF, note=f"not kept: {why}", pending=None)


def _untrusted_snapshot(workspace: Path, pending: PendingSnapshot, tested: StepResult, kept: set[str]) -> str:
    """Why the launch's snapshot (``kept``: the modules whose test side is whole) cannot stand for a
    ``mvn test-compile`` of the tree ("" it can)."""
    if tested.timed_out:
        return "the launch timed out"
    kind = mavenlog.diagnose_test_step(tested.output, tested.exit_code).kind
    if kind in (mavenlog.TEST_COMPILE_ERROR, mavenlog.COMPILE_ERROR, mavenlog.BUILD_ERROR):
        return f"the launch ended in a {kind.replace('_', ' ')}"
    compiled = {m for m in pending.modules if (workspace / _side(m, TEST_CLASSES)).is_dir()}
    if not kept:
        return "no module's test side was kept (a cold launch keeps none)"
    if kept != compiled:
        return f"the test side of {', '.join(sorted(kept ^ compiled))} was not kept"
    written = sorted(set(untracked_outside_targets(workspace, pending.modules)) - set(pending.before))
    if written:
        return f"the launch wrote outside target/: {', '.join(written[:5])}"
    try:
        if scan_test_files(workspace, pending.modules) != pending.current:
            return "the launch changed the test tree"
    except OSError as exc:
        return f"cannot read the test tree ({exc})"
    return ""


def _candidates(store: Path, current: dict[str, str]) -> list[tuple[int, str, dict[str, Any]]]:
    found = []
    for entry in sorted(store.iterdir()) if store.is_dir() else []:
        manifest = read_versioned_json(entry / MANIFEST)
        if manifest is None or not manifest.get("usable"):
            continue
        files = manifest["files"]
        differing = sum(1 for p in {*files, *current} if files.get(p) != current.get(p))
        found.append((differing, entry.name, manifest))
    return sorted(found, key=lambda found: (found[0], found[1]))


def _reuse(
    workspace: Path,
    launch: BuildStep,
    store: Path,
    *,
    current: dict[str, str],
    modules: tuple[str, ...],
) -> CompiledTestsUse:
    try:
        candidates = _candidates(store, current)
    except OSError as exc:  # the store pruned meanwhile
        return CompiledTestsUse(launch, OFF, note=went_away(exc))
    if not candidates:
        return CompiledTestsUse(launch, OFF, note="no stored test tree of this production build")
    _, digest, manifest = candidates[0]
    entry = store / digest
    gold_files: dict[str, str] = manifest["files"]
    differing = [p for p in {*gold_files, *current} if gold_files.get(p) != current.get(p)]
    try:
        gold_sources = {
            p: (entry / "sources" / p).read_bytes() for p in differing if (entry / "sources" / p).is_file()
        }
        generated = {p: (entry / "trees" / p).read_bytes() for p in manifest["generated"]}
    except OSError as exc:
        return CompiledTestsUse(launch, OFF, digest, note=went_away(exc))
    classes = {path: ClassOrigin(name, source) for path, (name, source) in manifest["classes"].items()}
    try:
        decided = plan(
            workspace,
            modules=modules,
            gold_files=gold_files,
            gold_sources=gold_sources,
            current_files=current,
            classes=classes,
            generated=generated,
        )
    except (OSError, ValueError) as exc:
        return CompiledTestsUse(launch, OFF, digest, note=f"cannot read the test tree ({exc})")
    if decided.off:
        return CompiledTestsUse(launch, OFF, digest, decided, note=decided.off)
    started = time.perf_counter()
    try:
        _overlay(entry, workspace, manifest["modules"])
    except OSError as exc:
        # removed while this copied (``tebench cache prune`` during a run): the launch compiles
        # the whole test tree over the restored production build, as with no stored tree
        _remove_test_side(workspace, manifest["modules"])
        return CompiledTestsUse(launch, OFF, digest, note=went_away(exc))
    for path in decided.delete:
        (workspace / path).unlink(missing_ok=True)
    kept = _kept(workspace, manifest["modules"], current, deleted=set(decided.delete))
    return CompiledTestsUse(
        stale_only(launch),
        REUSED,
        digest,
        decided,
        restore_seconds=time.perf_counter() - started,
        kept=kept,
    )


def _overlay(entry: Path, workspace: Path, modules: list[str]) -> None:
    """Copy the stored test side into each module's restored ``target/`` (stamped now, newer than
    every source), generated sources stamped old."""
    for module in modules:
        for relative in TEST_SIDE:
            stored = entry / "trees" / _side(module, relative)
            if stored.is_dir():
                shutil.copytree(
                    stored, workspace / _side(module, relative), symlinks=True, copy_function=shutil.copy
                )
        for path in _files_under(workspace / _side(module, GENERATED_TEST_SOURCES)):
            os.utime(path, (_OLD, _OLD))


def _remove_test_side(workspace: Path, modules: list[str]) -> None:
    for module in modules:
        for relative in TEST_SIDE:
            remove_tree(workspace / _side(module, relative))


def _resource_copies(module: str, current: dict[str, str]) -> set[str]:
    """Every path inside ``test-classes`` a test resource of the module may be copied to: each
    tail of a file's path under the module's ``src/test`` (the resource root is the POM's to
    say), so a copy is never mistaken for the compiler's."""
    tree = _side(module, "src/test/")
    tails: set[str] = set()
    for path in current:
        if path.startswith(tree):
            parts = path.split("/")
            tails.update("/".join(parts[index:]) for index in range(1, len(parts)))
    return tails


def _kept(
    workspace: Path, modules: list[str], current: dict[str, str], *, deleted: set[str]
) -> tuple[tuple[str, str], ...]:
    """What the test compile may have written besides classes, restored from gold's tree: the
    files of ``test-classes`` that are neither classes nor a test resource's copy (a processor's
    aggregate file, JMH's ``META-INF/BenchmarkList``) and the generated sources. Class files are
    left out: in the stale-source mode ``javac`` writes only the classes of the sources it was
    given, which were deleted first, and a plugin after the compile (gson's ProGuard rewrites a
    test class in ``process-test-classes``) does to the restored classes what it does to freshly
    compiled ones."""
    kept = []
    for module in modules:
        copies = _resource_copies(module, current)
        classes_root = workspace / _side(module, TEST_CLASSES)
        for path in _files_under(classes_root):
            relative = path.relative_to(workspace).as_posix()
            inner = path.relative_to(classes_root).as_posix()
            if inner.endswith(".class") or relative in deleted or inner in copies:
                continue
            kept.append((relative, _sha256(path)))
        for path in _files_under(workspace / _side(module, GENERATED_TEST_SOURCES)):
            kept.append((path.relative_to(workspace).as_posix(), _sha256(path)))
    return tuple(kept)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def changed_kept_file(workspace: Path, use: CompiledTestsUse) -> str:
    """The first kept file of the restored tree the launch changed or removed ("" none)."""
    for relative, digest in use.kept:
        path = workspace / relative
        if path.is_symlink() or not path.is_file() or _sha256(path) != digest:
            return relative
    return ""


def needs_full_compile(workspace: Path, use: CompiledTestsUse, tested: StepResult) -> str:
    """Why a launch on a restored test tree cannot give the verdict ("" it can)."""
    if not use.used:
        return ""
    if use.partial and not tested.timed_out:
        kind = mavenlog.diagnose_test_step(tested.output, tested.exit_code).kind
        if kind in (mavenlog.TEST_COMPILE_ERROR, mavenlog.COMPILE_ERROR, mavenlog.BUILD_ERROR):
            return f"a {kind.replace('_', ' ')} in a partial test compile"
    changed = changed_kept_file(workspace, use)
    return f"the launch changed {changed}" if changed else ""


def _build(
    executor: Executor,
    workspace: Path,
    production: PrebuiltUse,
    entry: Path,
    *,
    current: dict[str, str],
    modules: tuple[str, ...],
    maven_repo: Path,
) -> CompiledTestsUse:
    """Compile the test tree, store its test side, and restore it for this launch."""
    launch = production.launch
    before = untracked_outside_targets(workspace, modules)
    compiled = executor.run(
        workspace, compile_launch(launch, goal="test-compile", name="prebuild-tests"), maven_repo=maven_repo
    )
    record: dict[str, Any] = {
        "harness_version": __version__,
        "created": time.time(),
        "compile_seconds": round(compiled.duration, 3),
        "files": current,
    }
    reason = ""
    if compiled.timed_out or not compiled.ok:
        why = (
            "timed out"
            if compiled.timed_out
            else mavenlog.diagnose_build(compiled.output, compiled.exit_code).summary
        )
        reason = f"the test compile failed ({why})"
    else:
        written = sorted(set(untracked_outside_targets(workspace, modules)) - set(before))
        if written:
            reason = f"the test compile writes outside target/: {', '.join(written[:5])}"
    built = [m for m in modules if (workspace / _side(m, TEST_CLASSES)).is_dir()]
    if not reason:
        classes, generated = _compiled_side(workspace, built, snapshot=False)
        record.update(usable=True, modules=built, classes=classes, generated=generated)
        _store(entry, workspace, built, sorted(p for p in current if p.endswith(".java")), record)
    else:
        _store(entry, workspace, [], [], {**record, "usable": False, "reason": reason})
    # this launch runs on exactly what later launches get: production restored, then the tests
    try:
        restore_production(production_entry(entry), workspace, modules)
    except OSError as exc:  # pruned meanwhile: the launch compiles production and tests
        return CompiledTestsUse(
            compiling_main(launch), OFF, entry.name, note=went_away(exc), compiled=compiled
        )
    if reason:
        return CompiledTestsUse(launch, OFF, entry.name, note=reason, compiled=compiled)
    use = _reuse(workspace, launch, entry.parent, current=current, modules=modules)
    return replace(use, state=BUILT if use.digest == entry.name else use.state, compiled=compiled)


def production_entry(tests_entry: Path) -> Path:
    """The stored production build a stored test tree belongs to (``<key>/tests/<digest>``)."""
    return tests_entry.parent.parent


def _kept_side(module: str, relative: str, *, snapshot: bool) -> str:
    """Where a module's test side ``relative`` (one of :data:`TEST_SIDE`) is read from to be
    stored: in place, or (``snapshot``) where the warm server kept it."""
    return _side(module, f"{SNAPSHOT_DIR}/{relative.removeprefix('target/')}" if snapshot else relative)


def _compiled_side(
    workspace: Path, modules: list[str], *, snapshot: bool
) -> tuple[dict[str, list[str]], list[str]]:
    """The built modules' test classes (workspace path -> class name and ``SourceFile``) and
    generated test sources, read where :func:`_kept_side` says."""
    classes: dict[str, list[str]] = {}
    generated: list[str] = []
    for module in modules:
        for relative in (TEST_CLASSES, GENERATED_TEST_SOURCES):
            root = workspace / _kept_side(module, relative, snapshot=snapshot)
            for path in _files_under(root):
                name = f"{_side(module, relative)}/{path.relative_to(root).as_posix()}"
                if relative == GENERATED_TEST_SOURCES:
                    generated.append(name)
                elif path.suffix == ".class":
                    origin = class_origin(path.read_bytes())
                    classes[name] = [origin.name, origin.source_file] if origin else ["", ""]
    return classes, generated


def _store(
    entry: Path,
    workspace: Path,
    modules: list[str],
    sources: list[str],
    manifest: dict[str, Any],
    *,
    snapshot: bool = False,
) -> None:
    """Each module's test side (``snapshot``: as the warm server kept it, moved rather than
    copied: the copy is the harness's own and nothing reads it again) and the tree's Java
    sources, stored whole."""

    def fill(staging: Path) -> None:
        for module in modules:
            for relative in TEST_SIDE:
                source = workspace / _kept_side(module, relative, snapshot=snapshot)
                if source.is_dir() and not source.is_symlink():
                    _move_or_copy(source, staging / "trees" / _side(module, relative), move=snapshot)
        for path in sources:
            (staging / "sources" / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(workspace / path, staging / "sources" / path, follow_symlinks=False)

    store_whole(entry, fill, manifest)


def _move_or_copy(source: Path, target: Path, *, move: bool) -> None:
    """``source`` copied to ``target`` (links as links), or moved there when ``move`` and both lie
    on one file system."""
    if move:
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(source, target)
            return
        except OSError:
            pass  # another file system (a cache elsewhere): copied
    shutil.copytree(source, target, symlinks=True)
