"""What a project's ``.mvn`` directory asks of Maven's JVM: where it is, and its JVM options.

``mvn`` finds the project's base directory (the nearest ``.mvn`` upwards) and starts its JVM with
the words of ``.mvn/jvm.config``. A warm Maven server (:mod:`~pytest_tebench.run.maven.warm`) is a
JVM already running, so a build whose options a server can be started with (module access, memory
sizes, plain VM flags and properties) gets a server of its own started with them; any other option
(a path the ``mvn`` script's JVM would resolve against the project) keeps the build in a cold
``mvn``.
"""

from __future__ import annotations

import re
from pathlib import Path

#: ``.mvn/jvm.config`` options a server may start with, as the ``mvn`` script would start Maven:
#: module access, memory sizes, boolean and numeric VM flags, system properties, assertions.
#: Anything else (an agent, a log or dump file, an argument file: paths the script's JVM
#: resolves against the project's directory) keeps the build cold.
_JVM_CONFIG_OPTION = re.compile(
    r"--add-(?:exports|opens|modules|reads)=[\w.$/=,-]+|-Xm[sx]\d+[kKmMgG]?|-Xss\d+[kKmMgG]?"
    r"|-XX:[+-]\w+|-XX:\w+=[\d.]+[kKmMgG%]?|-e?s?[ad]|--enable-preview|--illegal-access=\w+"
)
#: A ``-D`` property; its value may not be a pattern, nor a relative path (``mvn``'s JVM would
#: read it against the project's directory, a server against its own), nor name a place.
_JVM_CONFIG_PROPERTY = re.compile(r"-D(?P<key>[\w.-]+)(?:=(?P<value>[^*?\[\]]*))?")
_PLACE_KEY = re.compile(r"(?:dir|path|file|home|tmpdir|local|root)$", re.IGNORECASE)
#: Options whose value is the next word (``--add-exports jdk.compiler/...=ALL-UNNAMED``).
_JVM_CONFIG_PAIRED = ("--add-exports", "--add-opens", "--add-modules", "--add-reads")
_JVM_CONFIG_VALUE = re.compile(r"[\w.$/=,-]+")


def config_words(basedir: Path) -> tuple[str, ...] | None:
    """The words of ``basedir/.mvn/jvm.config`` as ``mvn`` passes them to its JVM: the file's lines
    joined and split at white space (Maven 3's script expands them unquoted: no quoting, no
    comments). ``()`` without the file; None when it cannot be read as UTF-8. The one reader of
    that file: the warm server's options, the JDK chooser's and the profile resolver's."""
    config = basedir / ".mvn" / "jvm.config"
    if not config.is_file():
        return ()
    try:
        return tuple(config.read_text(encoding="utf-8").split())
    except (OSError, UnicodeDecodeError):
        return None


def jvm_config(workspace: Path) -> tuple[tuple[str, ...], str]:
    """The options of the project's ``.mvn/jvm.config`` (:func:`config_words`) and why a server
    cannot start with them ("" when it can; no file: no options)."""
    words = config_words(project_basedir(workspace))
    if words is None:
        return (), ".mvn/jvm.config cannot be read as UTF-8"
    index = 0
    while index < len(words):
        word = words[index]
        paired = index + 1 < len(words) and _JVM_CONFIG_VALUE.fullmatch(words[index + 1])
        if word in _JVM_CONFIG_PAIRED and paired:
            index += 2
            continue
        if not (_JVM_CONFIG_OPTION.fullmatch(word) or _plain_property(word)):
            return (), f".mvn/jvm.config sets a JVM option a warm server does not take: {word[:80]}"
        index += 1
    return tuple(words), ""


def _plain_property(word: str) -> bool:
    """A ``-D`` of a ``.mvn/jvm.config`` that means the same to any JVM: no pattern, no place."""
    found = _JVM_CONFIG_PROPERTY.fullmatch(word)
    if found is None or _PLACE_KEY.search(found["key"]):
        return False
    value = found["value"] or ""
    return not value.startswith(".") and ("/" not in value or value.startswith("/"))


def project_basedir(workspace: Path, *, top: Path | None = None) -> Path:
    """What ``mvn`` exports as ``MAVEN_PROJECTBASEDIR`` (and passes as
    ``maven.multiModuleProjectDirectory``): the nearest directory upwards with a ``.mvn``
    directory, else the working directory. ``top``: the highest directory the build can see
    (a container sees nothing above its workspace)."""
    start = workspace.resolve()
    ceiling = top.resolve() if top is not None else None
    for directory in (start, *start.parents):
        if ceiling is not None and not directory.is_relative_to(ceiling):
            break
        if (directory / ".mvn").is_dir():
            return directory
    return start
