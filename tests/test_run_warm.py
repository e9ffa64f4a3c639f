"""The warm Maven JVM (run/maven/warm.py) and the local executor's use of it.

The server itself runs here for real, on a stand-in Maven distribution compiled from
tests/fixtures/warm-maven-stub (a MavenCli whose arguments are actions): isolation between builds,
timeouts, a server that dies, leftover processes and threads. What the build layer decides (which
steps may run warm) is tested on effective POMs and journal entries written by hand. The real
Maven equivalence (cold vs warm on the demo) is the one ``maven`` test at the end.
"""

from __future__ import annotations

import subprocess
import threading
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_tebench.errors import HarnessError
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executors import EXECUTOR_OPTIONS
from pytest_tebench.run.executors import ExecutorOptions
from pytest_tebench.run.executors import warm_jvm
from pytest_tebench.run.local import LocalExecutor
from pytest_tebench.run.maven import warm
from pytest_tebench.run.maven.buildplan import surefire_forks
from pytest_tebench.run.maven.jacoco import CLI_JAR
from pytest_tebench.run.maven.jacoco import report_step
from pytest_tebench.run.maven.jdk import discover_jdks
from pytest_tebench.run.maven.jdkreq import jvm_config_constraints
from pytest_tebench.run.maven.journal import FORKS
from pytest_tebench.run.maven.journal import append_entry
from pytest_tebench.run.maven.journal import recorded_forks
from pytest_tebench.run.maven.jvm_config import config_words
from pytest_tebench.run.maven.jvm_config import jvm_config
from pytest_tebench.run.maven.jvm_config import project_basedir
from pytest_tebench.run.maven.profiles import jvm_config_properties
from pytest_tebench.run.maven.steps import selection_step

from conftest import PREDICTIONS
from conftest import DemoRun
from conftest import comparable_result
from conftest import coverage_report_warmth

STUB = Path(__file__).parent / "fixtures" / "warm-maven-stub"
JACOCO_STUB = Path(__file__).parent / "fixtures" / "jacoco-cli-stub"
MVN = "{tool:maven}/bin/mvn"


def _jdk() -> Path | None:
    found = {v: j.home for v, j in discover_jdks().items() if v >= 9 and (j.home / "bin" / "javac").is_file()}
    return found[max(found)] if found else None


JDK = _jdk()
needs_jdk = pytest.mark.skipif(JDK is None, reason="needs a JDK 9+ with javac")


def _jar(target: Path, classes: Path, prefix: str) -> None:
    with zipfile.ZipFile(target, "w") as jar:
        for path in sorted(classes.rglob("*.class")):
            name = path.relative_to(classes).as_posix()
            if name.startswith(prefix):
                jar.write(path, name)


