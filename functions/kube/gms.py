"""The intra-pod GPU Memory Service (docs/upstream/checkpoint-gms-dgdr-model.md §3.3, §3.4): the DRA
ResourceClaimTemplate of a component's GPUs, and the pod that shares them through a ``gms-server`` native
sidecar.

The GPUs move from the containers' resource limits to one DRA claim, ``intrapod-shared-gpu``, that the
sidecar and every client container (``main`` and the extra clients) hold; they talk over a socket directory
on the ``gms-intrapod-control`` emptyDir.
"""

from __future__ import annotations

from typing import Any

from functions.api.graph import SpecError
from functions.kube.backends.podparts import replace_named

RCT_API_VERSION = "resource.k8s.io/v1"
CLAIM = "intrapod-shared-gpu"
CONTROL_VOLUME = "gms-intrapod-control"
CONTROL_DIR = "/gms-intrapod-control"
SOCKET_ENV = "GMS_SOCKET_DIR"
SERVER = "gms-server"
SERVER_COMMAND = ["python3", "-m", "gpu_memory_service.cli.server"]
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
DEFAULT_DEVICE_CLASS = "gpu.nvidia.com"
GPU_SUFFIXES = ("/gpu",)


def is_gpu_resource(name: str) -> bool:
    return name.endswith(GPU_SUFFIXES) or "/mig-" in name


def scalar_gpus(container: dict[str, Any], path: str) -> int:
    """The container's scalar GPUs: its limits, else its requests; raises ``SpecError`` naming ``path``."""
    resources = container.get("resources") or {}
    for part in ("limits", "requests"):
        total = 0
        for name, value in (resources.get(part) or {}).items():
            if is_gpu_resource(name):
                try:
                    total += int(str(value))
                except ValueError:
                    raise SpecError(f"{path}: GPU quantity {name}={value!r} is not a whole number") from None
        if total:
            return total
    return 0


def rct_name(parent: str, component_key: str) -> str:
    """``{dgd}-{lower(component)}-gpu`` (a standalone DCD's own name as the parent)."""
    return f"{parent}-{component_key}-gpu"


def render_resource_claim_template(
    name: str, namespace: str, device_class: str | None, count: int, labels: dict[str, str] | None = None
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = dict(sorted(labels.items()))
    request = {
        "name": "gpus",
        "exactly": {
            "deviceClassName": device_class or DEFAULT_DEVICE_CLASS,
            "allocationMode": "ExactCount",
            "count": count,
        },
    }
    return {
        "apiVersion": RCT_API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": metadata,
        "spec": {"spec": {"devices": {"requests": [request]}}},
    }


def drop_gpu_scalars(container: dict[str, Any]) -> None:
    """The container's GPU limits and requests removed (a DRA claim holds its GPUs instead)."""
    resources = dict(container.get("resources") or {})
    for part in ("limits", "requests"):
        kept = {k: v for k, v in (resources.get(part) or {}).items() if not is_gpu_resource(k)}
        if kept:
            resources[part] = kept
        else:
            resources.pop(part, None)
    container["resources"] = resources


def add_gpu_toleration(pod: dict[str, Any]) -> None:
    """Tolerate the GPU nodes' taint, unless a toleration of that key and effect is there (upstream's check):
    without GPU limits nothing else lands the pod on a GPU node."""
    tolerations = list(pod.get("tolerations") or [])
    key, effect = GPU_TOLERATION["key"], GPU_TOLERATION["effect"]
    if not any(t.get("key") == key and t.get("effect") == effect for t in tolerations):
        tolerations.append(dict(GPU_TOLERATION))
    pod["tolerations"] = tolerations


def wire_client(container: dict[str, Any]) -> None:
    """A GMS client: its GPU scalars become the shared claim; the socket directory mounted and named in env
    (the operator's mount and env win over the user's)."""
    drop_gpu_scalars(container)
    container["resources"]["claims"] = replace_named(list(container["resources"].get("claims") or []), {"name": CLAIM})
    mounts = [m for m in container.get("volumeMounts") or [] if m.get("mountPath") != CONTROL_DIR]
    container["volumeMounts"] = replace_named(mounts, {"name": CONTROL_VOLUME, "mountPath": CONTROL_DIR})
    container["env"] = replace_named(list(container.get("env") or []), {"name": SOCKET_ENV, "value": CONTROL_DIR})


def server_sidecar(image: str | None) -> dict[str, Any]:
    """The ``gms-server`` native sidecar: the main image, no probes."""
    sidecar: dict[str, Any] = {"name": SERVER, "command": list(SERVER_COMMAND), "restartPolicy": "Always"}
    if image:
        sidecar["image"] = image
    sidecar.update(
        env=[{"name": SOCKET_ENV, "value": CONTROL_DIR}],
        resources={"claims": [{"name": CLAIM}]},
        volumeMounts=[{"name": CONTROL_VOLUME, "mountPath": CONTROL_DIR}],
    )
    return sidecar


def apply_intrapod_gms(pod: dict[str, Any], claim_template: str, clients: tuple[str, ...], path: str) -> None:
    """``pod`` (a pod spec) shares its GPUs through GMS, in place: ``clients`` are the container names wired as
    clients (the target first; its image runs the sidecar). Raises ``SpecError`` naming ``path`` for a client
    that is not a container of the pod."""
    containers = {c.get("name"): c for c in pod.get("containers") or []}
    for name in clients:
        if name not in containers:
            raise SpecError(f"{path}: {name!r} does not name a container in podTemplate.spec.containers")
        wire_client(containers[name])
    claims = [c for c in pod.get("resourceClaims") or [] if c.get("name") != CLAIM]
    pod["resourceClaims"] = [*claims, {"name": CLAIM, "resourceClaimTemplateName": claim_template}]
    add_gpu_toleration(pod)
    pod["volumes"] = replace_named(list(pod.get("volumes") or []), {"name": CONTROL_VOLUME, "emptyDir": {}})
    init = [c for c in pod.get("initContainers") or [] if c.get("name") != SERVER]
    pod["initContainers"] = [*init, server_sidecar(containers[clients[0]].get("image"))]
