"""Tenants on the real stack: application teams with ``edit`` in their own namespace only, impersonated through
``kubectl --as``, against a DynamoPlatform the platform team provisioned (providers played as in
``tests/test_crossplane_platform.py``) and the namespaced package on Crossplane.

The platform team binds Kubernetes' ``edit`` role in each team's namespace; ``package/rbac/tenant.yaml``
aggregates the package's kinds into it (DynamoPlatforms stay the platform team's). What a tenant tries, and what
stops it, is the table of docs/security.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from typing import Any

import pytest

from fixtures.platform import EXAMPLES, kubeconfig
from fixtures.tooling import REPO
from functions.tooling.manifests import load_documents
from harness.apiserver import ensure_namespace
from harness.composites import create_claim, manifest_path, resource_refs, xr_of
from harness.controlplane import ControlPlane, require_kubectl
from harness.crossplane_core import ENVIRONMENT_CONFIGS, Crossplane, apply
from harness.poll import until
from harness.providers import install_providers, play_providers

Obj = dict[str, Any]
PLATFORM_NS = "tenancy-platform"
TEAM_A, TEAM_B = "tenancy-a", "tenancy-b"
USERS = {TEAM_A: "alice", TEAM_B: "bob"}
PLATFORM = "shared-gpu"
SECONDS = 150.0
PLACEMENT = "nvidia.com/dynamo-platform"
OBJECTS = "/apis/kubernetes.m.crossplane.io/v1alpha1/namespaces/{}/objects"
SECRET_VALUE = "alice-very-secret-token"


def kubectl_as(cp: ControlPlane, user: str | None, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """kubectl as ``user`` (impersonated by the test's admin), or as the admin itself when ``user`` is None."""
    env = {**os.environ, "KUBECONFIG": str(cp.kubeconfig)}
    who = [f"--as={user}", "--as-group=system:authenticated"] if user else []
    argv = [str(require_kubectl()), *who, *args]
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, timeout=120)


def applied_as(cp: ControlPlane, user: str, doc: Obj) -> subprocess.CompletedProcess:
    return kubectl_as(cp, user, "apply", "-f", "-", stdin=json.dumps(doc))


def synced(cp: ControlPlane, doc: Obj) -> tuple[str, str]:
    """The Synced condition of the applied object: (status, message)."""
    conditions = []
    # a claim's Synced is its syncer's: its XR's says why
    for obj in (cp.client.get(manifest_path(doc)), xr_of(cp, doc)):
        conditions += [
            c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if c.get("type") == "Synced"
        ]
    refused = next((c for c in conditions if c.get("status") == "False"), None)
    cond = refused or (conditions[0] if conditions else {})
    return cond.get("status", ""), cond.get("message", "")


def refusal(cp: ControlPlane, doc: Obj) -> str | None:
    """The message of the applied object's Synced=False condition, or None while it is not refused."""
    status, message = synced(cp, doc)
    return message if status == "False" else None


def placed_graph(namespace: str, name: str = "llm") -> Obj:
    doc = load_documents(EXAMPLES / "vllm-agg-placed.yaml")[0]
    doc["metadata"].update(name=name, namespace=namespace)
    doc["metadata"]["annotations"][PLACEMENT] = PLATFORM
    return doc


@dataclass(frozen=True)
class Tenancy:
    cp: ControlPlane
    platform: Obj  # the platform team's DynamoPlatform, admitting TEAM_A


