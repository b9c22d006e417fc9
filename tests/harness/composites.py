"""The XR behind what a test applied, in either package: the default package's manifest is a namespaced XR
itself (its composed objects in ``spec.crossplane.resourceRefs``, without namespaces: they share the XR's);
the claims package's is a claim naming its cluster-scoped XR in ``spec.resourceRef``."""

from __future__ import annotations

import copy
from typing import Any

from harness.apiserver import plural, resource_path
from harness.controlplane import APIError, ControlPlane


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
