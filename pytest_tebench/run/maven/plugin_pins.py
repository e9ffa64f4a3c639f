"""Build plugins a POM leaves without a version, pinned to the release its commit's build ran.

A build plugin that neither the POM, a parent's ``pluginManagement`` nor the lifecycle gives a
version is resolved by Maven from the repository's metadata: the newest release *today*. gson
ac14b4c1 (2021-08) names ``proguard-maven-plugin`` so; in 2021 that resolved to 2.4.0, today
to 2.7.0, whose ProGuard core breaks the ``proguard-base`` 6.2.2 the POM pins
(``NoSuchMethodError``): the build fails for a reason the commit never had. So the build of a
commit with a known date (``RunSettings.plugins_released_by``) takes, for each such plugin, the
release Maven's metadata named ``<release>`` on that date: the last one released by then
(:mod:`~pytest_tebench.run.maven.release_dates`).

Which: Maven warns of each while it builds the model (``'build.plugins.plugin.version' for g:a
is missing``, under the project it builds), before its lifecycle gives the plugins it binds their
version. The effective POM cannot tell them apart by itself: Maven fills in a version resolved
from the metadata for the projects whose execution plan it computed (the root of a
``help:effective-pom`` run, an aggregator), and leaves it out for the others (gson's module).
So the warnings name the candidates (:func:`unversioned`), less the plugins of Maven's own
lifecycle (:data:`LIFECYCLE_PLUGINS`) where the effective POM shows the version the lifecycle
gave them: those follow the Maven that runs, as docs/building.md says.

When: the check of a build digest never seen (offline, or the warm-up online) reads the effective
POM's launch (:func:`unversioned`); the warm-up journal records those plugins with the digest
(``"unversioned"``: which plugins does not depend on the date), and every run of that digest
chooses each one's release by its own date (:func:`choose`, the dates cached) and writes it into
its workspace's POMs (:func:`apply`) before Maven starts. A pinned version is written right after
the plugin's ``<artifactId>`` on the same line (the POM's line numbers stay), followed by
:data:`~pytest_tebench.run.maven.buildplan.PIN_MARK`, which the digest leaves out: a pinned tree
has the digest of its unpinned tree.

Only POMs of the checkout are edited, and of those only the projects whose effective model runs
the plugin unversioned; a plugin inherited from a parent POM outside the checkout (one from the
repository) cannot be pinned here, and the record says so. A prediction never edits a POM (the
test tree is all it may change), so it can neither plant nor remove a pin.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.errors import HarnessError
from pytest_tebench.run.maven.buildplan import PIN_MARK
from pytest_tebench.run.maven.buildplan import build_files
from pytest_tebench.run.maven.buildplan import build_plugin_versions
from pytest_tebench.run.maven.release_dates import ReleaseDates
from pytest_tebench.run.maven.release_dates import parse_date

#: A POM's markup, one match per comment, CDATA section, declaration or tag (name, closing, empty).
_MARKUP = re.compile(
    r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<![^>]*>"
    r"|<(?P<close>/?)(?P<name>[A-Za-z_][\w.:-]*)(?:\s[^>]*?)?(?P<empty>/?)>",
    re.S,
)
#: Maven's warning of a plugin without a version, and the header naming the project it is about.
_WARNING = re.compile(r"'build\.plugins\.plugin\.version' for ([^\s:]+):([^\s:]+) is missing")
_MODEL = re.compile(r"building the effective model for ([^\s:]+):([^\s:]+):")
#: The plugins Maven's lifecycle mappings bind (``default-bindings.xml``, every packaging), whose
#: version comes from the Maven that runs when no POM names one.
LIFECYCLE_PLUGINS = frozenset(
    ("org.apache.maven.plugins", f"maven-{name}-plugin")
    for name in (
        "clean", "resources", "compiler", "surefire", "jar", "install", "deploy", "site",
        "war", "ear", "ejb", "rar", "plugin", "acr",
    )
)  # fmt: skip
#: The element paths whose ``plugin`` children a pin may take (under ``project`` or a profile).
_PLUGIN_LISTS = (("build", "plugins"), ("build", "pluginManagement", "plugins"))


@dataclass(frozen=True)
class PluginElement:
    """One ``<plugin>`` of a POM's build: its coordinates as written (``group`` defaulted to
    Maven's), its version ("" none), whether the harness pinned it, and where a version goes."""

    group: str
    artifact: str
    version: str
    pinned: bool
    #: Offset just after ``</artifactId>``.
    insert_at: int


def _local(name: str) -> str:
    return name.rsplit(":", 1)[-1]


