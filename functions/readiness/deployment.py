"""Readiness of an apps/v1 Deployment (docs/upstream/operator.md §3.2), for the component pathway.

Ready iff not paused and either it wants no replicas, or all of: observedGeneration >= generation,
updatedReplicas >= desired, availableReplicas >= desired, replicas == desired and condition
``Available=True``. ``spec.replicas`` defaults to 1, as the API server defaults it.

Beyond upstream: updated replicas below desired (or surplus old replicas) mark the rollout ``updating``, and
the Deployment controller's own deadline (``Progressing=False``, reason ``ProgressDeadlineExceeded``, after
``spec.progressDeadlineSeconds``, 600 s by default) marks it ``stalled``, whatever the counts. ``want``, the
replicas this package composes, wins over an observed ``spec.replicas`` of 0 that has not caught up yet.
"""

from __future__ import annotations

from typing import Any

from functions.readiness.verdicts import (
    MISSING,
    PROGRESS_DEADLINE_EXCEEDED,
    READY,
    Readiness,
    ReplicaStatus,
    count,
    not_ready,
    stalled,
    updating,
)

DEPLOYMENT = "Deployment"


def _available(status: dict[str, Any]) -> bool:
    return any(c.get("type") == "Available" and c.get("status") == "True" for c in status.get("conditions") or [])


def progress_deadline_exceeded(obj: dict[str, Any] | None) -> str | None:
    """The message of the Deployment's ``Progressing`` condition when it reports its deadline exceeded."""
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if (
            c.get("type") == "Progressing"
            and c.get("status") == "False"
            and c.get("reason") == PROGRESS_DEADLINE_EXCEEDED
        ):
            return str(c.get("message") or PROGRESS_DEADLINE_EXCEEDED)
    return None


def deployment_readiness(obj: dict[str, Any] | None, want: int | None = None) -> Readiness:
    if obj is None:
        return MISSING
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    if spec.get("paused") is True:
        return not_ready("deployment is paused")
    desired = count(spec, "replicas", default=1)
    if desired == 0:
        return updating(f"desired={want}, spec.replicas=0") if want else READY
    generation = count(obj.get("metadata") or {}, "generation")
    observed = count(status, "observedGeneration")
    if observed < generation:
        return not_ready(f"spec not yet processed: generation={generation}, observedGeneration={observed}")
    updated, available = count(status, "updatedReplicas"), count(status, "availableReplicas")
    deadline = progress_deadline_exceeded(obj)
    if deadline is not None:
        return stalled(f"desired={desired}, updated={updated}, available={available}", deadline)
    if updated < desired:
        return updating(f"desired={desired}, updated={updated}")
    if available < desired:
        return not_ready(f"desired={desired}, available={available}")
    replicas = count(status, "replicas")
    if replicas != desired:
        return updating(f"performing rolling update: desired={desired}, replicas={replicas}")
    if not _available(status):
        return not_ready("condition Available is not True")
    return READY


def deployment_replica_status(obj: dict[str, Any] | None, name: str) -> ReplicaStatus:
    """All four counts from the Deployment status; zero when it does not exist."""
    status = (obj or {}).get("status") or {}
    return ReplicaStatus(
        DEPLOYMENT,
        (name,),
        count(status, "replicas"),
        count(status, "updatedReplicas"),
        ready=count(status, "readyReplicas"),
        available=count(status, "availableReplicas"),
    )
