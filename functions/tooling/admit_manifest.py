"""A manifest admitted as the API server admits it, before a preview renders it or validate judges it.

The CRDs are the ones Crossplane derives from the package's XRDs: ``xrds/`` (the default package) or
``package/claims/xrds/`` (the claims package); the claim's, or the XR's for an XR. A refusal
is printed as ``kubectl apply`` prints one: the object, then each field path and what is wrong with it.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

from functions.api.echo import cut
from functions.kinds import GROUP, KINDS, kind_of
from functions.tooling.cache import cache_dir, keep
from functions.tooling.data_dirs import CLAIMS_XRD_DIR, XRD_DIR
from functions.tooling.manifests import CLAIM_KINDS, CLUSTER_XR_KINDS, load_documents
from functions.tooling.validation import Admission, FieldValidation, admit, derive_crds, jsonprops, xcrd

# The code that derives a CRD from an XRD: a change to it, like a change to the XRD, makes a new cache entry.
_DERIVATION = (Path(xcrd.__file__), Path(xcrd.__file__).with_name("xcrd_schemas.py"), Path(jsonprops.__file__))


def _cache_key(xrd_path: Path) -> str:
    digest = hashlib.sha256(xrd_path.read_bytes())
    for source in _DERIVATION:
        digest.update(source.read_bytes())
    return digest.hexdigest()[:24]


@cache
def _crds_of(xrd_dir: Path, xrd_file: str) -> dict[str, dict[str, Any]]:
    """Kind (claim or XR) -> the CRD Crossplane derives for it, for one XRD of ``xrd_dir``.

    Derived once per XRD content and kept as JSON under the cache directory (``FUNCTION_DYNAMO_CACHE``,
    default ``~/.cache/function-dynamo``): reading it back is a fraction of parsing and deriving again. Where
    the cache cannot be written, the CRDs are derived every time."""
    xrd_path = xrd_dir / xrd_file
    cached = cache_dir() / "derived-crds" / f"{xrd_path.stem}-{_cache_key(xrd_path)}.json"
    try:
        return json.loads(cached.read_text())
    except (OSError, ValueError):
        pass
    crds = {crd["spec"]["names"]["kind"]: crd for xrd in load_documents(xrd_path) for crd in derive_crds(xrd)}
    keep(cached, json.dumps(crds, sort_keys=True).encode())
    return crds


def crd_for(kind: str, *, claims: bool = False) -> dict[str, Any]:
    """The CRD of a claim or XR kind in the default package (or the claims package): only its own XRD is read
    and derived (a render admits one kind). A claim's cluster XR kind is the claims package's in either."""
    found = kind_of(kind)
    if found is None:
        raise KeyError(kind)
    crds = _crds_of(CLAIMS_XRD_DIR if claims else XRD_DIR, found.xrd_file)
    if kind not in crds and kind in CLUSTER_XR_KINDS:
        crds = _crds_of(CLAIMS_XRD_DIR, found.xrd_file)
    return crds[kind]


def crds_by_kind(*, claims: bool = False) -> dict[str, dict[str, Any]]:
    """Kind (claim or XR) -> the CRD Crossplane derives for it from the default (or the claims) package's XRDs."""
    directory = CLAIMS_XRD_DIR if claims else XRD_DIR
    return {kind: crd for k in KINDS for kind, crd in _crds_of(directory, k.xrd_file).items()}


def served(doc: Any) -> bool:
    """A claim or XR of this package's group and kinds."""
    return (
        isinstance(doc, dict)
        and str(doc.get("apiVersion", "")).split("/")[0] == GROUP
        and doc.get("kind") in {*CLAIM_KINDS, *CLUSTER_XR_KINDS}
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
    claims: bool = False,
) -> Admission:
    """``doc`` (a served claim or XR) as the API server would store it, or its refusal; ``claims``: as the
    claims package's API server would."""
    return admit(doc, crd_for(doc["kind"], claims=claims), old=old, field_validation=field_validation)


def refusal(doc: dict[str, Any], admission: Admission) -> str:
    """The refusal as kubectl prints it: ``The <Kind> "<name>" is invalid:`` then one line per violation."""
    name = (doc.get("metadata") or {}).get("name") if isinstance(doc.get("metadata"), dict) else None
    lines = [f'The {doc.get("kind")} "{cut(str(name or ""))}" is invalid:']
    lines += [f"* {v}" for v in admission.result.violations]
    return "\n".join(lines)