def scan(text: str) -> tuple[str, list[PluginElement]]:
    """The project's own ``artifactId`` and the build plugins of a POM's text (``project``'s and
    each profile's, ``pluginManagement`` included)."""
    stack: list[str] = []
    own = ""
    elements: list[PluginElement] = []
    plugin: dict[str, Any] | None = None
    child_start = 0
    for match in _MARKUP.finditer(text):
        name = match.group("name")
        if name is None:
            continue
        name = _local(name)
        if match.group("empty"):
            continue
        if not match.group("close"):
            stack.append(name)
            depth = len(stack)
            if name == "plugin" and _under_plugin_list(stack[:-1]):
                plugin = {"depth": depth, "fields": {}, "ends": {}}
                continue
            field_of_plugin = plugin is not None and depth == plugin["depth"] + 1
            if field_of_plugin or (depth == 2 and name == "artifactId"):
                child_start = match.end()  # a plugin's field, or the project's own artifactId
            continue
        if not stack or stack[-1] != name:
            raise HarnessError(f"not well-formed XML near offset {match.start()}: </{name}>")
        depth = len(stack)
        stack.pop()
        if plugin is not None and depth == plugin["depth"] + 1:
            plugin["fields"][name] = text[child_start : match.start()].strip()
            plugin["ends"][name] = match.end()
        elif plugin is not None and depth == plugin["depth"]:
            fields, ends = plugin["fields"], plugin["ends"]
            if "artifactId" in ends:
                version_end = ends.get("version", -1)
                elements.append(
                    PluginElement(
                        group=fields.get("groupId") or "org.apache.maven.plugins",
                        artifact=fields["artifactId"],
                        version=fields.get("version", ""),
                        pinned=version_end >= 0 and text.startswith(PIN_MARK, version_end),
                        insert_at=ends["artifactId"],
                    )
                )
            plugin = None
        elif depth == 2 and name == "artifactId" and stack == ["project"]:
            own = text[child_start : match.start()].strip()
    return own, elements


def _under_plugin_list(path: list[str]) -> bool:
    """``path`` (the open elements above a ``plugin``) ends in a build's plugin list of the
    project or one of its profiles."""
    for tail in _PLUGIN_LISTS:
        n = len(tail)
        if tuple(path[-n:]) == tail:
            above = path[:-n]
            return above in (["project"], ["project", "profiles", "profile"])
    return False


def unversioned(output: str, effective_pom: str) -> dict[tuple[str, str], tuple[str, ...]]:
    """The build plugins Maven resolves from the repository's metadata in the launch that wrote
    ``effective_pom`` (its log ``output``), each with the artifactIds of the projects that run
    it. Raises ``ET.ParseError`` for an unreadable effective POM."""
    versions = build_plugin_versions(effective_pom)
    found: dict[tuple[str, str], set[str]] = {}
    project = ""
    for line in output.splitlines():
        header = _MODEL.search(line)
        if header is not None:
            project = header.group(2)
            continue
        warning = _WARNING.search(line)
        if warning is None:
            continue
        plugin = (warning.group(1), warning.group(2))
        if plugin in LIFECYCLE_PLUGINS and versions.get((project, *plugin)):
            continue  # the lifecycle's version, the running Maven's choice
        found.setdefault(plugin, set()).add(project)
    return {plugin: tuple(sorted(projects)) for plugin, projects in sorted(found.items())}


def pin(
    workspace: Path, unversioned: Mapping[str, Sequence[str]], released_by: str, state_dir: Path
) -> dict[str, dict[str, Any]]:
    """Pin the journal's ``unversioned`` plugins (``{"g:a": [projects]}``) of ``workspace`` to
    their release by ``released_by`` ("" none: nothing is pinned), dates kept under
    ``state_dir``; the pins (:func:`apply`). Raises :class:`HarnessError` when the repository's
    dates cannot be read."""
    if not released_by or not unversioned:
        return {}
    plugins: dict[tuple[str, str], tuple[str, ...]] = {}
    for key, projects in unversioned.items():
        group, _, artifact = key.partition(":")
        plugins[(group, artifact)] = tuple(projects)
    return apply(workspace, choose(plugins, released_by, ReleaseDates(state_dir)))


def pin_found(
    workspace: Path, effective_pom: Path, output: str, released_by: str, state_dir: Path
) -> dict[str, list[str]]:
    """The build plugins the launch that wrote ``effective_pom`` (its log ``output``) resolved
    from the repository's metadata for want of a version, as the journal keeps them ({} none, or
    the effective POM unreadable), pinned in ``workspace``'s POMs to their release by
    ``released_by`` (:func:`pin`). Raises :class:`HarnessError` when the dates cannot be read."""
    try:
        found = as_record(unversioned(output, effective_pom.read_text(encoding="utf-8")))
    except (OSError, ET.ParseError):
        return {}
    # a tree an earlier digest's run pinned (gold's JDK ladder, another reactor scope) shows Maven
    # no missing version: what the harness pinned is unversioned in the tree all the same
    for plugin, projects in pinned_in(workspace).items():
        found[plugin] = sorted({*found.get(plugin, []), *projects})
    pin(workspace, found, released_by, state_dir)
    return found


