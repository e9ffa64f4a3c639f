"""The embedded SWE-bench Multilingual demo: ``jcalc``, a tiny Java Maven library, and two rows.

Its history ships as a ``git format-patch --root`` series in ``history/``, replayed into a bare
mirror as the other demos are. Each commit after the first is one row in SWE-bench Multilingual's
format (``dataset.jsonl``), as the dataset's Java Maven rows (google/gson) are: ``log_parser``
``parse_log_maven``, ``eval_type`` ``pass_and_fail``, and an ``eval_script`` that resets the test
file, applies ``test_patch`` and runs one ``mvnd test -B -T 1C -Dtest=Class#method`` per test under
``set -x`` between SWE-bench's markers. ``predictions/demo-model.jsonl`` holds a wrong fix of the
first row (unresolved) and a right fix of the second, written differently from gold (resolved).

The repository is not part of SWE-bench, so its specification (JDK 17, ``mvn clean install -B
-DskipTests``) and parser are registered here the way SWE-bench lists each repository.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_tebench.demo import build_demo_mirror

MULTILINGUAL_DEMO_REPO = "pytest-tebench/jcalc"
HERE = Path(__file__).resolve().parent
DATASET = HERE / "dataset.jsonl"
PREDICTIONS = HERE / "predictions" / "demo-model.jsonl"

#: SWE-bench's specification format (``MAP_REPO_VERSION_TO_SPECS_JAVA``).
SPECS: dict[str, dict[str, Any]] = {
    "1.0": {
        "docker_specs": {"java_version": "17"},
        "install": ["mvn clean install -B -DskipTests"],
        "test_cmd": ["mvnd test -B -T 1C -Dtest=demo.jcalc.CalcTest"],
    }
}
LOG_PARSER = "parse_log_maven"


def build_multilingual_demo_mirror(dest: Path) -> Path:
    """Replay the jcalc history into a bare mirror at ``dest``."""
    return build_demo_mirror(dest, patches=sorted((HERE / "history").glob("*.patch")))
