"""Production code compiled once per tree: stored after one ``mvn compile``, restored into later launches.

Gold's runs and every prediction's run of a TEBench instance build the same production code
(V-0.5's: the gold and prediction patches only change the test tree), yet each ``mvn test``
compiles it again. Here the first trusted launch of a tree (gold's, on V0) runs one offline
``mvn compile`` with exactly the flags, JDK, Maven and reactor scope of its test launch, keeps
every built module's ``target/`` as the ``compile`` phase left it (classes, copied resources,
generated sources, multi-release ``META-INF/versions``, the compiler's state), and the launch and
every later one with the same key restore it and run ``mvn test -Dmaven.main.skip=true``.

Why this gives the same build: ``maven.main.skip`` (maven-compiler-plugin 3.1 and later: every
execution of ``compiler:compile``, jsoup's ``java11`` one included) only skips the main compile;
every other plugin of the lifecycle runs as before: resources are copied again (same content),
generated sources are generated again, ``process-classes`` plugins (bundle manifests, bytecode
tools) run on the classes as ``compile`` left them, test sources are compiled against the restored
classes, and reactor modules find each other's ``target/classes``. In a warm server one
exception (:data:`STORED_OUTPUT_MOJOS`): a bundle's manifest is written by the production launch,
stored with the tree and written back in place of the mojo (docs/building.md, "A bundle's
manifest, written once"); a cold ``mvn`` ignores the switch and runs it. An older compiler plugin
ignores the property and compiles again (only slower; the restored class files are newer than
the sources, so 2.x finds nothing stale). JaCoCo reads the classes the tests loaded, byte for
byte the restored ones.

The key (:func:`prebuilt_key`) is what decides the compile: every file outside the test trees
(sources, resources, every ``pom.xml``, ``.mvn/``; tracked, changed or untracked), the compile
launch's command line (flags, ``-pl`` scope, Maven distribution), the JDK, the executor's
toolchain (JDKs, image) and the Maven repository. A prediction's test-only change keeps the key;
one that touches production files (``--tebench-allow-non-test-edits``) gets its own.

Off (the launch compiles everything, as without this module), with the reason in the run's
``prebuilt`` field: a POM naming ``src/test`` (the production build might read the test tree), a
compile that fails (the ordinary launch then gives the verdict), a compile that writes outside
``target/`` (recorded, so it is tried once per key), a workspace that is not a git checkout, and a
tree no trusted run stored (predictions never store: only gold's checkout is compiled for reuse).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_tebench import __version__
from pytest_tebench.errors import HarnessError
from pytest_tebench.jsonfiles import read_versioned_json
from pytest_tebench.jsonfiles import write_json
from pytest_tebench.locking import file_lock
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.maven import log as mavenlog
from pytest_tebench.run.maven.warm import SERVER_SWITCH
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.layout import is_test_path

#: Skips every ``compiler:compile`` execution (maven-compiler-plugin >= 3.1), nothing else.
SKIP_MAIN = "-Dmaven.main.skip=true"
#: Mojos that only write the production tree from the compiled classes (a bundle's manifest):
#: in a warm server the production launch runs them once and later launches write back what they
#: wrote (``java/TebenchStoredOutputs.java``; a cold ``mvn`` is never given the switches:
#: :func:`~pytest_tebench.run.maven.warm.cold_argv`).
STORED_OUTPUT_MOJOS = (
    "org.apache.felix:maven-bundle-plugin:manifest",
    "biz.aQute.bnd:bnd-maven-plugin:bnd-process",
)
STORE_OUTPUTS = (
    f"{SERVER_SWITCH}outputs=store",
    f"{SERVER_SWITCH}outputs.mojos={','.join(STORED_OUTPUT_MOJOS)}",
)
REPLAY_OUTPUTS = f"{SERVER_SWITCH}outputs=replay"
#: Bumped when what is stored changes: older stored trees are then never used.
FORMAT = 1
MANIFEST = "manifest.json"

REUSED = "reused"
BUILT = "built"
OFF = "off"


@dataclass(frozen=True)
class Prebuilt:
    """Where compiled production trees are stored, and whether this run may compile one."""

    store: Path
    #: Compile and store a tree the store lacks (gold's trusted checkout); otherwise only reuse.
    create: bool = False


@dataclass(frozen=True)
class PrebuiltUse:
    """What :func:`prepare` did for one launch: the launch to run, and why."""

    launch: BuildStep
    #: :data:`REUSED`, :data:`BUILT` (compiled and stored by this launch) or :data:`OFF`.
    state: str
    key: str = ""
    #: Why it is off ("" otherwise).
    note: str = ""
    #: The ``mvn compile`` launch this call ran (``None``: none).
    compiled: StepResult | None = None
    #: Seconds spent restoring the stored ``target/`` trees.
    restore_seconds: float = 0.0

    @property
    def used(self) -> bool:
        return self.state in (REUSED, BUILT)

    def describe(self) -> str:
        """One line for the run's record: ``reused 3f2a...``, ``off: <why>``."""
        return f"{self.state} {self.key}" if self.used else f"{OFF}: {self.note}"


