"""Artifacts published nowhere the harness reaches, known from the POMs before any build.

A commit that depends on another project's ``-SNAPSHOT`` (apache/commons-math 4 on
commons-numbers, commons-rng and commons-geometry ``1.0-SNAPSHOT`` between 2019 and 2022) needs
artifacts that were only ever deployed to a snapshot repository, and no longer are: Maven
Central never had them, and the harness reaches nothing else. The build cannot be made here,
which is the instance's environment (``unsupported_environment``), never a harness ``error``
nor a model's score. :func:`foreign_snapshots` says so from the build files alone, without a
download: a ``-SNAPSHOT`` parent, dependency (its version possibly managed by a parent),
imported BOM, build plugin, plugin dependency or extension whose ``groupId:artifactId`` no POM
of the checkout builds. Versions come from the POMs' properties and ``dependencyManagement``
up their parents in the checkout; what cannot be resolved (a parent outside the checkout
managing the version, a property set elsewhere) is left to Maven, whose words for the same
failure :func:`~pytest_tebench.run.maven.log.unpublished_coordinates` reads. Profiles are not
read: one may not be active, and a false "unbuildable" would drop a buildable instance.

:func:`unbuildable_message` is the one wording of the verdict, whoever reaches it.
"""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_tebench.run.maven.buildplan import Artifact
from pytest_tebench.run.maven.buildplan import build_files
from pytest_tebench.run.maven.profiles import BuildContext
from pytest_tebench.run.maven.profiles import element
from pytest_tebench.run.maven.profiles import elements
from pytest_tebench.run.maven.profiles import local_name
from pytest_tebench.run.maven.profiles import read_pom
from pytest_tebench.run.maven.profiles import text_of
from pytest_tebench.run.maven.profiles import walk_modules

SNAPSHOT = "-SNAPSHOT"
_PROPERTY_REF = re.compile(r"\$\{([^}]+)\}")
#: Parents followed up inside the checkout.
MAX_DEPTH = 10


def unbuildable_message(coordinates: Sequence[str]) -> str:
    """Why an instance needing ``coordinates`` cannot be built here."""
    return (
        "unbuildable here: the build needs artifacts published in no repository reachable from here: "
        + ", ".join(coordinates)
    )


@dataclass(frozen=True)
class _Pom:
    """One POM of the checkout, with what it inherits from its parents there."""

    path: Path
    root: ET.Element
    group: str
    artifact: str
    #: The checkout POM of its ``<parent>`` (None: none, or outside the checkout).
    parent: _Pom | None


def _resolve(text: str, properties: Mapping[str, str]) -> str:
    for _ in range(MAX_DEPTH):
        resolved = _PROPERTY_REF.sub(lambda m: properties.get(m.group(1), m.group(0)), text)
        if resolved == text:
            break
        text = resolved
    return text


def _index(project: Path) -> dict[Path, _Pom]:
    """Every readable ``pom.xml`` of the checkout, by path, linked to its parent in the checkout
    (by coordinates: a ``relativePath`` elsewhere in the tree still names a POM built here)."""
    roots = {
        p: r for p in build_files(project) if p.name == "pom.xml" for r in [read_pom(p)] if r is not None
    }
    by_coords: dict[tuple[str, str], Path] = {}
    for path, root in roots.items():
        parent = element(root, "parent")
        group = text_of(root, "groupId") or text_of(parent, "groupId")
        by_coords.setdefault((group, text_of(root, "artifactId")), path)
    built: dict[Path, _Pom] = {}

    def make(path: Path, depth: int = 0) -> _Pom:
        if path in built:
            return built[path]
        root = roots[path]
        parent = element(root, "parent")
        found = by_coords.get((text_of(parent, "groupId"), text_of(parent, "artifactId")))
        above = make(found, depth + 1) if found is not None and found != path and depth < MAX_DEPTH else None
        pom = _Pom(
            path,
            root,
            text_of(root, "groupId") or text_of(parent, "groupId"),
            text_of(root, "artifactId"),
            above,
        )
        built[path] = pom
        return pom

    for path in roots:
        make(path)
    return built


def _chain(pom: _Pom) -> list[_Pom]:
    """``pom`` and its parents in the checkout, farthest first."""
    found: list[_Pom] = []
    here: _Pom | None = pom
    while here is not None and len(found) <= MAX_DEPTH:
        found.insert(0, here)
        here = here.parent
    return found


def _properties(chain: list[_Pom]) -> dict[str, str]:
    properties: dict[str, str] = {}
    for pom in chain:
        props = element(pom.root, "properties")
        properties.update(
            {local_name(p.tag): (p.text or "").strip() for p in ([] if props is None else props)}
        )
    pom = chain[-1]
    parent = element(pom.root, "parent")
    version = text_of(pom.root, "version") or text_of(parent, "version")
    for prefix in ("project", "pom"):
        properties.update(
            {
                f"{prefix}.groupId": pom.group,
                f"{prefix}.artifactId": pom.artifact,
                f"{prefix}.version": version,
                f"{prefix}.parent.groupId": text_of(parent, "groupId"),
                f"{prefix}.parent.version": text_of(parent, "version"),
            }
        )
    return properties


