"""Validate an object against a CRD: pick the version, default, check structure, then run CEL rules.

Order and gating follow the API server's create/update path
(k8s.io/apiextensions-apiserver/pkg/registry/customresource/strategy.go): decode with null pruning and
defaulting, OpenAPI schema validation, embedded ObjectMeta and list-type checks, then the CEL rules -
which the API server skips (with one summary error) when the object already has blocking errors
(type, required, enum, too long, too many).
"""

from __future__ import annotations

from typing import Any

from .cel import evaluate_rules
from .compiled import compiled_version
from .defaults import prepare
from .paths import ROOT
from .result import ValidationResult, Violation, sort_not_evaluated, sort_violations
from .structural import has_blocking, validate_structure

UNKNOWN_FIELD = "unknown field"
CEL_SKIPPED = (
    "some validation rules were not checked because the object was invalid; "
    "correct the existing errors to complete validation"
)


def select_version(obj: Any, crd: dict[str, Any]) -> tuple[dict[str, Any] | None, list[Violation]]:
    """The served CRD version matching ``obj``'s apiVersion/kind, or the violations explaining why not."""
    if not isinstance(obj, dict):
        return None, [Violation(ROOT, "type", "must be of type object")]
    spec = crd.get("spec") or {}
    crd_name = (crd.get("metadata") or {}).get("name", "")
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    problems = []
    if not isinstance(api_version, str) or not api_version:
        problems.append(Violation("apiVersion", "required", "Required value"))
    if not isinstance(kind, str) or not kind:
        problems.append(Violation("kind", "required", "Required value"))
    if problems:
        return None, problems
    group, _, version = api_version.rpartition("/")
    if group != spec.get("group", ""):
        message = f'group "{group}" does not match CRD {crd_name} (group "{spec.get("group", "")}")'
        problems.append(Violation("apiVersion", "version", message))
    want_kind = (spec.get("names") or {}).get("kind", "")
    if kind != want_kind:
        problems.append(Violation("kind", "kind", f'kind "{kind}" does not match CRD {crd_name} (kind "{want_kind}")'))
    if problems:
        return None, problems
    for candidate in spec.get("versions") or []:
        if candidate.get("name") == version:
            if candidate.get("served") is not True:
                break
            return candidate, []
    return None, [Violation("apiVersion", "version", f'version "{version}" is not served by CRD {crd_name}')]


def validate(
    obj: dict[str, Any],
    crd: dict[str, Any],
    *,
    old: dict[str, Any] | None = None,
    cel_on_invalid: bool = False,
) -> ValidationResult:
    """Validate ``obj`` (a create, or an update of ``old``) against ``crd``.

    ``cel_on_invalid=True`` runs CEL rules even when blocking structural errors exist (the API server
    does not).
    """
    version, problems = select_version(obj, crd)
    if version is None:
        return ValidationResult(tuple(sort_violations(problems)))
    schema = ((version.get("schema") or {}).get("openAPIV3Schema")) or {}
    crd_name = (crd.get("metadata") or {}).get("name", "")
    compiled = compiled_version(crd_name, str(version.get("name")), schema)
    prepared = prepare(obj, compiled.node)
    old_prepared = prepare(old, compiled.node) if isinstance(old, dict) else None
    violations = validate_structure(compiled.structural, prepared)
    unknown = [v for v in violations if v.rule == UNKNOWN_FIELD]
    if unknown:
        # Strict field validation (kubectl apply's default) fails the request while decoding it: the API
        # server reports the unknown fields alone, before any schema or CEL check.
        return ValidationResult(tuple(sort_violations(unknown)))
    not_evaluated = []
    if has_blocking(violations) and not cel_on_invalid:
        if compiled.node.cel_below:
            violations.append(Violation(ROOT, "cel", CEL_SKIPPED))
    else:
        cel_violations, not_evaluated = evaluate_rules(compiled.node, prepared, old_prepared)
        violations.extend(cel_violations)
    return ValidationResult(tuple(sort_violations(violations)), tuple(sort_not_evaluated(not_evaluated)))


def validate_object(obj: dict[str, Any], crd: dict[str, Any], *, old: dict[str, Any] | None = None) -> list[Violation]:
    """The violations of :func:`validate` (CEL rules that could not be evaluated are not included)."""
    return list(validate(obj, crd, old=old).violations)