def compile_launch(launch: BuildStep, *, goal: str = "compile", name: str = "prebuild") -> BuildStep:
    """The ``mvn compile`` (or ``goal``) of a test launch (``mvn ... -Dtest=... test``): the same
    flags, scope, JDK and Maven (so the same profiles are active), no test selector, no JaCoCo
    agent."""
    argv = [arg for arg in launch.argv[:-1] if not arg.startswith("-Dtest=")]
    return replace(launch, name=name, argv=(*argv, goal), env=(), phase_marker="", phase_timeout=0.0)


def production_launch(launch: BuildStep) -> BuildStep:
    """The ``mvn compile`` that builds the tree to store: :func:`compile_launch`, and in a warm
    server on to ``process-classes`` for the :data:`STORED_OUTPUT_MOJOS` alone."""
    compile_step = compile_launch(launch)
    return replace(compile_step, argv=(*compile_step.argv[:-1], *STORE_OUTPUTS, compile_step.argv[-1]))


def skipping_main(launch: BuildStep) -> BuildStep:
    """The test launch with the main compile skipped, and the stored outputs written back (the
    goal stays last)."""
    return replace(launch, argv=(*launch.argv[:-1], SKIP_MAIN, REPLAY_OUTPUTS, launch.argv[-1]))


def compiling_main(launch: BuildStep) -> BuildStep:
    """The test launch as it was before :func:`skipping_main`."""
    return replace(launch, argv=tuple(arg for arg in launch.argv if arg not in (SKIP_MAIN, REPLAY_OUTPUTS)))


def went_away(exc: OSError) -> str:
    """Why a launch compiles what it meant to restore: the stored build was removed while it
    copied it (``tebench cache prune`` during a run, docs/building.md)."""
    return f"the stored build went away while restored ({exc.strerror or exc}: {exc.filename})"


def _git(workspace: Path, *args: str) -> bytes:
    return git(workspace, *args, timeout=120).stdout


def _outside_targets(path: str, modules: Iterable[str]) -> bool:
    """``path`` (``/``-separated; a directory ends in ``/``) lies in no module's ``target/`` (where
    the harness's own files go too)."""
    for module in modules:
        target = f"{module}/target" if module else "target"
        if path.rstrip("/") == target or path.startswith(target + "/"):
            return False
    return True


def untracked_outside_targets(workspace: Path, modules: Iterable[str]) -> list[str]:
    """Untracked paths, ignored ones included (a directory as one ``dir/`` entry), outside
    every module's ``target/``."""
    listed = _git(workspace, "ls-files", "-z", "--others", "--directory").decode("utf-8", "surrogateescape")
    return sorted(p for p in listed.split("\0") if p and _outside_targets(p, modules))


