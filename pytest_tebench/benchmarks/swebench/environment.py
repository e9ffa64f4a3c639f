"""Docker environments for SWE-bench instances, built from Debian packages and PyPI only: the plan
read from SWE-bench's specification, and the images built from it.

Three layers, each cached by the hash of its recipe:

* a **suite base** per Debian or Ubuntu suite, whose ``python3`` is the specification's Python
  (:mod:`.suites`);
* an **environment** per (repo, version, specification) (``pytest-tebench/swebench-env:<hash>``),
  ``docker build`` ``FROM`` the suite base: a venv at ``/opt/venv`` with SWE-bench's packages,
  requirement files (read from the local mirror at ``environment_setup_commit``, never from the
  network) and pip pins installed from PyPI (:mod:`.pip_setup`), then the spec's install command
  run once in ``/workspace`` on the source at ``environment_setup_commit``. Editable installs
  therefore point at ``/workspace``, where each evaluation later mounts the instance's own tree;
  the files the install generated there (egg-info, version files) are kept in
  ``/opt/swebench/generated.tar`` and unpacked into every evaluated tree;
* an **instance layer** (``pytest-tebench/swebench-inst:<hash>``) ``FROM`` the environment, only
  for an instance whose install-deciding files (``setup.py``, ``setup.cfg``, ``pyproject.toml``,
  ``requirements*.txt``) differ from those at ``environment_setup_commit``: the install command
  run again on the tree at ``base_commit``, as SWE-bench's instance images do for every instance
  (pytest 4.6 added ``importlib-metadata`` after its environment commit). Instances whose files are
  the same share the environment; instances whose files are equal share one layer.

What no suite can give is ``unsupported_environment`` (:func:`.suites.unsupported_reason`), decided
from the specification alone, before anything runs. A ``pre_install``'s system lines run as root
at the environment's build; its other lines (``sed`` on the source tree) run before each install.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shlex
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker.errors

from pytest_tebench.benchmarks.swebench import pip_setup
from pytest_tebench.benchmarks.swebench import pypi_dates
from pytest_tebench.benchmarks.swebench.build_failures import BuildFailures
from pytest_tebench.benchmarks.swebench.pip_setup import PYPI_DATES_SCRIPT
from pytest_tebench.benchmarks.swebench.pip_setup import PYPI_DATES_SOURCE
from pytest_tebench.benchmarks.swebench.pip_setup import date_rule_lines
from pytest_tebench.benchmarks.swebench.suites import SUITE_FOR_PYTHON
from pytest_tebench.benchmarks.swebench.suites import base_recipe
from pytest_tebench.benchmarks.swebench.suites import is_system_line
from pytest_tebench.benchmarks.swebench.suites import unsupported_reason
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.locking import file_lock
from pytest_tebench.locking import lock_name
from pytest_tebench.run import docker_image
from pytest_tebench.workspace.gitcmd import GitError
from pytest_tebench.workspace.gitcmd import git

#: Bump to rebuild every environment image (something unhashed changed what they contain).
ENV_RECIPE_VERSION = 1
ENV_REPOSITORY = "pytest-tebench/swebench-env"
VENV = "/opt/venv"
GENERATED_TAR = "/opt/swebench/generated.tar"
#: Unpinned packages resolve as PyPI stood on this date: when SWE-bench was published (October 2023)
#: and its FAIL_TO_PASS / PASS_TO_PASS lists were validated. Today's PyPI gives e.g. pytest 8, which
#: no longer runs nose-style ``setup`` methods that PASS_TO_PASS tests of pydicom rely on.
DEFAULT_PYPI_DATE = "2023-11-01T00:00:00Z"
#: The certificate bundle pip uses in the image: the system one, which trusts the host's CAs.
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"

Progress = Callable[[str], None]


def _script_head(*more_env: str) -> list[str]:
    """The first lines of every build script: strict bash, pip quiet, non-interactive, our CAs."""
    env = " ".join([f"PIP_CERT={CA_BUNDLE} PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1", *more_env])
    return ["#!/bin/bash", "set -euxo pipefail", f"export {env}"]


@dataclass(frozen=True)
class EnvironmentPlan:
    """Everything that shapes one environment image; its hash is the image tag."""

    repo: str
    version: str
    python: str
    suite: str
    #: Shell lines run in the venv, network on, in this order.
    setup: tuple[str, ...]
    install: str
    test_cmd: str
    eval_commands: tuple[str, ...]
    setup_commit: str
    #: SWE-bench's ``pre_install`` commands (run in the source tree before ``install``).
    pre_install: tuple[str, ...] = ()
    #: The ``pre_install`` lines that change the system (apt-get, locale-gen): run once, as root,
    #: at the environment's build (an instance layer runs as the sandbox user and inherits them).
    system: tuple[str, ...] = ()
    #: The requirement files' text read from the mirror (part of the hash through ``setup``).
    requirements: str = ""
    #: setuptools-scm cannot see git metadata in the build context: the version it would compute.
    pretend_version: str = ""
    #: PyPI's date for unpinned packages (already in ``setup``; an instance layer needs it again).
    pypi_date: str = ""

    def script(self) -> str:
        lines = [
            *_script_head(),
            *(["export DEBIAN_FRONTEND=noninteractive", *self.system] if self.system else []),
            f"python3 -m venv {VENV}",
            f". {VENV}/bin/activate",
            *self.setup,
            *self.install_lines(self.pretend_version),
            f"chown -R 1000:1000 {VENV} {docker_image.CONTAINER_WORKSPACE}",
        ]
        return "\n".join(lines) + "\n"

    def install_lines(self, pretend_version: str) -> list[str]:
        """The spec's install in ``/workspace``, then what it generated kept and the tree emptied."""
        lines = [f"cd {docker_image.CONTAINER_WORKSPACE}"]
        if pretend_version:
            lines.append(f"export SETUPTOOLS_SCM_PRETEND_VERSION={shlex.quote(pretend_version)}")
        return [
            *lines,
            *self.pre_install,
            # SWE-bench's conda pip (2023) fell back to `setup.py develop` for projects whose pinned
            # build backend predates PEP 660 (astroid 2.13 pins setuptools~=62.6); today's pip does
            # not, so such an install is retried with the venv's own setuptools
            f"{self.install} || {self.install} --no-build-isolation",
            # what the install generated in the source tree (egg-info, version files), kept for
            # every evaluated tree; the tracked files are listed in /opt/swebench/tracked
            "python3 /opt/swebench/generated.py",
            "python -m pip freeze > /opt/swebench/freeze.txt",
            f"find {docker_image.CONTAINER_WORKSPACE} -mindepth 1 -delete",
        ]

    def tag(self) -> str:
        payload = {
            "v": ENV_RECIPE_VERSION,
            "base": docker_image.image_tag(base_recipe(self.suite)),
            "repo": self.repo,
            "version": self.version,
            "commit": self.setup_commit,
            "script": self.script(),
            "generated": _GENERATED_PY,
        }
        if self.uses_pypi_dates():
            # only then: the tags of environments without exact pins stay what they were
            payload["pypi_dates"] = PYPI_DATES_SOURCE
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
        return f"{ENV_REPOSITORY}:{digest}"

    def uses_pypi_dates(self) -> bool:
        return any(PYPI_DATES_SCRIPT in line for line in self.setup)


