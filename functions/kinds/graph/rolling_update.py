"""Managed rolling update of worker components on the component pathway (docs/upstream/operator.md §3.5).

A change to any worker, prefill or decode spec changes the worker hash, so those components get
DCDs of a new name. Upstream remembers the previous hash in a DGD annotation; a composition
function cannot write the DGD, and needs not: the previous DCDs are still among the observed
composed resources (their composition resource names carry the hash), which is what the update
works from. While any exists, for each worker component with desired replicas D:

* maxSurge / maxUnavailable from the component's ``nvidia.com/deployment-rolling-update-max-surge``
  / ``…-max-unavailable`` annotations (default 25% / 25%; surge rounded up, unavailable down; both 0
  means a surge of 1);
* old = max(0, D - newReady - maxUnavailable) replicas stay on the old DCDs, newest first (an old
  DCD never grows), and the new DCD gets min(D, D + maxSurge - old);
* the component is updated once the new DCD has D ready replicas and the old ones none; when every
  component is, the old DCDs are left out of the desired state (Crossplane deletes them).

``status.rollingUpdate`` says ``InProgress`` while old DCDs remain and ``Completed`` once gone, with
the updated components (``updatedServices`` in the v1alpha1 shape, ``updatedComponents`` in v1beta1).
Upstream's ``startTime``/``endTime`` need a clock, which a deterministic function does not have,
and the ``Pending`` phase (hash changed, nothing done yet) has no observable moment here: the first
reconcile after the change already plans replicas. Multinode graphs get no managed update (upstream
neither): their old DCDs are replaced at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from functions.api.graph import Component, Graph
from functions.api.normalise import CROSSPLANE_SPEC_KEYS
from functions.kinds.graph.component_pathway import DCD_KINDS, WORKER_HASH_LABEL, is_worker
from functions.kube.deployment import DEFAULT_ROLLING_UPDATE, MAX_SURGE_ANNOTATION, MAX_UNAVAILABLE_ANNOTATION
from functions.kube.labels import COMPONENT
from functions.readiness.verdicts import count

DEFAULT_BUDGET = DEFAULT_ROLLING_UPDATE
IN_PROGRESS = "InProgress"
COMPLETED = "Completed"


@dataclass(frozen=True)
class ObservedDCD:
    resource: str  # composition resource name
    component: str
    worker_hash: str
    replicas: int
    ready: int
    created: str
    obj: dict[str, Any]


def dcd_counts(obj: dict[str, Any]) -> dict[str, Any]:
    """The replica counts a DCD's status carries (``status.service`` or ``status.component``)."""
    status = obj.get("status") or {}
    counts = status.get("service") or status.get("component") or {}
    return counts if isinstance(counts, dict) else {}


def observed_dcds(observed_resources: dict[str, dict[str, Any]]) -> list[ObservedDCD]:
    out = []
    for resource, obj in sorted(observed_resources.items()):
        if obj.get("kind") not in DCD_KINDS:
            continue
        meta = obj.get("metadata") or {}
        labels = meta.get("labels") or {}
        out.append(
            ObservedDCD(
                resource=resource,
                component=str(labels.get(COMPONENT, "")),
                worker_hash=str(labels.get(WORKER_HASH_LABEL, "")),
                replicas=count(obj.get("spec") or {}, "replicas", default=1),
                ready=count(dcd_counts(obj), "readyReplicas"),
                created=str(meta.get("creationTimestamp") or ""),
                obj=obj,
            )
        )
    return out


def _budget(value: str | None, desired: int, round_up: bool) -> int:
    text = (value or DEFAULT_BUDGET).strip()
    if text.endswith("%") and text[:-1].isdigit():
        share = desired * int(text[:-1]) / 100
        return math.ceil(share) if round_up else math.floor(share)
    return int(text) if text.isdigit() else _budget(DEFAULT_BUDGET, desired, round_up)


def surge_and_unavailable(component: Component, desired: int) -> tuple[int, int]:
    surge = _budget(component.annotations.get(MAX_SURGE_ANNOTATION), desired, round_up=True)
    unavailable = _budget(component.annotations.get(MAX_UNAVAILABLE_ANNOTATION), desired, round_up=False)
    if surge == 0 and unavailable == 0:
        surge = 1
    return surge, unavailable


@dataclass
class RollingPlan:
    new_replicas: dict[str, int] = field(default_factory=dict)  # component name -> replicas of its new DCD
    old: dict[str, tuple[dict[str, Any], int]] = field(default_factory=dict)  # resource -> (observed DCD, replicas)
    updated: list[str] = field(default_factory=list)
    phase: str | None = None  # None: no update under way or finished in this reconcile

    @property
    def in_progress(self) -> bool:
        return self.phase == IN_PROGRESS


def plan_rolling_update(graph: Graph, hash8: str, observed_resources: dict[str, dict[str, Any]]) -> RollingPlan:
    plan = RollingPlan()
    if any(c.multinode for c in graph.components):
        return plan
    dcds = observed_dcds(observed_resources)
    any_old = False
    all_updated = True
    for component in graph.components:
        if not is_worker(component):
            continue
        mine = [d for d in dcds if d.component == component.name]
        old = sorted((d for d in mine if d.worker_hash != hash8), key=lambda d: (d.created, d.resource), reverse=True)
        if not old:
            continue
        any_old = True
        desired = component.replicas
        new_ready = sum(d.ready for d in mine if d.worker_hash == hash8)
        old_ready = sum(d.ready for d in old)
        surge, unavailable = surge_and_unavailable(component, desired)
        keep_old = max(0, desired - new_ready - unavailable)
        plan.new_replicas[component.name] = min(desired, desired + surge - keep_old)
        for dcd in old:
            share = min(keep_old, dcd.replicas)
            keep_old -= share
            plan.old[dcd.resource] = (dcd.obj, share)
        if new_ready >= desired and old_ready == 0:
            plan.updated.append(component.name)
        else:
            all_updated = False
    if not any_old:
        return plan
    if all_updated:
        plan.old = {}
        plan.new_replicas = {}
        plan.phase = COMPLETED
    else:
        plan.phase = IN_PROGRESS
    plan.updated.sort()
    return plan


def _ours(mapping: Any) -> dict[str, Any]:
    """Labels or annotations without the ones Crossplane sets itself."""
    return {k: v for k, v in (mapping or {}).items() if not k.startswith("crossplane.io/")}


def old_dcd(obj: dict[str, Any], replicas: int) -> dict[str, Any]:
    """The desired state of an old DCD: as observed (name, labels, annotations, spec) with the planned replicas."""
    meta = obj.get("metadata") or {}
    spec = {k: v for k, v in (obj.get("spec") or {}).items() if k not in CROSSPLANE_SPEC_KEYS}
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {
            "name": meta.get("name"),
            "labels": _ours(meta.get("labels")),
            "annotations": _ours(meta.get("annotations")),
        },
        "spec": {**spec, "replicas": replicas},
    }


def rolling_update_status(graph: Graph, plan: RollingPlan, previous: dict[str, Any] | None) -> dict[str, Any] | None:
    """``status.rollingUpdate``: this reconcile's phase, else the previous one kept (as upstream keeps it)."""
    if plan.phase is None:
        return previous if isinstance(previous, dict) and previous else None
    key = "updatedServices" if graph.shape == "v1alpha1" else "updatedComponents"
    out: dict[str, Any] = {"phase": plan.phase}
    if plan.updated:
        out[key] = list(plan.updated)
    return out
