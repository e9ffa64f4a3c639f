"""Where a SWE-bench Multilingual row runs here: built (a hook, for the repositories whose build
mode exists), in its official image, or not at all, and why it is not built.

Build mode for a Multilingual repository is registered with :func:`register_builder` by the module
that builds it (the Java Maven rows of google/gson and javaparser/javaparser, whose dependencies
Maven Central holds). Every other repository names why it cannot be built on this machine, whose
network reaches only PyPI, Maven Central, Debian's mirror and npm (:data:`NOT_BUILT_BECAUSE`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING
from typing import Any
from typing import Protocol

from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.swebench.official_images import Decision

if TYPE_CHECKING:
    from pytest_tebench.benchmarks.swebench.multilingual.rows import MultilingualInstance
    from pytest_tebench.benchmarks.swebench.patch_run import PatchRun


class Builder(Protocol):
    """Build mode of one repository's Multilingual rows: ``prepare`` makes an instance's environment
    (its value is the builder's own), ``run`` runs one patch through the row's eval script in it.
    The rest is the adapter's Multilingual steps' (:mod:`.official_run`), as for an official image:
    the runner-file refusals before, the record and the grading after."""

    def prepare(self, instance: BenchmarkInstance, context: EvalContext) -> Any: ...

    def run(
        self, payload: MultilingualInstance, built: Any, patch: str, context: EvalContext
    ) -> PatchRun: ...


#: Repositories whose rows build mode can build: ``{repo: builder}`` (:func:`register_builder`).
BUILDERS: dict[str, Builder] = {}
#: The package's own builders, registered by these modules on the first decision (imported then:
#: they bring the build machinery, which imports this module).
SHIPPED_BUILDERS = ("pytest_tebench.benchmarks.swebench.multilingual.built",)

_NO_GITHUB = "the repository and its Git submodules come from GitHub"
#: Why the rows of each repository are not built here: the host its build needs, or the artifact
#: no reachable repository holds. A repository missing here has "no build mode for <language>".
NOT_BUILT_BECAUSE: dict[str, str] = {
    # Java: these two need only Maven Central; their build mode registers itself when present
    **{repo: "its Maven build mode is not installed (its dependencies are on Maven Central)"
       for repo in ("google/gson", "javaparser/javaparser")},
    "apache/druid": "a dependency is missing from Maven Central (org.hyperic:sigar, "
    "from repository.jboss.org)",
    "apache/lucene": "Gradle: the wrapper's distribution (services.gradle.org) and plugins "
    "(plugins.gradle.org) are not reachable",
    "reactivex/rxjava": "Gradle: the wrapper's distribution (services.gradle.org) and plugins "
    "(plugins.gradle.org) are not reachable",
    "projectlombok/lombok": "its Ant build fetches its dependencies through Ivy from "
    "projectlombok.org, not reachable",
    # Go: modules come from proxy.golang.org and their origins (GitHub)
    **{repo: "Go modules (proxy.golang.org, GitHub) are not reachable" for repo in (
        "caddyserver/caddy", "gin-gonic/gin", "gohugoio/hugo", "hashicorp/terraform",
        "prometheus/prometheus",
    )},
    # Rust: crates come from crates.io
    **{repo: "crates (crates.io, static.rust-lang.org) are not reachable" for repo in (
        "astral-sh/ruff", "burntsushi/ripgrep", "sharkdp/bat", "tokio-rs/tokio", "tokio-rs/axum",
        "uutils/coreutils", "nushell/nushell",
    )},
    # PHP: Composer packages come from packagist.org and GitHub
    **{repo: "Composer packages (packagist.org, GitHub) are not reachable" for repo in (
        "briannesbitt/carbon", "laravel/framework", "php-cs-fixer/php-cs-fixer",
        "phpoffice/phpspreadsheet",
    )},
    # Ruby: gems come from rubygems.org
    **{repo: "gems (rubygems.org) are not reachable" for repo in (
        "faker-ruby/faker", "fastlane/fastlane", "fluent/fluentd", "jekyll/jekyll",
        "jordansissel/fpm", "rubocop/rubocop",
    )},
    # C and C++: Debian's toolchain would do, but the sources are not here
    "jqlang/jq": f"{_NO_GITHUB} (oniguruma in modules/oniguruma), not reachable",
    "micropython/micropython": f"{_NO_GITHUB} (lib/*, fetched by ci_unix_build_helper), not reachable",
    "redis/redis": "the repository comes from GitHub, not mirrored here (its build needs Debian only)",
    "valkey-io/valkey": "the repository comes from GitHub, not mirrored here (its build needs Debian only)",
    "fmtlib/fmt": "the repository comes from GitHub, not mirrored here (its build needs Debian only)",
    "nlohmann/json": "the repository comes from GitHub, not mirrored here, and its CMake "
    "configuration downloads json_test_data from GitHub",
    # JavaScript and TypeScript: npm is reachable; what is missing is the build mode
    **{repo: "no build mode for JavaScript rows yet (npm is reachable; the repository, on GitHub, "
       "is not mirrored here)" for repo in (
        "axios/axios", "babel/babel", "facebook/docusaurus", "immutable-js/immutable-js",
        "mrdoob/three.js", "preactjs/preact", "vuejs/core",
    )},
}  # fmt: skip


def register_builder(repo: str, builder: Builder) -> None:
    """Build mode exists for ``repo``'s rows: ``--tebench-swebench-images=build|auto`` builds them."""
    BUILDERS[repo] = builder


def not_built_because(repo: str, language: str) -> str:
    """Why ``repo``'s rows are not built here."""
    return NOT_BUILT_BECAUSE.get(repo) or f"no build mode for {language} rows of {repo}"


def decide(repo: str, language: str, mode: str) -> Decision:
    """Where a row of ``repo`` runs under ``mode`` (``build``, ``official`` or ``auto``): built when
    a builder is registered (not in ``official`` mode), else in its official image (not in
    ``build`` mode), else unsupported; ``reason`` says why it is not built."""
    for module in SHIPPED_BUILDERS:
        importlib.import_module(module)
    if repo in BUILDERS and mode != "official":
        return Decision("build", None)
    reason = None if repo in BUILDERS else f"{repo} ({language}): {not_built_because(repo, language)}"
    if mode == "build":
        return Decision("unsupported", reason)
    return Decision("official", reason)
