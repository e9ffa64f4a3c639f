"""Maven command lines for evaluating a selection of tests, as executor-neutral build steps.

Every step names its goals explicitly (a bare ``mvn`` runs commons' ``defaultGoal`` with rat,
japicmp, spotbugs, pmd, checkstyle and javadoc) and carries the skip flags real commons-* and
jsoup builds need; ``-Djacoco.skip=true`` switches off the *project's* JaCoCo (ours is attached
through ``JAVA_TOOL_OPTIONS``, see :mod:`pytest_tebench.run.maven.jacoco`).

Sequences measured (warm, offline, JDK 17, no agent; commons-csv at parent 104 with Maven 3.9.9 /
the mini-maven fixture with 3.8.7; a shared 2-core machine, so compare within a column):

=====================================================  ===============  ============
sequence                                               commons-csv      mini-maven
=====================================================  ===============  ============
``mvn test`` (one launch, compiles and tests)          13.7 s           5.6 s
``mvn test-compile`` then ``mvn surefire:test``        11.7 + 4.0 s     3.2 + 3.2 s
``mvn test-compile`` then ``mvn test``                 11.7 + 8.3 s     3.2 + 3.6 s
=====================================================  ===============  ============

The default (see :class:`~pytest_tebench.run.maven.run_settings.RunSettings`) is the single ``mvn test``:
cheapest, and exactly the lifecycle a developer runs. Main and test compilation failures are
still told apart, by the failing goal in the log (:mod:`~pytest_tebench.run.maven.log`). The
split sequence re-runs the lifecycle in its second launch instead of calling ``surefire:test``
alone, because a bare goal silently drops execution-specific Surefire configuration
(``default-test``), plugins bound to ``process-test-classes`` and the empty ``argLine`` that a
skipped JaCoCo ``prepare-agent`` defines for POMs using ``@{argLine}``; it is there for separate
compile/test timeouts and timings. The JaCoCo report is one more short ``java -jar`` (~0.3 s).

Paths are :mod:`~pytest_tebench.run.executor` placeholders, expanded by the executor.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from collections.abc import Sequence

from pytest_tebench.run.executor import MAVEN_REPO_PLACEHOLDER
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import tool_placeholder
from pytest_tebench.run.maven import modulepath
from pytest_tebench.run.maven.jacoco import AGENT_ARTIFACT
from pytest_tebench.run.maven.jacoco import CLI_ARTIFACT
from pytest_tebench.run.maven.jacoco import agent_option
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.surefire import compiled_names

#: Plugins that are bound into ``mvn test`` by commons-parent/jsoup or that a stray goal could
#: pull in; each either needs the network, fails on harness files, or does not concern tests.
SKIP_FLAGS: tuple[str, ...] = (
    "-Drat.skip=true",
    "-Danimal.sniffer.skip=true",
    "-Djapicmp.skip=true",
    "-Denforcer.skip=true",
    "-Dcheckstyle.skip=true",
    "-Dspotbugs.skip=true",
    "-Dpmd.skip=true",
    "-Dcpd.skip=true",
    "-Dmaven.javadoc.skip=true",
    "-Dcyclonedx.skip=true",
    "-Dspdx.skip=true",
    "-Dmoditect.skip=true",
    "-Dcheck.failOnNonReproducible=false",
    "-Djacoco.skip=true",
)
#: Flags of the test step: run what ``-Dtest`` names even if the POM skips tests through a
#: property, never fail for "no tests matched" (Surefire >= 3.0.0-M6 needs the first flag),
#: keep going after test failures so the reports are complete, and keep the tests' own output
#: off the console, which is the second witness of their results
#: (:func:`~pytest_tebench.run.maven.surefire.check_against_console`).
TEST_FLAGS: tuple[str, ...] = (
    "-Dmaven.test.redirectTestOutputToFile=true",
    "-Dsurefire.failIfNoSpecifiedTests=false",
    "-DfailIfNoTests=false",
    "-Dmaven.test.failure.ignore=true",
    "-DskipTests=false",
    "-Dmaven.test.skip=false",
)
#: Pinned so warm-up does not depend on plugin-prefix metadata.
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1"
HELP_PLUGIN = "org.apache.maven.plugins:maven-help-plugin:3.5.1"
#: Warm-up selector: every test class, a method none has. Surefire must find some class to go
#: on to resolve its provider (``surefire-junit-platform`` + launcher, ``surefire-junit4``...),
#: which a selector matching no class skips (observed: offline runs then fail); with this one
#: it resolves and forks, and JUnit runs nothing.
WARMUP_SELECTOR = "*#tebenchWarmupNoSuchMethod"


def mvn_program(maven: tuple[tuple[str, str], ...] = ()) -> str:
    """``mvn`` (the executor's), or the resolved distribution's launcher when ``maven`` names one
    (``dist.maven_tools``)."""
    return f"{tool_placeholder('maven')}/bin/mvn" if dict(maven).get("maven") else "mvn"


def base_args(*, offline: bool, maven: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """Batch mode, no transfer noise, the Maven version in the log (``-V``, for the report), our
    repository, and the skip flags."""
    args = [mvn_program(maven), "-B", "-ntp", "-V", f"-Dmaven.repo.local={MAVEN_REPO_PLACEHOLDER}"]
    if offline:
        args.append("-o")
    return args + list(SKIP_FLAGS)


def selectors(tests: Iterable[TestId], *, by_class: bool = False) -> str:
    """Surefire ``-Dtest`` value: ``pkg.Outer$Inner#m1+m2,pkg.Other#m``, classes and methods sorted;
    with ``by_class`` the classes alone (``pkg.Outer$Inner,pkg.Other``): each runs whole, and the
    reader keeps only the selected methods' results.

    The class part is the binary name; the reference harness's ``pkg.Outer.Inner`` never matched.
    Each method is selected as ``m+m[*]``: JUnit 4's ``Parameterized`` runner names its
    invocations ``m[0]``, ``m[1]`` and Surefire's JUnit 4 providers (2.19.1 to 3.2.5 observed)
    match the pattern against that whole name, so ``#m`` alone runs nothing of such a class
    (commons-codec 625cedf1, ``MessageDigestAlgorithmsTest``). ``m[*]`` matches only the
    bracketed invocations of ``m`` itself, never ``mOther``; JUnit 5 matches the plain name.
    A method whose name is not ASCII is selected by the names ``javac`` gives it in the other
    encodings a build may read its source in, too (:func:`~.surefire.compiled_names`).
    """
    methods_of: defaultdict[str, set[str]] = defaultdict(set)
    for test in tests:
        methods_of[test.class_name].add(test.method)
    if by_class:
        return ",".join(sorted(methods_of))
    return ",".join(
        f"{cls}#{'+'.join(f'{n}+{n}[*]' for m in sorted(methods) for n in (m, *compiled_names(m)))}"
        for cls, methods in sorted(methods_of.items())
    )


def compile_step(
    *,
    java_version: int,
    timeout: float,
    offline: bool = True,
    maven: tuple[tuple[str, str], ...] = (),
    extra_args: Sequence[str] = (),
    main_only: bool = False,
) -> BuildStep:
    """``mvn test-compile`` (or ``compile`` with ``main_only``): main and test sources in one launch."""
    phase = "compile" if main_only else "test-compile"
    argv = (*base_args(offline=offline, maven=maven), *extra_args, phase)
    return BuildStep(
        name=phase,
        argv=argv,
        timeout=timeout,
        java_version=java_version,
        network=not offline,
        tools=maven,
    )


def selection_step(
    tests: Iterable[TestId] | None,
    *,
    java_version: int,
    timeout: float,
    includes: Sequence[str] = (),
    offline: bool = True,
    maven: tuple[tuple[str, str], ...] = (),
    extra_args: Sequence[str] = (),
    name: str = "test",
    by_class: bool = False,
    whole_modules: bool = False,
    test_network: bool = False,
    java_options: Sequence[str] = (),
    warm: bool = False,
) -> BuildStep:
    """``mvn test -Dtest=<selectors>``; with ``includes`` the JaCoCo agent rides along in
    ``JAVA_TOOL_OPTIONS``. ``tests=None`` or empty selects :data:`WARMUP_SELECTOR` (warm-up).
    ``name`` is ``"compile+test"`` when this one launch also does the compilation; ``by_class``
    selects the tests' whole classes (:func:`selectors`); ``whole_modules`` selects nothing, so
    the built modules run their whole test phase as the project's own ``mvn test`` does.
    ``test_network`` lets the tests reach the network (Maven itself stays offline);
    ``java_options`` go to every ``java`` launch of the step through ``JDK_JAVA_OPTIONS``
    (:mod:`~pytest_tebench.run.maven.modulepath`); ``warm``: the build's tests fork, so the step
    may run in a warm Maven JVM (``BuildStep.warm``)."""
    chosen = list(tests) if tests is not None else []
    selector = selectors(chosen, by_class=by_class) if chosen else WARMUP_SELECTOR
    select = () if whole_modules and chosen else (f"-Dtest={selector}",)
    argv = (*base_args(offline=offline, maven=maven), *TEST_FLAGS, *extra_args, *select, "test")
    env: tuple[tuple[str, str], ...] = ()
    if includes:
        env = (("JAVA_TOOL_OPTIONS", agent_option(includes)),)
    if java_options:
        env = (*env, (modulepath.VARIABLE, " ".join(java_options)))
    return BuildStep(
        name=name,
        argv=argv,
        timeout=timeout,
        java_version=java_version,
        env=env,
        network=not offline,
        test_network=test_network,
        tools=maven,
        warm=warm,
    )


def resolve_artifact_step(
    artifact: str,
    *,
    java_version: int,
    timeout: float,
    maven: tuple[tuple[str, str], ...] = (),
    transitive: bool = False,
) -> BuildStep:
    """Online ``dependency:get`` of one artifact (the JaCoCo agent or CLI; with ``transitive``, a
    Surefire provider and its own dependency tree) into the repository."""
    argv = (
        mvn_program(maven),
        "-B",
        "-ntp",
        f"-Dmaven.repo.local={MAVEN_REPO_PLACEHOLDER}",
        f"{DEPENDENCY_PLUGIN}:get",
        f"-Dartifact={artifact}",
        f"-Dtransitive={str(transitive).lower()}",
    )
    short = "agent" if artifact == AGENT_ARTIFACT else "cli" if artifact == CLI_ARTIFACT else ""
    return BuildStep(
        name=f"resolve-jacoco-{short}" if short else "resolve-provider",
        argv=argv,
        timeout=timeout,
        java_version=java_version,
        network=True,
        tools=maven,
    )


def effective_pom_step(
    output: str,
    *,
    java_version: int,
    timeout: float,
    offline: bool = True,
    maven: tuple[tuple[str, str], ...] = (),
    extra_args: Sequence[str] = (),
) -> BuildStep:
    """``help:effective-pom`` of the whole reactor into ``output`` (relative to the workspace),
    with the flags and JDK of evaluation, so the same profiles are active."""
    argv = (
        *base_args(offline=offline, maven=maven),
        *extra_args,
        f"{HELP_PLUGIN}:effective-pom",
        f"-Doutput={output}",
    )
    return BuildStep(
        name="effective-pom",
        argv=argv,
        timeout=timeout,
        java_version=java_version,
        network=not offline,
        tools=maven,
    )


def resolve_plan_step(
    pom: str, *, java_version: int, timeout: float, maven: tuple[tuple[str, str], ...] = ()
) -> BuildStep:
    """Online ``resolve-plugins`` and ``resolve`` of a resolver POM (``buildplan.resolver_pom``)."""
    argv = (
        *base_args(offline=False, maven=maven),
        "-f",
        pom,
        f"{DEPENDENCY_PLUGIN}:resolve-plugins",
        f"{DEPENDENCY_PLUGIN}:resolve",
    )
    return BuildStep(
        name="resolve-plan", argv=argv, timeout=timeout, java_version=java_version, network=True, tools=maven
    )
