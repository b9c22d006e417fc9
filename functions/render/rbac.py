"""The per-DGD ServiceAccount, Role and RoleBinding for Kubernetes discovery (reference §1.6)."""

from __future__ import annotations

from typing import Any

from functions.api.graph import Graph
from functions.render.naming import discovery_service_account

ROLE_RESOURCE = "discovery-role"
BINDING_RESOURCE = "discovery-rolebinding"


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
        ROLE_RESOURCE: {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": _metadata(graph, role),
            "rules": [
                {"apiGroups": [""], "resources": ["endpoints", "pods"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": ["nvidia.com"], "resources": ["dynamoworkermetadatas"], "verbs": ["*"]},
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


def binding_after_role(
    desired: dict[str, dict[str, Any]], observed_resources: dict[str, dict[str, Any]], *, preview: bool = False
) -> dict[str, dict[str, Any]]:
    """``desired`` without the discovery RoleBinding while its Role is not observed (unless ``preview``).

    Kubernetes refuses a RoleBinding to a Role that does not exist yet (it checks that the binder
    holds what the Role grants) unless the binder may ``bind`` any Role, a grant package/rbac leaves
    out: it would let Crossplane bind Roles it does not hold. Crossplane applies composed resources
    in no set order and stops at the first refusal, so where Crossplane is not an admin a binding
    applied first can hold the Role back for good (measured on the real stack: every retry did).
    The binding follows one reconcile after the Role; a preview shows both.
    """
    if preview or BINDING_RESOURCE not in desired or ROLE_RESOURCE in observed_resources:
        return desired
    return {k: v for k, v in desired.items() if k != BINDING_RESOURCE}
