"""Run a SWE-bench instance in its official prebuilt image (``--tebench-swebench-images``).

SWE-bench publishes one image per instance, ``swebench/sweb.eval.x86_64.<id>:latest`` (the id in
lower case, ``__`` spelled ``_1776_``), with the repository at ``/testbed`` installed in a conda
environment ``testbed``. In ``official`` mode (and in ``auto`` mode for an instance whose
environment cannot be built here) the instance runs there, with the official harness's steps:
the model patch applied in ``/testbed`` with ``GIT_APPLY_CMDS`` (``git apply --verbose``, then
``--reject``, then ``patch --batch --fuzz=5 -p1 -i``, without a reset in between, as SWE-bench
4.1.0 does), then the eval script ``make_eval_script_list_py`` writes (activate ``testbed``, the
spec's install, the test files reset to ``base_commit``, ``test_patch``, the spec's test command
between the output markers); the log is graded by the same functions as build mode.

The image name, the eval script and the apply commands come from the ``swebench`` package
(``TestSpec.instance_image_key``, ``make_eval_script_list_py``, ``GIT_APPLY_CMDS``), not re-written.

An image that is neither present nor pulled (no registry answers) is ``unsupported_environment``
naming the image, before anything runs. The container is the Docker executor's sandbox (no network
unless ``--tebench-swebench-network``, no capabilities, ``no-new-privileges``, memory, CPU, process
and time limits) with two differences the images impose: it runs as root (``/testbed`` and the
conda environment are root's, and the eval script installs into it), and in the install phase its
root file system is writable (the eval script installs into the environment; the container is
removed afterwards). In the test phase the root file system is read-only again, as in build mode:
only ``/testbed`` and root's home (``/root``: git's ``safe.directory``, the caches tests write) are
writable, each a volume of the container filled from the install phase's result and removed with it,
so code the tests import cannot rewrite the runner or the environment on disk for the processes
the tests start, nor leave anything behind.

Since the eval script re-runs the install after the patch (the prediction's ``setup.py`` or build
backend then runs as root, before any test), a run is two containers: the install phase, whose
changes the engine lists and :mod:`pytest_tebench.integrity.installed` judges against gold's, and,
only when nothing is found, the test phase in a commit of its result (:func:`run`).
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
import threading
import uuid
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker.errors
import docker.types

from pytest_tebench.benchmarks.swebench import evaluation
from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench import official_install
from pytest_tebench.benchmarks.swebench import suites
from pytest_tebench.benchmarks.swebench.instances import SwebenchInstance
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.integrity import evidence
from pytest_tebench.integrity import installed
from pytest_tebench.run import docker_image
from pytest_tebench.run import leftovers
from pytest_tebench.run.docker import CONTAINER_MAVEN_REPO
from pytest_tebench.run.docker import CONTAINER_TOOLS
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import StepResult

#: ``--tebench-swebench-images``: build here only, official images only, or build else official.
MODES = ("build", "official", "auto")
DEFAULT_MODE = "auto"
NAMESPACE = "swebench"
#: SWE-bench's conda environment and tree in its images.
ENV_NAME = "testbed"
TESTBED = "/testbed"
#: How long ``docker pull`` may try before the image counts as not obtainable.
PULL_TIMEOUT = 120.0
#: Where the container finds the patch and the eval script, and leaves the log (a scratch mount).
MOUNT = docker_image.CONTAINER_WORKSPACE
LOG_NAME = "test_output.txt"
INSTALL_SCRIPT = "install.sh"
INSTALL_LOG_NAME = "install.txt"
#: Committed install phases, removed once their test phase is over (or, labelled transient, by the
#: next run when this one died first).
PHASE_REPOSITORY = "pytest-tebench/swebench-installed"
APPLIED_NAME = "applied"
APPLY_LOG_NAME = "apply.txt"
#: The guard plugin's read-only mount (eval.sh is a file: the step's placeholders are not expanded in it).
GUARD_PATH = f"{CONTAINER_TOOLS}/{evaluation.GUARD_TOOL}"
#: Mount points of the install phase (and the engine's init): the engine lists them as added.
_MOUNT_POINTS = (MOUNT, CONTAINER_TOOLS, CONTAINER_MAVEN_REPO, "/tmp", "/usr/sbin/docker-init")
#: What ``conda activate`` sets, kept in the test command's clean environment.
CONDA_VARIABLES = ("CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_SHLVL", "CONDA_EXE", "CONDA_PYTHON_EXE")
#: Loads the guard plugin in the environment's interpreter (Python >= 3.5 for its syntax; it
#: supports pytest >= 3.3, the oldest a SWE-bench spec pins: astropy 1.3's 3.3.1): the last line
#: says which versions, or why not.
GUARD_PROBE = """import sys
try:
    import tebench_guard, pytest
    version = tuple(int(p) for p in pytest.__version__.split(".")[:2])
