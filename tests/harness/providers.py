"""The providers a DynamoPlatform composes for, played on a real Crossplane: their CRDs installed (no provider
runs) and the ClusterRole the RBAC manager aggregates to Crossplane for an installed provider; then each composed
managed resource made Ready, connection Secrets written and Releases deployed, one reconcile's new objects at a
time, until the platform is Ready."""

from __future__ import annotations

import base64
import time
from typing import Any

from fixtures.platform import PROVIDER_KINDS, kubeconfig, provider_crds
from harness.apiserver import install_crd, resource_path
from harness.composites import Plurals, api_plurals, manifest_path, nudge, resource_refs, xr_of
from harness.controller_play import write_status
from harness.controlplane import APIError, ControlPlane
from harness.crossplane_core import Crossplane, apply
from harness.crossplane_rbac import CROSSPLANE_SA, service_account_user
from harness.poll import until

PLAY_SECONDS = 120.0
KUBECONFIG = kubeconfig("https://203.0.113.10")
# What a provider writes on a managed resource that is Ready.
READY = {"conditions": [{"type": "Ready", "status": "True", "reason": "Available",
                         "lastTransitionTime": "2026-12-01T00:00:00Z"}]}  # fmt: skip


def install_providers(crossplane: Crossplane) -> Plurals:
    """The provider CRDs, and the ClusterRole the RBAC manager aggregates to Crossplane for an installed provider."""
    cp = crossplane.cp
    rules = []
    for name in PROVIDER_KINDS:
        crds = provider_crds(name)
        for crd in crds:
            got = install_crd(cp.client, crd)
            assert got.accepted, got.message
        for group in sorted({c["spec"]["group"] for c in crds}):
            plurals = sorted(c["spec"]["names"]["plural"] for c in crds if c["spec"]["group"] == group)
            rules.append({"apiGroups": [group], "resources": plurals,
                          "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]})  # fmt: skip
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "crossplane:provider:test-providers:aggregate-to-edit",
                     "labels": {"rbac.crossplane.io/aggregate-to-crossplane": "true"}},
        "rules": rules,
    }  # fmt: skip
    apply(cp, role, "/apis/rbac.authorization.k8s.io/v1/clusterroles")
    # The kube-controller-manager aggregates it into Crossplane's role: wait, so that no request of Crossplane's is
    # refused meanwhile (test_crossplane_rbac reads the audit log).
    until("the provider kinds never reached Crossplane's role", lambda: all(
        _crossplane_may(cp, rule["apiGroups"][0], rule["resources"][0]) for rule in rules))  # fmt: skip
    return api_plurals(crossplane)


def _crossplane_may(cp: ControlPlane, group: str, resource: str) -> bool:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {"user": service_account_user(CROSSPLANE_SA), "groups": ["system:serviceaccounts"],
                 "resourceAttributes": {"group": group, "resource": resource, "verb": "create"}},
    }  # fmt: skip
    got = cp.client.create("/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
    return bool((got.get("status") or {}).get("allowed"))


def _object_path(plurals: Plurals, ref: dict[str, Any], namespace: str) -> str:
    """The API path of the object ``ref`` names (namespaced kinds in ``namespace``)."""
    plural, namespaced = plurals[(ref["apiVersion"], ref["kind"])]
    group, _, version = ref["apiVersion"].rpartition("/")
    return resource_path(group or "", version, plural, namespace if namespaced else None, ref["name"]).replace(
        "/apis//", "/api/"
    )


def _composed_objects(cp: ControlPlane, claim: dict[str, Any], plurals: Plurals) -> list[tuple[dict[str, Any], str]]:
    """Each composed object that exists so far, with its path."""
    out = []
    for ref in resource_refs(xr_of(cp, claim) or {}):
        path = _object_path(plurals, ref, claim["metadata"]["namespace"])
        try:
            out.append((cp.client.get(path), path))
        except APIError as err:
            if err.code != 404:
                raise
    return out


def write_kubeconfig_secret(cp: ControlPlane, namespace: str, name: str) -> None:
    """The Secret a cloud's credential resource writes: a kubeconfig naming the played cluster."""
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace},
              "data": {"kubeconfig": base64.b64encode(KUBECONFIG.encode()).decode()}}  # fmt: skip
    apply(cp, secret, f"/api/v1/namespaces/{namespace}/secrets")


def play_providers(cp: ControlPlane, claim: dict[str, Any], plurals: Plurals) -> list[str]:
    """Play every provider until the platform is Ready: each composed managed resource Ready (one reconcile's new
    ones at a time), connection Secrets written, Releases deployed. Returns ``<poll>:<kind>/<name>`` in the order
    they were first seen: the poll number says what existed before what."""
    namespace = claim["metadata"]["namespace"]
    seen: list[str] = []
    done: set[str] = set()
    deadline = time.monotonic() + PLAY_SECONDS
    poll = 0
    while time.monotonic() < deadline:
        poll += 1
        ready = (cp.client.get(manifest_path(claim)).get("status") or {}).get("phase") == "Ready"
        for obj, path in _composed_objects(cp, claim, plurals):
            key = f"{obj['kind']}/{obj['metadata']['name']}"
            if key in done:
                continue
            seen.append(f"{poll:04d}:{key}")
            done.add(key)
            if obj["kind"] in ("ProviderConfig", "ClusterProviderConfig", "EnvironmentConfig"):
                continue  # no status: ready once it exists
            extra: dict[str, Any] = {}
            if obj["kind"] == "Release":
                extra = {"atProvider": {"state": "deployed", "revision": 1}}
            elif obj["kind"] in ("Cluster", "KubernetesCluster"):
                extra = {"atProvider": {"endpoint": "203.0.113.10", "fqdn": "203.0.113.10"}}
            write_status(cp, path, {**READY, **extra})
            secret = (obj["spec"].get("writeConnectionSecretToRef") or {}).get("name")
            if secret:
                write_kubeconfig_secret(cp, namespace, secret)
        if ready:
            return seen  # what the Ready platform composed is listed above
        if xr_of(cp, claim) is not None:  # the claim names its XR before the XR exists
            nudge(cp, claim)  # the kubeconfig Secret is not composed: Crossplane does not watch it
        time.sleep(1)
    raise AssertionError(f"the platform never became Ready: {cp.client.get(manifest_path(claim)).get('status')}")
