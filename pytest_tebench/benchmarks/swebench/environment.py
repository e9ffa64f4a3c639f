"""Docker environments for SWE-bench instances, built from Debian packages and PyPI only.

Two layers, both cached by the hash of their recipe:

* a **suite base** per Debian suite (``pytest-tebench/python-<suite>:<hash>``): debootstrap, the
  suite's own ``python3`` (bullseye 3.9, bookworm 3.11, trixie 3.13), ``python3-venv``, a C
  toolchain for sdists, git; made by :mod:`pytest_tebench.run.docker_image`, like the Java image;
* an **environment** per (repo, version, specification) (``pytest-tebench/swebench-env:<hash>``),
  ``docker build`` ``FROM`` the suite base: a venv at ``/opt/venv`` with SWE-bench's packages,
  requirement files (read from the local mirror at ``environment_setup_commit``, never from the
  network) and pip pins installed from PyPI, then the spec's install command run once in
  ``/workspace`` on the source at ``environment_setup_commit``. Editable installs therefore point
  at ``/workspace``, where each evaluation later mounts the instance's own tree; the files the
  install generated there (egg-info, version files) are kept in ``/opt/swebench/generated.tar``
  and unpacked into every evaluated tree;
* an **instance layer** (``pytest-tebench/swebench-inst:<hash>``) ``FROM`` the environment, only
  for an instance whose install-deciding files (``setup.py``, ``setup.cfg``, ``pyproject.toml``,
  ``requirements*.txt``) differ from those at ``environment_setup_commit``: the install command
  run again on the tree at ``base_commit``, as SWE-bench's instance images do for every instance
  (pytest 4.6 added ``importlib-metadata`` after its environment commit). Instances whose files are
  the same share the environment; instances whose files are equal share one layer.

SWE-bench itself makes its environments with conda, which can provide any Python; Debian provides
one per suite. A specification whose Python no suite ships, a conda ``environment.yml``, or a
``pre_install`` that downloads from outside PyPI and Debian, is ``unsupported_environment``:
decided from the specification alone, before anything runs, and never counted as a model's
failure. A ``pre_install``'s system lines (``apt-get install`` of Debian packages, ``locale-gen``,
writes under ``/etc``) run as root at the environment's build, from the suite's own mirror; its
other lines (``sed`` on the source tree) run before each install.
"""

from __future__ import annotations

import dataclasses
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

from pytest_tebench.benchmarks.swebench import conda_env
from pytest_tebench.benchmarks.swebench import pypi_dates
from pytest_tebench.benchmarks.swebench.build_failures import BuildFailures
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
#: The suite whose ``python3`` is each Python: Debian's, and Ubuntu's for versions no Debian suite
#: the mirror still serves has (Ubuntu 18.04 bionic 3.6, 20.04 focal 3.8, 22.04 jammy 3.10).
SUITE_FOR_PYTHON = {
    "3.6": "bionic",
    "3.8": "focal",
    "3.9": "bullseye",
    "3.10": "jammy",
    "3.11": "bookworm",
    "3.13": "trixie",
}
UBUNTU_SUITES = frozenset({"bionic", "focal", "jammy"})
PYPI_INDEX = "https://pypi.org/simple"
UBUNTU_MIRROR = "http://archive.ubuntu.com/ubuntu"
#: Ubuntu's archive keys (2012 archive, 2012 CD image, 2018 archive), as ubuntu-keyring ships them:
#: a Debian host has no Ubuntu keyring, so the package is fetched and held to these.
UBUNTU_KEYRING_DEB = f"{UBUNTU_MIRROR}/pool/main/u/ubuntu-keyring/ubuntu-keyring_2023.11.28.1_all.deb"
UBUNTU_FINGERPRINTS = (
    "790BC7277767219C42C86F933B4FE6ACC0B21F32",
    "843938DF228D22F7B3742BC0D94AA3F0EFE21092",
    "F6ECB3762474EDA9D21B7022871920D1991BC93C",
)
#: Unpinned packages resolve as PyPI stood on this date: when SWE-bench was published (October 2023)
#: and its FAIL_TO_PASS / PASS_TO_PASS lists were validated. Today's PyPI gives e.g. pytest 8, which
#: no longer runs nose-style ``setup`` methods that PASS_TO_PASS tests of pydicom rely on.
DEFAULT_PYPI_DATE = "2023-11-01T00:00:00Z"
#: The certificate bundle pip uses in the image: the system one, which trusts the host's CAs.
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
#: Where the build finds :mod:`.pypi_dates` (the date an exact pin's dependencies resolve at).
PYPI_DATES_SCRIPT = "/opt/swebench/pypi_dates.py"
_PYPI_DATES_SOURCE = Path(pypi_dates.__file__).read_text(encoding="utf-8")