# Runs in the image after the install: tar every file under /workspace that git did not track.
_GENERATED_PY = r"""
import os, tarfile
root = "/workspace"
tracked = set(open("/opt/swebench/tracked", encoding="utf-8", errors="surrogateescape").read().split("\0"))
with tarfile.open("/opt/swebench/generated.tar", "w") as tar:
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", "__pycache__")]
        for name in files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            if rel not in tracked:
                tar.add(path, arcname=rel, recursive=False)
                print("generated:", rel)
"""


def plan_environment(
    repo: str,
    version: str,
    spec: dict[str, Any] | None,
    *,
    setup_commit: str,
    read_file: Callable[[str], str | None],
    requirement_paths: tuple[str, ...],
    clean_requirements: Callable[[str], str] = lambda text: text,
    env_yml_paths: tuple[str, ...] = (),
    pretend_version: str = "",
    pypi_date: str = DEFAULT_PYPI_DATE,
    submodules: tuple[tuple[str, str], ...] = (),
) -> EnvironmentPlan:
    """The plan for ``(repo, version)`` from SWE-bench's specification, or
    :class:`UnsupportedEnvironment` (decided here, before anything is built or run).

    ``read_file(path)`` returns a file of the repository at ``setup_commit`` (None if absent);
    ``submodules`` is :func:`submodule_packages` at ``setup_commit``.
    """
    reason = unsupported_reason(repo, version, spec)
    if reason is not None:
        raise UnsupportedEnvironment(reason)
    assert spec is not None
    python = str(spec.get("python", ""))
    suite = SUITE_FOR_PYTHON[python]
    setup, requirements = pip_setup.setup_lines(
        repo,
        spec,
        read_file=read_file,
        requirement_paths=requirement_paths,
        clean_requirements=clean_requirements,
        env_yml_paths=env_yml_paths,
        pypi_date=pypi_date,
        submodules=submodules,
    )
    install = str(spec["install"])
    pre_install = [str(c) for c in spec.get("pre_install") or ()]
    test_cmd = spec.get("test_cmd")
    if isinstance(test_cmd, list):
        test_cmd = test_cmd[-1]
    return EnvironmentPlan(
        repo=repo,
        version=version,
        python=python,
        suite=suite,
        setup=tuple(setup),
        install=install,
        test_cmd=str(test_cmd or "pytest -rA"),
        eval_commands=tuple(str(c) for c in spec.get("eval_commands") or ()),
        pre_install=tuple(c for c in pre_install if not is_system_line(c)),
        system=tuple(c for c in pre_install if is_system_line(c)),
        setup_commit=setup_commit,
        requirements=requirements,
        pretend_version=pretend_version,
        pypi_date=pypi_date,
    )