except Exception as exc:
    print("the guard plugin does not load in the image's environment: %r" % (exc,))
    sys.exit(3)
if version < (3, 3):
    print("the image's pytest %s is older than the guard supports (3.3)" % pytest.__version__)
    sys.exit(3)
print("python %s, pytest %s" % (sys.version.split()[0], pytest.__version__))
"""
#: Loads the runner-script launcher (what a runner script's test command runs under).
LAUNCHER_PROBE = """import sys
try:
    import tebench_run
except Exception as exc:
    print("the guard's launcher does not load in the image's environment: %r" % (exc,))
    sys.exit(3)
print("python %s" % sys.version.split()[0])
"""


@dataclass(frozen=True)
class Decision:
    """Where an instance runs: ``build`` (an environment built here), ``official`` (its official
    image) or ``unsupported``; ``reason`` says why it is not built here (None for ``build``)."""

    where: str
    reason: str | None


def decide(repo: str, version: str, spec: dict[str, Any] | None, mode: str) -> Decision:
    """The choice for ``(repo, version)`` under ``mode``, from the specification alone."""
    reason = suites.unsupported_reason(repo, version, spec)
    if mode == "build" or (mode == "auto" and reason is None):
        return Decision("build" if reason is None else "unsupported", reason)
    if spec is None:
        # no specification, no eval script: the official harness knows no such instance either
        return Decision("unsupported", reason)
    return Decision("official", reason)


def _test_spec(instance: SwebenchInstance) -> Any:
    """SWE-bench's ``TestSpec`` with the eval script of ``instance`` (no env or repo scripts: those
    build images, and would download requirement files from GitHub)."""
    mods = official.modules()
    specs = official.specs(instance.repo, instance.version)
    if specs is None:
        raise UnsupportedEnvironment(
            f"SWE-bench has no specification for {instance.repo} version {instance.version}"
        )
    row = {"repo": instance.repo, "version": instance.version, "test_patch": instance.test_patch}
    # the Python one of make_eval_script_list (whose dispatch needs the repo in MAP_REPO_TO_EXT)
    script = mods.python_spec.make_eval_script_list_py(
        row, specs, ENV_NAME, TESTBED, instance.base_commit, instance.test_patch
    )
    return mods.test_spec.TestSpec(
        instance_id=instance.instance_id,
        repo=instance.repo,
        version=instance.version,
        repo_script_list=[],
        eval_script_list=list(script),
        env_script_list=[],
        arch="x86_64",
        FAIL_TO_PASS=list(instance.fail_to_pass),
        PASS_TO_PASS=list(instance.pass_to_pass),
        language="py",
        docker_specs={},
        namespace=NAMESPACE,
    )


def image_name(instance_id: str) -> str:
    """The official image of ``instance_id``: ``swebench/sweb.eval.x86_64.<id>:latest``, named by
    SWE-bench's own ``TestSpec.instance_image_key`` (lower case, ``__`` spelled ``_1776_``)."""
    spec = official.modules().test_spec.TestSpec(
        instance_id=instance_id, repo="", version="", repo_script_list=[], eval_script_list=[],
        env_script_list=[], arch="x86_64", FAIL_TO_PASS=[], PASS_TO_PASS=[], language="py",
        docker_specs={}, namespace=NAMESPACE,
    )  # fmt: skip
    return str(spec.instance_image_key)


