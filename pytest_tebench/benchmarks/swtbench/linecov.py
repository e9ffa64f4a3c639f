"""coverage.py in the SWE-bench environments, without touching their images.

SWT-bench measures the gold fix's lines with its own ``trace.py`` (``python3 trace.py --count -C
coverage.cover --include-pattern '/testbed/(<files the gold patch changes>)'`` put in front of
the test command, ``ExecSpec.test_command``). We measure with coverage.py, the same way:

* **which files**: ``--include`` of exactly the files the gold fix changes, at ``/workspace``;
* **how the command is wrapped**: as SWT-bench wraps it: ``python -m X`` becomes
  ``python -m coverage run ... -m X``, a command starting with ``pytest``/``unittest``/``tox`` runs
  as ``-m`` of it, a ``PYTHONWARNINGS=...`` prefix stays in front, anything else (a script such as
  ``./tests/runtests.py``) is run by ``coverage run`` as a file;
* **counts**: trace.py counts executions of each line; coverage.py records which lines ran, per
  *dynamic context*. With ``dynamic_context = test_function`` a line's count here is the number of
  test functions (plus module-level code) that ran it: the prediction's tests raise it exactly
  where they run the line, which is what SWT-bench's delta (count under the prediction's tests >
  count under the existing tests) asks;
* **executable lines**: trace.py lists every executable line of a file it saw with count 0 or
  more; coverage.py's statements (executed + missing) of each measured file are those lines. One
  difference matters for changed lines: trace.py's lines come from the byte code's line table,
  where each line of a multi-line statement (``x = (a\n or b)``) is a line of its own, while
  coverage.py reports a statement on its first line only. :func:`with_statement_lines` gives every
  line of a statement (of a compound statement's header) the count of the statement's first line.

coverage.py itself is not in the environment images (changing their recipes would rebuild them
all): its wheel for the environment's Python (with the C tracer; the pure-Python wheel when pip has
none) is installed once into the cache by the host's pip, and mounted read-only into the test
container as a tool (``BuildStep.tools``); our own rcfile sits next to it, so a project's coverage
configuration (``source``, ``omit``, ``branch``) does not change what is measured.
"""

from __future__ import annotations

import ast
import hashlib
import json
import platform
import re
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_tebench.errors import HarnessError
from pytest_tebench.locking import file_lock

#: The last coverage.py release that runs on Python 3.9 (bullseye) as well as 3.11 and 3.13.
COVERAGE_VERSION = "7.10.7"
TOOL = "coverage"
#: Where the tool is in the container: the executor expands it in the script (``BuildStep.tools``), so
#: the wrapped command needs no variable of its own (it may run in a cleaned environment).
TOOL_PATH = "{tool:" + TOOL + "}"
RCFILE = "tebench-swtbench.coveragerc"
#: No C tracer in a pure-Python install: its warning would only clutter the test log.
RC_TEXT = "[run]\ndynamic_context = test_function\ndisable_warnings = no-ctracer\n"
#: Inside the workspace (the container's one writable host path); removed after reading.
DATA_NAME = ".tebench-swtbench.coverage"
JSON_NAME = ".tebench-swtbench-coverage.json"
WORKSPACE = "/workspace"

LineCounts = dict[str, dict[int, int]]


def wheel_options(python: str) -> list[str]:
    """pip's options for coverage.py's wheel with the C tracer for CPython ``python`` ("3.9") on this
    machine's architecture (the containers run on it), or for the pure-Python wheel when ``python`` is ""."""
    if not python:
        return ["--platform", "any", "--implementation", "py", "--python-version", "3.9"]
    abi = "cp" + python.replace(".", "")
    return ["--platform", f"manylinux2014_{platform.machine()}", "--implementation", "cp",
            "--python-version", python, "--abi", abi]  # fmt: skip


def ensure_coverage(cache_dir: Path, python: str = "") -> Path:
    """The directory holding coverage.py and our rcfile, installed once under a lock: the wheel with
    the C tracer for the environment's ``python`` (several times faster), else the pure-Python one."""
    rc_hash = hashlib.sha256(RC_TEXT.encode()).hexdigest()[:8]
    flavour = f"cp{python.replace('.', '')}-{platform.machine()}" if python else "py"
    target = cache_dir / "swtbench" / f"coverage-{COVERAGE_VERSION}-{flavour}-{rc_hash}"
    done = target / ".installed"
    if done.is_file():
        return target
    with file_lock(cache_dir / "locks" / f"{target.name}.lock"):
        if done.is_file():
            return target
        staging = target.with_name(target.name + ".partial")
        result = None
        for options in dict.fromkeys((tuple(wheel_options(python)), tuple(wheel_options("")))):
            subprocess.run(["rm", "-rf", str(staging)], check=False)
            argv = [
                sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                "--no-deps", "--no-compile", "--only-binary=:all:", *options, "--target", str(staging),
                f"coverage=={COVERAGE_VERSION}",
            ]  # fmt: skip
            result = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
            if result.returncode == 0:
                break
        assert result is not None
        if result.returncode != 0:
            raise HarnessError(
                f"cannot install coverage.py {COVERAGE_VERSION} for the test containers: "
                + (result.stderr or result.stdout).strip()[-2000:]
            )
        (staging / RCFILE).write_text(RC_TEXT, encoding="utf-8")
        subprocess.run(["rm", "-rf", str(target)], check=False)
        staging.rename(target)
        done.write_text(COVERAGE_VERSION + "\n", encoding="utf-8")
    return target


