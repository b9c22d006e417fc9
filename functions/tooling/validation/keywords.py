"""The jsonschema validator class for converted CRD schemas (see ``jsconvert``).

Draft 7 with: ``type``/``enum`` that honour ``nullable``, ``required`` reported at the missing field's
path, ``format`` checked with ``formats.check_format`` and private keywords for int-or-string, unknown
fields, list-type set/map uniqueness and ObjectMeta/TypeMeta checks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from jsonschema import Draft7Validator, ValidationError, validators

from functions.api.schema_check import json_type

from .formats import check_format
from .objectmeta import check_objectmeta, check_type_meta

_DRAFT7 = Draft7Validator.VALIDATORS
Errors = Iterator[ValidationError]


def _nullable(keyword: str):
    base = _DRAFT7[keyword]

    def check(validator: Any, value: Any, instance: Any, schema: dict[str, Any]) -> Errors:
        if instance is None and schema.get("nullable"):
            return
        yield from base(validator, value, instance, schema) or ()

    return check


def _required(validator: Any, required: list[str], instance: Any, schema: dict[str, Any]) -> Errors:
    if not isinstance(instance, dict):
        return
    for name in required:
        if name not in instance:
            yield ValidationError("Required value", path=[name])


def _format(validator: Any, fmt: str, instance: Any, schema: dict[str, Any]) -> Errors:
    if isinstance(instance, str) and not check_format(fmt, instance):
        yield ValidationError(f"must be of type {fmt}: {json.dumps(instance)}")


def _int_or_string(validator: Any, _: Any, instance: Any, schema: dict[str, Any]) -> Errors:
    if instance is None and schema.get("nullable"):
        return
    if isinstance(instance, str) or (isinstance(instance, int) and not isinstance(instance, bool)):
        return
    yield ValidationError(f"must be of type int-or-string, got {json_type(instance)}")


def _closed(validator: Any, allowed: frozenset[str], instance: Any, schema: dict[str, Any]) -> Errors:
    if not isinstance(instance, dict):
        return
    for key in instance:
        if key not in allowed:
            yield ValidationError(f'unknown field "{key}"', path=[key])


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _list_type(validator: Any, spec: tuple[str, tuple[str, ...]], instance: Any, schema: dict[str, Any]) -> Errors:
    if not isinstance(instance, list) or len(instance) < 2:
        return
    kind, keys = spec
    seen: set[str] = set()
    for i, item in enumerate(instance):
        if kind == "map":
            if item is not None and not isinstance(item, dict):
                yield ValidationError("must be an object for an array of list-type map", path=[i])
                return
            fields = {k: (item or {})[k] for k in keys if k in (item or {})}
            canon, shown = _canonical(fields), fields
        else:
            canon, shown = _canonical(item), item
        if canon in seen:
            yield ValidationError(f"Duplicate value: {json.dumps(shown, sort_keys=True)}", path=[i])
        seen.add(canon)


def _problems(problems: Iterator[tuple[tuple[str | int, ...], str]]) -> Errors:
    for path, message in problems:
        yield ValidationError(message, path=list(path))


def _objectmeta(validator: Any, mode: str, instance: Any, schema: dict[str, Any]) -> Errors:
    yield from _problems(check_objectmeta(mode, instance))


def _embedded(validator: Any, _: Any, instance: Any, schema: dict[str, Any]) -> Errors:
    yield from _problems(check_type_meta(instance))


VALIDATOR = validators.extend(
    Draft7Validator,
    validators={
        "type": _nullable("type"),
        "enum": _nullable("enum"),
        "required": _required,
        "format": _format,
        "x-int-or-string": _int_or_string,
        "x-closed": _closed,
        "x-list-type": _list_type,
        "x-k8s-objectmeta": _objectmeta,
        "x-k8s-embedded": _embedded,
    },
)
