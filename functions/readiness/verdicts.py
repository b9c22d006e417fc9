"""Readiness verdicts and per-component replica counts (docs/upstream/operator.md §3.2), and the rollout
state of a workload: complete, updating (updated replicas lag the desired ones) or stalled past a deadline."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

NOT_FOUND = "resource not found"  # upstream's reason for an object that does not exist (yet)

# Rollout states, worst last.
ROLLOUT_COMPLETE = "complete"
ROLLOUT_UPDATING = "updating"
ROLLOUT_STALLED = "stalled"
# The reason a controller (Deployment, Grove with a progress deadline) gives a rollout past its deadline.
PROGRESS_DEADLINE_EXCEEDED = "ProgressDeadlineExceeded"
# The deadline this package applies where no controller reports one: the Deployment default
# (spec.progressDeadlineSeconds).
DEFAULT_PROGRESS_DEADLINE_SECONDS = 600


@dataclass(frozen=True)
class Readiness:
    """Whether an object is ready and, when it is not, why (upstream's ``IsReady() (bool, string)``), and how
    its rollout stands. A rollout that is not complete is never ready."""

    ready: bool
    reason: str = ""
    rollout: str = ROLLOUT_COMPLETE
    progress: str = ""  # how the rollout lags or stalled, when ``reason`` (upstream's) says something else


def lagging(reason: str, progress: str) -> Readiness:
    """Not ready for ``reason``, while updated replicas also lag (``progress``)."""
    return Readiness(False, reason, ROLLOUT_UPDATING, progress)


READY = Readiness(True)
MISSING = Readiness(False, NOT_FOUND)


def not_ready(reason: str) -> Readiness:
    return Readiness(False, reason)


def updating(reason: str) -> Readiness:
    """Not ready because updated replicas lag the desired ones."""
    return Readiness(False, reason, ROLLOUT_UPDATING)


def stalled(lag: str, stall: str) -> Readiness:
    """Not ready because the rollout (lagging by ``lag``) made no progress within its deadline (``stall``)."""
    return Readiness(False, f"{lag}; rollout stalled: {stall}", ROLLOUT_STALLED, f"{lag}; {stall}")


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp of a status (``2026-01-15T10:00:00Z``); None when absent or malformed."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def status_times(obj: dict[str, Any] | None) -> list[datetime]:
    """Every timestamp an object's status records: its conditions' transition and update times, and the start
    and end of an update in progress (Grove's ``updateProgress``/``rollingUpdateProgress``)."""
    status = (obj or {}).get("status") or {}
    values: list[Any] = []
    for condition in status.get("conditions") or []:
        if isinstance(condition, dict):
            values += [condition.get("lastTransitionTime"), condition.get("lastUpdateTime")]
    for key in ("updateProgress", "rollingUpdateProgress"):
        progress = status.get(key)
        if isinstance(progress, dict):
            values += [progress.get("updateStartedAt"), progress.get("updateEndedAt")]
    return [t for t in map(parse_time, values) if t is not None]


def newest_time(objs: Iterable[dict[str, Any] | None]) -> datetime | None:
    """The newest timestamp in the objects' statuses: the clock against which a derived deadline is measured."""
    return max((t for obj in objs for t in status_times(obj)), default=None)


def overdue(since: Any, now: datetime | None, deadline_seconds: int = DEFAULT_PROGRESS_DEADLINE_SECONDS) -> int | None:
    """Seconds from ``since`` to ``now`` when more than the deadline, else None (also when either is unknown)."""
    start = parse_time(since)
    if start is None or now is None:
        return None
    elapsed = int((now - start).total_seconds())
    return elapsed if elapsed > deadline_seconds else None


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
