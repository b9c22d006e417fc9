"""Readiness of the Grove objects Grove creates for a PodCliqueSet (docs/upstream/operator.md §3.2).

A PodClique is ready iff its observedGeneration is set and not behind its generation, and either it
wants no replicas or ``spec.replicas == status.readyReplicas == status.updatedReplicas ==
status.replicas``. A PodCliqueScalingGroup is judged the same way on ``availableReplicas``. The
reasons are upstream's, word for word (``CheckPodCliqueReady``/``CheckPCSGReady``).

Beyond upstream (the rollout, ``docs/kinds/dgd.md`` "Honest readiness"):

* an object that wants no replicas while the PodCliqueSet template wants some (Grove has not propagated
  the template yet) is not ready, rather than ready with nothing running;
* updated replicas that lag (``updatedReplicas != spec.replicas``, or surplus ``status.replicas``) mark the
  rollout ``updating``; it is ``stalled`` when a condition carries reason ``ProgressDeadlineExceeded`` (a Grove
  with progress deadlines reports it) or when the update started more than 600 s before the newest timestamp
  in the observed Grove state. The start is ``updateProgress.updateStartedAt`` (``rollingUpdateProgress`` on
  older scaling groups), else the transition time of a condition with reason ``UpdateInProgress`` (Grove sets
  ``MinAvailableBreached`` Unknown with it for the duration of an update). Grove reports no stall of its own
  before progress deadlines, and a function has no clock: the newest observed timestamp keeps the verdict
  deterministic for the same input.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from functions.readiness.verdicts import (
    DEFAULT_PROGRESS_DEADLINE_SECONDS,
    MISSING,
    PROGRESS_DEADLINE_EXCEEDED,
    READY,
    Readiness,
    ReplicaStatus,
    count,
    generation_problem,
    lagging,
    not_ready,
    overdue,
    stalled,
    updating,
)

# The label Grove sets on the PodCliques and PodCliqueScalingGroups it creates for a PodCliqueSet.
PART_OF_LABEL = "app.kubernetes.io/part-of"
PODCLIQUE = "PodClique"
PODCLIQUE_SCALING_GROUP = "PodCliqueScalingGroup"
UPDATE_IN_PROGRESS_REASON = "UpdateInProgress"  # Grove's condition reason while an object is being updated


def _conditions(status: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in status.get("conditions") or [] if isinstance(c, dict)]


def _update_started(status: dict[str, Any]) -> Any:
    """When the object's current (or last) update started, as Grove recorded it; None when it did not."""
    for key in ("updateProgress", "rollingUpdateProgress"):
        progress = status.get(key)
        if isinstance(progress, dict) and progress.get("updateStartedAt"):
            return progress["updateStartedAt"]
    return next(
        (c.get("lastTransitionTime") for c in _conditions(status) if c.get("reason") == UPDATE_IN_PROGRESS_REASON),
        None,
    )


def rollout_stall(obj: dict[str, Any], now: datetime | None) -> str | None:
    """Why the object's rollout counts as stalled, or None; ``now`` is the newest observed timestamp."""
    status = obj.get("status") or {}
    for c in _conditions(status):
        if c.get("reason") == PROGRESS_DEADLINE_EXCEEDED:
            message = f": {c['message']}" if c.get("message") else ""
            return f"condition {c.get('type')} reports {PROGRESS_DEADLINE_EXCEEDED}{message}"
    started = _update_started(status)
    late = overdue(started, now)
    if late is None:
        return None
    return f"update started at {started} not done {late}s later (deadline {DEFAULT_PROGRESS_DEADLINE_SECONDS}s)"


def _lag(desired: int, updated: int, replicas: int) -> str | None:
    """Upstream's reason when updated or total replicas differ from the desired ones, else None."""
    if desired != updated:
        return f"desired={desired}, updated={updated}"
    if replicas != desired:
        return f"performing rolling update: desired={desired}, replicas={replicas}"
    return None


def _rollout(
    obj: dict[str, Any], counted_as: str, counted: int, template_replicas: int | None, now: datetime | None
) -> Readiness:
    problem = generation_problem(obj)
    if problem:
        return not_ready(problem)
    desired = count(obj.get("spec") or {}, "replicas")
    status = obj.get("status") or {}
    updated, replicas = count(status, "updatedReplicas"), count(status, "replicas")
    if desired == 0:
        if template_replicas:
            return updating(f"desired={template_replicas} in the PodCliqueSet, {obj.get('kind')} wants 0")
        return READY
    lag = _lag(desired, updated, replicas)
    stall = rollout_stall(obj, now) if lag else None
    if lag and stall:
        return stalled(lag, stall)
    if desired != counted:
        reason = f"desired={desired}, {counted_as}={counted}"
        return lagging(reason, lag) if lag else not_ready(reason)
    if lag:
        return updating(lag)
    return READY


def podclique_readiness(
    obj: dict[str, Any] | None, name: str, template_replicas: int | None = None, now: datetime | None = None
) -> tuple[Readiness, ReplicaStatus]:
    """Readiness and replica counts of the PodClique ``name`` (``obj`` None: it does not exist).

    ``template_replicas``: what the PodCliqueSet template wants; ``now``: the newest observed timestamp."""
    if obj is None:
        return MISSING, ReplicaStatus(PODCLIQUE, (name,))
    status = obj.get("status") or {}
    ready = count(status, "readyReplicas")
    counts = ReplicaStatus(PODCLIQUE, (name,), count(status, "replicas"), count(status, "updatedReplicas"), ready=ready)
    return _rollout(obj, "ready", ready, template_replicas, now), counts


def pcsg_readiness(
    obj: dict[str, Any] | None, name: str, template_replicas: int | None = None, now: datetime | None = None
) -> tuple[Readiness, ReplicaStatus]:
    """Readiness and replica counts of the PodCliqueScalingGroup ``name`` (``obj`` None: it does not exist);
    ``template_replicas`` and ``now`` as for ``podclique_readiness``."""
    if obj is None:
        return MISSING, ReplicaStatus(PODCLIQUE_SCALING_GROUP, (name,))
    status = obj.get("status") or {}
    available = count(status, "availableReplicas")
    counts = ReplicaStatus(
        PODCLIQUE_SCALING_GROUP,
        (name,),
        count(status, "replicas"),
        count(status, "updatedReplicas"),
        available=available,
    )
    return _rollout(obj, "available", available, template_replicas, now), counts


def grove_children(obj: dict[str, Any]) -> list[tuple[str, str]]:
    """(kind, name) of the PodCliques and PodCliqueScalingGroups Grove creates for a PodCliqueSet at replica 0
    (docs/upstream/target-apis.md §1.5): ``<pcs>-0-<clique>`` for a clique outside any scaling group,
    ``<pcs>-0-<group>`` for a group; nothing for any other object."""
    if obj.get("kind") != "PodCliqueSet" or not str(obj.get("apiVersion", "")).startswith("grove.io/"):
        return []
    pcs = str((obj.get("metadata") or {}).get("name", ""))
    template = (obj.get("spec") or {}).get("template") or {}
    groups = template.get("podCliqueScalingGroups") or []
    grouped = {name for g in groups for name in g.get("cliqueNames") or []}
    out = [(PODCLIQUE, f"{pcs}-0-{c['name']}") for c in template.get("cliques") or [] if c["name"] not in grouped]
    out += [(PODCLIQUE_SCALING_GROUP, f"{pcs}-0-{g['name']}") for g in groups]
    return out
