"""What a prediction's install changed before the tests ran, judged against gold's install.

Some harnesses run the prediction's own build code before the test command: SWE-bench's official
``eval.sh`` re-runs the repository's install after the patch (``pip install -e .``: the patch's
``setup.py``, its in-tree build backend, its entry points), as root, on a writable file system.
That code could rewrite the runner on disk (pytest, pluggy, the standard library's ``unittest``),
drop a ``.pth`` file into site-packages, register a ``pytest11`` plugin, or write a ``conftest.py``
into the tree, before any guard can load.

So the install runs on its own, in a container that then stops (no process of it survives), and the
container engine (not anything inside the container) lists what it changed: :func:`findings`
judges that list (:class:`Change`) before the tests run in a container made from the result.

* **Outside the tree** every changed, added or removed file must be one gold's install of the same
  instance in the same image changed the same way (same content where content can run: everything
  but the descriptive files of package metadata). Without gold's list (it could not be had), only
  files of the runner itself and start-up files are judged (:func:`runner_file`).
* **In the tree**, files the patch itself did not touch (it was judged by the path policy before
  anything ran) are judged by the same policy: a ``conftest.py``, pytest's configuration, a
  start-up file, a module named like the runner; and pytest's own caches of rewritten test and
  ``conftest`` modules (a forged one is imported instead of the source), and git's hooks and
  configuration (the tests' step runs git).
* **Anywhere**: a ``pytest11`` entry point that gold's install does not register.
* **A new dependency** (the patch added one to the package's requirements, and the install could
  reach an index) is the prediction's to add: a package or module the install added whole to
  site-packages, where nothing of that name was before, is not compared with gold, and neither is a
  console script its distribution declares, unless it is named like a program the evaluation runs
  (:data:`PROTECTED_PROGRAMS`). What such a package does when imported is code under test, as the
  patch's own code is; what it could do before any test (a ``.pth`` file, a ``pytest11`` plugin, a
  package named like the runner's, a file of another package) is still judged.

Benchmark-neutral: the caller lists the changes and says where the tree is.
"""

from __future__ import annotations

import configparser
import posixpath
from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_tebench.integrity import paths
from pytest_tebench.integrity.evidence import Finding

#: Folders no later step reads code from: pip's cache (pip does not run once the install is over).
IGNORED_FOLDERS = ("/root/.cache/", "/home/tebench/.cache/")
#: Top-level packages and modules of the runner: a change to one without gold is a finding.
RUNNER_TOP_LEVEL = frozenset({"pytest", "_pytest", "pluggy", "py", "unittest", "tebench_guard", "xdist"})
#: The files under ``.git`` that git's own commands rewrite (status refreshes the index).
GIT_OWN = frozenset({".git/index", ".git/index.lock", ".git/ORIG_HEAD", ".git/FETCH_HEAD"})
#: Programs an evaluation runs (the eval script, test commands, tests that start git or Python):
#: a new console script of one of these names, or starting with one of them (``python3.9``,
#: ``pip3``, ``pytest-3``), is judged like any other file gold's install did not write.
PROTECTED_PROGRAMS = (
    "python", "pip", "pytest", "py.test", "tox", "coverage", "conda", "activate", "deactivate", "git",
    "sh", "bash", "dash", "env", "sed", "patch", "cat", "make", "which", "locale", "django-admin",
    "sphinx-", "pylint", "pyreverse", "isort",
)  # fmt: skip


@dataclass(frozen=True)
class Change:
    """One path the install changed: ``kind`` ``changed``, ``added`` or ``deleted`` (the
    engine's); ``type`` ``file``, ``link``, ``dir`` or ``gone``; ``digest`` of a file's content
    (or a link's target), where it was read; ``pytest11`` the plugins an ``entry_points.txt``
    registers, ``scripts`` the console and GUI scripts it declares, ``top_level`` the packages a
    ``top_level.txt`` names."""

    path: str
    kind: str
    type: str
    digest: str | None = None
    pytest11: tuple[str, ...] = ()
    top_level: tuple[str, ...] = ()
    scripts: tuple[str, ...] = ()

    def as_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"path": self.path, "kind": self.kind, "type": self.type}
        if self.digest is not None:
            record["digest"] = self.digest
        if self.pytest11:
            record["pytest11"] = list(self.pytest11)
        if self.top_level:
            record["top_level"] = list(self.top_level)
        if self.scripts:
            record["scripts"] = list(self.scripts)
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Change:
        return cls(
            path=str(record["path"]),
            kind=str(record["kind"]),
            type=str(record["type"]),
            digest=record.get("digest"),
            pytest11=tuple(record.get("pytest11") or ()),
            top_level=tuple(record.get("top_level") or ()),
            scripts=tuple(record.get("scripts") or ()),
        )