#: Git submodules whose content PyPI publishes: path -> PyPI project. ``git archive`` leaves a
#: submodule empty; astropy's ``ah_bootstrap`` (astropy up to 3.x) then downloads astropy-helpers
#: with easy_install from pypi.python.org, which fails (and would not be the submodule's version).
#: Installed into the venv beforehand, ah_bootstrap takes it from there.
SUBMODULE_PACKAGES = {"astropy_helpers": "astropy-helpers"}


def submodule_packages(source: Path, commit: str) -> tuple[tuple[str, str], ...]:
    """``(PyPI project, date)`` for each submodule of :data:`SUBMODULE_PACKAGES` at ``commit``: the
    date its pointer last moved, when the release then current is the one it points at or near."""
    found: list[tuple[str, str]] = []
    for path, project in SUBMODULE_PACKAGES.items():
        listed = git(source, "ls-tree", commit, "--", path, check=False).stdout.decode(errors="replace")
        if not listed.startswith("160000 commit "):
            continue
        moved = git(source, "log", "-1", "--format=%cI", commit, "--", path, check=False)
        when = moved.stdout.decode(errors="replace").strip()
        if when:
            found.append((project, pypi_dates.format_time(pypi_dates.parse_time(when))))
    return tuple(found)


def pretend_version(source: Path, commit: str) -> str:
    """What setuptools-scm would call ``commit``: its closest tag (without a leading ``v``)."""
    described = git(source, "describe", "--tags", "--abbrev=0", commit, check=False)
    tag = described.stdout.decode(errors="replace").strip() if described.returncode == 0 else ""
    match = re.search(r"\d+(\.\d+)*", tag)
    return match.group(0) if match else ""


# --------------------------------------------------------------------------- building


def ensure_environment(
    client: Any,
    plan: EnvironmentPlan,
    source: Path,
    *,
    lock_dir: Path,
    progress: Progress,
    failures: BuildFailures | None = None,
) -> str:
    """The environment image's tag, building the suite base and the environment when missing."""
    tag = plan.tag()
    if docker_image.image_present(client, tag):
        return tag
    base = docker_image.ensure_image(client, base_recipe(plan.suite), progress=progress)

    def write(context: Path) -> None:
        _write_context(context, plan, source, base)

    what = f"for {plan.repo} {plan.version} (Python {plan.python})"
    return _build_once(client, tag, write, what, lock_dir=lock_dir, progress=progress, failures=failures)


