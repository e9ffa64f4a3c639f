"""The Java build image for the Docker executor, built locally from Debian packages.

No container registry is reachable where this harness runs, so the image cannot be pulled or
built ``FROM`` anything. Instead the recipe bootstraps a minimal Debian root file system with
``debootstrap``, installs the JDKs and Maven into it inside a ``chroot`` and hands the tree to
``docker import`` with the image configuration (``ENV``, ``USER``, ``WORKDIR``) given as changes.

The image is named ``pytest-tebench/java:<hash>`` where the hash covers everything that shapes
it (suite, mirror, package list, the setup script, the image configuration and
:data:`RECIPE_VERSION`), so :func:`ensure_image` rebuilds exactly when the recipe changes. The
suite is Debian unstable, the only one that still carries JDK 8, 11, 17 and 21 side by side, so two
builds of the same recipe may differ in package versions; ``/etc/tebench-image`` inside the
image records what was installed.

The build host's local CA certificates (``/usr/local/share/ca-certificates``) are copied in
before the packages are installed, so the system and Java trust stores accept a TLS-intercepting
proxy that the host accepts; without that, warm-up steps cannot reach Maven Central from such a
network. Their digests are part of the hash.

Building needs root, ``debootstrap``, ``unshare``/``chroot``/``tar`` and a network path to the
Debian mirror (``scripts/ensure-docker`` installs the first two).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import gc
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections import deque
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors

from pytest_tebench.errors import HarnessError

#: Bump to force a rebuild when something outside the hashed fields changes the result.
RECIPE_VERSION = 1
#: Repository part of every image name this module builds.
IMAGE_REPOSITORY = "pytest-tebench/java"
#: Default scratch directory for the root file system and its tarball (about 2 GB while building).
DEFAULT_WORK_DIR = Path("/var/tmp/pytest-tebench-image")
#: Where the workspace and the Maven repository appear inside a container.
CONTAINER_WORKSPACE = "/workspace"
CONTAINER_HOME = "/home/tebench"
#: Search path inside the image, without the JDK's ``bin`` (the executor prepends that per step).
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Recipe:
    """Everything that decides what the image contains; its hash is the image tag."""

    suite: str = "sid"
    mirror: str = "http://deb.debian.org/debian"
    #: Installed with ``--no-install-recommends`` on top of ``debootstrap --variant=minbase``. The
    #: font stack is what a headless JDK's ``libfontmanager`` loads and its font configuration
    #: reads: a project whose tests draw text (jfreechart renders charts) fails without it, on a
    #: JDK 11+ with ``libharfbuzz.so.0: cannot open shared object file``, on JDK 8 with no fonts.
    packages: tuple[str, ...] = (
        "openjdk-8-jdk-headless",
        "openjdk-11-jdk-headless",
        "openjdk-17-jdk-headless",
        "openjdk-21-jdk-headless",
        "git",
        "ca-certificates",
        "libfreetype6",
        "libharfbuzz0b",
        "libfontconfig1",
        "fontconfig",
        "fonts-dejavu-core",
    )
    #: JDK feature versions; each is linked at ``/opt/java/<v>`` and exported as ``JAVA<v>_HOME``.
    #: 21 for builds that ask for more than 17 (google/gson enforces ``[17,22)`` and builds on 21);
    #: sid's 25 is left out: JaCoCo 0.8.12 reads class files up to 22 (``jdk.JACOCO_MAX_FEATURE``).
    jdks: tuple[int, ...] = (8, 11, 17, 21)
    default_jdk: int = 8
    #: The unprivileged user every step runs as (unless the host user is someone else).
    uid: int = 1000
    user: str = "tebench"
    #: No longer used by any script: the Java image has no Maven of its own (every build mounts
    #: Apache Maven's distribution, ``run/maven/dist.py``). Kept in the hash only so that the tags
    #: of the other toolchains' images, which hash it too, stay what they were.
    min_maven: str = "3.9"
    #: The build host's local CA certificates (``*.crt``) are trusted in the image too, so warm-up
    #: steps work behind a TLS-intercepting proxy the host trusts. Their digests are hashed, so
    #: the tag depends on them. ``""`` disables this.
    host_ca_dir: str = "/usr/local/share/ca-certificates"
    #: Other toolchains (the Python images of the SWE-bench benchmark) reuse this machinery with
    #: their own setup script template (same ``{...}`` fields as the Java one), their own
    #: ``docker import`` changes and image repository. Empty means the Java image's.
    template: str = ""
    changes: tuple[str, ...] = ()
    repository: str = ""
    #: A distribution whose archive keys the host lacks (Ubuntu, on a Debian host): the keyring
    #: package's URL on the mirror, and the fingerprints its keyring must hold exactly; debootstrap
    #: then checks the suite's ``Release`` signature against it. Empty: the host's keyring.
    keyring_deb: str = ""
    keyring_fingerprints: tuple[str, ...] = ()
    keyring_path: str = "usr/share/keyrings/ubuntu-archive-keyring.gpg"
    #: The archive's components (debootstrap ``--components``); empty: its default (``main``).
    components: tuple[str, ...] = ()


DEFAULT_RECIPE = Recipe()


def java_home(version: int) -> str:
    """Where JDK ``version`` lives inside the image (an arch-independent symlink)."""
    return f"/opt/java/{version}"


# The script runs as root inside the chroot. It is part of the recipe hash: edit it and the tag
# changes. `{...}` fields are filled by `setup_script`; literal shell braces are doubled.
_SETUP_TEMPLATE = r"""#!/bin/sh
# pytest-tebench image recipe {recipe_version}: runs as root inside the debootstrapped rootfs.
set -eu
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 PATH={base_path}

