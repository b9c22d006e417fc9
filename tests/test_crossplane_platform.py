"""DynamoPlatforms on a real Crossplane, with the provider CRDs installed and no provider running: the test plays
the providers. A managed resource the platform composes becomes Ready; the credential resource writes the
kubeconfig Secret; a Release is deployed; a provider-kubernetes Object reports the manifest it observed. And the
RBAC manager's part for an installed provider package: its CRDs' edit rules aggregated to Crossplane.

Every cloud composes in order and becomes Ready with its EnvironmentConfig written; a DGD placed on the AWS platform
composes Objects only, and becomes Ready from what they observed.
"""

from __future__ import annotations

import base64
import copy
import time
from typing import Any

import pytest
from test_apiserver_provider_crds import PROVIDER_KINDS, provider_crds
from test_crossplane_e2e import api_plurals
from test_crossplane_rbac import _create, _xr, claim_path, nudge
from test_dynamo_platform import kubeconfig
from test_placement import observed_manifests

from fixtures.tooling import REPO
from functions.tooling.manifests import find_composition, load_documents
from functions.tooling.pipeline import render
from functions.tooling.render import admitted_xr
from harness.apiserver import ensure_namespace, install_crd, resource_path, until
from harness.composites import resource_refs
from harness.controller_play import write_status
from harness.controlplane import APIError, ControlPlane
from harness.crossplane_core import ENVIRONMENT_CONFIGS, Crossplane, apply
from harness.crossplane_rbac import CROSSPLANE_SA, service_account_user

EXAMPLES = REPO / "examples" / "platform"
SECONDS = 120.0
PLATFORM_LABEL = "nvidia.com/dynamo-platform"
KUBECONFIG = kubeconfig("https://203.0.113.10")
Plurals = dict[tuple[str, str], tuple[str, bool]]


@pytest.fixture(scope="module")
def providers(crossplane: Crossplane) -> Plurals:
    return install_providers(crossplane)


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


def _path(plurals: Plurals, ref: dict[str, Any], namespace: str) -> str:
    plural, namespaced = plurals[(ref["apiVersion"], ref["kind"])]
    group, _, version = ref["apiVersion"].rpartition("/")
    return resource_path(group or "", version, plural, namespace if namespaced else None, ref["name"]).replace(
        "/apis//", "/api/"
    )


def _composed(cp: ControlPlane, claim: dict[str, Any], plurals: Plurals) -> list[tuple[dict[str, Any], str]]:
    """Each composed object that exists so far, with its path."""
    out = []
    for ref in resource_refs(_xr(cp, claim) or {}):
        path = _path(plurals, ref, claim["metadata"]["namespace"])
        try:
            out.append((cp.client.get(path), path))
        except APIError as err:
            if err.code != 404:
                raise
    return out


READY = {"conditions": [{"type": "Ready", "status": "True", "reason": "Available",
                         "lastTransitionTime": "2026-12-01T00:00:00Z"}]}  # fmt: skip


def _secret(cp: ControlPlane, namespace: str, name: str) -> None:
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
    deadline = time.monotonic() + SECONDS
    poll = 0
    while time.monotonic() < deadline:
        poll += 1
        ready = (cp.client.get(claim_path(claim)).get("status") or {}).get("phase") == "Ready"
        for obj, path in _composed(cp, claim, plurals):
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
                _secret(cp, namespace, secret)
        if ready:
            return seen  # what the Ready platform composed is listed above
        if _xr(cp, claim) is not None:  # the claim names its XR before the XR exists
            nudge(cp, claim)  # the kubeconfig Secret is not composed: Crossplane does not watch it
        time.sleep(1)
    raise AssertionError(f"the platform never became Ready: {cp.client.get(claim_path(claim)).get('status')}")


def _renamed(path: Any, name: str) -> dict[str, Any]:
    doc = load_documents(path)[0]
    doc["metadata"]["name"] = name
    return doc


def _preview_releases(claim: dict[str, Any]) -> list[dict[str, Any]]:
    xr = admitted_xr(copy.deepcopy(claim), claim["metadata"]["namespace"], "Strict")
    out = render(xr, find_composition(xr, load_documents(REPO / "compositions")))
    return sorted(
        (o for o in out.composed if o["kind"] == "Release"),
        key=lambda o: RELEASE_ORDER.index(
            o["metadata"]["annotations"]["crossplane.io/composition-resource-name"].removeprefix("release-")
        ),
    )


RELEASE_ORDER = ["kai", "volcano", "grove", "lws", "nginx", "istio-base", "istiod", "snapshot", "nats"]
CLOUD_FIRST = {"aws": "Role/gpu-east-cluster", "azure": "ResourceGroup/gpu-west", "gcp": "Cluster/gpu-europe"}


