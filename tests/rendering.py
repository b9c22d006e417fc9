"""Rendering claims in-process and checking every rendered object against its real schema.

Shared by the schema-validation and component-pathway tests: custom kinds against their real
CRDs (Grove, LeaderWorkerSet, Istio, GAIE, downloaded by scripts/install-tools.sh), the
package's own kinds against the CRDs Crossplane derives from our XRDs, built-in kinds against
kubernetes-validate's schemas.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import kubernetes_validate

from functions.tooling.manifests import claim_to_xr, find_composition, load_documents
from functions.tooling.pipeline import render
from functions.tooling.validation import derive_crds, load_crds, validate_object
from server import REPO
from tooling import require_crds

KUBERNETES_VERSION = "1.33"  # built-in kinds are checked against this schema bundle
# API group -> the CRD set scripts/install-tools.sh downloads for it.
CRD_SETS = {
    "grove.io": "grove",
    "leaderworkerset.x-k8s.io": "lws",
    "networking.istio.io": "istio",
    "inference.networking.k8s.io": "gaie",
}


@cache
def compositions() -> tuple[dict[str, Any], ...]:
    return tuple(load_documents(REPO / "compositions"))


def existing_pvcs(claim: dict[str, Any]) -> list[dict[str, Any]]:
    """The claims a manifest expects to exist already (``create: false``), as the cluster would hold them."""
    namespace = claim["metadata"].get("namespace", "default")
    return [
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": p["name"], "namespace": namespace}}
        for p in (claim.get("spec") or {}).get("pvcs") or []
        if not p.get("create")
    ]


# A operator config with the checkpoint gate on, for manifests that start from a checkpoint (the gate is off
# by default, as upstream's).
CHECKPOINT_PLATFORM = {
    "apiVersion": "apiextensions.crossplane.io/v1beta1",
    "kind": "EnvironmentConfig",
    "metadata": {"name": "dynamo-platform"},
    "data": {
        "checkpoint": {"enabled": True, "storage": {"pvc": {"pvcName": "snapshot-pvc", "basePath": "/checkpoints"}}}
    },
}


def render_xr(xr: dict[str, Any], **kwargs: Any) -> list[dict[str, Any]]:
    """The composed resources of an XR, through its Composition's pipeline, in-process."""
    return render(xr, find_composition(xr, list(compositions())), **kwargs).composed


def rendered(claim: dict[str, Any]) -> list[dict[str, Any]]:
    return render_xr(claim_to_xr(claim), required=existing_pvcs(claim))


@cache
def package_crds() -> dict[str, dict[str, Any]]:
    """kind -> CRD, for every XR and claim kind of both packages (the XRDs in package/claims/xrds/, then xrds/:
    a kind both define is the default package's namespaced XR)."""
    dirs = (REPO / "package" / "claims" / "xrds", REPO / "xrds")
    return {crd["spec"]["names"]["kind"]: crd for d in dirs for xrd in load_documents(d) for crd in derive_crds(xrd)}


@cache
def crd_set(name: str) -> dict[tuple[str, str], dict[str, Any]]:
    return load_crds(sorted(Path(require_crds(name)).glob("*.yaml")))


DRA_KUBERNETES_VERSION = "1.35.0"


def kubernetes_schema_version(obj: dict[str, Any]) -> str:
    """The schema bundle a built-in kind is checked against: resource.k8s.io/v1 (DRA) is served from Kubernetes
    1.34, so its kinds are checked against the control plane's version."""
    return (
        DRA_KUBERNETES_VERSION if str(obj.get("apiVersion", "")).startswith("resource.k8s.io/") else KUBERNETES_VERSION
    )


def check_resource(obj: dict[str, Any]) -> None:
    """Assert ``obj`` is valid against its real schema (see the module doc)."""
    group = obj["apiVersion"].split("/")[0] if "/" in obj["apiVersion"] else ""
    if group == "nvidia.com":
        violations = validate_object(obj, package_crds()[obj["kind"]])
    elif group in CRD_SETS:
        violations = validate_object(obj, crd_set(CRD_SETS[group])[(group, obj["kind"])])
    else:
        kubernetes_validate.validate(obj, kubernetes_schema_version(obj), strict=True)
        return
    assert violations == [], f"{obj['kind']} {obj['metadata'].get('name')}:\n" + "\n".join(map(str, violations))
