"""A DynamoCheckpoint with a GPU memory service (docs/upstream/checkpoint-gms-dgdr-model.md §1.9, §1.10): its pod
template must come prepared for the intra-pod GMS (the DGD prepares it for its auto checkpoints), and the GPUs
its target holds through DRA claims count for the cuda-checkpoint wrapper.
"""

from __future__ import annotations

from typing import Any

from functions.api.graph import SpecError
from functions.contract import ResourceSelector
from functions.kube import gms

RCT_REQUIREMENT_PREFIX = "checkpoint-rct-"
PREFIX = "gpuMemoryService checkpoint pod template"


def check_gms_spec(spec: dict[str, Any]) -> None:
    """Upstream's webhook rules a DynamoCheckpoint's ``gpuMemoryService`` breaks outright; raises ``SpecError``."""
    service = spec.get("gpuMemoryService") or {}
    if not service.get("enabled"):
        return
    if service.get("mode", "intraPod") != "intraPod":
        raise SpecError(
            f'spec.gpuMemoryService.mode: Unsupported value: "{service.get("mode")}": supported values: "intraPod"'
        )
    names = {
        c.get("name") for c in ((spec["job"].get("podTemplateSpec") or {}).get("spec") or {}).get("containers") or []
    }
    for i, name in enumerate(service.get("extraClientContainers") or []):
        if name not in names:
            raise SpecError(
                f"spec.gpuMemoryService.extraClientContainers[{i}]: {name!r} does not name a container in "
                "spec.job.podTemplateSpec.spec.containers"
            )


def _container_problem(container: dict[str, Any], kind: str) -> str | None:
    name = container.get("name")
    env = {e.get("name"): e.get("value") for e in container.get("env") or []}
    if env.get(gms.SOCKET_ENV) != gms.CONTROL_DIR:
        return f"{PREFIX} {kind} {name!r} is missing env {gms.SOCKET_ENV}={gms.CONTROL_DIR}"
    if not any(c.get("name") == gms.CLAIM for c in (container.get("resources") or {}).get("claims") or []):
        return f"{PREFIX} {kind} {name!r} is missing resource claim {gms.CLAIM!r}"
    mounted = any(
        m.get("name") == gms.CONTROL_VOLUME and m.get("mountPath") == gms.CONTROL_DIR
        for m in container.get("volumeMounts") or []
    )
    if not mounted:
        return f"{PREFIX} {kind} {name!r} does not mount {gms.CONTROL_VOLUME!r} at {gms.CONTROL_DIR}"
    return None


def unprepared(spec: dict[str, Any]) -> str | None:
    """Why the pod template is not prepared for the intra-pod GMS (upstream ``gms_pod_validation``), or None."""
    service = spec.get("gpuMemoryService") or {}
    if not service.get("enabled"):
        return None
    pod = (spec["job"].get("podTemplateSpec") or {}).get("spec") or {}
    if not any(v.get("name") == gms.CONTROL_VOLUME for v in pod.get("volumes") or []):
        return f"{PREFIX} is missing volume {gms.CONTROL_VOLUME!r}"
    server = next((c for c in pod.get("initContainers") or [] if c.get("name") == gms.SERVER), None)
    if server is None:
        return f"{PREFIX} is missing init container {gms.SERVER!r}"
    if not any(c.get("name") == gms.CLAIM for c in pod.get("resourceClaims") or []):
        return f"{PREFIX} is missing pod resource claim {gms.CLAIM!r}"
    containers = {c.get("name"): c for c in pod.get("containers") or []}
    target = spec["job"].get("targetContainerName") or "main"
    clients = [containers[n] for n in (target, *(service.get("extraClientContainers") or [])) if n in containers]
    for container, kind in ((server, "init container"), *((c, "container") for c in clients)):
        problem = _container_problem(container, kind)
        if problem:
            return problem
    return None


def claim_template_requirements(pod: dict[str, Any], namespace: str) -> dict[str, ResourceSelector]:
    """The ResourceClaimTemplates the pod's claims name, to count the GPUs they request."""
    return {
        RCT_REQUIREMENT_PREFIX + name: ResourceSelector(
            gms.RCT_API_VERSION, "ResourceClaimTemplate", match_name=name, namespace=namespace
        )
        for name in sorted({c["resourceClaimTemplateName"] for c in pod.get("resourceClaims") or []
                            if c.get("resourceClaimTemplateName")})
    }  # fmt: skip


def _request_gpus(request: dict[str, Any]) -> int:
    exactly = request.get("exactly")
    if exactly is not None:
        if exactly.get("allocationMode") == "All":
            return 2
        return int(exactly.get("count") or 0) or 1
    options = request.get("firstAvailable") or []
    return max((int(o.get("count") or 0) or 1 for o in options), default=0)


def dra_gpus(
    container: dict[str, Any], pod: dict[str, Any], required: dict[str, list[dict[str, Any]]], device_class: str
) -> int:
    """The GPUs ``container`` holds through its DRA claims: the requests of the claim templates they name whose
    device class is the GMS one or ``gpu.nvidia.com`` (count 0 counts 1, ``All`` counts 2, ``firstAvailable``
    its largest option)."""
    templates = {c.get("name"): c.get("resourceClaimTemplateName") for c in pod.get("resourceClaims") or []}
    classes = {device_class, gms.DEFAULT_DEVICE_CLASS}
    total = 0
    for claim in (container.get("resources") or {}).get("claims") or []:
        name = templates.get(claim.get("name"))
        found = required.get(RCT_REQUIREMENT_PREFIX + str(name)) or []
        for request in ((((found[0] if found else {}).get("spec") or {}).get("spec") or {}).get("devices") or {}).get(
            "requests"
        ) or []:
            options = [request.get("exactly") or {}, *(request.get("firstAvailable") or [])]
            if any(o.get("deviceClassName") in classes for o in options):
                total += _request_gpus(request)
    return total
