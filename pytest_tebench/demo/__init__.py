"""The embedded demo benchmark: ``textkit``, a small Java 8 / Maven / JUnit 5 library.

Its git history ships as a ``git format-patch --root --binary`` series in ``history/`` and is replayed into a
bare repository by :func:`build_demo_mirror`. Every commit after the first is a candidate TEBench instance;
the last four are meant to be rejected by the dataset builder. ``DESIGN.md`` next to this file documents each
commit, its intended labels and the Maven runs that back them.

The replay must give the same commit hashes everywhere, because instances refer to commits by hash. A commit
hash covers the tree, the parent, the author and committer lines and the message, so the replay fixes the
committer, takes the author and dates from the patches, and shields git from every user or system setting
and environment variable that could change what ``git am`` writes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pytest_tebench.errors import HarnessError
from pytest_tebench.workspace.gitcmd import GitError
from pytest_tebench.workspace.gitcmd import git

DEMO_REPO = "pytest-tebench/textkit"
DEMO_PROJECT = "textkit"
DEMO_BRANCH = "main"

HISTORY_DIR = Path(__file__).resolve().parent / "history"

_IDENTITY_NAME = "TEBench Demo"
_IDENTITY_EMAIL = "demo@tebench.invalid"
_GIT_TIMEOUT_S = 60

# Settings that could otherwise leak in from a repository template or git's defaults and change the result.
_GIT_SETTINGS: tuple[tuple[str, str], ...] = (
    ("core.autocrlf", "false"),
    ("core.eol", "lf"),
    ("core.safecrlf", "false"),
    ("core.hooksPath", os.devnull),
    ("commit.gpgSign", "false"),
    ("am.threeWay", "false"),
    ("am.keepcr", "true"),
    ("apply.whitespace", "nowarn"),
    ("i18n.commitEncoding", "UTF-8"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)

Role = Literal["root", "instance", "rejected"]


@dataclass(frozen=True)
class DemoCommit:
    """What one commit of the demo history is for; ``DESIGN.md`` gives the evidence."""

    sha: str
    subject: str
    role: Role
    # Labels the dataset builder should compute (instances only).
    labels: frozenset[str] = frozenset()
    # Gold identification items: ``path-at-V-0.5::Outer$Inner#method`` for modified or deleted test methods,
    # ``path::<added>`` per test file in which gold adds test methods.
    gold_items: tuple[str, ...] = ()
    # Whether gold's tests execute any changed production method (False: "no coverage change").
    gold_covers_change: bool = True
    reject_reason: str = ""
    # Instance features from the brief that this commit covers.
    features: tuple[str, ...] = ()


_T = "src/test/java/org/tebench/textkit/"

DEMO_HISTORY: tuple[DemoCommit, ...] = (
    DemoCommit(
        "3a36d33b00a76e075b4c4bf8471c2ef3b2d06006",
        "Initial import of textkit",
        "root",
        reject_reason="root commit: it has no parent, so there is no V-1",
    ),
    DemoCommit(
        "69c4649c92cd1583d60b8df9a1837a81e96c48db",
        "WordWrap: reject widths below 1 and split over-long words",
        "instance",
        frozenset({"breaking"}),
        (f"{_T}WrapTest.java::WrapTest#handlesLongWord", f"{_T}WrapTest.java::WrapTest#zeroWidth"),
        features=("breaking-only", "renamed test file"),
    ),
    DemoCommit(
        "c839cc1ff2715ef365d540b54f8b6ae72d1c010e",
        "CaseConverter: keep acronyms together in snake_case",
        "instance",
        frozenset({"stale"}),
        (
            f"{_T}CaseConverterTest.java::CaseConverterTest$ToSnake#camelWords",
            f"{_T}CaseConverterTest.java::CaseConverterTest$ToSnake#digitsStay",
        ),
        features=("stale-only", "@Nested", "annotation-only change", "comment/whitespace-only change"),
    ),
    DemoCommit(
        "6f3adb06e48fdebcac902446ba6329199c29d09a",
        "StringUtils.reverse: keep surrogate pairs intact",
        "instance",
        frozenset({"missing"}),
        (f"{_T}StringUtilsUnicodeTest.java::<added>",),
        features=("missing-only", "new test file"),
    ),
    DemoCommit(
        "389d50779c18da7d36e1f1f305c954964230be64",
        "TextStats: count hyphenated words once",
        "instance",
        frozenset({"breaking", "stale", "missing"}),
        (
            f"{_T}TextStatsTest.java::TextStatsTest#averagesWordLength",
            f"{_T}TextStatsTest.java::TextStatsTest#countsWords",
            f"{_T}TextStatsTest.java::TextStatsTest#hyphenSplitsWords",
            f"{_T}TextStatsTest.java::<added>",
        ),
        features=("all three labels", "@ParameterizedTest with @MethodSource", "deleted test method"),
    ),
    DemoCommit(
        "d6ab324ca2bdc1080efa09bdec2524806d0724d3",
        "Padding.center: put the odd fill character on the right",
        "instance",
        frozenset({"breaking", "missing"}),
        (
            f"{_T}PaddingTest.java::PaddingTest#center()",
            f"{_T}PaddingTest.java::PaddingTest#oddPaddingGoesLeft",
            f"{_T}PaddingTest.java::<added>",
        ),
        features=("renamed test method", "overloaded test methods and helpers"),
    ),
    DemoCommit(
        "18b8d221bf66b858903f2515c509f03fbf6b4ea3",
        "PhoneticEncoder: versioned code table with the Soundex h/w rule",
        "instance",
        frozenset({"stale", "missing"}),
        (
            f"{_T}PhoneticEncoderTest.java::PhoneticEncoderTest#encodesNames",
            f"{_T}PhoneticEncoderTest.java::<added>",
        ),
        features=("binary resource change",),
    ),
    DemoCommit(
        "dcc8e655f062d32cd99fecb9a8bf3b148bb77bab",
        "Slugifier: validate constructor arguments, no separator after truncation",
        "instance",
        frozenset({"breaking", "stale"}),
        (
            f"{_T}SlugifierTest.java::SlugifierTest#slugifiesTitles",
            f"{_T}SlugifierTest.java::SlugifierTest#truncatesToMaxLength",
            f"{_T}SlugifierTest.java::SlugifierTest#zeroMaxLength",
        ),
        features=("constructor change", "@ParameterizedTest with @CsvSource (data-only change)"),
    ),
    DemoCommit(
        "867ea90cca42995c0733169b60e0600ae20f80ee",
        "StringUtils.capitalize: use title case and whole code points",
        "instance",
        frozenset({"stale"}),
        (f"{_T}StringUtilsTest.java::StringUtilsTest#repeatsString",),
        gold_covers_change=False,
        features=("no coverage change",),
    ),
    DemoCommit(
        "50a6637a0175ed8d1b667f6e2b2110368514b1a7",
        "CaseConverter: drop deprecated toUpperSnake, no trailing dash in kebab-case",
        "instance",
        frozenset({"breaking"}),
        (
            f"{_T}CaseConverterLegacyTest.java::CaseConverterLegacyTest#upperSnakeFromCamel",
            f"{_T}CaseConverterLegacyTest.java::CaseConverterLegacyTest#upperSnakeFromSpaced",
            f"{_T}CaseConverterTest.java::CaseConverterTest$ToKebab#spacesAroundWords",
        ),
        features=("breaking-only (test compilation)", "deleted test file", "@Nested"),
    ),
    DemoCommit(
        "4e83a7b257c7001c34f1f6f4bc768e27b5643dc1",
        "TextStats.sentenceCount: treat the ellipsis character as a sentence end",
        "rejected",
        reject_reason="production change only (no test change)",
    ),
    DemoCommit(
        "8a9ffb328f49ea354fb3a5c8fe8afc456ba0c41e",
        "StringUtilsTest: more abbreviate() cases",
        "rejected",
        reject_reason="test change only (no production change)",
    ),
    DemoCommit(
        "b46cdee8833042131e69a024fb2f92678dd8e230",
        "WordWrap.lines: return an unmodifiable list",
        "rejected",
        reject_reason="1 changed test line (fewer than 5)",
    ),
    DemoCommit(
        "3830a594665864417377a9b6ed14c16cc3406ddb",
        "Padding.padRight: accept null input",
        "rejected",
        reject_reason="gold test PaddingTest#padRightTruncatesLongInput fails on V0 (execution validation)",
    ),
)

# Commit hashes of the replayed history, oldest first; the last one is the tip of DEMO_BRANCH.
DEMO_COMMITS: tuple[str, ...] = tuple(commit.sha for commit in DEMO_HISTORY)


def history_files() -> list[Path]:
    """The patch series, in commit order (the files are numbered, so name order is commit order)."""
    files = sorted(HISTORY_DIR.glob("*.patch"))
    if not files:
        raise HarnessError(f"demo history missing: no *.patch files in {HISTORY_DIR}")
    return files


def _read_series(patches: Sequence[Path]) -> bytes:
    """Concatenate the patches into one mbox with LF line ends.

    A checkout with ``core.autocrlf=true`` would turn the patch files to CRLF, and ``git am --keep-cr`` would
    then put CRs into the replayed files and change every hash. textkit has no CR anywhere (a test checks the
    shipped series), so dropping them restores the original bytes; base85 binary hunks never contain CR.
    """
    return b"".join(path.read_bytes().replace(b"\r\n", b"\n") for path in patches)


def _git_env(home: Path) -> dict[str, str]:
    """A minimal environment: nothing from the caller (GIT_DIR, GIT_AUTHOR_*, ...) may reach git."""
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_COMMITTER_NAME": _IDENTITY_NAME,
        "GIT_COMMITTER_EMAIL": _IDENTITY_EMAIL,
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
        "TZ": "UTC",
    }


def _git(args: Sequence[str], *, cwd: Path, env: dict[str, str], stdin: bytes | None = None) -> str:
    settings = [arg for key, value in _GIT_SETTINGS for arg in ("-c", f"{key}={value}")]
    try:
        done = git(cwd, *settings, *args, input=stdin, env=env, timeout=_GIT_TIMEOUT_S)
    except GitError as exc:
        raise HarnessError(f"demo replay: {exc}: {exc.stderr.strip()}") from exc
    return done.stdout.decode("utf-8", "replace").strip()


def build_demo_mirror(dest: Path, *, patches: Sequence[Path] | None = None) -> Path:
    """Replay the demo history into a new bare repository at ``dest`` and return its path.

    ``dest`` must not exist or be an empty directory. The branch ``main`` holds the history and HEAD points
    to it. Raises :class:`HarnessError` if git fails or if the replay does not reproduce
    :data:`DEMO_COMMITS` (only possible with the shipped series; pass ``patches`` to replay another one).
    """
    series = list(patches) if patches is not None else history_files()
    dest = Path(dest).absolute()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise HarnessError(f"demo replay: destination {dest} exists and is not an empty directory")
    created = not dest.exists()
    try:
        tip = _replay(series, dest)
        if patches is None and tip != DEMO_COMMITS[-1]:
            raise HarnessError(
                f"demo replay is not reproducible here: tip {tip} != expected {DEMO_COMMITS[-1]} "
                "(the git version or environment changed the commits)"
            )
    except HarnessError:
        _discard(dest, created=created)
        raise
    return dest


def _replay(series: Sequence[Path], dest: Path) -> str:
    """Apply the series in a scratch work tree and push it into a new bare repository; return the tip."""
    with tempfile.TemporaryDirectory(prefix="tebench-demo-") as scratch_name:
        scratch = Path(scratch_name)
        home = scratch / "home"
        home.mkdir()
        work = scratch / "work"
        env = _git_env(home)
        # An empty --template keeps hooks and other template files out of both repositories.
        _git(["init", "-q", "--template=", str(work)], cwd=scratch, env=env)
        _git(["symbolic-ref", "HEAD", f"refs/heads/{DEMO_BRANCH}"], cwd=work, env=env)
        _git(
            ["am", "-q", "--keep-cr", "--committer-date-is-author-date", "--patch-format=mbox"],
            cwd=work,
            env=env,
            stdin=_read_series(series),
        )
        dest.mkdir(parents=True, exist_ok=True)
        _git(["init", "-q", "--bare", "--template=", str(dest)], cwd=scratch, env=env)
        _git(["symbolic-ref", "HEAD", f"refs/heads/{DEMO_BRANCH}"], cwd=dest, env=env)
        ref = f"refs/heads/{DEMO_BRANCH}"
        _git(["push", "-q", str(dest), f"{ref}:{ref}"], cwd=work, env=env)
        return _git(["rev-parse", ref], cwd=dest, env=env)


def _discard(dest: Path, *, created: bool) -> None:
    """Leave no half-built or wrong repository behind; keep a directory the caller made."""
    if created:
        shutil.rmtree(dest, ignore_errors=True)
        return
    if dest.is_dir():
        for child in dest.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)


__all__ = [
    "DEMO_BRANCH",
    "DEMO_COMMITS",
    "DEMO_HISTORY",
    "DEMO_PROJECT",
    "DEMO_REPO",
    "HISTORY_DIR",
    "DemoCommit",
    "build_demo_mirror",
    "history_files",
]
