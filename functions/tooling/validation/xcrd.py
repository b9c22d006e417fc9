"""Derive the CRDs Crossplane v2.2.x creates for a CompositeResourceDefinition.

Mirrors crossplane/v2@v2.2.1/internal/xcrd/crd.go (ForCompositeResource, ForCompositeResourceClaim,
genCrdVersion, validateClaimNames, setCrdMetadata) using the fragments in ``xcrd_schemas``.

The XRD is taken as it is stored in a cluster: the API server defaults declared on the XRD CRD
(apis/apiextensions/v1/xrd_types.go: ``scope: LegacyCluster``, ``defaultCompositeDeletePolicy:
Background``, ``defaultCompositionUpdatePolicy: Automatic``; v2 defaults ``scope`` to ``Namespaced``)
are applied first unless ``apply_xrd_defaults=False`` (which matches ``crossplane beta validate``, which
feeds raw YAML to the same Go functions).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from . import xcrd_schemas as xs
from .jsonprops import normalize_schema

CATEGORY_CLAIM = "claim"
CATEGORY_COMPOSITE = "composite"
# Composite and claim names are used as label values, so they may not be longer.
MAX_NAME_LENGTH = 63

_XRD_GROUP = "apiextensions.crossplane.io"
_NAME_KEYS = ("plural", "singular", "shortNames", "kind", "listKind", "categories")
_COLUMN_KEYS = ("name", "type", "format", "description", "priority", "jsonPath")

Obj = dict[str, Any]


class XRDError(ValueError):
    """The XRD cannot be turned into a CRD (the Go code returns an error in these cases)."""


def derive_crds(xrd: Obj, *, apply_xrd_defaults: bool = True) -> list[Obj]:
    """Return ``[xr_crd]`` or ``[xr_crd, claim_crd]`` (the latter when ``spec.claimNames`` is set)."""
    crds = [for_composite_resource(xrd, apply_xrd_defaults=apply_xrd_defaults)]
    if (xrd.get("spec") or {}).get("claimNames") is not None:
        crds.append(for_composite_resource_claim(xrd, apply_xrd_defaults=apply_xrd_defaults))
    return crds


def _spec(xrd: Obj, apply_defaults: bool) -> Obj:
    api_version = str(xrd.get("apiVersion", f"{_XRD_GROUP}/v1"))
    if not api_version.startswith(_XRD_GROUP + "/") or xrd.get("kind", "CompositeResourceDefinition") != (
        "CompositeResourceDefinition"
    ):
        raise XRDError(f"not a CompositeResourceDefinition: {api_version} {xrd.get('kind')}")
    spec = dict(xrd.get("spec") or {})
    if apply_defaults:
        default_scope = xs.SCOPE_NAMESPACED if api_version.endswith("/v2") else xs.SCOPE_LEGACY_CLUSTER
        spec.setdefault("scope", default_scope)
        spec.setdefault("defaultCompositeDeletePolicy", "Background")
        spec.setdefault("defaultCompositionUpdatePolicy", "Automatic")
    return spec


def _owner_reference(xrd: Obj) -> Obj:
    # meta.AsController(meta.TypedReferenceTo(xrd, CompositeResourceDefinitionGroupVersionKind))
    meta = xrd.get("metadata") or {}
    return {
        "apiVersion": f"{_XRD_GROUP}/v1",
        "kind": "CompositeResourceDefinition",
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _crd_metadata(name: str, xrd: Obj, spec: Obj) -> Obj:
    """setCrdMetadata: XRD labels merged with spec.metadata.labels; annotations only from spec.metadata."""
    meta: Obj = {"name": name}
    labels = dict((xrd.get("metadata") or {}).get("labels") or {})
    spec_meta = spec.get("metadata") or {}
    if spec_meta.get("labels") is not None:
        labels.update(spec_meta["labels"])
    if labels:
        meta["labels"] = labels
    if spec_meta.get("annotations"):
        meta["annotations"] = dict(spec_meta["annotations"])
    meta["ownerReferences"] = [_owner_reference(xrd)]
    return meta


def _names(names: Obj, category: str) -> Obj:
    out = {k: copy.deepcopy(names[k]) for k in _NAME_KEYS if names.get(k)}
    out["categories"] = [*(names.get("categories") or []), category]
    return out


def _crd(name: str, xrd: Obj, spec: Obj, names: Obj, scope: str, versions: list[Obj]) -> Obj:
    crd_spec: Obj = {"group": spec.get("group", ""), "names": names, "scope": scope, "versions": versions}
    if spec.get("conversion") is not None:
        crd_spec["conversion"] = copy.deepcopy(spec["conversion"])
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": _crd_metadata(name, xrd, spec),
        "spec": crd_spec,
    }


def for_composite_resource(xrd: Obj, *, apply_xrd_defaults: bool = True) -> Obj:
    """ForCompositeResource: the CRD of the composite resource (XR)."""
    spec = _spec(xrd, apply_xrd_defaults)
    scope = spec.get("scope") or xs.SCOPE_LEGACY_CLUSTER
    crd_scope = "Namespaced" if scope == xs.SCOPE_NAMESPACED else "Cluster"
    versions = []
    for vr in spec.get("versions") or []:
        v = _gen_crd_version(vr, MAX_NAME_LENGTH, xrd)
        v.setdefault("additionalPrinterColumns", []).extend(xs.composite_printer_columns(scope))
        schema = v["schema"]["openAPIV3Schema"]["properties"]
        schema["spec"]["properties"].update(xs.composite_spec_props(scope, spec.get("defaultCompositionUpdatePolicy")))
        schema["status"]["properties"].update(xs.composite_status_props(scope))
        versions.append(v)
    name = (xrd.get("metadata") or {}).get("name", "")
    names = _names(spec.get("names") or {}, CATEGORY_COMPOSITE)
    return _crd(name, xrd, spec, names, crd_scope, versions)


def for_composite_resource_claim(xrd: Obj, *, apply_xrd_defaults: bool = True) -> Obj:
    """ForCompositeResourceClaim: the namespaced CRD of the claim."""
    spec = _spec(xrd, apply_xrd_defaults)
    _validate_claim_names(spec)
    claim_names = spec["claimNames"]
    versions = []
    for vr in spec.get("versions") or []:
        v = _gen_crd_version(vr, MAX_NAME_LENGTH, xrd)
        v.setdefault("additionalPrinterColumns", []).extend(xs.claim_printer_columns())
        schema = v["schema"]["openAPIV3Schema"]["properties"]
        schema["spec"]["properties"].update(xs.claim_spec_props(spec.get("defaultCompositeDeletePolicy")))
        # Crossplane gives claims the LegacyCluster XR status props (including claimConditionTypes).
        schema["status"]["properties"].update(xs.composite_status_props(xs.SCOPE_LEGACY_CLUSTER))
        versions.append(v)
    name = f"{claim_names.get('plural', '')}.{spec.get('group', '')}"
    return _crd(name, xrd, spec, _names(claim_names, CATEGORY_CLAIM), "Namespaced", versions)


def _validate_claim_names(spec: Obj) -> None:
    claim = spec.get("claimNames")
    if claim is None:
        raise XRDError("invalid resource claim names: missing names")
    names = spec.get("names") or {}
    for key, optional in (("kind", False), ("plural", False), ("singular", True), ("listKind", True)):
        value = claim.get(key, "")
        if (value or not optional) and value == names.get(key, ""):
            raise XRDError(f'invalid resource claim names: "{value}" conflicts with composite resource name')


def _gen_crd_version(vr: Obj, max_name_length: int, xrd: Obj) -> Obj:
    """genCrdVersion: merge the XRD version schema into BaseProps."""
    name = (xrd.get("metadata") or {}).get("name", "")
    if vr.get("schema") is None:
        raise XRDError(f'cannot generate CRD for "{name}": custom resource validation cannot be nil')
    raw = vr["schema"].get("openAPIV3Schema")
    if not isinstance(raw, dict):
        raise XRDError(f'cannot generate CRD for "{name}": cannot parse validation schema')
    s = normalize_schema(copy.deepcopy(raw))

    root = xs.base_props()
    if s.get("description"):
        root["description"] = s["description"]
    if s.get("x-kubernetes-validations"):
        root["x-kubernetes-validations"] = s["x-kubernetes-validations"]

    max_length = max_name_length
    xrd_name_max = ((s.get("properties") or {}).get("metadata") or {}).get("properties", {}).get("name", {})
    if xrd_name_max.get("maxLength") is not None and xrd_name_max["maxLength"] < max_length:
        max_length = xrd_name_max["maxLength"]
    root["properties"]["metadata"] = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": max_length}},
    }

    x_spec = (s.get("properties") or {}).get("spec") or {}
    c_spec = root["properties"]["spec"]
    if x_spec.get("required"):
        c_spec["required"] = list(x_spec["required"])
    if "x-kubernetes-preserve-unknown-fields" in x_spec:
        c_spec["x-kubernetes-preserve-unknown-fields"] = x_spec["x-kubernetes-preserve-unknown-fields"]
    if x_spec.get("x-kubernetes-validations"):
        c_spec["x-kubernetes-validations"] = list(x_spec["x-kubernetes-validations"])
    if x_spec.get("oneOf"):
        c_spec["oneOf"] = list(x_spec["oneOf"])
    if x_spec.get("description"):
        c_spec["description"] = x_spec["description"]
    c_spec["properties"].update(x_spec.get("properties") or {})

    x_status = (s.get("properties") or {}).get("status") or {}
    c_status = root["properties"]["status"]
    for key in ("required", "x-kubernetes-validations", "description", "oneOf"):
        if x_status.get(key):
            c_status[key] = x_status[key]
    c_status["properties"].update(x_status.get("properties") or {})

    out: Obj = {
        "name": vr.get("name", ""),
        "served": bool(vr.get("served", False)),
        "storage": bool(vr.get("referenceable", False)),
    }
    if vr.get("deprecated"):
        out["deprecated"] = True
    if vr.get("deprecationWarning") is not None:
        out["deprecationWarning"] = vr["deprecationWarning"]
    out["schema"] = {"openAPIV3Schema": root}
    out["subresources"] = {"status": {}}
    scale = (vr.get("subresources") or {}).get("scale")
    if scale is not None:  # apiextensions v2 (Crossplane v2.3+): carried into the CRD as given
        out["subresources"]["scale"] = copy.deepcopy(scale)
    columns = [_column(c) for c in vr.get("additionalPrinterColumns") or []]
    if columns:
        out["additionalPrinterColumns"] = columns
    return out


def _column(col: Obj) -> Obj:
    # name, type and jsonPath are not omitempty in extv1.CustomResourceColumnDefinition.
    return {k: col.get(k, "") for k in _COLUMN_KEYS if k in ("name", "type", "jsonPath") or col.get(k)}


def _go_json_default(value: Any) -> Any:
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _go_floats(value: Any) -> Any:
    """Go's encoding/json writes float64 values with no fraction as integers (10, not 10.0)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, dict):
        return {k: _go_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_go_floats(v) for v in value]
    return value


def crd_json_size(crd: Obj) -> int:
    """Bytes of the compact JSON encoding of ``crd`` as Go's encoding/json would write it.

    Go escapes ``<``, ``>``, ``&``, U+2028 and U+2029 and writes other non-ASCII as UTF-8. Server-populated
    fields (uid, resourceVersion, managedFields, status) are not part of ``crd`` and are not counted.
    """
    text = json.dumps(_go_floats(crd), separators=(",", ":"), ensure_ascii=False, default=_go_json_default)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escape)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return len(text.encode("utf-8"))


__all__ = [
    "CATEGORY_CLAIM",
    "CATEGORY_COMPOSITE",
    "XRDError",
    "crd_json_size",
    "derive_crds",
    "for_composite_resource",
    "for_composite_resource_claim",
]