# Keep the image lean: no docs, man pages, translations or recommended packages. The JDKs keep
# their jmods: builds read them as libraries (google/gson's ProGuard step reads
# ${{java.home}}/jmods/java.base.jmod and fails without it).
mkdir -p /etc/dpkg/dpkg.cfg.d /etc/apt/apt.conf.d
cat >/etc/dpkg/dpkg.cfg.d/01-tebench-nodoc <<'EOF'
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-exclude=/usr/share/lintian/*
path-exclude=/usr/lib/jvm/*/man/*
EOF
# Check-Valid-Until off: build machines with a skewed clock must still accept the mirror.
cat >/etc/apt/apt.conf.d/01-tebench <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Check-Valid-Until "false";
Acquire::Retries "3";
Dpkg::Use-Pty "false";
EOF
# No service may start inside the chroot.
printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
chmod 755 /usr/sbin/policy-rc.d

apt-get -q update
apt-get -q install -y {packages}

# No Maven here: every build runs Apache Maven's own distribution, mounted read-only (dist.py).
arch=$(dpkg --print-architecture)
mkdir -p /opt/java
for v in {jdks}; do
    home=/usr/lib/jvm/java-$v-openjdk-$arch
    if [ ! -x "$home/bin/javac" ]; then
        echo "recipe: JDK $v is missing at $home" >&2
        exit 1
    fi
    ln -sfn "$home" /opt/java/$v
done
# Debian's JDKs name GNOME's accessibility bridge, which a headless image lacks: the first Swing
# default read (UIManager) then throws "Assistive Technology not found" on JDK 8, which no build
# elsewhere meets (jfreechart's JFreeChart class could not initialise).
for f in /etc/java-*-openjdk/accessibility.properties; do
    [ -f "$f" ] && sed -i 's/^assistive_technologies=/#&/' "$f"
done

groupadd --gid {uid} {user}
useradd --no-log-init --uid {uid} --gid {uid} --create-home --shell /bin/bash {user}
mkdir -p {workspace}
chown {uid}:{uid} {workspace}

{{
    for v in {jdks}; do
        echo "java$v: $(/opt/java/$v/bin/java -version 2>&1 | head -n 1)"
    done
    echo "git: $(dpkg-query -W -f='${{Version}}' git)"
    echo "suite: {suite}"
    echo "host CA certificates: $(find /usr/local/share/ca-certificates -name '*.crt' | wc -l)"
}} >/etc/tebench-image
cat /etc/tebench-image

apt-get clean
rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/debconf/*-old /var/lib/dpkg/*-old \
    /var/log/apt /var/log/*.log /tmp/* /var/tmp/*
# Packages unpacked by debootstrap itself predate the dpkg excludes above.
find /usr/share/doc -mindepth 1 ! -type d ! -name copyright -delete
find /usr/share/doc -mindepth 1 -type d -empty -delete
rm -rf /usr/share/man/* /usr/share/info/* /usr/share/locale/* /usr/share/lintian
rm -f /usr/sbin/policy-rc.d
echo "recipe: done"
"""


def setup_script(recipe: Recipe = DEFAULT_RECIPE) -> str:
    """The shell script that turns a minbase rootfs into the build image (run in a chroot)."""
    return (recipe.template or _SETUP_TEMPLATE).format(
        recipe_version=RECIPE_VERSION,
        base_path=BASE_PATH,
        packages=" ".join(recipe.packages),
        min_maven=recipe.min_maven,
        jdks=" ".join(str(v) for v in recipe.jdks),
        uid=recipe.uid,
        user=recipe.user,
        workspace=CONTAINER_WORKSPACE,
        suite=recipe.suite,
    )


def image_changes(recipe: Recipe = DEFAULT_RECIPE) -> tuple[str, ...]:
    """Dockerfile instructions given to ``docker import --change``."""
    if recipe.changes:
        return recipe.changes
    default_home = java_home(recipe.default_jdk)
    envs = [f"ENV JAVA_HOME={default_home}"]
    envs += [f"ENV JAVA{v}_HOME={java_home(v)}" for v in recipe.jdks]
    envs += [
        f"ENV PATH={default_home}/bin:{BASE_PATH}",
        "ENV LANG=C.UTF-8",
        f"ENV HOME={CONTAINER_HOME}",
    ]
    return (
        *envs,
        f"USER {recipe.uid}:{recipe.uid}",
        f"WORKDIR {CONTAINER_WORKSPACE}",
        'CMD ["/bin/bash"]',
    )


def host_ca_certificates(recipe: Recipe = DEFAULT_RECIPE) -> tuple[tuple[str, bytes], ...]:
    """``(relative name, PEM bytes)`` of the host CA certificates the image will trust."""
    if not recipe.host_ca_dir:
        return ()
    root = Path(recipe.host_ca_dir)
    if not root.is_dir():
        return ()
    found = []
    for path in sorted(root.rglob("*.crt")):
        try:
            found.append((str(path.relative_to(root)), path.read_bytes()))
        except OSError:
            continue  # unreadable: the build cannot copy it either
    return tuple(found)


def recipe_hash(recipe: Recipe = DEFAULT_RECIPE) -> str:
    """Twelve hex digits over every input that shapes the image."""
    payload = {
        "recipe_version": RECIPE_VERSION,
        "suite": recipe.suite,
        "mirror": recipe.mirror,
        "packages": list(recipe.packages),
        "jdks": list(recipe.jdks),
        "default_jdk": recipe.default_jdk,
        "uid": recipe.uid,
        "user": recipe.user,
        "min_maven": recipe.min_maven,
        "script": setup_script(recipe),
        "host_cas": [[name, hashlib.sha256(pem).hexdigest()] for name, pem in host_ca_certificates(recipe)],
        "changes": list(image_changes(recipe)),
    }
    if recipe.repository:
        # only other toolchains' recipes carry it: the Java image's tag stays what it was
        payload["repository"] = recipe.repository
    if recipe.keyring_deb:
        payload["keyring"] = [recipe.keyring_deb, *recipe.keyring_fingerprints]
    if recipe.components:
        payload["components"] = list(recipe.components)
    blob = json.dumps(payload, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def image_tag(recipe: Recipe = DEFAULT_RECIPE) -> str:
    """``pytest-tebench/java:<recipe hash>`` (or the recipe's own repository)."""
    return f"{recipe.repository or IMAGE_REPOSITORY}:{recipe_hash(recipe)}"


def _labels(recipe: Recipe) -> tuple[str, ...]:
    return (
        f'LABEL pytest-tebench.recipe="{recipe_hash(recipe)}"',
        f'LABEL pytest-tebench.suite="{recipe.suite}"',
    )


def image_present(client: Any, tag: str) -> bool:
    """Whether the engine already has ``tag``."""

    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    except docker.errors.DockerException as exc:
        raise HarnessError(f"cannot ask the Docker engine for image {tag}: {exc}") from exc
    return True


def _noop(line: str) -> None:
    del line


def _run_logged(
    argv: Sequence[str], progress: Progress, what: str, *, env: dict[str, str] | None = None
) -> None:
    """Run a build command, passing each output line to ``progress``; fail with the tail."""
    tail: deque[str] = deque(maxlen=40)
    try:
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            env=env,
        )
    except OSError as exc:
        raise HarnessError(f"image build: cannot run {argv[0]}: {exc}") from exc
    assert proc.stdout is not None
    with proc:
        for raw in proc.stdout:
            line = raw.rstrip("\n")
            tail.append(line)
            progress(line)
    if proc.returncode != 0:
        joined = "\n".join(tail)
        raise HarnessError(f"image build: {what} failed (exit {proc.returncode}):\n{joined}")


def _check_build_host() -> None:
    if os.geteuid() != 0:
        raise HarnessError("image build needs root (debootstrap and chroot); run it with sudo")
    missing = [tool for tool in ("debootstrap", "unshare", "chroot", "tar") if shutil.which(tool) is None]
    if missing:
        raise HarnessError(
            f"image build needs {', '.join(missing)}; run scripts/ensure-docker (installs debootstrap)"
        )


def _verified_keyring(recipe: Recipe, scratch: Path, progress: Progress) -> Path:
    """The recipe's archive keyring, fetched from its mirror and accepted only when its keys are
    exactly the pinned fingerprints (the trust anchor; the download itself is plain HTTP)."""
    deb = scratch / "keyring.deb"
    progress(f"[image] fetching the archive keyring {recipe.keyring_deb}")
    _run_logged(
        ["curl", "-fsSL", "--max-time", "120", "-o", str(deb), recipe.keyring_deb], progress, "keyring"
    )
    _run_logged(["dpkg-deb", "-x", str(deb), str(scratch / "x")], progress, "keyring")
    keyring = scratch / "x" / recipe.keyring_path
    listed = subprocess.run(
        ["gpg", "--show-keys", "--with-colons", str(keyring)], capture_output=True, text=True, check=False
    )
    found = {line.split(":")[9] for line in listed.stdout.splitlines() if line.startswith("fpr:")}
    if not keyring.is_file() or found != set(recipe.keyring_fingerprints):
        raise HarnessError(
            f"image build: the keyring of {recipe.keyring_deb} holds {sorted(found)}, "
            f"not the pinned {sorted(recipe.keyring_fingerprints)}"
        )
    return keyring


def build_rootfs(rootfs: Path, recipe: Recipe = DEFAULT_RECIPE, *, progress: Progress = _noop) -> None:
    """Bootstrap ``rootfs`` and run the setup script in it (the slow, networked part)."""
    _check_build_host()
    progress(f"[image] debootstrap --variant=minbase {recipe.suite} {recipe.mirror}")
    with tempfile.TemporaryDirectory(prefix="tebench-keyring-") as scratch:
        keyring = _verified_keyring(recipe, Path(scratch), progress) if recipe.keyring_deb else None
        _run_logged(
            [
                "debootstrap",
                "--variant=minbase",
                *([f"--keyring={keyring}", "--force-check-gpg"] if keyring else []),
                *([f"--components={','.join(recipe.components)}"] if recipe.components else []),
                recipe.suite,
                str(rootfs),
                recipe.mirror,
            ],
            progress,
            "debootstrap",
        )
    # Before the packages: installing ca-certificates(-java) folds these into the system and the
    # Java trust stores.
    for name, pem in host_ca_certificates(recipe):
        target = rootfs / "usr/local/share/ca-certificates" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(pem)
        progress(f"[image] trusting host CA certificate {name}")
    script = rootfs / "tebench-setup.sh"
    script.write_text(setup_script(recipe))
    progress("[image] installing JDKs, Maven and git in the rootfs")
    # A private mount namespace: /proc (which the JDK's postinst scripts need) disappears with
    # the process, so a crash or Ctrl-C cannot leave a mount behind under the work directory.
    clean_env = {"PATH": BASE_PATH, "HOME": "/root", "LANG": "C.UTF-8"}
    _run_logged(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "--fork",
            "sh",
            "-c",
            'mount -t proc proc "$1/proc" && exec chroot "$1" /bin/sh /tebench-setup.sh',
            "sh",
            str(rootfs),
        ],
        progress,
        "setup script",
        env=clean_env,
    )
    script.unlink()


def _tar_rootfs(rootfs: Path, tarball: Path, progress: Progress) -> None:
    progress(f"[image] packing {rootfs} into {tarball.name}")
    _run_logged(
        [
            "tar",
            "--numeric-owner",
            "--one-file-system",
            # The engine provides /dev, /proc and /sys; debootstrap's device nodes are noise.
            "--exclude=./dev/*",
            "--exclude=./proc/*",
            "--exclude=./sys/*",
            "-C",
            str(rootfs),
            "-cf",
            str(tarball),
            ".",
        ],
        progress,
        "tar",
    )


def import_rootfs(
    client: Any, tarball: Path, tag: str, changes: Sequence[str], *, progress: Progress = _noop
) -> str:
    """``docker import`` the tarball as ``tag`` with ``changes``; return the image id."""

    repository, _, version = tag.rpartition(":")
    progress(f"[image] docker import {tarball.name} -> {tag}")
    try:
        client.api.import_image(src=str(tarball), repository=repository, tag=version, changes=list(changes))
        image = client.images.get(tag)
    except docker.errors.DockerException as exc:
        raise HarnessError(f"image build: docker import of {tag} failed: {exc}") from exc
    return str(image.id)


@contextlib.contextmanager
def _build_lock(work_dir: Path) -> Iterator[None]:
    """One build at a time per machine: xdist workers may all call :func:`ensure_image`."""
    work_dir.mkdir(parents=True, exist_ok=True)
    with (work_dir / "build.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_image(
    client: Any,
    recipe: Recipe = DEFAULT_RECIPE,
    *,
    progress: Progress = _noop,
    work_dir: Path = DEFAULT_WORK_DIR,
    keep_rootfs: bool = False,
) -> str:
    """Build the image for ``recipe`` now (even if present) and return its tag."""
    tag = image_tag(recipe)
    with _build_lock(work_dir):
        return _build_locked(
            client, recipe, tag, progress=progress, work_dir=work_dir, keep_rootfs=keep_rootfs
        )


def _build_locked(
    client: Any, recipe: Recipe, tag: str, *, progress: Progress, work_dir: Path, keep_rootfs: bool
) -> str:
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="build-", dir=work_dir))
    try:
        rootfs = scratch / "rootfs"
        build_rootfs(rootfs, recipe, progress=progress)
        tarball = scratch / "rootfs.tar"
        _tar_rootfs(rootfs, tarball, progress)
        if not keep_rootfs:
            shutil.rmtree(rootfs)
        image_id = import_rootfs(
            client, tarball, tag, (*image_changes(recipe), *_labels(recipe)), progress=progress
        )
    finally:
        if not keep_rootfs:
            shutil.rmtree(scratch, ignore_errors=True)
    size = client.images.get(tag).attrs.get("Size", 0)
    progress(
        f"[image] built {tag} ({image_id[:19]}, {size / 1e6:.0f} MB) in {time.monotonic() - started:.0f} s"
    )
    return tag


def ensure_image(
    client: Any,
    recipe: Recipe = DEFAULT_RECIPE,
    *,
    progress: Progress = _noop,
    work_dir: Path = DEFAULT_WORK_DIR,
) -> str:
    """Return the tag of the image for ``recipe``, building it first when the engine lacks it."""
    tag = image_tag(recipe)
    if image_present(client, tag):
        return tag
    with _build_lock(work_dir):
        # Another process may have built it while we waited for the lock.
        if image_present(client, tag):
            return tag
        progress(f"[image] {tag} is missing; building it (a few minutes, needs the Debian mirror)")
        try:
            return _build_locked(client, recipe, tag, progress=progress, work_dir=work_dir, keep_rootfs=False)
        except HarnessError as exc:
            # a mirror hiccup must not cost every item of the run: one more try, then the error
            progress(f"[image] the build failed ({exc}); trying once more")
            return _build_locked(client, recipe, tag, progress=progress, work_dir=work_dir, keep_rootfs=False)


def connect() -> Any:
    """A client for the engine of the environment (``DOCKER_HOST`` or the default socket)."""
    problem = ""
    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as exc:
        problem = str(exc)
    if problem:
        # The SDK leaks the socket of its failed version probe; collect it here, quietly, and
        # outside the except block (whose traceback keeps it alive).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()
        raise HarnessError(f"no Docker engine answers ({problem}); run scripts/ensure-docker")
    return client


def main(argv: Sequence[str] | None = None) -> int:
    """``tebench image {build,ensure,tag,info}``: console entry point (returns an exit code)."""
    parser = argparse.ArgumentParser(prog="tebench image", description="The Docker executor's Java image.")
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="build the image now, even when it exists")
    build.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR)
    build.add_argument("--keep-rootfs", action="store_true", help="keep the rootfs for inspection")
    ensure = sub.add_parser("ensure", help="build the image only when it is missing")
    ensure.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR)
    sub.add_parser("tag", help="print the image tag of the current recipe")
    sub.add_parser("info", help="print the tag, whether it exists, and what it contains")
    args = parser.parse_args(argv)

    def show(line: str) -> None:
        print(line, flush=True)

    try:
        if args.command == "tag":
            print(image_tag())
            return 0
        client = connect()
        if args.command == "build":
            build_image(client, progress=show, work_dir=args.work_dir, keep_rootfs=args.keep_rootfs)
        elif args.command == "ensure":
            print(ensure_image(client, progress=show, work_dir=args.work_dir))
        else:
            tag = image_tag()
            if not image_present(client, tag):
                print(f"{tag}: missing (build it with `tebench image build`)")
                return 1
            image = client.images.get(tag)
            print(f"{tag}: {image.id} {image.attrs.get('Size', 0) / 1e6:.0f} MB")
            # The image never runs as root, so reading the record needs no privileges.
            out = client.containers.run(tag, ["cat", "/etc/tebench-image"], remove=True, network_mode="none")
            print(out.decode(errors="replace"), end="")
    except HarnessError as exc:
        print(f"tebench image: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
