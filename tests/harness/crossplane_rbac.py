"""Crossplane under the roles its Helm chart gives it: ServiceAccounts, tokens, kubeconfigs, audit.

``install_chart_rbac`` applies what ``scripts/install-tools.sh`` rendered from Crossplane's own chart
with ``helm template`` (the ``crossplane`` and ``rbac-manager`` ServiceAccounts, their ClusterRoles
and bindings); ``service_account_kubeconfig`` mints a token for one of them with the TokenRequest
API, so Crossplane core and its RBAC manager authenticate as that ServiceAccount, not as the test's
admin. The kube-controller-manager's ClusterRole aggregation then folds
``package/rbac/clusterrole.yaml`` (label ``rbac.crossplane.io/aggregate-to-crossplane``) and the
RBAC manager's per-XRD roles into Crossplane's role, as in a real cluster.

The API server's audit log (``audit_events``) records every request Crossplane's ServiceAccount
makes, which the RBAC tests compare with what ``package/rbac`` grants.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from harness.controlplane import ControlPlane

NAMESPACE = "crossplane-system"
CROSSPLANE_SA = "crossplane"
RBAC_MANAGER_SA = "rbac-manager"
TOKEN_SECONDS = 24 * 3600

COLLECTIONS = {
    "ServiceAccount": f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts",
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
}


def service_account_user(name: str) -> str:
    return f"system:serviceaccount:{NAMESPACE}:{name}"


def impersonating(user: str) -> dict[str, str]:
    """Headers that make the admin's request one of ``user`` (a ServiceAccount's groups follow from its name).
    The audit log records such a request under the admin, so it never counts as one of ``user``'s own."""
    return {"Impersonate-User": user}


def install_chart_rbac(cp: ControlPlane, rendered: Path, apply: Any) -> list[str]:
    """Apply the chart's RBAC objects; their ``kind/name``s."""
    applied = []
    for doc in yaml.safe_load_all(rendered.read_text()):
        if not doc:
            continue
        kind = doc["kind"]
        if kind not in COLLECTIONS:
            raise RuntimeError(f"{rendered}: unexpected {kind} {doc['metadata']['name']} in the chart's RBAC")
        if kind == "ServiceAccount" and doc["metadata"].get("namespace") not in (None, NAMESPACE):
            raise RuntimeError(f"{rendered}: ServiceAccount outside {NAMESPACE}")
        apply(cp, doc, COLLECTIONS[kind])
        applied.append(f"{kind}/{doc['metadata']['name']}")
    return applied


def service_account_kubeconfig(cp: ControlPlane, name: str, namespace: str = NAMESPACE) -> Path:
    """A kubeconfig authenticating as ServiceAccount ``namespace/name`` with a bound token from the TokenRequest
    API."""
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "spec": {"expirationSeconds": TOKEN_SECONDS}}  # fmt: skip
    token = cp.client.create(f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token", request)["status"]["token"]
    path = cp.run_dir / f"kubeconfig-{name}.json"
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "test",
                        "cluster": {"server": cp.client.base, "certificate-authority": str(cp.client.pki / "ca.crt")},
                    }
                ],
                "users": [{"name": name, "user": {"token": token}}],
                "contexts": [{"name": "test", "context": {"cluster": "test", "user": name}}],
                "current-context": "test",
            }
        )
    )
    path.chmod(0o600)
    return path


def audit_events(cp: ControlPlane, user: str) -> Iterator[dict[str, Any]]:
    """The audit log's requests made by ``user``: each completed one, and each watch once started (an
    informer's watch stays open, so it may not have completed yet)."""
    assert cp.audit_log is not None, "the control plane runs without an audit log"
    with cp.audit_log.open() as log:
        for line in log:
            event = json.loads(line)
            if event.get("user", {}).get("username") != user:
                continue
            stage = event.get("stage")
            if stage == "ResponseComplete" or (stage == "ResponseStarted" and event.get("verb") == "watch"):
                yield event
