"""What a Multilingual prediction may not change: the row's test files and what starts or
configures the language's test runner. Decided from the patch's paths alone, before anything runs.

Rules (each :class:`~pytest_tebench.integrity.paths.Refusal` names its rule):

``test-patch``
    a file the row's ``test_patch`` touches: the eval script resets or removes them and applies
    ``test_patch``, so the prediction has nothing to do there but make the tests say something else;
``runner-config``
    a file that says how the language's test runner runs or what it reports (:data:`RUNNER_FILES`):
    Maven's wrapper and ``.mvn`` settings, JUnit Platform's configuration and service registrations
    (listeners and extensions it loads unasked), Gradle's and Ant's build scripts, Cargo's
    ``.cargo/config``, the JavaScript runners' configurations, PHPUnit's, RSpec's and the C
    repositories' test drivers;
``link``
    a symbolic link or a submodule (``120000``/``160000`` in any mode line of the diff, ``index``
    lines included).

Build files that gold patches themselves change (``pom.xml``, ``Cargo.toml``, ``go.mod``,
``package.json``, ``composer.json``, ``Gemfile``, ``CMakeLists.txt``, ``Makefile``) are not refused:
a fix may need a dependency. What that leaves open is in docs/threat-model.md.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterable
from collections.abc import Mapping

from pytest_tebench.benchmarks.swebench.official_refusal import touched_paths
from pytest_tebench.integrity.paths import Refusal
from pytest_tebench.workspace.patches import PatchFormatError
from pytest_tebench.workspace.patches import parse_patch

#: Per language: glob patterns of runner files, matched against the whole path and, for patterns
#: without a slash, against the file name anywhere in the tree.
RUNNER_FILES: Mapping[str, tuple[str, ...]] = {
    "java": (
        "mvnw", "mvnw.cmd", ".mvn/*", "junit-platform.properties",
        "*/META-INF/services/org.junit.*", "*/META-INF/services/org.apache.maven.*",
        "gradlew", "gradlew.bat", "gradle/*", "build.gradle", "build.gradle.kts", "settings.gradle",
        "settings.gradle.kts", "gradle.properties", "buildSrc/*", "init.gradle",
        "build.xml", "buildScripts/*",
    ),
    "rust": (".cargo/config", ".cargo/config.toml", "*/.cargo/config", "*/.cargo/config.toml",
             "rust-toolchain", "rust-toolchain.toml", ".config/nextest.toml"),
    "go": ("go.work", "go.work.sum"),
    "javascript": (
        "jest.config.*", "jest.setup.*", "karma.conf.*", "karma.*.conf.*", "vitest.config.*",
        "vitest.workspace.*", "vite.config.*", ".mocharc*", ".npmrc", ".yarnrc", ".yarnrc.yml",
        ".pnpmfile.cjs", "scripts/jest/*", "test/setup*", "test/karma*",
    ),
    "php": ("phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml", ".phpunit.result.cache"),
    "ruby": (".rspec", "Rakefile", "spec/spec_helper.rb", "test/helper.rb", "test/test_helper.rb",
             "spec_helper.rb", ".simplecov"),
    "c": ("runtest", "tests/test_helper.tcl", "tests/support/*", "tests/helpers/*",
          "tests/run-tests.py", "tests/setup", "tests/*.test.sh"),
    "cpp": ("test/gtest/*", "test/gtest-extra.*", "tests/thirdparty/doctest/*"),
}  # fmt: skip


def refusals(patch: str, test_patch: str, language: str) -> list[Refusal]:
    """The hunks of ``patch`` a Multilingual row of ``language`` refuses (empty: none)."""
    tests = set(touched_paths(test_patch))
    patterns = RUNNER_FILES.get(language, ())
    found: list[Refusal] = []
    for path in touched_paths(patch):
        if path in tests:
            found.append(
                Refusal(path, "test-patch", "a test file of the row's test_patch (reset before the tests)")
            )
            continue
        pattern = runner_pattern(path, patterns)
        if pattern is not None:
            found.append(
                Refusal(path, "runner-config", f"configures or starts the {language} test runner ({pattern})")
            )
    found += [
        Refusal(path, "link", f"a {kind} (mode {mode})")
        for path, mode, kind in _links(patch)
        if path not in {refusal.path for refusal in found}
    ]
    return found


def runner_pattern(path: str, patterns: Iterable[str]) -> str | None:
    """The first of ``patterns`` that ``path`` matches, or None."""
    name = posixpath.basename(path)
    for pattern in patterns:
        if fnmatch.fnmatchcase(path, pattern) or ("/" not in pattern and fnmatch.fnmatchcase(name, pattern)):
            return pattern
    return None


def _links(patch: str) -> list[tuple[str, str, str]]:
    try:
        files = parse_patch(patch)
    except PatchFormatError:
        return []
    found = []
    for piece in files:
        # every mode the piece names: git takes an `index <a>..<b> <mode>` line's as the old mode,
        # GNU patch (the official harness's fallback) as the file's
        mode = next((m for m in piece.modes if m in ("120000", "160000")), "")
        if mode:
            found.append((piece.path, mode, "symbolic link" if mode == "120000" else "submodule"))
    return found
