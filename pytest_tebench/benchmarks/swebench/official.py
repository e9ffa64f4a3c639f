"""The official ``swebench`` package (MIT, the ``swebench`` extra), behind one small interface.

We reuse, rather than re-implement, what decides a SWE-bench verdict: the per-(repo, version)
specifications (``MAP_REPO_VERSION_TO_SPECS``: Python version, packages, install and test
commands), the requirement file paths, the test directives derived from ``test_patch``, the log
parsers and the grading functions (``get_logs_eval`` / ``get_eval_tests_report`` /
``get_resolution_status``). Version 4.1.0 is the last release that ships the specifications
(5.x moved them into per-instance Dockerfiles of its registry images, which are not reachable
here). It imports offline; nothing it fetches from the network is called here (its
``get_requirements`` downloads from GitHub, so requirement files are read from the local mirror
by :mod:`~pytest_tebench.benchmarks.swebench.environment` instead).

Importing the package takes a few seconds (it imports its Docker and Modal helpers), so it is
imported once, lazily, the first time a function here is called.
"""

from __future__ import annotations

import functools
import os
import tempfile
import warnings
from dataclasses import dataclass
from dataclasses import field
from types import ModuleType
from typing import Any

from pytest_tebench.benchmarks.swebench import pytest_ids
from pytest_tebench.errors import HarnessError

#: The release whose specifications and grading we follow (pinned by the extra).
SWEBENCH_VERSION = "4.1.0"
INSTALL_HINT = "pip install 'pytest-tebench[swebench]'"

START_TEST_OUTPUT = ">>>>> Start Test Output"
END_TEST_OUTPUT = ">>>>> End Test Output"


class SwebenchMissing(HarnessError):
    """The ``swebench`` package is not installed (or not the version we follow)."""


@dataclass(frozen=True)
class Modules:
    constants: ModuleType
    log_parsers: ModuleType
    grading: ModuleType
    test_spec: ModuleType
    python_spec: ModuleType
    python_parsers: ModuleType
    utils: ModuleType
    version: str


@functools.cache
def modules() -> Modules:
    """The package's modules, imported once; :class:`SwebenchMissing` when it is absent."""
    try:
        with warnings.catch_warnings():
            # its dependencies (modal, datasets) warn at import time; not our users' business
            warnings.simplefilter("ignore")
            import swebench
            from swebench.harness import constants
            from swebench.harness import grading
            from swebench.harness import log_parsers
            from swebench.harness import utils
            from swebench.harness.log_parsers import python as python_parsers
            from swebench.harness.test_spec import python as python_spec
            from swebench.harness.test_spec import test_spec
    except ImportError as exc:
        raise SwebenchMissing(
            f"the SWE-bench benchmark needs the swebench package {SWEBENCH_VERSION} ({INSTALL_HINT}): {exc}"
        ) from exc
    version = str(getattr(swebench, "__version__", "?"))
    if not hasattr(constants, "MAP_REPO_VERSION_TO_SPECS"):
        raise SwebenchMissing(
            f"swebench {version} has no MAP_REPO_VERSION_TO_SPECS (it moved to per-instance images in 5.x); "
            f"install swebench=={SWEBENCH_VERSION} ({INSTALL_HINT})"
        )
    return Modules(constants, log_parsers, grading, test_spec, python_spec, python_parsers, utils, version)


def package_version() -> str:
    return modules().version


def specs(repo: str, version: str) -> dict[str, Any] | None:
    """SWE-bench's specification of ``(repo, version)``, or None when it has none."""
    table = modules().constants.MAP_REPO_VERSION_TO_SPECS
    by_version = table.get(repo)
    if by_version is None:
        return None
    found = by_version.get(version)
    return dict(found) if found is not None else None


def requirement_paths(repo: str) -> tuple[str, ...]:
    """Where ``packages: requirements.txt`` specifications find the repository's requirements."""
    return tuple(modules().constants.MAP_REPO_TO_REQS_PATHS.get(repo, ()))


def env_yml_paths(repo: str) -> tuple[str, ...]:
    """Where ``packages: environment.yml`` specifications find the repository's conda environment."""
    return tuple(modules().constants.MAP_REPO_TO_ENV_YML_PATHS.get(repo, ()))


def non_test_extensions() -> tuple[str, ...]:
    return tuple(modules().constants.NON_TEST_EXTS)


def register_repository(repo: str, specs_by_version: dict[str, dict[str, Any]], parser: str) -> None:
    """Add a repository SWE-bench does not know, the way SWE-bench itself lists each one: its
    specifications in ``MAP_REPO_VERSION_TO_SPECS`` and its parser in ``MAP_REPO_TO_PARSER``
    (the grading functions look both up by repository). Existing entries are never replaced."""
    mods = modules()
    mods.constants.MAP_REPO_VERSION_TO_SPECS.setdefault(repo, dict(specs_by_version))
    found = _parser(parser) or log_parser(parser)
    if found is None:
        raise HarnessError(f"swebench {mods.version} has no log parser {parser!r}")
    mods.log_parsers.MAP_REPO_TO_PARSER.setdefault(repo, found)


def _parser(name: str | None) -> Any:
    """A Python log parser by its name (the v5 ``log_parser`` column), or None."""
    if not name:
        return None
    found = getattr(modules().python_parsers, name, None)
    return found if callable(found) else None


#: The package's log parser modules, one per language (``swebench.harness.log_parsers.<name>``).
PARSER_MODULES = ("c", "go", "java", "javascript", "php", "python", "ruby", "rust")