def _file_digest(path: Path) -> str:
    if path.is_symlink():
        return "link:" + os.readlink(path)
    if path.is_dir():
        return "dir:" + ",".join(
            f"{child.relative_to(path)}={_file_digest(child)}"
            for child in sorted(path.rglob("*"))
            if not child.is_dir() or child.is_symlink()
        )
    if not path.exists():
        return "absent"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def production_digest(workspace: Path, modules: Iterable[str]) -> str:
    """The content of every file outside the test trees (and ``target/``): git's blob ids of the
    tracked ones, the bytes of those changed on disk and of untracked ones."""
    chosen = tuple(modules)
    digest = hashlib.sha256()
    for entry in _git(workspace, "ls-files", "-z", "--stage").split(b"\0"):
        if entry and not is_test_path(entry.split(b"\t", 1)[1].decode("utf-8", "surrogateescape")):
            digest.update(entry + b"\0")
    changed = _git(workspace, "diff", "-z", "--name-only").decode("utf-8", "surrogateescape")
    untracked = untracked_outside_targets(workspace, chosen)
    for name in sorted({*filter(None, changed.split("\0")), *untracked}):
        if not is_test_path(name):
            digest.update(f"{name}\0{_file_digest(workspace / name)}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def prebuilt_key(
    workspace: Path, compile_step: BuildStep, *, modules: Iterable[str], toolchain: str, maven_repo: Path
) -> str:
    """Everything that decides the production compile (see the module docstring)."""
    material = json.dumps(
        {
            "format": FORMAT,
            "harness": __version__,
            "production": production_digest(workspace, modules),
            "argv": list(compile_step.argv),
            "tools": [list(tool) for tool in compile_step.tools],
            "java": compile_step.java_version,
            "toolchain": toolchain,
            "maven_repo": str(maven_repo.resolve()),
        },
        sort_keys=True,
    )
    return hashlib.sha256(material.encode()).hexdigest()[:32]


#: Plugins whose goals run after ``compile`` (or that the harness skips): what they say of
#: ``src/test`` cannot reach the stored production build (Surefire's ``argLine``, rat's excludes).
_LATER_PLUGINS = frozenset(
    {
        "maven-surefire-plugin", "maven-failsafe-plugin", "apache-rat-plugin", "jacoco-maven-plugin",
        "maven-javadoc-plugin", "maven-checkstyle-plugin", "maven-pmd-plugin", "spotbugs-maven-plugin",
        "japicmp-maven-plugin", "maven-site-plugin", "maven-jar-plugin", "maven-source-plugin",
        "animal-sniffer-maven-plugin", "maven-assembly-plugin", "maven-release-plugin",
        "maven-scm-publish-plugin", "maven-changes-plugin", "maven-jxr-plugin", "maven-enforcer-plugin",
        "maven-project-info-reports-plugin", "maven-surefire-report-plugin", "revapi-maven-plugin",
        "cyclonedx-maven-plugin", "spdx-maven-plugin", "moditect-maven-plugin", "maven-bundle-plugin",
        "maven-shade-plugin", "maven-install-plugin", "maven-deploy-plugin", "maven-gpg-plugin",
    }
)  # fmt: skip
#: Phases after ``compile``: an execution bound to one runs in the test launch, on the restored build.
_LATER_PHASES = frozenset(
    {
        "process-classes", "generate-test-sources", "process-test-sources", "generate-test-resources",
        "process-test-resources", "test-compile", "process-test-classes", "test", "prepare-package",
        "package", "pre-integration-test", "integration-test", "post-integration-test", "verify",
        "install", "deploy", "pre-site", "site", "post-site", "site-deploy", "none",
    }
)  # fmt: skip


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child_text(element: ET.Element, name: str) -> str:
    for child in element:
        if _local(child.tag) == name:
            return (child.text or "").strip()
    return ""


def _later(execution: ET.Element) -> bool:
    """An execution bound to a phase after ``compile``, or running test goals only."""
    goals = [(goal.text or "").strip() for g in execution if _local(g.tag) == "goals" for goal in g]
    return _child_text(execution, "phase") in _LATER_PHASES or (
        bool(goals) and all(goal.lower().startswith("test") for goal in goals)
    )


def _harmless(ancestors: list[ET.Element]) -> bool:
    """Whether a ``src/test`` mention under ``ancestors`` (outermost first) cannot reach what the
    ``compile`` phase builds: test-side elements (``testResources``, ``testExcludes``...), the
    reporting section, a plugin that runs later (by name, or every execution of it bound later:
    gson's ProGuard in ``process-test-classes``), or such an execution."""
    for element in ancestors:
        tag = _local(element.tag)
        if tag.startswith("test") or tag == "reporting":
            return True
        if tag == "plugin":
            if _child_text(element, "artifactId") in _LATER_PLUGINS:
                return True
            executions = [e for group in element if _local(group.tag) == "executions" for e in group]
            if executions and all(_later(execution) for execution in executions):
                return True
        if tag == "execution" and _later(element):
            return True
    return False