@pytest.fixture(scope="module")
def tenancy(crossplane: Crossplane) -> Tenancy:
    """Two teams with edit in their namespaces, and the platform team's platform admitting the first."""
    cp = crossplane.cp
    providers = install_providers(crossplane)
    for document in load_documents(REPO / "package" / "rbac" / "tenant.yaml"):
        apply(cp, document, "/apis/rbac.authorization.k8s.io/v1/clusterroles")
    for namespace, user in USERS.items():
        ensure_namespace(cp.client, namespace)
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": f"{user}-edit", "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
        }
        apply(cp, binding, f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings")
    until(  # the cluster-role aggregation controller has folded the package's kinds into edit
        "edit aggregates the package's kinds",
        lambda: (
            kubectl_as(
                cp, "alice", "auth", "can-i", "create", "dynamographdeployments.nvidia.com", "-n", TEAM_A
            ).stdout.strip()
            == "yes"
        ),
    )
    ensure_namespace(cp.client, PLATFORM_NS)
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "lab-kubeconfig", "namespace": PLATFORM_NS},
              "stringData": {"kubeconfig": kubeconfig("https://203.0.113.20")}}  # fmt: skip
    apply(cp, secret, f"/api/v1/namespaces/{PLATFORM_NS}/secrets")
    platform = load_documents(EXAMPLES / "existing.yaml")[0]
    platform["metadata"]["name"] = PLATFORM
    platform["spec"]["existing"]["kubeconfigSecretRef"]["name"] = "lab-kubeconfig"
    platform["spec"]["tenants"] = {"namespaces": [TEAM_A]}
    platform = create_claim(cp, platform, PLATFORM_NS)
    play_providers(cp, platform, providers)
    return Tenancy(cp, platform)


def test_a_tenant_may_not_touch_another_namespace_or_create_platforms(tenancy: Tenancy) -> None:
    cp = tenancy.cp
    for verb, what in (("get", "secrets"), ("create", "dynamographdeployments.nvidia.com"), ("get", "configmaps")):
        assert kubectl_as(cp, "bob", "auth", "can-i", verb, what, "-n", TEAM_A).stdout.strip() == "no", (verb, what)
    assert (
        kubectl_as(cp, "bob", "auth", "can-i", "create", "dynamoplatforms.nvidia.com", "-n", TEAM_B).stdout.strip()
        == "no"
    )
    refused = applied_as(cp, "bob", placed_graph(TEAM_A))
    assert refused.returncode != 0 and "forbidden" in refused.stderr, refused.stderr


def test_a_platform_admits_the_namespaces_it_names_and_later_ones_without_a_reapply(tenancy: Tenancy) -> None:
    cp = tenancy.cp
    alice, bob = placed_graph(TEAM_A), placed_graph(TEAM_B)
    assert applied_as(cp, "alice", alice).returncode == 0
    assert applied_as(cp, "bob", bob).returncode == 0
    until("alice's graph composed on the platform", lambda: cp.client.get(OBJECTS.format(TEAM_A))["items"], SECONDS)

    message = until("bob's graph refused", lambda: refusal(cp, bob), SECONDS)
    assert f"metadata.annotations[{PLACEMENT}]: DynamoPlatform '{PLATFORM}'" in message, message
    assert f"does not admit graphs of namespace {TEAM_B}" in message, message
    time.sleep(5)
    assert not cp.client.get(OBJECTS.format(TEAM_B))["items"], "nothing composed for a namespace not admitted"

    # the platform team admits bob's namespace by label; bob re-applies nothing
    cp.client.merge_patch(f"/api/v1/namespaces/{TEAM_B}", {"metadata": {"labels": {"gpu.example.com/tier": "shared"}}})
    cp.client.merge_patch(
        manifest_path(tenancy.platform),
        {"spec": {"tenants": {"namespaceSelector": {"matchLabels": {"gpu.example.com/tier": "shared"}}}}},
    )
    until("bob's graph composed once admitted", lambda: cp.client.get(OBJECTS.format(TEAM_B))["items"], SECONDS)
    record = cp.client.get(f"{ENVIRONMENT_CONFIGS}/dynamo-platform-{PLATFORM}")["data"]["tenants"]
    assert record == {
        "namespaces": [PLATFORM_NS, TEAM_A],
        "namespaceSelector": {"matchLabels": {"gpu.example.com/tier": "shared"}},
    }


