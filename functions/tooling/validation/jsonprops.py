"""Normalise an OpenAPI v3 schema the way a Go ``extv1.JSONSchemaProps`` round trip does.

Crossplane parses the XRD's raw ``openAPIV3Schema`` into ``JSONSchemaProps`` and writes the CRD back out
with ``encoding/json``. That drops keys the struct does not know, omits ``omitempty`` fields holding their
zero value (``false``, ``""``, empty lists and maps) and keeps pointer fields even when they hold a zero
value (``x-kubernetes-preserve-unknown-fields: false``, ``maxLength: 0``). Field facts come from
k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/types_jsonschema.go.
"""

from __future__ import annotations

from typing import Any

# Keys whose value is a single sub-schema.
_SCHEMA_KEYS = ("not",)
# Keys whose value is a list of sub-schemas.
_SCHEMA_LIST_KEYS = ("allOf", "oneOf", "anyOf")
# Keys whose value is a map of name -> sub-schema.
_SCHEMA_MAP_KEYS = ("properties", "patternProperties", "definitions")
# Keys whose value is a schema or a bool (JSONSchemaPropsOrBool).
_SCHEMA_OR_BOOL_KEYS = ("additionalProperties", "additionalItems")
# Plain string fields with omitempty: dropped when "".
_STRING_KEYS = ("id", "$schema", "description", "type", "format", "title", "pattern")
# Plain bool fields with omitempty: dropped when false.
_BOOL_KEYS = (
    "exclusiveMaximum",
    "exclusiveMinimum",
    "uniqueItems",
    "nullable",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
)
# Pointer fields: kept whenever present (even zero values).
_POINTER_KEYS = (
    "$ref",
    "default",
    "maximum",
    "minimum",
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "multipleOf",
    "maxProperties",
    "minProperties",
    "example",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
)
# Slice fields with omitempty: dropped when empty.
_LIST_KEYS = ("enum", "required", "x-kubernetes-list-map-keys")

_RULE_STRING_KEYS = ("message", "messageExpression", "fieldPath")


def normalize_schema(raw: Any) -> dict[str, Any]:
    """Return a copy of ``raw`` as Go would re-serialise it after parsing into JSONSchemaProps."""
    if not isinstance(raw, dict):
        return {}
    out: dict[str, Any] = {}
    for key in _STRING_KEYS:
        if raw.get(key):
            out[key] = raw[key]
    for key in _BOOL_KEYS:
        if raw.get(key) is True:
            out[key] = True
    for key in _POINTER_KEYS:
        # A JSON null unmarshals into a nil pointer, which is then omitted.
        if raw.get(key) is not None:
            out[key] = raw[key]
    for key in _LIST_KEYS:
        if raw.get(key):
            out[key] = list(raw[key])
    items = raw.get("items")
    if isinstance(items, list):
        if items:
            out["items"] = [normalize_schema(s) for s in items]
    elif isinstance(items, dict):
        out["items"] = normalize_schema(items)
    for key in _SCHEMA_KEYS:
        if isinstance(raw.get(key), dict):
            out[key] = normalize_schema(raw[key])
    for key in _SCHEMA_LIST_KEYS:
        if raw.get(key):
            out[key] = [normalize_schema(s) for s in raw[key]]
    for key in _SCHEMA_MAP_KEYS:
        if raw.get(key):
            out[key] = {name: normalize_schema(s) for name, s in raw[key].items()}
    for key in _SCHEMA_OR_BOOL_KEYS:
        value = raw.get(key)
        if isinstance(value, bool):
            out[key] = value
        elif isinstance(value, dict):
            out[key] = normalize_schema(value)
    deps = raw.get("dependencies")
    if deps:
        out["dependencies"] = {
            name: list(d) if isinstance(d, list) else normalize_schema(d) for name, d in deps.items()
        }
    docs = raw.get("externalDocs")
    if isinstance(docs, dict):
        out["externalDocs"] = {k: docs[k] for k in ("description", "url") if docs.get(k)}
    rules = raw.get("x-kubernetes-validations")
    if rules:
        out["x-kubernetes-validations"] = [normalize_rule(r) for r in rules]
    return out


def normalize_rule(raw: dict[str, Any]) -> dict[str, Any]:
    """Normalise one ``x-kubernetes-validations`` entry (extv1.ValidationRule)."""
    out: dict[str, Any] = {"rule": raw.get("rule", "")}
    for key in _RULE_STRING_KEYS:
        if raw.get(key):
            out[key] = raw[key]
    if raw.get("reason") is not None:
        out["reason"] = raw["reason"]
    if raw.get("optionalOldSelf") is not None:
        out["optionalOldSelf"] = raw["optionalOldSelf"]
    return out