Progress = Callable[[str], None]


# The suite base's setup script, run as root in the debootstrapped rootfs by docker_image.
_BASE_TEMPLATE = r"""#!/bin/sh
# pytest-tebench python base {recipe_version}: runs as root inside the debootstrapped rootfs.
set -eu
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 PATH={base_path}
mkdir -p /etc/dpkg/dpkg.cfg.d /etc/apt/apt.conf.d
cat >/etc/dpkg/dpkg.cfg.d/01-tebench-nodoc <<'EOF'
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
EOF
cat >/etc/apt/apt.conf.d/01-tebench <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Check-Valid-Until "false";
Acquire::Retries "3";
EOF
printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
chmod 755 /usr/sbin/policy-rc.d
apt-get -q update
apt-get -q install -y {packages}
groupadd --gid {uid} {user}
useradd --no-log-init --uid {uid} --gid {uid} --create-home --shell /bin/bash {user}
mkdir -p {workspace}
chown {uid}:{uid} {workspace}
{{
    echo "python: $(python3 --version 2>&1)"
    echo "suite: {suite}"
}} >/etc/tebench-image
cat /etc/tebench-image
apt-get clean
rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/*.log /tmp/* /var/tmp/*
rm -f /usr/sbin/policy-rc.d
echo "recipe: done"
"""

_BASE_PACKAGES = (
    "python3",
    "python3-venv",
    "python3-dev",
    "build-essential",
    "git",
    "ca-certificates",
)


