"""A v1beta1 component becomes a graph ``Component`` (its pod template is already in that form)."""

from __future__ import annotations

from functions.api import v1beta1
from functions.api.from_v1alpha1 import (
    checkpoint_config,
    epp_settings,
    failover_config,
    gms_config,
)
from functions.api.graph import (
    DEFAULT_SHARED_MEMORY,
    MAIN_CONTAINER,
    WORKER_SUB_TYPES,
    Component,
    VolumeMount,
    json_copy,
)

SUB_COMPONENT_LABEL = "nvidia.com/dynamo-sub-component-type"


def _types(component: v1beta1.Component) -> tuple[str | None, str | None]:
    """(component type, sub-component type). A prefill or decode component is also its own sub-type
    (upstream HEAD labels its pods ``nvidia.com/dynamo-sub-component-type``)."""
    ctype = component.type_
    return ctype, ctype if ctype in WORKER_SUB_TYPES else None


def _shared_memory(component: v1beta1.Component) -> str | None:
    size = component.sharedMemorySize
    if size is None:
        return DEFAULT_SHARED_MEMORY
    return None if str(size) == "0" else str(size)


def component_from_v1beta1(component: v1beta1.Component, index: int = 0) -> Component:
    template = json_copy(component.podTemplate or {})
    spec = template.setdefault("spec", {})
    containers = spec.get("containers") or []
    if not any(c.get("name") == MAIN_CONTAINER for c in containers):
        containers = [*containers, {"name": MAIN_CONTAINER}]
    spec["containers"] = containers
    meta = template.get("metadata") or {}
    labels = dict(meta.get("labels") or {})
    component_type, sub_type = _types(component)
    cache = component.compilationCache
    experimental = component.experimental
    prefix = f"spec.components[{index}].experimental"
    gms = gms_config(experimental.gpuMemoryService if experimental else None, f"{prefix}.gpuMemoryService")
    failover = failover_config(experimental.failover if experimental else None, f"{prefix}.failover")
    epp_config, epp_config_ref = epp_settings(component.eppConfig)
    return Component(
        name=component.name,
        component_type=component_type,
        sub_component_type=sub_type,
        replicas=1 if component.replicas is None else component.replicas,
        node_count=component.multinode.nodeCount if component.multinode else 1,
        pod_template={"metadata": {"labels": labels, "annotations": dict(meta.get("annotations") or {})}, "spec": spec},
        pack_domain=component.topologyConstraint.packDomain if component.topologyConstraint else None,
        model_ref=component.modelRef.name if component.modelRef else None,
        min_available=component.minAvailable,
        shared_memory=_shared_memory(component),
        volume_mounts=(VolumeMount(cache.pvcName, cache.mountPath, True),) if cache else (),
        frontend_sidecar={"container": component.frontendSidecar} if component.frontendSidecar else None,
        global_namespace=bool(component.globalDynamoNamespace),
        epp_config=epp_config,
        epp_config_ref=epp_config_ref,
        scaling_adapter=component.scalingAdapter is not None,
        checkpoint=checkpoint_config(
            experimental.checkpoint if experimental else None, f"spec.components[{index}].experimental.checkpoint"
        ),
        gms=gms,
        failover=failover,
    )
