"""Unversioned build plugins pinned to their release by the commit's date (run/maven/plugin_pins),
and the release dates read from a repository's jars (run/maven/release_dates): recorded inputs.

The dates of the jars below are made here; the real ones (proguard-maven-plugin 2.4.0 built on
2021-06-16, build-helper-maven-plugin 3.0.0 on 2017-01-29) are checked on Maven Central by the
real build in test_plugin_pins_maven.py.
"""

from __future__ import annotations

import io
import json
import re
import urllib.error
import zipfile
from datetime import UTC
from datetime import datetime
from pathlib import Path

import pytest

from pytest_tebench.errors import HarnessError
from pytest_tebench.run.maven import buildplan
from pytest_tebench.run.maven import plugin_pins
from pytest_tebench.run.maven.journal import UNVERSIONED
from pytest_tebench.run.maven.journal import append_entry
from pytest_tebench.run.maven.journal import recorded_unversioned
from pytest_tebench.run.maven.release_dates import ReleaseDates
from pytest_tebench.run.maven.release_dates import jar_date
from pytest_tebench.run.maven.release_dates import parse_date
from pytest_tebench.run.maven.release_dates import versions

BASE = "https://repo.example/maven2"
FOLDER = f"{BASE}/com/example/tool-maven-plugin"


def jar(*times: tuple[int, int, int, int, int, int], padding: int = 0) -> bytes:
    """A jar whose entries carry ``times``; ``padding`` bytes of stored data come first."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        if padding:
            archive.writestr(zipfile.ZipInfo("big.bin", (2001, 1, 1, 0, 0, 0)), b"x" * padding)
        for number, when in enumerate(times):
            archive.writestr(zipfile.ZipInfo(f"e{number}.class", when), b"class")
    return out.getvalue()


def metadata(*listed: str) -> bytes:
    items = "".join(f"<version>{v}</version>" for v in listed)
    return (
        "<metadata><groupId>com.example</groupId><artifactId>tool-maven-plugin</artifactId>"
        f"<versioning><release>{listed[-1]}</release><versions>{items}</versions></versioning></metadata>"
    ).encode()


class Repository:
    """A fake Maven repository: url -> body, honouring tail ranges; counts the requests."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.requests: list[tuple[str, int]] = []

    def __call__(self, url: str, tail: int) -> bytes:
        self.requests.append((url, tail))
        if url not in self.files:
            raise urllib.error.HTTPError(url, 404, "Not Found", {}, None)  # type: ignore[arg-type]
        body = self.files[url]
        return body[-tail:] if tail else body


def tool(version: str) -> str:
    return f"{FOLDER}/{version}/tool-maven-plugin-{version}.jar"


@pytest.fixture
def repository() -> Repository:
    return Repository(
        {
            f"{FOLDER}/maven-metadata.xml": metadata("1.0", "1.1", "2.0", "1.2", "2.1-SNAPSHOT", "3.0"),
            tool("1.0"): jar((2015, 3, 1, 10, 0, 0), (2015, 3, 2, 9, 30, 0)),
            tool("1.1"): jar((2017, 5, 4, 12, 0, 0)),
            # 2.0 came out in 2018; 1.2, a fix of the old line, in 2019, after it
            tool("2.0"): jar((2018, 2, 1, 0, 0, 0), padding=200_000),
            tool("1.2"): jar((2019, 7, 1, 8, 0, 0)),
            tool("3.0"): jar((2023, 1, 1, 0, 0, 0)),
        }
    )


def test_versions_leave_snapshots_out() -> None:
    assert versions(metadata("1.0", "2.0-SNAPSHOT", "2.0")) == ["1.0", "2.0"]


def test_a_jar_is_dated_by_its_newest_entry_and_its_tail_is_enough() -> None:
    assert jar_date(jar((2015, 3, 1, 10, 0, 0), (2016, 1, 2, 3, 4, 6))) == datetime(
        2016, 1, 2, 3, 4, 6, tzinfo=UTC
    )
    big = jar((2018, 2, 1, 0, 0, 0), padding=200_000)
    assert jar_date(big[-65536:]) == datetime(2018, 2, 1, tzinfo=UTC)  # the central directory only
    # zip's earliest time and a reproducible build's placeholder are no dates
    assert jar_date(jar((1980, 1, 1, 0, 0, 0), (1980, 2, 1, 0, 0, 0))) is None
    with pytest.raises(zipfile.BadZipFile):
        jar_date(big[-100:])


