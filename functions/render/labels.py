"""Label keys and the label sets put on cliques and Services (reference §1.3, §1.5)."""

from __future__ import annotations

import hashlib

from functions.api.graph import Component, Graph
from functions.render.naming import component_resource_name, dynamo_namespace

SELECTOR = "nvidia.com/selector"
GRAPH_NAME = "nvidia.com/dynamo-graph-deployment-name"
COMPONENT = "nvidia.com/dynamo-component"
NAMESPACE = "nvidia.com/dynamo-namespace"
COMPONENT_TYPE = "nvidia.com/dynamo-component-type"
SUB_COMPONENT_TYPE = "nvidia.com/dynamo-sub-component-type"
BASE_MODEL_HASH = "nvidia.com/dynamo-base-model-hash"
METRICS_ENABLED = "nvidia.com/metrics-enabled"
ENABLE_METRICS_ANNOTATION = "nvidia.com/enable-metrics"


def model_hash(model_name: str) -> str:
    return hashlib.sha256(model_name.encode()).hexdigest()[:8]


def component_labels(graph: Graph, component: Component) -> dict[str, str]:
    """Base labels, then user labels, then the system labels re-asserted (later wins)."""
    labels = {
        SELECTOR: component_resource_name(graph, component),
        GRAPH_NAME: graph.name,
        COMPONENT: component.name,
        NAMESPACE: dynamo_namespace(graph),
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
    labels[GRAPH_NAME] = graph.name
    labels[NAMESPACE] = dynamo_namespace(graph)
    if component.component_type:
        labels[COMPONENT_TYPE] = component.component_type
    return dict(sorted(labels.items()))


def selector_labels(graph: Graph, component: Component) -> dict[str, str]:
    selector = {COMPONENT: component.name, NAMESPACE: dynamo_namespace(graph)}
    if component.component_type:
        selector[COMPONENT_TYPE] = component.component_type
    return dict(sorted(selector.items()))