def base_recipe(suite: str) -> docker_image.Recipe:
    """The suite base image's recipe (the same machinery and cache rules as the Java image)."""
    recipe = docker_image.Recipe(
        suite=suite,
        packages=_BASE_PACKAGES,
        jdks=(),
        default_jdk=0,
        template=_BASE_TEMPLATE,
        changes=(
            f"ENV PATH={docker_image.BASE_PATH}",
            "ENV LANG=C.UTF-8",
            f"ENV HOME={docker_image.CONTAINER_HOME}",
            "USER 1000:1000",
            f"WORKDIR {docker_image.CONTAINER_WORKSPACE}",
            'CMD ["/bin/bash"]',
        ),
        repository=f"pytest-tebench/python-{suite}",
    )
    if suite not in UBUNTU_SUITES:
        return recipe
    # bionic's venv has pip 9, whose default index is the old pypi.python.org (gone); focal's
    # (pip 20) and jammy's (pip 22) already use pypi.org
    changes = (*recipe.changes, f"ENV PIP_INDEX_URL={PYPI_INDEX}") if suite == "bionic" else recipe.changes
    # python3-venv is in Ubuntu's universe
    return dataclasses.replace(
        recipe,
        changes=changes,
        mirror=UBUNTU_MIRROR,
        keyring_deb=UBUNTU_KEYRING_DEB,
        keyring_fingerprints=UBUNTU_FINGERPRINTS,
        components=("main", "universe"),
    )


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
            payload["pypi_dates"] = _PYPI_DATES_SOURCE
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
    # the newest pip the Python has, then PyPI as it stood at pypi_date for everything else
    setup = ["python -m pip install --upgrade pip", *date_rule_lines(python, pypi_date)]
    setup.append("python -m pip install --upgrade setuptools wheel")
    packages = str(spec.get("packages", "") or "")
    requirements = ""
    if packages == "requirements.txt":
        requirements = clean_requirements(_requirements(repo, requirement_paths, read_file))
        setup.append(f"cat > /tmp/requirements.txt <<'EOF_REQS'\n{requirements}\nEOF_REQS")
        setup.append("python -m pip install -r /tmp/requirements.txt")
    elif packages == "environment.yml":
        # conda-forge's packages as PyPI's (conda_env.py); one that will not install is left out, as
        # an optional test dependency the tests skip without, rather than failing the environment
        requirements = "\n".join(conda_env.pip_requirements(_first_file(repo, env_yml_paths, read_file)))
        setup.append(f"cat > /tmp/environment.txt <<'EOF_REQS'\n{requirements}\nEOF_REQS")
        setup.append(
            "python -m pip install -r /tmp/environment.txt || while read -r req; do "
            'python -m pip install "$req" || echo "pytest-tebench: left out $req"; '
            "done < /tmp/environment.txt"
        )
    elif packages:
        # conda package names; for these repositories they are PyPI names too (numpy, pandas, pytest)
        setup.append(f"python -m pip install {packages}")
    pins = [str(p) for p in spec.get("pip_packages") or []]
    exact = [p for p in pins if EXACT_PIN.fullmatch(p)]
    if exact and pypi_date and _pip_dates(python):
        # an exact version is what the spec asks whatever its date (SWE-bench's later specs pin e.g.
        # setuptools==70.0.0 or tox==4.16.0, newer than pypi_date) ...
        setup.append(
            "env -u PIP_UPLOADED_PRIOR_TO python -m pip install --no-deps "
            + " ".join(shlex.quote(p) for p in exact)
        )
        # ... and its dependencies resolve as the index stood when it was uploaded, if that is later
        # than pypi_date: tox 4.16.0 needs cachetools>=5.3.3, which did not exist at pypi_date
        for pin in exact:
            date = f'"$(python {PYPI_DATES_SCRIPT} "$PIP_UPLOADED_PRIOR_TO" {shlex.quote(pin)})"'
            setup.append(f"PIP_UPLOADED_PRIOR_TO={date} python -m pip install {shlex.quote(pin)}")
    elif exact and pypi_date:
        # the same rule through the dated index view: each pin from today's index, without its
        # dependencies, then those as the index stood at the pin's upload (or pypi_date, if later)
        quoted = " ".join(shlex.quote(p) for p in exact)
        setup.append(f'PIP_INDEX_URL="${pypi_dates.UPSTREAM_ENV}" python -m pip install --no-deps {quoted}')
        for pin in exact:
            date = f'"$(python {PYPI_DATES_SCRIPT} {shlex.quote(pypi_date)} {shlex.quote(pin)})"'
            setup.append(f"PIP_INDEX_URL={DATED_INDEX}/{date}/ python -m pip install {shlex.quote(pin)}")
    if pins:
        setup.append("python -m pip install " + " ".join(shlex.quote(p) for p in pins))
    for project, moved in submodules:
        # as PyPI stood when the submodule last moved (never later than pypi_date)
        if pypi_date:
            when = shlex.quote(min(moved, pypi_dates.format_time(pypi_dates.parse_time(pypi_date))))
            setup.append(f"{_dated(python, when)} python -m pip install {shlex.quote(project)}")
        else:
            setup.append(f"python -m pip install {shlex.quote(project)}")
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


#: Where an environment whose pip has no ``--uploaded-prior-to`` finds PyPI as it stood on a date:
#: :mod:`.pypi_dates`' index view, started in the build step itself (the step's own network).
DATED_INDEX_PORT = 3141
DATED_INDEX = f"http://127.0.0.1:{DATED_INDEX_PORT}"
#: The oldest Python whose newest pip has ``--uploaded-prior-to`` (the last pips of 3.6 and 3.8
#: predate it).
PIP_DATES_FROM = (3, 9)


def _pip_dates(python: str) -> bool:
    """Whether the newest pip of ``python`` resolves at a date by itself."""
    return _python_version(python) >= PIP_DATES_FROM


def _dated(python: str, when: str) -> str:
    """The variable that makes one pip command resolve as PyPI stood at ``when`` (a shell word),
    after :func:`date_rule_lines` (whose index view serves any date)."""
    if _pip_dates(python):
        return f"PIP_UPLOADED_PRIOR_TO={when}"
    return f"PIP_INDEX_URL={DATED_INDEX}/{when}/"


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