def test_the_release_by_a_date_is_the_last_one_released_then(repository: Repository, tmp_path: Path) -> None:
    dates = ReleaseDates(tmp_path, base=BASE, fetch=repository)
    by = parse_date("2019-08-30T09:57:08-07:00")
    # 1.2 (July 2019) is the last one released by then, though 2.0 is the higher version
    assert dates.newest_by("com.example", "tool-maven-plugin", by) == (
        "1.2",
        datetime(2019, 7, 1, 8, tzinfo=UTC),
    )
    assert dates.newest_by("com.example", "tool-maven-plugin", parse_date("2018-06-01")) == (
        "2.0",
        datetime(2018, 2, 1, tzinfo=UTC),
    )
    assert dates.newest_by("com.example", "tool-maven-plugin", parse_date("2014-01-01")) is None
    # each jar was read once, its tail first (2.0's central directory fits in it)
    jars = [r for r in repository.requests if r[0].endswith(".jar")]
    assert sorted(url for url, _ in jars) == sorted(tool(v) for v in ("1.0", "1.1", "2.0", "1.2", "3.0"))
    assert {tail for _, tail in jars} == {65536}


def test_dates_are_kept_and_the_list_read_again_only_for_a_later_cutoff(
    repository: Repository, tmp_path: Path
) -> None:
    ReleaseDates(tmp_path, base=BASE, fetch=repository).newest_by(
        "com.example", "tool-maven-plugin", parse_date("2019-01-01")
    )
    cache = tmp_path / "release-dates" / "com.example+tool-maven-plugin.json"
    kept = json.loads(cache.read_text())
    assert kept["dates"]["1.2"] == "2019-07-01T08:00:00+00:00" and kept["versions"][-1] == "3.0"
    repository.requests.clear()
    again = ReleaseDates(tmp_path, base=BASE, fetch=repository)
    assert again.newest_by("com.example", "tool-maven-plugin", parse_date("2019-01-01"))[0] == "2.0"  # type: ignore[index]
    assert repository.requests == []  # nothing fetched: the list was read after that date
    # a 4.0 released since: a cutoff after the list was read reads it again, and only 4.0's jar
    repository.files[f"{FOLDER}/maven-metadata.xml"] = metadata("1.0", "1.1", "2.0", "1.2", "3.0", "4.0")
    repository.files[tool("4.0")] = jar((2025, 1, 1, 0, 0, 0))
    assert again.newest_by("com.example", "tool-maven-plugin", datetime(2999, 1, 1, tzinfo=UTC))[0] == "4.0"  # type: ignore[index]
    assert [url for url, _ in repository.requests] == [f"{FOLDER}/maven-metadata.xml", tool("4.0")]


def test_a_listed_version_without_a_jar_is_never_chosen_and_an_unreachable_repository_is_an_error(
    repository: Repository, tmp_path: Path
) -> None:
    del repository.files[tool("1.2")]
    dates = ReleaseDates(tmp_path, base=BASE, fetch=repository)
    assert dates.newest_by("com.example", "tool-maven-plugin", parse_date("2019-08-30"))[0] == "2.0"  # type: ignore[index]

    def down(url: str, tail: int) -> bytes:
        raise urllib.error.URLError("Name or service not known")

    with pytest.raises(
        HarnessError, match=re.escape(f"cannot read {BASE}/com/example/other/maven-metadata.xml")
    ):
        ReleaseDates(tmp_path, base=BASE, fetch=down).newest_by(
            "com.example", "other", parse_date("2019-08-30")
        )