def _build_once(
    client: Any,
    tag: str,
    write: Callable[[Path], None],
    what: str,
    *,
    lock_dir: Path,
    progress: Progress,
    failures: BuildFailures | None = None,
) -> str:
    """Build ``tag`` from the context ``write`` fills, unless it exists: under a lock, so parallel
    processes needing the same image build it once; and, with ``failures``, not again once it
    failed (in this run, any worker; or in an earlier one, unless the run retries)."""
    with file_lock(lock_dir / (lock_name(tag) + ".lock")):
        if not docker_image.image_present(client, tag):
            if failures is not None:
                failures.check(tag)
            progress(f"[swebench env] building {tag} {what}")
            try:
                with tempfile.TemporaryDirectory(prefix="swebench-build-") as scratch:
                    write(Path(scratch))
                    _docker_build(client, Path(scratch), tag, progress)
            except HarnessError as exc:
                if failures is not None:
                    failures.record(tag, what, str(exc))
                raise
            if failures is not None:
                failures.clear(tag)
    return tag


def _write_source(context: Path, repo: str, source: Path, commit: str) -> None:
    """The tree at ``commit`` as ``src/`` and its tracked paths as ``tracked`` (for generated.py)."""
    try:
        archive = git(source, "archive", "--format=tar", commit, timeout=600).stdout
        tracked = git(source, "ls-tree", "-r", "-z", "--name-only", commit).stdout
    except GitError as exc:
        raise HarnessError(f"cannot read {repo} at {commit}: {exc}") from exc
    src = context / "src"
    src.mkdir()
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(src, filter="tar")
    (context / "tracked").write_bytes(tracked)


def _write_context(context: Path, plan: EnvironmentPlan, source: Path, base: str) -> None:
    _write_source(context, plan.repo, source, plan.setup_commit)
    (context / "setup.sh").write_text(plan.script())
    (context / "generated.py").write_text(_GENERATED_PY)
    (context / "pypi_dates.py").write_text(PYPI_DATES_SOURCE)
    (context / "Dockerfile").write_text(
        "\n".join(
            [
                f"FROM {base}",
                "USER root",
                "COPY tracked setup.sh generated.py pypi_dates.py /opt/swebench/",
                f"COPY src {docker_image.CONTAINER_WORKSPACE}",
                "RUN bash /opt/swebench/setup.sh",
                f"ENV PATH={VENV}/bin:{docker_image.BASE_PATH} VIRTUAL_ENV={VENV}",
                f'LABEL pytest-tebench.swebench="{plan.repo} {plan.version}"',
                f'LABEL pytest-tebench.python="{plan.python}"',
                "USER 1000:1000",
                "",
            ]
        )
    )


# --------------------------------------------------------------------------- instance layers

#: Root files that decide what the spec's install command installs.
INSTALL_FILES = ("setup.py", "setup.cfg", "pyproject.toml")
_ROOT_REQUIREMENTS = re.compile(r"requirements[^/]*\.txt")
INSTANCE_REPOSITORY = "pytest-tebench/swebench-inst"


def install_files(source: Path, commit: str) -> tuple[tuple[str, str], ...]:
    """``(path, blob id)`` of the install-deciding files at ``commit``: equal ids, equal content."""
    try:
        listing = git(source, "ls-tree", commit).stdout.decode("utf-8", errors="replace")
    except GitError as exc:
        raise HarnessError(f"cannot list {commit} of {source}: {exc}") from exc
    found: list[tuple[str, str]] = []
    for line in listing.splitlines():
        meta, _, name = line.partition("\t")
        parts = meta.split()
        install_file = name in INSTALL_FILES or _ROOT_REQUIREMENTS.fullmatch(name)
        if len(parts) == 3 and parts[1] == "blob" and install_file:
            found.append((name, parts[2]))
    return tuple(sorted(found))


