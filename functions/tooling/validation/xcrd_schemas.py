"""Schema fragments and printer columns Crossplane injects into derived CRDs.

Facts from crossplane/v2@v2.2.1/internal/xcrd/schemas.go (BaseProps, CompositeResourceSpecProps,
CompositeResourceClaimSpecProps, CompositeResourceStatusProps, CompositeResourcePrinterColumns,
CompositeResourceClaimPrinterColumns). Every function returns fresh dicts so callers may mutate them.
"""

from __future__ import annotations

from typing import Any

SCOPE_NAMESPACED = "Namespaced"
SCOPE_CLUSTER = "Cluster"
SCOPE_LEGACY_CLUSTER = "LegacyCluster"

Schema = dict[str, Any]


def _string() -> Schema:
    return {"type": "string"}


def _name_ref() -> Schema:
    return {"type": "object", "required": ["name"], "properties": {"name": _string()}}


def _label_selector() -> Schema:
    return {
        "type": "object",
        "required": ["matchLabels"],
        "properties": {"matchLabels": {"type": "object", "additionalProperties": _string()}},
    }


def _enum(values: list[str], default: str | None = None) -> Schema:
    schema: Schema = {"type": "string", "enum": list(values)}
    if default is not None:
        schema["default"] = default
    return schema


def base_props() -> Schema:
    """The root schema every Crossplane CRD version starts from (BaseProps)."""
    return {
        "type": "object",
        "required": ["spec"],
        "properties": {
            "apiVersion": _string(),
            "kind": _string(),
            "metadata": {"type": "object"},
            "spec": {"type": "object", "properties": {}},
            "status": {"type": "object", "properties": {}},
        },
    }


def _resource_refs(with_namespace: bool) -> Schema:
    props = {"apiVersion": _string(), "name": _string(), "kind": _string()}
    if with_namespace:
        props["namespace"] = _string()
    return {
        "type": "array",
        "items": {"type": "object", "properties": props, "required": ["apiVersion", "kind"]},
        # Controllers replace the whole array.
        "x-kubernetes-list-type": "atomic",
    }


def composite_spec_props(scope: str, default_update_policy: str | None) -> dict[str, Schema]:
    """CompositeResourceSpecProps: machinery fields under the XR's spec (or spec.crossplane)."""
    props: dict[str, Schema] = {
        "compositionRef": _name_ref(),
        "compositionSelector": _label_selector(),
        "compositionRevisionRef": _name_ref(),
        "compositionRevisionSelector": _label_selector(),
        "compositionUpdatePolicy": _enum(["Automatic", "Manual"], default_update_policy),
        # Namespaced XRs may not reference composed resources in other namespaces.
        "resourceRefs": _resource_refs(with_namespace=scope != SCOPE_NAMESPACED),
    }
    if scope == SCOPE_LEGACY_CLUSTER:
        props["claimRef"] = {
            "type": "object",
            "required": ["apiVersion", "kind", "namespace", "name"],
            "properties": {
                "apiVersion": _string(),
                "kind": _string(),
                "namespace": _string(),
                "name": _string(),
            },
        }
        props["writeConnectionSecretToRef"] = {
            "type": "object",
            "required": ["name", "namespace"],
            "properties": {"name": _string(), "namespace": _string()},
        }
        return props
    # Modern XRs nest the machinery under spec.crossplane.
    return {
        "crossplane": {
            "type": "object",
            "description": "Configures how Crossplane will reconcile this composite resource",
            "properties": props,
        }
    }


def claim_spec_props(default_delete_policy: str | None) -> dict[str, Schema]:
    """CompositeResourceClaimSpecProps: machinery fields under a claim's spec."""
    return {
        "compositionRef": _name_ref(),
        "compositionSelector": _label_selector(),
        "compositionRevisionRef": _name_ref(),
        "compositionRevisionSelector": _label_selector(),
        "compositionUpdatePolicy": _enum(["Automatic", "Manual"]),
        "compositeDeletePolicy": _enum(["Background", "Foreground"], default_delete_policy),
        "resourceRef": {
            "type": "object",
            "required": ["apiVersion", "kind", "name"],
            "properties": {"apiVersion": _string(), "kind": _string(), "name": _string()},
        },
        "writeConnectionSecretToRef": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": _string()},
        },
    }


def composite_status_props(scope: str) -> dict[str, Schema]:
    """CompositeResourceStatusProps: status.conditions (+ legacy connection/claim fields)."""
    props: dict[str, Schema] = {
        "conditions": {
            "description": "Conditions of the resource.",
            "type": "array",
            "x-kubernetes-list-map-keys": ["type"],
            "x-kubernetes-list-type": "map",
            "items": {
                "type": "object",
                "required": ["lastTransitionTime", "reason", "status", "type"],
                "properties": {
                    "lastTransitionTime": {"type": "string", "format": "date-time"},
                    "message": _string(),
                    "reason": _string(),
                    "status": _string(),
                    "type": _string(),
                    "observedGeneration": {"type": "integer", "format": "int64"},
                },
            },
        }
    }
    if scope == SCOPE_LEGACY_CLUSTER:
        props["connectionDetails"] = {
            "type": "object",
            "properties": {"lastPublishedTime": {"type": "string", "format": "date-time"}},
        }
        props["claimConditionTypes"] = {
            "type": "array",
            "x-kubernetes-list-type": "set",
            "items": _string(),
        }
    return props


def _column(name: str, type_: str, json_path: str, priority: int = 0) -> dict[str, Any]:
    col: dict[str, Any] = {"name": name, "type": type_, "jsonPath": json_path}
    if priority:
        col["priority"] = priority
    return col


def composite_printer_columns(scope: str) -> list[dict[str, Any]]:
    """CompositeResourcePrinterColumns: SYNCED, READY, COMPOSITION, COMPOSITIONREVISION, AGE."""
    prefix = ".spec." if scope == SCOPE_LEGACY_CLUSTER else ".spec.crossplane."
    return [
        _column("SYNCED", "string", ".status.conditions[?(@.type=='Synced')].status"),
        _column("READY", "string", ".status.conditions[?(@.type=='Ready')].status"),
        _column("COMPOSITION", "string", prefix + "compositionRef.name"),
        _column("COMPOSITIONREVISION", "string", prefix + "compositionRevisionRef.name", priority=1),
        _column("AGE", "date", ".metadata.creationTimestamp"),
    ]


def claim_printer_columns() -> list[dict[str, Any]]:
    """CompositeResourceClaimPrinterColumns: SYNCED, READY, CONNECTION-SECRET, AGE."""
    return [
        _column("SYNCED", "string", ".status.conditions[?(@.type=='Synced')].status"),
        _column("READY", "string", ".status.conditions[?(@.type=='Ready')].status"),
        _column("CONNECTION-SECRET", "string", ".spec.writeConnectionSecretToRef.name"),
        _column("AGE", "date", ".metadata.creationTimestamp"),
    ]