def eval_script(instance: SwebenchInstance, *, guard: bool = False) -> str:
    """The official ``eval.sh`` of ``instance`` (``TestSpec.eval_script``), its test command run as
    build mode runs it: in a clean environment (``env -i`` keeping :data:`.evaluation.KEPT_VARIABLES`,
    conda's own, what the spec's eval commands export; no user site) and, with ``guard`` and a
    command that starts pytest, with the guard plugin (its read-only tool mount) loaded first."""
    script = str(_test_spec(instance).eval_script)
    specs = official.specs(instance.repo, instance.version) or {}
    test_cmd = str(specs.get("test_cmd"))
    directives = official.test_directives(instance.repo, instance.test_patch)
    line = " ".join([test_cmd, *directives])
    command, guarded = evaluation.guarded_command(test_cmd, instance.repo) if guard else (test_cmd, False)
    kept = evaluation.kept_variables(specs.get("eval_commands") or (), CONDA_VARIABLES)
    clean = [
        # the nonce stays out of the log's trace
        "{ set +x; } 2>/dev/null",
        f"python_path={shlex.quote(GUARD_PATH if guarded else '')}",
        *evaluation.keep_lines(kept, TESTBED, instance.repo),
        "set -x",
        evaluation.clean_command(" ".join([command, *directives])),
    ]
    lines = script.split("\n")
    if lines.count(line) != 1:
        raise HarnessError(f"the official eval script of {instance.instance_id} has no single test command")
    at = lines.index(line)
    return "\n".join([*lines[:at], *clean, *lines[at + 1 :]])


def phase_scripts(
    instance: SwebenchInstance, *, guard: bool = False, set_aside: Sequence[str] = ()
) -> tuple[str, str]:
    """:func:`eval_script` in two: the install phase (everything before the test files are reset:
    activation, the spec's eval commands, the re-install) and the test phase (the same script
    without the install line). Between them the install's changes are judged from outside.

    ``set_aside`` (:func:`.set_aside.shell_lines`) runs in the test phase right before the test files
    are reset: what the install wrote to those files is undone too."""
    lines = eval_script(instance, guard=guard).split("\n")
    reset = f"git checkout {instance.base_commit}"
    at = next((i for i, line in enumerate(lines) if line.startswith(reset)), None)
    if at is None:
        raise HarnessError(
            f"the official eval script of {instance.instance_id} does not reset the test files"
        )
    install = str((official.specs(instance.repo, instance.version) or {}).get("install") or "")
    tests: list[str] = []
    for i, line in enumerate(lines):
        if i < at and install and line == install:
            continue
        tests += [*set_aside, line] if i == at else [line]
    return "\n".join(lines[:at]) + "\n", "\n".join(tests)


def apply_commands() -> tuple[str, ...]:
    """SWE-bench's ``GIT_APPLY_CMDS``, in order."""
    official.modules()
    from swebench.harness.run_evaluation import GIT_APPLY_CMDS

    return tuple(str(c) for c in GIT_APPLY_CMDS)


def missing_reason(client: Any, image: str, *, pull_timeout: float = PULL_TIMEOUT) -> str | None:
    """None when ``image`` is here or ``docker pull`` brings it; else why not (for the record)."""
    if docker_image.image_present(client, image):
        return None
    repository, _, tag = image.rpartition(":")
    outcome: list[BaseException | None] = []

    def pull() -> None:
        try:
            client.api.pull(repository, tag=tag)
            outcome.append(None)
        except (docker.errors.DockerException, OSError) as exc:
            outcome.append(exc)

    # a registry that drops packets must not hold the item: the pull may go on in the engine
    worker = threading.Thread(target=pull, daemon=True)
    worker.start()
    worker.join(pull_timeout)
    if outcome and outcome[0] is None and docker_image.image_present(client, image):
        return None
    why = f"{outcome[0]}" if outcome else f"no answer in {pull_timeout:g} s"
    return f"the official image {image} is not here and cannot be pulled ({why.strip()[:300]})"


def container_script(commands: tuple[str, ...], set_aside: Sequence[str] = ()) -> str:
    """The install phase: apply the patch as the official harness does, set its test-side changes
    aside (``set_aside``: nothing the install builds comes from them), then run the eval script's
    part before the tests (:func:`phase_scripts`); the outcome as files."""
    patch = f"{MOUNT}/patch.diff"
    lines = ["set -u", f"cd {TESTBED}"]
    for command in commands:
        lines += [
            f"echo {shlex.quote('>>> ' + command)} >> {MOUNT}/{APPLY_LOG_NAME}",
            f"if {command} {patch} >> {MOUNT}/{APPLY_LOG_NAME} 2>&1; then",
            f"    printf %s {shlex.quote(command)} > {MOUNT}/{APPLIED_NAME}",
            *(f"    {line} >> {MOUNT}/{APPLY_LOG_NAME} 2>&1" for line in set_aside),
            f"    exec /bin/bash {MOUNT}/{INSTALL_SCRIPT} > {MOUNT}/{INSTALL_LOG_NAME} 2>&1",
            "fi",
        ]
    return "\n".join([*lines, "exit 0"]) + "\n"


