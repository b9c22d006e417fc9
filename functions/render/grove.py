"""The Grove pathway: one PodCliqueSet per DynamoGraphDeployment (reference §1.3)."""

from __future__ import annotations

import copy
from typing import Any

from functions.api.graph import MAIN_CONTAINER, Component, Graph, merge_envs
from functions.render.labels import component_labels
from functions.render.naming import clique_names, podcliqueset_name

GROVE_API_VERSION = "grove.io/v1alpha1"
DEFAULT_TERMINATION_DELAY = "15m"

# Ports of container "main" per component type (reference §2.3).
PORTS_BY_TYPE: dict[str, list[dict[str, Any]]] = {
    "frontend": [{"name": "http", "containerPort": 8000, "protocol": "TCP"}],
    "planner": [
        {"name": "metrics", "containerPort": 9085, "protocol": "TCP"},
        {"name": "system", "containerPort": 9090, "protocol": "TCP"},
    ],
    "epp": [
        {"name": "grpc", "containerPort": 9002, "protocol": "TCP"},
        {"name": "grpc-health", "containerPort": 9003, "protocol": "TCP"},
        {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
    ],
}
WORKER_PORTS = [
    {"name": "system", "containerPort": 9090, "protocol": "TCP"},
    {"name": "nixl", "containerPort": 19090, "protocol": "TCP"},
]
for _worker_type in ("worker", "prefill", "decode"):
    PORTS_BY_TYPE[_worker_type] = WORKER_PORTS


def render_pod_spec(graph: Graph, component: Component) -> dict[str, Any]:
    spec = copy.deepcopy(component.pod_template.get("spec", {}))
    for container in spec["containers"]:
        if container["name"] != MAIN_CONTAINER:
            continue
        if graph.envs or container.get("env"):
            container["env"] = merge_envs(list(graph.envs), container.get("env", []))
        if "ports" not in container and component.component_type in PORTS_BY_TYPE:
            container["ports"] = copy.deepcopy(PORTS_BY_TYPE[component.component_type])
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 60)
    return spec


def _clique(graph: Graph, component: Component, name: str, replicas: int, min_available: int) -> dict[str, Any]:
    clique: dict[str, Any] = {
        "name": name,
        "labels": component_labels(graph, component),
        "spec": {
            "roleName": name,
            "replicas": replicas,
            "minAvailable": min_available,
            "podSpec": render_pod_spec(graph, component),
        },
    }
    annotations = {
        **graph.annotations,
        **component.annotations,
        **component.pod_template.get("metadata", {}).get("annotations", {}),
    }
    if annotations:
        clique["annotations"] = dict(sorted(annotations.items()))
    if component.pack_domain and not component.multinode:
        clique["topologyConstraint"] = {"packDomain": component.pack_domain}
    return clique


def render_podcliqueset(graph: Graph, termination_delay: str = DEFAULT_TERMINATION_DELAY) -> dict[str, Any]:
    cliques: list[dict[str, Any]] = []
    scaling_groups: list[dict[str, Any]] = []
    for component in graph.components:
        if not component.multinode:
            (name,) = clique_names(component)
            cliques.append(_clique(graph, component, name, component.replicas, 1))
            continue
        leader, worker = clique_names(component)
        workers = component.node_count - 1
        cliques.append(_clique(graph, component, leader, 1, 1))
        cliques.append(_clique(graph, component, worker, workers, workers))
        group: dict[str, Any] = {
            "name": component.key,
            "cliqueNames": [leader, worker],
            "replicas": component.replicas,
            "minAvailable": 1,
        }
        if component.pack_domain:
            group["topologyConstraint"] = {"packDomain": component.pack_domain}
        scaling_groups.append(group)
    template: dict[str, Any] = {
        "cliqueStartupType": "CliqueStartupTypeAnyOrder",
        "headlessServiceConfig": {"publishNotReadyAddresses": True},
        "terminationDelay": termination_delay,
        "cliques": cliques,
    }
    if scaling_groups:
        template["podCliqueScalingGroups"] = scaling_groups
    if graph.pack_domain:
        template["topologyConstraint"] = {"packDomain": graph.pack_domain}
    if graph.priority_class_name:
        template["priorityClassName"] = graph.priority_class_name
    metadata: dict[str, Any] = {
        "name": podcliqueset_name(graph),
        "namespace": graph.namespace,
        "labels": dict(sorted({**graph.labels, "nvidia.com/dynamo-graph-deployment-name": graph.name}.items())),
    }
    if graph.annotations:
        metadata["annotations"] = dict(sorted(graph.annotations.items()))
    return {
        "apiVersion": GROVE_API_VERSION,
        "kind": "PodCliqueSet",
        "metadata": metadata,
        "spec": {"replicas": 1, "template": template},
    }
