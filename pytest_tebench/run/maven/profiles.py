"""Which Maven profiles a build activates, and so which modules its reactor has: decided once.

Both the JDK chooser's reading of a build (:mod:`~pytest_tebench.run.maven.jdkreq`) and the
reactor's modules (:mod:`~pytest_tebench.run.maven.reactor`) depend on the active profiles; this
module decides them the way Maven's ``DefaultProfileSelector`` does (Maven 3.2.2+), for what a
harness knows before the build runs (:class:`BuildContext`):

* ``-P id`` / ``-P !id`` (or ``-id``) in ``.mvn/maven.config``: activated / deactivated whatever
  the POM says;
* ``<activation>``: active when it has at least one condition and *every* condition holds (AND):
  ``<jdk>`` (a prefix ``1.8``/``11``, ``!1.8``, a range ``[1.8,11)``) for the JDK the build runs
  with; ``<property>`` (``name``, ``!name``, ``name=value``, ``name=!value``) among the build's
  user properties (``-D`` of ``.mvn/maven.config`` and the harness's own flags,
  :data:`~pytest_tebench.run.maven.steps.SKIP_FLAGS` and
  :data:`~pytest_tebench.run.maven.steps.TEST_FLAGS`) and system properties (``-D`` of
  ``.mvn/jvm.config``, and the JVM's own: ``java.specification.version`` of that JDK,
  ``user.home``, ``os.name``...); ``<file>`` (``exists``, else ``missing``; ``${basedir}`` and
  ``${project.basedir}`` interpolated; relative to the directory of the POM being built, which
  for a parent POM is the child's, as in Maven); ``<os>`` (``family``, ``name``, ``arch``,
  ``version``, each with ``!``) of the build's environment (:data:`BUILD_OS`: the harness builds
  on this host's kernel, natively or in Docker);
* ``activeByDefault``: active only while no other profile of the same POM is (by id or by
  activation).

What the harness cannot know it assumes absent: environment variables (``env.*``), a system
property's exact value where the JVM sets one the harness does not know (``java.version``:
present, so ``<name>java.version</name>`` holds, but equal to no value).

A decision depends on the JDK; :func:`profile_jdks` gives each profile the set of JDK feature
versions (of :data:`JDKS`) it is active on, so the JDK chooser can read a build before it knows
its JDK. :func:`walk_modules` is the one walk over a reactor's modules (``<modules>`` of each POM
and of its active profiles), with the JDKs each module is built on.
"""

from __future__ import annotations

import os
import platform
import re
import shlex
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from pathlib import PurePosixPath

from pytest_tebench.run.maven.jvm_config import config_words
from pytest_tebench.run.maven.steps import SKIP_FLAGS
from pytest_tebench.run.maven.steps import TEST_FLAGS
from pytest_tebench.workspace.trees import normalise_relative

#: JDK feature versions decisions are made for; every version above the last behaves as the last
#: (no POM names one that far), every one below the first as the first.
JDKS: frozenset[int] = frozenset(range(5, 41))
#: A reactor deeper than this is a loop (a module naming its parent) or not worth following.
MAX_MODULE_DEPTH = 8


# -- POM XML ----------------------------------------------------------------------------------
def local_name(tag: object) -> str:
    """An element's tag without its XML namespace (POMs may or may not declare Maven's)."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def elements(parent: ET.Element | None, name: str) -> list[ET.Element]:
    """``parent``'s child elements called ``name``."""
    return [] if parent is None else [child for child in parent if local_name(child.tag) == name]


def element(parent: ET.Element | None, name: str) -> ET.Element | None:
    """``parent``'s first child element called ``name``."""
    found = elements(parent, name)
    return found[0] if found else None


def text_of(node: ET.Element | None, name: str = "") -> str:
    """The stripped text of ``node`` (of its child ``name`` when given); "" when absent."""
    if name:
        node = element(node, name)
    return (node.text or "").strip() if node is not None else ""


