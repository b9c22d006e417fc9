"""The claims package on a real Crossplane: installed on a control plane of its own (it defines the same CRDs as
the default package, so the two never share one), every kind once through its lifecycle, and deletion.

For each kind one example is applied as a claim: it must become Synced, its cluster-scoped XR must compose
exactly what ``function-dynamo render --claims`` previews (nested composites included), and deleting the claim
must delete the XR and everything it composed. The default package runs the whole end-to-end suite
(``test_crossplane_e2e`` and the other ``test_crossplane_*`` modules).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from fixtures.corpus import LIFECYCLES
from fixtures.rendering import preview
from fixtures.tooling import REPO
from functions.kinds import KINDS
from harness.apiserver import CLAIMS_XRDS, derived_crds, ensure_namespace, resource_path
from harness.apiserver import plural as plural_of
from harness.composites import (
    SYNC_SECONDS,
    api_plurals,
    cluster_xr_path,
    composed_differences,
    conditions_of,
    manifest_path,
    object_path,
    resource_refs,
    wait_composed,
    wait_synced,
)
from harness.controlplane import APIError, ControlPlane, start_control_plane
from harness.crossplane_core import CLAIMS_CONFIGURATION, Crossplane, checkpoint_gate_on, start_crossplane
from harness.poll import until
from harness.providers import install_providers


@pytest.fixture(scope="module")
def claims_crossplane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Crossplane]:
    cp = start_control_plane(tmp_path_factory.mktemp("claims-control-plane"))
    try:
        yield start_crossplane(cp, CLAIMS_CONFIGURATION)
    finally:
        cp.stop()


def test_the_claims_package_installs_its_claim_xrds(claims_crossplane: Crossplane) -> None:
    client = claims_crossplane.cp.client
    configuration = client.get(f"/apis/pkg.crossplane.io/v1/configurations/{CLAIMS_CONFIGURATION}")
    assert conditions_of(configuration)["Healthy"]["status"] == "True"
    xrds = client.get("/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions")["items"]
    assert sorted(x["metadata"]["name"] for x in xrds) == sorted(
        yaml.safe_load(p.read_text())["metadata"]["name"] for p in CLAIMS_XRDS.glob("*.yaml")
    )
    assert all(x["spec"]["scope"] == "LegacyCluster" and x["spec"]["claimNames"] for x in xrds)
    for crd in derived_crds(CLAIMS_XRDS):  # an XR CRD and a claim CRD per kind, Crossplane's
        stored = client.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}")
        assert stored["spec"]["scope"] == crd["spec"]["scope"]
        assert [v["name"] for v in stored["spec"]["versions"]] == [v["name"] for v in crd["spec"]["versions"]]
    adapter = client.get(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/dynamographdeploymentscalingadapters.nvidia.com"
    )
    assert all(v["subresources"]["scale"]["specReplicasPath"] == ".spec.replicas" for v in adapter["spec"]["versions"])


def _exists(cp: ControlPlane, path: str) -> bool:
    try:
        cp.client.get(path)
        return True
    except APIError as err:
        if err.code == 404:
            return False
        raise


@pytest.mark.parametrize("kind", sorted(LIFECYCLES))
def test_each_kind_lives_and_dies_as_a_claim(kind: str, claims_crossplane: Crossplane) -> None:
    cp = claims_crossplane.cp
    path = LIFECYCLES[kind]
    claim = yaml.safe_load(path.read_text())
    namespace = "claims-" + kind.lower()[:40]
    claim["metadata"]["namespace"] = namespace
    ensure_namespace(cp.client, namespace)
    # a platform composes the cloud provider's managed resources: their CRDs, as test_crossplane_platform installs
    discovered = install_providers(claims_crossplane) if kind == "DynamoPlatform" else api_plurals(claims_crossplane)
    # the operator config every kind is previewed and composed with: the checkpoint gate on, which a
    # DynamoCheckpoint needs (the operator refuses one without it)
    required = checkpoint_gate_on(cp)
    expected, nested = preview(copy.deepcopy(claim), claims=True, required=required)
    version = claim["apiVersion"].split("/")[1]
    cp.client.create(resource_path("nvidia.com", version, plural_of(kind), namespace), claim)

    # A platform composes in stages, each once the last is ready (test_crossplane_platform plays the providers to
    # the end): here its first stage, each object as previewed.
    staged = kind == "DynamoPlatform"
    xr = wait_synced(claims_crossplane, claim, 1 if staged else len(expected), discovered)
    if staged:
        composed_names = {(r["kind"], r["name"]) for r in resource_refs(xr)}
        expected = [o for o in expected if (o["kind"], o["metadata"]["name"]) in composed_names]
        assert len(expected) == len(composed_names), "composed what the preview does not show"
        for record in (o for o in expected if o["kind"] == "EnvironmentConfig"):
            record["data"]["cluster"]["ready"] = False  # the preview shows it at the end; here the first stage
    assert xr["kind"] == f"X{kind}" and xr["spec"]["claimRef"]["name"] == claim["metadata"]["name"]
    for obj in [*expected, *(o for child in nested for o in child.composed)]:
        obj["metadata"]["labels"]["crossplane.io/composite"] = xr["metadata"]["name"]
    problems = composed_differences(claims_crossplane, xr, expected, discovered)
    deadline = time.monotonic() + SYNC_SECONDS
    for child in nested:
        composite = child.composite
        assert composite["kind"].startswith("X"), composite["kind"]  # nested composites are cluster-scoped
        child_path = cluster_xr_path({**composite, "name": composite["metadata"]["name"]})
        problems += composed_differences(
            claims_crossplane,
            wait_composed(claims_crossplane, child_path, len(child.composed), discovered, deadline),
            child.composed,
            discovered,
        )
    assert not problems, "\n".join(problems)

    composed = []
    for ref in resource_refs(xr):
        plural, namespaced = discovered[(ref["apiVersion"], ref["kind"])]
        composed.append(
            object_path(ref["apiVersion"], plural, ref.get("namespace") if namespaced else None, ref["name"])
        )
    cp.client.delete(manifest_path(claim))
    gone = [manifest_path(claim), cluster_xr_path({**xr, "name": xr["metadata"]["name"]}), *composed]

    def left() -> list[str]:
        return [p for p in gone if _exists(cp, p)]

    until("the claim, its XR and what it composed deleted", lambda: not left(), SYNC_SECONDS,
          where=lambda: f"still there: {left()}")  # fmt: skip


def test_lifecycles_cover_every_kind() -> None:
    assert set(LIFECYCLES) == {k.claim_kind for k in KINDS}
    assert all(isinstance(p, Path) and p.is_relative_to(REPO / "examples") for p in LIFECYCLES.values())