# -- the POMs ------------------------------------------------------------------------------
POM = """<?xml version="1.0" encoding="ISO-8859-1"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <!-- Ren\xe9's module; <plugin><artifactId>tool-maven-plugin</artifactId></plugin> in a comment -->
  <artifactId>app</artifactId>
  <build>
    <pluginManagement>
      <plugins>
        <plugin>
          <groupId>com.example</groupId>
          <artifactId>managed-plugin</artifactId>
        </plugin>
      </plugins>
    </pluginManagement>
    <plugins>
      <plugin>
        <groupId>com.example</groupId>
        <artifactId>tool-maven-plugin</artifactId>
        <configuration>
          <reportPlugins><plugin><artifactId>tool-maven-plugin</artifactId></plugin></reportPlugins>
        </configuration>
      </plugin>
      <plugin>
        <artifactId>maven-jar-plugin</artifactId>
      </plugin>
      <plugin>
        <groupId>com.example</groupId>
        <artifactId>pinned-plugin</artifactId>
        <version>1.0</version>
      </plugin>
    </plugins>
  </build>
  <profiles>
    <profile>
      <build><plugins><plugin><groupId>com.example</groupId><artifactId>tool-maven-plugin</artifactId></plugin></plugins></build>
    </profile>
  </profiles>
  <reporting><plugins><plugin><groupId>com.example</groupId><artifactId>tool-maven-plugin</artifactId></plugin></plugins></reporting>
</project>
"""
TOOL_PIN = {
    "com.example:tool-maven-plugin": {
        "version": "1.2",
        "released": "2019-07-01",
        "by": "2019-08-30",
        "projects": ["app"],
    }
}


def test_scan_reads_the_build_plugins_of_the_project_and_its_profiles() -> None:
    own, elements = plugin_pins.scan(POM)
    assert own == "app"
    assert [(e.group, e.artifact, e.version) for e in elements] == [
        ("com.example", "managed-plugin", ""),
        ("com.example", "tool-maven-plugin", ""),
        ("org.apache.maven.plugins", "maven-jar-plugin", ""),
        ("com.example", "pinned-plugin", "1.0"),
        (
            "com.example",
            "tool-maven-plugin",
            "",
        ),  # the profile's; comments, configuration and reporting are not read
    ]
    assert not any(e.pinned for e in elements)


def test_apply_writes_the_version_on_the_plugins_own_line_and_keeps_the_digest(tmp_path: Path) -> None:
    (tmp_path / "pom.xml").write_bytes(POM.encode("latin-1"))
    before = buildplan.build_digest(tmp_path, java=17, maven="3.9.9")
    done = plugin_pins.apply(tmp_path, TOOL_PIN)
    assert done["com.example:tool-maven-plugin"]["files"] == ["pom.xml"]
    text = (tmp_path / "pom.xml").read_bytes().decode("latin-1")
    assert text.count("\n") == POM.count("\n")  # every line number Maven reports stays
    mark = "<version>1.2</version><!-- pytest-tebench: pinned: the newest release by 2019-08-30 -->"
    assert text.count(mark) == 2  # the build's and the profile's plugin
    assert "<artifactId>tool-maven-plugin</artifactId>" + mark + "\n        <configuration>" in text
    assert "Ren\xe9's module" in text  # the POM's own encoding, byte for byte
    assert text.replace(mark, "") == POM
    assert buildplan.build_digest(tmp_path, java=17, maven="3.9.9") == before
    # again on the pinned tree: nothing changes, the pin is reported as carried
    assert plugin_pins.apply(tmp_path, TOOL_PIN) == done
    assert (tmp_path / "pom.xml").read_bytes().decode("latin-1") == text
    assert plugin_pins.describe(done) == (
        "com.example:tool-maven-plugin:1.2 (released 2019-07-01, the newest by 2019-08-30)",
    )
    # scanned back as the harness's
    assert [e.pinned for e in plugin_pins.scan(text)[1] if e.artifact == "tool-maven-plugin"] == [True, True]
    # the digest does see a version the project wrote itself
    (tmp_path / "pom.xml").write_text(
        POM.replace(
            "<artifactId>tool-maven-plugin</artifactId>\n",
            "<artifactId>tool-maven-plugin</artifactId><version>1.2</version>\n",
            1,
        ),
        encoding="latin-1",
    )
    assert buildplan.build_digest(tmp_path, java=17, maven="3.9.9") != before


