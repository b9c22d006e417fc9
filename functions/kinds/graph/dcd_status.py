"""The DynamoGraphDeployment status on the component pathway (docs/upstream/operator.md §3.1, §3.2).

Each component's XDynamoComponentDeployment reports its own replica counts (``status.service`` or
``status.component``, written by its step from the Deployment or LeaderWorkerSets) and its
``Available`` condition. A DCD is ready iff ``Available`` is True (upstream's DGD rule), and beyond upstream
only if its status is not stale (``status.observedGeneration`` behind ``metadata.generation``: its pipeline
has not run on the new spec; or its conditions still those of an earlier generation: ``_conditions_behind``),
its ``Progressing`` condition reports no rollout under way or stalled, and, wanting replicas, it counts at
least one ready or available. During a managed rolling update the old DCDs' counts are added (replicas, ready
and available; updated counts only the new DCD) and the names of both are listed.
"""

from __future__ import annotations

from typing import Any

from functions.api.graph import Graph
from functions.api.normalise import COMPOSED_NAME_ANNOTATION
from functions.kinds.graph.component_pathway import DCD_KINDS, WORKER_HASH_LABEL
from functions.kinds.graph.graph_status import ComponentStatus
from functions.kinds.graph.rolling_update import dcd_counts
from functions.kube.labels import COMPONENT
from functions.readiness.conditions import condition, rollout_of
from functions.readiness.deployment import DEPLOYMENT
from functions.readiness.lws import LEADER_WORKER_SET
from functions.readiness.verdicts import (
    MISSING,
    READY,
    ROLLOUT_COMPLETE,
    ROLLOUT_UPDATING,
    Readiness,
    ReplicaStatus,
    count,
    generation_problem,
    not_ready,
)


def _conditions_behind(obj: dict[str, Any]) -> str | None:
    """Whether the DCD's conditions predate its spec, though its status fields do not.

    Crossplane writes a composite's status in two steps: while composing, the function's status fields (our
    ``observedGeneration`` among them) with the conditions the XR had *before* this reconcile; once composed,
    every condition anew, ``Synced`` stamped with the generation it was composed at. In between, a DCD whose
    spec just changed (a new restart id) shows the new ``observedGeneration`` beside the old ``Available=True``.
    ``Synced``'s ``observedGeneration`` tells the two apart."""
    synced = condition(obj, "Synced") or {}
    observed = synced.get("observedGeneration")
    generation = count(obj.get("metadata") or {}, "generation")
    if isinstance(observed, int) and observed < generation:
        return f"conditions not yet written for generation {generation} (Synced at {observed})"
    return None


def _stale(obj: dict[str, Any]) -> str | None:
    """``generation_problem``, once the DCD's step has written a status (before that, Available decides), and
    conditions left from an earlier generation."""
    observed = (obj.get("status") or {}).get("observedGeneration")
    return (generation_problem(obj) if isinstance(observed, int) else None) or _conditions_behind(obj)


def _nothing_running(obj: dict[str, Any]) -> str | None:
    desired = count(obj.get("spec") or {}, "replicas", default=1)
    counts = dcd_counts(obj)
    if desired > 0 and counts and max(count(counts, "readyReplicas"), count(counts, "availableReplicas")) == 0:
        return f"desired={desired}, none ready"
    return None


def dcd_readiness(obj: dict[str, Any] | None) -> Readiness:
    """Ready iff the DCD's ``Available`` condition is True and nothing above contradicts it; otherwise why."""
    if obj is None:
        return MISSING
    stale = _stale(obj)
    if stale:
        return Readiness(False, stale, ROLLOUT_UPDATING)
    available = condition(obj, "Available")
    rollout = rollout_of(obj)
    if available is None:
        return not_ready("condition Available is not set yet")
    progressing = condition(obj, "Progressing") or {}
    progress = str(progressing.get("message") or progressing.get("reason") or "") if rollout else ""
    if available.get("status") != "True":
        message = available.get("message") or available.get("reason") or "condition Available is not True"
        return Readiness(False, str(message), rollout or ROLLOUT_COMPLETE, progress)
    if rollout is not None:
        return Readiness(False, progress, rollout, progress)
    nothing = _nothing_running(obj)
    return not_ready(nothing) if nothing else READY


def is_dcd(obj: dict[str, Any]) -> bool:
    return obj.get("kind") in DCD_KINDS


def dcd_claim_name(obj: dict[str, Any]) -> str:
    """The DCD's own name (the claim name it stands for), else the XR's."""
    meta = obj.get("metadata") or {}
    return str((meta.get("annotations") or {}).get(COMPOSED_NAME_ANNOTATION) or meta.get("name") or "")


def _names(observed: dict[str, Any] | None, desired: dict[str, Any]) -> list[str]:
    names = dcd_counts(observed or {}).get("componentNames")
    if isinstance(names, list) and names:
        return [str(n) for n in names]
    return [dcd_claim_name(desired)]


def component_statuses_from_dcds(
    graph: Graph,
    desired: dict[str, dict[str, Any]],
    observed: dict[str, dict[str, Any]],
    current_hash: str,
) -> tuple[ComponentStatus, ...]:
    """Each component's status, in the graph's order, summed over its DCDs (current and old)."""
    out = []
    for component in graph.components:
        mine = sorted(
            (r, o)
            for r, o in desired.items()
            if is_dcd(o) and ((o.get("metadata") or {}).get("labels") or {}).get(COMPONENT) == component.name
        )
        kind = LEADER_WORKER_SET if component.multinode else DEPLOYMENT
        replicas = updated = ready = available = 0
        names: list[str] = []  # the current DCD's first (upstream's deprecated componentName), then the old ones
        old_names: list[str] = []
        readiness = READY
        for resource, want in mine:
            got = observed.get(resource)
            counts = dcd_counts(got or {})
            current = ((want.get("metadata") or {}).get("labels") or {}).get(WORKER_HASH_LABEL, current_hash)
            replicas += count(counts, "replicas")
            ready += count(counts, "readyReplicas")
            available += count(counts, "availableReplicas")
            if current == current_hash:
                updated += count(counts, "updatedReplicas")
                verdict = dcd_readiness(got)
                if not verdict.ready:
                    readiness = verdict
                names += _names(got, want)
            else:
                old_names += _names(got, want)
        if not mine:
            readiness = MISSING
        counts_status = ReplicaStatus(
            kind,
            tuple(dict.fromkeys([*names, *sorted(old_names)])),
            replicas,
            updated,
            ready=ready,
            available=None if component.multinode else available,
        )
        resource_name = names[0] if names else component.key
        out.append(ComponentStatus(component.name, resource_name, component.multinode, readiness, counts_status))
    return tuple(out)


def rolling_update_phase(desired_composite: dict[str, Any]) -> str | None:
    rolling = (desired_composite.get("status") or {}).get("rollingUpdate")
    return str(rolling.get("phase")) if isinstance(rolling, dict) and rolling.get("phase") else None
