"""The embedded SWE-bench demo: ``pycalc``, a tiny pure-Python library, and four instances.

Its history ships as a ``git format-patch --root`` series in ``history/`` and is replayed into a
bare mirror with the textkit demo's reproducible replay. Each commit after the first is one
SWE-bench-format instance (``dataset.jsonl``): ``patch`` is its change to ``pycalc/``,
``test_patch`` its change to ``tests/``, ``FAIL_TO_PASS`` the test it adds, ``PASS_TO_PASS`` the
other tests of the files it touches. ``predictions/demo-model.jsonl`` holds one prediction per
outcome: a wrong fix (unresolved), a fix that breaks a PASS_TO_PASS test (unresolved), a patch
that does not apply, a right fix wrapped in ``<patch>`` tags (resolved), and an empty patch.
``predictions/swtbench-model.jsonl`` holds SWT-bench (test generation) predictions on the same rows,
one per outcome: a test that passes before the fix (P→P), one that fails after it (F→F), one that
passes before and fails after (P→F), a real reproduction in ``<patch>`` tags (F→P, success), an
empty patch, a patch that also edits ``pycalc/`` (refused) and one that does not apply.

The repository is not part of SWE-bench, so its specification (Python 3.9, editable install,
``pytest -rA``) and log parser are registered here the way SWE-bench registers each repository.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_tebench.demo import build_demo_mirror

SWEBENCH_DEMO_REPO = "pytest-tebench/pycalc"
HERE = Path(__file__).resolve().parent
DATASET = HERE / "dataset.jsonl"
PREDICTIONS = HERE / "predictions" / "demo-model.jsonl"
SWT_PREDICTIONS = HERE / "predictions" / "swtbench-model.jsonl"

#: SWE-bench's specification format (``MAP_REPO_VERSION_TO_SPECS``).
SPECS: dict[str, dict[str, Any]] = {
    "1.0": {
        "python": "3.9",
        "install": "python -m pip install -e .",
        "pip_packages": ["pytest==7.4.2"],
        "test_cmd": "pytest -rA",
    }
}
LOG_PARSER = "parse_log_pytest"


def build_swebench_demo_mirror(dest: Path) -> Path:
    """Replay the pycalc history into a bare mirror at ``dest``."""
    return build_demo_mirror(dest, patches=sorted((HERE / "history").glob("*.patch")))
