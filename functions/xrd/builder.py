"""The CompositeResourceDefinition shapes every Dynamo kind shares.

Each kind's ``<kind>_xrd.py`` builds its XRD in the claims shape (``legacy_xrd``, ``single_version_xrd``): a
LegacyCluster XRD (cluster-scoped XR ``X<Kind>``, namespaced claim ``<Kind>``) serving v1beta1 (referenceable,
the storage version) and a deprecated v1alpha1, both with one union schema. ``namespaced_xrd`` turns that into
the default package's XRD: ``apiextensions.crossplane.io/v2``, ``scope: Namespaced``, the upstream kind itself
as the XR (no claim, no suffix), the same versions and schemas.
"""

from __future__ import annotations

import copy
from typing import Any

from functions.api import GROUP


def _names(kind: str) -> dict[str, str]:
    return {"kind": kind, "plural": f"{kind.lower()}s", "singular": kind.lower(), "listKind": f"{kind}List"}


def single_version_xrd(
    claim_kind: str, short_name: str, version: str, schema: dict[str, Any], columns: list[dict[str, Any]]
) -> dict[str, Any]:
    """A LegacyCluster XRD serving one version (the kinds upstream serves in one version only)."""
    xrd = legacy_xrd(claim_kind, short_name, schema, {"v1beta1": columns, "v1alpha1": columns}, "")
    xrd["spec"]["versions"] = [
        {"name": version, "served": True, "referenceable": True, "schema": schema, "additionalPrinterColumns": columns}
    ]
    return xrd


def legacy_xrd(
    claim_kind: str,
    short_name: str,
    schema: dict[str, Any],
    columns: dict[str, list[dict[str, Any]]],
    deprecation_warning: str,
) -> dict[str, Any]:
    """``columns`` maps version to its printer columns (Crossplane appends SYNCED, READY and AGE)."""
    claim_names = _names(claim_kind)
    xr_kind = f"X{claim_kind}"
    versions = [
        {
            "name": "v1beta1",
            "served": True,
            "referenceable": True,
            "schema": schema,
            "additionalPrinterColumns": columns["v1beta1"],
        },
        {
            "name": "v1alpha1",
            "served": True,
            "referenceable": False,
            "deprecated": True,
            "deprecationWarning": deprecation_warning,
            "schema": schema,
            "additionalPrinterColumns": columns["v1alpha1"],
        },
    ]
    return _xrd(
        "v1",
        f"{xr_kind.lower()}s.{GROUP}",
        {
            "scope": "LegacyCluster",
            "group": GROUP,
            "names": _names(xr_kind),
            "claimNames": {**claim_names, "shortNames": [short_name]},
            "defaultCompositionRef": {"name": f"{claim_names['plural']}.{GROUP}"},
            "versions": versions,
        },
    )


def _xrd(version: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"apiextensions.crossplane.io/{version}",
        "kind": "CompositeResourceDefinition",
        "metadata": {"name": name},
        "spec": spec,
    }


def with_scale(xrd: dict[str, Any], scale: dict[str, str]) -> dict[str, Any]:
    """``xrd`` with the scale subresource on every version (specReplicasPath, statusReplicasPath,
    labelSelectorPath), as upstream's CRD has it. Crossplane (v2.3 and later) copies it into the XR's CRD and,
    for a LegacyCluster XRD, the claim's."""
    if not scale:
        return xrd
    out = copy.deepcopy(xrd)
    for version in out["spec"]["versions"]:
        version["subresources"] = {"scale": dict(scale)}
    return out


def namespaced_xrd(claims_xrd: dict[str, Any]) -> dict[str, Any]:
    """The default package's XRD for the kind ``claims_xrd`` defines: the claim's kind and names become the
    namespaced XR's."""
    spec = claims_xrd["spec"]
    names = copy.deepcopy(spec["claimNames"])
    namespaced = {
        "scope": "Namespaced",
        "group": spec["group"],
        "names": names,
        "defaultCompositionRef": copy.deepcopy(spec["defaultCompositionRef"]),
        "versions": copy.deepcopy(spec["versions"]),
    }
    return _xrd("v2", f"{names['plural']}.{spec['group']}", namespaced)