def test_script() -> str:
    """The test phase, in a container of the install phase's result."""
    return f"cd {TESTBED}\nexec /bin/bash {MOUNT}/eval.sh > {MOUNT}/{LOG_NAME} 2>&1\n"


#: Judges the install phase's changes: the findings that stop the tests (empty: they run).
Judge = Callable[[list[installed.Change]], list[evidence.Finding]]


@dataclass(frozen=True)
class OfficialRun:
    #: The apply command that worked (one of ``GIT_APPLY_CMDS``), or None: the patch does not apply.
    method: str | None
    apply_log: str
    log: str
    #: The test phase's step, or the install phase's when the tests did not run.
    result: StepResult
    #: What the install phase changed, as the engine says (empty when the patch did not apply).
    installed: tuple[installed.Change, ...] = ()
    #: Why the tests did not run after the install (``judge``'s findings).
    install_findings: tuple[evidence.Finding, ...] = ()
    install_log: str = ""


def run(
    executor: Any,
    instance: SwebenchInstance,
    image: str,
    patch: str,
    *,
    timeout: float,
    scratch_parent: Path,
    network: bool = False,
    guard: bool = False,
    nonce: str = "",
    judge: Judge | None = None,
    tests: bool = True,
    set_aside: Sequence[str] = (),
) -> OfficialRun:
    """Apply ``patch`` and run the tests of ``instance`` in ``image``, in two containers.

    The **install phase** (a container of ``image``) applies the patch and runs the eval script up
    to the tests, re-install included. Once it has stopped, the engine's list of what it changed is
    given to ``judge``; a finding ends the run there (the tests never see that install). Else the
    **test phase** runs the rest of the script in a container made from the install phase's
    result (a commit, removed afterwards), with ``guard`` under the guard plugin (``nonce`` tags
    its record: only the test phase has it). ``tests`` False stops after the install phase (gold's
    list of changes, for the comparison). ``set_aside`` (:func:`.set_aside.shell_lines`) undoes the
    prediction's test-side changes after the patch is applied and again before the test files are
    reset. Each phase has ``timeout``."""
    if not hasattr(executor, "container_spec"):
        raise HarnessError("official SWE-bench images need the Docker executor")
    install_script, eval_sh = phase_scripts(instance, guard=guard, set_aside=set_aside)
    scratch_parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="swebench-official-", dir=scratch_parent) as name:
        scratch = Path(name)
        (scratch / "patch.diff").write_text(patch if patch.endswith("\n") else patch + "\n", encoding="utf-8")
        (scratch / INSTALL_SCRIPT).write_text(install_script, encoding="utf-8")
        # root in the container has no capabilities (no CAP_DAC_OVERRIDE): the mount must be open
        scratch.chmod(0o777)
        changes: list[installed.Change] = []
        findings: list[evidence.Finding] = []
        committed: list[str] = []

        def inspect(container: Any) -> None:
            if read_left_file(scratch / APPLIED_NAME) == "":
                return  # the patch did not apply: nothing of it ran
            changes.extend(official_install.engine_changes(container, tree=TESTBED, mounts=_MOUNT_POINTS))
            findings.extend(judge(changes) if judge is not None else ())
            if tests and not findings:
                try:
                    # labelled as its container and transient: if this process dies before the
                    # finally below, the next run removes it (run/leftovers.py)
                    labels = {"Labels": leftovers.transient_labels(container)}
                    image = container.commit(repository=PHASE_REPOSITORY, tag=uuid.uuid4().hex, conf=labels)
                    committed.append(str(image.id))
                except docker.errors.DockerException as exc:
                    raise HarnessError(
                        f"cannot keep the install phase of {instance.instance_id}: {exc}"
                    ) from exc

        step = BuildStep(
            name="swebench-official-install",
            argv=("/bin/bash", "-c", container_script(apply_commands(), set_aside)),
            timeout=timeout,
            image=image,
            network=network,
            java_version=None,
        )
        result = executor.run(
            scratch, step, maven_repo=scratch / ".unused", overrides=sandbox_overrides(), inspect=inspect
        )
        method = read_left_file(scratch / APPLIED_NAME) or None
        apply_log, install_log = (
            read_left_file(scratch / APPLY_LOG_NAME),
            read_left_file(scratch / INSTALL_LOG_NAME),
        )
        if not committed:
            return OfficialRun(method, apply_log, "", result, tuple(changes), tuple(findings), install_log)
        try:
            # what the install phase left in the mount is not read again: the test phase starts clean
            _empty(scratch)
            (scratch / "eval.sh").write_text(eval_sh, encoding="utf-8")
            step = BuildStep(
                name="swebench-official",
                argv=("/bin/bash", "-c", test_script()),
                timeout=timeout,
                image=committed[0],
                network=network,
                java_version=None,
                tools=((evaluation.GUARD_TOOL, str(evidence.PLUGIN_DIR)),),
            )
            overrides = dict(sandbox_overrides(nonce))
            overrides.update(read_only_overrides(executor.container_spec(scratch, step, scratch / ".unused")))
            result = executor.run(scratch, step, maven_repo=scratch / ".unused", overrides=overrides)
        finally:
            _remove_image(executor.client, committed[0])
        return OfficialRun(
            method, apply_log, read_left_file(scratch / LOG_NAME), result, tuple(changes), (), install_log
        )


