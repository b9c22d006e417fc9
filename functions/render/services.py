"""Kubernetes Services for components (reference §1.5)."""

from __future__ import annotations

from typing import Any

from functions.api.graph import Component, Graph
from functions.render.labels import component_labels, selector_labels
from functions.render.naming import service_name

FRONTEND_PORT = {"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"}
EPP_PORT = {"name": "grpc", "port": 9002, "targetPort": 9002, "protocol": "TCP", "appProtocol": "http2"}
SYSTEM_PORT = {"name": "system", "port": 9090, "targetPort": "system", "protocol": "TCP"}


def service_port(component: Component) -> dict[str, Any]:
    if component.component_type == "frontend":
        return dict(FRONTEND_PORT)
    if component.component_type == "epp":
        return dict(EPP_PORT)
    return dict(SYSTEM_PORT)


def render_component_service(graph: Graph, component: Component) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": service_name(graph, component),
            "namespace": graph.namespace,
            "labels": component_labels(graph, component),
        },
        "spec": {"selector": selector_labels(graph, component), "ports": [service_port(component)]},
    }