def _run_options(files: Sequence[str]) -> str:
    include = ",".join(f"{WORKSPACE}/{name}" for name in files) or f"{WORKSPACE}/.tebench-nothing"
    return f'run --rcfile="{TOOL_PATH}/{RCFILE}" --data-file={DATA_NAME} --include={shlex.quote(include)}'


_PYTHONWARNINGS = "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning'"


def wrap_command(test_command: str, files: Sequence[str]) -> str:
    """``test_command`` run under coverage.py, measuring ``files`` (SWT-bench's wrapping rules)."""
    prefix = f'PYTHONPATH="{TOOL_PATH}${{PYTHONPATH:+:$PYTHONPATH}}"'
    coverage = f"python -m coverage {_run_options(files)}"
    command = test_command.strip()
    if re.search(r"python(3?) -m", command):
        return f"{prefix} " + re.sub(r"python(3?) -m", lambda _: f"{coverage} -m", command, count=1)
    if command.startswith(("pytest", "unittest", "tox")):
        return f"{prefix} {coverage} -m {command}"
    if command.startswith(_PYTHONWARNINGS):
        return f"{_PYTHONWARNINGS} {prefix} {coverage} {command[len(_PYTHONWARNINGS) :].strip()}"
    return f"{prefix} {coverage} {command}"


def report_commands() -> list[str]:
    """Script lines after the tests: the JSON report with contexts, out of the test log."""
    return [
        f'PYTHONPATH="{TOOL_PATH}" python -m coverage json --rcfile="{TOOL_PATH}/{RCFILE}" '
        f"--data-file={DATA_NAME} --show-contexts -i -q -o {JSON_NAME} >/dev/null 2>&1 || true",
        f"rm -f {DATA_NAME}",
    ]


def read_counts(tree: Path) -> LineCounts:
    """Take the run's JSON report out of ``tree``: ``{file: {line: count}}`` (empty when none)."""
    path = tree / JSON_NAME
    try:
        # the prediction's code ran in that tree: a link there could point anywhere on this machine
        readable = path.is_file() and not path.is_symlink()
        data = json.loads(path.read_text(encoding="utf-8")) if readable else {}
    except (OSError, ValueError):
        data = {}
    finally:
        path.unlink(missing_ok=True)
    return counts_from_report(data)


def counts_from_report(data: Any) -> LineCounts:
    """coverage.py's JSON report (``--show-contexts``) as line counts: a statement's count is the
    number of contexts that ran it (0 for a missing one)."""
    files = data.get("files") if isinstance(data, dict) else None
    counts: LineCounts = {}
    if not isinstance(files, dict):
        return counts
    for name, entry in files.items():
        if not isinstance(entry, dict):
            continue
        key = str(name)
        if key.startswith(WORKSPACE + "/"):
            key = key[len(WORKSPACE) + 1 :]
        found = entry.get("contexts")
        contexts: dict[str, Any] = found if isinstance(found, dict) else {}
        lines: dict[int, int] = {}
        try:
            for number in entry.get("missing_lines") or []:
                lines[int(number)] = 0
            for number in entry.get("executed_lines") or []:
                ran = contexts.get(str(number)) or [""]
                lines[int(number)] = len({str(context) for context in ran})
        except (TypeError, ValueError):
            continue  # not coverage.py's output: the file counts as not measured
        counts[key] = lines
    return counts


def statement_lines(source: str) -> dict[int, int]:
    """``{line: first line of its statement}`` for the lines after the first of multi-line statements
    (of a compound statement: of its header, before its body); empty when ``source`` does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    mapping: dict[int, int] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or node.end_lineno is None:
            continue
        body = getattr(node, "body", None)
        last = node.end_lineno
        if isinstance(body, list) and body and isinstance(body[0], ast.AST):
            last = min(last, getattr(body[0], "lineno", last + 1) - 1)
        for line in range(node.lineno + 1, last + 1):
            mapping.setdefault(line, node.lineno)
    return mapping


def with_statement_lines(counts: LineCounts, sources: dict[str, str]) -> LineCounts:
    """``counts`` where every further line of a measured multi-line statement has its statement's count."""
    expanded: LineCounts = {}
    for name, lines in counts.items():
        result = dict(lines)
        for line, first in statement_lines(sources.get(name, "")).items():
            if line not in result and first in lines:
                result[line] = lines[first]
        expanded[name] = result
    return expanded
