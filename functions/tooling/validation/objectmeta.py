"""ObjectMeta / TypeMeta checks for the resource root and ``x-kubernetes-embedded-resource`` nodes.

The API server validates ``metadata`` with the typed ObjectMeta (k8s.io/apimachinery
pkg/api/validation/objectmeta.go): names are DNS-1123 subdomains at the root and path segment names in
embedded resources, label keys are qualified names, label values are at most 63 characters, annotations
are at most 256 KiB in total. Embedded resources also need non-empty ``apiVersion`` and ``kind``
(k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta/validation.go).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from functions.api.echo import cut

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_TOTAL_ANNOTATION_SIZE = 256 * 1024
_SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)

# (field, message) pairs; field is relative to the metadata object ("" = the metadata itself).
Problem = tuple[tuple[str | int, ...], str]


def _string(nullable: bool = True) -> dict[str, Any]:
    return {"type": "string", "nullable": nullable}


def _string_map() -> dict[str, Any]:
    return {"type": "object", "nullable": True, "additionalProperties": _string(False)}


def objectmeta_schema(mode: str, name_schema: dict[str, Any] | None, generate_name_schema: dict[str, Any] | None):
    """A strict schema (in this package's converted dialect, see ``jsconvert``) for ObjectMeta."""
    owner_ref = {
        "type": "object",
        "required": ["apiVersion", "kind", "name", "uid"],
        "properties": {
            "apiVersion": _string(False),
            "kind": _string(False),
            "name": _string(False),
            "uid": _string(False),
            "controller": {"type": "boolean", "nullable": True},
            "blockOwnerDeletion": {"type": "boolean", "nullable": True},
        },
        "x-closed": frozenset({"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"}),
    }
    props: dict[str, Any] = {
        "name": {**_string(), **(name_schema or {})},
        "generateName": {**_string(), **(generate_name_schema or {})},
        "namespace": _string(),
        "selfLink": _string(),
        "uid": _string(),
        "resourceVersion": _string(),
        "generation": {"type": "integer", "nullable": True},
        "creationTimestamp": _string(),
        "deletionTimestamp": _string(),
        "deletionGracePeriodSeconds": {"type": "integer", "nullable": True},
        "labels": _string_map(),
        "annotations": _string_map(),
        "ownerReferences": {"type": "array", "nullable": True, "items": owner_ref},
        "finalizers": {"type": "array", "nullable": True, "items": _string(False)},
        "managedFields": {"type": "array", "nullable": True, "items": {"type": "object"}},
    }
    return {
        "type": "object",
        "nullable": True,
        "properties": props,
        "x-closed": frozenset(props),
        "x-k8s-objectmeta": mode,
    }


def _qualified_name(key: str) -> str | None:
    prefix, sep, name = key.rpartition("/")
    if sep:
        if not prefix:
            return "prefix part must be non-empty"
        if len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix):
            return "prefix part must be a lowercase RFC 1123 subdomain"
    if not name:
        return "name part must be non-empty"
    if len(name) > 63:
        return "name part must be no more than 63 characters"
    if not _QUALIFIED_NAME.match(name):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character"
        )
    return None


def _check_name(mode: str, name: str) -> str | None:
    if mode == "root":
        if len(name) > 253 or not _DNS1123_SUBDOMAIN.match(name):
            return _SUBDOMAIN_MESSAGE
        return None
    if name in (".", ".."):
        return f"may not be '{name}'"
    for bad in ("/", "%"):
        if bad in name:
            return f"may not contain '{bad}'"
    return None


def check_objectmeta(mode: str, meta: Any) -> Iterator[Problem]:
    """Syntax checks the typed ObjectMeta validation applies (beyond the schema's types)."""
    if not isinstance(meta, dict):
        return
    name = meta.get("name")
    if isinstance(name, str) and name:
        problem = _check_name(mode, name)
        if problem:
            yield ("name",), f'Invalid value: "{cut(name)}": {problem}'
    namespace = meta.get("namespace")
    if isinstance(namespace, str) and namespace and not _DNS1123_LABEL.match(namespace):
        yield ("namespace",), f'Invalid value: "{cut(namespace)}": a lowercase RFC 1123 label must be valid'
    labels = meta.get("labels")
    if isinstance(labels, dict):
        for key, value in labels.items():
            problem = _qualified_name(str(key))
            if problem:
                yield ("labels", str(key)), f'Invalid value: "{cut(str(key))}": {problem}'
            if isinstance(value, str) and value and (len(value) > 63 or not _QUALIFIED_NAME.match(value)):
                yield (
                    ("labels", str(key)),
                    f'Invalid value: "{cut(value)}": a valid label value must be 63 '
                    "characters or less, alphanumeric, '-', '_' or '.', starting and ending alphanumeric",
                )
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        total = 0
        for key, value in annotations.items():
            problem = _qualified_name(str(key))
            if problem:
                yield ("annotations", str(key)), f'Invalid value: "{cut(str(key))}": {problem}'
            total += len(str(key)) + (len(value) if isinstance(value, str) else 0)
        if total > _TOTAL_ANNOTATION_SIZE:
            yield ("annotations",), f"Too long: may not be more than {_TOTAL_ANNOTATION_SIZE} bytes"


def check_type_meta(obj: Any) -> Iterator[Problem]:
    """apiVersion/kind values of an embedded resource (their presence is a ``required`` check)."""
    if not isinstance(obj, dict):
        return
    api_version = obj.get("apiVersion")
    if isinstance(api_version, str):
        if not api_version:
            yield ("apiVersion",), "Invalid value: must not be empty"
        elif api_version.count("/") > 1 or api_version.startswith("/") or api_version.endswith("/"):
            yield ("apiVersion",), f'Invalid value: "{cut(api_version)}": unexpected GroupVersion string'
    kind = obj.get("kind")
    if isinstance(kind, str):
        if not kind:
            yield ("kind",), "Invalid value: must not be empty"
        elif len(kind) > 63 or not _DNS1035_LABEL.match(kind.lower()):
            yield (
                ("kind",),
                f'Invalid value: "{cut(kind)}": may have mixed case, but should otherwise be a DNS-1035 label',
            )