def _entry_points(text: str) -> configparser.ConfigParser | None:
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",), strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def pytest11_entries(text: str) -> tuple[str, ...]:
    """The ``name = module`` lines of the ``[pytest11]`` section of an ``entry_points.txt``."""
    parser = _entry_points(text)
    if parser is None:
        # unreadable for us may still be read by importlib.metadata: say so rather than pass it
        return ("(an entry_points.txt that does not parse)",)
    if not parser.has_section("pytest11"):
        return ()
    return tuple(sorted(f"{name} = {value}" for name, value in parser.items("pytest11")))


def script_names(text: str) -> tuple[str, ...]:
    """The programs the ``[console_scripts]`` and ``[gui_scripts]`` of an ``entry_points.txt`` declare
    (none where it does not parse: its scripts are then judged as unknown files)."""
    parser = _entry_points(text)
    if parser is None:
        return ()
    sections = [s for s in ("console_scripts", "gui_scripts") if parser.has_section(s)]
    return tuple(sorted({name for section in sections for name, _ in parser.items(section)}))


def top_level_names(text: str) -> tuple[str, ...]:
    """The packages a ``top_level.txt`` names, one a line."""
    return tuple(sorted({line.strip() for line in text.splitlines() if line.strip()}))


#: Metadata files whose text :func:`findings` reads (the caller passes it parsed).
READ_FILES = ("entry_points.txt", "top_level.txt")


def wants_content(path: str, tree: str) -> bool:
    """Whether :func:`findings` needs the content of ``path`` (the caller reads only these):
    every file outside the tree but pip's cache, and metadata entry points inside it."""
    if path.startswith(IGNORED_FOLDERS):
        return False
    if _inside(path, tree):
        return posixpath.basename(path) == "entry_points.txt"
    return True


def findings(
    changes: Iterable[Change],
    *,
    tree: str,
    patched: Collection[str],
    policy: paths.RunnerPolicy,
    baseline: Iterable[Change] | None,
) -> list[Finding]:
    """Why the tests must not run after this install (empty: they may).

    ``tree`` is the repository's absolute path, ``patched`` the repository-relative files the patch
    touches (judged before), ``baseline`` gold's changes (None: there are none to compare with)."""
    changes = list(changes)
    base = {change.path: change for change in baseline or ()}
    base_plugins = {entry for change in base.values() for entry in change.pytest11}
    # a non-editable install (requests' `pip install .`, django's `setup.py install`) copies the
    # package under test into site-packages: those copies are the prediction's code (and their byte
    # code is stamped with the install's time), never the runner. Which packages they are, gold's
    # own metadata says (not the prediction's, which could name pytest's)
    under_test = {name for change in base.values() for name in change.top_level} - RUNNER_TOP_LEVEL
    added = new_dependencies(changes)
    found: list[Finding] = []
    for change in changes:
        if change.path.startswith(IGNORED_FOLDERS) or change.type == "dir":
            continue
        if _installed_package(change.path) in under_test:
            continue
        if _inside(change.path, tree):
            rel = posixpath.relpath(change.path, tree)
            if rel not in patched:
                reason = tree_file(rel, policy)
                if reason is not None:
                    found.append(Finding("install-tree", f"{rel} {change.kind} by the install: {reason}"))
        elif baseline is None:
            reason = runner_file(change.path)
            if reason is not None:
                found.append(Finding("install", f"{change.path} {change.kind} by the install: {reason}"))
        elif change.path not in base and change.path in added:
            pass  # a file of a dependency the patch added (gold has none: nothing to compare)
        else:
            difference = _differs(change, base.get(change.path))
            if difference is not None:
                found.append(Finding("install", f"{change.path} {change.kind} by the install; {difference}"))
        for entry in change.pytest11:
            if entry not in base_plugins:
                found.append(Finding("entry-point", f"{change.path} registers the pytest plugin {entry}"))
    # a file gold's install changed that this one left alone is the image's own: nothing to judge
    return found


#: Names a new package must not have: the runner's, what it imports at start-up, and what it
#: imports only when present (highlighting, colours, completion), none of which gold's install wrote.
_RUNNER_NAMES = (
    RUNNER_TOP_LEVEL
    | paths.RUNNER_PACKAGES
    | paths.RUNNER_DEPENDENCIES
    | {"pygments", "argcomplete", "readline"}
)


