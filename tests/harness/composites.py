"""What a test applied, and the XR behind it, in either package: the default package's manifest is a namespaced XR
itself (its composed objects in ``spec.crossplane.resourceRefs``, without namespaces: they share the XR's); the claims
package's is a claim naming its cluster-scoped XR in ``spec.resourceRef``.

Applying an example (``create_claim``, ``apply_example``), finding its XR (``xr_of``), waiting for it to be Synced
with everything composed (``wait_synced``), and what Crossplane composed compared with the preview
(``composed_differences``).
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

import yaml

from fixtures.corpus import example_claim
from fixtures.tooling import REPO
from harness.apiserver import ensure_namespace, plural, resource_path, served_resources
from harness.controlplane import APIError, ControlPlane
from harness.crossplane_core import Crossplane
from harness.poll import until

SYNC_SECONDS = 90.0

# (apiVersion, kind) -> (plural, namespaced), as the API server's discovery says
Plurals = dict[tuple[str, str], tuple[str, bool]]


def manifest_path(obj: dict[str, Any]) -> str:
    """The API path of an applied manifest of ours (a claim or a namespaced XR)."""
    meta = obj["metadata"]
    version = obj["apiVersion"].split("/")[1]
    return resource_path("nvidia.com", version, plural(obj["kind"]), meta.get("namespace"), meta["name"])


def cluster_xr_path(ref: dict[str, Any]) -> str:
    return resource_path("nvidia.com", ref["apiVersion"].split("/")[1], plural(ref["kind"]), None, ref["name"])


def xr_path_of(cp: ControlPlane, obj: dict[str, Any]) -> str | None:
    """The path of the XR Crossplane reconciles for the applied ``obj``; None until Crossplane has taken it up
    (a claim names no XR yet, a namespaced XR has no Composition selected yet)."""
    spec = cp.client.get(manifest_path(obj)).get("spec") or {}
    if spec.get("resourceRef"):
        return cluster_xr_path(spec["resourceRef"])
    if spec.get("crossplane"):
        return manifest_path(obj)
    return None


def xr_of(cp: ControlPlane, obj: dict[str, Any]) -> dict[str, Any] | None:
    """The XR of the applied ``obj``, or None while there is none yet."""
    path = xr_path_of(cp, obj)
    if path is None:
        return None
    try:
        return cp.client.get(path)
    except APIError as err:
        if err.code == 404:  # the claim syncer names the XR in the claim before it creates it
            return None
        raise


def resource_refs(xr: dict[str, Any]) -> list[dict[str, Any]]:
    """The XR's composed objects, each with its namespace (a namespaced XR's refs leave out their own)."""
    spec = xr.get("spec") or {}
    refs = (spec.get("crossplane") or {}).get("resourceRefs") or spec.get("resourceRefs") or []
    namespace = (xr.get("metadata") or {}).get("namespace")
    return [{**ref, "namespace": ref.get("namespace") or namespace} if namespace else ref for ref in refs]


def without_crossplane_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    """A composed object as if a controller of its own had made it: no owner references, no ``crossplane.io/``
    labels or annotations."""
    obj = copy.deepcopy(obj)
    meta = obj["metadata"]
    meta.pop("ownerReferences", None)
    for field in ("labels", "annotations"):
        kept = {k: v for k, v in (meta.get(field) or {}).items() if not k.startswith("crossplane.io/")}
        if kept:
            meta[field] = kept
        else:
            meta.pop(field, None)
    return obj


def conditions_of(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The object's status conditions by type."""
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def object_path(api_version: str, kind_plural: str, namespace: str | None, name: str) -> str:
    """The API path of an object of any group (the core group's under ``/api``)."""
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    if namespace:
        base += f"/namespaces/{namespace}"
    return f"{base}/{kind_plural}/{name}"


def api_plurals(xp: Crossplane) -> Plurals:
    """(apiVersion, kind) -> (plural, namespaced), from the API server's discovery."""
    client = xp.cp.client
    versions = ["v1", *(v["groupVersion"] for g in client.get("/apis")["groups"] for v in g["versions"])]
    out: Plurals = {}
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


def _all_exist(xp: Crossplane, refs: list[dict[str, Any]], discovered: Plurals) -> bool:
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


