"""Which instances' tests need the internet: decided before anything runs, from the test files.

The sandbox runs tests with ``--network none``. Tests that reach a live service fail there for
gold as for any model, so scoring them would count the machine's missing internet as a model's
failure. An instance whose test files (at ``base_commit``, as ``test_patch`` changes them)
show one of :data:`INTERNET_SIGNS`, or name a file the repository downloads on first use
(:data:`DOWNLOAD_MANIFESTS`), is ``unsupported_environment`` unless the run opts in with
``--tebench-swebench-network``; the decision reads the tests, never a gold outcome. It is made
per test file, so an instance whose own FAIL_TO_PASS / PASS_TO_PASS tests happen not to use the
network is set aside with the rest of its file (psf/requests 1.1 is one).
"""

from __future__ import annotations

import json
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
    # sphinx's linkcheck tests check links against the live www.google.com (its 404 for an image)
    "Not Found for url: https://www.google.com/": "check links against the live www.google.com",
    # sphinx's LaTeX image test expects the live www.google.com to answer 404 for a remote image
    "https://www.google.com/NOT_EXIST.PNG [404]": "expect a 404 of the live www.google.com for an image",
}


#: Repositories that download some test files on first use: repo -> (the manifest at the
#: commit, a JSON object keyed by file name; what tests that name one of them do).
DOWNLOAD_MANIFESTS: dict[str, tuple[str, str]] = {
    # pydicom 2.0+: its data manager fetches these from GitHub into ~/.pydicom/data
    "pydicom/pydicom": ("pydicom/data/urls.json", "read test files pydicom downloads from GitHub"),
}


def internet_need(
    source: Path, commit: str, test_patch: str, test_files: Sequence[str], repo: str = ""
) -> str | None:
    """Why the tests of ``test_files`` need the internet, or None: from the files at ``commit``
    as ``test_patch`` changes them (and ``repo``'s download manifest, if it has one)."""
    downloaded = _downloaded_names(source, commit, repo)
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
        present = [line for line, count in lines.items() if count > 0]
        for sign, why in INTERNET_SIGNS.items():
            if any(sign in line for line in present):
                return f"the tests in {path} {why}"
        named = sorted(n for n in downloaded if any(f'"{n}"' in line or f"'{n}'" in line for line in present))
        if named:
            listed = ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
            return f"the tests in {path} {DOWNLOAD_MANIFESTS[repo][1]} ({listed})"
    return None


def offline_reason(
    source: Path, commit: str, test_patch: str, test_files: Sequence[str], repo: str = ""
) -> str | None:
    """Why an offline run cannot score the instance (its tests need the internet), or None: the
    ``unsupported_environment`` reason of a run, and of ``tebench swebench coverage --repos``."""
    need = internet_need(source, commit, test_patch, test_files, repo)
    if need is None:
        return None
    return f"{need}; this sandbox has no network (--tebench-swebench-network lets them use it)"


def _downloaded_names(source: Path, commit: str, repo: str) -> set[str]:
    """The file names ``repo``'s download manifest lists at ``commit`` (none without a manifest)."""
    if repo not in DOWNLOAD_MANIFESTS:
        return set()
    shown = git(source, "show", f"{commit}:{DOWNLOAD_MANIFESTS[repo][0]}", check=False)
    if shown.returncode != 0:
        return set()  # older versions ship every test file
    try:
        manifest = json.loads(shown.stdout.decode("utf-8", errors="replace"))
    except ValueError:
        return set()
    return {str(name) for name in manifest} if isinstance(manifest, dict) else set()
