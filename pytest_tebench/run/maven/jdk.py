"""Find the JDKs installed on this host and pick the one a build should run with.

Discovery looks at ``JAVA_HOME``, ``JAVA<N>_HOME`` / ``JAVA_HOME_<N>_X64`` style variables and the
usual install roots (``/usr/lib/jvm/*``, ``/opt/java/*``), reads each home's ``release`` file for
its feature version and keeps only real JDKs (``bin/javac`` present), one per version.

What a build asks of its JDK (language levels, ``.mvn/jvm.config`` flags, enforcer ranges,
toolchains, active profiles, modules) is read by :mod:`~pytest_tebench.run.maven.jdkreq`;
:func:`choose_for` is the one place that turns it into a JDK: among the JDKs that satisfy every
constraint, an exact match of the build's level, else the smallest newer one whose class files
our JaCoCo can read, else the smallest. When none satisfies the build it raises
:class:`~pytest_tebench.errors.UnsupportedEnvironment` naming what excluded each JDK: the
instance's environment cannot be had here, which is neither a score nor a harness bug. The
reference harness had no per-project choice at all (one global JDK).

What no build file says shows only when a build fails: :func:`java_version_after` reads the
failed build's log (:func:`~pytest_tebench.run.maven.jdkreq.log_constraints`: a dependency's
class files newer than the JDK, a level javac refuses) and picks the JDK to run it again with,
by the same rules, so such a build is neither the instance's failure nor a model's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.run.maven import toolchains
from pytest_tebench.run.maven.jdkreq import DEFAULT_LEVEL
from pytest_tebench.run.maven.jdkreq import INFO
from pytest_tebench.run.maven.jdkreq import OFFERED
from pytest_tebench.run.maven.jdkreq import Constraint
from pytest_tebench.run.maven.jdkreq import JdkRequirement
from pytest_tebench.run.maven.jdkreq import detect_java_level
from pytest_tebench.run.maven.jdkreq import log_constraints
from pytest_tebench.run.maven.jdkreq import read_requirement

__all__ = [
    "DEFAULT_LEVEL",
    "JdkChoice",
    "JdkInstall",
    "JdkRequirement",
    "choose_for",
    "choose_java_version",
    "choose_jdk",
    "detect_java_level",
    "discover_jdks",
    "java_version_after",
    "read_jdk",
    "read_requirement",
]

#: Where package managers and images put JDKs.
DEFAULT_ROOTS = (Path("/usr/lib/jvm"), Path("/opt/java"))
#: Newest class-file feature version the harness's JaCoCo (0.8.12) instruments and analyses.
JACOCO_MAX_FEATURE = 22

_ENV_PATTERNS = (re.compile(r"^JAVA(\d+)_HOME$"), re.compile(r"^JAVA_HOME_(\d+)(?:_[A-Z0-9]+)?$"))


@dataclass(frozen=True)
class JdkInstall:
    """One JDK home and its feature version (``17`` for ``17.0.15``, ``8`` for ``1.8.0_392``)."""

    version: int
    home: Path
    full_version: str


@dataclass(frozen=True)
class JdkChoice:
    """The JDK chosen for a build and why."""

    version: int
    home: Path
    level: int
    reason: str


def parse_java_version(text: str) -> int:
    """Feature version of a ``JAVA_VERSION`` string: ``"1.8.0_392"`` -> 8, ``"17.0.15"`` -> 17."""
    match = re.match(r"\s*\"?(\d+)(?:\.(\d+))?", text)
    if match is None:
        raise HarnessError(f"cannot read a Java version from {text!r}")
    major = int(match.group(1))
    if major == 1 and match.group(2) is not None:
        return int(match.group(2))
    return major


def read_jdk(home: Path) -> JdkInstall | None:
    """Describe the JDK at ``home``, or ``None`` when it is not a JDK with a ``release`` file."""
    release = home / "release"
    if not (home / "bin" / "javac").is_file() or not release.is_file():
        return None
    try:
        text = release.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = re.search(r'^JAVA_VERSION="?([^"\n]+)"?', text, re.MULTILINE)
    if match is None:
        return None
    try:
        return JdkInstall(parse_java_version(match.group(1)), home.resolve(), match.group(1))
    except HarnessError:
        return None


def discover_jdks(
    env: Mapping[str, str] | None = None, roots: Iterable[Path] = DEFAULT_ROOTS
) -> dict[int, JdkInstall]:
    """Map feature version -> JDK. Explicit ``JAVA<N>_HOME`` variables win over ``JAVA_HOME``,
    which wins over the install roots; symlinked duplicates count once."""
    env = os.environ if env is None else env
    candidates: list[Path] = []
    for key in sorted(env):
        if any(pattern.match(key) for pattern in _ENV_PATTERNS):
            candidates.append(Path(env[key]))
    if env.get("JAVA_HOME"):
        candidates.append(Path(env["JAVA_HOME"]))
    for root in roots:
        if root.is_dir():
            candidates.extend(sorted(child for child in root.iterdir() if child.is_dir()))
    found: dict[int, JdkInstall] = {}
    seen: set[Path] = set()
    for home in candidates:
        real = home.resolve()
        if real in seen:
            continue
        seen.add(real)
        jdk = read_jdk(home)
        if jdk is not None and jdk.version not in found:
            found[jdk.version] = jdk
    return found


def min_supported_level(jdk_version: int) -> int:
    """Oldest ``-source``/``--release`` level javac of ``jdk_version`` accepts (JEP 182 policy:
    JDK 9 dropped 5, JDK 12 dropped 6, JDK 20 dropped 7)."""
    if jdk_version >= 20:
        return 8
    if jdk_version >= 12:
        return 7
    if jdk_version >= 9:
        return 6
    return 3


def accepts_level(jdk: int, level: int) -> bool:
    """Whether javac of ``jdk`` compiles for ``level``."""
    return min_supported_level(jdk) <= level <= jdk


def toolchain_jdk(constraint: Constraint, offered: Iterable[int], running: int) -> int | None:
    """The offered JDK a ``jdkToolchain`` of ``constraint`` selects when Maven runs on JDK
    ``running``: the first in its range as :mod:`~pytest_tebench.run.maven.toolchains` lists them
    (``running`` itself when the range admits it, else the oldest; None: none matches)."""
    order = toolchains.offered_order(offered, running)
    matching = [v for v in order if any(v in r for r in constraint.toolchain)]
    return matching[0] if matching else None


def _rejection(version: int, constraint: Constraint, offered: Iterable[int]) -> bool:
    """Whether ``constraint`` rules out Maven running on JDK ``version`` when the JDKs
    ``offered`` are the build's toolchains."""
    if not constraint.applies_to(version) or constraint.kind == INFO:
        return False
    if constraint.kind == OFFERED:
        return not any(v in allowed for v in offered for allowed in constraint.allowed)
    if constraint.level is not None:
        javac = toolchain_jdk(constraint, offered, version) if constraint.toolchain else None
        return not accepts_level(version if javac is None else javac, constraint.level)
    return not any(version in allowed for allowed in constraint.allowed)


