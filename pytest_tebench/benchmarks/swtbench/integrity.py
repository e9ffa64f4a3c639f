"""Runner integrity of SWT-bench runs: what a test-generation prediction may change, and the seam
for the in-process integrity plugin.

A generated test is code in the test runner's process: it can rewrite outcomes through pytest
hooks (a ``conftest.py``), patch the runner, stop coverage.py or overwrite the files the harness
reads afterwards. Test files, ``conftest.py`` included, are what a prediction is, so they are
never refused here. What is refused is everything else: a test-generation prediction only adds or
changes tests, so a file SWE-bench would not call a test (:func:`~..swebench.text.is_test`, the
rule that splits every SWE-bench row into ``patch`` and ``test_patch``), or a path that leaves the
tree, makes the whole prediction ``not_applied``. A ``conftest.py`` is a test file whatever its
directory (pytest's own per-directory test configuration).

The seam: :func:`runner_guard` is called once per container run of the prediction's tests; what it
returns is mounted and set in that run (``tools``, ``env``: a plugin directory and
``PYTEST_ADDOPTS=-p ...`` load a harness plugin first), and :meth:`RunnerGuard.evidence` reads
what the plugin left in the tree after the run. Today it adds nothing and finds nothing; the
runner-integrity plugin (fingerprinting the runner, catching verdict-making hooks from non-harness
code) plugs in there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from pathlib import PurePosixPath
from typing import Any

from pytest_tebench.benchmarks.swebench.text import is_test
from pytest_tebench.workspace.layout import unsafe_path_reason
from pytest_tebench.workspace.patches import parse_patch

#: git file modes a prediction may not create: a symlink can point anywhere, a submodule is not a test.
_SPECIAL_MODES = {"120000": "a symbolic link", "160000": "a submodule"}


def is_test_file(path: str) -> bool:
    """SWE-bench's notion of a test file, plus ``conftest.py`` anywhere."""
    return is_test(path) or PurePosixPath(path).name == "conftest.py"


def refused_files(patch: str) -> dict[str, str]:
    """``{path: why}`` for every file of ``patch`` a test-generation prediction may not touch.

    Raises :class:`~pytest_tebench.workspace.patches.PatchFormatError` for text that is no diff.
    """
    refused: dict[str, str] = {}
    for piece in parse_patch(patch):
        for path in piece.paths:
            unsafe = unsafe_path_reason(path)
            if unsafe:
                refused[path] = unsafe
            elif not is_test_file(path):
                refused[path] = "not a test file (a test-generation prediction only adds or changes tests)"
        for mode in piece.modes:
            if mode in _SPECIAL_MODES:
                refused[piece.path] = f"creates {_SPECIAL_MODES[mode]}"
    return refused


@dataclass(frozen=True)
class RunnerGuard:
    """What the integrity plugin adds to one run of the prediction's tests."""

    #: Read-only host directories mounted into the test container (``BuildStep.tools``).
    tools: tuple[tuple[str, str], ...] = ()
    #: Environment variables of the test command (``{tool:NAME}`` expands to a tool's mount).
    env: tuple[tuple[str, str], ...] = ()

    def evidence(self, tree: Path) -> dict[str, Any] | None:
        """What the plugin recorded in ``tree`` during the run (None: nothing to report)."""
        del tree
        return None


def runner_guard(run: str) -> RunnerGuard:
    """THE SEAM: the guard for the run called ``run`` (``pred_pre``, ``pred_post``, ...)."""
    del run
    return RunnerGuard()
