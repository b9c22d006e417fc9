"""Structural (OpenAPI) validation of an object against one CRD version, like the API server does it.

``validate_structure`` expects the object already null-pruned and defaulted (``defaults.prepare``) and
reports type, required, enum, pattern, bounds, format, unknown-field (``kubectl --validate=strict``),
list-type set/map and ObjectMeta problems as :class:`Violation` objects.
"""

from __future__ import annotations

from typing import Any

from jsonschema.protocols import Validator

from .jsconvert import convert
from .keywords import VALIDATOR
from .messages import BLOCKING_RULES, to_violation
from .result import Violation


def compile_schema(open_api_v3_schema: dict[str, Any]) -> Validator:
    """Build the jsonschema validator for a CRD version's ``openAPIV3Schema`` (the resource root)."""
    return VALIDATOR(convert(open_api_v3_schema, root=True))


def validate_structure(validator: Validator, obj: Any) -> list[Violation]:
    return [to_violation(error) for error in validator.iter_errors(obj)]


def has_blocking(violations: list[Violation]) -> bool:
    """True when the API server would skip CEL rules because of these errors."""
    return any(v.rule in BLOCKING_RULES for v in violations)
