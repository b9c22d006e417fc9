"""Labels and annotations of cliques and Services, in upstream's precedence order
(docs/upstream/operator.md §1.3, §1.5)."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from functions.api.graph import Component, Graph
from functions.kube.defaults import WORKER_TYPES
from functions.kube.naming import component_resource_name, dynamo_namespace

if TYPE_CHECKING:
    from functions.kube.podspec import PodContext

SELECTOR = "nvidia.com/selector"
GRAPH_NAME = "nvidia.com/dynamo-graph-deployment-name"
COMPONENT = "nvidia.com/dynamo-component"
NAMESPACE = "nvidia.com/dynamo-namespace"
COMPONENT_TYPE = "nvidia.com/dynamo-component-type"
SUB_COMPONENT_TYPE = "nvidia.com/dynamo-sub-component-type"
BASE_MODEL_HASH = "nvidia.com/dynamo-base-model-hash"
WORKER_HASH = "nvidia.com/dynamo-worker-hash"
# On worker, prefill and decode pods of a graph with an EPP component; the InferencePool selects on it (HEAD).
COMPONENT_CLASS = "nvidia.com/dynamo-component-class"
WORKER_CLASS = "worker"
METRICS_ENABLED = "nvidia.com/metrics-enabled"
DISCOVERY_BACKEND = "nvidia.com/dynamo-discovery-backend"
DISCOVERY_ENABLED = "nvidia.com/dynamo-discovery-enabled"
ENABLE_METRICS_ANNOTATION = "nvidia.com/enable-metrics"
# DGD metadata annotations every component inherits (upstream propagates these five).
PROPAGATED_ANNOTATIONS = (
    "nvidia.com/enable-metrics",
    "nvidia.com/dynamo-discovery-backend",
    "nvidia.com/dynamo-kube-discovery-mode",
    "nvidia.com/dynamo-operator-origin-version",
    "nvidia.com/vllm-distributed-executor-backend",
)


def model_hash(model_name: str) -> str:
    return hashlib.sha256(model_name.encode()).hexdigest()[:8]


def component_labels(graph: Graph, component: Component) -> dict[str, str]:
    """Base labels, then DGD and component labels, then pod-template labels; system labels re-asserted."""
    dyn_ns = dynamo_namespace(graph, component)
    labels = {
        SELECTOR: component_resource_name(graph, component),
        GRAPH_NAME: graph.name,
        COMPONENT: component.name,
        NAMESPACE: dyn_ns,
    }
    if component.component_type:
        labels[COMPONENT_TYPE] = component.component_type
    if component.sub_component_type:
        labels[SUB_COMPONENT_TYPE] = component.sub_component_type
    if component.model_ref:
        labels[BASE_MODEL_HASH] = model_hash(component.model_ref)
    if graph.metadata_annotations.get(ENABLE_METRICS_ANNOTATION) != "false":
        labels[METRICS_ENABLED] = "true"
    labels.update(graph.labels)
    labels.update(component.labels)
    labels.update(component.pod_template.get("metadata", {}).get("labels", {}))
    if graph.standalone_component:
        labels.pop(GRAPH_NAME)  # upstream's standalone DCD pods carry none
    else:
        labels[GRAPH_NAME] = graph.name
    labels[NAMESPACE] = dyn_ns
    if component.component_type:
        labels[COMPONENT_TYPE] = component.component_type
    if graph.worker_hash and component.component_type in WORKER_TYPES:
        labels[WORKER_HASH] = graph.worker_hash
    if has_epp(graph) and component.component_type in WORKER_TYPES:
        labels[COMPONENT_CLASS] = WORKER_CLASS
    return dict(sorted(labels.items()))


def has_epp(graph: Graph) -> bool:
    return any(c.component_type == "epp" for c in graph.components)


def discovery_labels(discovery_backend: str) -> dict[str, str]:
    if discovery_backend != "kubernetes":
        return {}
    return {DISCOVERY_BACKEND: "kubernetes", DISCOVERY_ENABLED: "true"}


def clique_labels(ctx: PodContext, component: Component) -> dict[str, str]:
    labels = {**component_labels(ctx.graph, component), **discovery_labels(ctx.discovery_backend)}
    return dict(sorted(labels.items()))


def component_annotations(graph: Graph, component: Component) -> dict[str, str]:
    """DGD spec.annotations and the propagated DGD metadata annotations under the component's own."""
    annotations = dict(graph.annotations)
    annotations.update({k: v for k, v in graph.metadata_annotations.items() if k in PROPAGATED_ANNOTATIONS})
    annotations.update(component.annotations)
    annotations.update(component.pod_template.get("metadata", {}).get("annotations", {}))
    return annotations


# Set per component by the render step from the restart progress (functions.kinds.graph.restart,
# docs/upstream/operator.md §3.4).
RESTART_AT = "nvidia.com/restartAt"


def clique_annotations(ctx: PodContext, component: Component) -> dict[str, str]:
    annotations = component_annotations(ctx.graph, component)
    if ctx.discovery_backend:
        annotations[DISCOVERY_BACKEND] = ctx.discovery_backend
    return dict(sorted(annotations.items()))


def selector_labels(graph: Graph, component: Component) -> dict[str, str]:
    selector = {COMPONENT: component.name, NAMESPACE: dynamo_namespace(graph, component)}
    if component.component_type:
        selector[COMPONENT_TYPE] = component.component_type
    return dict(sorted(selector.items()))
