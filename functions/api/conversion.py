"""DynamoGraphDeployment v1alpha1 -> v1beta1, following upstream's conversion (docs/upstream/operator.md §8).

The function renders both shapes directly; this conversion exists so users (and tests) can move a
manifest to the storage version, and so a v1alpha1 DGD and its conversion are proven to render the
same resources. Fields v1beta1 has no place for are reported, not silently dropped.
"""

from __future__ import annotations

import copy
import re
import typing
from dataclasses import dataclass, field
from typing import Any

from functions.api.graph import json_copy
from functions.api.v1beta1 import ComponentType

V1BETA1_TYPES = frozenset(typing.get_args(ComponentType))

# v1alpha1 service fields with no v1beta1 equivalent (upstream keeps them in an annotation).
ALPHA_ONLY_SERVICE_FIELDS = ("autoscaling", "dynamoNamespace", "ingress", "serviceName")
ALPHA_ONLY_SPEC_FIELDS = ("pvcs",)
COPIED_FIELDS = (
    "replicas",
    "minAvailable",
    "topologyConstraint",
    "globalDynamoNamespace",
    "runtimeVersionOverride",
    "eppConfig",
    "providerOverride",
)
MULTINODE_FIELDS = ("nodeCount", "leader", "worker")


@dataclass
class Conversion:
    dgd: dict[str, Any]
    dropped: list[str] = field(default_factory=list)  # field paths v1beta1 cannot hold


FRONTEND_SIDECAR = "sidecar-frontend"
MAIN = "main"
GPU_RESOURCE = "nvidia.com/gpu"
WORKER_SUB_TYPES = ("prefill", "decode")
# A quantity whose value is zero (the number before the suffix is all zeros), as resource.Quantity.IsZero says.
_ZERO_QUANTITY = re.compile(r"^[+-]?(0+\.?0*|\.0+)([eE][+-]?[0-9]+|[A-Za-z]*)$")


def component_type(service: dict[str, Any]) -> str | None:
    """The v1beta1 type of a v1alpha1 service: a ``worker`` with ``subComponentType`` prefill or decode is that
    type, as upstream's conversion promotes it; any other ``componentType`` is kept as written."""
    ctype, sub = service.get("componentType"), service.get("subComponentType")
    if ctype == "worker" and sub in WORKER_SUB_TYPES:
        return str(sub)
    return str(ctype) if ctype else None


def _is_empty(value: Any) -> bool:
    """Go's zero value, which ``mergo`` does not merge over a set one."""
    return value is None or value == "" or value is False or value == 0 or value == [] or value == {}


