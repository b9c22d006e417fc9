"""Readiness of an apps/v1 Deployment (docs/upstream/operator.md §3.2), for the component pathway.

Ready iff not paused and either it wants no replicas, or all of: observedGeneration >= generation,
updatedReplicas >= desired, availableReplicas >= desired, replicas == desired and condition
``Available=True``. ``spec.replicas`` defaults to 1, as the API server defaults it.
"""

from __future__ import annotations

from typing import Any

from functions.readiness.verdicts import MISSING, READY, Readiness, ReplicaStatus, count, not_ready

DEPLOYMENT = "Deployment"


def _available(status: dict[str, Any]) -> bool:
    return any(c.get("type") == "Available" and c.get("status") == "True" for c in status.get("conditions") or [])


def deployment_readiness(obj: dict[str, Any] | None) -> Readiness:
    if obj is None:
        return MISSING
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    if spec.get("paused") is True:
        return not_ready("deployment is paused")
    desired = count(spec, "replicas", default=1)
    if desired == 0:
        return READY
    generation = count(obj.get("metadata") or {}, "generation")
    observed = count(status, "observedGeneration")
    if observed < generation:
        return not_ready(f"spec not yet processed: generation={generation}, observedGeneration={observed}")
    updated, available = count(status, "updatedReplicas"), count(status, "availableReplicas")
    if updated < desired:
        return not_ready(f"desired={desired}, updated={updated}")
    if available < desired:
        return not_ready(f"desired={desired}, available={available}")
    replicas = count(status, "replicas")
    if replicas != desired:
        return not_ready(f"performing rolling update: desired={desired}, replicas={replicas}")
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