def test_apply_touches_only_the_projects_that_run_it_unversioned(tmp_path: Path) -> None:
    (tmp_path / "pom.xml").write_bytes(POM.encode("latin-1"))
    other = {
        "com.example:tool-maven-plugin": {**TOOL_PIN["com.example:tool-maven-plugin"], "projects": ["lib"]}
    }
    done = plugin_pins.apply(tmp_path, other)
    assert (tmp_path / "pom.xml").read_bytes() == POM.encode("latin-1")
    assert done["com.example:tool-maven-plugin"]["why"].startswith("no <plugin> of it without a version")
    assert plugin_pins.describe(done) == (
        "com.example:tool-maven-plugin not pinned: no <plugin> of it without a version in the checkout's POMs of those projects (declared in a parent from the repository, or its coordinates written with properties)",
    )
    assert plugin_pins.apply(tmp_path, {}) == {}


GSON_LOG = """[INFO] Scanning for projects...
[WARNING] 
[WARNING] Some problems were encountered while building the effective model for com.google.code.gson:gson:jar:2.8.9-SNAPSHOT
[WARNING] 'build.plugins.plugin.version' for org.apache.maven.plugins:maven-jar-plugin is missing. @ line 52, column 15
[WARNING] 'build.plugins.plugin.version' for com.github.wvengen:proguard-maven-plugin is missing. @ line 104, column 15
[WARNING] 
[WARNING] It is highly recommended to fix these problems because they threaten the stability of your build.
[INFO] Reactor Build Order:
"""


def test_unversioned_plugins_are_those_maven_warns_of_less_its_lifecycles() -> None:
    # gson ac14b4c1's log (recorded, Maven 3.9.9) and its effective POM's shape: the jar plugin
    # has the version Maven's lifecycle binds, proguard none
    effective = """<projects>
      <project><artifactId>gson-parent</artifactId></project>
      <project><artifactId>gson</artifactId><build><plugins>
        <plugin><artifactId>maven-jar-plugin</artifactId><version>3.4.1</version></plugin>
        <plugin><groupId>com.github.wvengen</groupId><artifactId>proguard-maven-plugin</artifactId></plugin>
      </plugins></build></project>
    </projects>"""
    assert plugin_pins.unversioned(GSON_LOG, effective) == {
        ("com.github.wvengen", "proguard-maven-plugin"): ("gson",)
    }
    # the root of a help:effective-pom run has the version Maven resolved from the metadata filled
    # in: the warning still names it (not the lifecycle's)
    root = """<project><artifactId>app</artifactId><build><plugins>
        <plugin><groupId>org.codehaus.mojo</groupId><artifactId>build-helper-maven-plugin</artifactId><version>3.8.0</version></plugin>
        <plugin><artifactId>maven-war-plugin</artifactId></plugin>
      </plugins></build></project>"""
    log = """[WARNING] Some problems were encountered while building the effective model for org.example:app:jar:1.0
[WARNING] 'build.plugins.plugin.version' for org.codehaus.mojo:build-helper-maven-plugin is missing. @ line 40, column 15
[WARNING] 'build.plugins.plugin.version' for org.apache.maven.plugins:maven-war-plugin is missing. @ line 50, column 15
"""
    assert plugin_pins.unversioned(log, root) == {
        ("org.apache.maven.plugins", "maven-war-plugin"): ("app",),  # no lifecycle bound it here
        ("org.codehaus.mojo", "build-helper-maven-plugin"): ("app",),
    }
    assert plugin_pins.unversioned("[INFO] BUILD SUCCESS\n", root) == {}


def test_choose_takes_the_release_by_the_date_or_says_why_none(
    repository: Repository, tmp_path: Path
) -> None:
    dates = ReleaseDates(tmp_path, base=BASE, fetch=repository)
    chosen = plugin_pins.choose(
        {("com.example", "tool-maven-plugin"): ("app",)}, "2019-08-30T09:57:08-07:00", dates
    )
    assert chosen == TOOL_PIN
    early = plugin_pins.choose({("com.example", "tool-maven-plugin"): ("app",)}, "2014-01-01", dates)
    assert early["com.example:tool-maven-plugin"]["version"] == ""
    assert plugin_pins.describe(early) == (
        "com.example:tool-maven-plugin not pinned: no release of it is dated by 2014-01-01",
    )


