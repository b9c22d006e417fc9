"""The per-DGD ServiceAccount, Role and RoleBinding for Kubernetes discovery (docs/upstream/operator.md §1.6).

At upstream HEAD (docs/upstream/at-head.md §5) the Role grants DynamoWorkerMetadata an explicit verb
list, not ``*``, and the three objects carry the ``app.kubernetes.io`` labels below, no DGD label.
"""

from __future__ import annotations

from typing import Any

from functions.api.graph import Graph
from functions.kube.naming import cut_with_hash, discovery_service_account

ROLE_RESOURCE = "discovery-role"
BINDING_RESOURCE = "discovery-rolebinding"
MAX_LABEL_VALUE = 63
# Verbs on DynamoWorkerMetadata the workers need to publish and read each other's (upstream's list).
WORKER_METADATA_VERBS = ["create", "get", "list", "watch", "update", "patch", "delete"]


def rbac_label_value(service_account: str) -> str:
    """``app.kubernetes.io/name`` of all three objects: the ServiceAccount's name, cut to a label value's
    63 characters with ``-`` and 8 hex digits of its SHA-256 when longer."""
    return cut_with_hash(service_account, MAX_LABEL_VALUE)


def _metadata(graph: Graph, name: str) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": graph.namespace,
        "labels": {
            "app.kubernetes.io/component": "rbac",
            "app.kubernetes.io/managed-by": "dynamo-operator",
            "app.kubernetes.io/name": rbac_label_value(discovery_service_account(graph)),
        },
    }


def render_discovery_rbac(graph: Graph) -> dict[str, dict[str, Any]]:
    """Composed resource name -> object, for the three objects pods with no ServiceAccount of their own use."""
    sa = discovery_service_account(graph)
    role = f"{sa}-role"
    return {
        "discovery-serviceaccount": {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _metadata(graph, sa)},
        ROLE_RESOURCE: {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": _metadata(graph, role),
            "rules": [
                {"apiGroups": [""], "resources": ["endpoints", "pods"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": ["nvidia.com"], "resources": ["dynamoworkermetadatas"], "verbs": WORKER_METADATA_VERBS},
            ],
        },
        BINDING_RESOURCE: {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": _metadata(graph, f"{sa}-binding"),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": graph.namespace}],
        },
    }
