"""Installed and reconciled by a real Crossplane: every example, end to end, on the default package.

The packages are installed as a platform team installs them (``tests/harness/crossplane_core.py``). Each example
(a namespaced XR; a DynamoPlatform's claim) is applied in a namespace of its own; it must become
``Synced=True``, and the objects Crossplane
composed (kind, namespace, name) must be exactly what ``function-dynamo render`` prints for it, each
equal to the preview modulo what the API server defaults: the preview is what a real Crossplane applies.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from fixtures.corpus import STANDALONE_EXAMPLES
from fixtures.rendering import preview
from functions.tooling.manifests import load_documents
from harness.apiserver import derived_crds, ensure_namespace, resource_path
from harness.apiserver import plural as plural_of
from harness.composites import (
    SYNC_SECONDS,
    api_plurals,
    composed_differences,
    conditions_of,
    example_namespace,
    is_subset,
    wait_composed,
    wait_synced,
)
from harness.controlplane import APIError
from harness.crossplane_core import Crossplane

REPO = Path(__file__).resolve().parents[1]
COMPOSITE_LABEL = "crossplane.io/composite"


def example_claim(path: Path) -> dict[str, Any]:
    claim = yaml.safe_load(path.read_text())
    claim["metadata"]["namespace"] = example_namespace(path, "e2e-")
    return claim


@pytest.fixture(scope="module")
def discovered(crossplane: Crossplane) -> dict[tuple[str, str], tuple[str, bool]]:
    return api_plurals(crossplane)


def test_crossplane_dials_the_packaged_image(crossplane: Crossplane) -> None:
    """What ships is what is tested: the function Crossplane calls is the Function package's own image."""
    if crossplane.function_runtime != "container":
        pytest.skip("runc cannot run here (not root): Crossplane dials the checkout's function-dynamo serve")
    log = crossplane.cp.logs["function-dynamo"]
    assert crossplane.cp.pids["function-dynamo"] > 0
    assert (
        crossplane.cp.run_dir / "function-bundle" / "rootfs" / "usr" / "local" / "bin" / "function-dynamo"
    ).is_file()
    assert log.is_file()


def test_the_packages_are_installed_and_every_xrd_established(crossplane: Crossplane) -> None:
    client = crossplane.cp.client
    configuration = client.get("/apis/pkg.crossplane.io/v1/configurations/function-dynamo-configuration")
    function = client.get("/apis/pkg.crossplane.io/v1/functions/function-dynamo-function-dynamo")
    assert conditions_of(configuration)["Healthy"]["status"] == "True"
    assert conditions_of(function)["Healthy"]["status"] == "True"
    assert function["status"]["resolvedPackage"].startswith(crossplane.registry)  # the ImageConfig rewrote it
    xrds = client.get("/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions")["items"]
    assert sorted(x["metadata"]["name"] for x in xrds) == sorted(
        yaml.safe_load(p.read_text())["metadata"]["name"] for p in (REPO / "xrds").glob("*.yaml")
    )
    for xrd in xrds:
        assert conditions_of(xrd)["Established"]["status"] == "True", xrd["metadata"]["name"]
        if xrd["spec"].get("claimNames"):  # only an XRD with claims offers one
            assert conditions_of(xrd)["Offered"]["status"] == "True", xrd["metadata"]["name"]
        else:
            assert xrd["spec"]["scope"] == "Namespaced", xrd["metadata"]["name"]


# What the API server adds to a CRD's spec and its versions that an XRD-derived CRD leaves unset.
CRD_SERVER_DEFAULTS = {"conversion": {"strategy": "None"}}


def test_the_signature_verification_example_is_an_imageconfig_crossplane_accepts(crossplane: Crossplane) -> None:
    """package/verification/imageconfig.yaml (docs/signing.md) passes Crossplane's own ImageConfig schema; a
    misspelt field is refused, so the dry run checks something."""
    documents = load_documents(REPO / "package" / "verification" / "imageconfig.yaml")
    assert len(documents) == 2
    path = "/apis/pkg.crossplane.io/v1beta1/imageconfigs"
    for document in documents:
        accepted = crossplane.cp.client.create(path, document, dry_run=True)
        assert accepted["spec"]["verification"] == document["spec"]["verification"]
    bad = copy.deepcopy(documents[0])
    bad["spec"]["verification"]["cosign"]["authorities"][0]["key"]["hashAlgorithim"] = "sha256"
    with pytest.raises(APIError) as refused:
        crossplane.cp.client.request("POST", path, bad, params={"dryRun": "All", "fieldValidation": "Strict"})
    assert "hashAlgorithim" in str(refused.value.status)


def test_the_crds_crossplane_created_equal_our_derivation(crossplane: Crossplane) -> None:
    client = crossplane.cp.client
    for crd in derived_crds():
        name = crd["metadata"]["name"]
        stored = client.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
        owners = [o for o in stored["metadata"].get("ownerReferences") or [] if o.get("controller")]
        assert [(o["kind"], o["name"]) for o in owners] == [
            ("CompositeResourceDefinition", crd["metadata"]["ownerReferences"][0]["name"])
        ], f"{name} is not controlled by its XRD (so not Crossplane's): {owners}"
        want = {**CRD_SERVER_DEFAULTS, **crd["spec"]}
        assert stored["spec"] == want or is_subset(crd["spec"], stored["spec"]) is None, (
            name,
            is_subset(crd["spec"], stored["spec"]),
        )
        assert {k: v for k, v in stored["spec"].items() if k not in crd["spec"]}.keys() <= CRD_SERVER_DEFAULTS.keys()


@pytest.mark.parametrize(
    "path", STANDALONE_EXAMPLES, ids=[p.relative_to(REPO / "examples").as_posix() for p in STANDALONE_EXAMPLES]
)
def test_every_example_is_composed_as_the_preview_shows(
    path: Path, crossplane: Crossplane, discovered: dict[tuple[str, str], tuple[str, bool]]
) -> None:
    client = crossplane.cp.client
    claim = example_claim(path)
    namespace = claim["metadata"]["namespace"]
    ensure_namespace(client, namespace)
    expected, nested = preview(copy.deepcopy(claim))
    version = claim["apiVersion"].split("/")[1]
    collection = resource_path("nvidia.com", version, plural_of(claim["kind"]), namespace)
    try:
        client.create(collection, claim)
    except APIError as err:
        if err.code != 409:
            raise
    xr = wait_synced(crossplane, claim, len(expected), discovered)
    # Under a claim, the one difference by design: Crossplane names the XR <claim>-<random>, the preview
    # <claim>-<hash>; every object below it, nested composites' too, carries that name in its composite label.
    for obj in [*expected, *(o for child in nested for o in child.composed)]:
        obj["metadata"]["labels"][COMPOSITE_LABEL] = xr["metadata"]["name"]
    problems = composed_differences(crossplane, xr, expected, discovered)
    deadline = time.monotonic() + SYNC_SECONDS
    for child in nested:  # the nested composites (component deployments, scaling adapters), as --nested shows
        composite = child.composite
        plural, namespaced = discovered[(composite["apiVersion"], composite["kind"])]
        version = composite["apiVersion"].split("/")[1]
        child_ns = composite["metadata"].get("namespace") if namespaced else None
        child_xr = wait_composed(
            crossplane, resource_path("nvidia.com", version, plural, child_ns, composite["metadata"]["name"]),
            len(child.composed), discovered, deadline,
        )  # fmt: skip
        problems += composed_differences(crossplane, child_xr, child.composed, discovered)
    assert not problems, "\n".join(problems)
