"""The settings of Maven builds, shared by every Java benchmark (TEBench, RealCodeJava).

Declared once as option specs (``--tebench-jdk``, ``--tebench-maven``, the Maven repository and
the per-phase limits) and read back into :class:`MavenSettings`, the plain-data value an
adapter keeps. Each default is written here and nowhere else.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.run.maven.dist import DEFAULT_MAVEN
from pytest_tebench.settings import OptionSpec
from pytest_tebench.settings import seconds

DEFAULT_TIMEOUT_COMPILE = 300.0
DEFAULT_TIMEOUT_TEST = 900.0
#: A cold warm-up downloads a project's whole build (plugins, dependencies, providers).
DEFAULT_TIMEOUT_WARMUP = 1800.0


def jdk_choice(value: str) -> str:
    # ASCII digits only: str.isdigit() takes superscripts and other scripts' digits too, which
    # the JDK chooser would then misread far from the option
    if (value.isascii() and value.isdigit()) or Path(value).is_dir():
        return value
    raise argparse.ArgumentTypeError(f"not a JDK feature version or directory: {value!r}")


def maven_version(value: str) -> str:
    if re.fullmatch(r"\d+\.\d+\.\d+", value):
        return value
    raise argparse.ArgumentTypeError(f"not a Maven version like 3.9.9: {value!r}")


MAVEN_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "maven-repo", metavar="DIR", type=Path,
        help="Maven local repository shared by all builds (warmed online once per project, then used "
        "offline). Default: <cache-dir>/maven-repository.",
    ),
    OptionSpec(
        "jdk", metavar="VERSION|PATH", type=jdk_choice,
        help="JDK for every build: a feature version (8, 11, 17) or a JDK home. "
        "Default: chosen per instance from the build's target level.",
    ),
    OptionSpec(
        "maven", metavar="VERSION", type=maven_version,
        help="Apache Maven version every build runs, downloaded from Maven Central and verified. "
        f"Default: {DEFAULT_MAVEN} (never the mvn on PATH or in an image: the build binds Maven's own "
        "default plugin versions).",
    ),
    OptionSpec(
        "timeout-compile", metavar="SECONDS", type=seconds, default=DEFAULT_TIMEOUT_COMPILE,
        help="Time limit of a compile phase. Default: %(default)s.",
    ),
    OptionSpec(
        "timeout-test", metavar="SECONDS", type=seconds, default=DEFAULT_TIMEOUT_TEST,
        help="Time limit of a test phase. Default: %(default)s.",
    ),
    OptionSpec(
        "timeout-warmup", metavar="SECONDS", type=seconds, default=DEFAULT_TIMEOUT_WARMUP,
        help="Time limit of each online step of a project's dependency warm-up. Default: %(default)s.",
    ),
)  # fmt: skip


@dataclass(frozen=True)
class MavenSettings:
    """How Maven builds of a run are made (plain data: crosses xdist processes in reports)."""

    #: The Maven local repository shared by every build of the run.
    maven_repo: Path
    jdk: str | None = None
    #: The Apache Maven every build runs (``--tebench-maven``).
    maven_version: str = DEFAULT_MAVEN
    timeout_compile: float = DEFAULT_TIMEOUT_COMPILE
    timeout_test: float = DEFAULT_TIMEOUT_TEST
    timeout_warmup: float = DEFAULT_TIMEOUT_WARMUP
    #: Where Maven distributions the builds need are downloaded (None: the default cache's).
    maven_dist: Path | None = None

    @classmethod
    def from_values(cls, values: Mapping[str, Any], cache_dir: Path) -> MavenSettings:
        """Read the ``MAVEN_OPTIONS`` values (keyed by dest) of one run."""
        repo = values.get("maven_repo") or cache_dir / "maven-repository"
        return cls(
            maven_repo=Path(repo).expanduser().resolve(),
            jdk=values.get("jdk"),
            maven_version=values.get("maven") or DEFAULT_MAVEN,
            timeout_compile=float(values.get("timeout_compile") or DEFAULT_TIMEOUT_COMPILE),
            timeout_test=float(values.get("timeout_test") or DEFAULT_TIMEOUT_TEST),
            timeout_warmup=float(values.get("timeout_warmup") or DEFAULT_TIMEOUT_WARMUP),
            maven_dist=cache_dir / "maven-dist",
        )