def guard_probe(
    executor: Any, image: str, *, scratch_parent: Path, timeout: float = 120.0, kind: str = "pytest"
) -> str | None:
    """None when the guard of ``kind`` (:func:`.evaluation.guard_kind`: the plugin, with a pytest it
    supports, or the ``script`` launcher) loads in ``image``'s ``testbed`` environment; else why not
    (a container of the image alone: no prediction in it)."""
    probe = LAUNCHER_PROBE if kind == "script" else GUARD_PROBE
    if not hasattr(executor, "container_spec"):
        raise HarnessError("official SWE-bench images need the Docker executor")
    script = "\n".join(
        [
            "source /opt/miniconda3/bin/activate",
            f"conda activate {ENV_NAME}",
            f"cd {TESTBED}",
            f'env -i PATH="$PATH" PYTHONPATH={GUARD_PATH} PYTHONNOUSERSITE=1 '
            f"python -c {shlex.quote(probe)} 2>&1",
        ]
    )
    scratch_parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="swebench-probe-", dir=scratch_parent) as name:
        scratch = Path(name)
        scratch.chmod(0o777)
        step = BuildStep(
            name="swebench-guard-probe",
            argv=("/bin/bash", "-c", script),
            timeout=timeout,
            image=image,
            network=False,
            java_version=None,
            tools=((evaluation.GUARD_TOOL, str(evidence.PLUGIN_DIR)),),
        )
        result = executor.run(scratch, step, maven_repo=scratch / ".unused", overrides=sandbox_overrides())
    if result.exit_code == 0:
        return None
    last = (result.output.strip().splitlines() or ["no output"])[-1]
    return f"the guard cannot run in {image} (exit {result.exit_code}): {last[:300]}"


def sandbox_overrides(nonce: str = "") -> Mapping[str, Any]:
    """What the official images need of the Docker executor's sandbox (see the module docstring)."""
    return {
        "user": "0:0",
        "read_only": False,
        "working_dir": TESTBED,
        "environment": {"HOME": "/root", **({"TEBENCH_GUARD_NONCE": nonce} if nonce else {})},
        "tmpfs": {"/tmp": "rw,exec,nosuid,nodev,size=1g,mode=1777"},
    }


#: What stays writable in the test phase: the tree, and root's home.
WRITABLE_IN_TESTS = (TESTBED, "/root")


def read_only_overrides(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The test phase's root file system read-only, with :data:`WRITABLE_IN_TESTS` as anonymous
    volumes (the engine fills a new one from the image's folder) next to ``spec``'s mounts."""
    volumes = [docker.types.Mount(target, None, type="volume") for target in WRITABLE_IN_TESTS]
    return {"read_only": True, "mounts": [*spec.get("mounts", ()), *volumes]}


def read_left_file(path: Path) -> str:
    """A file the container left in the mount ("" when absent; never through a link it planted)."""
    if path.is_symlink() or not path.is_file():
        return ""
    return path.read_text(encoding="utf-8", errors="replace")


def _empty(folder: Path) -> None:
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def _remove_image(client: Any, image: str) -> None:
    leftovers.remove_image(client, image, f"the install phase's image {image}")
