"""A graph's GPU memory services: upstream's rules (docs/upstream/checkpoint-gms-dgdr-model.md §3.2), the
ResourceClaimTemplate each component's GPUs are claimed through (docs/upstream/checkpoint-gms-dgdr-model.md §3.3),
and the intra-pod pod shape (docs/upstream/checkpoint-gms-dgdr-model.md §3.4)."""

from __future__ import annotations

from typing import Any

from functions.api.graph import MAIN_CONTAINER, Component, Graph, SpecError
from functions.api.operator_config import OperatorConfig
from functions.kube import gms
from functions.kube.backends.podparts import gpu_limit
from functions.kube.defaults import WORKER_TYPES
from functions.kube.failover import apply_intrapod_failover
from functions.kube.labels import GRAPH_NAME

DRA_OFF = (
    "gpuMemoryService / inter-pod GMS failover requires DRA (Dynamic Resource Allocation), but DRA is not "
    "available (either the resource.k8s.io/v1 API is not registered on this cluster, which requires Kubernetes "
    "1.34+, or DRA has been explicitly disabled in the operator configuration)"
)
RCT_PREFIX = "gms-claim-template-"


def main_container(component: Component) -> dict[str, Any]:
    return next(c for c in component.pod_template["spec"]["containers"] if c.get("name") == MAIN_CONTAINER)


def check_gms(components: tuple[Component, ...], operator_config: OperatorConfig) -> None:
    """Upstream's webhook rules on GPU memory services and checkpoint GMS clients; raises ``SpecError``."""
    for component in components:
        config = component.gms
        checkpoint = component.checkpoint
        if checkpoint is not None and checkpoint.gms_client_containers:
            where = f"{checkpoint.path}.job.gmsClientContainers"
            if config is None:
                raise SpecError(f"{where}: requires gpuMemoryService to be set")
            if config.mode != "IntraPod":
                raise SpecError(f"{where}: is only supported with gpuMemoryService.mode=IntraPod")
        if config is None:
            continue
        if operator_config.dra.enabled is False:
            raise SpecError(f"{config.path}: {DRA_OFF}")
        if component.component_type not in WORKER_TYPES:
            raise SpecError(
                f"{config.path}: GPU memory service is only supported for worker, prefill, or decode components"
            )
        if gpu_limit(main_container(component)) < 1:
            raise SpecError(
                f"{config.path}: GPU memory service requires "
                "podTemplate.spec.containers[main].resources.limits.nvidia.com/gpu >= 1"
            )
        names = {c.get("name") for c in component.pod_template["spec"]["containers"]}
        for i, name in enumerate(config.extra_client_containers):
            if name not in names:
                raise SpecError(
                    f"{config.path}.extraClientContainers[{i}]: {name!r} does not name a container in "
                    "podTemplate.spec.containers"
                )


def check_inter_pod(components: tuple[Component, ...], backends: dict[str, str], grove: bool) -> None:
    """The inter-pod layout needs the Grove pathway and vLLM (upstream's webhook,
    docs/upstream/checkpoint-gms-dgdr-model.md §3.2 item 6)."""
    for component in components:
        if not component.inter_pod_gms:
            continue
        assert component.gms is not None
        if not grove:
            raise SpecError(
                f"{component.gms.path}.mode: the inter-pod GPU memory service requires the Grove pathway "
                "(this graph does not use Grove)"
            )
        backend = backends.get(component.name, "noop")
        if backend != "vllm":
            raise SpecError(
                f"{component.gms.path}.mode: the inter-pod GMS layout is currently supported only for vLLM "
                f"(detected backend: {backend})"
            )


def claim_template_name(graph: Graph, component: Component) -> str:
    """``{dgd}-{lower(component)}-gpu``; a standalone DCD's graph name is its own."""
    return gms.rct_name(graph.name, component.key)


def render_claim_templates(graph: Graph) -> dict[str, dict[str, Any]]:
    """Composed resource name -> the ResourceClaimTemplate of each component with a GPU memory service and GPUs."""
    out = {}
    for component in graph.components:
        if component.gms is None:
            continue
        count = gms.scalar_gpus(main_container(component), component.gms.path)
        if count < 1:
            continue
        name = claim_template_name(graph, component)
        out[RCT_PREFIX + component.key] = gms.render_resource_claim_template(
            name, graph.namespace, component.gms.device_class, count, {GRAPH_NAME: graph.name}
        )
    return out


def apply_component_gms(graph: Graph, component: Component, pod: dict[str, Any], backend: str) -> None:
    """The component's pod shares its GPUs through the intra-pod GMS, and with intra-pod failover runs two
    engines on them (in place; nothing without a GMS)."""
    config = component.gms
    if config is None or config.mode != "IntraPod":
        return
    clients = (MAIN_CONTAINER, *config.extra_client_containers)
    gms.apply_intrapod_gms(pod, claim_template_name(graph, component), clients, config.path)
    apply_intrapod_failover(pod, component, backend)