def pinned_in(workspace: Path) -> dict[str, list[str]]:
    """The plugins the harness pinned in ``workspace``'s POMs, ``{"g:a": [projects]}``."""
    found: dict[str, set[str]] = {}
    for path in build_files(workspace):
        if path.name != "pom.xml":
            continue
        try:
            own, elements = scan(path.read_bytes().decode("latin-1"))
        except (OSError, HarnessError):
            continue
        for element in elements:
            if element.pinned:
                found.setdefault(f"{element.group}:{element.artifact}", set()).add(own)
    return {plugin: sorted(projects) for plugin, projects in sorted(found.items())}


def as_record(unversioned: Mapping[tuple[str, str], tuple[str, ...]]) -> dict[str, list[str]]:
    """:func:`unversioned` as the journal keeps it: ``{"g:a": [projects]}``."""
    return {f"{group}:{artifact}": list(projects) for (group, artifact), projects in unversioned.items()}


def choose(
    unversioned: Mapping[tuple[str, str], tuple[str, ...]], released_by: str, dates: ReleaseDates
) -> dict[str, dict[str, Any]]:
    """For each unversioned plugin (with the projects that run it), the release to pin: the last
    one released by ``released_by`` (a commit's ISO date). Raises :class:`HarnessError` when
    the repository's dates cannot be read."""
    by = parse_date(released_by)
    pins: dict[str, dict[str, Any]] = {}
    for (group, artifact), projects in unversioned.items():
        newest = dates.newest_by(group, artifact, by)
        entry: dict[str, Any] = {"projects": list(projects), "by": by.date().isoformat()}
        if newest is None:
            entry.update(version="", why=f"no release of it is dated by {by.date().isoformat()}")
        else:
            entry.update(version=newest[0], released=newest[1].date().isoformat())
        pins[f"{group}:{artifact}"] = entry
    return pins


def apply(workspace: Path, pins: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Write each pin's version into the checkout's POMs of the projects it names, where their
    ``<plugin>`` has none (again on a tree already pinned: nothing changes). Returns the pins,
    each with the POMs that carry it (``files``) or, where none could, why."""
    done = {key: {**dict(entry), "files": []} for key, entry in pins.items()}
    for path in build_files(workspace):
        if path.name != "pom.xml":
            continue
        data = path.read_bytes()
        text = data.decode("latin-1")  # byte for byte: the edit touches ASCII markup only
        try:
            own, elements = scan(text)
        except HarnessError:
            continue  # Maven reports a malformed POM itself
        inserts: list[tuple[int, str]] = []
        for element in elements:
            entry = done.get(f"{element.group}:{element.artifact}")
            if entry is None or not entry.get("version") or own not in entry["projects"]:
                continue
            relative = str(path.relative_to(workspace))
            if element.pinned and element.version == entry["version"]:
                entry["files"].append(relative)
            elif not element.version:
                mark = f"{PIN_MARK}: the newest release by {entry['by']} -->"
                inserts.append((element.insert_at, f"<version>{entry['version']}</version>{mark}"))
                entry["files"].append(relative)
        for offset, insert in sorted(inserts, reverse=True):
            text = text[:offset] + insert + text[offset:]
        if inserts:
            path.write_bytes(text.encode("latin-1"))
    for entry in done.values():
        entry["files"] = sorted(set(entry["files"]))
        if entry.get("version") and not entry["files"]:
            entry["why"] = (
                "no <plugin> of it without a version in the checkout's POMs of those projects "
                "(declared in a parent from the repository, or its coordinates written with properties)"
            )
    return done


def describe(pins: Mapping[str, Mapping[str, Any]]) -> tuple[str, ...]:
    """One line per pin, for records: ``group:artifact:version (released 2021-06-16, the newest
    by 2021-08-30)``, or ``group:artifact not pinned: <why>``."""
    lines = []
    for key, entry in sorted(pins.items()):
        if entry.get("version") and entry.get("files"):
            released, by = entry.get("released"), entry["by"]
            lines.append(f"{key}:{entry['version']} (released {released}, the newest by {by})")
        else:
            lines.append(f"{key} not pinned: {entry.get('why') or 'no version chosen'}")
    return tuple(lines)
