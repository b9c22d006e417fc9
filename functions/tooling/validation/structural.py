"""Structural (OpenAPI) validation of an object against one CRD version, like the API server does it.

``validate_structure`` expects the object already null-pruned and defaulted (``defaults.prepare``) and
reports type, required, enum, pattern, bounds, format, unknown-field (``kubectl --validate=strict``),
list-type set/map and ObjectMeta problems as :class:`Violation` objects, in Kubernetes' wording.

It walks the schema ``jsconvert`` makes of the CRD's: each keyword is checked on its own, as JSON Schema
does (a value of the wrong type also fails its ``enum``; ``minLength`` only applies to strings), and the
paths of the errors are built on the way back up, so a valid object costs no path strings.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from functions.api.echo import cut
from functions.api.schema_check import has_type, json_type

from . import paths
from .formats import check_format
from .jsconvert import convert
from .objectmeta import check_objectmeta, check_type_meta
from .result import Violation

Schema = dict[str, Any]

# Rules the API server treats as blocking: CEL rules are then not run (hasBlockingErr in
# k8s.io/apiextensions-apiserver/pkg/registry/customresource/strategy.go).
BLOCKING_RULES = frozenset({"type", "required", "enum", "maxLength", "maxItems", "maxProperties"})


@dataclass
class _Error:
    """One violation below the node being checked; ``where`` holds its path's parts, innermost first."""

    rule: str
    message: str
    where: list[str | int]

    def path(self) -> list[str | int]:
        return self.where[::-1]


Errors = list[_Error]
Check = Callable[[Any, Any, Schema, Errors], None]


@dataclass(frozen=True)
class StructuralSchema:
    """A CRD version's ``openAPIV3Schema``, converted once (``jsconvert``) and checked by ``validate_structure``."""

    root: Schema


def compile_schema(open_api_v3_schema: dict[str, Any]) -> StructuralSchema:
    return StructuralSchema(convert(open_api_v3_schema, root=True))


def validate_structure(schema: StructuralSchema, obj: Any) -> list[Violation]:
    return [Violation(paths.from_parts(e.path()), e.rule, e.message) for e in _errors(obj, schema.root)]


def has_blocking(violations: list[Violation]) -> bool:
    """True when the API server would skip CEL rules because of these errors."""
    return any(v.rule in BLOCKING_RULES for v in violations)


def _errors(value: Any, schema: Schema) -> Errors:
    errors: Errors = []
    for keyword, want in schema.items():
        check = _CHECKS.get(keyword)
        if check is not None:
            check(want, value, schema, errors)
    return errors


def _below(key: str | int, value: Any, schema: Schema, errors: Errors) -> None:
    for error in _errors(value, schema):
        error.where.append(key)
        errors.append(error)


def _add(errors: Errors, rule: str, message: str, *where: str | int) -> None:
    errors.append(_Error(rule, message, list(where)))


def _show(value: Any) -> str:
    try:
        return cut(json.dumps(value, sort_keys=True))
    except (TypeError, ValueError):
        return cut(repr(value))


