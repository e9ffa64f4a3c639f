"""Debian and Ubuntu for SWE-bench environments: which suite's ``python3`` is each Python, the
suite base image (``pytest-tebench/python-<suite>:<hash>``: debootstrap, ``python3``,
``python3-venv``, a C toolchain for sdists, git; made by :mod:`pytest_tebench.run.docker_image`,
like the Java image), and what a specification needs that no suite gives.

SWE-bench itself makes its environments with conda, which can provide any Python; Debian provides
one per suite. A specification whose Python no suite ships, or a ``pre_install`` that downloads from
outside PyPI and Debian, is ``unsupported_environment`` (:func:`unsupported_reason`): decided from
the specification alone, before anything runs, and never counted as a model's failure. A
``pre_install``'s system lines (:func:`is_system_line`: ``apt-get install`` of Debian packages,
``locale-gen``, writes under ``/etc``) run as root at the environment's build, from the suite's
own mirror.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from pytest_tebench.benchmarks.swebench.pip_setup import PYPI_INDEX
from pytest_tebench.run import docker_image

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
UBUNTU_MIRROR = "http://archive.ubuntu.com/ubuntu"
#: Ubuntu's archive keys (2012 archive, 2012 CD image, 2018 archive), as ubuntu-keyring ships them:
#: a Debian host has no Ubuntu keyring, so the package is fetched and held to these.
UBUNTU_KEYRING_DEB = f"{UBUNTU_MIRROR}/pool/main/u/ubuntu-keyring/ubuntu-keyring_2023.11.28.1_all.deb"
UBUNTU_FINGERPRINTS = (
    "790BC7277767219C42C86F933B4FE6ACC0B21F32",
    "843938DF228D22F7B3742BC0D94AA3F0EFE21092",
    "F6ECB3762474EDA9D21B7022871920D1991BC93C",
)

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
