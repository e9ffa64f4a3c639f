"""Create the executor a run asked for, and choose a JDK the executor has.

``--tebench-executor`` is ``local`` (host JDKs and Maven), ``docker`` (the sandbox image) or
``auto`` (Docker when an engine answers, else local). Both the pytest plugin and the
``tebench`` command come through here, so they build and score identically.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pytest_tebench.errors import HarnessError
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.maven.jdk import JdkInstall
from pytest_tebench.run.maven.jdk import choose_jdk
from pytest_tebench.run.maven.jdk import discover_jdks
from pytest_tebench.run.maven.jdk import read_jdk

EXECUTORS = ("local", "docker", "auto")


@dataclass(frozen=True)
class ExecutorOptions:
    name: str = "local"
    #: ``--tebench-jdk``: a feature version ("17") or a JDK home; None = chosen per build.
    jdk: str | None = None
    image: str | None = None
    memory: str = "4g"
    cpus: float = 2.0
    maven_cache: Path | None = None
    run_id: str | None = None


def docker_available() -> bool:
    try:
        from pytest_tebench.run.docker_image import connect

        connect().close()
    except Exception:  # no SDK, no socket, engine down: all mean "not available"
        return False
    return True


def resolve_name(name: str) -> str:
    if name not in EXECUTORS:
        raise HarnessError(f"unknown executor {name!r}; expected one of {EXECUTORS}")
    if name == "auto":
        return "docker" if docker_available() else "local"
    return name


def create_executor(options: ExecutorOptions, progress: Callable[[str], None] | None = None) -> Executor:
    """Build the executor; for Docker, also clean containers left by crashed earlier runs."""
    name = resolve_name(options.name)
    if name == "local":
        from pytest_tebench.run.local import LocalExecutor

        return LocalExecutor(jdks=local_jdks(options.jdk), maven_cache=options.maven_cache)
    from pytest_tebench.run.docker import DockerExecutor

    executor = DockerExecutor(
        options.image,
        memory=options.memory,
        cpus=options.cpus,
        maven_cache=options.maven_cache,
        run_id=options.run_id,
        # our own image is built on first use (progress shown); a user's --tebench-image must exist
        build_missing=options.image is None,
        progress=progress,
    )
    executor.remove_stale_containers()
    return executor


def prepare_docker_image(*, required: bool, progress: Callable[[str], None]) -> str | None:
    """Build our sandbox image if the engine lacks it; None when Docker is absent and not required."""
    from pytest_tebench.run import docker_image

    try:
        client = docker_image.connect()
    except HarnessError:
        if required:
            raise
        return None
    try:
        return docker_image.ensure_image(client, progress=progress)
    finally:
        client.close()


def local_jdks(override: str | None) -> dict[int, JdkInstall]:
    jdks = discover_jdks()
    if override and not override.isdigit():
        found = read_jdk(Path(override))
        if found is None:
            raise HarnessError(
                f"--tebench-jdk: {override} is not a JDK home (needs bin/javac and a release file)"
            )
        jdks[found.version] = found
    return jdks


def java_versions(executor: Executor) -> tuple[int, ...]:
    """Feature versions of the JDKs the executor can run."""
    versions = getattr(executor, "java_versions", None)
    if versions is not None:
        return tuple(sorted(versions))
    jdks = getattr(executor, "jdks", None)  # LocalExecutor: {version: home}
    if isinstance(jdks, dict):
        return tuple(sorted(jdks))
    raise HarnessError(f"executor {executor.name!r} does not say which JDKs it has (java_versions)")


def choose_java_version(executor: Executor, level: int, override: str | None) -> int:
    """The JDK feature version a build at ``level`` runs with on ``executor``."""
    available = {v: JdkInstall(v, Path(f"/jdk/{v}"), str(v)) for v in java_versions(executor)}
    if override and not override.isdigit():
        found = read_jdk(Path(override))
        return found.version if found is not None else choose_jdk(level, available).version
    return choose_jdk(level, available, int(override) if override else None).version
