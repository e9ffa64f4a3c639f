"""Which files a prediction may not change: what configures or starts the test runner.

A prediction is code that runs in the process that grades it. The cheapest ways to make that
process report a pass are declarative: a ``conftest.py`` with a report hook, an ini file whose
``addopts`` loads a plugin, a ``sitecustomize.py`` or ``.pth`` file run at interpreter start-up, an
edit to the script the test command runs. This module decides, from the changed files alone and
before anything runs, whether a prediction touches any of them. It is benchmark-neutral: the
caller says what the test command is and whether test content (``conftest.py``) is the
prediction's to write (SWT-bench, where the prediction is a test patch) or not (SWE-bench).

Rules (each :class:`Refusal` names its rule):

``conftest``
    a ``conftest.py`` anywhere (unless the policy allows test content);
``pytest-config``
    ``pytest.ini``, ``.pytest.ini``, ``pytest.toml``, ``.pytest.toml`` anywhere (the closest one to
    the test files is the one pytest reads), or a change inside the pytest section of
    ``tox.ini`` (``[pytest]``), ``setup.cfg`` (``[tool:pytest]``, legacy ``[pytest]``) or
    ``pyproject.toml`` (``[tool.pytest...]``); other sections of those files are the project's;
``tox-config``
    when the test command is ``tox``: ``tox.ini``, and the tox sections of ``setup.cfg`` and
    ``pyproject.toml`` (they say what tox runs);
``startup``
    ``sitecustomize`` / ``usercustomize`` modules and ``.pth`` files anywhere (run at start-up when
    their directory is on ``sys.path``, as an editable install's tree is);
``test-command``
    the scripts the instance's test command names (``tests/runtests.py``, ``bin/test``), the
    settings module it names (``--settings=test_sqlite``), and the modules a repository's runner
    script takes its verdict from (:data:`RUNNER_MODULES`);
``shadowing``
    a new module or package named like the runner's own (``pytest``, ``_pytest``, ``pluggy``, ``py``)
    anywhere, or like a standard-library module or one pytest imports at start-up (``tomli``,
    ``iniconfig``, ...) at the tree's root (the root is on ``sys.path`` before the standard library
    when the test command runs with it on ``PYTHONPATH``);
``compiled``
    byte code (``.pyc``, ``__pycache__``) or extension modules (``.so``, ``.pyd``): they are imported
    instead of the source the diff shows (an unchecked-hash ``.pyc`` is never compared with it);
``metadata``
    installed-package metadata (a ``*.egg-info`` or ``*.dist-info`` folder, an ``*.egg`` folder,
    an ``.egg-link`` file): on ``sys.path`` (an editable install's tree is) its ``entry_points.txt``
    registers ``pytest11`` plugins that pytest loads at start-up, before any test runs; and a
    ``pytest11`` entry point declared in ``setup.cfg``, ``pyproject.toml`` or ``setup.py`` (an
    install run after the patch, as SWE-bench's official eval script does, would register it);
``link``
    a symbolic link or a submodule.
"""

from __future__ import annotations

import posixpath
import re
import shlex
import sys
import tomllib
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: Files that are pytest's configuration whatever their content.
PYTEST_FILES = frozenset({"pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml"})
#: Files whose pytest (or tox) sections configure the runner; the rest of them is the project's.
SECTIONED_FILES = frozenset({"tox.ini", "setup.cfg", "pyproject.toml"})
#: INI sections pytest reads, per file (``[pytest]`` in setup.cfg: pytest < 4 read it too).
PYTEST_SECTIONS: Mapping[str, tuple[str, ...]] = {
    "tox.ini": ("pytest",),
    "setup.cfg": ("tool:pytest", "pytest"),
}
#: Sections that say what ``tox`` runs (prefixes).
TOX_SECTIONS = ("tox", "tox:", "testenv")
STARTUP_MODULES = frozenset({"sitecustomize", "usercustomize"})
#: Top-level packages of the runner itself (and the harness's guard): a module of this name
#: anywhere could replace it.
RUNNER_PACKAGES = frozenset(
    {"pytest", "_pytest", "pluggy", "py", "tebench_guard", "tebench_run", "tebench_core"}
)
#: What pytest (4.6 to 8) imports at start-up, before the guard loads. At the root of the tree a
#: module of this name, like one of the standard library's, would run first: the root is on
#: ``sys.path`` before site-packages when the test command runs with it on ``PYTHONPATH``.
RUNNER_DEPENDENCIES = frozenset(
    {
        "iniconfig", "packaging", "exceptiongroup", "tomli", "colorama", "attr", "attrs", "more_itertools",
        "atomicwrites", "wcwidth", "six", "importlib_metadata", "zipp", "typing_extensions", "_py",
        "xdist", "execnet", "setuptools", "pkg_resources", "_distutils_hack",
    }
)  # fmt: skip
COMPILED_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd")
#: Files that declare a package's entry points (``pytest11`` plugins among them).
PLUGIN_DECLARING_FILES = frozenset({"setup.py", "setup.cfg", "pyproject.toml"})
#: Folders (and ``.egg-link`` files) that importlib.metadata and pkg_resources read distributions from.
METADATA_FOLDER_SUFFIXES = (".egg-info", ".dist-info", ".egg")
#: Modules that make a repository's verdict besides the scripts its test command names: the
#: runner ``bin/test`` imports (sympy), the test runner ``tests/runtests.py`` uses (django).
#: The guard's launcher watches them from the moment they are imported (:func:`runner_modules`).
RUNNER_MODULES: dict[str, tuple[str, ...]] = {
    "sympy/sympy": ("sympy/testing/runtests.py", "sympy/utilities/runtests.py"),
    "django/django": ("django/test/runner.py",),
}
_SECTION_HEADER = re.compile(r"^\[([^\]\n]+)\]\s*$")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class Change:
    """One file a prediction changes: its text before and after (None where it does not exist)."""

    path: str
    old: str | None
    new: str | None
    #: Git file mode after the change (``120000`` a symbolic link, ``160000`` a submodule), or "".
    mode: str = ""