def date_rule_lines(python: str, pypi_date: str) -> list[str]:
    """Shell lines after which pip resolves as PyPI stood at ``pypi_date`` ("": today's index):
    pip's ``--uploaded-prior-to`` where the Python's pip has it, else the dated index view of
    :mod:`.pypi_dates` started for the build step (both apply the same rule, :func:`.pypi_dates.
    uploaded_by`). ``$TEBENCH_PYPI_UPSTREAM`` then names the real index."""
    if not pypi_date:
        return []
    if _pip_dates(python):
        return [f"export PIP_UPLOADED_PRIOR_TO={shlex.quote(pypi_date)}"]
    return [
        f'export {pypi_dates.UPSTREAM_ENV}="${{PIP_INDEX_URL:-{PYPI_INDEX}}}"',
        f"python {PYPI_DATES_SCRIPT} serve {DATED_INDEX_PORT}",
        f"export PIP_INDEX_URL={DATED_INDEX}/{shlex.quote(pypi_date)}/",
    ]


def _python_version(python: str) -> tuple[int, ...]:
    """``"3.9"`` -> ``(3, 9)``; ``()`` for what is not a version."""
    try:
        return tuple(int(part) for part in python.split("."))
    except ValueError:
        return ()


#: A pip requirement naming one exact version (``name==1.2.3``, ``name[extra]==1.2``).
EXACT_PIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._-]+\])?==[A-Za-z0-9.+!_-]+")

#: pre_install lines that change the system rather than the source tree: run as root at build time.
_SYSTEM_LINE = re.compile(r"\b(apt-get|apt|dpkg|locale-gen|update-locale)\b|>\s*/etc/")
#: pre_install lines no Debian image can run here: another package manager, or a download from
#: outside PyPI and the Debian mirror (matplotlib fetches qhull from qhull.org).
_UNREACHABLE_LINE = re.compile(r"\b(yum|dnf|conda|wget|curl)\b")


def is_system_line(command: str) -> bool:
    """Whether a ``pre_install`` line changes the system (runs as root, once per environment)."""
    return bool(_SYSTEM_LINE.search(command))


def unsupported_reason(repo: str, version: str, spec: dict[str, Any] | None) -> str | None:
    """Why the environment of ``(repo, version)`` cannot be had here, or None: from the
    specification alone, before any repository is read or anything is built or run."""
    if spec is None:
        return f"SWE-bench has no specification for {repo} version {version}"
    python = str(spec.get("python", ""))
    if python not in SUITE_FOR_PYTHON:
        have = ", ".join(f"{v} ({s})" for v, s in SUITE_FOR_PYTHON.items())
        return f"{repo} {version} needs Python {python}; Debian and Ubuntu ship only {have} as python3"
    unreachable = [str(c) for c in spec.get("pre_install") or () if _UNREACHABLE_LINE.search(str(c))]
    if unreachable:
        lines = "; ".join(unreachable)
        return f"{repo} {version}'s pre_install needs what Debian, Ubuntu and PyPI cannot give: {lines}"
    if not spec.get("install"):
        return f"{repo} {version} has no install command in its specification"
    return None


_EXCLUDED_REQ_PREFIXES = ("-e .", "#", ".[test")


def _first_file(repo: str, paths: tuple[str, ...], read_file: Callable[[str], str | None]) -> str:
    for path in paths:
        text = read_file(path)
        if text is not None:
            return text
    raise UnsupportedEnvironment(f"no environment.yml at {list(paths)} in {repo}")


def _requirements(repo: str, paths: tuple[str, ...], read_file: Callable[[str], str | None]) -> str:
    """SWE-bench's ``get_requirements_by_commit``, reading the mirror instead of GitHub."""
    for path in paths:
        text = read_file(path)
        if text is not None:
            break
    else:
        raise UnsupportedEnvironment(f"no requirements file at {list(paths)} in {repo}")
    req_dir = "/".join(path.split("/")[:-1])
    original: list[str] = []
    additional: list[str] = []
    for line in text.split("\n"):
        if line.strip().startswith("-r"):
            name = line[len("-r") :].strip()
            nested = read_file(os.path.join(req_dir, name))
            if nested is not None:
                additional += [
                    x for x in nested.split("\n") if not x.strip().startswith(_EXCLUDED_REQ_PREFIXES)
                ]
        elif not line.strip().startswith(_EXCLUDED_REQ_PREFIXES):
            original.append(line)
    additional.append("\n".join(original))
    return "\n".join(additional)


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
    (context / "pypi_dates.py").write_text(_PYPI_DATES_SOURCE)
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
