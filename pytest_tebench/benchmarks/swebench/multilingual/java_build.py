"""Build mode for SWE-bench Multilingual's Java Maven rows (google/gson, javaparser/javaparser), offline.

SWE-bench runs these rows in an image ``FROM maven:3.9-eclipse-temurin-<java_version>`` with mvnd
1.0.2 (Maven 3.9 inside), the repository at ``/testbed`` after the specification's
``pre_install``, ``install`` and ``build`` commands, then the row's ``eval_script`` (``set -x``,
one ``mvnd test -Dtest=X`` per test, or ``./mvnw``), graded by ``parse_log_maven``, which pairs
each ``-Dtest=`` xtrace line with the next ``BUILD SUCCESS``/``FAILURE``. Here the same steps run
in TEBench's sandbox (``run/docker.py``): the Java image of ``run/docker_image.py`` (Debian's JDKs
8/11/17/21 at ``/opt/java/<v>``), Maven 3.9.9 from Maven Central (``run/maven/dist.py``), the JDK
chosen by the one chooser (``run/maven/jdk.py``) with the spec's ``java_version`` preferred.

In the container (the run directory mounted at ``/workspace``):

* ``/workspace/testbed``: the checkout; the script's ``/testbed`` is spelled so (:func:`container_script`);
* ``mvn`` and ``mvnd`` are a shim on ``PATH`` (``/opt/tools/shim``) running Maven 3.9.9; ``./mvnw``
  finds the distribution its ``maven-wrapper.properties`` names already unpacked
  (``MAVEN_USER_HOME``, :func:`wrapper_home`), so it downloads nothing;
* ``MAVEN_ARGS`` (read by every Maven 3.9 launch, wrapper's included) points the local repository at a
  private head ``/workspace/m2`` chained to read-only tails: the instance's installed artifacts, then
  the shared repository (``-o`` in the test phase).

Per instance, once (:func:`ensure_environment`, cached under ``<cache>/swebench-java``): the
specification's setup commands at ``base_commit``, online, on a trusted tree; the head they wrote is
split (``run/maven/local_repo.py``): downloads into the shared repository, the project's own
installed artifacts kept as the instance's (the official image's ``~/.m2`` holds them too).
Per prediction (:func:`run_prediction`): a fresh checkout, the patch applied with SWE-bench's chain,
the row's ``eval_script`` run with no network, non-root, with the executor's limits. A test phase
whose log says an artifact is missing warms up once per instance: the same script with gold,
online (what SWE-bench's networked test phase would have fetched), then runs offline again.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.swebench import evaluation
from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench.patch_run import PatchRun
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.locking import file_lock
from pytest_tebench.locking import lock_name
from pytest_tebench.run import docker_image
from pytest_tebench.run.docker import CONTAINER_MAVEN_REPO
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.maven import dist
from pytest_tebench.run.maven import jdk
from pytest_tebench.run.maven import local_repo
from pytest_tebench.run.maven import log as mavenlog
from pytest_tebench.run.maven.settings import MavenSettings
from pytest_tebench.workspace.gitcmd import GitError
from pytest_tebench.workspace.gitcmd import git

#: Bump when a change here changes what an environment holds (stored ones are then rebuilt).
ENVIRONMENT_VERSION = 1
#: The Maven behind ``mvn`` and ``mvnd`` (the 3.9 of ``maven:3.9-*`` images and of mvnd 1.0.2): the
#: harness's one default.
MAVEN_VERSION = dist.DEFAULT_MAVEN
#: Where SWE-bench's images hold the repository, and where the run directory shows it here.
TESTBED = "/testbed"
CHECKOUT = "testbed"
WORKSPACE = docker_image.CONTAINER_WORKSPACE
CONTAINER_TESTBED = f"{WORKSPACE}/{CHECKOUT}"
#: The private local-repository head of a step, inside the run directory.
HEAD = "m2"
#: Tool mounts (``BuildStep.tools``; the Docker executor shows them under ``/opt/tools/<name>``).
TOOLS_ROOT = "/opt/tools"
SHIM_LAUNCHERS = ("mvn", "mvnd")
#: The time zone of SWE-bench's Java images (``ENV TZ=Etc/UTC`` in ``dockerfiles/java.py``).
OFFICIAL_TZ = "Etc/UTC"
#: The run directory's files: our launcher, the script it runs, and the script's whole log.
LAUNCHER = "run.sh"
SCRIPT = "eval.sh"
LOG = "eval.log"
#: ``maven-wrapper.properties``' distribution on Maven Central: the version is in the path.
_WRAPPER_URL = re.compile(
    r"/org/apache/maven/apache-maven/(?P<version>\d+(?:\.\d+){1,3})/apache-maven-[^/]+$"
)
_HEREDOC = re.compile(r"<<-?\s*'?\"?(?P<word>[A-Za-z0-9_]+)'?\"?")
#: git's words for an object the source repository lacks (``unable to read sha1 file of <path> (<sha>)``).
_UNREADABLE = re.compile(r"unable to read (?:sha1 file of )?(?P<what>\S+(?: \([0-9a-f]{40}\))?)")
_TESTBED_PATH = re.compile(r"(?<![\w./-])/testbed(?![\w.-])")

Progress = Callable[[str], None]


def _noop(line: str) -> None:
    del line


# --------------------------------------------------------------------------- scripts


def setup_commands(spec: Mapping[str, Any]) -> list[str]:
    """The commands SWE-bench's instance image runs after the checkout, in its order
    (``make_repo_script_list_common``): ``pre_install``, ``install``, ``build``."""
    commands: list[str] = []
    for key in ("pre_install", "install", "build"):
        value = spec.get(key) or []
        commands.extend([value] if isinstance(value, str) else [str(c) for c in value])
    return commands


def setup_script(spec: Mapping[str, Any]) -> str:
    """``setup_repo.sh`` without its clone (the checkout is ours): ``set -euxo pipefail`` as there."""
    lines = ["#!/bin/bash", "set -euxo pipefail", f"cd {TESTBED}", *setup_commands(spec)]
    return container_script("\n".join(lines) + "\n")


def container_script(script: str) -> str:
    """``script`` with SWE-bench's ``/testbed`` spelled as the checkout's path in the container, outside
    here-documents (a patch's text stays as it is)."""
    out: list[str] = []
    ending: str | None = None
    for line in script.split("\n"):
        if ending is not None:
            out.append(line)
            if line.strip() == ending:
                ending = None
            continue
        out.append(_TESTBED_PATH.sub(CONTAINER_TESTBED, line))
        match = _HEREDOC.search(line)
        if match:
            ending = match.group("word")
    return "\n".join(out)


def launcher(maven_args: str) -> str:
    """Our entry point in the container: the official image's time zone, the shim first on ``PATH``,
    the wrapper's home, Maven's arguments, then the script with its whole output (xtrace included, in
    order) in the log."""
    return "\n".join(
        [
            "#!/bin/bash",
            # SWE-bench's Java base image says ENV TZ=Etc/UTC: tests of dates in the default zone
            # (gson's ISO8601UtilsTest) see UTC whatever the sandbox image's /etc/localtime says
            f"export TZ={OFFICIAL_TZ}",
            f"export PATH={TOOLS_ROOT}/shim:$PATH",
            f"export MAVEN_USER_HOME={TOOLS_ROOT}/wrapper",
            f"export MAVEN_ARGS='{maven_args}'",
            f"cd {CONTAINER_TESTBED}",
            f"exec /bin/bash {WORKSPACE}/{SCRIPT} >{WORKSPACE}/{LOG} 2>&1",
            "",
        ]
    )


def maven_args(*, tails: tuple[str, ...], offline: bool) -> str:
    """``MAVEN_ARGS``: the private head, the read-only tails behind it, offline or not."""
    head = f"{docker_image.CONTAINER_WORKSPACE}/{HEAD}"
    parts = ["-o"] if offline else []
    parts += [f"-Dmaven.repo.local={head}", f"-Dmaven.repo.local.tail={','.join(tails)}"]
    return " ".join(parts)


def shim_text() -> str:
    """``mvn``/``mvnd``: Maven 3.9.9 (the tool mount), whatever the image's own ``mvn`` is."""
    return f'#!/bin/sh\nexec {TOOLS_ROOT}/maven/bin/mvn "$@"\n'


# --------------------------------------------------------------------------- tools


def wrapper_hash(url: str) -> str:
    """Maven Wrapper 3.3's directory name for a distribution URL: Java's ``String.hashCode`` of it,
    as an unsigned hex number (``mvnw``'s ``hash_string``)."""
    value = 0
    for char in url:
        value = (value * 31 + ord(char)) % 4294967296
    return f"{value:x}"


def wrapper_distribution(tree: Path) -> tuple[str, str] | None:
    """``(url, Maven version)`` the tree's ``.mvn/wrapper/maven-wrapper.properties`` names, None
    without a wrapper. A distribution from anywhere but Maven Central cannot be had here."""
    properties = tree / ".mvn" / "wrapper" / "maven-wrapper.properties"
    if not properties.is_file():
        return None
    url = ""
    for line in properties.read_text(encoding="utf-8", errors="replace").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "distributionUrl":
            url = value.strip().replace("\\:", ":")
    match = _WRAPPER_URL.search(url)
    if not url.startswith(dist.CENTRAL) or match is None:
        raise UnsupportedEnvironment(
            f"the Maven wrapper downloads {url or 'an unnamed distribution'}, not a Maven "
            f"distribution on Maven Central ({dist.CENTRAL}), the only Maven host reachable here"
        )
    return url, match.group("version")


def tool_dirs(root: Path, wrapper_url: str | None) -> tuple[Path, Path]:
    """The shim folder and the wrapper's home under ``root`` (made once, then only read): the
    wrapper's distribution directory is a link to the Maven mounted as ``wrapper-maven``."""
    shim = root / "shim"
    if not all((shim / name).is_file() for name in SHIM_LAUNCHERS):
        shim.mkdir(parents=True, exist_ok=True)
        for name in SHIM_LAUNCHERS:
            _write_executable(shim / name, shim_text())
    home = root / "wrapper"
    home.mkdir(parents=True, exist_ok=True)
    if wrapper_url:
        main = wrapper_url.rsplit("/", 1)[-1].rsplit(".", 1)[0].removesuffix("-bin")
        link = home / "wrapper" / "dists" / main / wrapper_hash(wrapper_url)
        if not link.is_symlink():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(f"{TOOLS_ROOT}/wrapper-maven")
    return shim, home


def _write_executable(path: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with open(handle, "w", encoding="utf-8") as out:
        out.write(text)
    Path(temporary).chmod(0o755)
    Path(temporary).replace(path)


# --------------------------------------------------------------------------- environment


@dataclass(frozen=True)
class JavaEnvironment:
    """What one instance's runs need: the JDK, the tools and the instance's installed artifacts."""

    key: str
    java_version: int
    jdk_reason: str
    #: ``BuildStep.tools``: maven, wrapper-maven, shim, wrapper, installed.
    tools: tuple[tuple[str, str], ...]
    #: The instance's installed artifacts (a read-only tail of every run).
    installed: Path
    #: Where its record lives (``environment.json``: setup log tail, the warm-up of its tests).
    folder: Path
    setup_seconds: float = 0.0

    @property
    def tests_warmed(self) -> bool:
        return bool(_read_json(self.folder / "environment.json").get("tests_warmed"))


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    temporary.replace(path)


@dataclass(frozen=True)
class JavaRow:
    """What a build needs of a row (a ``MultilingualInstance`` has these fields)."""

    instance_id: str
    repo: str
    version: str
    base_commit: str
    patch: str
    eval_script: str


class JavaBuild:
    """Java Maven rows built here: one per adapter process. ``cache_dir`` holds the environments
    (``swebench-java/``) and the Maven distributions; ``maven`` the shared repository and limits."""

    def __init__(
        self,
        executor: Executor,
        *,
        cache_dir: Path,
        maven: MavenSettings,
        test_timeout: float,
        progress: Progress = _noop,
    ) -> None:
        self.executor = executor
        self.root = cache_dir / "swebench-java"
        self.maven = maven
        self.test_timeout = test_timeout
        self.progress = progress
        self.dist_cache = maven.maven_dist or cache_dir / "maven-dist"

    # -- the environment ------------------------------------------------------------------
    def ensure_environment(self, row: JavaRow, source: Path) -> JavaEnvironment:
        """The instance's environment, made when missing (the spec's setup at ``base_commit``,
        online, under the environment's lock). Raises :class:`UnsupportedEnvironment` when no JDK here
        fits, :class:`HarnessError` when the setup fails (with its log's tail)."""
        spec = official.specs(row.repo, row.version)
        if spec is None:
            raise UnsupportedEnvironment(f"SWE-bench has no specification for {row.repo} {row.version}")
        started = time.perf_counter()
        work = Path(tempfile.mkdtemp(prefix="jprobe-", dir=self._scratch()))
        try:
            tree = checkout(source, row.base_commit, work / CHECKOUT)
            java = self._choose_jdk(tree, spec)
            wrapper = wrapper_distribution(tree)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        tools = self._tools(wrapper)
        key = _environment_key(row, spec, java.version, tools, self.executor.toolchain())
        folder = self.root / "env" / f"{lock_name(row.instance_id)}-{key}"
        installed = folder / "installed"
        environment = JavaEnvironment(
            key, java.version, java.reason, (*tools, ("installed", str(installed))), installed, folder
        )
        if (folder / "environment.json").is_file():
            return environment
        # one setup per environment; setups of one project may run side by side: each writes a
        # private head, and the merge into the shared repository renames whole files
        with file_lock(folder.with_name(folder.name + ".lock")):
            if (folder / "environment.json").is_file():
                return environment
            self.progress(f"[swebench-java] {row.instance_id}: setup at {row.base_commit[:10]} (online)")
            result, log, split = self._online(row, source, environment, setup_script(spec), gold=False)
            if result.timed_out or result.exit_code != 0:
                raise HarnessError(
                    f"the setup of {row.instance_id} ({'; '.join(setup_commands(spec))}) failed "
                    f"({'timed out' if result.timed_out else f'exit {result.exit_code}'}):\n"
                    f"{mavenlog.log_tail(log)}"
                )
            seconds = time.perf_counter() - started
            _write_json(
                folder / "environment.json",
                {
                    "instance_id": row.instance_id,
                    "java": java.version,
                    "jdk_reason": java.reason,
                    "installed": len(split.installed),
                    "downloaded": split.moved,
                    "seconds": round(seconds, 1),
                    "tests_warmed": False,
                },
            )
        return JavaEnvironment(
            key, java.version, java.reason, environment.tools, installed, folder, setup_seconds=seconds
        )

    def _choose_jdk(self, tree: Path, spec: Mapping[str, Any]) -> jdk.JdkChoice:
        wanted = str((spec.get("docker_specs") or {}).get("java_version") or "")
        requirement = jdk.read_requirement(tree, self.maven.maven_repo)
        installs = {
            v: jdk.JdkInstall(v, Path(docker_image.java_home(v)), str(v))
            for v in self.executor.java_versions()
        }
        override = int(self.maven.jdk) if self.maven.jdk and self.maven.jdk.isdigit() else None
        return jdk.choose_for(requirement, installs, override, int(wanted) if wanted.isdigit() else None)

    def _tools(self, wrapper: tuple[str, str] | None) -> tuple[tuple[str, str], ...]:
        maven_home = dist.ensure_maven(MAVEN_VERSION, self.dist_cache)
        wrapper_home = maven_home if wrapper is None else dist.ensure_maven(wrapper[1], self.dist_cache)
        shim, home = tool_dirs(self.root / "tools", wrapper[0] if wrapper else None)
        return (
            ("maven", str(maven_home)),
            ("wrapper-maven", str(wrapper_home)),
            ("shim", str(shim)),
            ("wrapper", str(home)),
        )

    def _scratch(self) -> Path:
        scratch = self.root / "runs"
        scratch.mkdir(parents=True, exist_ok=True)
        return scratch

    def _online(
        self, row: JavaRow, source: Path, environment: JavaEnvironment, script: str, *, gold: bool
    ) -> tuple[StepResult, str, local_repo.Split]:
        """``script`` online on a trusted tree (``base_commit``, with gold's patch when ``gold``); the
        head it wrote split: downloads into the shared repository, installed files into the
        instance's folder (the setup's), or dropped (gold's: never a tail of anyone's run)."""
        run_dir = Path(tempfile.mkdtemp(prefix="jsetup-", dir=self._scratch()))
        try:
            tree = checkout(source, row.base_commit, run_dir / CHECKOUT)
            if gold:
                applied = evaluation.apply_model_patch(tree, row.patch)
                if applied.method is None:
                    raise HarnessError(f"gold's patch of {row.instance_id} does not apply:\n{applied.log}")
            tails = self._tails(environment) if gold else self._tails(environment)[1:]
            tools = environment.tools if gold else environment.tools[:-1]
            result, log = self._run(
                run_dir, script, environment.java_version, tools, tails=tails, online=True
            )
            split = local_repo.merge_downloads(run_dir / HEAD, self.maven.maven_repo)
            if not gold:
                environment.installed.parent.mkdir(parents=True, exist_ok=True)
                shutil.rmtree(environment.installed, ignore_errors=True)
                (run_dir / HEAD).mkdir(exist_ok=True)
                shutil.move(str(run_dir / HEAD), environment.installed)
            return result, log, split
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)

    def _tails(self, environment: JavaEnvironment) -> tuple[tuple[Path, str], ...]:
        """A run's read-only local repositories behind its head, first first, as ``(host folder,
        where the container sees it)``: the instance's installed artifacts, the shared repository."""
        return (
            (environment.installed, f"{TOOLS_ROOT}/installed"),
            (self.maven.maven_repo, CONTAINER_MAVEN_REPO),
        )

    def _run(
        self,
        run_dir: Path,
        script: str,
        java_version: int,
        tools: tuple[tuple[str, str], ...],
        *,
        tails: tuple[tuple[Path, str], ...],
        online: bool,
    ) -> tuple[StepResult, str]:
        head = run_dir / HEAD
        head.mkdir(exist_ok=True)
        # the files the POMs name by their local-repository path must be in the head (what
        # settings.localRepository is), as in the official image's single ~/.m2
        named = local_repo.named_artifact_dirs(run_dir / CHECKOUT)
        if named:
            local_repo.link_named_files(head, named, tails)
        (run_dir / SCRIPT).write_text(script, encoding="utf-8")
        (run_dir / LAUNCHER).write_text(
            launcher(maven_args(tails=tuple(seen for _host, seen in tails), offline=not online)),
            encoding="utf-8",
        )
        step = BuildStep(
            name="swebench-java-setup" if online else "swebench-java-test",
            argv=("/bin/bash", f"{docker_image.CONTAINER_WORKSPACE}/{LAUNCHER}"),
            timeout=self.maven.timeout_warmup if online else self.test_timeout,
            java_version=java_version,
            network=online,
            tools=tools,
        )
        result = self.executor.run(run_dir, step, maven_repo=self.maven.maven_repo)
        log_file = run_dir / LOG
        log = log_file.read_text(encoding="utf-8", errors="replace") if log_file.is_file() else result.output
        return result, log

    # -- one prediction ---------------------------------------------------------------------
    def run_prediction(
        self, row: JavaRow, source: Path, environment: JavaEnvironment, patch: str, *, keep: bool = False
    ) -> PatchRun:
        """``patch`` applied to a fresh checkout with SWE-bench's chain, then the row's eval script,
        offline; once per instance, a run that lacks an artifact warms the tests up with gold and
        runs again (:meth:`warm_tests`)."""
        run = self._offline(row, source, environment, patch, keep=keep)
        if run.apply_method is None or not mavenlog.missing_artifacts(run.log) or environment.tests_warmed:
            return run
        self.warm_tests(row, source, environment)
        again = self._offline(row, source, environment, patch, keep=keep)
        # the offline attempt that found the repository lacking, before the warm-up
        again.timings["offline_probe"] = sum(run.timings.values())
        return again

    def warm_tests(self, row: JavaRow, source: Path, environment: JavaEnvironment) -> None:
        """The row's eval script with gold's patch, online, under the environment's lock: what SWE-bench's
        test phase (which has the network) downloads, such as Surefire's JUnit provider, lands in the
        shared repository. Once per environment."""
        with file_lock(environment.folder.with_name(environment.folder.name + ".lock")):
            record = _read_json(environment.folder / "environment.json")
            if record.get("tests_warmed"):
                return
            self.progress(f"[swebench-java] {row.instance_id}: warming the tests up with gold (online)")
            result, _log, split = self._online(
                row, source, environment, container_script(row.eval_script), gold=True
            )
            record.update(tests_warmed=True, tests_warm_exit=result.exit_code, tests_downloaded=split.moved)
            _write_json(environment.folder / "environment.json", record)

    def _offline(
        self, row: JavaRow, source: Path, environment: JavaEnvironment, patch: str, *, keep: bool
    ) -> PatchRun:
        started = time.perf_counter()
        run_dir = Path(tempfile.mkdtemp(prefix="jrun-", dir=self._scratch()))
        run = PatchRun()
        try:
            tree = checkout(source, row.base_commit, run_dir / CHECKOUT)
            applied = evaluation.apply_model_patch(tree, patch)
            run.timings["apply"] = time.perf_counter() - started
            run.apply_method, run.apply_log = applied.method, applied.log
            if applied.method is None:
                return run
            run.test_command = "eval_script (row)"
            started = time.perf_counter()
            run.result, run.log = self._run(
                run_dir,
                container_script(row.eval_script),
                environment.java_version,
                environment.tools,
                tails=self._tails(environment),
                online=False,
            )
            run.timings["tests"] = time.perf_counter() - started
            if keep:
                run.workspace = run_dir
        finally:
            if run.workspace is None:
                shutil.rmtree(run_dir, ignore_errors=True)
        return run


def checkout(source: Path, commit: str, target: Path) -> Path:
    """A self-contained checkout of ``commit`` from ``source`` (a clone or a bare mirror) at
    ``target``, so the eval script's ``git diff``/``git checkout <base_commit>`` work in a container
    that cannot see the mirror. Two commits deep: with its parents, ``git show`` (the script's
    first lines) prints the commit's own change, as in SWE-bench's full clone, not its whole tree."""
    target.mkdir(parents=True)
    git(target, "init", "--quiet")
    try:
        git(target, "fetch", "--quiet", "--depth", "2", f"file://{source.resolve()}", commit)
    except GitError as exc:
        # a snapshot without its largest files (fetch's mirrors): say which, as Workspace.create does
        missing = _UNREADABLE.search(str(exc))
        if missing is None:
            raise
        raise HarnessError(
            f"the repository {source} lacks the content of {missing.group('what')} at {commit} "
            "(an incomplete clone): give a complete clone with --tebench-repos"
        ) from exc
    git(target, "checkout", "--quiet", "--detach", "FETCH_HEAD")
    return target


def _environment_key(
    row: JavaRow, spec: Mapping[str, Any], java: int, tools: tuple[tuple[str, str], ...], toolchain: str
) -> str:
    payload = {
        "version": ENVIRONMENT_VERSION,
        "repo": row.repo,
        "base_commit": row.base_commit,
        "setup": setup_commands(spec),
        "java": java,
        "tools": [Path(path).name for name, path in tools if name.endswith("maven")],
        "toolchain": toolchain,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]