@dataclass(frozen=True)
class Refusal:
    path: str
    rule: str
    reason: str

    def as_record(self) -> dict[str, str]:
        return {"path": self.path, "kind": "runner", "rule": self.rule, "reason": self.reason}


@dataclass(frozen=True)
class RunnerPolicy:
    """What a prediction may not change, for one test command."""

    #: Repository-relative files the test command runs or its verdict comes from.
    scripts: frozenset[str] = frozenset()
    #: Whether the test command is ``tox`` (its configuration then says what runs).
    tox: bool = False
    #: Whether test content (``conftest.py``) is the prediction's to write (SWT-bench).
    test_content: bool = False


def policy_for(test_command: str, repo: str = "", *, test_content: bool = False) -> RunnerPolicy:
    """The policy for ``test_command`` (SWE-bench's spec ``test_cmd``) of ``repo``."""
    try:
        words = shlex.split(test_command)
    except ValueError:
        words = test_command.split()
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)  # VAR=value before the program
    scripts: list[str] = list(RUNNER_MODULES.get(repo, ()))
    named = [_relative(w) for w in words if not w.startswith("-") and "/" in w]
    scripts += named
    for word in words:
        if word.startswith("--settings="):
            # django's settings module, found next to the runner script
            module = word.split("=", 1)[1].replace(".", "/")
            folder = posixpath.dirname(named[0]) if named else ""
            scripts += [posixpath.join(folder, module + ".py"), posixpath.join(folder, module, "__init__.py")]
    return RunnerPolicy(
        scripts=frozenset(scripts),
        tox=bool(words) and posixpath.basename(words[0]) == "tox",
        test_content=test_content,
    )


def register_runner_modules(repo: str, files: Iterable[str]) -> None:
    """Name the runner modules of a repository SWE-bench does not know (the runner-script demos);
    existing entries are never replaced."""
    RUNNER_MODULES.setdefault(repo, tuple(files))


def runner_modules(repo: str) -> tuple[str, ...]:
    """The dotted names of ``repo``'s runner modules (``sympy.testing.runtests``)."""
    files = RUNNER_MODULES.get(repo, ())
    return tuple(path.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for path in files)


def _relative(path: str) -> str:
    return posixpath.normpath(path.lstrip("/")).removeprefix("./")


def refusals(changes: Iterable[Change], policy: RunnerPolicy) -> list[Refusal]:
    """Every change the policy refuses, in the order given."""
    found = (check(change, policy) for change in changes)
    return [refusal for refusal in found if refusal is not None]


