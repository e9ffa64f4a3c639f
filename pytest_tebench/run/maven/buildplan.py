"""What the build of one commit resolves, read from its effective POM, and which build files
decide it.

A warm-up that only runs the build online resolves what that run happened to reach: when
compilation failed, Surefire and its provider were never resolved, and an offline build of the
next commit stopped at ``maven-surefire-plugin:3.5.3`` (jfree/jfreechart). So a warm-up also
resolves, explicitly, the :func:`plan` of the commit's effective POM (``help:effective-pom``,
every module of a reactor): every build plugin with the dependencies it declares, every
dependency, and the Surefire provider its test framework makes Surefire load at run time.
:func:`missing_from` then checks that all of them are in the repository.

:func:`build_digest` names a commit's build by the files that decide it (every ``pom.xml``,
``.mvn/`` configuration), the JDK, the Maven and the reactor scope: a commit whose digest was never checked is
checked (and warmed if needed) before its first offline build.
"""

from __future__ import annotations

import hashlib
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

#: ``.mvn/`` files that change what a build resolves or how Maven starts.
MVN_CONFIG_FILES = (".mvn/jvm.config", ".mvn/maven.config", ".mvn/extensions.xml")
#: Where plan files go inside a workspace (under ``target/``, which evaluation removes).
PLAN_DIR = "target/tebench-plan"
EFFECTIVE_POM = f"{PLAN_DIR}/effective-pom.xml"
RESOLVER_POM = f"{PLAN_DIR}/pom.xml"
#: Surefire loads one provider per test framework, resolved only when tests start.
SUREFIRE_GROUP = "org.apache.maven.surefire"
_PROVIDERS = (
    (("org.junit.jupiter", "org.junit.platform", "org.junit.vintage"), "surefire-junit-platform"),
    (("junit",), "surefire-junit4"),
    (("org.testng",), "surefire-testng"),
)
_SKIPPED_DIRS = {"target", "node_modules", ".git"}
#: Kinds resolved each in a tree of its own (``dependency:get``), not with the project's versions.
ISOLATED_KINDS = frozenset({"provider", "plugin-dependency"})
#: The lifecycle phases ``mvn test`` runs: a plugin bound only later (jar, install, deploy,
#: site) is never loaded by an evaluation and is not resolved for it.
TEST_PHASES = frozenset(
    [
        "validate",
        "initialize",
        "generate-sources",
        "process-sources",
        "generate-resources",
        "process-resources",
        "compile",
        "process-classes",
        "generate-test-sources",
        "process-test-sources",
        "generate-test-resources",
        "process-test-resources",
        "test-compile",
        "process-test-classes",
        "test",
    ]
)


@dataclass(frozen=True, order=True)
class Artifact:
    """Maven coordinates; ``kind`` says how it is used (``plugin``, ``dependency``, ``provider``)."""

    group: str
    artifact: str
    version: str
    type: str = "jar"
    classifier: str = ""
    kind: str = "dependency"

    @property
    def coordinates(self) -> str:
        """``group:artifact:type[:classifier]:version``, as Maven's messages write them."""
        middle = f"{self.type}:{self.classifier}" if self.classifier else self.type
        return f"{self.group}:{self.artifact}:{middle}:{self.version}"

    @property
    def request(self) -> str:
        """``group:artifact:version[:type[:classifier]]``, as ``dependency:get -Dartifact`` takes it."""
        tail = (
            f":{self.type}:{self.classifier}"
            if self.classifier
            else (f":{self.type}" if self.type != "jar" else "")
        )
        return f"{self.group}:{self.artifact}:{self.version}{tail}"

    def path(self, repo: Path) -> Path:
        """The file in a local repository (``pom`` for POMs, ``jar`` for jars and plugins)."""
        extension = {"pom": "pom", "maven-plugin": "jar", "test-jar": "jar", "bundle": "jar"}.get(
            self.type, self.type
        )
        classifier = f"-{self.classifier}" if self.classifier else ""
        if self.type == "test-jar" and not classifier:
            classifier = "-tests"
        folder = repo.joinpath(*self.group.split("."), self.artifact, self.version)
        return folder / f"{self.artifact}-{self.version}{classifier}.{extension}"


def build_files(workspace: Path) -> list[Path]:
    """Every ``pom.xml`` of the tree (build outputs left out) and the ``.mvn/`` configuration."""
    found = [workspace / name for name in MVN_CONFIG_FILES if (workspace / name).is_file()]
    for path in sorted(workspace.rglob("pom.xml")):
        parts = path.relative_to(workspace).parts
        if not _SKIPPED_DIRS.intersection(parts) and not any(p.startswith(".") for p in parts[:-1]):
            found.append(path)
    return found


#: What :mod:`~pytest_tebench.run.maven.plugin_pins` writes after a version it inserted into a
#: POM (``<version>2.4.0</version>`` then this comment): the digest reads the POM without it.
PIN_MARK = "<!-- pytest-tebench: pinned"
_PINNED = re.compile(rb"<version>[^<]*</version>" + re.escape(PIN_MARK.encode()) + rb"[^>]*-->")


