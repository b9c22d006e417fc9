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

from fixtures.corpus import EXAMPLE_CLAIMS, examples_of_kind
from functions.tooling.manifests import find_composition, load_documents
from functions.tooling.pipeline import RenderOutput, render, render_nested
from functions.tooling.render import admitted_xr
from harness.apiserver import derived_crds, ensure_namespace, resource_path, served_resources
from harness.apiserver import plural as plural_of
from harness.composites import manifest_path, resource_refs
from harness.controlplane import APIError
from harness.crossplane_core import Crossplane

REPO = Path(__file__).resolve().parents[1]
SYNC_SECONDS = 90.0
CLAIMS = sorted(
    p for p in [*EXAMPLE_CLAIMS, *examples_of_kind("DynamoComponentDeployment", "DynamoGraphDeploymentScalingAdapter")]
)
COMPOSITE_LABEL = "crossplane.io/composite"


def _namespace(path: Path) -> str:
    return "e2e-" + path.relative_to(REPO / "examples").with_suffix("").as_posix().replace("/", "-").lower()


def example_claim(path: Path) -> dict[str, Any]:
    claim = yaml.safe_load(path.read_text())
    claim["metadata"]["namespace"] = _namespace(path)
    return claim


def _conditions(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def object_path(api_version: str, kind_plural: str, namespace: str | None, name: str) -> str:
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    if namespace:
        base += f"/namespaces/{namespace}"
    return f"{base}/{kind_plural}/{name}"


def api_plurals(xp: Crossplane) -> dict[tuple[str, str], tuple[str, bool]]:
    """(apiVersion, kind) -> (plural, namespaced), from the API server's discovery."""
    client = xp.cp.client
    versions = ["v1", *(v["groupVersion"] for g in client.get("/apis")["groups"] for v in g["versions"])]
    out: dict[tuple[str, str], tuple[str, bool]] = {}
    for group_version in versions:
        for resource in served_resources(client, group_version):
            out[(group_version, resource["kind"])] = (resource["name"], resource["namespaced"])
    return out


def is_subset(want: Any, got: Any, path: str = "") -> str | None:
    """Where ``want`` (the preview) is not contained in ``got`` (what the API server stores), or None."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"{path}: {got!r} is not an object"
        for key, value in want.items():
            if key not in got:
                return f"{path}.{key}: missing"
            problem = is_subset(value, got[key], f"{path}.{key}")
            if problem:
                return problem
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(want) != len(got):
            return f"{path}: {len(want)} items rendered, {len(got) if isinstance(got, list) else got!r} stored"
        for i, (a, b) in enumerate(zip(want, got, strict=True)):
            problem = is_subset(a, b, f"{path}[{i}]")
            if problem:
                return problem
        return None
    if want != got:
        return f"{path}: rendered {want!r}, stored {got!r}"
    return None


def preview(
    claim: dict[str, Any], *, claims: bool = False, required: list[dict[str, Any]] | None = None
) -> tuple[list[dict[str, Any]], list[RenderOutput]]:
    """What ``function-dynamo render --nested`` composes for the claim (with ``required``, e.g. the operator
    config, as ``-e`` gives them): the claim's XR's composed resources, and each nested composite's render."""
    xr = admitted_xr(claim, claim["metadata"]["namespace"], "Strict", claims=claims)
    compositions = load_documents(REPO / "compositions")  # with compositions/claims/
    out = render(xr, find_composition(xr, compositions), [], required or [])
    admit = lambda x: admitted_xr(x, "", "Strict", claims=claims)  # noqa: E731
    return out.composed, render_nested(out, compositions, required or [], admit)


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
    assert _conditions(configuration)["Healthy"]["status"] == "True"
    assert _conditions(function)["Healthy"]["status"] == "True"
    assert function["status"]["resolvedPackage"].startswith(crossplane.registry)  # the ImageConfig rewrote it
    xrds = client.get("/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions")["items"]
    assert sorted(x["metadata"]["name"] for x in xrds) == sorted(
        yaml.safe_load(p.read_text())["metadata"]["name"] for p in (REPO / "xrds").glob("*.yaml")
    )
    for xrd in xrds:
        assert _conditions(xrd)["Established"]["status"] == "True", xrd["metadata"]["name"]
        if xrd["spec"].get("claimNames"):  # only an XRD with claims offers one
            assert _conditions(xrd)["Offered"]["status"] == "True", xrd["metadata"]["name"]
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


def _all_exist(xp: Crossplane, refs: list[dict[str, Any]], discovered: dict[tuple[str, str], tuple[str, bool]]) -> bool:
    for ref in refs:
        plural, namespaced = discovered[(ref["apiVersion"], ref["kind"])]
        try:
            xp.cp.client.get(
                object_path(ref["apiVersion"], plural, ref.get("namespace") if namespaced else None, ref["name"])
            )
        except APIError as err:
            if err.code == 404:
                return False
            raise
    return True


def _wait_composed(
    xp: Crossplane, xr_path: str, want: int, discovered: dict[tuple[str, str], tuple[str, bool]], deadline: float
) -> dict[str, Any]:
    """The XR at ``xr_path`` once Synced with ``want`` composed resources that all exist."""
    xr: dict[str, Any] = {}
    while time.monotonic() < deadline:
        try:
            xr = xp.cp.client.get(xr_path)
        except APIError as err:
            if err.code != 404:
                raise
            time.sleep(0.5)
            continue
        refs = resource_refs(xr)
        synced = _conditions(xr).get("Synced", {}).get("status") == "True"
        if synced and len(refs) >= want and _all_exist(xp, refs, discovered):
            return xr
        time.sleep(0.5)
    raise AssertionError(
        f"{xr_path} not Synced with {want} composed resources after {SYNC_SECONDS:.0f}s: conditions "
        f"{_conditions(xr)}, refs {resource_refs(xr)}; {xp.where()}"
    )


def wait_synced(
    xp: Crossplane, claim: dict[str, Any], want: int, discovered: dict[tuple[str, str], tuple[str, bool]]
) -> dict[str, Any]:
    """The applied object's XR once it is Synced=True and the XR's ``want`` composed resources all exist (a
    namespaced XR is its own; a claim, once Synced, names its XR)."""
    client = xp.cp.client
    meta = claim["metadata"]
    path = manifest_path(claim)
    deadline = time.monotonic() + SYNC_SECONDS
    got: dict[str, Any] = {}
    while time.monotonic() < deadline:
        got = client.get(path)
        ref = (got.get("spec") or {}).get("resourceRef")
        if (got.get("spec") or {}).get("crossplane") is not None:
            return _wait_composed(xp, path, want, discovered, deadline)
        if ref and _conditions(got).get("Synced", {}).get("status") == "True":
            xr_path = resource_path(
                "nvidia.com", ref["apiVersion"].split("/")[1], plural_of(ref["kind"]), None, ref["name"]
            )
            return _wait_composed(xp, xr_path, want, discovered, deadline)
        time.sleep(0.5)
    raise AssertionError(
        f"{claim['kind']}/{meta['name']} not Synced after {SYNC_SECONDS:.0f}s: {_conditions(got)}; {xp.where()}"
    )


def _differences(
    xp: Crossplane,
    xr: dict[str, Any],
    expected: list[dict[str, Any]],
    discovered: dict[tuple[str, str], tuple[str, bool]],
) -> list[str]:
    """Where what Crossplane composed for ``xr`` differs from the preview's ``expected`` objects."""
    refs = {(r["apiVersion"], r["kind"], r["name"]) for r in resource_refs(xr)}
    want = {(o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in expected}
    if refs != want:
        extra, missing = sorted(refs - want), sorted(want - refs)
        return [f"{xr['metadata']['name']}: composed, not previewed: {extra}; previewed, not composed: {missing}"]
    problems = []
    for obj in expected:
        plural, namespaced = discovered[(obj["apiVersion"], obj["kind"])]
        ns = obj["metadata"].get("namespace") if namespaced else None
        stored = xp.cp.client.get(object_path(obj["apiVersion"], plural, ns, obj["metadata"]["name"]))
        where = f"{obj['kind']}/{obj['metadata']['name']}"
        for key, value in obj.items():
            if key not in ("metadata", "status"):
                problems.append(is_subset(value, stored.get(key), f"{where}.{key}"))
        for key in ("labels", "annotations"):
            got = stored["metadata"].get(key) or {}
            problems.append(is_subset(obj["metadata"].get(key) or {}, got, f"{where}.metadata.{key}"))
    return [p for p in problems if p]


@pytest.mark.parametrize("path", CLAIMS, ids=[p.relative_to(REPO / "examples").as_posix() for p in CLAIMS])
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
    problems = _differences(crossplane, xr, expected, discovered)
    deadline = time.monotonic() + SYNC_SECONDS
    for child in nested:  # the nested composites (component deployments, scaling adapters), as --nested shows
        composite = child.composite
        plural, namespaced = discovered[(composite["apiVersion"], composite["kind"])]
        version = composite["apiVersion"].split("/")[1]
        child_ns = composite["metadata"].get("namespace") if namespaced else None
        child_xr = _wait_composed(
            crossplane, resource_path("nvidia.com", version, plural, child_ns, composite["metadata"]["name"]),
            len(child.composed), discovered, deadline,
        )  # fmt: skip
        problems += _differences(crossplane, child_xr, child.composed, discovered)
    assert not problems, "\n".join(problems)