def read_pom(pom: Path) -> ET.Element | None:
    """The root element of ``pom``; None when it is no file, a symbolic link (a test may plant
    one to make the harness read a file of its choosing) or no XML."""
    if pom.is_symlink() or not pom.is_file():
        return None
    try:
        return ET.parse(pom).getroot()
    except (OSError, ET.ParseError):
        return None


# -- JDK versions ----------------------------------------------------------------------------
@dataclass(frozen=True)
class VersionRange:
    """JDK feature versions between two bounds (``None``: unbounded)."""

    low: int | None = None
    low_inclusive: bool = True
    high: int | None = None
    high_inclusive: bool = False

    def __contains__(self, version: object) -> bool:
        if not isinstance(version, int):
            return False
        if self.low is not None and (version < self.low or (version == self.low and not self.low_inclusive)):
            return False
        if self.high is None:
            return True
        return version < self.high or (version == self.high and self.high_inclusive)


def feature_of(text: str) -> int | None:
    """Feature version of a version text: ``1.8`` -> 8, ``17`` -> 17, ``11.0.2`` -> 11."""
    match = re.fullmatch(r"\s*(\d+)(?:\.(\d+))?[\w.\-+]*\s*", text)
    if match is None:
        return None
    major = int(match.group(1))
    if major == 1 and match.group(2) is not None:
        return int(match.group(2))
    return major


def parse_range(text: str, *, bare: str = "min") -> tuple[VersionRange, ...] | None:
    """A Maven version range as JDK feature versions (a union of intervals), ``None`` if unreadable.

    ``[17,22)``, ``(,1.8]``, ``[1.8,),[11,)``; a bare version means "at least" for enforcer rules
    (``bare="min"``) and "this feature version" for profile activation (``bare="exact"``, where
    ``!1.8`` means "any other").
    """
    text = text.strip()
    if not text:
        return None
    if text[0] not in "[(":
        negated = text.startswith("!")
        version = feature_of(text[1:] if negated else text)
        if version is None:
            return None
        if negated:
            return (VersionRange(high=version), VersionRange(low=version, low_inclusive=False))
        if bare == "exact":
            return (VersionRange(low=version, high=version, high_inclusive=True),)
        return (VersionRange(low=version),)
    ranges: list[VersionRange] = []
    for match in re.finditer(r"([\[(])([^\])]*)([\])])", text):
        opening, body, closing = match.groups()
        parts = body.split(",")
        if len(parts) == 1:  # [17] : exactly
            version = feature_of(parts[0])
            if version is None:
                return None
            ranges.append(VersionRange(low=version, high=version, high_inclusive=True))
            continue
        if len(parts) != 2:
            return None
        low = feature_of(parts[0]) if parts[0].strip() else None
        high = feature_of(parts[1]) if parts[1].strip() else None
        if (parts[0].strip() and low is None) or (parts[1].strip() and high is None):
            return None
        ranges.append(VersionRange(low, opening == "[", high, closing == "]"))
    return tuple(ranges) or None


def ranges_of(jdks: Iterable[int]) -> tuple[VersionRange, ...]:
    """``jdks`` (a subset of :data:`JDKS`) as ranges, open-ended at :data:`JDKS`' ends; ``()``
    for all of them (a constraint that applies to every JDK)."""
    chosen = sorted(set(jdks) & JDKS)
    if set(chosen) == JDKS:
        return ()
    runs: list[list[int]] = []
    for version in chosen:
        if runs and runs[-1][1] == version - 1:
            runs[-1][1] = version
        else:
            runs.append([version, version])
    lowest, highest = min(JDKS), max(JDKS)
    return tuple(
        VersionRange(None if low == lowest else low, True, None if high == highest else high, True)
        for low, high in runs
    )


def _clamp(java: int) -> int:
    return min(max(java, min(JDKS)), max(JDKS))


# -- what the harness knows of the build --------------------------------------------------------
@dataclass(frozen=True)
class OsInfo:
    """The build environment's OS as Java names it (``os.name`` lower-cased, ``os.arch``)."""

    name: str
    arch: str
    version: str

    @property
    def families(self) -> frozenset[str]:
        """The ``<os><family>`` values that hold (plexus ``Os.isFamily``)."""
        if "windows" in self.name:
            return frozenset({"windows", "dos"})
        if "mac" in self.name:
            return frozenset({"mac", "unix"} if self.name.endswith("x") else {"mac"})
        return frozenset({"unix"})


