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

import re
import shlex
import subprocess
import time
from collections.abc import Callable
from collections.abc import Iterable
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
from pytest_tebench.integrity import evidence
from pytest_tebench.integrity import paths
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
#: The guard plugin's folder, as a read-only tool mount of the test step.
GUARD_TOOL = "tebench-guard"
#: Variables the test command inherits (besides those the spec's eval commands export): nothing
#: else of the container's environment (no PYTEST_ADDOPTS, PYTEST_PLUGINS, PYTHONPATH, PYTHONSTARTUP).
KEPT_VARIABLES = ("PATH", "HOME", "LANG", "LC_ALL", "LANGUAGE", "TZ", "VIRTUAL_ENV", "PYTHONIOENCODING")
_EXPORT = re.compile(r"\bexport\s+([A-Za-z_][A-Za-z0-9_]*)=")
#: A test command that starts pytest (after ``VAR=value`` words): the guard plugin goes right after it.
_PYTEST_COMMAND = re.compile(r"^((?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)(pytest|py\.test)(?=\s|$)")
#: A test command that runs a script of the tree by its path (django's ``./tests/runtests.py``,
#: sympy's ``bin/test``): the guard's launcher runs it.
_SCRIPT_COMMAND = re.compile(r"^((?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)((?:\./)?[\w.-]+(?:/[\w.-]+)+)(?=\s|$)")
#: What the launcher runs a script with: the tests run in its process, so a runner that would start
#: another interpreter for hash randomization (sympy's, unless PYTHONHASHSEED is set) gets a random
#: seed here instead (bash's $RANDOM: 1 to 2**30).
LAUNCH = f"PYTHONHASHSEED=$((RANDOM * 32768 + RANDOM + 1)) python -m {evidence.LAUNCHER}"
#: ``tox --current-env ... --`` (sphinx): tox starts pytest with the arguments after ``--`` as
#: ``{posargs}`` (where the test files go too), and tox-current-env passes the whole environment on
#: (``pass_env = *``: PYTHONPATH, the nonce); the guard plugin goes right after the ``--``.
_TOX_COMMAND = re.compile(
    r"^((?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*tox\s(?:.*\s)?--current-env\s(?:.*?\s)?--)(?=\s|$)"
)


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


def changed_files(tree: Path, base_commit: str) -> list[paths.Change]:
    """What the model patch changed in ``tree`` (a clean checkout of ``base_commit`` before it),
    ignored files included: a ``.pyc`` or ``.pth`` that ``.gitignore`` hides is still a change."""
    listing = git(tree, "status", "--porcelain=v1", "-z", "-uall", "--ignored=matching").stdout
    listed: list[str] = []
    for entry in listing.decode("utf-8", errors="surrogateescape").split("\0"):
        if len(entry) < 4 or entry[3:] == PATCH_NAME:
            continue
        if entry[3:].endswith("/"):
            # git lists an ignored folder, not its files
            folder = tree / entry[3:]
            listed += sorted(str(f.relative_to(tree)) for f in folder.rglob("*") if not f.is_dir())
        else:
            listed.append(entry[3:])
    changes: list[paths.Change] = []
    for path in listed:
        shown = git(tree, "show", f"{base_commit}:{path}", check=False)
        old = shown.stdout.decode("utf-8", errors="replace") if shown.returncode == 0 else None
        target = tree / path
        mode = "120000" if target.is_symlink() else "160000" if (target / ".git").exists() else ""
        new = None
        if target.is_file() and not target.is_symlink():
            new = target.read_bytes().decode("utf-8", errors="replace")
        changes.append(paths.Change(path, old, new, mode))
    return changes


def refused_changes(
    tree: Path,
    instance: SwebenchInstance,
    test_cmd: str,
    *,
    test_content: bool = False,
    changes: list[paths.Change] | None = None,
) -> list[paths.Refusal]:
    """The runner files the applied model patch changes (decided before anything runs);
    ``test_content``: ``conftest.py`` is the prediction's to write (SWT-bench's test patches);
    ``changes``: :func:`changed_files` of ``tree`` when the caller already has them."""
    policy = paths.policy_for(test_cmd, instance.repo, test_content=test_content)
    return paths.refusals(changed_files(tree, instance.base_commit) if changes is None else changes, policy)


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


