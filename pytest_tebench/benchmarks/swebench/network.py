"""Which instances' tests need the internet: decided before anything runs, from the test files.

The sandbox runs tests with ``--network none``. Tests that reach a live service fail there for
gold as for any model, so scoring them would count the machine's missing internet as a model's
failure. An instance whose test files (at ``base_commit``, as ``test_patch`` changes them)
show one of :data:`INTERNET_SIGNS` is ``unsupported_environment`` unless the run opts in with
``--tebench-swebench-network``; the decision reads the tests, never a gold outcome. It is made
per test file, so an instance whose own FAIL_TO_PASS / PASS_TO_PASS tests happen not to use the
network is set aside with the rest of its file (psf/requests 1.1 is one).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pytest_tebench.errors import PredictionError
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.patches import parse_patch

#: Literal text of a test file that shows its tests need the internet -> what they do with it.
INTERNET_SIGNS: dict[str, str] = {
    # psf/requests up to 2.7 sends its HTTP tests to the public service (later to pytest-httpbin)
    "httpbin.org": "call the live httpbin.org service",
    # psf/requests' TARPIT: a connect timeout needs a network that drops packets; with none the
    # connection fails at once with another error
    "10.255.255.1": "expect a connect timeout from the unroutable 10.255.255.1, which needs a network",
}


def internet_need(source: Path, commit: str, test_patch: str, test_files: Sequence[str]) -> str | None:
    """Why the tests of ``test_files`` need the internet, or None: from the files at ``commit``
    as ``test_patch`` changes them."""
    try:
        added = {piece.path: piece for piece in parse_patch(test_patch)}
    except PredictionError:
        added = {}
    for path in test_files:
        shown = git(source, "show", f"{commit}:{path}", check=False)
        text = shown.stdout.decode("utf-8", errors="replace") if shown.returncode == 0 else ""
        # the file's lines after test_patch, as a multiset: a sign never spans lines
        lines = Counter(text.splitlines())
        if path in added:
            for hunk in added[path].hunks:
                lines.subtract(line.rstrip("\r\n") for _, line in hunk.removed())
                lines.update(line.rstrip("\r\n") for _, line in hunk.added())
        for sign, why in INTERNET_SIGNS.items():
            if any(sign in line for line, count in lines.items() if count > 0):
                return f"the tests in {path} {why}"
    return None
