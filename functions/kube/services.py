"""Kubernetes Services: one per component (frontend only without Kubernetes discovery), and the
headless model Service for components with a ``modelRef`` (docs/upstream/operator.md §1.5, §4.4)."""

from __future__ import annotations

from typing import Any

from functions.api.graph import Component, Graph
from functions.kube.backends import ORIGIN_VERSION_ANNOTATION
from functions.kube.labels import (
    BASE_MODEL_HASH,
    WORKER_HASH,
    component_labels,
    discovery_labels,
    model_hash,
    selector_labels,
)
from functions.kube.naming import service_name

FRONTEND_PORT = {"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"}
EPP_PORT = {"name": "grpc", "port": 9002, "targetPort": 9002, "protocol": "TCP", "appProtocol": "http2"}
SYSTEM_PORT = {"name": "system", "port": 9090, "targetPort": "system", "protocol": "TCP"}


def service_port(component: Component) -> dict[str, Any]:
    if component.component_type == "frontend":
        return dict(FRONTEND_PORT)
    if component.component_type == "epp":
        return dict(EPP_PORT)
    return dict(SYSTEM_PORT)


def needs_service(component: Component, discovery_backend: str) -> bool:
    return discovery_backend == "kubernetes" or component.component_type == "frontend"


def service_labels(graph: Graph, component: Component, discovery_backend: str) -> dict[str, str]:
    """The Grove pathway's component Service: the user's labels (DGD, component, pod template), a worker's hash
    and the discovery labels. None of the system labels its pods carry (component, namespace, type, selector,
    the worker class of a graph with an EPP): upstream labels this Service from the pod template, into which it
    writes the worker hash but not the class."""
    pod_labels = component_labels(graph, component)
    labels = {**graph.labels, **component.labels, **(component.pod_template.get("metadata", {}).get("labels") or {})}
    if WORKER_HASH in pod_labels:
        labels[WORKER_HASH] = pod_labels[WORKER_HASH]
    labels.update(discovery_labels(discovery_backend))
    return dict(sorted(labels.items()))


def render_component_service(graph: Graph, component: Component, discovery_backend: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": service_name(graph, component),
        "namespace": graph.namespace,
        "labels": service_labels(graph, component, discovery_backend),
    }
    # Upstream copies the component's pod-template annotations onto its Service.
    annotations = dict(component.pod_template.get("metadata", {}).get("annotations") or {})
    annotations.pop(ORIGIN_VERSION_ANNOTATION, None)
    if annotations:
        metadata["annotations"] = dict(sorted(annotations.items()))
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata,
        "spec": {"selector": selector_labels(graph, component), "ports": [service_port(component)]},
    }


def model_service_name(model_name: str) -> str:
    return f"dynamo-model-{model_hash(model_name)}"


def render_model_service(graph: Graph, model_name: str) -> dict[str, Any]:
    """A headless Service selecting every ready pod serving the model, by its base-model hash label
    (upstream model_service.go: DGD spec.annotations plus the model name annotation, system port 9090)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": model_service_name(model_name),
            "namespace": graph.namespace,
            "labels": {BASE_MODEL_HASH: model_hash(model_name), "nvidia.com/managed-by": "dynamo-operator"},
            "annotations": dict(sorted({**graph.annotations, "nvidia.com/dynamo-base-model": model_name}.items())),
        },
        "spec": {
            "clusterIP": "None",
            "selector": {BASE_MODEL_HASH: model_hash(model_name)},
            "publishNotReadyAddresses": False,
            "ports": [{"name": "system", "port": 9090, "targetPort": 9090, "protocol": "TCP"}],
        },
    }
