"""Small helpers over plain-dict pod specs shared by the backends."""

from __future__ import annotations

import re
from typing import Any

from functions.kube.backends.errors import BackendError

MAIN_CONTAINER = "main"
GPU_RESOURCE = "nvidia.com/gpu"
SHARED_MEMORY_VOLUME = "shared-memory"
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")

_INTEGER = re.compile(r"[+-]?\d+")


def main_container(pod_spec: dict[str, Any]) -> dict[str, Any]:
    for container in pod_spec.get("containers") or []:
        if container.get("name") == MAIN_CONTAINER:
            return container
    raise BackendError(f"pod spec has no container named {MAIN_CONTAINER!r}")


def as_int(value: Any) -> int | None:
    """An integer resource quantity ("8" or 8); None for anything else (upstream parses with ParseInt)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INTEGER.fullmatch(value):
        return int(value)
    return None


def gpu_limit(container: dict[str, Any], resource: str = GPU_RESOURCE) -> int:
    """GPUs from ``resources.limits`` (0 when unset or not an integer)."""
    limits = (container.get("resources") or {}).get("limits") or {}
    return as_int(limits.get(resource)) or 0


def gpu_request_or_limit(container: dict[str, Any], resource: str = GPU_RESOURCE) -> int:
    """GPUs from ``resources.requests``, else ``resources.limits`` (0 when neither is an integer)."""
    resources = container.get("resources") or {}
    for section in ("requests", "limits"):
        value = as_int((resources.get(section) or {}).get(resource))
        if value is not None:
            return value
    return 0


def drop_probes(container: dict[str, Any], *names: str) -> None:
    for name in names or PROBES:
        container.pop(name, None)


def append_env(container: dict[str, Any], entry: dict[str, Any], *, before: str | None = None) -> None:
    """Append an env entry; with ``before``, slot it in front of a trailing entry of that name.

    Upstream appends backend env vars in ``UpdateContainer`` ahead of the vLLM compilation-cache variable, which our
    pod renderer may already have appended; keeping that order keeps rendered pods identical to upstream's.
    """
    env = list(container.get("env") or [])
    if before and env and env[-1].get("name") == before:
        env.insert(len(env) - 1, entry)
    else:
        env.append(entry)
    container["env"] = env


def add_volume_mount(container: dict[str, Any], mount: dict[str, Any]) -> None:
    """Add a mount ahead of the /dev/shm mount, where upstream's container-level step leaves it."""
    mounts = list(container.get("volumeMounts") or [])
    position = next(
        (i for i, m in enumerate(mounts) if m.get("name") == SHARED_MEMORY_VOLUME and m.get("mountPath") == "/dev/shm"),
        len(mounts),
    )
    mounts.insert(position, mount)
    container["volumeMounts"] = mounts


def replace_named(
    items: list[dict[str, Any]], new: dict[str, Any], *, also_path: str | None = None
) -> list[dict[str, Any]]:
    """``items`` (volumes, mounts, env, claims) without the one named as ``new`` (and, with ``also_path``, any
    mount at that path), then ``new`` last."""
    kept = [i for i in items if i.get("name") != new["name"] and (also_path is None or i.get("mountPath") != also_path)]
    return [*kept, new]


def add_volume(pod_spec: dict[str, Any], volume: dict[str, Any]) -> None:
    pod_spec["volumes"] = [*(pod_spec.get("volumes") or []), volume]


def add_init_container(pod_spec: dict[str, Any], container: dict[str, Any]) -> None:
    pod_spec["initContainers"] = [*(pod_spec.get("initContainers") or []), container]