def _mentions(element: ET.Element, ancestors: list[ET.Element]) -> list[str]:
    """The element paths under ``element`` whose text names ``src/test`` where it may matter."""
    inner = [*ancestors, element]
    found = []
    if "src/test" in (element.text or "") and not _harmless(inner):
        found.append("<" + "><".join(_local(e.tag) for e in inner[1:]) + ">")
    for child in element:
        found += _mentions(child, inner)
    return found


def test_tree_in_production_build(workspace: Path, modules: Iterable[str]) -> list[str]:
    """Where a POM of the reactor may feed the test tree into the production build: a mention of
    ``src/test`` outside the test-side elements and the plugins and executions that run after
    ``compile`` (a ``<resource>`` or ``<sourceDirectory>`` there, a generator reading it). Such a
    build is never reused: gold's test tree would stand in for the prediction's. An unreadable
    POM counts as one."""
    found = []
    for module in modules:
        pom = workspace / module / "pom.xml"
        name = str(pom.relative_to(workspace))
        try:
            root = ET.parse(pom).getroot()
        except (OSError, ET.ParseError):
            found.append(f"{name} (unreadable)")
            continue

        found += [f"{name} {where}" for where in _mentions(root, [])]
    return found


def prepare(
    executor: Executor,
    workspace: Path,
    prebuilt: Prebuilt,
    launch: BuildStep,
    *,
    modules: tuple[str, ...],
    maven_repo: Path,
) -> PrebuiltUse:
    """Restore the stored production build of ``workspace`` (compiling and storing it first when
    ``prebuilt.create``) and return the launch to run; with ``state=off`` the launch is
    ``launch`` unchanged. Expects every module's ``target/`` removed (the run's clean start)."""
    if any((workspace / module / "target").exists() for module in modules):
        return PrebuiltUse(launch, OFF, note="a target/ directory is left from an earlier launch")
    naming = test_tree_in_production_build(workspace, modules)
    if naming:
        return PrebuiltUse(
            launch, OFF, note=f"the production build may read the test tree: {'; '.join(naming[:3])}"
        )
    compile_step = production_launch(launch)
    try:
        key = prebuilt_key(
            workspace, compile_step, modules=modules, toolchain=executor.toolchain(), maven_repo=maven_repo
        )
    except (OSError, HarnessError) as exc:
        return PrebuiltUse(launch, OFF, note=f"cannot read the production tree ({exc})")
    entry = prebuilt.store / key
    manifest = read_versioned_json(entry / MANIFEST)
    if manifest is None and prebuilt.create:
        with file_lock(prebuilt.store / "locks" / f"{key}.lock"):
            manifest = read_versioned_json(entry / MANIFEST)
            if manifest is None:
                return _build(
                    executor,
                    workspace,
                    prebuilt,
                    launch,
                    compile_step=compile_step,
                    key=key,
                    modules=modules,
                    maven_repo=maven_repo,
                )
    if manifest is None:
        return PrebuiltUse(
            launch, OFF, key, "no stored production build of this tree (compiled in the launch)"
        )
    if not manifest.get("usable"):
        return PrebuiltUse(launch, OFF, key, str(manifest.get("reason") or "not reusable"))
    try:
        seconds = restore_production(entry, workspace, modules)
    except OSError as exc:  # removed meanwhile (``tebench cache prune`` during a run): compile instead
        return PrebuiltUse(launch, OFF, key, went_away(exc))
    mark_used(entry)
    return PrebuiltUse(skipping_main(launch), REUSED, key, restore_seconds=seconds)