def build_digest(workspace: Path, *, java: int, maven: str, args: Sequence[str] = ()) -> str:
    """Sixteen hex digits naming what decides the commit's resolution; ``args`` are the extra
    Maven arguments of the run (a reactor scope ``-pl m -am`` builds, so resolves, fewer modules).
    The versions the harness pinned are not read: a pinned tree has its unpinned tree's digest
    (which plugins lack a version is the tree's; the version each gets, the run's date)."""
    digest = hashlib.sha256(f"java={java};maven={maven or 'default'}\n".encode())
    if args:
        digest.update(("args=" + "\0".join(args) + "\n").encode())
    for path in build_files(workspace):
        digest.update(str(path.relative_to(workspace)).encode() + b"\0")
        digest.update(_PINNED.sub(b"", path.read_bytes()) + b"\0")
    return digest.hexdigest()[:16]


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child(element: ET.Element | None, name: str) -> ET.Element | None:
    if element is None:
        return None
    return next((c for c in element if _local(c.tag) == name), None)


def _children(element: ET.Element | None, name: str) -> list[ET.Element]:
    return [] if element is None else [c for c in element if _local(c.tag) == name]


def _text(element: ET.Element | None, name: str, default: str = "") -> str:
    node = _child(element, name)
    return (node.text or "").strip() if node is not None and node.text else default


def _projects(text: str) -> list[ET.Element]:
    root = ET.fromstring(text)
    return [root] if _local(root.tag) == "project" else _children(root, "project")


def _dependency(node: ET.Element, kind: str = "dependency") -> Artifact | None:
    version = _text(node, "version")
    if not version or "${" in version or _text(node, "scope") == "system":
        return None
    return Artifact(
        _text(node, "groupId"),
        _text(node, "artifactId"),
        version,
        _text(node, "type", "jar"),
        _text(node, "classifier"),
        kind,
    )


def plan(effective_pom: str) -> list[Artifact]:
    """What ``mvn test`` of the effective POM (one ``<project>`` or a reactor's ``<projects>``)
    resolves: the build plugins it runs (executions up to ``test``) with the dependencies they
    declare, build extensions, dependencies (reactor modules left out: they are built, not
    downloaded) and Surefire's provider. Raises ``ET.ParseError``."""
    projects = _projects(effective_pom)
    reactor = {
        (_text(p, "groupId") or _text(_child(p, "parent"), "groupId"), _text(p, "artifactId"))
        for p in projects
    }
    found: set[Artifact] = set()
    for project in projects:
        dependencies = [
            a
            for a in (_dependency(d) for d in _children(_child(project, "dependencies"), "dependency"))
            if a is not None and (a.group, a.artifact) not in reactor
        ]
        found.update(dependencies)
        build = _child(project, "build")
        for node in _children(_child(build, "extensions"), "extension"):
            extension = _dependency(node, "extension")
            if extension is not None:
                found.add(extension)
        for node in _children(_child(build, "plugins"), "plugin"):
            group = _text(node, "groupId", "org.apache.maven.plugins")
            artifact, version = _text(node, "artifactId"), _text(node, "version")
            if not version or "${" in version or not _runs_in_test(node):
                continue
            found.add(Artifact(group, artifact, version, "maven-plugin", kind="plugin"))
            for extra in _children(_child(node, "dependencies"), "dependency"):
                declared = _dependency(extra, "plugin-dependency")
                if declared is not None:
                    found.add(declared)
            if (group, artifact) == ("org.apache.maven.plugins", "maven-surefire-plugin"):
                found.update(_providers(version, dependencies))
    return sorted(found)


def build_plugin_versions(effective_pom: str) -> dict[tuple[str, str, str], str]:
    """Each project's build plugins in the effective POM, ``(project artifactId, group,
    artifact)`` -> version ("" none). Raises ``ET.ParseError``."""
    found: dict[tuple[str, str, str], str] = {}
    for project in _projects(effective_pom):
        for node in _children(_child(_child(project, "build"), "plugins"), "plugin"):
            group = _text(node, "groupId", "org.apache.maven.plugins")
            found[(_text(project, "artifactId"), group, _text(node, "artifactId"))] = _text(node, "version")
    return found


def _runs_in_test(plugin: ET.Element) -> bool:
    """Whether ``mvn test`` loads the plugin: an execution bound to a phase up to ``test`` (or to
    its goal's default phase, which the effective POM does not state), or build extensions."""
    if _text(plugin, "extensions") == "true":
        return True
    phases = [_text(e, "phase") for e in _children(_child(plugin, "executions"), "execution")]
    return any(not phase or phase in TEST_PHASES for phase in phases)


