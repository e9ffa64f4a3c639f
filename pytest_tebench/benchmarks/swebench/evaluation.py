"""Evaluate one SWE-bench prediction: apply, reset tests, apply test_patch, run, grade.

The steps are SWE-bench's (``run_evaluation.run_instance`` and the eval script of
``test_spec/python.py``), split where it is safe between the host and a sandbox container:

1. on the host, in a fresh clone at ``base_commit``: the model patch with ``git apply --verbose``,
   then ``git apply --verbose --reject``, then ``patch --batch --fuzz=5 -p1 -i`` (the tree is reset
   between attempts, as SWE-bench 5 does); then the files ``test_patch`` modifies are reset to
   ``base_commit`` and ``test_patch`` is applied with ``git apply -v``;
2. in a container of the environment image (``--network none``, non-root, no capabilities,
   memory/CPU/process limits and the time limit of :class:`~pytest_tebench.run.docker.DockerExecutor`):
   the spec's ``eval_commands``, then the test command on the test files, between SWE-bench's
   ``>>>>> Start/End Test Output`` markers;
3. on the host: the log graded by SWE-bench's own functions (:mod:`.official`).

A harness failure (the test patch does not apply, the container cannot run, the time limit) raises
or yields a non-scored status; only a graded log or a patch that does not apply is a model's result.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench.environment import GENERATED_TAR
from pytest_tebench.benchmarks.swebench.environment import VENV
from pytest_tebench.benchmarks.swebench.environment import EnvironmentPlan
from pytest_tebench.benchmarks.swebench.instances import SwebenchInstance
from pytest_tebench.errors import HarnessError
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.executor import StepResult
from pytest_tebench.workspace.gitcmd import git

#: SWE-bench's apply chain (``GIT_APPLY_CMDS``), as argument vectors; the patch file is appended.
APPLY_METHODS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("git apply", ("git", "apply", "--verbose")),
    ("git apply --reject", ("git", "apply", "--verbose", "--reject")),
    ("patch --fuzz=5", ("patch", "--batch", "--fuzz=5", "-p1", "-i")),
)
#: The test log is written here inside the workspace (the container's only writable host path).
LOG_NAME = ".tebench-swebench-test-output.txt"
PATCH_NAME = ".tebench-swebench-model.diff"


class TestPatchDoesNotApply(HarnessError):
    """The instance's own test_patch does not apply after the reset: the instance is broken."""

    status = "invalid_instance"


@dataclass(frozen=True)
class ApplyResult:
    method: str | None
    log: str


def apply_model_patch(tree: Path, patch: str) -> ApplyResult:
    """Try SWE-bench's methods in order on a clean ``tree``; ``method`` None when all fail."""
    patch_file = tree / PATCH_NAME
    patch_file.write_text(patch if patch.endswith("\n") else patch + "\n", encoding="utf-8")
    attempts: list[str] = []
    try:
        for name, argv in APPLY_METHODS:
            result = subprocess.run(
                [*argv, str(patch_file)], cwd=tree, capture_output=True, timeout=300, check=False
            )
            output = (result.stdout + result.stderr).decode("utf-8", errors="replace").strip()
            if result.returncode == 0:
                return ApplyResult(name, output)
            attempts.append(f"{name}: {output}")
            _reset(tree)
    finally:
        patch_file.unlink(missing_ok=True)
    return ApplyResult(None, "\n".join(attempts))


def _reset(tree: Path) -> None:
    git(tree, "reset", "--quiet", "--hard")
    git(tree, "clean", "-fdqx", "-e", PATCH_NAME)


def apply_test_patch(tree: Path, instance: SwebenchInstance) -> list[str]:
    """Reset the files ``test_patch`` modifies to ``base_commit``, then apply it; return them."""
    files = official.modified_files(instance.test_patch)
    if files:
        git(tree, "checkout", instance.base_commit, "--", *files)
    result = git(tree, "apply", "-v", "-", input=instance.test_patch.encode("utf-8"), check=False)
    if result.returncode != 0:
        raise TestPatchDoesNotApply(
            f"the test_patch of {instance.instance_id} does not apply after resetting its files: "
            + result.stderr.decode(errors="replace").strip()
        )
    return files


def eval_script(
    plan: EnvironmentPlan,
    directives: list[str],
    *,
    wrap: Callable[[str], str] | None = None,
    after: Sequence[str] = (),
) -> str:
    """The container's script: SWE-bench's eval steps minus conda, plus the generated files.

    ``wrap`` rewrites the test command (SWT-bench runs it under coverage); ``after`` are lines run
    once the test output is closed (SWT-bench's coverage report)."""
    test_command = " ".join([plan.test_cmd, *(shlex.quote(d) for d in directives)])
    if wrap is not None:
        test_command = wrap(test_command)
    lines = [
        "set -uo pipefail",
        "cd /workspace",
        # files the environment's install generated in the source tree (egg-info, _version.py)
        f"tar -xf {GENERATED_TAR} --skip-old-files -C /workspace 2>/dev/null || true",
        # today's setuptools installs a flat layout in editable mode through an import finder, which
        # leaves the tree off sys.path; SWE-bench's 2023 pip fell back to `setup.py develop` there
        # (a path entry), and tests that find modules from paths (pylint's, through astroid) need it
        f'if compgen -G "{VENV}/lib/python3*/site-packages/__editable___*_finder.py" >/dev/null; then',
        '    export PYTHONPATH="/workspace${PYTHONPATH:+:$PYTHONPATH}"',
        "fi",
        *plan.eval_commands,
        f"exec > {LOG_NAME} 2>&1",
        f"echo '{official.START_TEST_OUTPUT}'",
        test_command,
        "code=$?",
        f"echo '{official.END_TEST_OUTPUT}'",
        'echo ">>>>> Test Exit Code: $code"',
        *after,
        "exit 0",
    ]
    return "\n".join(lines) + "\n"


def run_tests(
    executor: Executor,
    tree: Path,
    image: str,
    script: str,
    *,
    timeout: float,
    scratch: Path,
    network: bool = False,
    tools: tuple[tuple[str, str], ...] = (),
    env: tuple[tuple[str, str], ...] = (),
) -> tuple[StepResult, str]:
    """Run ``script`` in ``image`` on ``tree``; return the step result and the test log.

    ``tools`` are read-only host directories the script needs and ``env`` its variables
    (``{tool:NAME}`` expands to where a tool is mounted): SWT-bench's coverage.py."""
    step = BuildStep(
        name="swebench-test",
        argv=("bash", "-c", script),
        timeout=timeout,
        image=image,
        network=network,
        tools=tools,
        env=env,
    )
    scratch.mkdir(parents=True, exist_ok=True)
    result = executor.run(tree, step, maven_repo=scratch)
    log_file = tree / LOG_NAME
    log = log_file.read_text(encoding="utf-8", errors="replace") if log_file.is_file() else ""
    log_file.unlink(missing_ok=True)
    return result, log


def graded_fields(instance: SwebenchInstance, log: str) -> dict[str, Any]:
    """The record's grading block for ``log``."""
    grade = official.grade(
        instance_id=instance.instance_id,
        repo=instance.repo,
        version=instance.version,
        fail_to_pass=list(instance.fail_to_pass),
        pass_to_pass=list(instance.pass_to_pass),
        log=log,
        log_parser=instance.log_parser,
    )
    return {
        "resolved": grade.resolved,
        "resolution": grade.resolution,
        "test_output_found": grade.log_found,
        "tests_status": grade.tests_status,
        "log_parser": official.parser_name(instance.repo, instance.log_parser),
    }


def timed(start: float) -> float:
    return time.perf_counter() - start
