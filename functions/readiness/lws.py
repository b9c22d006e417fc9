"""Readiness and replica counts of a multinode DCD's LeaderWorkerSets (docs/upstream/operator.md §3.2, §3.3).

One LWS is ready iff it wants no replicas (``spec.replicas``, default 1), or ``status.readyReplicas >= spec.replicas``
and its first ``Available`` condition is ``True`` (upstream ``IsLeaderWorkerSetReady``). The component is ready iff
every LWS is; an LWS that does not exist (yet) is not ready. Replicas, updated and ready are summed over the LWS
objects; ``componentNames`` are the LWS names sorted as strings; ``availableReplicas`` is absent.

Upstream facts beyond docs/upstream/operator.md (``internal/controller/dynamocomponentdeployment_controller.go``
``combineLWSReplicaStatuses``): the deprecated ``componentName`` is the first LWS's (``{dcd}-0``, also the first
when sorted); with no LWS at all (zero replicas) upstream reports ready and writes no replica status, so callers
should leave the status entry out when ``names`` is empty. The DCD conditions use reasons
``AllLeaderWorkerSetsReady`` / ``SomeLeaderWorkerSetsNotReady`` (messages "All LeaderWorkerSets are ready" /
"Some LeaderWorkerSets are not ready").

Beyond upstream: ``status.updatedReplicas`` below ``spec.replicas`` marks the rollout ``updating`` (not ready even
when enough groups are ready), and ``stalled`` when the LWS condition ``UpdateInProgress`` has been True for more
than 600 s before the newest timestamp in the component's observed LWS statuses. LeaderWorkerSet has no progress
deadline of its own, and a function has no clock: the newest observed timestamp keeps the verdict deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from functions.readiness.verdicts import (
    DEFAULT_PROGRESS_DEADLINE_SECONDS,
    MISSING,
    READY,
    ROLLOUT_COMPLETE,
    ROLLOUT_STALLED,
    ROLLOUT_UPDATING,
    Readiness,
    ReplicaStatus,
    count,
    lagging,
    newest_time,
    not_ready,
    overdue,
    stalled,
    updating,
)

LEADER_WORKER_SET = "LeaderWorkerSet"
ALL_READY_REASON = "AllLeaderWorkerSetsReady"
ALL_READY_MESSAGE = "All LeaderWorkerSets are ready"
NOT_READY_REASON = "SomeLeaderWorkerSetsNotReady"
NOT_READY_MESSAGE = "Some LeaderWorkerSets are not ready"


def _available(status: dict[str, Any]) -> bool:
    """The first ``Available`` condition decides, as upstream's loop returns on it."""
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Available":
            return condition.get("status") == "True"
    return False


def _update_stall(status: dict[str, Any], now: datetime | None) -> str | None:
    for condition in status.get("conditions") or []:
        if condition.get("type") == "UpdateInProgress" and condition.get("status") == "True":
            since = condition.get("lastTransitionTime")
            late = overdue(since, now)
            if late is not None:
                return f"update in progress since {since}, {late}s (deadline {DEFAULT_PROGRESS_DEADLINE_SECONDS}s)"
    return None


def leaderworkerset_readiness(obj: dict[str, Any] | None, now: datetime | None = None) -> Readiness:
    """Readiness of one LeaderWorkerSet; ``now`` is the newest timestamp observed (the stall clock)."""
    if obj is None:
        return MISSING
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    desired = count(spec, "replicas", default=1)
    if desired == 0:
        return READY
    ready, updated = count(status, "readyReplicas"), count(status, "updatedReplicas")
    lag = f"desired={desired}, updated={updated}" if updated < desired else None
    stall = _update_stall(status, now) if lag else None
    if lag and stall:
        return stalled(lag, stall)
    if ready < desired:
        reason = f"desired={desired}, ready={ready}"
        return lagging(reason, lag) if lag else not_ready(reason)
    if lag:
        return updating(lag)
    if not _available(status):
        return not_ready("condition Available is not True")
    return READY


def _name(obj: dict[str, Any] | None, index: int, names: Sequence[str] | None) -> str:
    if names is not None and index < len(names):
        return names[index]
    name = ((obj or {}).get("metadata") or {}).get("name")
    return str(name) if name else f"{LEADER_WORKER_SET} {index}"


def lws_readiness(objs: Sequence[dict[str, Any] | None], names: Sequence[str] | None = None) -> Readiness:
    """Ready iff every LWS is (none at all is ready); the reason lists each one that is not, by name.

    ``objs[i]`` is the observed LWS of replica ``i`` (None when missing); ``names[i]``, when given, its name.
    """
    problems = []
    rollouts = set()
    now = newest_time(objs)
    for index, obj in enumerate(objs):
        verdict = leaderworkerset_readiness(obj, now)
        rollouts.add(verdict.rollout)
        if not verdict.ready:
            problems.append(f"{_name(obj, index, names)}: {verdict.reason}")
    worst = next((r for r in (ROLLOUT_STALLED, ROLLOUT_UPDATING) if r in rollouts), ROLLOUT_COMPLETE)
    return Readiness(False, "; ".join(problems), worst) if problems else READY


def lws_replica_status(objs: Sequence[dict[str, Any] | None], names: Sequence[str]) -> ReplicaStatus:
    """Counts summed over the observed LWS objects (a missing one counts zero); ``names`` are all desired LWS."""
    replicas = updated = ready = 0
    for obj in objs:
        status = (obj or {}).get("status") or {}
        replicas += count(status, "replicas")
        updated += count(status, "updatedReplicas")
        ready += count(status, "readyReplicas")
    return ReplicaStatus(LEADER_WORKER_SET, tuple(sorted(names)), replicas, updated, ready=ready, available=None)
