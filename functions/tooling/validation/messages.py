"""Turn jsonschema errors into :class:`Violation` objects with Kubernetes-style wording."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from jsonschema import ValidationError

from . import paths
from .keywords import json_type
from .result import Violation

# Private keyword -> rule name shown in Violation.rule.
_RULE_NAMES = {
    "x-closed": "unknown field",
    "x-int-or-string": "type",
    "x-list-type": "duplicate",
    "x-k8s-objectmeta": "metadata",
    "x-k8s-embedded": "embedded resource",
}

# Error types the API server treats as blocking: CEL rules are then not run (hasBlockingErr in
# k8s.io/apiextensions-apiserver/pkg/registry/customresource/strategy.go).
BLOCKING_RULES = frozenset({"type", "required", "enum", "maxLength", "maxItems", "maxProperties"})


def _show(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


_MESSAGES: dict[str, Callable[[Any, Any], str]] = {
    "type": lambda want, got: f"must be of type {want}, got {json_type(got)}",
    "enum": lambda want, got: (
        f"Unsupported value: {_show(got)}: supported values: " + ", ".join(_show(v) for v in want)
    ),
    "pattern": lambda want, got: f"should match '{want}'",
    "minLength": lambda want, got: f"should be at least {want} chars long",
    "maxLength": lambda want, got: f"Too long: may not be longer than {want}",
    "minimum": lambda want, got: f"should be greater than or equal to {want}",
    "maximum": lambda want, got: f"should be less than or equal to {want}",
    "exclusiveMinimum": lambda want, got: f"should be greater than {want}",
    "exclusiveMaximum": lambda want, got: f"should be less than {want}",
    "multipleOf": lambda want, got: f"should be a multiple of {want}",
    "minItems": lambda want, got: f"should have at least {want} items",
    "maxItems": lambda want, got: f"Too many: {len(got)}: must have at most {want} items",
    "uniqueItems": lambda want, got: "shall not have duplicate items",
    "minProperties": lambda want, got: f"should have at least {want} properties",
    "maxProperties": lambda want, got: f"Too many: {len(got)}: must have at most {want} properties",
    "oneOf": lambda want, got: "must validate one and only one schema (oneOf)",
    "anyOf": lambda want, got: "must validate at least one schema (anyOf)",
    "allOf": lambda want, got: "must validate all the schemas (allOf)",
    "not": lambda want, got: "must not validate the schema (not)",
}


def _text(error: ValidationError) -> str:
    keyword = str(error.validator)
    build = _MESSAGES.get(keyword)
    want = error.validator_value
    if keyword == "pattern" and isinstance(error.schema, dict):
        want = error.schema.get("x-go-pattern", want)
    message = build(want, error.instance) if build else error.message
    if keyword in ("oneOf", "anyOf") and error.context:
        # The closest failing branch explains the problem best.
        detail = min(error.context, key=lambda e: (len(e.relative_path), e.message))
        where = paths.from_parts(list(detail.relative_path))
        message = f"{message}: {'' if where == paths.ROOT else where + ': '}{_text(detail)}"
    return message


def to_violation(error: ValidationError) -> Violation:
    keyword = str(error.validator)
    return Violation(paths.from_parts(list(error.absolute_path)), _RULE_NAMES.get(keyword, keyword), _text(error))
