"""Find the JDKs installed on this host and pick the one a build should run with.

Discovery looks at ``JAVA_HOME``, ``JAVA<N>_HOME`` / ``JAVA_HOME_<N>_X64`` style variables and the
usual install roots (``/usr/lib/jvm/*``, ``/opt/java/*``), reads each home's ``release`` file for
its feature version and keeps only real JDKs (``bin/javac`` present), one per version.

The build's *language level* comes from ``pom.xml`` (compiler properties and the compiler
plugin's ``release``/``source``/``target``). :func:`choose_jdk` then takes an exact match, else
the smallest JDK above the level that still accepts it, preferring JDKs whose class files our
JaCoCo can read. The reference harness had no per-project choice at all (one global JDK).
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_tebench.errors import HarnessError

#: Where package managers and images put JDKs.
DEFAULT_ROOTS = (Path("/usr/lib/jvm"), Path("/opt/java"))
#: Language level assumed when a POM says nothing (Maven's modern compiler plugins default to 8).
DEFAULT_LEVEL = 8
#: Newest class-file feature version the harness's JaCoCo (0.8.12) instruments and analyses.
JACOCO_MAX_FEATURE = 22

_ENV_PATTERNS = (re.compile(r"^JAVA(\d+)_HOME$"), re.compile(r"^JAVA_HOME_(\d+)(?:_[A-Z0-9]+)?$"))
_PROPERTY_REF = re.compile(r"\$\{([^}]+)\}")


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


def _level_value(text: str) -> int | None:
    text = text.strip()
    match = re.fullmatch(r"(?:1\.)?(\d+)", text)
    if match is None:
        return None
    return int(match.group(1))


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _children(element: ET.Element, name: str) -> list[ET.Element]:
    return [child for child in element if _local(child.tag) == name]


def _child(element: ET.Element, name: str) -> ET.Element | None:
    found = _children(element, name)
    return found[0] if found else None


def _resolve(text: str, properties: Mapping[str, str], depth: int = 0) -> str:
    if depth > 10:
        return text
    resolved = _PROPERTY_REF.sub(lambda m: properties.get(m.group(1), m.group(0)), text)
    return resolved if resolved == text else _resolve(resolved, properties, depth + 1)


def _properties(scope: ET.Element) -> dict[str, str]:
    props = _child(scope, "properties")
    if props is None:
        return {}
    return {_local(p.tag): (p.text or "").strip() for p in props}


def _compiler_values(scope: ET.Element) -> list[str]:
    """Raw ``release``/``source``/``target`` texts of compiler plugins in ``scope``'s build."""
    values: list[str] = []
    build = _child(scope, "build")
    if build is None:
        return values
    containers = [build]
    management = _child(build, "pluginManagement")
    if management is not None:
        containers.append(management)
    for container in containers:
        plugins = _child(container, "plugins")
        for plugin in _children(plugins, "plugin") if plugins is not None else []:
            artifact = _child(plugin, "artifactId")
            if artifact is None or (artifact.text or "").strip() != "maven-compiler-plugin":
                continue
            configs = [_child(plugin, "configuration")]
            executions = _child(plugin, "executions")
            for execution in _children(executions, "execution") if executions is not None else []:
                configs.append(_child(execution, "configuration"))
            for config in configs:
                for name in ("release", "source", "target"):
                    node = _child(config, name) if config is not None else None
                    if node is not None and node.text:
                        values.append(node.text)
    return values


def _scope_levels(scope: ET.Element, properties: Mapping[str, str]) -> list[int]:
    texts = [
        properties[name]
        for name in ("maven.compiler.release", "maven.compiler.source", "maven.compiler.target")
        if name in _properties(scope)
    ]
    texts += _compiler_values(scope)
    levels = [_level_value(_resolve(text, properties)) for text in texts]
    return [level for level in levels if level is not None]


def detect_java_level(pom: Path) -> int:
    """The Java language level a single-module ``pom.xml`` builds for.

    Takes the highest level named outside profiles; when nothing is named there (jsoup keeps its
    compiler setup in JDK-activated profiles), the highest level named in any profile, so a
    multi-release build gets a JDK that can compile all of it. Defaults to :data:`DEFAULT_LEVEL`.
    Inherited parent settings are not seen; commons-* repositories restate theirs locally.
    """
    try:
        root = ET.parse(pom).getroot()
    except (OSError, ET.ParseError) as exc:
        raise HarnessError(f"cannot read {pom}: {exc}") from exc
    properties = _properties(root)
    levels = _scope_levels(root, properties)
    if not levels:
        profiles = _child(root, "profiles")
        for profile in _children(profiles, "profile") if profiles is not None else []:
            merged = {**properties, **_properties(profile)}
            levels += _scope_levels(profile, merged)
    return max(levels) if levels else DEFAULT_LEVEL


def _supports(jdk: int, level: int) -> bool:
    return min_supported_level(jdk) <= level <= jdk


def choose_jdk(
    level: int, available: Mapping[int, JdkInstall], override: int | str | Path | None = None
) -> JdkChoice:
    """Pick the JDK for a build at ``level``.

    ``override`` is a feature version (``17``, ``"17"``) or a JDK home path and always wins when
    it exists. Otherwise: an exact match; else the smallest JDK above ``level`` that still accepts
    it and whose class files JaCoCo reads (``<= JACOCO_MAX_FEATURE``); else the smallest accepting
    JDK at all. Raises :class:`HarnessError` when nothing fits.
    """
    if override is not None and override != "":
        return _choose_override(level, available, override)
    if level in available:
        jdk = available[level]
        return JdkChoice(jdk.version, jdk.home, level, "exact match for the build's level")
    accepting = sorted(v for v in available if _supports(v, level))
    readable = [v for v in accepting if v <= JACOCO_MAX_FEATURE]
    if readable:
        jdk = available[readable[0]]
        return JdkChoice(jdk.version, jdk.home, level, f"smallest JDK >= {level} that accepts it")
    if accepting:
        jdk = available[accepting[0]]
        reason = f"only JDKs newer than JaCoCo's limit (Java {JACOCO_MAX_FEATURE}) accept level {level}"
        return JdkChoice(jdk.version, jdk.home, level, reason)
    have = ", ".join(str(v) for v in sorted(available)) or "none"
    raise HarnessError(f"no installed JDK can build Java level {level} (found: {have})")


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


def choose_java_version(available: Iterable[int], level: int, override: str | None) -> int:
    """The JDK feature version a build at ``level`` runs with, among an executor's ``available``
    ones (``Executor.java_versions()``); ``override`` is ``--tebench-jdk`` (a version or a home)."""
    installs = {v: JdkInstall(v, Path(f"/jdk/{v}"), str(v)) for v in available}
    if override and not override.isdigit():
        found = read_jdk(Path(override))
        return found.version if found is not None else choose_jdk(level, installs).version
    return choose_jdk(level, installs, int(override) if override else None).version
