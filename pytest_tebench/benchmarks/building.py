"""What the dataset builders share: the repository, the executor, and how a checkout is built.

``tebench build`` (TEBench instances from a history) and ``tebench build --benchmark realcode``
(RealCodeJava instances from one commit) both check commits out of a local clone or bare mirror
into workspaces and build them with Maven, offline after a warm-up. The repository and toolchain
part of their configurations (:class:`BuildEnvironment`), the build settings of one checkout
(:meth:`BuildEnvironment.run_settings`: the JDK the build's requirement allows, the Maven it needs)
and the command-line set-up of the executor (:func:`open_environment`) live here once.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.errors import InputError
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.maven.jdk import JdkRequirement
from pytest_tebench.run.maven.jdk import read_requirement
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.settings import DEFAULT_TIMEOUT_COMPILE
from pytest_tebench.run.maven.settings import DEFAULT_TIMEOUT_TEST
from pytest_tebench.run.maven.settings import DEFAULT_TIMEOUT_WARMUP


@dataclass(frozen=True)
class BuildEnvironment:
    """A repository to build checkouts of, and the toolchain that builds them."""

    repo_dir: Path
    repo: str  # owner/name
    work_dir: Path
    maven_repo: Path
    executor: Callable[[], Executor]
    #: The JDK feature version for a build's requirement (the JDK chooser, with ``--jdk``); raises
    #: :class:`~pytest_tebench.errors.UnsupportedEnvironment` when no JDK here satisfies it.
    java_version: Callable[[JdkRequirement], int]
    compile_timeout: float = DEFAULT_TIMEOUT_COMPILE
    test_timeout: float = DEFAULT_TIMEOUT_TEST
    warmup_timeout: float = DEFAULT_TIMEOUT_WARMUP
    #: The Apache Maven the builds run (``--tebench-maven``; ``""``, the executor's own ``mvn``,
    #: only for tests that script the executor).
    maven_version: str = ""
    #: Where Maven distributions are downloaded (None: the default cache's).
    maven_dist: Path | None = None
    #: ``--jdk``: the JDK every build uses (a version or a home; None: the chooser's).
    jdk: str | None = None
    #: ``--network``: the tests may reach the network, as evaluation's ``--tebench-network``
    #: lets them (Maven itself stays offline after the warm-up).
    network: bool = False

    @property
    def project(self) -> str:
        return self.repo.split("/", 1)[-1]

    def run_settings(self, tree: Path, **overrides: Any) -> RunSettings:
        """How to build the checkout at ``tree``: its build (POMs, ``.mvn/``) decides the JDK;
        the Maven is the run's (``--tebench-maven``)."""
        pom = tree / "pom.xml"
        if not pom.is_file():
            raise InputError(f"{self.repo}: the checkout has no pom.xml at its root (Maven builds only)")
        fields: dict[str, Any] = {
            "maven_repo": self.maven_repo,
            "java_version": self.java_version(read_requirement(tree, self.maven_repo)),
            "maven_version": self.maven_version,
            "maven_dist": self.maven_dist,
            "compile_timeout": self.compile_timeout,
            "test_timeout": self.test_timeout,
            "warmup_timeout": self.warmup_timeout,
            "test_network": self.network,
        }
        return RunSettings(**{**fields, **overrides})


@contextlib.contextmanager
def open_environment(args: argparse.Namespace, *, what: str) -> Iterator[dict[str, Any]]:
    """The :class:`BuildEnvironment` fields of ``tebench build``'s parsed arguments, with the
    executor open for the block (closed after it). ``what`` names what runs unsandboxed when no
    Docker engine answered."""
    from pytest_tebench.run.executors import ExecutorOptions
    from pytest_tebench.run.executors import create_executor
    from pytest_tebench.run.executors import resolve_name
    from pytest_tebench.run.maven.jdk import choose_java_version
    from pytest_tebench.run.maven.settings import MavenSettings
    from pytest_tebench.settings import default_cache_dir

    cache = (args.cache_dir or default_cache_dir()).resolve()
    maven = MavenSettings.from_values(vars(args), cache)
    name = resolve_name(args.executor)
    if name == "local" and args.executor == "auto":
        print(f"tebench build: no Docker engine answered; {what} run unsandboxed on this machine")
    executor = create_executor(ExecutorOptions.from_values(name, vars(args)), progress=print)
    try:
        yield {
            "repo_dir": Path(args.repo_dir).resolve(),
            "repo": args.repo,
            "work_dir": cache / "build-workspaces",
            "maven_repo": maven.maven_repo,
            "executor": lambda: executor,
            "java_version": lambda requirement: choose_java_version(
                executor.java_versions(), requirement, maven.jdk
            ),
            "compile_timeout": maven.timeout_compile,
            "test_timeout": maven.timeout_test,
            "warmup_timeout": maven.timeout_warmup,
            "maven_version": maven.maven_version,
            "maven_dist": maven.maven_dist,
            "jdk": maven.jdk,
            "network": args.network,
        }
    finally:
        executor.close()