def check(change: Change, policy: RunnerPolicy) -> Refusal | None:
    """The first rule ``change`` breaks, or None."""
    path = _relative(change.path)
    name = posixpath.basename(path)
    parts = path.split("/")

    def refuse(rule: str, reason: str) -> Refusal:
        return Refusal(path, rule, reason)

    if change.mode in ("120000", "160000"):
        return refuse("link", "a symbolic link or submodule")
    if path in policy.scripts:
        return refuse("test-command", "the test command runs it or takes its verdict from it")
    if name == "conftest.py" and not policy.test_content:
        return refuse("conftest", "pytest loads every conftest.py as a plugin of the run")
    if name in PYTEST_FILES:
        return refuse("pytest-config", "pytest's configuration file")
    if name.endswith(".pth") or module_name(parts) in STARTUP_MODULES:
        return refuse("startup", "run by Python at start-up when its directory is on sys.path")
    if name.endswith(COMPILED_SUFFIXES) or "__pycache__" in parts:
        return refuse("compiled", "compiled code is imported instead of the source the diff shows")
    if is_metadata(parts):
        return refuse("metadata", "package metadata: its entry points register plugins pytest loads first")
    if name in PLUGIN_DECLARING_FILES and _declares_plugin(name, change.old, change.new):
        return refuse("metadata", "declares a pytest11 entry point: once installed, pytest loads the plugin")
    if name in SECTIONED_FILES:
        section = _changed_section(name, change.old, change.new, policy.tox)
        if section is not None:
            rule = "tox-config" if section.startswith(("tox", "testenv", "tool.tox")) else "pytest-config"
            return refuse(rule, f"changes the [{section}] section, which configures the test runner")
    if policy.tox and name == "tox.ini":
        return refuse("tox-config", "tox.ini says what the test command runs")
    if change.old is None:
        module = module_name(parts)
        # at the root: a module file or a package's __init__ (a root folder of other files is no package)
        at_root = len(parts) == 1 or (len(parts) == 2 and name == "__init__.py")
        shadowed = sys.stdlib_module_names | RUNNER_DEPENDENCIES
        if module in RUNNER_PACKAGES or (at_root and module in shadowed):
            return refuse("shadowing", f"a new module {module!r} would shadow the runner's or Python's own")
    return None


def is_metadata(parts: list[str]) -> bool:
    """Whether a path (its ``/``-separated parts) lies in installed-package metadata, where
    ``entry_points.txt`` (``[pytest11]``) makes pytest load a plugin (:data:`METADATA_FOLDER_SUFFIXES`)."""
    return parts[-1].endswith(".egg-link") or any(p.endswith(METADATA_FOLDER_SUFFIXES) for p in parts[:-1])


def module_name(parts: list[str]) -> str:
    """The module a ``.py`` path defines (``a/b.py`` -> ``b``, ``a/b/__init__.py`` -> ``b``), or ""."""
    name = parts[-1]
    if name == "__init__.py" and len(parts) >= 2:
        return parts[-2]
    return name[: -len(".py")] if name.endswith(".py") else ""


def _declares_plugin(name: str, old: str | None, new: str | None) -> bool:
    """Whether the change adds or alters a ``pytest11`` entry point of the package."""
    if name == "setup.py":
        # code: only the plain spelling is seen here (an install's result is judged where one runs)
        return (new or "").count("pytest11") > (old or "").count("pytest11")
    if name == "setup.cfg":
        before, after = ini_sections(old or ""), ini_sections(new or "")
        section = "options.entry_points"
        changed = before.get(section) != after.get(section)
        lines = [*after.get(section, []), *before.get(section, [])]
        return changed and any("pytest11" in line for line in lines)
    before_toml, after_toml = _toml_root(old), _toml_root(new)
    return any(_dig(before_toml, keys) != _dig(after_toml, keys) for keys in _TOML_PLUGIN_KEYS)


_TOML_PLUGIN_KEYS = (("project", "entry-points", "pytest11"), ("tool", "poetry", "plugins", "pytest11"))


def _toml_root(text: str | None) -> dict[str, Any]:
    try:
        return tomllib.loads(text or "")
    except tomllib.TOMLDecodeError:
        return {"unreadable": True}


def _dig(table: Any, keys: tuple[str, ...]) -> Any:
    for key in keys:
        table = table.get(key) if isinstance(table, dict) else None
    return table


def _changed_section(name: str, old: str | None, new: str | None, tox: bool) -> str | None:
    """The runner section of ``name`` that differs between ``old`` and ``new``, or None."""
    if name == "pyproject.toml":
        before, after = _toml_tool(old), _toml_tool(new)
        keys = ["pytest"] + (["tox"] if tox else [])
        if after is None:
            return "tool.pytest (the file is not valid TOML)"
        for key in keys:
            if (before or {}).get(key) != after.get(key):
                return f"tool.{key}"
        return None
    wanted = PYTEST_SECTIONS.get(name, ())
    old_sections, new_sections = ini_sections(old or ""), ini_sections(new or "")
    for section in sorted(set(old_sections) | set(new_sections)):
        runner = section in wanted or (tox and section.startswith(TOX_SECTIONS))
        if runner and old_sections.get(section) != new_sections.get(section):
            return section
    return None


def _toml_tool(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return {}
    try:
        tool = tomllib.loads(text).get("tool", {})
    except tomllib.TOMLDecodeError:
        return None
    return tool if isinstance(tool, dict) else {}


def ini_sections(text: str) -> dict[str, list[str]]:
    """``{section: its non-blank, non-comment lines}`` as pytest's and tox's INI readers see them
    (a header starts in the first column; lines before the first header belong to none)."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        header = _SECTION_HEADER.match(line)
        if header:
            current = sections.setdefault(header.group(1).strip(), [])
            continue
        stripped = line.strip()
        if current is not None and stripped and not stripped.startswith(("#", ";")):
            current.append(line.rstrip())
    return sections
