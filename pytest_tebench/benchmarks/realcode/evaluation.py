"""Workspaces and Maven runs of RealCodeJava: the references once per instance, then each body.

``prepare`` checks the repository out at ``base_commit`` and computes the instance's baseline,
cached on disk by content and toolchain (N items of one instance - one per model - wait for the
first one's result instead of building it N times):

* the **dry run**: the selected tests on the untouched repository (a full, clean build);
* the **oracle**: ``left_context + gt + right_context`` (the dry run itself when that is the
  untouched file, as it is for rows cut from the repository);
* the **stub**: ``left_context + stub + right_context``.

The compiled ``target/`` of the untouched repository is kept beside the workspace. Each body
then starts from that copy: the file is rewritten, Maven's incremental build recompiles the
module whose source changed (maven-compiler-plugin then recompiles its test sources too), and only
the selected tests run, in one offline ``mvn test`` launch without JaCoCo. Restoring the copy
before every body also undoes anything an earlier body's tests wrote into ``target/``.

Harness trouble (offline resolution, JDK, a crashed executor) raises :class:`HarnessError`; an
untouched repository that does not compile or runs none of the selected tests makes the
instance invalid (its own status, never a model's score).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_tebench import __version__
from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.realcode.instances import RealcodeInstance
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.jsonfiles import read_versioned_json
from pytest_tebench.jsonfiles import write_json
from pytest_tebench.locking import file_lock
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.maven import log as mavenlog
from pytest_tebench.run.maven.jdk import choose_java_version
from pytest_tebench.run.maven.jdk import read_requirement
from pytest_tebench.run.maven.offline_run import WarmedRun
from pytest_tebench.run.maven.offline_run import run_warmed
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.selection import run_inherited
from pytest_tebench.run.maven.settings import MavenSettings
from pytest_tebench.run.maven.surefire import NOT_RUN
from pytest_tebench.run.maven.testrun import BUILD_ERROR
from pytest_tebench.run.maven.testrun import OK
from pytest_tebench.run.maven.testrun import SelectionRun
from pytest_tebench.run.maven.unpublished import unbuildable_message
from pytest_tebench.workspace.checkout import Workspace

#: The folder under the cache that holds each instance's baseline, keyed by content.
BASELINE_SUBDIR = "realcode"

#: Where the untouched repository's compiled ``target/`` is kept (inside ``.git``: removed with
#: the workspace, invisible to git and to Maven).
SNAPSHOT = ".git/tebench-realcode-target"


class InvalidInstance(HarnessError):
    """The untouched repository cannot judge anything (does not compile, runs no selected test)."""

    status = "invalid_instance"


class RunTimeout(HarnessError):
    status = "timeout"


@dataclass
class RealcodePrepared:
    workspace: Workspace
    #: Plain data (cached on disk): ``dry_run``, ``oracle``, ``stub``, ``java_version``, ``contexts_match``.
    baseline: dict[str, Any]
    settings: RunSettings
    original: str
    timings: dict[str, float] = field(default_factory=dict)


def body_run(run: SelectionRun) -> dict[str, Any]:
    """What the report keeps of one run of a body: plain data."""
    tests = {str(outcome.test): outcome.status for outcome in run.tests}
    return {
        "status": run.status,
        "compiled": bool(run.compile_ok),
        "tests_run": run.status == OK and any(status != NOT_RUN for status in tests.values()),
        "tests": tests,
        "error": run.error or None,
        "seconds": round(sum(run.timings.values()), 3),
    }


class RealcodeRunner:
    """Builds of one process; ``maven`` are the run's Maven settings."""

    def __init__(self, context: EvalContext, maven: MavenSettings) -> None:
        if context.executor is None:
            raise HarnessError("RealCodeJava needs an executor to build repositories, and none is configured")
        self.context = context
        self.maven = maven

    def _executor(self) -> Executor:
        assert self.context.executor is not None
        return self.context.executor()

    def run_settings(self, workspace: Path) -> RunSettings:
        pom = workspace / "pom.xml"
        if not pom.is_file():
            raise InvalidInstance(
                "the repository has no pom.xml at its root (only Maven projects are supported)"
            )
        requirement = read_requirement(workspace, self.maven.maven_repo)
        java = choose_java_version(self._executor().java_versions(), requirement, self.maven.jdk)
        return RunSettings(
            maven_repo=self.maven.maven_repo,
            java_version=java,
            maven_version=self.maven.maven_version,
            maven_dist=self.maven.maven_dist,
            coverage=False,
            compile_timeout=self.maven.timeout_compile,
            test_timeout=self.maven.timeout_test,
            warmup_timeout=self.maven.timeout_warmup,
        )

    # -- per instance ---------------------------------------------------------------------
    def prepare(self, instance: RealcodeInstance, content_key: str) -> RealcodePrepared:
        started = time.perf_counter()
        source = self.context.repos.locate(instance.repo, [instance.base_commit])
        workspace = Workspace.create(source, instance.base_commit, "", parent=self.context.work_dir)
        try:
            target = workspace.path / instance.file_path
            if not target.is_file():
                raise InvalidInstance(f"{instance.file_path} does not exist at {instance.base_commit}")
            original = target.read_text(encoding="utf-8", errors="surrogateescape")
            settings = self.run_settings(workspace.path)
            prepared = RealcodePrepared(workspace, {}, settings, original)
            prepared.timings["workspace"] = time.perf_counter() - started
            executor = self._executor()
            key = _cache_key(
                content_key,
                f"{executor.name}|{executor.toolchain()}|maven={settings.maven_version}",
                settings.java_version,
            )
            path = self.context.cache_dir / BASELINE_SUBDIR / f"{key}.json"
            began = time.perf_counter()
            with file_lock(self.context.cache_dir / "locks" / f"realcode-{key}.lock"):
                cached = read_versioned_json(path)
                if cached is None:
                    cached = self._baseline(instance, prepared)
                    write_json(path, cached)
                    cached["cache"] = "computed"
                else:
                    cached["cache"] = "hit"
                    if not cached.get("invalid"):
                        self._compile_untouched(instance, prepared)
            prepared.timings["baseline"] = time.perf_counter() - began
            if cached.get("invalid"):
                raise InvalidInstance(str(cached["invalid"]))
            prepared.baseline = cached
            return prepared
        except BaseException as exc:
            if isinstance(exc, HarnessError):
                exc.timings.setdefault("prepare", time.perf_counter() - started)
                if self.context.keep_workspaces:
                    exc.workspace = str(workspace.path)
            if not self.context.keep_workspaces:
                workspace.remove()
            raise

    def _baseline(self, instance: RealcodeInstance, prepared: RealcodePrepared) -> dict[str, Any]:
        warmed = self._warmed(instance, prepared, instance.selection)
        dry = warmed.run
        _raise_for_harness(dry, "the dry run (untouched repository)")
        baseline: dict[str, Any] = {
            "harness_version": __version__,
            "java_version": prepared.settings.java_version,
            "maven_version": dry.maven_version or None,
            "warmup": None if warmed.warmup is None else warmed.warmup.to_dict(),
            "dry_run": body_run(dry),
            "invalid": "",
        }
        if dry.status.startswith("timeout"):
            # a loaded machine is no property of the instance: raised, never cached as invalid
            raise RunTimeout(f"the dry run timed out: {dry.error}", log_tail=_tail(dry))
        if not dry.compile_ok or not dry.test_compile_ok:
            baseline["invalid"] = f"the untouched repository does not compile ({dry.status}): {dry.error}"
            return baseline
        if not baseline["dry_run"]["tests_run"]:
            baseline["invalid"] = "none of the selected tests ran on the untouched repository: " + ", ".join(
                str(t) for t in instance.selection
            )
            return baseline
        self._snapshot(prepared)
        composed_gt = instance.compose(instance.gt)
        baseline["contexts_match"] = composed_gt == prepared.original
        # MERA's rows drop the file's last newline: the same code, so the dry run is the oracle's run
        if composed_gt.rstrip() == prepared.original.rstrip():
            baseline["oracle"] = {**baseline["dry_run"], "same_as_dry_run": True}
        else:
            baseline["oracle"] = self.run_file(instance, prepared, composed_gt)
            if str(baseline["oracle"]["status"]).startswith("timeout"):
                raise RunTimeout(f"the ground truth's run timed out: {baseline['oracle']['error']}")
        baseline["stub"] = (
            None
            if instance.stub is None
            else self.run_file(instance, prepared, instance.compose(instance.stub))
        )
        return baseline

    def _compile_untouched(self, instance: RealcodeInstance, prepared: RealcodePrepared) -> None:
        """The baseline came from the cache: compile the untouched repository once for the copy."""
        if (prepared.workspace.path / SNAPSHOT).is_dir():
            return
        run = self._warmed(instance, prepared, ()).run
        _raise_for_harness(run, "compiling the untouched repository")
        if not run.compile_ok or not run.test_compile_ok:
            raise InvalidInstance(f"the untouched repository does not compile ({run.status}): {run.error}")
        self._snapshot(prepared)

    def _warmed(self, instance: RealcodeInstance, prepared: RealcodePrepared, selection: Any) -> WarmedRun:
        warmed = run_warmed(
            self._executor(), prepared.workspace.path, selection, prepared.settings, project=instance.repo
        )
        if warmed.warmup is not None and not warmed.warmup.ok:
            if warmed.warmup.unpublished:
                # the instance's environment (docs/building.md), never a harness error
                raise UnsupportedEnvironment(
                    unbuildable_message(warmed.warmup.unpublished), log_tail=warmed.warmup.log_tail
                )
            raise HarnessError(
                f"cannot prepare the Maven repository for {instance.repo}: {warmed.warmup.error}",
                log_tail=warmed.warmup.log_tail,
            )
        return warmed

    def _snapshot(self, prepared: RealcodePrepared) -> None:
        workspace = prepared.workspace.path
        snapshot = workspace / SNAPSHOT
        shutil.rmtree(snapshot, ignore_errors=True)
        if (workspace / "target").is_dir() and not (workspace / "target").is_symlink():
            shutil.copytree(workspace / "target", snapshot, symlinks=True)

    # -- per body ---------------------------------------------------------------------------
    def run_file(self, instance: RealcodeInstance, prepared: RealcodePrepared, text: str) -> dict[str, Any]:
        """Put ``text`` in the instance's file and run the selected tests from the compiled copy."""
        workspace = prepared.workspace.path
        (workspace / instance.file_path).write_text(text, encoding="utf-8", errors="surrogateescape")
        snapshot = workspace / SNAPSHOT
        settings = prepared.settings
        if snapshot.is_dir():
            target = workspace / "target"
            if target.is_symlink() or target.is_file():
                target.unlink()
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(snapshot, target, symlinks=True)
            # incremental: Maven sees the rewritten file newer than its class and recompiles the module
            settings = replace(settings, clean_target=False)
        run = run_inherited(self._executor(), workspace, list(instance.selection), settings)
        _raise_for_harness(run, "a body's build")
        return body_run(run)

    def restore(self, instance: RealcodeInstance, prepared: RealcodePrepared) -> None:
        (prepared.workspace.path / instance.file_path).write_text(
            prepared.original, encoding="utf-8", errors="surrogateescape"
        )


def _tail(run: SelectionRun) -> str:
    return mavenlog.log_tail(run.steps[-1].output) if run.steps else ""


def _raise_for_harness(run: SelectionRun, what: str) -> None:
    if run.status == BUILD_ERROR:
        raise HarnessError(f"{what} could not be built by the harness: {run.error}", log_tail=_tail(run))


def _cache_key(content_key: str, toolchain: str, java: int) -> str:
    material = json.dumps(
        {"content": content_key, "harness": __version__, "toolchain": toolchain, "java": java}, sort_keys=True
    )
    return hashlib.sha256(material.encode()).hexdigest()[:32]