@functools.cache
def parser_registry() -> dict[str, Any]:
    """Every log parser of the package by its name, whatever its language (4.1.0 has no registry
    by name: its ``MAP_REPO_TO_PARSER`` maps repositories)."""
    import importlib

    modules()
    registry: dict[str, Any] = {}
    for language in PARSER_MODULES:
        module = importlib.import_module(f"swebench.harness.log_parsers.{language}")
        for name, value in vars(module).items():
            if name.startswith("parse_log_") and callable(value) and value.__module__ == module.__name__:
                registry[name] = value
    return registry


def log_parser(name: str) -> Any:
    """The package's log parser named ``name`` (any language), or None."""
    return parser_registry().get(name)


def repository_parser(repo: str) -> str | None:
    """The name of the package's log parser of ``repo`` (``MAP_REPO_TO_PARSER``), or None."""
    found = modules().log_parsers.MAP_REPO_TO_PARSER.get(repo)
    return None if found is None else str(found.__name__)


def test_directives(repo: str, test_patch: str) -> list[str]:
    """The test files the test command runs: those ``test_patch`` touches, minus data files."""
    return list(modules().python_spec.get_test_directives({"repo": repo, "test_patch": test_patch}))


def modified_files(patch: str) -> list[str]:
    """Files a patch modifies that exist before it (reset to the base commit before the tests run)."""
    return list(modules().utils.get_modified_files(patch))


def parser_name(repo: str, requested: str | None) -> str:
    """The log parser to use: the row's ``log_parser`` when the package knows it, else the repo's."""
    if requested and (_parser(requested) is not None or log_parser(requested) is not None):
        return requested
    by_repo = modules().log_parsers.MAP_REPO_TO_PARSER.get(repo)
    if by_repo is None:
        raise HarnessError(f"swebench {package_version()} has no log parser for {repo}")
    return str(by_repo.__name__)


@dataclass(frozen=True)
class Grade:
    """The verdict on one test log, exactly as SWE-bench computes it."""

    #: False when the log has no test output between the markers (SWE-bench: not resolved).
    log_found: bool
    status_map: dict[str, str]
    tests_status: dict[str, dict[str, list[str]]]
    #: ``RESOLVED_FULL``, ``RESOLVED_PARTIAL`` or ``RESOLVED_NO``.
    resolution: str
    #: Expected names graded by the log's other pytest spelling of the same test
    #: (:mod:`.pytest_ids`): ``{expected name: name in the log}``; ``status_map`` is the log's own.
    renamed: dict[str, str] = field(default_factory=dict)

    @property
    def resolved(self) -> bool:
        return self.log_found and self.resolution == "RESOLVED_FULL"


def grade(
    *,
    instance_id: str,
    repo: str,
    version: str,
    fail_to_pass: list[str],
    pass_to_pass: list[str],
    log: str,
    log_parser: str | None = None,
    eval_type: str | None = None,
) -> Grade:
    """Parse ``log`` (with SWE-bench's start/end markers) and grade it against F2P/P2P.

    The same functions ``get_eval_report`` chains: ``get_logs_eval`` (markers, bad codes, the
    repository's parser), ``get_eval_tests_report`` and ``get_resolution_status``. When the row
    names a ``log_parser`` that differs from the repository's, that parser is used (v5 rows).
    An expected name the log has only under another pytest version's spelling is graded by that
    one (:mod:`.pytest_ids`, pytest 8's duplicate-id suffix). ``eval_type`` (a v5 row's
    ``pass_and_fail`` or ``fail_only``) chooses ``get_eval_tests_report``'s check (default
    ``pass_and_fail``).
    """
    mods = modules()
    spec = mods.test_spec.TestSpec(
        instance_id=instance_id,
        repo=repo,
        version=version,
        repo_script_list=[],
        eval_script_list=[],
        env_script_list=[],
        arch="x86_64",
        FAIL_TO_PASS=list(fail_to_pass),
        PASS_TO_PASS=list(pass_to_pass),
        language="py",
        docker_specs={},
        namespace=None,
    )
    handle, path = tempfile.mkstemp(prefix="swebench-log-", suffix=".txt")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(log)
        status_map, found = mods.grading.get_logs_eval(spec, path)
    finally:
        os.unlink(path)
    # a Python row's parser is one of the Python parsers (as before for Lite and Verified); a
    # Multilingual row's one of any language
    parse = _parser(log_parser) or parser_registry().get(log_parser or "")
    if found and parse is not None and parse is not mods.log_parsers.MAP_REPO_TO_PARSER[repo]:
        section = log.split(START_TEST_OUTPUT, 1)[1].split(END_TEST_OUTPUT, 1)[0]
        status_map = parse(section, spec) or parse(log, spec)
    constants = mods.constants
    gold = {constants.FAIL_TO_PASS: list(fail_to_pass), constants.PASS_TO_PASS: list(pass_to_pass)}
    renamed = pytest_ids.renamed_tests([*fail_to_pass, *pass_to_pass], status_map)
    graded = {**status_map, **{name: status_map[logged] for name, logged in renamed.items()}}
    # the row's eval_type; none (Lite, Verified): pass_and_fail, as this grading always did
    chosen = constants.EvalType(eval_type or constants.EvalType.PASS_AND_FAIL.value)
    report = mods.grading.get_eval_tests_report(graded, gold, eval_type=chosen)
    resolution = mods.grading.get_resolution_status(report) if found else "RESOLVED_NO"
    tests_status = {
        key: {"success": list(value["success"]), "failure": list(value["failure"])}
        for key, value in report.items()
        if key in (constants.FAIL_TO_PASS, constants.PASS_TO_PASS)
    }
    return Grade(found, dict(status_map), tests_status, str(resolution), renamed)
