"""DynamoPlatforms on a real Crossplane, with the provider CRDs installed and no provider running: the providers are
played (``tests/harness/providers.py``). A managed resource the platform composes becomes Ready; the credential
resource writes the kubeconfig Secret; a Release is deployed; a provider-kubernetes Object reports the manifest it
observed. And the RBAC manager's part for an installed provider package: its CRDs' edit rules aggregated to
Crossplane.

Every cloud composes in order and becomes Ready with its EnvironmentConfig written; a DGD placed on the AWS platform
composes Objects only, and becomes Ready from what they observed.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fixtures.placement import observed_manifests
from fixtures.platform import EXAMPLES
from fixtures.tooling import REPO
from functions.tooling.manifests import find_composition, load_documents
from functions.tooling.pipeline import render
from functions.tooling.render import admitted_xr
from harness.apiserver import ensure_namespace
from harness.composites import Plurals, create_claim, manifest_path, nudge
from harness.controller_play import write_status
from harness.crossplane_core import ENVIRONMENT_CONFIGS, Crossplane, apply
from harness.poll import until
from harness.providers import READY, install_providers, play_providers, write_kubeconfig_secret

SECONDS = 120.0
PLATFORM_LABEL = "nvidia.com/dynamo-platform"


@pytest.fixture(scope="module")
def providers(crossplane: Crossplane) -> Plurals:
    return install_providers(crossplane)


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
        write_kubeconfig_secret(cp, namespace, "gpu-lab-kubeconfig")
    if cloud == "gcp":
        key = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "gke-sa-key", "namespace": namespace},
               "stringData": {"credentials.json": "{}"}}  # fmt: skip
        apply(cp, key, f"/api/v1/namespaces/{namespace}/secrets")
    claim = create_claim(cp, path, namespace)
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
    status = cp.client.get(manifest_path(claim))["status"]
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
    platform = create_claim(cp, doc, "platform-placement")
    play_providers(cp, platform, providers)
    dgd = load_documents(EXAMPLES / "vllm-agg-placed.yaml")[0]
    dgd["metadata"]["annotations"][PLATFORM_LABEL] = "gpu-placed"
    dgd = create_claim(cp, dgd, "placed-demo")
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
        status = cp.client.get(manifest_path(dgd)).get("status") or {}
        return status.get("state") == "successful"

    until("the placed graph successful", play_kubernetes_provider, SECONDS, every=1,
          where=lambda: f"its status: {cp.client.get(manifest_path(dgd)).get('status')}")  # fmt: skip
    status = cp.client.get(manifest_path(dgd))["status"]
    assert status["components"]["VllmWorker"]["readyReplicas"] == 2
    kinds = {o["spec"]["forProvider"]["manifest"]["kind"] for o in cp.client.get(objects_path)["items"]}
    assert {"PodCliqueSet", "Service", "Namespace", "PodClique"} <= kinds