def _providers(surefire: str, dependencies: Iterable[Artifact]) -> Iterator[Artifact]:
    """Surefire's provider for the test framework; for JUnit 5 also the Platform launcher of the
    project's Platform version, which newer Surefires load next to the provider."""
    chosen = list(dependencies)
    groups = {a.group for a in chosen}
    for framework, provider in _PROVIDERS:
        if groups.intersection(framework):
            yield Artifact(SUREFIRE_GROUP, provider, surefire, kind="provider")
            break
    jupiter = next((a.version for a in chosen if a.group == "org.junit.jupiter"), "")
    platform = next((a.version for a in chosen if a.group == "org.junit.platform"), "")
    if not platform and jupiter.startswith("5."):
        platform = "1." + jupiter[2:]  # JUnit 5.x.y ships Platform 1.x.y
    if platform or jupiter:
        yield Artifact("org.junit.platform", "junit-platform-launcher", platform or jupiter, kind="provider")


SUREFIRE_PLUGIN = ("org.apache.maven.plugins", "maven-surefire-plugin")


def surefire_version(planned: Iterable[Artifact]) -> str:
    """The oldest ``maven-surefire-plugin`` version a plan's ``mvn test`` runs ("" for none): a
    reactor's modules may pin different ones, and the oldest decides how tests can be selected
    (:meth:`~pytest_tebench.run.maven.run_settings.RunSettings.for_surefire`)."""
    versions = [a.version for a in planned if a.kind == "plugin" and (a.group, a.artifact) == SUREFIRE_PLUGIN]
    return min(versions, key=version_key, default="")


def surefire_forks(effective_pom: str) -> bool:
    """Whether every Surefire of the effective POM runs the tests in forked JVMs: none sets
    ``forkCount`` to 0 (``0``, ``0C``) or ``forkMode`` to ``never`` (in the plugin's or an
    execution's configuration), and none leaves either to an unresolved expression. Only then may
    the build run in a warm Maven JVM (:mod:`~pytest_tebench.run.maven.warm`). Raises ``ET.ParseError``."""
    for project in _projects(effective_pom):
        for node in _children(_child(_child(project, "build"), "plugins"), "plugin"):
            coordinates = (_text(node, "groupId", "org.apache.maven.plugins"), _text(node, "artifactId"))
            if coordinates != SUREFIRE_PLUGIN:
                continue
            configurations = [_child(node, "configuration")] + [
                _child(execution, "configuration")
                for execution in _children(_child(node, "executions"), "execution")
            ]
            for configuration in configurations:
                count = _text(configuration, "forkCount").strip()
                mode = _text(configuration, "forkMode").strip()
                if "${" in count + mode or mode == "never" or re.fullmatch(r"0+(\.0*)?C?", count):
                    return False
    return True


def read_plan(workspace: Path) -> list[Artifact] | None:
    """The plan of the effective POM a step wrote into ``workspace`` (``None``: absent or unreadable)."""
    path = workspace / EFFECTIVE_POM
    try:
        return plan(path.read_text(encoding="utf-8"))
    except (OSError, ET.ParseError):
        return None


def read_forks(workspace: Path) -> bool:
    """Whether the effective POM a step wrote into ``workspace`` forks every test JVM
    (``surefire_forks``; False when it is absent or unreadable)."""
    path = workspace / EFFECTIVE_POM
    try:
        return surefire_forks(path.read_text(encoding="utf-8"))
    except (OSError, ET.ParseError):
        return False


def version_key(version: str) -> tuple[int, ...]:
    """Numeric parts of a plugin version, for ordering: ``3.0.0-M5`` -> (3, 0, 0, 5)."""
    return tuple(int(part) for part in re.findall(r"\d+", version))


def missing_from(repo: Path, artifacts: Iterable[Artifact]) -> list[Artifact]:
    """The artifacts whose file is not in the local repository ``repo``."""
    return [a for a in artifacts if not a.path(repo).is_file()]


def resolver_pom(artifacts: Iterable[Artifact]) -> str:
    """A POM whose ``dependency:resolve-plugins dependency:resolve`` resolves ``artifacts`` (with
    their transitive dependencies) in one Maven launch."""
    plugins: list[str] = []
    dependencies: list[str] = []
    for a in artifacts:
        coords = (
            f"<groupId>{escape(a.group)}</groupId><artifactId>{escape(a.artifact)}</artifactId>"
            f"<version>{escape(a.version)}</version>"
        )
        if a.kind == "plugin":
            plugins.append(f"<plugin>{coords}</plugin>")
            continue
        extra = f"<type>{escape(a.type)}</type>" if a.type != "jar" else ""
        extra += f"<classifier>{escape(a.classifier)}</classifier>" if a.classifier else ""
        dependencies.append(f"<dependency>{coords}{extra}</dependency>")
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
        "  <modelVersion>4.0.0</modelVersion>\n"
        "  <groupId>tebench.warmup</groupId><artifactId>plan</artifactId><version>1</version>\n"
        "  <packaging>pom</packaging>\n"
        f"  <dependencies>{''.join(dependencies)}</dependencies>\n"
        f"  <build><plugins>{''.join(plugins)}</plugins></build>\n"
        "</project>\n"
    )
