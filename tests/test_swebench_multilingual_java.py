"""Build mode of SWE-bench Multilingual's Java Maven rows, without Maven or Docker: the scripts and
tools it writes, the split of a private Maven repository, where each row runs, the JDK preference,
and one prediction's run on recorded logs (a fake executor writes the eval script's log)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.benchmarks.swebench.multilingual import java_build
from pytest_tebench.benchmarks.swebench.multilingual import where
from pytest_tebench.benchmarks.swebench.multilingual.java_build import JavaBuild
from pytest_tebench.benchmarks.swebench.multilingual.java_build import JavaRow
from pytest_tebench.benchmarks.swebench.official_images import Decision
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.maven import jdk
from pytest_tebench.run.maven import local_repo
from pytest_tebench.run.maven.jdkreq import Constraint
from pytest_tebench.run.maven.jdkreq import JdkRequirement
from pytest_tebench.run.maven.profiles import VersionRange
from pytest_tebench.run.maven.settings import MavenSettings

pytest.importorskip("swebench")

HEREDOC = "EOF_114329324912"
#: The shape of a Multilingual gson row's eval_script (google__gson-2311), shortened.
EVAL_SCRIPT = f"""#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
git status
git checkout 9f26679e gson/src/test/java/com/google/gson/JsonPrimitiveTest.java
git apply -v - <<'{HEREDOC}'
--- a/gson/src/test/java/com/google/gson/JsonPrimitiveTest.java
+++ b/gson/src/test/java/com/google/gson/JsonPrimitiveTest.java
@@ -1 +1 @@
-  // see /testbed/README
+  // still /testbed/README
{HEREDOC}
: '>>>>> Start Test Output'
(mvnd test -B -T 1C -pl gson -Dtest=com.google.gson.JsonPrimitiveTest#testA && mvnd test -B -T 1C -pl gson -Dtest=com.google.gson.JsonPrimitiveTest#testB) | cat
: '>>>>> End Test Output'
"""


# --------------------------------------------------------------------------- scripts and tools


def test_the_scripts_testbed_is_the_checkout_in_the_container_but_not_inside_a_patch() -> None:
    script = java_build.container_script(EVAL_SCRIPT)
    assert "cd /workspace/testbed\n" in script
    assert "safe.directory /workspace/testbed\n" in script
    # the here-document is the test patch: its text is applied as written
    assert "-  // see /testbed/README\n+  // still /testbed/README\n" in script
    assert script.count("/workspace/testbed") == 2


def test_the_setup_runs_the_specs_commands_in_swebenchs_order_and_stops_at_the_first_failure() -> None:
    spec = {"pre_install": ["sed -i s/a/b/ pom.xml"], "install": ["mvn clean install -B -DskipTests"],
            "build": ["./mvnw clean install -B -pl core -DskipTests -am"], "test_cmd": ["ignored"]}  # fmt: skip
    assert java_build.setup_commands(spec) == [
        "sed -i s/a/b/ pom.xml",
        "mvn clean install -B -DskipTests",
        "./mvnw clean install -B -pl core -DskipTests -am",
    ]
    script = java_build.setup_script(spec)
    assert script.splitlines()[:3] == ["#!/bin/bash", "set -euxo pipefail", "cd /workspace/testbed"]
    assert script.index("sed -i") < script.index("mvn clean install") < script.index("./mvnw")


def test_maven_is_pointed_at_a_private_head_before_read_only_tails_and_offline_in_the_tests() -> None:
    tails = ("/opt/tools/installed", "/maven-repo")
    offline = java_build.maven_args(tails=tails, offline=True)
    assert offline == (
        "-o -Dmaven.repo.local=/workspace/m2 -Dmaven.repo.local.tail=/opt/tools/installed,/maven-repo"
    )
    assert not java_build.maven_args(tails=tails, offline=False).startswith("-o")
    launcher = java_build.launcher(offline)
    assert "export PATH=/opt/tools/shim:$PATH" in launcher
    assert "export MAVEN_USER_HOME=/opt/tools/wrapper" in launcher
    # the official image's ENV TZ, set before the script runs (its tests' default time zone)
    assert launcher.index("export TZ=Etc/UTC\n") < launcher.index("exec /bin/bash")
    assert f"export MAVEN_ARGS='{offline}'" in launcher
    assert launcher.rstrip().endswith("/workspace/eval.sh >/workspace/eval.log 2>&1")


def test_the_wrapper_finds_its_distribution_where_mvnw_3_3_looks(tmp_path: Path) -> None:
    url = (
        "https://repo.maven.apache.org/maven2/org/apache/maven/apache-maven/3.9.9/apache-maven-3.9.9-bin.zip"
    )
    # mvnw's own hash_string of javaparser's distributionUrl, computed by its shell function
    assert java_build.wrapper_hash(url) == "3477a4f1"
    shim, home = java_build.tool_dirs(tmp_path, url)
    link = home / "wrapper" / "dists" / "apache-maven-3.9.9" / "3477a4f1"
    assert link.is_symlink() and str(link.readlink()) == "/opt/tools/wrapper-maven"
    for name in ("mvn", "mvnd"):
        assert (shim / name).read_text() == '#!/bin/sh\nexec /opt/tools/maven/bin/mvn "$@"\n'
        assert (shim / name).stat().st_mode & 0o111


def test_a_wrapper_distribution_from_another_host_is_unsupported(tmp_path: Path) -> None:
    properties = tmp_path / ".mvn" / "wrapper" / "maven-wrapper.properties"
    properties.parent.mkdir(parents=True)
    assert java_build.wrapper_distribution(tmp_path) is None
    properties.write_text(
        "distributionUrl=https\\://repo.maven.apache.org/maven2/org/apache/maven/apache-maven/3.9.6/"
        "apache-maven-3.9.6-bin.zip\n"
    )
    url, version = java_build.wrapper_distribution(tmp_path) or ("", "")
    assert version == "3.9.6" and url.startswith("https://repo.maven.apache.org/")
    properties.write_text("distributionUrl=https://example.invalid/dists/apache-maven-3.9.6-bin.zip\n")
    with pytest.raises(UnsupportedEnvironment, match=r"example\.invalid.*Maven Central"):
        java_build.wrapper_distribution(tmp_path)


# --------------------------------------------------------------------------- the private repository


def _file(root: Path, relative: str, text: str = "x") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_downloads_go_to_the_shared_repository_and_installed_artifacts_never(tmp_path: Path) -> None:
    head, shared = tmp_path / "head", tmp_path / "shared"
    # as Maven Resolver 1.9 writes them after `mvn install -pl gson -am` (gson-1014)
    junit = "junit/junit/4.12"
    _file(head, f"{junit}/junit-4.12.jar", "jar")
    _file(head, f"{junit}/junit-4.12.pom", "pom")
    _file(head, f"{junit}/_remote.repositories", "#NOTE\njunit-4.12.jar>central=\njunit-4.12.pom>central=\n")
    _file(head, "junit/junit/maven-metadata-central.xml")
    _file(head, "org/x/broken/1.0/broken-1.0.jar.lastUpdated")
    gson = "com/google/code/gson/gson/2.8.1-SNAPSHOT"
    _file(head, f"{gson}/gson-2.8.1-SNAPSHOT.jar", "ours")
    _file(
        head, f"{gson}/_remote.repositories", "#NOTE\ngson-2.8.1-SNAPSHOT.jar>=\ngson-2.8.1-SNAPSHOT.pom>=\n"
    )
    _file(head, f"{gson}/gson-2.8.1-SNAPSHOT.pom")
    _file(head, f"{gson}/maven-metadata-local.xml")
    _file(head, "com/google/code/gson/gson/maven-metadata-local.xml")
    _file(shared, f"{junit}/junit-4.12.pom", "pom (already shared)")

    split = local_repo.merge_downloads(head, shared)

    assert split.moved == 3 and split.already_shared == 1
    assert (shared / junit / "junit-4.12.jar").read_text() == "jar"
    assert (shared / junit / "junit-4.12.pom").read_text() == "pom (already shared)"
    assert not list(shared.rglob("*gson*")) and not list(shared.rglob("*.lastUpdated"))
    assert split.installed == (
        "com/google/code/gson/gson/2.8.1-SNAPSHOT/_remote.repositories",
        "com/google/code/gson/gson/2.8.1-SNAPSHOT/gson-2.8.1-SNAPSHOT.jar",
        "com/google/code/gson/gson/2.8.1-SNAPSHOT/gson-2.8.1-SNAPSHOT.pom",
        "com/google/code/gson/gson/2.8.1-SNAPSHOT/maven-metadata-local.xml",
        "com/google/code/gson/gson/maven-metadata-local.xml",
    )
    left = sorted(str(p.relative_to(head)) for p in head.rglob("*") if p.is_file())
    assert left == list(split.installed)
    assert not (head / "junit").exists() and not (head / "org").exists()


#: javaparser's root pom.xml (e0eb16b8, shortened): every test JVM starts with an agent named by its
#: path in the local repository, not resolved as a dependency.
NAMING_POM = """<project>
  <properties>
    <byte-buddy.version>1.14.19</byte-buddy.version>
    <argLine>-javaagent:'${settings.localRepository}/net/bytebuddy/byte-buddy-agent/${byte-buddy.version}/byte-buddy-agent-${byte-buddy.version}.jar'</argLine>
    <too.wide>${maven.repo.local}/org/${x}</too.wide>
  </properties>
</project>
"""
#: What the test JVM said when the head lacked it (javaparser-4538's offline test phase, gold).
NO_AGENT = """+ ./mvnw test -B -pl javaparser-core-testing -Dtest=NodeTest
Error opening zip file or JAR manifest missing : /workspace/m2/net/bytebuddy/byte-buddy-agent/1.14.19/byte-buddy-agent-1.14.19.jar
[ERROR] Error occurred during initialization of VM
[INFO] Tests run: 0, Failures: 0, Errors: 0, Skipped: 0
[ERROR] The forked VM terminated without properly saying goodbye. VM crash or System.exit called?
[INFO] BUILD FAILURE
"""


def test_the_files_a_pom_names_by_local_repository_path_are_linked_into_the_head(tmp_path: Path) -> None:
    tree, head = tmp_path / "testbed", tmp_path / "head"
    _file(tree, "pom.xml", NAMING_POM)
    _file(tree, "core/pom.xml", "<project><argLine>${argLine}</argLine></project>")
    _file(tree, "core/target/classes/pom.xml", NAMING_POM.replace("net/bytebuddy", "com/built"))
    assert local_repo.named_artifact_dirs(tree) == ["net/bytebuddy/byte-buddy-agent"]

    installed, shared = tmp_path / "installed", tmp_path / "shared"
    agent = "net/bytebuddy/byte-buddy-agent/1.14.19"
    _file(shared, f"{agent}/byte-buddy-agent-1.14.19.jar", "jar")
    _file(shared, f"{agent}/byte-buddy-agent-1.14.19.pom", "pom")
    _file(shared, f"{agent}/_remote.repositories", "byte-buddy-agent-1.14.19.jar>central=\n")
    _file(installed, f"{agent}/byte-buddy-agent-1.14.19.pom", "installed pom")
    _file(head, f"{agent}/byte-buddy-agent-1.14.19.jar.sha1", "the head's own")
    _file(shared, f"{agent}/byte-buddy-agent-1.14.19.jar.sha1", "shared")
    tails = ((installed, "/opt/tools/installed"), (shared, "/maven-repo"))

    made = local_repo.link_named_files(head, ["net/bytebuddy/byte-buddy-agent"], tails)

    assert made == 2
    assert str((head / agent / "byte-buddy-agent-1.14.19.jar").readlink()) == (
        "/maven-repo/net/bytebuddy/byte-buddy-agent/1.14.19/byte-buddy-agent-1.14.19.jar"
    )
    # the first tail first, as Maven's tail chain reads them; the head's own file stays
    assert str((head / agent / "byte-buddy-agent-1.14.19.pom").readlink()).startswith("/opt/tools/installed/")
    assert (head / agent / "byte-buddy-agent-1.14.19.jar.sha1").read_text() == "the head's own"
    # the resolver's record is never a link: the head would write through it into a read-only tail
    assert not (head / agent / "_remote.repositories").exists()

    # the links are no one's download: the merge drops them, the shared repository is untouched
    split = local_repo.merge_downloads(head, shared)
    assert (split.moved, split.already_shared, split.installed) == (0, 1, ())  # the head's own .sha1
    assert (shared / agent / "byte-buddy-agent-1.14.19.jar.sha1").read_text() == "shared"
    assert not any(path.is_symlink() for path in head.rglob("*"))
    assert not any(path.is_symlink() for path in shared.rglob("*"))


# --------------------------------------------------------------------------- where rows run


@pytest.mark.parametrize("repo", ["google/gson", "javaparser/javaparser", "pytest-tebench/jcalc"])
def test_the_java_maven_rows_are_built_here_by_the_registered_builder(repo: str) -> None:
    from pytest_tebench.benchmarks.swebench.multilingual import built

    for mode in ("build", "auto"):
        assert where.decide(repo, "java", mode) == Decision("build", None)
    assert where.decide(repo, "java", "official").where == "official"
    assert where.BUILDERS[repo] is built.BUILDER


def test_druid_is_not_built_here_for_want_of_sigar() -> None:
    decision = where.decide("apache/druid", "java", "build")
    assert decision.where == "unsupported" and "org.hyperic:sigar" in str(decision.reason)


# --------------------------------------------------------------------------- the JDK


def _installs(*versions: int) -> dict[int, jdk.JdkInstall]:
    return {v: jdk.JdkInstall(v, Path(f"/opt/java/{v}"), str(v)) for v in versions}


def test_the_benchmarks_own_jdk_is_preferred_when_the_build_accepts_it() -> None:
    installs = _installs(8, 11, 17, 21)
    # gson 2017: source 1.6; SWE-bench ran it on JDK 11 (JDK 8 would be the chooser's own pick)
    assert jdk.choose_for(6, installs).version == 8
    chosen = jdk.choose_for(6, installs, preferred=11)
    assert chosen.version == 11 and "benchmark" in chosen.reason
    # JDK 17 refuses source 6: the preference yields to the build
    assert jdk.choose_for(6, installs, preferred=17).version == 8
    enforced = JdkRequirement(7, (Constraint("enforcer [11,)", allowed=(VersionRange(11),)),))
    assert jdk.choose_for(enforced, installs, preferred=8).version == 11
    assert jdk.choose_for(6, installs, override=21, preferred=11).version == 21


# --------------------------------------------------------------------------- one prediction's run


#: The eval log of an offline test phase before Surefire's JUnit provider was fetched (gson-1014).
MISSING_PROVIDER = """+ mvnd test -B -T 1C -pl gson -Dtest=com.google.gson.JsonPrimitiveTest#testA
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:2.12.4:test (default-test) on project gson: Unable to generate classpath: org.apache.maven.artifact.resolver.ArtifactResolutionException: Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and the artifact org.apache.maven.surefire:surefire-junit3:jar:2.12.4 has not been downloaded from it before.
[INFO] BUILD FAILURE
"""
PASSING = """+ : '>>>>> Start Test Output'
+ mvnd test -B -T 1C -pl gson -Dtest=com.google.gson.JsonPrimitiveTest#testA
[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0
[INFO] BUILD SUCCESS
+ : '>>>>> End Test Output'
"""


class RecordedExecutor:
    """Runs nothing: each step gets the next recorded log written where the launcher would write it."""

    name = "recorded"

    def __init__(self, logs: list[str]) -> None:
        self.logs = list(logs)
        self.steps: list[BuildStep] = []
        self.scripts: list[str] = []

    def run(self, workspace: Path, step: BuildStep, *, maven_repo: Path, **_: Any) -> StepResult:
        self.steps.append(step)
        self.scripts.append((workspace / java_build.SCRIPT).read_text())
        (workspace / java_build.LOG).write_text(self.logs.pop(0))
        return StepResult(step.name, step.argv, 0, False, 1.0, "", "recorded")

    def java_versions(self) -> tuple[int, ...]:
        return (8, 11, 17, 21)

    def toolchain(self) -> str:
        return "recorded"


def _repository(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    for argv in (["init", "-q"], ["config", "user.email", "t@t"], ["config", "user.name", "t"]):
        subprocess.run(["git", *argv], cwd=repo, check=True)
    (repo / "Calc.java").write_text("class Calc {}\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "base"], cwd=repo, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True)
    return repo, head.stdout.strip()


FIX = "--- a/Calc.java\n+++ b/Calc.java\n@@ -1 +1 @@\n-class Calc {}\n+class Calc { int x; }\n"


def _environment(tmp_path: Path, build: JavaBuild) -> java_build.JavaEnvironment:
    folder = tmp_path / "env"
    (folder / "installed").mkdir(parents=True)
    (folder / "environment.json").write_text(json.dumps({"tests_warmed": False}))
    tools = (("installed", str(folder / "installed")),)
    return java_build.JavaEnvironment("k", 11, "test", tools, folder / "installed", folder)


def test_a_run_lacking_an_artifact_warms_the_tests_up_with_gold_once_then_runs_offline_again(
    tmp_path: Path,
) -> None:
    source, base = _repository(tmp_path)
    executor = RecordedExecutor([MISSING_PROVIDER, PASSING, PASSING, PASSING])
    maven = MavenSettings(maven_repo=tmp_path / "m2")
    build = JavaBuild(executor, cache_dir=tmp_path / "cache", maven=maven, test_timeout=60)  # type: ignore[arg-type]
    row = JavaRow("google__gson-1", "google/gson", "2311", base, FIX, EVAL_SCRIPT)
    environment = _environment(tmp_path, build)

    run = build.run_prediction(row, source, environment, "")  # an empty patch applies nowhere
    assert run.apply_method is None and executor.steps == []

    run = build.run_prediction(row, source, environment, FIX)
    assert run.apply_method is not None and run.log == PASSING
    assert [(s.name, s.network) for s in executor.steps] == [
        ("swebench-java-test", False),
        ("swebench-java-setup", True),  # gold, online
        ("swebench-java-test", False),
    ]
    assert all(s.java_version == 11 and s.tools == environment.tools for s in executor.steps)
    assert all("cd /workspace/testbed" in script for script in executor.scripts)
    assert environment.tests_warmed
    # warmed once per environment: a later run that lacks something is the run's own failure
    executor.logs = [MISSING_PROVIDER]
    again = build.run_prediction(row, source, environment, FIX)
    assert again.log == MISSING_PROVIDER and len(executor.steps) == 4


class LinkCheckingExecutor(RecordedExecutor):
    """Records what the head holds when the step starts, as the container would see it."""

    def __init__(self, logs: list[str]) -> None:
        super().__init__(logs)
        self.heads: list[dict[str, str]] = []

    def run(self, workspace: Path, step: BuildStep, *, maven_repo: Path, **kwargs: Any) -> StepResult:
        head = workspace / java_build.HEAD
        self.heads.append(
            {str(p.relative_to(head)): str(p.readlink()) for p in head.rglob("*") if p.is_symlink()}
        )
        return super().run(workspace, step, maven_repo=maven_repo, **kwargs)


def test_a_test_jvm_agent_named_by_local_repository_path_is_in_the_head_of_every_run(tmp_path: Path) -> None:
    """javaparser-4538's gold failed so (NO_AGENT): the agent was in the shared tail, not the head."""
    source, base = _repository(tmp_path)
    (source / "pom.xml").write_text(NAMING_POM)
    subprocess.run(["git", "add", "-A"], cwd=source, check=True)
    subprocess.run(["git", "commit", "-qm", "pom"], cwd=source, check=True)
    base = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=source, check=True, capture_output=True, text=True
    ).stdout.strip()
    jar = "net/bytebuddy/byte-buddy-agent/1.14.19/byte-buddy-agent-1.14.19.jar"
    _file(tmp_path / "m2", jar, "agent")
    executor = LinkCheckingExecutor([PASSING])
    maven = MavenSettings(maven_repo=tmp_path / "m2")
    build = JavaBuild(executor, cache_dir=tmp_path / "cache", maven=maven, test_timeout=60)  # type: ignore[arg-type]
    row = JavaRow("javaparser__javaparser-1", "javaparser/javaparser", "4538", base, FIX, EVAL_SCRIPT)

    run = build.run_prediction(row, source, _environment(tmp_path, build), FIX)

    assert run.log == PASSING
    assert executor.heads == [{jar: f"/maven-repo/{jar}"}]
    assert "/workspace/m2/" + jar in NO_AGENT  # the path the JVM was given is the head's


def test_gold_that_does_not_apply_is_a_harness_error_not_a_warm_up(tmp_path: Path) -> None:
    source, base = _repository(tmp_path)
    executor = RecordedExecutor([MISSING_PROVIDER])
    maven = MavenSettings(maven_repo=tmp_path / "m2")
    build = JavaBuild(executor, cache_dir=tmp_path / "cache", maven=maven, test_timeout=60)  # type: ignore[arg-type]
    row = JavaRow("google__gson-1", "google/gson", "2311", base, "not a patch\n", EVAL_SCRIPT)
    with pytest.raises(HarnessError, match="gold's patch of google__gson-1 does not apply"):
        build.run_prediction(row, source, _environment(tmp_path, build), FIX)


def test_a_built_row_is_refused_before_its_builder_runs_and_keeps_the_builders_run() -> None:
    from pytest_tebench.benchmarks.swebench.multilingual.official_run import MultilingualPrepared
    from pytest_tebench.benchmarks.swebench.multilingual.official_run import MultilingualRuns
    from pytest_tebench.benchmarks.swebench.multilingual.rows import MultilingualInstance
    from pytest_tebench.benchmarks.swebench.patch_run import PatchRun

    calls: list[str] = []

    class Builder:
        def prepare(self, instance: Any, context: Any) -> Any:
            return "env"

        def run(self, payload: Any, built: Any, patch: str, context: Any) -> PatchRun:
            calls.append(built)
            return PatchRun(apply_method="git apply --verbose", log=PASSING, timings={"tests": 2.0})

    test_patch = "--- a/src/test/java/CalcTest.java\n+++ b/src/test/java/CalcTest.java\n@@ -1 +1 @@\n-a\n+b\n"
    payload = MultilingualInstance(
        instance_id="x__built-1", repo="x/built", version="1", base_commit="0" * 40,
        environment_setup_commit="0" * 40, patch=FIX, test_patch=test_patch, fail_to_pass=("CalcTest",),
        pass_to_pass=(), log_parser="parse_log_maven", language="java", eval_script=EVAL_SCRIPT,
    )  # fmt: skip
    where.register_builder("x/built", Builder())
    try:
        runs = MultilingualRuns(lambda context: None, timeout=10, network=False, images="build")  # type: ignore[arg-type,return-value]
        prepared = MultilingualPrepared("java11", {}, None, "java", built="env")
        wrapper = "--- a/mvnw\n+++ b/mvnw\n@@ -1 +1 @@\n-exec mvn\n+echo BUILD SUCCESS\n"
        refused = runs.run(payload, prepared, wrapper, None)  # type: ignore[arg-type]
        assert refused.refusals and calls == []
        run = runs.run(payload, prepared, FIX, None)  # type: ignore[arg-type]
    finally:
        del where.BUILDERS["x/built"]
    assert calls == ["env"] and run.log == PASSING and run.refusals == []
    assert run.test_command.startswith("(mvnd test -B -T 1C -pl gson")
    assert "java" in str(run.guard_reason) and set(run.timings) >= {"refusal_check", "tests"}


def test_a_mirror_lacking_a_file_of_the_commit_is_a_harness_error_naming_it(tmp_path: Path) -> None:
    source, base = _repository(tmp_path)
    blob = subprocess.run(
        ["git", "rev-parse", f"{base}:Calc.java"], cwd=source, check=True, capture_output=True, text=True
    ).stdout.strip()
    (source / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # a snapshot without its largest files
    with pytest.raises(HarnessError, match=f"lacks the content of {blob} .*incomplete clone"):
        java_build.checkout(source, base, tmp_path / "tree")


def test_surefires_legacy_missing_provider_message_calls_for_a_warm_up() -> None:
    from pytest_tebench.run.maven import log as mavenlog

    # google__gson-2134, offline: Surefire 3.0.0-M7 resolves its JUnit provider the old way
    recorded = """[INFO] BUILD FAILURE
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.0.0-M7:test (default-test) on project gson: Missing:
[ERROR] ----------
[ERROR] 1) org.apache.maven.surefire:surefire-junit4:jar:3.0.0-M7
[ERROR] ----------
[ERROR] 1 required artifact is missing.
"""
    assert mavenlog.missing_artifacts(recorded)
    assert not mavenlog.missing_artifacts("[ERROR] Failed to execute goal ...: There are test failures.\n")


def test_a_built_rows_patch_that_does_not_apply_is_not_applied() -> None:
    # a row built here applies the patch before any container runs: no result to read
    from pytest_tebench.benchmarks.swebench import official_eval
    from pytest_tebench.benchmarks.swebench.patch_run import PatchRun

    run = PatchRun(apply_log="error: nothere.java: No such file or directory")
    record: dict[str, object] = {"status": None}
    out = official_eval.unjudged_record(record, {}, run, timeout=60)
    assert out is not None
    assert out["status"] == "not_applied"
    assert "nothere.java" in str(out["error"])
