"""Readiness of the Grove objects Grove creates for a PodCliqueSet (docs/upstream/operator.md §3.2).

A PodClique is ready iff its observedGeneration is set and not behind its generation, and either it
wants no replicas or ``spec.replicas == status.readyReplicas == status.updatedReplicas ==
status.replicas``. A PodCliqueScalingGroup is judged the same way on ``availableReplicas``. The
reasons are upstream's, word for word (``CheckPodCliqueReady``/``CheckPCSGReady``).
"""

from __future__ import annotations

from typing import Any

from functions.readiness.verdicts import MISSING, READY, Readiness, ReplicaStatus, count, generation_problem, not_ready

# The label Grove sets on the PodCliques and PodCliqueScalingGroups it creates for a PodCliqueSet.
PART_OF_LABEL = "app.kubernetes.io/part-of"
PODCLIQUE = "PodClique"
PODCLIQUE_SCALING_GROUP = "PodCliqueScalingGroup"


def _rollout(obj: dict[str, Any], counted_as: str, counted: int) -> Readiness:
    problem = generation_problem(obj)
    if problem:
        return not_ready(problem)
    desired = count(obj.get("spec") or {}, "replicas")
    status = obj.get("status") or {}
    updated, replicas = count(status, "updatedReplicas"), count(status, "replicas")
    if desired == 0:
        return READY
    if desired != counted:
        return not_ready(f"desired={desired}, {counted_as}={counted}")
    if desired != updated:
        return not_ready(f"desired={desired}, updated={updated}")
    if replicas != desired:
        return not_ready(f"performing rolling update: desired={desired}, replicas={replicas}")
    return READY


def podclique_readiness(obj: dict[str, Any] | None, name: str) -> tuple[Readiness, ReplicaStatus]:
    """Readiness and replica counts of the PodClique ``name`` (``obj`` None: it does not exist)."""
    if obj is None:
        return MISSING, ReplicaStatus(PODCLIQUE, (name,))
    status = obj.get("status") or {}
    ready = count(status, "readyReplicas")
    counts = ReplicaStatus(PODCLIQUE, (name,), count(status, "replicas"), count(status, "updatedReplicas"), ready=ready)
    return _rollout(obj, "ready", ready), counts


def pcsg_readiness(obj: dict[str, Any] | None, name: str) -> tuple[Readiness, ReplicaStatus]:
    """Readiness and replica counts of the PodCliqueScalingGroup ``name`` (``obj`` None: it does not exist)."""
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
    return _rollout(obj, "available", available), counts


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
