"""A manifest admitted as the API server admits it, before a preview renders it or validate judges it.

The CRDs are the ones Crossplane derives from ``xrds/`` (the claim's, or the XR's for an XR). A refusal
is printed as ``kubectl apply`` prints one: the object, then each field path and what is wrong with it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from functions.kinds import GROUP
from functions.tooling.manifests import CLAIM_KINDS, load_documents
from functions.tooling.validation import Admission, FieldValidation, admit, derive_crds

XRD_DIR = Path(__file__).resolve().parents[2] / "xrds"
XR_KINDS = {xr_kind for xr_kind, _ in CLAIM_KINDS.values()}


@cache
def crds_by_kind() -> dict[str, dict[str, Any]]:
    """Kind (claim or XR) -> the CRD Crossplane derives for it from the XRDs in ``xrds/``."""
    crds: dict[str, dict[str, Any]] = {}
    for xrd in load_documents(XRD_DIR):
        for crd in derive_crds(xrd):
            crds[crd["spec"]["names"]["kind"]] = crd
    return crds


def served(doc: Any) -> bool:
    """A claim or XR of this package's group and kinds."""
    return (
        isinstance(doc, dict)
        and str(doc.get("apiVersion", "")).split("/")[0] == GROUP
        and doc.get("kind") in {*CLAIM_KINDS, *XR_KINDS}
    )


def with_namespace(doc: dict[str, Any], namespace: str) -> dict[str, Any]:
    """A claim without a namespace is created in ``namespace`` (kubectl's ``-n``); an XR has none."""
    if doc.get("kind") not in CLAIM_KINDS or not isinstance(doc.get("metadata", {}), dict):
        return doc
    meta = doc.get("metadata") or {}
    return doc if meta.get("namespace") else {**doc, "metadata": {**meta, "namespace": namespace}}


def admit_manifest(
    doc: dict[str, Any],
    *,
    old: dict[str, Any] | None = None,
    field_validation: FieldValidation = "Strict",
) -> Admission:
    """``doc`` (a served claim or XR) as the API server would store it, or its refusal."""
    return admit(doc, crds_by_kind()[doc["kind"]], old=old, field_validation=field_validation)


def refusal(doc: dict[str, Any], admission: Admission) -> str:
    """The refusal as kubectl prints it: ``The <Kind> "<name>" is invalid:`` then one line per violation."""
    name = (doc.get("metadata") or {}).get("name") if isinstance(doc.get("metadata"), dict) else None
    lines = [f'The {doc.get("kind")} "{name or ""}" is invalid:']
    lines += [f"* {v}" for v in admission.result.violations]
    return "\n".join(lines)
