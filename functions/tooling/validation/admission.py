"""What the API server does to an object on create or update, before it stores it.

``admit`` follows the create path of a custom resource: decode with the request's field validation
(``Strict``: an unknown field fails the request, as ``kubectl apply`` asks by default; ``Warn``: it is
pruned with a warning; ``Ignore``: pruned silently), drop ``null`` values of non-nullable fields, apply
the schema's defaults, then validate (schema and CEL). The admitted object is what the API server would
store, and what a preview must render from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .compiled import compiled_version
from .defaults import prepare
from .engine import select_version, validate
from .prune import prune
from .result import ValidationResult

FieldValidation = Literal["Strict", "Warn", "Ignore"]


@dataclass(frozen=True)
class Admission:
    """The stored form of an admitted object (None when refused), what was pruned, and the verdict."""

    object: dict[str, Any] | None
    pruned: tuple[str, ...]
    result: ValidationResult

    @property
    def ok(self) -> bool:
        return self.result.ok

    @property
    def warnings(self) -> list[str]:
        return [f'unknown field "{path}"' for path in self.pruned]


def admit(
    obj: dict[str, Any],
    crd: dict[str, Any],
    *,
    old: dict[str, Any] | None = None,
    field_validation: FieldValidation = "Strict",
) -> Admission:
    version, _ = select_version(obj, crd)
    if version is None:
        return Admission(None, (), validate(obj, crd, old=old))
    schema = ((version.get("schema") or {}).get("openAPIV3Schema")) or {}
    node = compiled_version((crd.get("metadata") or {}).get("name", ""), str(version.get("name")), schema).node
    dropped: list[str] = []
    if field_validation != "Strict":  # Strict: validate() reports unknown fields as errors, as the API server
        obj, dropped = prune(obj, node)
        old = prune(old, node)[0] if isinstance(old, dict) else None
    result = validate(obj, crd, old=old)
    warned = tuple(dropped) if field_validation == "Warn" else ()
    if not result.ok:
        return Admission(None, warned, result)
    return Admission(prepare(obj, node), warned, result)