@pytest.mark.parametrize("cloud", ["aws", "azure", "existing", "gcp"])
def test_a_platform_composes_in_order_and_becomes_ready(cloud: str, crossplane: Crossplane, providers: Plurals) -> None:
    cp = crossplane.cp
    path = EXAMPLES / f"{cloud}.yaml"
    namespace = f"platform-{cloud}"
    ensure_namespace(cp.client, namespace)
    if cloud == "existing":
        _secret(cp, namespace, "gpu-lab-kubeconfig")
    if cloud == "gcp":
        key = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "gke-sa-key", "namespace": namespace},
               "stringData": {"credentials.json": "{}"}}  # fmt: skip
        apply(cp, key, f"/api/v1/namespaces/{namespace}/secrets")
    claim = _create(cp, path, namespace)
    seen = play_providers(cp, claim, providers)
    polls = {k.split(":", 1)[1]: int(k.split(":", 1)[0]) for k in seen}
    order = [k.split(":", 1)[1] for k in seen]
    kinds = [k.split("/")[0] for k in order]
    first = {kind: min(p for k, p in polls.items() if k.startswith(kind + "/")) for kind in set(kinds)}
    if cloud in CLOUD_FIRST:
        assert polls[CLOUD_FIRST[cloud]] < first["ProviderConfig"], "the cluster before what reaches it"
    releases = [k for k in order if k.startswith("Release/")]
    expected = [f"Release/{r['metadata']['name']}" for r in _preview_releases(claim)]
    assert releases == expected, "one release after another, in the platform's order"
    assert [polls[r] for r in releases] == sorted({polls[r] for r in releases}), "each in a poll of its own"
    assert first["ProviderConfig"] <= polls[releases[0]]
    # its record first (it holds the name and publishes the tenancy), ready once the last release is
    assert polls[f"EnvironmentConfig/dynamo-platform-{claim['metadata']['name']}"] <= polls[releases[0]]
    status = cp.client.get(claim_path(claim))["status"]
    name = claim["metadata"]["name"]
    assert status["cluster"]["endpoint"] == "https://203.0.113.10"
    assert status["environmentConfig"] == f"dynamo-platform-{name}"
    conditions = {c["type"]: c["status"] for c in status["conditions"]}
    assert conditions["Ready"] == conditions["ClusterReady"] == conditions["PrerequisitesReady"] == "True"
    data = cp.client.get(f"{ENVIRONMENT_CONFIGS}/dynamo-platform-{name}")["data"]
    assert data["cluster"]["platform"] == name and data["orchestrators"]["grove"]["enabled"] is True
    assert data["cluster"]["ready"] is True and data["tenants"]["namespaces"][0] == namespace


def test_a_dgd_placed_on_a_platform_composes_objects_and_is_ready_from_what_they_observe(
    crossplane: Crossplane, providers: Plurals
) -> None:
    cp = crossplane.cp
    # its own platform: a platform's ClusterProviderConfig and EnvironmentConfig are cluster-wide, by its name
    doc = _renamed(EXAMPLES / "aws.yaml", "gpu-placed")
    doc["spec"]["tenants"] = {"namespaces": ["placed-demo"]}  # the graph's namespace is admitted
    platform = _create(cp, doc, "platform-placement")
    play_providers(cp, platform, providers)
    dgd = load_documents(EXAMPLES / "vllm-agg-placed.yaml")[0]
    dgd["metadata"]["annotations"][PLATFORM_LABEL] = "gpu-placed"
    dgd = _create(cp, dgd, "placed-demo")
    objects_path = "/apis/kubernetes.m.crossplane.io/v1alpha1/namespaces/placed-demo/objects"
    objects = until("no Object composed for the placed DGD", lambda: cp.client.get(objects_path)["items"])
    assert all(o["spec"]["providerConfigRef"]["name"] == "dynamo-platform-gpu-placed" for o in objects)
    for local in (
        "/apis/grove.io/v1alpha1/namespaces/placed-demo/podcliquesets",
        "/api/v1/namespaces/placed-demo/services",
    ):
        assert not cp.client.get(local)["items"], f"nothing composed here: {local}"

    def play_kubernetes_provider() -> bool:
        """provider-kubernetes' part: each Object's manifest observed on the platform's cluster, PodCliques ready."""
        items = cp.client.get(objects_path)["items"]
        manifests = observed_manifests(items)
        for obj in items:
            if (obj.get("status") or {}).get("atProvider"):
                continue
            path = f"{objects_path}/{obj['metadata']['name']}"
            write_status(cp, path, {**READY, "atProvider": {"manifest": manifests[obj["metadata"]["name"]]}})
        nudge(cp, dgd)
        status = cp.client.get(claim_path(dgd)).get("status") or {}
        return status.get("state") == "successful"

    deadline = time.monotonic() + SECONDS
    while not play_kubernetes_provider():
        assert time.monotonic() < deadline, cp.client.get(claim_path(dgd)).get("status")
        time.sleep(1)
    status = cp.client.get(claim_path(dgd))["status"]
    assert status["components"]["VllmWorker"]["readyReplicas"] == 2
    kinds = {o["spec"]["forProvider"]["manifest"]["kind"] for o in cp.client.get(objects_path)["items"]}
    assert {"PodCliqueSet", "Service", "Namespace", "PodClique"} <= kinds
