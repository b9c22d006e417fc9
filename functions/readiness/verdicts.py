"""Readiness verdicts and per-component replica counts (docs/upstream/operator.md §3.2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NOT_FOUND = "resource not found"  # upstream's reason for an object that does not exist (yet)


@dataclass(frozen=True)
class Readiness:
    """Whether an object is ready and, when it is not, why (upstream's ``IsReady() (bool, string)``)."""

    ready: bool
    reason: str = ""


READY = Readiness(True)
MISSING = Readiness(False, NOT_FOUND)


def not_ready(reason: str) -> Readiness:
    return Readiness(False, reason)


@dataclass(frozen=True)
class ReplicaStatus:
    """One entry of ``status.services`` (v1alpha1) or ``status.components`` (v1beta1).

    ``ready`` is nil for a PodCliqueScalingGroup and ``available`` is nil for a PodClique, as upstream.
    """

    kind: str  # PodClique | PodCliqueScalingGroup | Deployment | LeaderWorkerSet
    names: tuple[str, ...]
    replicas: int = 0
    updated: int = 0
    ready: int | None = None
    available: int | None = None

    def as_status(self, with_component_name: bool) -> dict[str, Any]:
        """The status entry; ``componentName`` (deprecated) exists only in the v1alpha1 ``services`` map."""
        out: dict[str, Any] = {"componentKind": self.kind}
        if with_component_name:
            out["componentName"] = self.names[0] if self.names else ""
        out["componentNames"] = list(self.names)
        out["replicas"] = self.replicas
        out["updatedReplicas"] = self.updated
        if self.ready is not None:
            out["readyReplicas"] = self.ready
        if self.available is not None:
            out["availableReplicas"] = self.available
        return out


def count(fields: dict[str, Any], key: str, default: int = 0) -> int:
    """An integer field of a spec or status; absent (Go's zero value) gives ``default``."""
    value = fields.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return int(value)


def generation_problem(obj: dict[str, Any]) -> str | None:
    """Upstream's observedGeneration checks: nil, or behind metadata.generation."""
    observed = (obj.get("status") or {}).get("observedGeneration")
    generation = count(obj.get("metadata") or {}, "generation")
    if observed is None:
        return "observedGeneration is nil"
    if int(observed) < generation:
        return f"spec not yet processed: generation={generation}, observedGeneration={int(observed)}"
    return None
