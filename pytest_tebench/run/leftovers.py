"""What a harness leaves in the Docker engine if it is killed, and its removal by the next run.

Every container the harness creates carries labels naming its run, host and owning process
(:func:`owner_labels`). A run removes its own containers, and the images it commits for one step
(SWE-bench's official install phase, :mod:`pytest_tebench.benchmarks.swebench.official_images`),
in ``finally`` blocks; a harness that was SIGKILLed (or lost its terminal) never runs them. Its
watcher (:mod:`~pytest_tebench.run.janitor`) and the next run's executor, at its start, therefore
call :func:`cleanup_stale`: it removes the labelled
containers, then the images labelled :data:`LABEL_TRANSIENT`, whose owning process on this host
is gone. An image without that label is never removed here, whatever it inherited: the harness's
caches (the sandbox and suite base images, SWE-bench environments and instance layers, official
images) are kept. What another host made (a shared engine) is left alone, and so is what a live
process owns.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from typing import Any

import docker.errors

from pytest_tebench.errors import HarnessError
from pytest_tebench.run.reaper import pid_alive
from pytest_tebench.run.reaper import process_start

LABEL = "pytest-tebench"
LABEL_RUN = "pytest-tebench.run"
LABEL_PID = "pytest-tebench.pid"
LABEL_PID_START = "pytest-tebench.pid-start"
LABEL_HOST = "pytest-tebench.host"
LABEL_STEP = "pytest-tebench.step"
#: On an image made for one step of one run (a commit of a container): the run removes it when
#: the step is over, the next run when its owner died first.
LABEL_TRANSIENT = "pytest-tebench.transient"


def owner_labels(run_id: str, step: str) -> dict[str, str]:
    """The labels of a container this process creates now for ``step`` of run ``run_id``."""
    pid = os.getpid()  # now, not at an executor's construction: it may have crossed a fork
    return {
        LABEL: "1",
        LABEL_RUN: run_id,
        LABEL_PID: str(pid),
        LABEL_PID_START: process_start(pid),
        LABEL_HOST: socket.gethostname(),
        LABEL_STEP: step,
    }


def transient_labels(container: Any) -> dict[str, str]:
    """The labels of an image committed from ``container`` for one step: its owner's, and
    :data:`LABEL_TRANSIENT` (give them as the commit's ``conf={"Labels": ...}``)."""
    return {**(container.labels or {}), LABEL_TRANSIENT: "1"}


def owner_tag() -> str:
    """This process as ``<pid>-<start>``, for names of what it leaves on disk (a warm server's stage)."""
    pid = os.getpid()
    return f"{pid}-{process_start(pid) or 0}"


def tag_owner_gone(tag: str) -> bool:
    """Whether the process an :func:`owner_tag` names (on this host) no longer runs."""
    pid, _, start = tag.partition("-")
    return not (pid.isdigit() and pid_alive(int(pid), "" if start == "0" else start))


def _owner_gone(labels: Mapping[str, str], host: str) -> bool:
    """Whether what carries ``labels`` was made on ``host`` by a process that no longer runs."""
    if labels.get(LABEL_HOST) != host:
        return False
    try:
        pid = int(labels.get(LABEL_PID, ""))
    except ValueError:
        pid = 0
    return not (pid > 0 and pid_alive(pid, labels.get(LABEL_PID_START, "")))


def cleanup_stale(client: Any) -> list[str]:
    """Remove labelled containers whose owning process on this host is gone, then such transient
    images; return the containers' names and the images' tags (their ids when untagged)."""
    host = socket.gethostname()
    try:
        # another process (a worker's own sweep, a run's close) may remove one while it is listed
        containers = client.containers.list(all=True, filters={"label": f"{LABEL}=1"}, ignore_removed=True)
    except docker.errors.DockerException as exc:
        raise HarnessError(f"cannot list containers: {exc}") from exc
    removed: list[str] = []
    for container in containers:
        if not _owner_gone(container.labels or {}, host):
            continue
        remove_container(container, "stale container")
        removed.append(str(container.name))
    # after the containers: a dead run's test phase may still stand on its install phase's image
    try:
        # the engine's list as it is (images.list inspects each one, and fails on one gone since)
        images = client.api.images(filters={"label": f"{LABEL_TRANSIENT}=1"})
    except docker.errors.DockerException as exc:
        raise HarnessError(f"cannot list images: {exc}") from exc
    for image in images:
        if not _owner_gone(image.get("Labels") or {}, host):
            continue
        tags = [tag for tag in image.get("RepoTags") or () if tag != "<none>:<none>"]
        name = ", ".join(tags) or str(image["Id"])
        remove_image(client, str(image["Id"]), f"stale image {name}")
        removed.append(name)
    return removed


def remove_container(container: Any, what: str = "container") -> None:
    """Remove ``container`` and its anonymous volumes, running or not (already gone is fine)."""
    try:
        container.remove(force=True, v=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as exc:
        # another process's sweep is removing it (workers of one run each sweep at start)
        if not (exc.status_code == 409 and "already in progress" in str(exc)):
            raise HarnessError(f"cannot remove {what} {container.name}: {exc}") from exc
    except docker.errors.DockerException as exc:
        raise HarnessError(f"cannot remove {what} {container.name}: {exc}") from exc


def remove_image(client: Any, image: str, what: str) -> None:
    """Remove ``image`` (a tag or an id) even when tagged twice (already gone is fine)."""
    try:
        client.images.remove(image, force=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.DockerException as exc:
        raise HarnessError(f"cannot remove {what}: {exc}") from exc