def _build(
    executor: Executor,
    workspace: Path,
    prebuilt: Prebuilt,
    launch: BuildStep,
    *,
    compile_step: BuildStep,
    key: str,
    modules: tuple[str, ...],
    maven_repo: Path,
) -> PrebuiltUse:
    """Compile, store, and restore for this launch (the launch then runs on exactly what later
    launches get)."""
    before = untracked_outside_targets(workspace, modules)
    compiled = executor.run(workspace, compile_step, maven_repo=maven_repo)
    built = [m for m in modules if (workspace / m / "target").is_dir()]
    if compiled.timed_out or not compiled.ok:
        remove_targets(workspace, built)
        why = (
            "timed out"
            if compiled.timed_out
            else mavenlog.diagnose_build(compiled.output, compiled.exit_code).summary
        )
        return PrebuiltUse(launch, OFF, key, f"the production compile failed ({why})", compiled)
    written = sorted(set(untracked_outside_targets(workspace, modules)) - set(before))
    record: dict[str, Any] = {
        "key": key,
        "harness_version": __version__,
        "created": time.time(),
        "compile_seconds": round(compiled.duration, 3),
        "argv": list(compile_step.argv),
        "java_version": compile_step.java_version,
        "modules": built,
    }
    if written or any((workspace / m / "target").is_symlink() for m in modules):
        reason = (
            f"the production compile writes outside target/: {', '.join(written[:5]) or 'a linked target/'}"
        )
        _store(prebuilt.store / key, workspace, [], {**record, "usable": False, "reason": reason})
        remove_targets(workspace, built)
        return PrebuiltUse(launch, OFF, key, reason, compiled)
    _store(prebuilt.store / key, workspace, built, {**record, "usable": True})
    try:
        seconds = restore_production(prebuilt.store / key, workspace, modules)
    except OSError as exc:  # pruned as soon as stored: the launch compiles it
        return PrebuiltUse(launch, OFF, key, went_away(exc), compiled)
    return PrebuiltUse(skipping_main(launch), BUILT, key, compiled=compiled, restore_seconds=seconds)


def mark_used(entry: Path) -> None:
    """Stamp the stored build at ``entry`` as used now: ``tebench cache prune`` removes the least
    recently used (:mod:`~pytest_tebench.run.maven.build_store`)."""
    with contextlib.suppress(OSError):
        os.utime(entry / MANIFEST)


def _tree(entry: Path, module: str) -> Path:
    return entry / "trees" / module / "target"


def _store(entry: Path, workspace: Path, modules: list[str], manifest: dict[str, Any]) -> None:
    """Copy each module's ``target/`` into the store, moved into place whole."""

    def fill(staging: Path) -> None:
        for module in modules:
            shutil.copytree(workspace / module / "target", _tree(staging, module), symlinks=True)

    store_whole(entry, fill, manifest)


def store_whole(entry: Path, fill: Callable[[Path], None], manifest: dict[str, Any]) -> None:
    """``fill`` a fresh directory, add ``manifest``, and move it to ``entry`` in one rename;
    when another process stored the same entry meanwhile (readers hold no lock), theirs stands."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    staging = entry.parent / f".{entry.name}.{os.getpid()}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    fill(staging)
    write_json(staging / MANIFEST, manifest)
    try:
        os.rename(staging, entry)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)


def restore_production(entry: Path, workspace: Path, modules: Iterable[str]) -> float:
    """Every module's ``target/`` removed, then the stored production build at ``entry`` restored;
    its seconds. Raises :class:`OSError`, with no ``target/`` left, when the build is gone or goes
    while copied (``tebench cache prune`` during a run): restoring nothing would leave a launch
    that skips the main compile without classes, its tests failing to compile."""
    modules = tuple(modules)
    remove_targets(workspace, modules)
    try:
        manifest = read_versioned_json(entry / MANIFEST)
        if manifest is None:
            raise FileNotFoundError(errno.ENOENT, "no stored production build", str(entry / MANIFEST))
        return restore_trees(entry, workspace, manifest["modules"])
    except OSError:
        remove_targets(workspace, modules)
        raise


def restore_trees(entry: Path, workspace: Path, modules: Iterable[str]) -> float:
    """Copy the stored trees into the workspace; new copies (a test may write into its
    ``target/classes``, never into the store), stamped now (newer than every source)."""
    started = time.perf_counter()
    for module in modules:
        shutil.copytree(
            _tree(entry, module), workspace / module / "target", symlinks=True, copy_function=shutil.copy
        )
    return time.perf_counter() - started


def remove_targets(workspace: Path, modules: Iterable[str]) -> None:
    for module in modules:
        remove_tree(workspace / module / "target")


def remove_tree(path: Path) -> None:
    """``path`` gone: a link (a test may plant one) removed itself, never followed; a directory whole."""
    if path.is_symlink():
        path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)