def wait_composed(xp: Crossplane, xr_path: str, want: int, discovered: Plurals, deadline: float) -> dict[str, Any]:
    """The XR at ``xr_path`` once Synced with ``want`` composed resources that all exist, by ``deadline`` (of
    ``time.monotonic()``: a claim's nested composites share its time)."""
    xr: dict[str, Any] = {}

    def composed() -> dict[str, Any] | None:
        nonlocal xr
        xr = xp.cp.client.get(xr_path)
        refs = resource_refs(xr)
        synced = conditions_of(xr).get("Synced", {}).get("status") == "True"
        return xr if synced and len(refs) >= want and _all_exist(xp, refs, discovered) else None

    return until(
        f"{xr_path} Synced with {want} composed resources",
        composed,
        max(0.0, deadline - time.monotonic()),
        where=lambda: f"conditions {conditions_of(xr)}, refs {resource_refs(xr)}; {xp.where()}",
    )


def wait_synced(xp: Crossplane, claim: dict[str, Any], want: int, discovered: Plurals) -> dict[str, Any]:
    """The applied object's XR once it is Synced=True and the XR's ``want`` composed resources all exist (a
    namespaced XR is its own; a claim, once Synced, names its XR)."""
    path = manifest_path(claim)
    deadline = time.monotonic() + SYNC_SECONDS
    got: dict[str, Any] = {}

    def xr_path() -> str | None:
        nonlocal got
        got = xp.cp.client.get(path)
        spec = got.get("spec") or {}
        if spec.get("crossplane") is not None:
            return path
        ref = spec.get("resourceRef")
        if ref and conditions_of(got).get("Synced", {}).get("status") == "True":
            return resource_path("nvidia.com", ref["apiVersion"].split("/")[1], plural(ref["kind"]), None, ref["name"])
        return None

    what = f"{claim['kind']}/{claim['metadata']['name']} Synced"
    found = until(what, xr_path, SYNC_SECONDS, where=lambda: f"{conditions_of(got)}; {xp.where()}")
    return wait_composed(xp, found, want, discovered, deadline)


def composed_differences(
    xp: Crossplane,
    xr: dict[str, Any],
    expected: list[dict[str, Any]],
    discovered: Plurals,
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


def example_namespace(path: Path, prefix: str) -> str:
    """A namespace of its own for the example at ``path``: ``prefix`` and its path under ``examples/``."""
    return prefix + path.relative_to(REPO / "examples").with_suffix("").as_posix().replace("/", "-").lower()


def create_claim(cp: ControlPlane, path: Path | dict[str, Any], namespace: str) -> dict[str, Any]:
    """The claim of file ``path`` (or the claim ``path``) created in ``namespace``."""
    claim = copy.deepcopy(path) if isinstance(path, dict) else yaml.safe_load(path.read_text())
    claim["metadata"]["namespace"] = namespace
    ensure_namespace(cp.client, namespace)
    collection = resource_path("nvidia.com", claim["apiVersion"].split("/")[1], plural(claim["kind"]), namespace)
    try:
        cp.client.create(collection, claim)
    except APIError as err:
        if err.code != 409:
            raise
    return claim


def composed_kinds(cp: ControlPlane, claim: dict[str, Any]) -> set[str]:
    """The kinds the applied object's XR composes so far."""
    return {r["kind"] for r in resource_refs(xr_of(cp, claim) or {})}


def listed(cp: ControlPlane, collection: str, what: str) -> list[dict[str, Any]]:
    """The objects of ``collection`` once there are any. An XR's resourceRefs name a composed object before
    Crossplane has applied it, so a kind in them does not mean the object exists yet."""
    return until(what, lambda: cp.client.get(collection)["items"])


def nudge(cp: ControlPlane, claim: dict[str, Any]) -> None:
    """Reconcile the claim's XR now: Crossplane watches what it composes, not the pods a step reads, so a new
    Job pod would otherwise wait for the next poll (up to a minute)."""
    path = xr_path_of(cp, claim)
    assert path is not None, f"{claim['kind']}/{claim['metadata']['name']} has no XR yet"
    cp.client.merge_patch(path, {"metadata": {"annotations": {"function-dynamo.test/nudge": str(time.monotonic_ns())}}})


def apply_example(cp: ControlPlane, example: str, namespace: str) -> tuple[dict[str, Any], str]:
    """The example claim applied in ``namespace``; (claim, its path)."""
    ensure_namespace(cp.client, namespace)
    claim = yaml.safe_load((example_claim(example.removesuffix(".yaml"))).read_text())
    claim["metadata"]["namespace"] = namespace
    version = claim["apiVersion"].split("/")[1]
    collection = resource_path("nvidia.com", version, "dynamographdeployments", namespace)
    cp.client.create(collection, claim)
    return claim, f"{collection}/{claim['metadata']['name']}"