def _host_os() -> OsInfo:
    # Java's names for the machine: amd64 where the kernel says x86_64
    arches = {"x86_64": "amd64", "i686": "x86", "arm64": "aarch64"}
    machine = platform.machine().lower()
    return OsInfo(platform.system().lower() or "linux", arches.get(machine, machine), platform.release())


#: Where builds run: on this host's kernel, locally or in a Linux container (the harness's
#: executors), so its name, architecture and kernel version.
BUILD_OS = _host_os()
#: Properties every build has whose value the harness does not know (present, equal to no value
#: a POM names): the JVM's, Maven's, and the harness's ``-Dmaven.repo.local``.
_UNKNOWN_VALUE = "\0unknown"
_PRESENT_PROPERTIES = (
    "maven.repo.local",
    "java.version",
    "java.home",
    "java.vendor",
    "java.vm.name",
    "java.vm.version",
    "java.runtime.version",
    "java.class.path",
    "java.io.tmpdir",
    "user.home",
    "user.name",
    "user.dir",
    "file.encoding",
    "maven.home",
    "maven.version",
)


@dataclass(frozen=True)
class MavenConfig:
    """What ``.mvn/maven.config`` passes Maven: ``-D`` properties and ``-P`` profile ids."""

    properties: Mapping[str, str] = field(default_factory=dict)
    active: frozenset[str] = frozenset()
    inactive: frozenset[str] = frozenset()