def _equal(one: Any, two: Any) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``, containers compared item by item."""
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(_equal(v, two[k]) for k, v in one.items())
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, bool) or isinstance(two, bool):
        return one is two
    return bool(one == two)


def _type(want: str, value: Any, schema: Schema, errors: Errors) -> None:
    if value is None and schema.get("nullable"):
        return
    if not has_type(value, want):
        _add(errors, "type", f"must be of type {want}, got {json_type(value)}")


def _enum(want: list[Any], value: Any, schema: Schema, errors: Errors) -> None:
    if value is None and schema.get("nullable"):
        return
    if not any(_equal(allowed, value) for allowed in want):
        _add(errors, "enum", f"Unsupported value: {_show(value)}: supported values: {', '.join(map(_show, want))}")


def _required(want: list[str], value: Any, schema: Schema, errors: Errors) -> None:
    if isinstance(value, dict):
        for name in want:
            if name not in value:
                _add(errors, "required", "Required value", name)


def _format(want: str, value: Any, schema: Schema, errors: Errors) -> None:
    if isinstance(value, str) and not check_format(want, value):
        _add(errors, "format", f"must be of type {want}: {cut(json.dumps(value))}")


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _pattern(want: str, value: Any, schema: Schema, errors: Errors) -> None:
    if not isinstance(value, str):
        return
    regex = _PATTERNS.get(want) or _PATTERNS.setdefault(want, re.compile(want))
    if not regex.search(value):
        _add(errors, "pattern", f"should match '{schema.get('x-go-pattern', want)}'")


def _string_length(rule: str, too: Callable[[int, int], bool], text: str) -> Check:
    def check(want: int, value: Any, schema: Schema, errors: Errors) -> None:
        if isinstance(value, str) and too(len(value), want):
            _add(errors, rule, text.format(want=want))

    return check


def _bound(rule: str, fails: Callable[[Any, Any], bool], text: str) -> Check:
    def check(want: Any, value: Any, schema: Schema, errors: Errors) -> None:
        if has_type(value, "number") and fails(value, want):
            _add(errors, rule, text.format(want=want))

    return check


def _not_multiple(value: int | float, step: int | float) -> bool:
    if isinstance(step, float):
        quotient = value / step
        if math.isinf(quotient):  # a large value over a step below one: exact arithmetic instead
            return (Fraction(value) / Fraction(step)).denominator != 1
        return int(quotient) != quotient
    return bool(value % step)


def _shorter(size: int, bound: int) -> bool:
    return size < bound


def _longer(size: int, bound: int) -> bool:
    return size > bound


def _size(rule: str, kind: type, too: Callable[[int, int], bool], text: str) -> Check:
    def check(want: int, value: Any, schema: Schema, errors: Errors) -> None:
        if isinstance(value, kind) and too(len(value), want):
            _add(errors, rule, text.format(want=want, got=len(value)))

    return check


def _unique_items(want: bool, value: Any, schema: Schema, errors: Errors) -> None:
    if want and isinstance(value, list) and any(_equal(a, b) for i, a in enumerate(value) for b in value[i + 1 :]):
        _add(errors, "uniqueItems", "shall not have duplicate items")


def _properties(want: dict[str, Schema], value: Any, schema: Schema, errors: Errors) -> None:
    if isinstance(value, dict):
        for name, sub in want.items():
            if name in value:
                _below(name, value[name], sub, errors)


def _additional_properties(want: Schema, value: Any, schema: Schema, errors: Errors) -> None:
    if isinstance(value, dict):
        declared = schema.get("properties") or {}
        for key, item in value.items():
            if key not in declared:
                _below(key, item, want, errors)


def _items(want: Schema, value: Any, schema: Schema, errors: Errors) -> None:
    if isinstance(value, list):
        for index, item in enumerate(value):
            _below(index, item, want, errors)


def _all_of(want: list[Schema], value: Any, schema: Schema, errors: Errors) -> None:
    for branch in want:
        errors.extend(_errors(value, branch))


def _explained(message: str, context: Errors) -> str:
    """A failed ``anyOf``/``oneOf``, explained by its branches' closest error: the shallowest, then the one whose
    message sorts first."""
    if not context:
        return message
    detail = min(context, key=lambda e: (len(e.where), e.message))
    where = paths.from_parts(detail.path())
    return f"{message}: {'' if where == paths.ROOT else where + ': '}{detail.message}"


def _any_of(want: list[Schema], value: Any, schema: Schema, errors: Errors) -> None:
    context: Errors = []
    for branch in want:
        branch_errors = _errors(value, branch)
        if not branch_errors:
            return
        context.extend(branch_errors)
    _add(errors, "anyOf", _explained("must validate at least one schema (anyOf)", context))


def _one_of(want: list[Schema], value: Any, schema: Schema, errors: Errors) -> None:
    context: Errors = []
    valid = 0
    for branch in want:
        branch_errors = _errors(value, branch)
        valid += not branch_errors
        if valid == 0:
            context.extend(branch_errors)
    if valid != 1:
        _add(errors, "oneOf", _explained("must validate one and only one schema (oneOf)", context if not valid else []))


def _not(want: Schema, value: Any, schema: Schema, errors: Errors) -> None:
    if not _errors(value, want):
        _add(errors, "not", "must not validate the schema (not)")


def _int_or_string(want: bool, value: Any, schema: Schema, errors: Errors) -> None:
    if value is None and schema.get("nullable"):
        return
    if not (isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))):
        _add(errors, "type", f"must be of type int-or-string, got {json_type(value)}")


def _closed(want: frozenset[str], value: Any, schema: Schema, errors: Errors) -> None:
    if isinstance(value, dict):
        for key in value:
            if key not in want:
                _add(errors, "unknown field", f'unknown field "{cut(str(key))}"', key)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _list_type(want: tuple[str, tuple[str, ...]], value: Any, schema: Schema, errors: Errors) -> None:
    if not isinstance(value, list) or len(value) < 2:
        return
    kind, keys = want
    seen: set[str] = set()
    for index, item in enumerate(value):
        if kind == "map":
            if item is not None and not isinstance(item, dict):
                _add(errors, "duplicate", "must be an object for an array of list-type map", index)
                return
            shown: Any = {k: (item or {})[k] for k in keys if k in (item or {})}
        else:
            shown = item
        canonical = _canonical(shown)
        if canonical in seen:
            _add(errors, "duplicate", f"Duplicate value: {cut(json.dumps(shown, sort_keys=True))}", index)
        seen.add(canonical)


def _problems(rule: str, problems: Any, errors: Errors) -> None:
    for where, message in problems:
        errors.append(_Error(rule, message, list(reversed(where))))


def _objectmeta(want: str, value: Any, schema: Schema, errors: Errors) -> None:
    _problems("metadata", check_objectmeta(want, value), errors)


def _embedded(want: bool, value: Any, schema: Schema, errors: Errors) -> None:
    _problems("embedded resource", check_type_meta(value), errors)


_CHECKS: dict[str, Check] = {
    "type": _type,
    "enum": _enum,
    "required": _required,
    "format": _format,
    "pattern": _pattern,
    "minLength": _string_length("minLength", _shorter, "should be at least {want} chars long"),
    "maxLength": _string_length("maxLength", _longer, "Too long: may not be longer than {want}"),
    "minimum": _bound("minimum", lambda v, w: v < w, "should be greater than or equal to {want}"),
    "maximum": _bound("maximum", lambda v, w: v > w, "should be less than or equal to {want}"),
    "exclusiveMinimum": _bound("exclusiveMinimum", lambda v, w: v <= w, "should be greater than {want}"),
    "exclusiveMaximum": _bound("exclusiveMaximum", lambda v, w: v >= w, "should be less than {want}"),
    "multipleOf": _bound("multipleOf", _not_multiple, "should be a multiple of {want}"),
    "minItems": _size("minItems", list, _shorter, "should have at least {want} items"),
    "maxItems": _size("maxItems", list, _longer, "Too many: {got}: must have at most {want} items"),
    "uniqueItems": _unique_items,
    "minProperties": _size("minProperties", dict, _shorter, "should have at least {want} properties"),
    "maxProperties": _size("maxProperties", dict, _longer, "Too many: {got}: must have at most {want} properties"),
    "properties": _properties,
    "additionalProperties": _additional_properties,
    "items": _items,
    "allOf": _all_of,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "not": _not,
    "x-int-or-string": _int_or_string,
    "x-closed": _closed,
    "x-list-type": _list_type,
    "x-k8s-objectmeta": _objectmeta,
    "x-k8s-embedded": _embedded,
}