def go_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` merged onto ``base`` as upstream's ``mergo.Merge(..., WithOverride)`` merges two structs: mappings
    key by key, any other set value of ``over`` replacing ``base``'s (a list whole); an empty one never does."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = go_merge(out[key], value)
        elif not _is_empty(value) or key not in out:
            out[key] = value
    return out


def merge_envs_in_order(base: list[dict[str, Any]], over: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Upstream's conversion ``mergeEnvs``: ``base`` in its order, each var of ``over`` replacing the one of its
    name in place or appended."""
    out = list(base)
    where = {e.get("name"): i for i, e in enumerate(out)}
    for var in over:
        if var.get("name") in where:
            out[where[var.get("name")]] = var
        else:
            where[var.get("name")] = len(out)
            out.append(var)
    return out


def native_resources(resources: dict[str, Any]) -> dict[str, Any]:
    """A v1alpha1 ``resources`` block as the main container's: cpu, memory, gpu (as ``gpuType``, default
    ``nvidia.com/gpu``) and custom names per part; claims as they are."""
    out: dict[str, Any] = {}
    for part in ("requests", "limits"):
        item = resources.get(part) or {}
        values = {name: item[key] for key, name in (("cpu", "cpu"), ("memory", "memory")) if item.get(key)}
        if item.get("gpu"):
            values[item.get("gpuType") or GPU_RESOURCE] = item["gpu"]
        values.update(item.get("custom") or {})
        if values:
            out[part] = values
    if resources.get("claims"):
        out["claims"] = list(resources["claims"])
    return out


def _compilation_cache(service: dict[str, Any]) -> dict[str, Any] | None:
    """The first volume mount with ``useAsCompilationCache``, as v1beta1's ``compilationCache``."""
    for mount in service.get("volumeMounts") or []:
        if mount.get("useAsCompilationCache"):
            cache = {"pvcName": mount["name"]}
            if mount.get("mountPoint"):
                cache["mountPath"] = mount["mountPoint"]
            return cache
    return None


def _dedicated_main(service: dict[str, Any]) -> dict[str, Any]:
    """Container ``main`` from the service's own fields: resources, envs, envFromSecret, probes and every volume
    mount, the compilation cache's too (upstream ``buildMainContainerFromDedicated``: it is also
    ``compilationCache``, but a pod template, when there is one, carries its mount)."""
    main: dict[str, Any] = {"name": MAIN}
    resources = native_resources(service.get("resources") or {})
    if resources:
        main["resources"] = resources
    if service.get("envs"):
        main["env"] = list(service["envs"])
    if service.get("envFromSecret"):
        main["envFrom"] = [{"secretRef": {"name": service["envFromSecret"]}}]
    for probe in ("livenessProbe", "readinessProbe"):
        if service.get(probe) is not None:
            main[probe] = service[probe]
    mounts = [{"name": m["name"], "mountPath": m.get("mountPoint") or ""} for m in service.get("volumeMounts") or []]
    if mounts:
        main["volumeMounts"] = mounts
    return main


def _main_container(service: dict[str, Any], user: dict[str, Any] | None) -> dict[str, Any]:
    """``extraPodSpec.mainContainer`` merged over the dedicated fields (upstream ``mergeExtraPodSpecMainContainer``):
    its set fields win, but env merges by name in order and its volume mounts come before the dedicated ones."""
    main = _dedicated_main(service)
    if not user:
        return main
    env = merge_envs_in_order(main.get("env") or [], user.get("env") or [])
    mounts = [*(user.get("volumeMounts") or []), *(main.get("volumeMounts") or [])]
    merged = go_merge(main, user)
    for key, value in (("env", env), ("volumeMounts", mounts)):
        if value:
            merged[key] = value
        else:
            merged.pop(key, None)
    merged["name"] = MAIN
    return merged


def _sidecar(sidecar: dict[str, Any]) -> dict[str, Any]:
    """A v1alpha1 ``frontendSidecar`` as the container v1beta1 names."""
    container: dict[str, Any] = {"name": FRONTEND_SIDECAR, "image": sidecar.get("image")}
    if sidecar.get("args"):
        container["args"] = list(sidecar["args"])
    if sidecar.get("envs"):
        container["env"] = list(sidecar["envs"])
    if sidecar.get("envFromSecret"):
        container["envFrom"] = [{"secretRef": {"name": sidecar["envFromSecret"]}}]
    return container


POD_TEMPLATE_FIELDS = ("resources", "envFromSecret", "livenessProbe", "readinessProbe", "extraPodMetadata")


def _has_pod_template(service: dict[str, Any]) -> bool:
    """Upstream's conversion writes a pod template only when one of these says something."""
    extra = service.get("extraPodSpec") or {}
    return (
        any(service.get(name) is not None for name in POD_TEMPLATE_FIELDS)
        or bool(service.get("envs"))
        or any(not m.get("useAsCompilationCache") for m in service.get("volumeMounts") or [])
        or any(v not in (None, {}, []) for v in extra.values())
        or service.get("frontendSidecar") is not None
    )


def _pod_template(service: dict[str, Any]) -> dict[str, Any]:
    extra = json_copy(service.get("extraPodSpec") or {})
    main = _main_container(service, extra.pop("mainContainer", None))
    containers = [main, *(c for c in extra.pop("containers", None) or [] if c.get("name") != MAIN)]
    sidecar = service.get("frontendSidecar")
    if sidecar is not None and not any(c.get("name") == FRONTEND_SIDECAR for c in containers):
        containers.append(_sidecar(sidecar))
    template: dict[str, Any] = {"spec": {**extra, "containers": containers}}
    pod_meta = service.get("extraPodMetadata") or {}
    metadata = {k: dict(pod_meta[k]) for k in ("annotations", "labels") if pod_meta.get(k)}
    if metadata:
        template["metadata"] = metadata
    return template


def _mode(mode: str) -> str:
    return mode[:1].upper() + mode[1:]


def _experimental(service: dict[str, Any]) -> dict[str, Any]:
    experimental: dict[str, Any] = {}
    gms = service.get("gpuMemoryService") or {}
    if gms.get("enabled"):
        experimental["gpuMemoryService"] = {k: _mode(v) if k == "mode" else v for k, v in gms.items() if k != "enabled"}
    failover = service.get("failover") or {}
    if failover.get("enabled"):
        experimental["failover"] = {k: _mode(v) if k == "mode" else v for k, v in failover.items() if k != "enabled"}
    if service.get("checkpoint") is not None:
        experimental["checkpoint"] = service["checkpoint"]
    return experimental


def service_as_component(key: str, service: dict[str, Any]) -> dict[str, Any]:
    """A v1alpha1 service as the v1beta1 component upstream's conversion makes of it, read back as the operator
    stores it (``ConvertFromDynamoComponentDeploymentSharedSpec``): named by its key, typed as ``component_type``
    says, ``sharedMemory`` as ``sharedMemorySize``, the compilation-cache mount as ``compilationCache``, GPU
    memory service, failover and checkpoint under ``experimental``, and resources, envs, envFromSecret, probes,
    volume mounts, ``extraPodSpec``, ``extraPodMetadata`` and the frontend sidecar in ``podTemplate``. What v1beta1
    has no place for (``labels``, ``annotations``, ``dynamoNamespace``, ``serviceName``, ``ingress``,
    ``autoscaling``, a ``subComponentType`` it does not promote) is not in it."""
    service = json_copy(service)
    component: dict[str, Any] = {"name": key}
    ctype = component_type(service)
    if ctype:
        component["type"] = ctype
    for name in COPIED_FIELDS:
        if service.get(name) is not None and service.get(name) != "":
            component[name] = service[name]
    if not service.get("globalDynamoNamespace"):
        component.pop("globalDynamoNamespace", None)
    if "multinode" in service:
        multinode = service["multinode"] or {}
        component["multinode"] = {"nodeCount": 2, **{k: v for k, v in multinode.items() if k in MULTINODE_FIELDS}}
    if "modelRef" in service:
        component["modelRef"] = {k: v for k, v in service["modelRef"].items() if k in ("name", "revision") and v}
    shm = service.get("sharedMemory")
    if shm is not None and (shm.get("disabled") or (shm.get("size") and not _is_zero(str(shm["size"])))):
        component["sharedMemorySize"] = "0" if shm.get("disabled") else str(shm["size"])
    cache = _compilation_cache(service)
    if cache is not None:
        component["compilationCache"] = cache
    if (service.get("scalingAdapter") or {}).get("enabled"):
        component["scalingAdapter"] = {}
    experimental = _experimental(service)
    if experimental:
        component["experimental"] = experimental
    if _has_pod_template(service):
        component["podTemplate"] = _pod_template(service)
    if service.get("frontendSidecar") is not None:
        component["frontendSidecar"] = FRONTEND_SIDECAR
    return component


def _is_zero(quantity: str) -> bool:
    return bool(_ZERO_QUANTITY.match(quantity.strip()))


def _component(key: str, service: dict[str, Any], dropped: list[str]) -> dict[str, Any]:
    """``service_as_component``, with the service's own ``labels`` and ``annotations`` in its pod template (under
    ``extraPodMetadata``'s): a v1beta1 manifest has no other place for them. What it cannot hold is reported."""
    component = service_as_component(key, service)
    ctype = service.get("componentType")
    if ctype and component.get("type") not in V1BETA1_TYPES:
        component.pop("type", None)
        dropped.append(f"spec.services.{key}.componentType")  # e.g. "default": no v1beta1 type
    metadata = {}
    for name in ("labels", "annotations"):
        own = {**(service.get(name) or {}), **((service.get("extraPodMetadata") or {}).get(name) or {})}
        if own:
            metadata[name] = own
    if metadata:
        template = component.setdefault("podTemplate", {"spec": {"containers": [{"name": MAIN}]}})
        template["metadata"] = metadata
    dropped += [f"spec.services.{key}.{name}" for name in ALPHA_ONLY_SERVICE_FIELDS if name in service]
    return component


def v1alpha1_to_v1beta1(dgd: dict[str, Any]) -> Conversion:
    spec = copy.deepcopy(dgd.get("spec") or {})
    dropped: list[str] = []
    services = spec.pop("services", {}) or {}
    out_spec: dict[str, Any] = {k: v for k, v in spec.items() if k not in (*ALPHA_ONLY_SPEC_FIELDS, "envs")}
    if "envs" in spec:
        out_spec["env"] = spec["envs"]
    if "topologyConstraint" in spec:
        constraint = dict(spec["topologyConstraint"])
        if "topologyProfile" in constraint:
            constraint["clusterTopologyName"] = constraint.pop("topologyProfile")
        out_spec["topologyConstraint"] = constraint
    dropped += [f"spec.{name}" for name in ALPHA_ONLY_SPEC_FIELDS if name in spec]
    out_spec["components"] = [_component(key, services[key], dropped) for key in sorted(services)]
    converted = {**copy.deepcopy(dgd), "apiVersion": "nvidia.com/v1beta1", "spec": out_spec}
    return Conversion(converted, dropped)