def test_the_journal_keeps_a_builds_unversioned_plugins(tmp_path: Path) -> None:
    plugin = "com.example:tool-maven-plugin"
    append_entry(tmp_path, {"build": "b1", "ok": True, UNVERSIONED: {plugin: ["app"]}})
    append_entry(tmp_path, {"build": "b1", "ok": True, UNVERSIONED: {}})  # a warm-up of the pinned tree
    append_entry(tmp_path, {"build": "b1", "ok": True, UNVERSIONED: {plugin: ["lib"]}})
    append_entry(tmp_path, {"build": "b2", "ok": True})
    append_entry(tmp_path, {"build": "b1", "ok": False, UNVERSIONED: {"x:y": ["z"]}})
    assert recorded_unversioned(tmp_path, "b1") == {plugin: ["app", "lib"]}
    assert recorded_unversioned(tmp_path, "b2") == {}


@pytest.fixture
def pom_workspace(tmp_path: Path) -> Path:
    """A checkout holding :data:`POM`."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "pom.xml").write_bytes(POM.encode("latin-1"))
    return workspace


def cached_dates(repository: Repository, state: Path) -> None:
    """The tool plugin's release dates read into ``state``'s cache, as a first lookup leaves them."""
    ReleaseDates(state, base=BASE, fetch=repository).newest_by(
        "com.example", "tool-maven-plugin", parse_date("2019-08-30")
    )


def test_pin_chooses_by_the_runs_date_and_without_one_pins_nothing(
    repository: Repository, tmp_path: Path, pom_workspace: Path
) -> None:
    workspace = pom_workspace
    state = tmp_path / "state"
    unversioned = plugin_pins.as_record({("com.example", "tool-maven-plugin"): ("app",)})
    assert unversioned == {"com.example:tool-maven-plugin": ["app"]}
    assert plugin_pins.pin(workspace, unversioned, "", state) == {}
    assert (workspace / "pom.xml").read_bytes() == POM.encode("latin-1")
    assert not state.exists()  # no date, no lookup
    cached_dates(repository, state)
    done = plugin_pins.pin(workspace, unversioned, "2018-06-01", state)
    assert plugin_pins.describe(done) == (
        "com.example:tool-maven-plugin:2.0 (released 2018-02-01, the newest by 2018-06-01)",
    )


def test_a_tree_pinned_before_still_names_its_plugins_to_a_new_check(
    repository: Repository, tmp_path: Path, pom_workspace: Path
) -> None:
    # gold's JDK ladder checks the same workspace under another digest after a run pinned it: Maven
    # then warns of nothing, and the journal must still say which plugins lack a version
    workspace = pom_workspace
    state = tmp_path / "state"
    cached_dates(repository, state)
    effective = tmp_path / "effective.xml"
    effective.write_text("<project><artifactId>app</artifactId></project>", encoding="utf-8")
    log = """[WARNING] Some problems were encountered while building the effective model for com.example:app:jar:1
[WARNING] 'build.plugins.plugin.version' for com.example:tool-maven-plugin is missing. @ line 16, column 15
"""
    first = plugin_pins.pin_found(workspace, effective, log, "2019-08-30", state)
    assert first == {"com.example:tool-maven-plugin": ["app"]}
    assert plugin_pins.pinned_in(workspace) == {"com.example:tool-maven-plugin": ["app"]}
    pinned = (workspace / "pom.xml").read_bytes()
    again = plugin_pins.pin_found(workspace, effective, "[INFO] BUILD SUCCESS\n", "2019-08-30", state)
    assert again == first and (workspace / "pom.xml").read_bytes() == pinned
    assert plugin_pins.pin_found(workspace, tmp_path / "absent.xml", log, "2019-08-30", state) == {}
