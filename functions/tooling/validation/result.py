"""Result types of the validation engine."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Violation:
    """One reason the API server would reject the object.

    ``path`` is a dot path such as ``spec.services.VllmWorker.replicas`` (list indices as ``[i]``, map keys
    that are not plain identifiers as ``[key]``, the object itself as ``<root>``). ``rule`` names the check
    (``type``, ``required``, ``enum``, ``unknown field``, ``cel: <rule text>``, ...). ``reason`` carries the
    ``reason`` of a CEL rule when the rule sets one (``FieldValueForbidden``, ...), else "".
    """

    path: str
    rule: str
    message: str
    reason: str = field(default="", compare=False)

    def __str__(self) -> str:
        return f"{self.path}: {self.message} ({self.rule})"


@dataclass(frozen=True)
class NotEvaluated:
    """A CEL rule that could not be evaluated offline (e.g. it needs a Kubernetes-only CEL library)."""

    path: str
    rule: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: not evaluated: {self.reason} ({self.rule})"


@dataclass(frozen=True)
class ValidationResult:
    """Violations plus the CEL rules that were skipped because they could not be evaluated."""

    violations: tuple[Violation, ...] = ()
    not_evaluated: tuple[NotEvaluated, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.violations


def sort_violations(items: list[Violation]) -> list[Violation]:
    """Deterministic order: by path, then rule, then message; duplicates removed."""
    return sorted(set(items), key=lambda v: (v.path, v.rule, v.message))


def sort_not_evaluated(items: list[NotEvaluated]) -> list[NotEvaluated]:
    return sorted(set(items), key=lambda n: (n.path, n.rule, n.reason))
