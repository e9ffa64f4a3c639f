"""Which external hosts failing tests tried to reach, read from Surefire's reports.

The sandbox runs tests with no network (Docker ``--network none``), and a machine's own network
may not reach a host either. A test that needs one fails there whatever the code says: it
is a fact about the environment, never about an instance or a model. This module reads the
failure messages and stack traces Surefire wrote (:attr:`TestOutcome.trace`) for the signs the
JDK and common HTTP clients leave:

* ``java.net.UnknownHostException: jsoup.org`` (name resolution failed; with glibc the text may
  go on ``: Name or service not known`` / ``Temporary failure in name resolution``);
* ``Connect to example.com:80 [example.com/93.184.216.34] failed: Connection refused`` (Apache
  HttpClient), ``Failed to connect to example.com/93.184.216.34:80`` (OkHttp) for an address
  that is not the loopback's;
* ``Network is unreachable`` / ``No route to host`` (a connect with no route out: only a
  non-loopback address gives it), naming the host when the trace does.

A connection refused on the loopback (a test's own server that is not there) is a test failure
like any other and is never taken for a host need.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

from pytest_tebench.run.maven.surefire import TestOutcome

#: ``UnknownHostException: <host>`` (with a ``: <resolver text>`` tail on some JDKs).
_UNKNOWN_HOST = re.compile(r"UnknownHostException: ([A-Za-z0-9][A-Za-z0-9.\-]*)")
#: glibc's resolver texts after ``<host>: `` (the JDK puts the host first).
_RESOLVER = re.compile(
    r"([A-Za-z0-9][A-Za-z0-9.\-]*): (?:Name or service not known|Temporary failure in name resolution"
    r"|No address associated with hostname|nodename nor servname provided)"
)
#: Apache HttpClient's ``Connect to host:port [host/ip] failed`` and OkHttp's
#: ``Failed to connect to host/ip:port``.
_CONNECT_TO = re.compile(
    r"(?:Connect to|[Ff]ailed to connect to) ([A-Za-z0-9][A-Za-z0-9.\-]*|\[[0-9a-fA-F:]+\])"
)
#: A connect that found no route out, or was refused, with no host in the text.
_NO_ROUTE = re.compile(r"Network is unreachable|No route to host|Connection refused|connect timed out")
#: ``host/1.2.3.4:80`` as ``InetSocketAddress`` prints itself, in a trace's messages.
_SOCKET_ADDRESS = re.compile(r"\b([A-Za-z][A-Za-z0-9.\-]*\.[A-Za-z]{2,})/[0-9a-fA-F.:]+:\d+")
#: What names a host that is not the loopback, in order of trust.
_NAMED = (_UNKNOWN_HOST, _RESOLVER, _CONNECT_TO)
#: The signs that need no host name: only a non-loopback connect fails this way in a sandbox.
_UNROUTED = re.compile(r"Network is unreachable|No route to host")


def is_loopback(host: str) -> bool:
    """``localhost``, ``127.x.y.z``, ``::1``, ``0.0.0.0`` and ``*.localhost``."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def external_hosts(text: str) -> list[str]:
    """The non-loopback hosts ``text`` (a failure's message and trace) shows a test could not
    reach, in order of appearance; ``["an unnamed host"]`` for a connect with no route out whose
    text names none."""
    found: list[str] = []
    for pattern in _NAMED:
        for match in pattern.finditer(text):
            host = match[1].rstrip(".")
            if not is_loopback(host) and host not in found:
                found.append(host)
    if found:
        return found
    if _NO_ROUTE.search(text):
        named = [m[1] for m in _SOCKET_ADDRESS.finditer(text) if not is_loopback(m[1])]
        if named:
            return list(dict.fromkeys(named))
        if _UNROUTED.search(text):
            return ["an unnamed host"]
    return []


def host_needs(outcomes: Iterable[TestOutcome]) -> dict[str, list[str]]:
    """Test id -> the external hosts its failure shows it needed, for those of ``outcomes`` that
    failed needing one."""
    return {str(o.test): hosts for o in outcomes if (hosts := external_hosts(o.failure_text))}