def new_dependencies(changes: Iterable[Change]) -> set[str]:
    """The added files of :func:`findings`' changes that belong to distributions the install added
    whole: under an entry of site-packages that the install added (nothing of that name was there,
    so it replaces nothing and is imported only by name), and the console scripts an added
    ``entry_points.txt`` declares (not :data:`PROTECTED_PROGRAMS`). Start-up files and the runner's
    names are never among them."""
    changes = list(changes)
    tops = {
        change.path
        for change in changes
        if change.kind == "added" and _site_entry(change.path) == change.path
    }
    scripts = {
        name
        for change in changes
        if change.kind == "added" and _site_entry(change.path) in tops
        for name in change.scripts
        if not name.startswith(PROTECTED_PROGRAMS)
    }
    dependencies: set[str] = set()
    for change in changes:
        if change.kind != "added" or change.type not in ("file", "dir"):
            continue
        parts = change.path.split("/")
        if _site_entry(change.path) in tops:
            top = parts[parts.index(_site_folder(parts)) + 1]
            if top.split(".")[0] not in _RUNNER_NAMES and runner_file(change.path) is None:
                dependencies.add(change.path)
        elif len(parts) > 2 and parts[-2] == "bin" and parts[-1] in scripts:
            dependencies.add(change.path)
    return dependencies


def _site_folder(parts: list[str]) -> str:
    for folder in ("site-packages", "dist-packages"):
        if folder in parts[:-1]:
            return folder
    return ""


def _site_entry(path: str) -> str | None:
    """The entry of site-packages (package folder, module, metadata folder) ``path`` lies in."""
    parts = path.split("/")
    folder = _site_folder(parts)
    if not folder:
        return None
    return "/".join(parts[: parts.index(folder) + 2])


def _installed_package(path: str) -> str | None:
    """The top-level package a file in site-packages belongs to (inside an ``.egg`` folder too)."""
    parts = path.split("/")
    folder = _site_folder(parts)
    if not folder:
        return None
    rest = parts[parts.index(folder) + 1 :]
    if len(rest) > 2 and rest[0].endswith(".egg"):
        rest = rest[1:]
    return rest[0] if len(rest) > 1 else None


def _differs(change: Change, gold: Change | None) -> str | None:
    if _descriptive(change.path):
        # judged by what it says, not by where it is: a version stamped with the day (setuptools-scm's
        # ``.d20261125``) names the metadata folder; entry points are judged by their pytest11 lines
        return None
    if gold is None:
        return "gold's install did not touch it"
    if gold.kind != change.kind or gold.type != change.type:
        return f"gold's install {gold.kind} it ({gold.type})"
    if change.digest != gold.digest:
        return "its content differs from gold's install's"
    return None


def _descriptive(path: str) -> bool:
    """Package metadata that describes, never runs: everything in an ``.egg-info``/``.dist-info``
    folder (its ``entry_points.txt`` is judged by its ``pytest11`` lines)."""
    parts = path.split("/")
    return paths.is_metadata(parts) and not parts[-1].endswith(".egg-link")


def runner_file(path: str) -> str | None:
    """Why a changed file outside the tree is the runner's or runs at start-up, or None."""
    parts = path.split("/")
    name = parts[-1]
    if name.endswith(".pth") or paths.module_name(parts) in paths.STARTUP_MODULES:
        return "run by Python at start-up"
    if name == "entry_points.txt" or name.endswith(".egg-link"):
        return "package metadata pytest reads its plugins from"
    folder = _site_folder(parts)
    if folder:
        top = parts[parts.index(folder) + 1]
        return "the test runner's code" if top.removesuffix(".py") in RUNNER_TOP_LEVEL else None
    if any(part.startswith("python") and at and parts[at - 1] == "lib" for at, part in enumerate(parts[:-1])):
        return "the standard library (unittest, site, the modules every run imports)"
    if "bin" in parts[:-1]:
        return "a program the test command may run"
    return None


def tree_file(rel: str, policy: paths.RunnerPolicy) -> str | None:
    """Why a file of the tree that the install (not the patch) wrote must not be there, or None."""
    parts = rel.split("/")
    name = parts[-1]
    if parts[0] == ".git":
        return None if rel in GIT_OWN else "git's hooks and configuration run in the tests' step"
    if "__pycache__" in parts and (name.startswith("conftest.") or "-pytest-" in name):
        return "pytest's cache of a rewritten test module, imported instead of its source"
    if name in paths.SECTIONED_FILES:
        return "it holds the test runner's configuration"
    refusal = paths.check(paths.Change(rel, None, ""), policy)
    if refusal is not None and refusal.rule not in ("compiled", "metadata"):
        # byte code and extension modules are what builds make (the code under test's); metadata
        # is judged by its entry points
        return f"{refusal.rule}: {refusal.reason}"
    return None


def _inside(path: str, tree: str) -> bool:
    return path == tree or path.startswith(tree.rstrip("/") + "/")