@dataclass(frozen=True)
class InstanceLayerPlan:
    """The install run again at an instance's ``base_commit``, on top of its environment image."""

    environment: EnvironmentPlan
    #: The environment image's tag (the layer's ``FROM``).
    base_image: str
    commit: str
    #: :func:`install_files` at ``commit``: the layer is shared by instances with the same ones.
    files: tuple[tuple[str, str], ...]
    pretend_version: str = ""

    def script(self) -> str:
        lines = [*_script_head("PIP_NO_CACHE_DIR=1"), f". {VENV}/bin/activate"]
        lines += date_rule_lines(self.environment.python, self.environment.pypi_date)
        return "\n".join(lines + self.environment.install_lines(self.pretend_version)) + "\n"

    def tag(self) -> str:
        payload = {
            "v": ENV_RECIPE_VERSION,
            "from": self.base_image,
            "files": [list(entry) for entry in self.files],
            "script": self.script(),
            "generated": _GENERATED_PY,
        }
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
        return f"{INSTANCE_REPOSITORY}:{digest}"


def plan_instance_layer(
    plan: EnvironmentPlan, base_image: str, source: Path, commit: str
) -> InstanceLayerPlan | None:
    """The layer ``commit`` needs over ``plan``'s image, or None when its install-deciding files are
    those of ``environment_setup_commit`` (the environment's install is the instance's)."""
    files = install_files(source, commit)
    if files == install_files(source, plan.setup_commit):
        return None
    return InstanceLayerPlan(plan, base_image, commit, files, pretend_version(source, commit))


def ensure_instance_layer(
    client: Any,
    layer: InstanceLayerPlan,
    source: Path,
    *,
    lock_dir: Path,
    progress: Progress,
    failures: BuildFailures | None = None,
) -> str:
    """The instance layer's tag, building it when missing (the environment image must exist)."""
    tag = layer.tag()
    if docker_image.image_present(client, tag):
        return tag

    def write(context: Path) -> None:
        _write_source(context, layer.environment.repo, source, layer.commit)
        (context / "layer.sh").write_text(layer.script())
        (context / "Dockerfile").write_text(
            "\n".join(
                [
                    f"FROM {layer.base_image}",
                    "USER root",
                    "COPY tracked layer.sh /opt/swebench/",
                    # the venv and /workspace are the sandbox user's already: the install runs as
                    # that user, so the layer holds what it changed, not a second copy of the venv
                    "RUN chown -R 1000:1000 /opt/swebench",
                    f"COPY --chown=1000:1000 src {docker_image.CONTAINER_WORKSPACE}",
                    "USER 1000:1000",
                    "RUN bash /opt/swebench/layer.sh",
                    f'LABEL pytest-tebench.swebench-commit="{layer.commit}"',
                    "",
                ]
            )
        )

    plan = layer.environment
    what = f"for {plan.repo} {plan.version}, installed at {layer.commit[:12]}"
    return _build_once(client, tag, write, what, lock_dir=lock_dir, progress=progress, failures=failures)


_SHOWN_BUILD_LINES = ("Step ", "+ ", "Successfully", "ERROR", "generated:")


def _docker_build(client: Any, context: Path, tag: str, progress: Progress) -> None:
    tail: list[str] = []
    try:
        for chunk in client.api.build(path=str(context), tag=tag, rm=True, forcerm=True, decode=True):
            if "error" in chunk:
                raise HarnessError(
                    f"image {tag} failed to build: {chunk['error'].strip()}\n" + "".join(tail[-30:])
                )
            text = str(chunk.get("stream") or "")
            if text:
                tail.append(text)
                for line in text.rstrip("\n").splitlines():
                    # the steps and commands, not pip's every line (the tail goes into a failure)
                    if line.startswith(_SHOWN_BUILD_LINES):
                        progress(f"[swebench env] {line}")
    except docker.errors.DockerException as exc:
        raise HarnessError(f"image {tag} failed to build: {exc}") from exc
    if not docker_image.image_present(client, tag):
        raise HarnessError(f"image {tag} failed to build:\n" + "".join(tail[-30:]))


def show_file(source: Path, commit: str) -> Callable[[str], str | None]:
    """``read_file`` for :func:`plan_environment`: files of ``source`` at ``commit``."""

    def read(path: str) -> str | None:
        result = git(source, "show", f"{commit}:{os.path.normpath(path)}", check=False)
        return result.stdout.decode("utf-8", errors="replace") if result.returncode == 0 else None

    return read