def guarded_command(test_cmd: str, repo: str = "") -> tuple[str, bool]:
    """The test command under the guard, and whether it could be: pytest with the guard plugin
    loaded first; a runner script of the tree (django's ``./tests/runtests.py``, sympy's
    ``bin/test``) started by the guard's launcher (``python -m tebench_run SCRIPT ARGS``), told
    ``repo``'s runner modules (:func:`.paths.runner_modules`); ``tox --current-env ... --`` with
    the plugin as the first of pytest's ``{posargs}``. Other commands are not guarded."""
    command, count = _PYTEST_COMMAND.subn(rf"\1\2 -p {evidence.PLUGIN}", test_cmd, count=1)
    if not count:
        command, count = _TOX_COMMAND.subn(rf"\1 -p {evidence.PLUGIN}", test_cmd, count=1)
    if not count:
        runners = "".join(f" --runner {name}" for name in paths.runner_modules(repo))
        command, count = _SCRIPT_COMMAND.subn(
            lambda m: f"{m.group(1)}{LAUNCH}{runners} {m.group(2)}", test_cmd, count=1
        )
    return command, bool(count)


def guard_kind(test_cmd: str) -> str:
    """``pytest`` (the plugin), ``tox`` (the plugin, through tox's ``{posargs}``), ``script`` (the
    launcher) or "" (no guard) for ``test_cmd``."""
    if _PYTEST_COMMAND.match(test_cmd):
        return "pytest"
    if _TOX_COMMAND.match(test_cmd):
        return "tox"
    return "script" if _SCRIPT_COMMAND.match(test_cmd) else ""


def eval_script(
    plan: EnvironmentPlan,
    directives: list[str],
    *,
    guard: bool = True,
    wrap: Callable[[str], str] | None = None,
    after: Sequence[str] = (),
) -> str:
    """The container's script: SWE-bench's eval steps minus conda, plus the generated files; the
    test command runs in a clean environment (``env -i`` with :data:`KEPT_VARIABLES`, what the eval
    commands export, no user site) and, where it is pytest, with the guard plugin loaded first.

    ``wrap`` rewrites the (guarded) test command (SWT-bench runs it under coverage); ``after`` are
    lines run once the test output is closed (SWT-bench's coverage report)."""
    command, guarded = guarded_command(plan.test_cmd, plan.repo) if guard else (plan.test_cmd, False)
    test_command = " ".join([command, *(shlex.quote(d) for d in directives)])
    if wrap is not None:
        test_command = wrap(test_command)
    kept = kept_variables(plan.eval_commands)
    python_path = f"{{tool:{GUARD_TOOL}}}" if guarded else ""
    lines = [
        "set -uo pipefail",
        "cd /workspace",
        # files the environment's install generated in the source tree (egg-info, _version.py)
        f"tar -xf {GENERATED_TAR} --skip-old-files -C /workspace 2>/dev/null || true",
        f"python_path={shlex.quote(python_path)}",
        # today's setuptools installs a flat layout in editable mode through an import finder, which
        # leaves the tree off sys.path; SWE-bench's 2023 pip fell back to `setup.py develop` there
        # (a path entry), and tests that find modules from paths (pylint's, through astroid) need it
        f'if compgen -G "{VENV}/lib/python3*/site-packages/__editable___*_finder.py" >/dev/null; then',
        '    python_path="${python_path:+$python_path:}/workspace"',
        "fi",
        # the spec's pre_install edits of tracked files (sphinx: `pytest -rA` in tox.ini, without
        # which its log has no per-test lines) were made at build time on a tree that is gone;
        # SWE-bench's instance image keeps them under the evaluated tree, so they are made again
        *plan.pre_install,
        *tox_current_env_lines(plan),
        *plan.eval_commands,
        *keep_lines(kept, "/workspace", plan.repo),
        f"exec > {LOG_NAME} 2>&1",
        f"echo '{official.START_TEST_OUTPUT}'",
        clean_command(test_command),
        "code=$?",
        f"echo '{official.END_TEST_OUTPUT}'",
        'echo ">>>>> Test Exit Code: $code"',
        *after,
        "exit 0",
    ]
    return "\n".join(lines) + "\n"


def kept_variables(eval_commands: Iterable[str], extra: Iterable[str] = ()) -> list[str]:
    """What the clean environment keeps: :data:`KEPT_VARIABLES`, ``extra`` and what ``eval_commands``
    export."""
    exported = [name for command in eval_commands for name in _EXPORT.findall(command)]
    return list(dict.fromkeys([*KEPT_VARIABLES, *extra, *exported]))