def _words(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return text.split()


def _define(word: str, into: dict[str, str]) -> None:
    name, _, value = word[2:].partition("=")
    if name:
        # Maven gives a bare -Dname the value "true"
        into[name] = value if "=" in word else "true"


def maven_config(root: Path) -> MavenConfig:
    """``-D`` properties and ``-P`` profile ids (``!id``/``-id``: deactivated) of
    ``root/.mvn/maven.config``."""
    path = root / ".mvn" / "maven.config"
    if not path.is_file():
        return MavenConfig()
    # "-D name=value" and "-Dname=value" alike: join a bare flag with its value
    joined: list[str] = []
    for word in _words(path):
        if joined and joined[-1] in ("-D", "--define", "-P", "--activate-profiles"):
            joined[-1] = joined[-1][:2] + word
        else:
            joined.append(word.replace("--define=", "-D").replace("--activate-profiles=", "-P"))
    properties: dict[str, str] = {}
    active: set[str] = set()
    inactive: set[str] = set()
    for word in joined:
        if word.startswith("-D"):
            _define(word, properties)
        elif word.startswith("-P"):
            for ident in filter(None, word[2:].split(",")):
                if ident.startswith(("!", "-")):
                    inactive.add(ident[1:])
                else:
                    active.add(ident.lstrip("+?"))
    return MavenConfig(properties, frozenset(active), frozenset(inactive))


def jvm_config_properties(root: Path) -> dict[str, str]:
    """``-D`` system properties of ``root/.mvn/jvm.config`` (the JVM running Maven)."""
    found: dict[str, str] = {}
    for word in config_words(root) or ():
        if word.startswith("-D"):
            _define(word, found)
    return found


def _harness_properties() -> dict[str, str]:
    found: dict[str, str] = {}
    for flag in (*SKIP_FLAGS, *TEST_FLAGS):
        _define(flag, found)
    return found


@dataclass(frozen=True)
class BuildContext:
    """What decides a profile's activation that the harness knows before the build runs."""

    #: ``-D`` of the command line: ``.mvn/maven.config``'s and the harness's own flags.
    user_properties: Mapping[str, str] = field(default_factory=dict)
    #: ``-D`` of ``.mvn/jvm.config``; the JVM's own come per JDK (:meth:`property`).
    system_properties: Mapping[str, str] = field(default_factory=dict)
    active_ids: frozenset[str] = frozenset()
    inactive_ids: frozenset[str] = frozenset()
    os: OsInfo = BUILD_OS

    @classmethod
    def read(cls, root: Path) -> BuildContext:
        """The context of the build in directory ``root`` (its ``.mvn/`` files, the harness's flags)."""
        config = maven_config(root)
        return cls(
            user_properties={**_harness_properties(), **config.properties},
            system_properties=jvm_config_properties(root),
            active_ids=config.active,
            inactive_ids=config.inactive,
        )

    def property(self, name: str, java: int) -> str | None:
        """The value Maven sees for property ``name`` on JDK ``java`` (user properties first, as in
        Maven); None when it is not set."""
        if name in self.user_properties:
            return self.user_properties[name]
        if name in self.system_properties:
            return self.system_properties[name]
        known = {
            "java.specification.version": f"1.{java}" if java <= 8 else str(java),
            "os.name": self.os.name,
            "os.arch": self.os.arch,
            "os.version": self.os.version,
            "file.separator": os.sep,
            "path.separator": os.pathsep,
            "line.separator": "\n",
        }
        if name in known:
            return known[name]
        return _UNKNOWN_VALUE if name in _PRESENT_PROPERTIES else None


# -- activation -------------------------------------------------------------------------------
def _jdk_holds(text: str, java: int) -> bool:
    ranges = parse_range(text, bare="exact")
    # an unreadable range (commons-math's "[17") activates nothing
    return ranges is not None and any(_clamp(java) in r for r in ranges)


def _property_holds(node: ET.Element, context: BuildContext, java: int) -> bool:
    name, expected = text_of(node, "name"), text_of(node, "value")
    negated_name = name.startswith("!")
    name = name.lstrip("!")
    if not name:
        return False
    value = context.property(name, java)
    if expected:
        negated_value = expected.startswith("!")
        return (expected.lstrip("!") == value) != negated_value
    return bool(value) != negated_name


def _interpolate(path: str, basedir: Path, context: BuildContext, java: int) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in ("basedir", "project.basedir"):
            return str(basedir)
        found = context.property(name, java)
        return match.group(0) if found is None or found == _UNKNOWN_VALUE else found

    return re.sub(r"\$\{([^}]+)\}", value, path)


def _file_holds(node: ET.Element, basedir: Path, context: BuildContext, java: int) -> bool:
    exists, missing = text_of(node, "exists"), text_of(node, "missing")
    path = exists or missing
    if not path:
        return False
    found = basedir / _interpolate(path, basedir, context, java)  # an absolute path stays itself
    return found.exists() == bool(exists)


def _os_holds(node: ET.Element, system: OsInfo) -> bool:
    def matches(wanted: str, actual: str | frozenset[str]) -> bool:
        negated = wanted.startswith("!")
        wanted = wanted.lstrip("!").lower()
        if isinstance(actual, frozenset):
            hit = wanted in actual
        elif wanted.startswith("regex:"):
            hit = re.fullmatch(wanted[len("regex:") :], actual.lower()) is not None
        else:
            hit = wanted == actual.lower()
        return hit != negated

    checks: list[tuple[str, str | frozenset[str]]] = [
        (text_of(node, "family"), system.families),
        (text_of(node, "name"), system.name),
        (text_of(node, "arch"), system.arch),
        (text_of(node, "version"), system.version),
    ]
    return all(matches(wanted, actual) for wanted, actual in checks if wanted)


def activation_holds(profile: ET.Element, basedir: Path, context: BuildContext, java: int) -> bool:
    """Whether ``profile``'s ``<activation>`` conditions all hold on JDK ``java`` for the POM
    built in ``basedir`` (False without any condition; ``activeByDefault`` is no condition)."""
    activation = element(profile, "activation")
    conditions: list[bool] = []
    jdk = text_of(activation, "jdk")
    if jdk:
        conditions.append(_jdk_holds(jdk, java))
    node = element(activation, "property")
    if node is not None:
        conditions.append(_property_holds(node, context, java))
    node = element(activation, "file")
    if node is not None:
        conditions.append(_file_holds(node, basedir, context, java))
    node = element(activation, "os")
    if node is not None:
        conditions.append(_os_holds(node, context.os))
    return bool(conditions) and all(conditions)


def active_profiles(pom: ET.Element, basedir: Path, context: BuildContext, java: int) -> list[ET.Element]:
    """The profiles of ``pom`` that Maven activates on JDK ``java`` building in ``basedir``."""
    active: list[ET.Element] = []
    by_default: list[ET.Element] = []
    for profile in elements(element(pom, "profiles"), "profile"):
        ident = text_of(profile, "id")
        if ident in context.inactive_ids:
            continue
        if ident in context.active_ids or activation_holds(profile, basedir, context, java):
            active.append(profile)
        elif text_of(element(profile, "activation"), "activeByDefault") == "true":
            by_default.append(profile)
    return active or by_default


def profile_jdks(
    pom: ET.Element, basedir: Path, context: BuildContext, jdks: Iterable[int] = JDKS
) -> list[tuple[ET.Element, frozenset[int]]]:
    """Every profile of ``pom`` with the JDKs (among ``jdks``) it is active on."""
    on: dict[int, list[int]] = {}
    for java in sorted(set(jdks)):
        for profile in active_profiles(pom, basedir, context, java):
            on.setdefault(id(profile), []).append(java)
    return [
        (profile, frozenset(on.get(id(profile), ())))
        for profile in elements(element(pom, "profiles"), "profile")
    ]


# -- the reactor's modules --------------------------------------------------------------------
@dataclass(frozen=True)
class ModulePom:
    """One POM of a reactor: its module directory (``""``: the root), the POM file, the module
    that lists it (None for the root) and the JDKs it is part of the build on."""

    module: str
    pom: Path
    lister: str | None
    jdks: frozenset[int]


def walk_modules(root: Path, context: BuildContext, jdks: Iterable[int] = JDKS) -> list[ModulePom]:
    """The POMs of the reactor at ``root`` built on any of ``jdks``, the root's first, breadth
    first: ``<modules>`` of each POM and of its profiles active on those JDKs (a module listed in
    a profile is built on the JDKs the profile is active on). Modules leaving ``root``, without a
    POM, or deeper than :data:`MAX_MODULE_DEPTH` are not followed; an unreadable POM lists none.
    A module listed twice keeps the POM and lister of its first listing, on the JDKs of both."""
    start = frozenset(jdks)
    found: dict[str, ModulePom] = {"": ModulePom("", root / "pom.xml", None, start)}
    pending: list[tuple[str, int]] = [("", 0)]
    while pending:
        module, depth = pending.pop(0)
        here = found[module]
        parsed = read_pom(here.pom) if depth < MAX_MODULE_DEPTH else None
        if parsed is None:
            continue
        profiles = profile_jdks(parsed, here.pom.parent, context, here.jdks)
        scopes = [(parsed, here.jdks), *((profile, on & here.jdks) for profile, on in profiles)]
        for scope, on in scopes:
            for node in elements(element(scope, "modules"), "module"):
                listed = _module_pom(root, module, text_of(node))
                if listed is None or not on:
                    continue
                relative, pom = listed
                if relative in found:
                    seen = found[relative]
                    found[relative] = ModulePom(relative, seen.pom, seen.lister, seen.jdks | on)
                    continue
                found[relative] = ModulePom(relative, pom, module, on)
                pending.append((relative, depth + 1))
    return list(found.values())


def _module_pom(root: Path, lister: str, text: str) -> tuple[str, Path] | None:
    """The module directory and POM file ``<module>text</module>`` of module ``lister`` names;
    None when it leaves ``root`` or has no POM (another layout, or a commit removed it)."""
    if not text:
        return None
    # <module>sub/pom-alt.xml</module> names a POM file: its directory is the module
    name = PurePosixPath(text)
    directory, file = (name.parent, name.name) if text.endswith(".xml") else (name, "pom.xml")
    # a module of the root itself ("." or "") or one leaving it is no module of its own
    relative = normalise_relative(str(PurePosixPath(lister) / directory if lister else directory))
    if not relative or not (root / relative / file).is_file():
        return None
    return relative, root / relative / file