def test_a_second_platform_of_the_name_is_refused_and_composes_nothing(tenancy: Tenancy) -> None:
    cp = tenancy.cp
    other = load_documents(EXAMPLES / "existing.yaml")[0]
    other["metadata"]["name"] = PLATFORM
    other = create_claim(cp, other, "tenancy-other")
    message = until(
        "the second platform refused",
        lambda: refusal(cp, other),
        SECONDS,
    )
    assert f"metadata.name: a DynamoPlatform named '{PLATFORM}' exists in namespace {PLATFORM_NS} already" in message
    assert not resource_refs(xr_of(cp, other) or {}), "nothing composed"
    record = cp.client.get(f"{ENVIRONMENT_CONFIGS}/dynamo-platform-{PLATFORM}")["data"]["cluster"]
    assert record["namespace"] == PLATFORM_NS, "the name stays its first platform's"


def naming_alices_objects(name: str) -> Obj:
    """bob's graph (the v1alpha1 example) mounting alice's PVC and taking env from her Secret, by their names."""
    doc = load_documents(REPO / "examples" / "v1alpha1" / "vllm-disagg.yaml")[0]
    doc["metadata"].update(name=name, namespace=TEAM_B)
    doc["spec"]["pvcs"] = [{"name": "alice-cache", "create": False}]
    for service in doc["spec"]["services"].values():
        for mount in service.get("volumeMounts") or []:
            mount["name"] = "alice-cache"
        if service.get("envFromSecret"):
            service["envFromSecret"] = "alice-token"
    return doc


def test_a_tenants_manifest_reaches_nothing_of_another_namespace(tenancy: Tenancy) -> None:
    """bob names alice's objects in his manifests: the same graph name, her PVC, her Secret. Everything composed
    for him is in his namespace; her objects keep their UIDs; nothing of hers shows in his status."""
    cp = tenancy.cp
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "alice-token", "namespace": TEAM_A},
              "stringData": {"token": SECRET_VALUE}}  # fmt: skip
    apply(cp, secret, f"/api/v1/namespaces/{TEAM_A}/secrets")
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "alice-cache", "namespace": TEAM_A},
           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}  # fmt: skip
    apply(cp, pvc, f"/api/v1/namespaces/{TEAM_A}/persistentvolumeclaims")
    alice = load_documents(REPO / "examples" / "dgd" / "vllm-agg.yaml")[0]
    alice["metadata"].update(name="same-name", namespace=TEAM_A)
    assert applied_as(cp, "alice", alice).returncode == 0
    pcs = f"/apis/grove.io/v1alpha1/namespaces/{TEAM_A}/podcliquesets/same-name"
    uid = until("alice's PodCliqueSet", lambda: cp.client.get(pcs)["metadata"]["uid"], SECONDS)

    bob = naming_alices_objects("same-name")
    assert applied_as(cp, "bob", bob).returncode == 0
    message = until("bob's graph refused", lambda: refusal(cp, bob), SECONDS)
    assert "alice-cache" in message and TEAM_B in message, message  # looked up in his namespace, not found
    text = json.dumps(cp.client.get(manifest_path(bob)))
    events = kubectl_as(cp, "bob", "get", "events", "-n", TEAM_B, "-o", "json").stdout
    for seen in (text, events):
        assert SECRET_VALUE not in seen and TEAM_A not in seen
    assert cp.client.get(pcs)["metadata"]["uid"] == uid
    for obj in resource_refs(cp.client.get(manifest_path(bob))):
        assert obj.get("namespace", TEAM_B) == TEAM_B, obj
    stray = cp.client.get(f"/apis/grove.io/v1alpha1/namespaces/{TEAM_A}/podcliquesets")["items"]
    assert [p["metadata"]["uid"] for p in stray] == [uid], "bob composed nothing in alice's namespace"

    # nor by claiming to be a claim of her namespace: the label and annotation a claim's XR carries
    spoof = naming_alices_objects("spoof")
    spoof["metadata"]["labels"] = {"crossplane.io/claim-namespace": TEAM_A}
    assert applied_as(cp, "bob", spoof).returncode == 0
    message = until("the spoof refused", lambda: refusal(cp, spoof), SECONDS)
    assert f"labels[crossplane.io/claim-namespace]: '{TEAM_A}' must be" in message, message