def keep_lines(kept: list[str], tree: str, repo: str = "") -> list[str]:
    """Shell lines that fill the array ``keep`` with the ``kept`` variables that are set, the shell
    variable ``python_path`` (when not empty) as ``PYTHONPATH``, and the guard's nonce, tree and
    repository (``owner/name``: what of the tree is test side, ``tebench_core.is_test_side``)."""
    return [
        "keep=()",
        f"for name in {' '.join(kept)}; do",
        '    if [ -n "${!name+set}" ]; then keep+=("$name=${!name}"); fi',
        "done",
        'if [ -n "$python_path" ]; then keep+=("PYTHONPATH=$python_path"); fi',
        'if [ -n "${TEBENCH_GUARD_NONCE:-}" ]; then',
        f'    keep+=("TEBENCH_GUARD_NONCE=$TEBENCH_GUARD_NONCE" "TEBENCH_GUARD_TREE={tree}"'
        f" {shlex.quote('TEBENCH_GUARD_REPO=' + repo)})",
        "fi",
    ]


def clean_command(test_command: str) -> str:
    """``test_command`` run with nothing but ``keep`` (see :func:`keep_lines`) and no user site."""
    return f'env -i "${{keep[@]}}" PYTHONNOUSERSITE=1 bash -c {shlex.quote(test_command)}'


_TOX_ENVS = re.compile(r"\btox\b.*--current-env.*?\s-e\s*([\w.,-]+)")


def tox_current_env_lines(plan: EnvironmentPlan) -> list[str]:
    """Make ``tox --current-env``'s environment directory a view of the venv.

    tox-current-env links ``.tox/<env>/bin/python`` to the interpreter tox runs on. SWE-bench's
    conda interpreter finds its prefix through such a link; a venv's does not (Python looks for
    ``pyvenv.cfg`` beside the link, not beside its target), so the tests would run on the bare
    system Python without pytest. A ``pyvenv.cfg`` and ``lib`` of the venv in that directory, made
    before tox runs, give the linked interpreter the venv's packages (sphinx's test command).
    """
    match = _TOX_ENVS.search(plan.test_cmd)
    if match is None:
        return []
    suffixes = ("", plan.python.split(".")[0], plan.python)
    lines: list[str] = []
    for env in match.group(1).split(","):
        where = f"/workspace/.tox/{env}"
        lines += [
            f"mkdir -p {where}/bin && cp {VENV}/pyvenv.cfg {where}/ && ln -sfn {VENV}/lib {where}/lib",
            *(f"ln -sf {VENV}/bin/python {where}/bin/python{suffix}" for suffix in suffixes),
        ]
    return lines


def run_tests(
    executor: Executor,
    tree: Path,
    image: str,
    script: str,
    *,
    timeout: float,
    scratch: Path,
    network: bool = False,
    nonce: str = "",
    tools: tuple[tuple[str, str], ...] = (),
    env: tuple[tuple[str, str], ...] = (),
) -> tuple[StepResult, str]:
    """Run ``script`` in ``image`` on ``tree``; return the step result and the test log. The guard
    plugin's folder is mounted read-only; ``nonce`` tags its record.

    ``tools`` are further read-only host directories the script needs and ``env`` its variables
    (``{tool:NAME}`` expands to where a tool is mounted): SWT-bench's coverage.py."""
    step = BuildStep(
        name="swebench-test",
        argv=("bash", "-c", script),
        timeout=timeout,
        image=image,
        network=network,
        env=((("TEBENCH_GUARD_NONCE", nonce),) if nonce else ()) + env,
        tools=((GUARD_TOOL, str(evidence.PLUGIN_DIR)), *tools),
    )
    scratch.mkdir(parents=True, exist_ok=True)
    result = executor.run(tree, step, maven_repo=scratch)
    log_file = tree / LOG_NAME
    log = log_file.read_text(encoding="utf-8", errors="replace") if log_file.is_file() else ""
    log_file.unlink(missing_ok=True)
    return result, log


def grade_log(instance: SwebenchInstance, log: str) -> official.Grade:
    """``log`` graded against the instance's F2P/P2P by SWE-bench's parser of its repository
    (SWE-bench's grading and SWT-bench's ``get_logs_eval``)."""
    return official.grade(
        instance_id=instance.instance_id,
        repo=instance.repo,
        version=instance.version,
        fail_to_pass=list(instance.fail_to_pass),
        pass_to_pass=list(instance.pass_to_pass),
        log=log,
        log_parser=instance.log_parser,
        # a Multilingual row's (its class is the multilingual package's, above this module)
        eval_type=getattr(instance, "eval_type", None),
    )


def graded_fields(instance: SwebenchInstance, log: str) -> dict[str, Any]:
    """The record's grading block for ``log``."""
    grade = grade_log(instance, log)
    return {
        "resolved": grade.resolved,
        "resolution": grade.resolution,
        "test_output_found": grade.log_found,
        "tests_status": grade.tests_status,
        "status_map": grade.status_map,
        "log_parser": official.parser_name(instance.repo, instance.log_parser),
        "renamed_tests": grade.renamed,
    }


def timed(start: float) -> float:
    return time.perf_counter() - start
