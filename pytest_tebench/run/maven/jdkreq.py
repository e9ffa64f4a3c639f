"""What JDK a Maven build asks for, read from its build files (no Maven run).

Everything a project says about the JDK that runs its build, as :class:`Constraint` values of
one :class:`JdkRequirement`; :func:`pytest_tebench.run.maven.jdk.choose_for` picks the JDK.

* ``.mvn/jvm.config``: options of the JVM that runs Maven itself. Module-system flags
  (``--add-exports``, ``--add-opens``...) do not exist before JDK 9: ``java`` 8 stops with
  ``Unrecognized option`` before Maven starts (google/gson).
* ``.mvn/maven.config``: ``-Dname=value`` overrides POM properties (as the harness's own ``-D``
  flags do), ``-Pid`` activates profiles and ``-P!id`` deactivates them.
* compiler ``release``/``source``/``target`` and their ``test*`` variants, as
  ``maven.compiler.*`` properties or compiler-plugin configuration (executions included): a JDK
  must accept the level (javac 20 dropped 7, 12 dropped 6).
* enforcer ``requireJavaVersion`` (``[17,22)``): the JDK range the project supports. The
  harness skips the enforcer (``-Denforcer.skip``), so it honours the range itself.
* toolchains (:mod:`~pytest_tebench.run.maven.toolchains`: every build is offered all the
  executor's JDKs): they never limit the JDK that runs Maven. ``maven-toolchains-plugin`` needs
  *some* offered JDK in its range (:data:`OFFERED`: the build fails without one); a plugin's
  ``jdkToolchain`` is recorded (:data:`INFO`) and falls back to Maven's JDK when no JDK matches;
  the language levels of a compiler configuration with a ``jdkToolchain`` are javac's of the
  offered JDK it matches, when one does (google/gson 2019-2021: ``source 1.6`` with
  ``jdkToolchain [1.5,9)`` compiles on JDK 8 while Maven runs on 11). A compiler execution's
  configuration is its plugin's merged with its own, and ``release`` wins over
  ``source``/``target`` (as the compiler plugin passes only ``--release`` then).
* profiles, active as :mod:`~pytest_tebench.run.maven.profiles` decides (Maven's rules: ``-P``,
  ``<jdk>``, ``<property>``, ``<file>``, ``<os>``, ``activeByDefault``): one applies to the JDKs
  it is active on (jsoup compiles its multi-release sources only on 11+; a profile active on
  every JDK always applies); one active on none only counts for the language level when nothing
  else names one (jsoup's older POMs).
* modules: the reactor's own walk (:func:`~pytest_tebench.run.maven.profiles.walk_modules`,
  profiles' ``<modules>`` included): a reactor's JDK must build every module it builds, and a
  module only a JDK's profile lists counts on that JDK alone.
* a failed build's log (:func:`log_constraints`): what no build file states, such as a
  dependency compiled for a newer Java (jfree/jfreechart tests with EqualsVerifier 4.0, whose
  class files are Java 17: javac 11 stops at ``class file has wrong version 61.0, should be
  55.0``), or a level set where these files are not read.

* parents outside the repository (``<parent>`` whose ``relativePath`` is not in the checkout:
  ``org.apache.commons:commons-parent``), read from the local Maven repository when it has them
  (after the project's first warm-up it does), up their own parents: their properties, plugins
  and profiles count as the child's, its own properties winning. A parent not there yet is
  simply not read; gold's run reads the build again once the warm-up brought it
  (:func:`~pytest_tebench.run.maven.jdk.java_version_after`).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from pytest_tebench.errors import HarnessError
from pytest_tebench.run.maven.jvm_config import config_words
from pytest_tebench.run.maven.profiles import JDKS
from pytest_tebench.run.maven.profiles import BuildContext
from pytest_tebench.run.maven.profiles import ModulePom
from pytest_tebench.run.maven.profiles import VersionRange
from pytest_tebench.run.maven.profiles import element as _child
from pytest_tebench.run.maven.profiles import elements as _children
from pytest_tebench.run.maven.profiles import local_name as _local
from pytest_tebench.run.maven.profiles import parse_range
from pytest_tebench.run.maven.profiles import profile_jdks
from pytest_tebench.run.maven.profiles import ranges_of
from pytest_tebench.run.maven.profiles import text_of as _text
from pytest_tebench.run.maven.profiles import walk_modules

#: Language level assumed when a POM says nothing (Maven's modern compiler plugins default to 8).
DEFAULT_LEVEL = 8
#: Parents outside the checkout followed up from one POM (commons-parent has one: the ASF parent).
MAX_PARENT_DEPTH = 6
#: ``.mvn/jvm.config`` options and the first JDK whose ``java`` launcher knows them.
JVM_OPTION_SINCE: Mapping[str, int] = {
    "--add-exports": 9,
    "--add-opens": 9,
    "--add-modules": 9,
    "--add-reads": 9,
    "--patch-module": 9,
    "--limit-modules": 9,
    "--upgrade-module-path": 9,
    "--illegal-access": 9,
    "--enable-native-access": 17,
    "--sun-misc-unsafe-memory-access": 23,
}

#: Kinds of :class:`Constraint`: on the JDK running Maven (and every plugin without a toolchain);
#: on the JDKs offered as toolchains (one must satisfy it); recorded only.
RUNS_MAVEN = "maven"
OFFERED = "offered"
INFO = "info"

_PROPERTY_REF = re.compile(r"\$\{([^}]+)\}")
_LEVEL_NAMES = ("release", "source", "target", "testRelease", "testSource", "testTarget")
#: ``release`` wins over these in one configuration (the compiler plugin passes only ``--release``).
_RELEASE_OF = {
    "source": "release",
    "target": "release",
    "testSource": "testRelease",
    "testTarget": "testRelease",
}
_LEVEL_PROPERTIES = tuple(f"maven.compiler.{name}" for name in _LEVEL_NAMES)


def _level_value(text: str) -> int | None:
    match = re.fullmatch(r"\s*(?:1\.)?(\d+)\s*", text)
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class Constraint:
    """One thing the build asks of its JDK, and where it says so.

    Either a language ``level`` the JDK's javac must accept, or ``allowed`` JDK versions. It
    applies to every JDK, or (``when``, a JDK-activated profile) only to the JDKs it names.
    ``kind`` says which JDK it is about (:data:`RUNS_MAVEN`, :data:`OFFERED`, :data:`INFO`); a
    level named with a ``jdkToolchain`` (``toolchain``) is javac's of the JDK that toolchain
    selects (Maven's own when the range admits it, else the oldest offered JDK in it:
    :func:`~pytest_tebench.run.maven.jdk.toolchain_jdk`), and Maven's JDK's when none is offered.
    """

    reason: str
    level: int | None = None
    allowed: tuple[VersionRange, ...] = ()
    when: tuple[VersionRange, ...] = ()
    kind: str = RUNS_MAVEN
    toolchain: tuple[VersionRange, ...] = ()

    def applies_to(self, version: int) -> bool:
        return not self.when or any(version in r for r in self.when)


@dataclass(frozen=True)
class JdkRequirement:
    """What a build asks of its JDK: the level it compiles for and every constraint."""

    #: The language level to match exactly when a JDK of it exists: the highest level named
    #: (JDK-activated profiles included, so multi-release code compiles).
    level: int = DEFAULT_LEVEL
    constraints: tuple[Constraint, ...] = field(default=())

    @classmethod
    def at_level(cls, level: int) -> JdkRequirement:
        return cls(level, (Constraint(f"language level {level}", level=level),))

    def adding(self, constraints: Iterable[Constraint]) -> JdkRequirement:
        """This requirement with more constraints (the level stays: what the sources target)."""
        extra = tuple(c for c in constraints if c not in self.constraints)
        return JdkRequirement(self.level, self.constraints + extra)


# -- POM reading ------------------------------------------------------------------------
def _resolve(text: str, properties: Mapping[str, str], depth: int = 0) -> str:
    if depth > 10:
        return text
    resolved = _PROPERTY_REF.sub(lambda m: properties.get(m.group(1), m.group(0)), text)
    return resolved if resolved == text else _resolve(resolved, properties, depth + 1)


def _properties(scope: ET.Element) -> dict[str, str]:
    props = _child(scope, "properties")
    return {} if props is None else {_local(p.tag): (p.text or "").strip() for p in props}


def _parse(pom: Path) -> ET.Element:
    try:
        return ET.parse(pom).getroot()
    except (OSError, ET.ParseError) as exc:
        raise HarnessError(f"cannot read {pom}: {exc}") from exc


def _plugins(scope: ET.Element, artifact: str) -> Iterator[ET.Element]:
    """Every configuration of plugin ``artifact`` in ``scope``'s build (plugin and executions,
    plugin management included)."""
    build = _child(scope, "build")
    for container in (build, _child(build, "pluginManagement")):
        for plugin in _children(_child(container, "plugins"), "plugin"):
            if _text(plugin, "artifactId") != artifact:
                continue
            config = _child(plugin, "configuration")
            if config is not None:
                yield config
            for execution in _children(_child(plugin, "executions"), "execution"):
                config = _child(execution, "configuration")
                if config is not None:
                    yield config


def _compiler_configurations(scope: ET.Element) -> Iterator[dict[str, ET.Element]]:
    """The compiler plugin's configurations in ``scope`` as its executions see them: the
    plugin's own (default executions), and each execution's merged over it (child elements by
    name, the execution's winning)."""
    build = _child(scope, "build")
    for container in (build, _child(build, "pluginManagement")):
        for plugin in _children(_child(container, "plugins"), "plugin"):
            if _text(plugin, "artifactId") != "maven-compiler-plugin":
                continue
            config = _child(plugin, "configuration")
            base = {} if config is None else {_local(node.tag): node for node in config}
            yield base
            for execution in _children(_child(plugin, "executions"), "execution"):
                config = _child(execution, "configuration")
                if config is not None:
                    yield {**base, **{_local(node.tag): node for node in config}}


def _descendants(element: ET.Element, name: str) -> Iterator[ET.Element]:
    return (node for node in element.iter() if _local(node.tag) == name)


@dataclass
class _Reader:
    """Collects constraints from a project's POMs, with the properties of ``.mvn/maven.config``."""

    root: Path
    context: BuildContext
    #: The local Maven repository parents outside the checkout are read from (None: not read).
    maven_repo: Path | None = None
    constraints: list[Constraint] = field(default_factory=list)
    #: Levels named in profiles that nothing activates: counted only when nothing else names one.
    fallback_levels: list[tuple[int, str]] = field(default_factory=list)

    @property
    def overrides(self) -> Mapping[str, str]:
        """``-D`` of the command line: they override the POMs' properties."""
        return self.context.user_properties

    def where(self, pom: Path) -> str:
        return str(pom.relative_to(self.root)) if pom.is_relative_to(self.root) else str(pom)

    def read_module(self, module: ModulePom, inherited: Mapping[str, str]) -> dict[str, str]:
        """Read one POM of the reactor (built on ``module.jdks``); its properties, for the modules
        it lists."""
        pom = module.pom
        element = _parse(pom)
        parents = self.external_parents(element, pom)
        from_parents: dict[str, str] = {}
        for _, parent in reversed(parents):  # the farthest first: nearer ones override
            from_parents.update(_properties(parent))
        # a POM whose parent is outside the checkout inherits nothing from the POM listing it
        inherited = inherited if not parents else {}
        properties = {**from_parents, **inherited, **_properties(element), **self.overrides}
        where = self.where(pom)
        for scope, label in [(element, where), *((parent, f"parent {coords}") for coords, parent in parents)]:
            self.scope(scope, properties, label, ranges_of(module.jdks))
            # a parent's profiles are activated where the child builds, as Maven does
            for profile, on in profile_jdks(scope, pom.parent, self.context, module.jdks):
                self.profile(profile, on, properties, label)
        return properties

    def external_parents(self, element: ET.Element, pom: Path) -> list[tuple[str, ET.Element]]:
        """``(coordinates, POM)`` of ``element``'s parents outside the checkout, nearest first, as
        far as the local Maven repository has them."""
        found: list[tuple[str, ET.Element]] = []
        here: Path | None = pom
        while self.maven_repo is not None and len(found) < MAX_PARENT_DEPTH:
            parent = _child(element, "parent")
            if parent is None:
                break
            group, artifact, version = (_text(parent, name) for name in ("groupId", "artifactId", "version"))
            if not (group and artifact and version) or "${" in group + artifact + version:
                break
            if here is not None and self.in_checkout(here, parent, artifact):
                break
            path = self.maven_repo.joinpath(*group.split("."), artifact, version, f"{artifact}-{version}.pom")
            if not path.is_file():
                break
            try:
                element = ET.parse(path).getroot()
            except (OSError, ET.ParseError):
                break
            found.append((f"{group}:{artifact}:{version}", element))
            here = None  # a parent from the repository has no checkout around it
        return found

    def in_checkout(self, pom: Path, parent: ET.Element, artifact: str) -> bool:
        """Whether ``pom``'s parent is a POM of the checkout (read as part of the reactor)."""
        relative = _child(parent, "relativePath")
        text = "../pom.xml" if relative is None else (relative.text or "").strip()
        if not text:  # <relativePath/>: never looked up in the checkout
            return False
        path = pom.parent / text
        path = path / "pom.xml" if path.is_dir() else path
        if not path.is_file() or not path.resolve().is_relative_to(self.root.resolve()):
            return False
        try:
            return _text(ET.parse(path).getroot(), "artifactId") == artifact
        except (OSError, ET.ParseError):
            return False

    def profile(
        self, profile: ET.Element, on: frozenset[int], properties: Mapping[str, str], where: str
    ) -> None:
        """A profile active on the JDKs ``on`` (:func:`~pytest_tebench.run.maven.profiles.profile_jdks`):
        its constraints apply to those JDKs; a profile active on none only offers its level."""
        ident = _text(profile, "id")
        merged = {**properties, **_properties(profile), **self.overrides}
        label = f"{where} profile {ident or '?'}"
        if not on:
            levels = self.levels(profile, merged)
            self.fallback_levels += [(level, f"{label}: {why}") for level, why in levels]
            return
        when = ranges_of(on)
        if when:
            jdk = _text(_child(profile, "activation"), "jdk") or _jdks_text(when)
            label = f"{label} (on JDK {jdk})"
        self.scope(profile, merged, label, when)

    def scope(
        self, scope: ET.Element, properties: Mapping[str, str], where: str, when: tuple[VersionRange, ...]
    ) -> None:
        for level, why, toolchain in self.compiled_levels(scope, properties):
            self.constraints.append(
                Constraint(f"{where}: {why}", level=level, when=when, toolchain=toolchain)
            )
        ranges = [
            (rule, "enforcer requireJavaVersion", RUNS_MAVEN)
            for config in _plugins(scope, "maven-enforcer-plugin")
            for rule in _descendants(config, "requireJavaVersion")
        ]
        ranges += [
            (jdk, "toolchains jdk version", OFFERED)
            for config in _plugins(scope, "maven-toolchains-plugin")
            for jdk in _descendants(config, "jdk")
        ]
        ranges += [
            (toolchain, f"{plugin} jdkToolchain version", INFO)
            for plugin in ("maven-compiler-plugin", "maven-surefire-plugin")
            for config in _plugins(scope, plugin)
            for toolchain in _children(config, "jdkToolchain")
        ]
        for node, what, kind in ranges:
            self.add_range(_text(node, "version"), properties, f"{where}: {what}", when, kind)

    def add_range(
        self,
        text: str,
        properties: Mapping[str, str],
        why: str,
        when: tuple[VersionRange, ...],
        kind: str = RUNS_MAVEN,
    ) -> None:
        resolved = _resolve(text, properties)
        # a toolchain requirement's bare version is that version (Maven's toolchain matcher)
        bare = "min" if kind == RUNS_MAVEN else "exact"
        allowed = parse_range(resolved, bare=bare) if resolved and "${" not in resolved else None
        if allowed is not None:
            self.constraints.append(Constraint(f"{why} {resolved}", allowed=allowed, when=when, kind=kind))

    @staticmethod
    def compiled_levels(
        scope: ET.Element, properties: Mapping[str, str]
    ) -> list[tuple[int, str, tuple[VersionRange, ...]]]:
        """Levels ``scope`` names, each with the ``jdkToolchain`` range of the compiler
        configuration naming it (``()``: compiled by Maven's JDK)."""
        named = _properties(scope)
        none: tuple[VersionRange, ...] = ()
        texts = [
            (properties.get(name, named[name]), name, none) for name in _LEVEL_PROPERTIES if name in named
        ]
        for config in _compiler_configurations(scope):
            toolchain = _text(config.get("jdkToolchain"), "version")
            resolved = _resolve(toolchain, properties) if toolchain else ""
            ranges = parse_range(resolved, bare="exact") if resolved and "${" not in resolved else None
            for name in _LEVEL_NAMES:
                if name in config and _RELEASE_OF.get(name, "") not in config:
                    named_with = f"compiler {name}" + (f" (jdkToolchain {resolved})" if ranges else "")
                    texts.append((config[name].text or "", named_with, ranges or ()))
        found: list[tuple[int, str, tuple[VersionRange, ...]]] = []
        for text, name, ranges in texts:
            level = _level_value(_resolve(text, properties))
            if level is not None:
                why = f"{name} {level}" if not ranges else name.replace(" (", f" {level} (", 1)
                if (level, why, ranges) not in found:
                    found.append((level, why, ranges))
        return found

    @staticmethod
    def levels(scope: ET.Element, properties: Mapping[str, str]) -> list[tuple[int, str]]:
        return [(level, why) for level, why, _ in _Reader.compiled_levels(scope, properties)]


def _jdks_text(ranges: Iterable[VersionRange]) -> str:
    """JDK ranges as Maven writes them (``[9,)``, ``(,8]``, ``11``)."""

    def one(r: VersionRange) -> str:
        if r.low is not None and r.low == r.high:
            return str(r.low)
        low, high = "" if r.low is None else str(r.low), "" if r.high is None else str(r.high)
        opening = "[" if r.low_inclusive and low else "("
        return f"{opening}{low},{high}{']' if r.high_inclusive and high else ')'}"

    return ",".join(one(r) for r in ranges)


def jvm_config_constraints(root: Path) -> list[Constraint]:
    """What ``.mvn/jvm.config`` asks of the JVM that runs Maven."""
    words = config_words(root) or ()
    found: list[Constraint] = []
    for option, since in JVM_OPTION_SINCE.items():
        if any(word == option or word.startswith(option + "=") for word in words):
            why = f".mvn/jvm.config: {option} needs JDK {since}+"
            found.append(Constraint(why, allowed=(VersionRange(since),)))
    return found


def read_requirement(project: Path, maven_repo: Path | None = None) -> JdkRequirement:
    """What the Maven build in directory ``project`` asks of its JDK (see the module doc);
    parents outside the checkout are read from ``maven_repo`` when it has them."""
    context = BuildContext.read(project)
    reader = _Reader(project, context, maven_repo)
    # the reactor's own walk: a module only a JDK's profiles list counts on those JDKs
    properties: dict[str, dict[str, str]] = {}
    for module in walk_modules(project, context, JDKS):
        inherited = properties.get(module.lister, {}) if module.lister is not None else {}
        properties[module.module] = reader.read_module(module, inherited)
    constraints = jvm_config_constraints(project) + reader.constraints
    levels = [c.level for c in reader.constraints if c.level is not None]
    if not levels and reader.fallback_levels:
        level, why = max(reader.fallback_levels)
        constraints.append(Constraint(why, level=level))
        levels = [level]
    if not levels:
        why = f"no language level named: Maven's default {DEFAULT_LEVEL}"
        constraints.append(Constraint(why, level=DEFAULT_LEVEL))
    return JdkRequirement(max(levels, default=DEFAULT_LEVEL), tuple(constraints))


# -- a failed build's log -------------------------------------------------------------------
#: Class-file major version minus this is the Java feature version (52 -> 8, 55 -> 11, 61 -> 17).
CLASS_FILE_OFFSET = 44
#: Lines of a failed build (javac, the JVM, Surefire's summary) naming a class-file version the
#: JDK in use cannot read: the JDK must be at least that Java version.
_CLASS_VERSION_LINES = (
    # javac: "bad class file: ...jar(/.../X.class) class file has wrong version 61.0, should be 55.0"
    re.compile(r"class file has wrong version (?P<major>\d+)\.\d+, should be \d+\.\d+"),
    # UnsupportedClassVersionError (JDK 9+): "... (class file version 61.0), this version of the
    # Java Runtime only recognizes class file versions up to 55.0"
    re.compile(r"class file version (?P<major>\d+)\.\d+\)?, this version of the Java Runtime"),
    # UnsupportedClassVersionError (JDK 8): "... : Unsupported major.minor version 55.0"
    re.compile(r"Unsupported major\.minor version (?P<major>\d+)\.\d+"),
)
#: javac refusing a language level: the JDK must accept it (a newer JDK for "release version
#: 17 not supported", an older one for "Source option 5 is no longer supported").
_LEVEL_LINES = (
    re.compile(r"release version (?P<level>\d+) not supported"),
    re.compile(r"invalid (?:target|source) release: (?:1\.)?(?P<level>\d+)"),
    re.compile(r"(?:Source|Target) option (?:1\.)?(?P<level>\d+) is no longer supported"),
)


#: ProGuard reading the JDK's own files as library jars (google/gson's shrinking step): a JDK
#: newer than ProGuard knows ("Unsupported version number [55.0] (maximum 54.0, Java 10)": the
#: JDK's class files) must give way to an older one, and ``${java.home}/jmods`` exists from JDK 9
#: (on JDK 8: "Can't read [/opt/java/8/jre/jmods/java.base.jmod] (No such file or directory)").
_PROGUARD_MAXIMUM = re.compile(
    r"Unsupported (?:class )?version number \[(?P<major>\d+)\.\d+\](?: for class format)? "
    r"\(maximum (?P<maximum>\d+)\.\d+"
)
_MISSING_JMOD = re.compile(r"Can't read \[[^\]]*/jmods/[\w.]+\.jmod\] \(No such file")
#: The first JDK with ``jmods``.
JMODS_SINCE = 9


def _proguard_constraints(line: str) -> Iterator[tuple[str, Constraint]]:
    for match in _PROGUARD_MAXIMUM.finditer(line):
        newest = int(match.group("maximum")) - CLASS_FILE_OFFSET
        why = f"build log: a plugin reads class files up to Java {newest} ({match.group(0)})"
        yield f"at most {newest}", Constraint(why, allowed=(VersionRange(high=newest, high_inclusive=True),))
    if _MISSING_JMOD.search(line):
        why = f"build log: a plugin reads the JDK's jmods, which exist from JDK {JMODS_SINCE}"
        yield "jmods", Constraint(why, allowed=(VersionRange(JMODS_SINCE),))


def log_constraints(texts: Iterable[str]) -> tuple[Constraint, ...]:
    """What a failed build's output (``texts``: Maven logs, test failure messages) says its JDK
    must be, as constraints for :func:`~pytest_tebench.run.maven.jdk.choose_for`; one per
    distinct demand, in the order first seen. Nothing for a failure that is not the JDK's."""
    found: dict[str, Constraint] = {}
    for text in texts:
        for line in text.splitlines():
            for pattern in _CLASS_VERSION_LINES:
                for match in pattern.finditer(line):
                    java = int(match.group("major")) - CLASS_FILE_OFFSET
                    if java >= 1:
                        why = f"build log: class files of version {match.group('major')} (Java {java})"
                        found.setdefault(f"class {java}", Constraint(why, allowed=(VersionRange(java),)))
            for pattern in _LEVEL_LINES:
                for match in pattern.finditer(line):
                    level = int(match.group("level"))
                    why = f"build log: {match.group(0).strip()}"
                    found.setdefault(f"level {level}", Constraint(why, level=level))
            for key, constraint in _proguard_constraints(line):
                found.setdefault(key, constraint)
    return tuple(found.values())


def detect_java_level(pom: Path) -> int:
    """The Java language level the build of ``pom``'s directory compiles for (the highest named;
    see :func:`read_requirement`), :data:`DEFAULT_LEVEL` when nothing names one."""
    if not pom.is_file():
        _parse(pom)  # the same error as an unreadable POM
    return read_requirement(pom.parent).level
