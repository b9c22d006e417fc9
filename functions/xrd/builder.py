"""The CompositeResourceDefinition shape every Dynamo kind shares.

A LegacyCluster XRD (cluster-scoped XR ``X<Kind>``, namespaced claim ``<Kind>``) serving v1beta1
(referenceable, the storage version) and a deprecated v1alpha1, both with one union schema.
"""

from __future__ import annotations

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
    return {
        "apiVersion": "apiextensions.crossplane.io/v1",
        "kind": "CompositeResourceDefinition",
        "metadata": {"name": f"{xr_kind.lower()}s.{GROUP}"},
        "spec": {
            "scope": "LegacyCluster",
            "group": GROUP,
            "names": _names(xr_kind),
            "claimNames": {**claim_names, "shortNames": [short_name]},
            "defaultCompositionRef": {"name": f"{claim_names['plural']}.{GROUP}"},
            "versions": versions,
        },
    }