def why_not(version: int, requirement: JdkRequirement, offered: Iterable[int] = ()) -> str:
    """The first constraint that rules JDK ``version`` out ("" when it satisfies the build);
    ``offered``: the JDKs of the build's toolchains (the executor's)."""
    chosen = tuple(offered)
    return next((c.reason for c in requirement.constraints if _rejection(version, c, chosen)), "")


def choose_for(
    requirement: JdkRequirement | int,
    available: Mapping[int, JdkInstall],
    override: int | str | Path | None = None,
    preferred: int | None = None,
) -> JdkChoice:
    """Pick the JDK for a build that asks ``requirement`` (a bare int: just a language level).

    ``override`` (``--tebench-jdk``: a feature version or a JDK home) always wins when it exists.
    Otherwise, among the JDKs satisfying every constraint: ``preferred`` (the JDK a benchmark's
    own harness ran the build with, SWE-bench's ``java_version``) when it is one; an exact match
    of the build's level;
    else the smallest newer one whose class files JaCoCo reads (``<= JACOCO_MAX_FEATURE``); else
    the smallest newer one; else the smallest (a level only a JDK-activated profile names).
    Raises :class:`UnsupportedEnvironment` when no JDK satisfies the build.
    """
    if isinstance(requirement, int):
        requirement = JdkRequirement.at_level(requirement)
    level = requirement.level
    if override is not None and override != "":
        return _choose_override(level, available, override)
    fitting = sorted(v for v in available if not why_not(v, requirement, available))
    if preferred is not None and preferred in fitting:
        jdk = available[preferred]
        return JdkChoice(jdk.version, jdk.home, level, "the JDK the benchmark's own harness used")
    newer = [v for v in fitting if v >= level]
    readable = [v for v in newer if v <= JACOCO_MAX_FEATURE]
    if level in fitting:
        version, reason = level, "exact match for the build's level"
    elif readable:
        version, reason = readable[0], f"smallest JDK >= {level} that the build accepts"
    elif newer:
        version = newer[0]
        reason = f"only JDKs newer than JaCoCo's limit (Java {JACOCO_MAX_FEATURE}) fit level {level}"
    elif fitting:
        version, reason = fitting[0], "the smallest JDK the build accepts"
    else:
        raise UnsupportedEnvironment(_unsatisfied(requirement, available))
    jdk = available[version]
    return JdkChoice(jdk.version, jdk.home, level, reason)


