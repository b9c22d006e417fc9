"""The real API server judges the DynamoPlatform: its claims (the XRD's CEL rules), and everything it composes
against the provider CRDs it composes for (their schemas and CEL rules), as a server-side dry-run create.

Also the Objects of a DGD placed on a platform, against provider-kubernetes' Object CRD. The provider versions are
the ones ``scripts/install-tools.sh`` pins (``PROVIDER_*_VERSION``).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fixtures.placement import PLACED, read_operator_config, render_manifest
from fixtures.platform import PROVIDER_KINDS, REFUSALS, claim, edited, provider_crds
from fixtures.tooling import REPO
from functions.tooling.manifests import find_composition, load_documents
from functions.tooling.pipeline import render
from functions.tooling.render import admitted_xr
from harness.apiserver import Installed, ensure_namespace, install_crd, plural, resource_path
from harness.controlplane import APIError, ControlPlane

CLOUDS = ("aws", "azure", "existing", "gcp")
NAMESPACE = "platform"
CROSSPLANE_KEYS = ("ownerReferences", "generateName")


@pytest.fixture(scope="module")
def provider_crds_installed(control_plane: ControlPlane) -> dict[str, str]:
    """Every provider CRD installed; kind -> plural, for the composed objects' paths."""
    plurals: dict[str, str] = {}
    for name in PROVIDER_KINDS:
        for crd in provider_crds(name):
            got = install_crd(control_plane.client, crd)
            assert got.accepted, got.message
            plurals[f"{crd['spec']['group']}/{crd['spec']['names']['kind']}"] = crd["spec"]["names"]["plural"]
    for namespace in (NAMESPACE, "dynamo-demo"):
        ensure_namespace(control_plane.client, namespace)
    return plurals


def _dry_run(cp: ControlPlane, obj: dict[str, Any], plurals: dict[str, str]) -> None:
    group, version = obj["apiVersion"].split("/")
    body = copy.deepcopy(obj)
    for key in CROSSPLANE_KEYS:
        body["metadata"].pop(key, None)
    kind_plural = plurals.get(f"{group}/{obj['kind']}") or plural(obj["kind"])
    path = resource_path(group, version, kind_plural, body["metadata"].get("namespace"))
    cp.client.request("POST", path, body, params={"dryRun": "All", "fieldValidation": "Strict"})


def _claim_path(doc: dict[str, Any]) -> str:
    return resource_path("nvidia.com", doc["apiVersion"].split("/")[1], plural(doc["kind"]), NAMESPACE)


@pytest.mark.parametrize("cloud", CLOUDS)
def test_the_api_server_accepts_each_example_platform(
    cloud: str, installed: dict[str, Installed], control_plane: ControlPlane
) -> None:
    assert installed["dynamoplatforms.nvidia.com"].accepted
    ensure_namespace(control_plane.client, NAMESPACE)
    doc = claim(cloud)
    control_plane.client.request("POST", _claim_path(doc), doc, params={"dryRun": "All", "fieldValidation": "Strict"})


@pytest.mark.parametrize(("name", "spec", "message"), REFUSALS, ids=[m for _, _, m in REFUSALS])
def test_the_api_server_refuses_a_bad_platform_as_the_offline_admission_does(
    name: str, spec: dict[str, Any], message: str, installed: dict[str, Installed], control_plane: ControlPlane
) -> None:
    ensure_namespace(control_plane.client, NAMESPACE)
    doc = edited(name, **spec)
    with pytest.raises(APIError) as refused:
        control_plane.client.request("POST", _claim_path(doc), doc, params={"dryRun": "All"})
    assert message in str(refused.value.status.get("message")), refused.value.status


def _preview(cloud: str) -> list[dict[str, Any]]:
    xr = admitted_xr(claim(cloud), NAMESPACE, "Strict")
    return render(xr, find_composition(xr, load_documents(REPO / "compositions"))).composed


@pytest.mark.parametrize("cloud", CLOUDS)
def test_everything_a_platform_composes_validates_against_its_providers_crds(
    cloud: str, provider_crds_installed: dict[str, str], control_plane: ControlPlane
) -> None:
    composed = [o for o in _preview(cloud) if o["kind"] != "EnvironmentConfig"]  # Crossplane's own kind
    assert composed
    refused = {}
    for obj in composed:
        try:
            _dry_run(control_plane, obj, provider_crds_installed)
        except APIError as err:
            refused[f"{obj['kind']}/{obj['metadata']['name']}"] = err.status.get("message")
    assert not refused, refused


def test_a_managed_resource_missing_what_its_crds_cel_requires_is_refused(
    provider_crds_installed: dict[str, str], control_plane: ControlPlane
) -> None:
    """The dry runs above would catch a dropped required parameter: the provider's CEL rules are live."""
    node_group = next(o for o in _preview("aws") if o["kind"] == "NodeGroup")
    del node_group["spec"]["forProvider"]["scalingConfig"]
    del node_group["spec"]["initProvider"]  # either one satisfies the rule
    with pytest.raises(APIError, match="scalingConfig is a required parameter"):
        _dry_run(control_plane, node_group, provider_crds_installed)


def test_the_objects_of_a_placed_graph_validate_against_provider_kubernetes_object_crd(
    provider_crds_installed: dict[str, str], control_plane: ControlPlane
) -> None:
    objects = render_manifest(PLACED, required=[read_operator_config()]).composed
    assert {o["kind"] for o in objects} == {"Object"}
    for obj in objects:
        _dry_run(control_plane, obj, provider_crds_installed)
