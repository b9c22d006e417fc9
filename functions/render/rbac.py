"""The per-DGD ServiceAccount, Role and RoleBinding for Kubernetes discovery (reference §1.6)."""

from __future__ import annotations

from typing import Any

from functions.api.graph import Graph
from functions.render.naming import discovery_service_account


def _metadata(graph: Graph, name: str) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": graph.namespace,
        "labels": {"nvidia.com/dynamo-graph-deployment-name": graph.name},
    }


def render_discovery_rbac(graph: Graph) -> dict[str, dict[str, Any]]:
    """Composed resource name -> object, for the three objects pods with no ServiceAccount of their own use."""
    sa = discovery_service_account(graph)
    role = f"{sa}-role"
    return {
        "discovery-serviceaccount": {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _metadata(graph, sa)},
        "discovery-role": {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": _metadata(graph, role),
            "rules": [
                {"apiGroups": [""], "resources": ["endpoints", "pods"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": ["nvidia.com"], "resources": ["dynamoworkermetadatas"], "verbs": ["*"]},
            ],
        },
        "discovery-rolebinding": {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": _metadata(graph, f"{sa}-binding"),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": graph.namespace}],
        },
    }