def _unsatisfied(requirement: JdkRequirement, available: Mapping[int, JdkInstall]) -> str:
    if not available:
        return "no JDK is installed here"
    have = ", ".join(str(v) for v in sorted(available))
    excluded = "; ".join(f"JDK {v}: {why_not(v, requirement, available)}" for v in sorted(available))
    if all(
        c.level is not None and not c.when and not c.toolchain
        for c in requirement.constraints
        if c.kind != INFO
    ):
        return f"no installed JDK can build Java level {requirement.level} (found: {have}); {excluded}"
    return f"no JDK here satisfies the build (found: {have}); {excluded}"


def choose_jdk(
    level: int, available: Mapping[int, JdkInstall], override: int | str | Path | None = None
) -> JdkChoice:
    """:func:`choose_for` of a build that asks only for language ``level``."""
    return choose_for(JdkRequirement.at_level(level), available, override)


def _choose_override(
    level: int, available: Mapping[int, JdkInstall], override: int | str | Path
) -> JdkChoice:
    text = str(override)
    if isinstance(override, int) or text.isdigit():
        version = int(text)
        if version not in available:
            have = ", ".join(str(v) for v in sorted(available)) or "none"
            raise HarnessError(f"JDK {version} was requested but is not installed (found: {have})")
        jdk = available[version]
        return JdkChoice(jdk.version, jdk.home, level, "requested explicitly")
    found = read_jdk(Path(text))
    if found is None:
        raise HarnessError(f"{text} is not a JDK home (needs bin/javac and a release file)")
    return JdkChoice(found.version, found.home, level, "requested explicitly (path)")


def choose_java_version(
    available: Iterable[int],
    requirement: JdkRequirement | int,
    override: str | None,
    preferred: int | None = None,
) -> int:
    """The JDK feature version a build runs with, among an executor's ``available`` ones
    (``Executor.java_versions()``); ``requirement`` is :func:`read_requirement` of the project
    (or a bare language level), ``override`` is ``--tebench-jdk`` (a version or a home),
    ``preferred`` the benchmark's own JDK (:func:`choose_for`)."""
    installs = {v: JdkInstall(v, Path(f"/jdk/{v}"), str(v)) for v in available}
    if override and not override.isdigit():
        found = read_jdk(Path(override))
        if found is not None:
            return found.version
        return choose_for(requirement, installs, preferred=preferred).version
    return choose_for(requirement, installs, int(override) if override else None, preferred).version


def java_version_after(
    available: Iterable[int],
    requirement: JdkRequirement,
    ran: int,
    failure: Iterable[str],
    override: str | None = None,
) -> JdkChoice | None:
    """The JDK to run a failed build again with, when its output (``failure``: logs, test
    messages) shows that JDK ``ran`` cannot build it, or when ``requirement`` (read again after
    the build: a warm-up may have brought a parent POM) rules ``ran`` out; ``None`` when neither
    does (the failure is the code's, or not the JDK's).

    The build's ``requirement`` plus the log's demands go through :func:`choose_for`: the lowest
    fitting JDK (class files of Java 17 on JDK 11: 17, or 21 when there is no 17). Raises
    :class:`UnsupportedEnvironment` when no JDK here meets them, and :class:`HarnessError` when
    ``override`` (``--tebench-jdk``) forces the JDK that cannot build it.
    """
    texts = list(failure)
    if not texts:  # a build that did not fail is not run again
        return None
    demands = log_constraints(texts)
    offered = tuple(available)
    ruling_out = [c for c in (*demands, *requirement.constraints) if _rejection(ran, c, offered)]
    if not ruling_out:
        return None
    if override:
        raise HarnessError(
            f"the JDK requested with --tebench-jdk ({override}) cannot build this: {ruling_out[0].reason}"
        )
    installs = {v: JdkInstall(v, Path(f"/jdk/{v}"), str(v)) for v in offered}
    choice = choose_for(requirement.adding(demands), installs)
    reason = f"JDK {ran} could not build it ({ruling_out[0].reason}); {choice.reason}"
    return JdkChoice(choice.version, choice.home, choice.level, reason)