def _managed(chain: list[_Pom], section: str, container: str, item: str) -> dict[tuple[str, str], str]:
    """Versions ``section`` (``dependencyManagement``, ``build/pluginManagement``) sets along the
    chain, the nearest POM winning: ``(groupId, artifactId) -> version``."""
    versions: dict[tuple[str, str], str] = {}
    for pom in chain:
        scope: ET.Element | None = pom.root
        for name in section.split("/"):
            scope = element(scope, name)
        for node in elements(element(scope, container), item):
            versions[(_group(node, item), text_of(node, "artifactId"))] = text_of(node, "version")
    return versions


def _group(node: ET.Element, item: str) -> str:
    return text_of(node, "groupId") or ("org.apache.maven.plugins" if item == "plugin" else "")


def _needed(pom: _Pom, chain: list[_Pom]) -> Iterator[tuple[ET.Element, str, str]]:
    """What a build of ``pom`` resolves: ``(node, kind, version text)``."""
    parent = element(pom.root, "parent")
    if parent is not None:
        yield parent, "parent", text_of(parent, "version")
    managed = _managed(chain, "dependencyManagement", "dependencies", "dependency")
    for node in elements(element(element(pom.root, "dependencyManagement"), "dependencies"), "dependency"):
        if text_of(node, "scope") == "import":
            yield node, "bom", text_of(node, "version")
    for node in elements(element(pom.root, "dependencies"), "dependency"):
        if text_of(node, "scope") != "system":
            key = (text_of(node, "groupId"), text_of(node, "artifactId"))
            yield node, "dependency", text_of(node, "version") or managed.get(key, "")
    plugins = _managed(chain, "build/pluginManagement", "plugins", "plugin")
    # a plugin declared in <build><plugins> anywhere up the chain runs in this module too
    for ancestor in chain:
        build = element(ancestor.root, "build")
        for node in elements(element(build, "plugins"), "plugin"):
            key = (_group(node, "plugin"), text_of(node, "artifactId"))
            yield node, "plugin", text_of(node, "version") or plugins.get(key, "")
            for extra in elements(element(node, "dependencies"), "dependency"):
                yield extra, "plugin-dependency", text_of(extra, "version")
        for node in elements(element(build, "extensions"), "extension"):
            yield node, "extension", text_of(node, "version")


_TYPES = {"parent": "pom", "bom": "pom", "plugin": "maven-plugin"}


def _scope(maven_args: Sequence[str]) -> list[str]:
    """The modules ``-pl a,b`` names (``[]``: the whole reactor)."""
    for flag, value in itertools.pairwise(maven_args):
        if flag in ("-pl", "--projects"):
            return [m.strip() for m in value.split(",") if m.strip()]
    return []


def foreign_snapshots(project: Path, maven_args: Sequence[str] = ()) -> tuple[str, ...]:
    """Coordinates (as Maven writes them) of the ``-SNAPSHOT`` artifacts the reactor at
    ``project`` needs that none of its POMs builds, first seen first (see the module doc);
    ``maven_args`` of the run (``-pl m -am``) limit it to the modules built."""
    index = _index(project)
    local = {(pom.group, pom.artifact) for pom in index.values()}
    modules = {m.pom.resolve(): m for m in walk_modules(project, BuildContext.read(project))}
    reactor = [pom for path, pom in index.items() if path.resolve() in modules]
    wanted = _scope(maven_args)
    if wanted:
        reactor = _upstream(
            [pom for pom in reactor if _module_dir(project, pom) in {w.strip("/") or "." for w in wanted}],
            index,
        )
    found: dict[str, None] = {}
    for pom in reactor:
        chain = _chain(pom)
        properties = _properties(chain)
        for node, kind, version in _needed(pom, chain):
            group = _resolve(_group(node, "plugin" if kind == "plugin" else ""), properties)
            artifact = _resolve(text_of(node, "artifactId"), properties)
            resolved = _resolve(version, properties)
            if (
                not resolved.endswith(SNAPSHOT)
                or "${" in resolved + group + artifact
                or (group, artifact) in local
            ):
                continue
            kind_type = _TYPES.get(kind) or text_of(node, "type") or "jar"
            found.setdefault(
                Artifact(group, artifact, resolved, kind_type, text_of(node, "classifier")).coordinates
            )
    return tuple(found)


def _module_dir(project: Path, pom: _Pom) -> str:
    relative = pom.path.parent.resolve().relative_to(project.resolve()).as_posix()
    return relative if relative != "." else "."


def _upstream(selected: list[_Pom], index: Mapping[Path, _Pom]) -> list[_Pom]:
    """``selected`` and what ``-am`` builds with them: their parents and the checkout modules
    they depend on, transitively."""
    by_coords = {(pom.group, pom.artifact): pom for pom in index.values()}
    chosen: dict[Path, _Pom] = {}
    pending = list(selected)
    while pending:
        pom = pending.pop()
        if pom.path in chosen:
            continue
        chosen[pom.path] = pom
        if pom.parent is not None:
            pending.append(pom.parent)
        for node in elements(element(pom.root, "dependencies"), "dependency"):
            key = (_resolve(text_of(node, "groupId"), _properties(_chain(pom))), text_of(node, "artifactId"))
            if key in by_coords:
                pending.append(by_coords[key])
    return list(chosen.values())
