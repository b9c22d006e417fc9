"""OpenAPI (structural schema) generation from the pydantic API models, and version unions.

``openapi_for_model`` turns a model class into the schema node Kubernetes expects: types,
enums, patterns, bounds, required, defaults and the ``x-kubernetes-*`` extensions carried
by the markers in ``functions.api.fields``. ``union_schemas`` merges two versions' schemas
into one that accepts both, reporting every place where they disagree.
"""

from __future__ import annotations

import copy
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from functions.api.fields import SCHEMA_REQUIRED, Format, IntOrString, Kube, PreserveUnknown

KubeTypes = dict[str, dict[str, Any]]

_SCALARS = {str: "string", int: "integer", bool: "boolean", float: "number"}


def openapi_for_model(model: type[BaseModel], kube: KubeTypes) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, info in model.model_fields.items():
        key = info.alias or name
        properties[key] = _field_schema(info, kube)
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if info.is_required() or extra.get(SCHEMA_REQUIRED):
            required.append(key)
    node: dict[str, Any] = {"type": "object", "properties": dict(sorted(properties.items()))}
    if required:
        node["required"] = sorted(required)
    extra = model.model_config.get("json_schema_extra")
    if isinstance(extra, dict):
        node.update(copy.deepcopy(extra))
    return node


def _field_schema(info: FieldInfo, kube: KubeTypes) -> dict[str, Any]:
    node = _annotated_schema(info.annotation, list(info.metadata), kube)
    default = info.default
    if default is not PydanticUndefined and default is not None:
        node["default"] = default
    if isinstance(info.json_schema_extra, dict):
        node.update({k: copy.deepcopy(v) for k, v in info.json_schema_extra.items() if k != SCHEMA_REQUIRED})
    return node


def _annotation_schema(annotation: Any, kube: KubeTypes) -> dict[str, Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        base, *metadata = typing.get_args(annotation)
        return _annotated_schema(base, metadata, kube)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) != 1:
            raise TypeError(f"unions other than Optional need a marker: {annotation}")
        return _annotation_schema(members[0], kube)
    if origin is Literal:
        values = list(typing.get_args(annotation))
        return {"type": _SCALARS[type(values[0])], "enum": values}
    if origin is list:
        (item,) = typing.get_args(annotation)
        return {"type": "array", "items": _annotation_schema(item, kube)}
    if origin is dict:
        _, value = typing.get_args(annotation)
        if value is Any:
            return {"type": "object"}
        return {"type": "object", "additionalProperties": _annotation_schema(value, kube)}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return openapi_for_model(annotation, kube)
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    raise TypeError(f"no OpenAPI mapping for {annotation!r}")


def _annotated_schema(base: Any, metadata: list[Any], kube: KubeTypes) -> dict[str, Any]:
    for marker in metadata:
        if isinstance(marker, Kube):
            if marker.name not in kube:
                raise KeyError(f"embedded Kubernetes type {marker.name} is not in this version's catalog")
            return copy.deepcopy(kube[marker.name])
        if isinstance(marker, PreserveUnknown):
            node: dict[str, Any] = {"x-kubernetes-preserve-unknown-fields": True}
            return {"type": "object", **node} if marker.typed_object else node
        if isinstance(marker, IntOrString):
            node = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
            if marker.pattern:
                node["pattern"] = marker.pattern
            return node
    node = _annotation_schema(base, kube)
    for marker in metadata:
        if isinstance(marker, Format):
            node["format"] = marker.value
        elif isinstance(marker, FieldInfo):
            _apply_constraints(node, marker.metadata)
    _apply_constraints(node, metadata)
    return node


def _apply_constraints(node: dict[str, Any], metadata: list[Any]) -> None:
    kind = node.get("type")
    for item in metadata:
        if isinstance(item, annotated_types.Ge):
            node["minimum"] = item.ge
        elif isinstance(item, annotated_types.Le):
            node["maximum"] = item.le
        elif isinstance(item, annotated_types.MinLen):
            node[{"array": "minItems", "object": "minProperties"}.get(kind, "minLength")] = item.min_length
        elif isinstance(item, annotated_types.MaxLen):
            node[{"array": "maxItems", "object": "maxProperties"}.get(kind, "maxLength")] = item.max_length
        elif getattr(item, "pattern", None) is not None:
            node["pattern"] = item.pattern


# --- Unions of two versions -------------------------------------------------------------


@dataclass
class UnionReport:
    """Where two versions' schemas differ, and how the union resolved it."""

    differences: list[str] = field(default_factory=list)

    def note(self, path: str, what: str) -> None:
        self.differences.append(f"{path}: {what}")


def union_schemas(a: dict[str, Any], b: dict[str, Any], report: UnionReport, path: str = "") -> dict[str, Any]:
    """A schema accepting everything ``a`` or ``b`` accepts (nodes absent on one side are copied)."""
    if a == b:
        return copy.deepcopy(a)
    if a.get("type") != b.get("type"):
        raise ValueError(f"{path or '<root>'}: type {a.get('type')} vs {b.get('type')} cannot be unioned")
    merged: dict[str, Any] = {}
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            if key in ("properties", "additionalProperties", "items"):
                merged[key] = copy.deepcopy(a.get(key, b.get(key)))
                continue
            if key in ("required", "x-kubernetes-validations", "default"):
                report.note(path, f"{key} only in one version, dropped from the union")
                continue
            merged[key] = copy.deepcopy(a.get(key, b.get(key)))
            report.note(path, f"{key} only in one version, kept")
            continue
        va, vb = a[key], b[key]
        if va == vb:
            merged[key] = copy.deepcopy(va)
        elif key == "properties":
            merged[key] = {
                name: (
                    union_schemas(va[name], vb[name], report, f"{path}.{name}".lstrip("."))
                    if name in va and name in vb
                    else copy.deepcopy(va.get(name, vb.get(name)))
                )
                for name in sorted(set(va) | set(vb))
            }
        elif key in ("items", "additionalProperties"):
            step = "[]" if key == "items" else ".*"
            merged[key] = union_schemas(va, vb, report, path + step)
        elif key == "required":
            common = sorted(set(va) & set(vb))
            if common:
                merged[key] = common
            report.note(path, f"required differs ({sorted(va)} vs {sorted(vb)}), union requires {common}")
        elif key == "enum":
            merged[key] = list(dict.fromkeys([*va, *vb]))
            report.note(path, f"enum differs ({va} vs {vb}), union accepts both")
        elif key == "x-kubernetes-validations":
            merged[key] = [r for r in va if r in vb]
            report.note(path, "CEL rules differ, union keeps the common ones")
        else:
            raise ValueError(f"{path or '<root>'}: {key} {va!r} vs {vb!r} cannot be unioned")
    return merged
