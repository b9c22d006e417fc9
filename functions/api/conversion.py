"""DynamoGraphDeployment v1alpha1 -> v1beta1, following upstream's conversion (docs/upstream/operator.md §8).

The function renders both shapes directly; this conversion exists so users (and tests) can move a
manifest to the storage version, and so a v1alpha1 DGD and its conversion are proven to render the
same resources. Fields v1beta1 has no place for are reported, not silently dropped.
"""

from __future__ import annotations

import copy
import typing
from dataclasses import dataclass, field
from typing import Any

from functions.api.v1beta1 import ComponentType

V1BETA1_TYPES = frozenset(typing.get_args(ComponentType))

# v1alpha1 service fields with no v1beta1 equivalent (upstream keeps them in an annotation).
ALPHA_ONLY_SERVICE_FIELDS = ("autoscaling", "dynamoNamespace", "ingress", "serviceName")
ALPHA_ONLY_SPEC_FIELDS = ("pvcs",)
COPIED_FIELDS = (
    "replicas",
    "minAvailable",
    "modelRef",
    "topologyConstraint",
    "globalDynamoNamespace",
    "runtimeVersionOverride",
    "eppConfig",
    "providerOverride",
)


@dataclass
class Conversion:
    dgd: dict[str, Any]
    dropped: list[str] = field(default_factory=list)  # field paths v1beta1 cannot hold


def _main_container(service: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    main = {"name": "main", **{k: v for k, v in (extra.pop("mainContainer", None) or {}).items() if k != "name"}}
    if service.get("envs"):
        merged = {e["name"]: e for e in main.get("env", [])}
        merged.update({e["name"]: e for e in service["envs"]})
        main["env"] = [merged[k] for k in sorted(merged)]
    if service.get("envFromSecret"):
        main["envFrom"] = [*main.get("envFrom", []), {"secretRef": {"name": service["envFromSecret"]}}]
    for probe in ("livenessProbe", "readinessProbe"):
        if probe in service:
            main[probe] = service[probe]
    resources = service.get("resources")
    if resources:
        out = main.setdefault("resources", {})
        for part in ("requests", "limits"):
            item = resources.get(part)
            if not item:
                continue
            values = out.setdefault(part, {})
            for key in ("cpu", "memory"):
                if item.get(key):
                    values[key] = item[key]
            if item.get("gpu"):
                values[item.get("gpuType") or "nvidia.com/gpu"] = item["gpu"]
            values.update(item.get("custom") or {})
        if resources.get("claims"):
            out["claims"] = [*out.get("claims", []), *resources["claims"]]
    return main


def _component(key: str, service: dict[str, Any], dropped: list[str]) -> dict[str, Any]:
    service = copy.deepcopy(service)
    component: dict[str, Any] = {"name": key}
    ctype, sub = service.get("componentType"), service.get("subComponentType")
    labels = {**(service.get("labels") or {}), **((service.get("extraPodMetadata") or {}).get("labels") or {})}
    annotations = {
        **(service.get("annotations") or {}),
        **((service.get("extraPodMetadata") or {}).get("annotations") or {}),
    }
    if ctype == "worker" and sub in ("prefill", "decode"):
        component["type"] = sub  # as upstream's conversion; its pods get the sub-component-type label from it
    elif ctype in V1BETA1_TYPES:
        component["type"] = ctype
    elif ctype:
        dropped.append(f"spec.services.{key}.componentType")  # e.g. "default": no v1beta1 type
    for name in COPIED_FIELDS:
        if name in service:
            component[name] = service[name]
    if "multinode" in service:
        component["multinode"] = {"nodeCount": 2, **service["multinode"]}
    extra = copy.deepcopy(service.get("extraPodSpec") or {})
    main = _main_container(service, extra)
    for mount in service.get("volumeMounts") or []:
        if mount.get("useAsCompilationCache"):
            component["compilationCache"] = {
                "pvcName": mount["name"],
                **({"mountPath": mount["mountPoint"]} if mount.get("mountPoint") else {}),
            }
        else:
            main.setdefault("volumeMounts", []).append({"name": mount["name"], "mountPath": mount.get("mountPoint")})
    containers = [main, *extra.pop("containers", [])]
    sidecar = service.get("frontendSidecar")
    if sidecar:
        container: dict[str, Any] = {"name": "sidecar-frontend", "image": sidecar["image"]}
        if sidecar.get("args"):
            container["args"] = sidecar["args"]
        if sidecar.get("envFromSecret"):
            container["envFrom"] = [{"secretRef": {"name": sidecar["envFromSecret"]}}]
        if sidecar.get("envs"):
            container["env"] = sidecar["envs"]
        containers.append(container)
        component["frontendSidecar"] = "sidecar-frontend"
    template: dict[str, Any] = {"spec": {**extra, "containers": containers}}
    metadata = {k: v for k, v in (("labels", labels), ("annotations", annotations)) if v}
    if metadata:
        template["metadata"] = metadata
    component["podTemplate"] = template
    shm = service.get("sharedMemory")
    if shm is not None:
        component["sharedMemorySize"] = "0" if shm.get("disabled") else shm.get("size")
    if (service.get("scalingAdapter") or {}).get("enabled"):
        component["scalingAdapter"] = {}
    experimental = {}
    if service.get("gpuMemoryService"):
        gms = {k: v for k, v in service["gpuMemoryService"].items() if k != "enabled"}
        if "mode" in gms:
            gms["mode"] = gms["mode"][0].upper() + gms["mode"][1:]
        if service["gpuMemoryService"].get("enabled"):
            experimental["gpuMemoryService"] = gms
    if (service.get("failover") or {}).get("enabled"):
        failover = {k: v for k, v in service["failover"].items() if k != "enabled"}
        if "mode" in failover:
            failover["mode"] = failover["mode"][0].upper() + failover["mode"][1:]
        experimental["failover"] = failover
    if service.get("checkpoint"):
        experimental["checkpoint"] = service["checkpoint"]
    if experimental:
        component["experimental"] = experimental
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
