"""How one workspace is built and its tests run: the settings every Maven launch of a run shares.

:class:`RunSettings` is plain data (the JDK, the Maven, the limits, the reactor scope, what is
selected and how, whether coverage is measured and the production build reused), made once per
run by a benchmark and narrowed by the run itself (:meth:`RunSettings.scoped`,
:meth:`RunSettings.on_jdk`, :meth:`RunSettings.for_surefire`); :mod:`~pytest_tebench.run.maven.testrun`
runs a selection with them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path

from pytest_tebench.run.maven.buildplan import build_digest
from pytest_tebench.run.maven.buildplan import version_key
from pytest_tebench.run.maven.dist import maven_tools
from pytest_tebench.run.maven.prebuilt import Prebuilt
from pytest_tebench.run.maven.reactor import read_reactor
from pytest_tebench.run.maven.settings import DEFAULT_TIMEOUT_COMPILE
from pytest_tebench.run.maven.settings import DEFAULT_TIMEOUT_TEST
from pytest_tebench.run.maven.surefire import TestId

#: The first Surefire that runs a ``Class#m1+m2`` selection as one request of the class.
SUREFIRE_SELECTS_METHODS = (2, 19, 1)


@dataclass(frozen=True)
class RunSettings:
    """How to build one workspace. ``maven_repo`` is shared by all workers and read-only offline."""

    maven_repo: Path
    #: JDK feature version for every step (choose it with :func:`pytest_tebench.run.maven.jdk.choose_jdk`).
    java_version: int = 17
    #: Maven to use: a version of Apache Maven from :mod:`~pytest_tebench.run.maven.dist` (every
    #: benchmark passes the run's, ``dist.DEFAULT_MAVEN`` unless ``--tebench-maven``), or ``""``
    #: for the executor's own ``mvn`` (tests that script the executor).
    maven_version: str = ""
    #: Where Maven downloads are kept (None: ``dist.default_dist_cache()``).
    maven_dist: Path | None = None
    offline: bool = True
    coverage: bool = True
    #: With ``coverage``: make the JaCoCo report after the launch. Off for a run compared by its
    #: outcomes alone (gold's repeated runs): the agent still runs, so the tests run as in a
    #: measured run (JaCoCo's synthetic members are visible to reflection), only the report is saved.
    coverage_report: bool = True
    compile_timeout: float = DEFAULT_TIMEOUT_COMPILE
    test_timeout: float = DEFAULT_TIMEOUT_TEST
    report_timeout: float = 120.0
    #: Limit of each online warm-up step (:mod:`~pytest_tebench.run.maven.warmup`): a cold one
    #: downloads the project's whole build, so it gets far more than an offline compile.
    warmup_timeout: float = 1800.0
    #: Remove ``target/`` before compiling; switch off only for a workspace known to be fresh.
    clean_target: bool = True
    #: JaCoCo include patterns; empty = the packages declared under ``src/main``.
    coverage_includes: tuple[str, ...] = ()
    #: Extra Maven arguments for every Maven step (e.g. ``-Dnet.bytebuddy.experimental=true``).
    extra_args: tuple[str, ...] = ()
    #: ``mvn test-compile`` and ``mvn test`` as two launches (own timeouts and timings) instead of
    #: one ``mvn test`` (compile limit until Surefire starts, then the test limit). Costs a launch.
    split_launches: bool = False
    #: The reactor scope of :meth:`scoped` (``-pl <modules> -am``) and the tests it was read for.
    scope: tuple[str, ...] = ()
    scope_tests: tuple[TestId, ...] = ()
    #: Select whole classes (``-Dtest=ClassA,ClassB``) and read only the selected methods' results
    #: from the reports: for a Surefire older than 2.19.1, which runs each method of ``Class#m1+m2``
    #: as its own JUnit request (``@BeforeClass``/``@AfterClass`` once per method), and for any
    #: run where a method selection is not how the project runs its tests (docs/building.md).
    select_by_class: bool = False
    #: Production code compiled once per tree and restored into the one-launch ``mvn test``
    #: (:mod:`~pytest_tebench.run.maven.prebuilt`); ``None``: every launch compiles it.
    prebuilt: Prebuilt | None = None
    #: Select nothing: the scoped modules run their whole test phase, as the project's own
    #: ``mvn test`` does, and only the selected methods' results are read (gold's check that a
    #: failure is not the harness's selection, :mod:`~pytest_tebench.benchmarks.tebench.gold_check`).
    whole_modules: bool = False
    #: The tests may reach the network (``--tebench-network``); Maven itself stays offline.
    test_network: bool = False
    #: The commit's date (ISO 8601, a benchmark's ``v0_date``): a build plugin the effective POM
    #: leaves without a version is pinned to the last release by then
    #: (:mod:`~pytest_tebench.run.maven.plugin_pins`); "" leaves Maven's choice, today's newest.
    plugins_released_by: str = ""

    def digest(self, workspace: Path) -> str:
        """The build digest of ``workspace`` under these settings
        (:func:`~pytest_tebench.run.maven.buildplan.build_digest`)."""
        return build_digest(workspace, java=self.java_version, maven=self.maven_version, args=self.maven_args)

    @property
    def maven_args(self) -> tuple[str, ...]:
        """The arguments every Maven launch of this build adds: ``extra_args``, then the scope."""
        return (*self.extra_args, *self.scope)

    def scoped(self, workspace: Path, tests: Iterable[TestId]) -> RunSettings:
        """These settings building only the reactor modules that hold ``tests`` and the modules
        they depend on (``-pl ... -am``; none for a single-module build), on this JDK: a profile
        the JDK activates may list modules. Every launch of a run and of its warm-up carries the
        scope, so a warm-up resolves what the run builds."""
        chosen = tuple(sorted(set(tests)))
        scope = read_reactor(workspace, self.java_version).scope_args(workspace, chosen)
        return replace(self, scope=scope, scope_tests=chosen)

    def on_jdk(self, workspace: Path, java_version: int) -> RunSettings:
        """These settings with JDK ``java_version`` (a retry's,
        :func:`~pytest_tebench.run.maven.jdk.java_version_after`), scoped again for it when they
        were scoped: the modules its profiles list may differ."""
        moved = replace(self, java_version=java_version)
        return moved.scoped(workspace, self.scope_tests) if self.scope_tests else moved

    def whole_module_run(self) -> RunSettings:
        """These settings running the scoped modules' whole test phase as the project's own
        ``mvn test`` does: no ``-Dtest``, no coverage; only the selected tests' results are read
        (gold's checks, :mod:`~pytest_tebench.benchmarks.tebench.gold_check`)."""
        return replace(self, select_by_class=False, whole_modules=True, coverage=False)

    def for_surefire(self, version: str) -> RunSettings:
        """These settings for a build whose effective POM runs Surefire ``version`` ("" unknown):
        selecting by class when it is older than :data:`SUREFIRE_SELECTS_METHODS` (before
        2.19.1 each method of ``Class#m1+m2`` ran as its own JUnit request, so ``@BeforeClass``
        ran once per method: a test server restarted on a new port while the class kept the
        first port's URLs). Never switches class selection off once it is on."""
        if version and version_key(version) < SUREFIRE_SELECTS_METHODS:
            return replace(self, select_by_class=True)
        return self

    def maven_tools(self) -> tuple[tuple[str, str], ...]:
        """The resolved Maven distribution every Maven step of this build carries (none: the
        executor's ``mvn``). Resolved here, in the build layer, never by an executor."""
        return maven_tools(self.maven_version, self.maven_dist)
