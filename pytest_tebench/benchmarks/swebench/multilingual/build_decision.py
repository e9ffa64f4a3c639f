"""Where a SWE-bench Multilingual row runs here: built, in its official image, or not at all (and why).

Only the Java Maven rows (``parse_log_maven``) whose builds need nothing but Debian's JDKs and
Maven Central are built here (:mod:`.java_build`): google/gson and javaparser/javaparser (apache/druid
needs an artifact Maven Central lacks). Every other row needs a host
this machine cannot reach (it reaches PyPI, Maven Central, Debian's mirror and npm only) or has
no recipe here; each reason says which. :func:`decide` is the one answer for a run and for
``tebench swebench coverage``: ``build`` (built here), ``official`` (its official image, as
``--tebench-swebench-images`` allows) or ``unsupported`` with the reason, decided from the row's
repository, version and language before anything runs.
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench.official_images import Decision

#: The dataset's repositories whose environments are built here (Maven, JDKs 8-21, Maven Central only).
BUILT_REPOS: frozenset[str] = frozenset({"google/gson", "javaparser/javaparser"})
#: The log parser of a Maven build's rows: those are the ones :mod:`.java_build` runs.
MAVEN_PARSER = "parse_log_maven"

_GRADLE = (
    "a Gradle wrapper build: Gradle itself from services.gradle.org and build plugins from "
    "plugins.gradle.org, hosts not reachable from here "
    "(only Maven Central, PyPI, npm and Debian's mirror are)"
)
#: Java repositories that are not built here, and why.
JAVA_NOT_BUILT: Mapping[str, str] = {
    "projectlombok/lombok": (
        "an Ant + Ivy build whose Ivy and dependency jars come from projectlombok.org, a host not "
        "reachable from here (only Maven Central, PyPI, npm and Debian's mirror are)"
    ),
    "apache/druid": (
        "its Maven build needs org.hyperic:sigar, which Maven Central does not publish (no "
        "org/hyperic/sigar there); druid takes it from a repository of its own, not reachable from here"
    ),
    "apache/lucene": _GRADLE,
    "reactivex/rxjava": _GRADLE,
}
#: What the other languages' environments would download, from hosts not reachable here.
LANGUAGE_NEEDS: Mapping[str, str] = {
    "go": "Go modules from proxy.golang.org and a Go toolchain from go.dev",
    "rust": "crates from crates.io and a Rust toolchain from static.rust-lang.org",
    "php": "PHP packages from packagist.org (Composer)",
    "ruby": "gems from rubygems.org",
    "javascript": "the Node.js release its image pins, from nodejs.org",
}


def build_reason(repo: str, version: str, language: str, log_parser: str | None = None) -> str | None:
    """Why the row's environment is not built here; None when it is (:mod:`.java_build`): a Java
    row graded by the Maven parser (the row's, else its repository's) that needs nothing but
    Maven Central."""
    if repo in JAVA_NOT_BUILT:
        return f"{repo} is not built here: {JAVA_NOT_BUILT[repo]}"
    parser = log_parser or official.repository_parser(repo)
    if language == "java" and parser == MAVEN_PARSER:
        if official.specs(repo, version) is None:
            return f"SWE-bench {official.SWEBENCH_VERSION} has no specification for {repo} {version}"
        return None
    needs = LANGUAGE_NEEDS.get(language)
    if needs is not None:
        return (
            f"{repo} ({language}) is not built here: its environment needs {needs}, not reachable from here"
        )
    return (
        f"{repo} ({language or 'unknown language'}) is not built here: no environment recipe for "
        f"its language (build mode covers the Java Maven rows: {', '.join(sorted(BUILT_REPOS))})"
    )


def decide(
    repo: str,
    version: str,
    language: str,
    mode: str,
    *,
    log_parser: str | None = None,
    has_image: bool = True,
) -> Decision:
    """Where the row runs under ``--tebench-swebench-images=mode`` (``build``, ``official``,
    ``auto``): ``build`` when it is built here and the mode allows; ``official`` in ``official``
    mode, or in ``auto`` mode for a row not built here (``reason`` says why not), when the row
    names an image (``has_image``); else ``unsupported`` with the reason. Whether the image can
    actually be had is the run's to find (the official steps' own check)."""
    reason = build_reason(repo, version, language, log_parser)
    if mode == "build" or (mode == "auto" and reason is None):
        return Decision("build" if reason is None else "unsupported", reason)
    if not has_image:
        missing = "the row names no official image"
        return Decision("unsupported", missing if reason is None else f"{reason}; and {missing}")
    return Decision("official", reason)
