"""Create the executor a run asked for.

``--tebench-executor`` is ``auto`` (the default: Docker when an engine answers, else local with a
warning), ``docker`` (the sandbox image) or ``local`` (host JDKs and Maven, unsandboxed); plugins
add their own names through the ``pytest_tebench_make_executor`` hook. Both the pytest plugin
and the ``tebench`` command come through here, so they build and score identically.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.errors import HarnessError
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.maven.jdk import JdkInstall
from pytest_tebench.run.maven.jdk import discover_jdks
from pytest_tebench.run.maven.jdk import read_jdk
from pytest_tebench.settings import OptionSpec
from pytest_tebench.settings import cpus
from pytest_tebench.settings import memory

EXECUTORS = ("local", "docker", "auto")
DEFAULT_EXECUTOR = "auto"
DEFAULT_MEMORY = "4g"
DEFAULT_CPUS = 2.0
#: Maven steps run in a warm Maven JVM per worker and JDK (:mod:`~pytest_tebench.run.maven.warm`,
#: in a sandbox container for Docker: :mod:`~pytest_tebench.run.docker_warm`): measured 18-21 s
#: cold against 8-10 s warm per jsoup prediction launch (docs/speed.md), with the same verdicts.
WARM_JVM_CHOICES = ("on", "off")
DEFAULT_WARM_JVM = "on"
#: Said once per run when ``auto`` found no engine and predictions ran on the host.
UNSANDBOXED_WARNING = (
    "WARNING: no Docker engine answered, so predictions ran unsandboxed on this machine "
    "(--tebench-executor=auto fell back to local). Start one (e.g. scripts/ensure-docker) to sandbox "
    "them, or pass --tebench-executor=local to run locally on purpose."
)

EXECUTOR_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "executor", metavar="NAME", default=DEFAULT_EXECUTOR,
        help="Where builds run: 'auto' (Docker when an engine answers, else local with a warning), "
        "'docker' (sandboxed, offline), 'local' (host JDK and Maven, unsandboxed) or 'dask://HOST:PORT' "
        "(items built on a Dask cluster, docs/dask.md); plugins add more. "
        "Default: %(default)s.",
    ),
    OptionSpec("image", metavar="NAME",
               help="Docker image for builds instead of the locally built pytest-tebench/java image."),
    OptionSpec("docker-memory", metavar="SIZE", default=DEFAULT_MEMORY, type=memory,
               help="Memory limit of a build container (e.g. 4g, 512m). Default: %(default)s."),
    OptionSpec("docker-cpus", metavar="N", type=cpus, default=DEFAULT_CPUS,
               help="CPU limit of a build container. Default: %(default)s."),
    OptionSpec("warm-jvm", metavar="on|off", default=DEFAULT_WARM_JVM, choices=WARM_JVM_CHOICES,
               help="'on': each worker keeps one warm Maven JVM per JDK (a host process for the local "
               "executor, a sandbox container for Docker) and runs evaluation builds in it (a fresh "
               "Plexus container and test JVM per build; builds whose tests would run in Maven's JVM, "
               "or use the network, stay cold); 'off': a cold mvn (a fresh container) per build. "
               "Default: %(default)s."),
)  # fmt: skip


@dataclass(frozen=True)
class ExecutorOptions:
    name: str = "local"
    #: ``--tebench-jdk``: a feature version ("17") or a JDK home; None = chosen per build.
    jdk: str | None = None
    image: str | None = None
    memory: str = DEFAULT_MEMORY
    cpus: float = DEFAULT_CPUS
    run_id: str | None = None
    #: ``--tebench-warm-jvm``: Maven steps in a warm Maven JVM (either executor).
    warm_jvm: bool = DEFAULT_WARM_JVM == "on"

    @classmethod
    def from_values(cls, name: str, values: Mapping[str, Any], **extra: Any) -> ExecutorOptions:
        """Executor options of a run from its option values (``EXECUTOR_OPTIONS`` and ``jdk``)."""
        return cls(
            name=name,
            jdk=values.get("jdk"),
            image=values.get("image"),
            memory=str(values.get("docker_memory") or DEFAULT_MEMORY),
            cpus=float(values.get("docker_cpus") or DEFAULT_CPUS),
            warm_jvm=warm_jvm(values.get("warm_jvm") or DEFAULT_WARM_JVM),
            **extra,
        )


def warm_jvm(value: str) -> bool:
    """``--tebench-warm-jvm``'s value as a switch; anything but ``on``/``off`` is an error."""
    if value not in WARM_JVM_CHOICES:
        raise HarnessError(f"--tebench-warm-jvm: expected one of {WARM_JVM_CHOICES}, got {value!r}")
    return value == "on"


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
    """Build the executor; for Docker, also clean containers and images left by crashed earlier runs."""
    name = resolve_name(options.name)
    if name == "local":
        from pytest_tebench.run.local import LocalExecutor

        return LocalExecutor(jdks=local_jdks(options.jdk), warm_jvm=options.warm_jvm)
    from pytest_tebench.run.docker import DockerExecutor
    from pytest_tebench.run.docker_warm import WarmDockerExecutor

    make = WarmDockerExecutor if options.warm_jvm else DockerExecutor
    executor = make(
        options.image,
        memory=options.memory,
        cpus=options.cpus,
        run_id=options.run_id,
        # our own image is built on first use (progress shown); a user's --tebench-image must exist
        build_missing=options.image is None,
        progress=progress,
    )
    executor.remove_stale()
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
    if override and not (override.isascii() and override.isdigit()):
        found = read_jdk(Path(override))
        if found is None:
            raise HarnessError(
                f"--tebench-jdk: {override} is not a JDK home (needs bin/javac and a release file)"
            )
        jdks[found.version] = found
    return jdks