@pytest.fixture(scope="module")
def fake_maven(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Maven home of stand-ins: boot/plexus-classworlds-stub.jar, lib/maven-embedder-stub.jar,
    bin/m2.conf as Maven's, and a bin/mvn that only says it ran (the cold path)."""
    assert JDK is not None
    home = tmp_path_factory.mktemp("maven") / "apache-maven-stub"
    classes = home.parent / "classes"
    sources = [str(p) for p in STUB.glob("*.java")]
    subprocess.run([str(JDK / "bin" / "javac"), "-nowarn", "-d", str(classes), *sources], check=True)
    for folder in ("boot", "lib", "bin"):
        (home / folder).mkdir(parents=True)
    _jar(home / "boot" / "plexus-classworlds-stub.jar", classes, "org/codehaus/")
    _jar(home / "lib" / "maven-embedder-stub.jar", classes, "org/apache/")
    (home / "bin" / "m2.conf").write_text(
        "main is org.apache.maven.cli.MavenCli from plexus.core\n\n"
        "set maven.conf default ${maven.home}/conf\n\n"
        "[plexus.core]\nload       ${maven.home}/lib/*.jar\n",
        encoding="utf-8",
    )
    mvn = home / "bin" / "mvn"
    mvn.write_text('#!/bin/sh\necho "[cold mvn] $*"\n', encoding="utf-8")
    mvn.chmod(0o755)
    return home


@pytest.fixture(scope="module")
def jacoco_stub(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Maven repository holding the stand-in JaCoCo CLI jar where JaCoCo's own would be."""
    assert JDK is not None
    repo = tmp_path_factory.mktemp("jacoco-repo")
    classes = repo.parent / "jacoco-classes"
    subprocess.run(
        [str(JDK / "bin" / "javac"), "-nowarn", "-d", str(classes), str(JACOCO_STUB / "Main.java")],
        check=True,
    )
    (repo / CLI_JAR).parent.mkdir(parents=True)
    _jar(repo / CLI_JAR, classes, "org/jacoco/")
    with zipfile.ZipFile(repo / CLI_JAR, "a") as jar:
        jar.writestr(
            "META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nMain-Class: org.jacoco.cli.internal.Main\n"
        )
    return repo


@pytest.fixture
def executor(tmp_path: Path):  # type: ignore[no-untyped-def]
    assert JDK is not None
    found = LocalExecutor(jdks={17: JDK}, warm_jvm=True, warm_cache=tmp_path / "warm-cache")
    yield found
    found.close()


def _step(
    fake_maven: Path, *args: str, warm_ok: bool = True, timeout: float = 60, **rest: object
) -> BuildStep:
    return BuildStep(
        name="compile+test",
        argv=(MVN, *args),
        timeout=timeout,
        java_version=17,
        tools=(("maven", str(fake_maven)),),
        warm=warm_ok,
        **rest,  # type: ignore[arg-type]
    )


def _run(executor: LocalExecutor, tmp_path: Path, step: BuildStep):  # type: ignore[no-untyped-def]
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return executor.run(workspace, step, maven_repo=tmp_path / "repo")


# -- the server, on the stand-in Maven ---------------------------------------------------------


@needs_jdk
def test_builds_share_the_server_but_not_system_properties(
    executor: LocalExecutor, fake_maven: Path, tmp_path: Path
) -> None:
    first = _run(
        executor, tmp_path, _step(fake_maven, "set-prop=tebench.leak", "print-prop=tebench.leak", "user-dir")
    )
    second = _run(executor, tmp_path, _step(fake_maven, "print-prop=tebench.leak", "code=5"))
    assert first.ok and first.extra["warm_jvm"] == "started"
    assert "[stub] property tebench.leak=leaked" in first.output
    assert f"[stub] user.dir={(tmp_path / 'ws').resolve()}" in first.output
    # the same JVM (the core realm's counter went on) and the property the first build set is gone
    assert second.extra["warm_jvm"] == "reused"
    assert "[stub] build 2 in" in second.output
    assert "[stub] property tebench.leak=null" in second.output
    assert second.exit_code == 5 and not second.timed_out


@needs_jdk
def test_a_steps_variables_reach_its_forks_and_no_later_build(
    executor: LocalExecutor, fake_maven: Path, tmp_path: Path
) -> None:
    first = _run(
        executor, tmp_path, _step(fake_maven, "print-env=TEBENCH_AGENT", env=(("TEBENCH_AGENT", "on"),))
    )
    second = _run(executor, tmp_path, _step(fake_maven, "print-env=TEBENCH_AGENT"))
    assert "[stub] env TEBENCH_AGENT=on" in first.output
    assert "[stub] fork env TEBENCH_AGENT=on" in first.output
    assert second.extra["warm_jvm"] == "reused"
    assert "[stub] env TEBENCH_AGENT=null" in second.output
    assert "[stub] fork env TEBENCH_AGENT=unset" in second.output


@needs_jdk
def test_a_build_that_leaves_a_thread_gets_a_new_server_next(
    executor: LocalExecutor, fake_maven: Path, tmp_path: Path
) -> None:
    first = _run(executor, tmp_path, _step(fake_maven, "leave-thread"))
    second = _run(executor, tmp_path, _step(fake_maven))
    assert first.ok and "[stub] done" in first.output
    assert second.extra["warm_jvm"] == "started"
    assert "[stub] build 1 in" in second.output


@needs_jdk
def test_processes_a_build_left_are_killed(executor: LocalExecutor, fake_maven: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon.pid"
    result = _run(executor, tmp_path, _step(fake_maven, f"spawn-daemon={pidfile}"))
    assert result.ok
    pid = int(pidfile.read_text().strip())
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]
    assert not alive, "the daemon a build started outlived it"
    assert _run(executor, tmp_path, _step(fake_maven)).extra["warm_jvm"] == "reused"


@needs_jdk
def test_a_build_past_its_limit_kills_the_server(
    executor: LocalExecutor, fake_maven: Path, tmp_path: Path
) -> None:
    started = time.monotonic()
    result = _run(executor, tmp_path, _step(fake_maven, "sleep=60", timeout=3))
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - started < 30
    assert "killed at its 3 s limit" in result.output
    assert _run(executor, tmp_path, _step(fake_maven)).extra["warm_jvm"] == "started"


@needs_jdk
def test_a_server_that_dies_in_a_build_hands_the_step_to_a_cold_mvn(
    executor: LocalExecutor, fake_maven: Path, tmp_path: Path
) -> None:
    result = _run(executor, tmp_path, _step(fake_maven, "exit=3"))
    assert result.output.startswith("[cold mvn] ") and "exit=3" in result.output
    assert result.extra["warm_jvm"].startswith("off: the warm server ended")
    assert _run(executor, tmp_path, _step(fake_maven)).extra["warm_jvm"] == "started"


@needs_jdk
def _report(fake_maven: Path, *, extra: tuple[str, ...] = ()) -> BuildStep:
    step = report_step(java_version=17, timeout=60, tools=(("maven", str(fake_maven)),))
    return replace(step, argv=(*step.argv, *extra))


@needs_jdk
def test_jacocos_report_runs_in_the_server_without_its_exit(
    executor: LocalExecutor, fake_maven: Path, jacoco_stub: Path, tmp_path: Path
) -> None:
    """The report step (jacoco.report_step, as the build layer makes it) runs JaCoCo's CLI in the
    server, whose class loader it keeps; its exit code and output come back; the server goes on
    serving builds afterwards (JaCoCo's main, which calls System.exit, is never called)."""
    workspace = tmp_path / "ws"
    (workspace / "target").mkdir(parents=True)
    first = executor.run(workspace, _report(fake_maven), maven_repo=jacoco_stub)
    assert first.ok and first.extra["warm_jvm"] == "started", first.output
    assert "maven" not in first.extra
    assert (workspace / "target" / "tebench-jacoco.xml").read_text(encoding="utf-8") == (
        f"report of {workspace.resolve()}/target/tebench-jacoco.exec"
    )
    assert "[jacoco stub] run 1: report " in first.output
    failed = executor.run(workspace, _report(fake_maven, extra=("--unknown",)), maven_repo=jacoco_stub)
    # the classes stayed loaded (its counter went on), the exit code is JaCoCo's
    assert failed.extra["warm_jvm"] == "reused" and "[jacoco stub] run 2" in failed.output
    assert failed.exit_code == 0  # --xml comes first in the step: the stub wrote and returned 0
    thrown = executor.run(
        workspace,
        replace(_report(fake_maven), argv=(*_report(fake_maven).argv[:4], "throw")),
        maven_repo=jacoco_stub,
    )
    assert thrown.exit_code == 1 and "IllegalStateException: stub failure" in thrown.output
    after = executor.run(workspace, _step(fake_maven, "code=0"), maven_repo=jacoco_stub)
    assert after.ok and after.extra["warm_jvm"] == "reused"
    # only the Maven build counts towards the server's replacement (warm.MAX_BUILDS)
    assert executor.warm is not None
    assert [server.builds for _, server in executor.warm.pool.idle] == [1]


@needs_jdk
def test_jacocos_report_without_a_server_runs_as_a_new_jvm(
    fake_maven: Path, jacoco_stub: Path, tmp_path: Path
) -> None:
    assert JDK is not None
    cold = LocalExecutor(jdks={17: JDK})
    workspace = tmp_path / "ws"
    (workspace / "target").mkdir(parents=True)
    done = cold.run(workspace, _report(fake_maven), maven_repo=jacoco_stub)
    assert done.ok and "warm_jvm" not in done.extra, done.output
    assert (workspace / "target" / "tebench-jacoco.xml").is_file()
    # its main's System.exit gives the exit code in a JVM of its own
    thrown = cold.run(
        workspace,
        replace(_report(fake_maven), argv=(*_report(fake_maven).argv[:4], "other")),
        maven_repo=jacoco_stub,
    )
    assert thrown.exit_code == 3


@pytest.mark.parametrize(
    ("argv", "found"),
    [
        (report_step(java_version=17, timeout=1).argv, True),
        (
            ("/usr/lib/jvm/17/bin/java", "-XX:TieredStopAtLevel=1", "-jar", f"/r/{CLI_JAR}", "report", "x"),
            True,
        ),
        (("java", "-jar", f"/r/{CLI_JAR}"), True),
        (("java", "-javaagent:a.jar", "-jar", f"/r/{CLI_JAR}", "report"), False),
        (("java", "-jar", "/r/other-cli.jar", "report"), False),
        (("java", "-jar"), False),
        ((MVN, "-jar", f"/r/{CLI_JAR}"), False),
        (("java", "-cp", f"/r/{CLI_JAR}", "org.jacoco.cli.internal.Main"), False),
    ],
)
def test_jacoco_command_is_only_the_reports(argv: tuple[str, ...], found: bool) -> None:
    assert (warm.jacoco_command(argv) is not None) == found


def test_jacoco_request_and_refusal(tmp_path: Path) -> None:
    step = report_step(java_version=17, timeout=1, tools=(("maven", "/m"),))
    assert warm.refusal(step, tmp_path) == ""
    assert "neither a build" in warm.refusal(replace(step, tools=()), tmp_path)
    jar, args = warm.jacoco_command(step.argv) or ("", ())
    assert warm.jacoco_request("n", tmp_path, jar, args).splitlines() == [
        "BEGIN n",
        f"CWD {tmp_path}",
        "JACOCO {maven_repo}/" + CLI_JAR,
        *(f"ARG {arg}" for arg in step.argv[4:]),
        "END",
    ]
    with pytest.raises(HarnessError, match="line break"):
        warm.jacoco_request("n", tmp_path, jar, ("a\nEND",))


def test_unmarked_steps_run_cold(executor: LocalExecutor, fake_maven: Path, tmp_path: Path) -> None:
    result = _run(executor, tmp_path, _step(fake_maven, "code=0", warm_ok=False))
    assert result.output.startswith("[cold mvn] ") and "code=0" in result.output
    assert result.extra["warm_jvm"].startswith("off: not marked warm")


@needs_jdk
def test_builds_at_once_get_a_server_each(executor: LocalExecutor, fake_maven: Path, tmp_path: Path) -> None:
    results: dict[int, object] = {}

    def build(code: int) -> None:
        results[code] = _run(executor, tmp_path, _step(fake_maven, "sleep=2", f"code={code}"))

    threads = [threading.Thread(target=build, args=(code,)) for code in (3, 4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert {code: results[code].exit_code for code in (3, 4)} == {3: 3, 4: 4}  # type: ignore[attr-defined]
    for code in (3, 4):
        assert results[code].output.count("[stub] done") == 1  # type: ignore[attr-defined]
        assert results[code].extra["warm_jvm"] == "started"  # type: ignore[attr-defined]
    # both went back idle: the next two builds reuse them
    assert _run(executor, tmp_path, _step(fake_maven)).extra["warm_jvm"] == "reused"


@needs_jdk
def test_the_server_is_compiled_once_per_content(fake_maven: Path, tmp_path: Path) -> None:
    assert JDK is not None
    classes, conf = warm.server_files(JDK, fake_maven, tmp_path)
    stamp = (classes / f"{warm.MAIN_CLASS}.class").stat().st_mtime_ns
    assert warm.server_files(JDK, fake_maven, tmp_path) == (classes, conf)
    assert (classes / f"{warm.MAIN_CLASS}.class").stat().st_mtime_ns == stamp
    assert f"main is {warm.MAIN_CLASS} from plexus.core" in conf.read_text()


# -- which steps may run warm ------------------------------------------------------------------


def _plain(*args: str, **rest: object) -> BuildStep:
    return BuildStep(
        name="compile+test",
        argv=(MVN, *args),
        timeout=60,
        tools=(("maven", "/m"),),
        warm=True,
        **rest,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("step", "why"),
    [
        (_plain("test"), ""),
        (BuildStep(name="t", argv=(MVN, "test"), timeout=60, tools=(("maven", "/m"),)), "not marked warm"),
        (_plain("test", network=True), "an online step"),
        (
            BuildStep(name="t", argv=("mvn", "test"), timeout=60, warm=True),
            "neither a build of a resolved Maven",
        ),
        (
            BuildStep(
                name="t", argv=("java", "-jar", "x.jar"), timeout=60, warm=True, tools=(("maven", "/m"),)
            ),
            "nor JaCoCo's report",
        ),
        (_plain("-f", "other/pom.xml", "test"), "another POM"),
        (_plain("-DforkCount=0", "test"), "in Maven's JVM"),
        (_plain("-DforkMode=never", "test"), "in Maven's JVM"),
        (_plain("-Dtest=a\nb", "test"), "a line break"),
    ],
)
def test_refusal(tmp_path: Path, step: BuildStep, why: str) -> None:
    found = warm.refusal(step, tmp_path)
    assert (found == "") if not why else (why in found)


def test_jvm_config_is_read_from_the_base_directory(tmp_path: Path) -> None:
    (tmp_path / ".mvn").mkdir()
    module = tmp_path / "module"
    module.mkdir()
    assert warm.refusal(_plain("test"), module) == ""
    assert project_basedir(module) == tmp_path.resolve()
    assert jvm_config(module) == ((), "")
    (tmp_path / ".mvn" / "jvm.config").write_text("-Xmx2g\n-javaagent:lib/a.jar\n", encoding="utf-8")
    assert "-javaagent:lib/a.jar" in warm.refusal(_plain("test"), module)


#: gson's .mvn/jvm.config (Error Prone in javac needs the compiler's internals), shortened.
GSON_JVM_CONFIG = """--add-exports jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED
--add-exports jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
--add-opens jdk.compiler/com.sun.tools.javac.code=ALL-UNNAMED
"""


@pytest.mark.parametrize(
    ("text", "options", "why"),
    [
        (GSON_JVM_CONFIG, tuple(GSON_JVM_CONFIG.split()), ""),
        ("-Xmx1g -Xss4m\r\n-XX:+UseG1GC -XX:MaxMetaspaceSize=512m -Dfile.encoding=UTF-8 -ea\n", None, ""),
        ("--add-opens=java.base/java.lang=ALL-UNNAMED --enable-preview", None, ""),
        ("-javaagent:lib/agent.jar", (), "-javaagent:lib/agent.jar"),  # a path against the project
        ("@jvm.args", (), "@jvm.args"),  # an argument file
        ("-Xlog:gc:gc.log", (), "-Xlog:gc:gc.log"),
        ("-XX:HeapDumpPath=dumps/", (), "-XX:HeapDumpPath=dumps/"),
        ("-Dpattern=*.txt", (), "-Dpattern=*.txt"),  # the mvn script's shell would expand it
        ("-Djava.io.tmpdir=target/tmp", (), "-Djava.io.tmpdir=target/tmp"),  # a place
        ("-Dreport.out=target/out", (), "-Dreport.out=target/out"),  # a relative path
        ("-Dx=./y", (), "-Dx=./y"),
        ("-XX:ErrorFile=hs_err.log", (), "-XX:ErrorFile=hs_err.log"),  # a file, not a number
        ("-Dabs=/opt/x -Dflag -Dnet.bytebuddy.experimental=true", None, ""),
        ("--add-opens", (), "--add-opens"),  # no value
    ],
)
def test_jvm_config_options_a_server_starts_with(
    tmp_path: Path, text: str, options: tuple[str, ...] | None, why: str
) -> None:
    (tmp_path / ".mvn").mkdir()
    (tmp_path / ".mvn" / "jvm.config").write_text(text, encoding="utf-8")
    found, reason = jvm_config(tmp_path)
    assert found == (tuple(text.split()) if options is None else options)
    assert (reason == "") if not why else (why in reason and found == ())


def test_the_chooser_the_profiles_and_the_server_read_jvm_config_alike(tmp_path: Path) -> None:
    # Maven 3's script joins the lines and splits at white space: a "#" is a word, not a comment,
    # and quotes are kept in the words
    (tmp_path / ".mvn").mkdir()
    text = "--add-opens java.base/java.lang=ALL-UNNAMED # note\r\n-Dquoted='a' -Dafter=1\n"
    (tmp_path / ".mvn" / "jvm.config").write_text(text, encoding="utf-8")
    words = config_words(tmp_path)
    assert words == (
        "--add-opens",
        "java.base/java.lang=ALL-UNNAMED",
        "#",
        "note",
        "-Dquoted='a'",
        "-Dafter=1",
    )
    assert jvm_config_properties(tmp_path) == {"quoted": "'a'", "after": "1"}
    assert [c.reason for c in jvm_config_constraints(tmp_path)] == [
        ".mvn/jvm.config: --add-opens needs JDK 9+"
    ]
    assert jvm_config(tmp_path) == ((), ".mvn/jvm.config sets a JVM option a warm server does not take: #")
    (tmp_path / ".mvn" / "jvm.config").write_bytes(b"-Dname=\xff\n")
    assert config_words(tmp_path) is None
    assert jvm_config(tmp_path)[1] == ".mvn/jvm.config cannot be read as UTF-8"
    assert jvm_config_properties(tmp_path) == {}
    assert config_words(tmp_path / "elsewhere") == ()


def test_project_options_come_first_so_the_servers_own_win() -> None:
    command = warm.server_command("java", "/m", "b.jar", "/h", 17, project=("-XX:-DisableAttachMechanism",))
    assert command.index("-XX:-DisableAttachMechanism") < command.index("-XX:+DisableAttachMechanism")
    assert command.index("-XX:+DisableAttachMechanism") < command.index("-classpath")


@needs_jdk
def test_each_jvm_config_gets_a_server_of_its_own(
    executor: LocalExecutor, fake_maven: Path, tmp_path: Path
) -> None:
    printed = {}
    for name in ("one", "two", "one"):
        workspace = tmp_path / name
        (workspace / ".mvn").mkdir(parents=True, exist_ok=True)
        (workspace / ".mvn" / "jvm.config").write_text(
            f"-Dtebench.config={name} -Xmx256m\n", encoding="utf-8"
        )
        done = executor.run(
            workspace, _step(fake_maven, "print-prop=tebench.config"), maven_repo=tmp_path / "repo"
        )
        assert done.ok, done.output
        printed.setdefault(name, []).append((done.extra["warm_jvm"], done.output))
    # the second project's options started a second server; the first's server served it again
    assert [how for how, _ in printed["one"]] == ["started", "reused"]
    assert [how for how, _ in printed["two"]] == ["started"]
    for name, runs in printed.items():
        assert all(f"[stub] property tebench.config={name}" in output for _, output in runs)


def test_request_carries_what_the_mvn_script_would_set(tmp_path: Path) -> None:
    text = warm.request("n1", tmp_path, ("-o", "test"), {"JAVA_TOOL_OPTIONS": "-javaagent:a=b"})
    assert text.splitlines() == [
        "BEGIN n1",
        f"CWD {tmp_path}",
        "ENV JAVA_TOOL_OPTIONS=-javaagent:a=b",
        "ENV MAVEN_CMD_LINE_ARGS= -o test",
        f"ENV MAVEN_PROJECTBASEDIR={tmp_path.resolve()}",
        f"ENV PWD={tmp_path}",
        f"PROP maven.multiModuleProjectDirectory={tmp_path.resolve()}",
        "ARG -o",
        "ARG test",
        "END",
    ]
    with pytest.raises(HarnessError, match="line break"):
        warm.request("n1", tmp_path, ("-Da=\nEND",), {})


def test_warm_conf_names_the_server_and_refuses_a_strange_conf() -> None:
    original = "main is org.apache.maven.cli.MavenCli from plexus.core\n[plexus.core]\nload ${maven.home}/lib/*.jar\n"
    conf = warm.warm_conf(original)
    assert "main is TebenchWarmMaven from plexus.core" in conf
    # the server's home is a -D of its JVM: a host path, or where a container mounts it
    assert conf.rstrip().endswith("load       ${tebench.warm.home}/classes")
    assert f"-D{warm.HOME_PROPERTY}=/opt/tools/warm" in warm.server_command(
        "java", "/m", "b.jar", "/opt/tools/warm", 17
    )
    with pytest.raises(HarnessError, match=r"m2\.conf"):
        warm.warm_conf("[plexus.core]\n")


SUREFIRE = """<plugin><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version>{}</plugin>"""


def _effective(*plugins: str) -> str:
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><artifactId>a</artifactId>'
        f"<build><plugins>{''.join(plugins)}</plugins></build></project>"
    )


@pytest.mark.parametrize(
    ("configuration", "forks"),
    [
        ("", True),
        ("<configuration><forkCount>1</forkCount><reuseForks>false</reuseForks></configuration>", True),
        ("<configuration><forkCount>1C</forkCount></configuration>", True),
        ("<configuration><forkCount>0</forkCount></configuration>", False),
        ("<configuration><forkCount>0C</forkCount></configuration>", False),
        ("<configuration><forkMode>never</forkMode></configuration>", False),
        ("<configuration><forkCount>${forks}</forkCount></configuration>", False),
        (
            "<executions><execution><id>it</id><configuration><forkCount>0</forkCount>"
            "</configuration></execution></executions>",
            False,
        ),
    ],
)
def test_tests_fork_reads_every_surefire_configuration(configuration: str, forks: bool) -> None:
    assert surefire_forks(_effective(SUREFIRE.format(configuration))) is forks


def test_other_plugins_fork_settings_do_not_count() -> None:
    failsafe = "<plugin><artifactId>maven-failsafe-plugin</artifactId><configuration><forkCount>0</forkCount></configuration></plugin>"
    assert surefire_forks(_effective(failsafe, SUREFIRE.format(""))) is True


def test_only_a_recorded_forking_build_runs_warm(tmp_path: Path) -> None:
    assert recorded_forks(tmp_path, "b1") is False  # never checked
    append_entry(tmp_path, {"build": "b1", "ok": True, "surefire": "3.2.5"})  # before FORKS existed
    assert recorded_forks(tmp_path, "b1") is False
    append_entry(tmp_path, {"build": "b1", "ok": True, FORKS: True})
    append_entry(tmp_path, {"build": "b2", "ok": True, FORKS: False})
    append_entry(tmp_path, {"build": "b3", "ok": False, FORKS: True})
    assert (
        recorded_forks(tmp_path, "b1"),
        recorded_forks(tmp_path, "b2"),
        recorded_forks(tmp_path, "b3"),
    ) == (
        True,
        False,
        False,
    )


def test_selection_step_carries_the_mark() -> None:
    tool = (("maven", "/m"),)
    assert selection_step([], java_version=17, timeout=1, maven=tool, warm=True).warm
    assert not selection_step([], java_version=17, timeout=1, maven=tool).warm


def test_the_option_is_declared_validated_and_reaches_the_executor() -> None:
    spec = next(s for s in EXECUTOR_OPTIONS if s.name == "warm-jvm")
    assert spec.choices == ("on", "off") and spec.default == "on"
    assert "warm Maven JVM" in spec.help
    assert ExecutorOptions.from_values("local", {"warm_jvm": "off"}).warm_jvm is False
    assert ExecutorOptions.from_values("local", {}).warm_jvm is True
    with pytest.raises(HarnessError, match="warm-jvm"):
        warm_jvm("yes")


# -- real Maven: cold and warm give the same results -------------------------------------------


@pytest.mark.maven
def test_demo_results_are_the_same_cold_and_warm(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """Every status, test outcome and metric of the demo's update cases, cold then warm, each
    with a cache of its own (so each builds gold and every prediction itself)."""
    results, reports = {}, {}
    for mode in ("off", "on"):
        run = DemoRun(pytester, tmp_path / f"cache-{mode}")
        result, report = run(str(PREDICTIONS / "update-cases.jsonl"), f"--tebench-warm-jvm={mode}")
        assert result.ret == 0, result.stdout.str()[-3000:]
        results[mode] = [comparable_result(r) for r in report["results"]]  # type: ignore[attr-defined]
        reports[mode] = report["results"]  # type: ignore[index]
    assert len(results["on"]) >= 4
    assert results["on"] == results["off"]
    # every prediction's launch of the warm run ran in a warm JVM, none of the cold run's
    assert {r["update"]["warm_jvm"] for r in reports["on"]} <= {"started", "reused"}
    assert "reused" in {r["update"]["warm_jvm"] for r in reports["on"]}
    assert {r["update"]["warm_jvm"] for r in reports["off"]} == {None}
    # gold's coverage report was written in the warm server, JaCoCo's classes loaded there
    assert coverage_report_warmth(tmp_path / "cache-on") <= {"started", "reused"}
    assert coverage_report_warmth(tmp_path / "cache-off") == {None}
