"""The DynamoGraphDeployment status on the Grove pathway (docs/upstream/operator.md §3.1 and §3.2).

Grove creates one PodClique per single-node component, ``{pcs}-0-{lower(name)}``, and one
PodCliqueScalingGroup per multinode component, also ``{pcs}-0-{lower(name)}`` (replica index 0 of
the PodCliqueSet), all labelled ``app.kubernetes.io/part-of: {pcs}``. They are not composed
resources, so the status step asks Crossplane for them as required resources.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from functions.api.graph import Component, Graph
from functions.contract import ResourceSelector
from functions.kube.grove import GROVE_API_VERSION
from functions.readiness.grove import PART_OF_LABEL, pcsg_readiness, podclique_readiness
from functions.readiness.verdicts import (
    READY,
    ROLLOUT_UPDATING,
    Readiness,
    ReplicaStatus,
    count,
    generation_problem,
    newest_time,
    not_ready,
)

PODCLIQUE_REQUIREMENT = "grove-podcliques"
PCSG_REQUIREMENT = "grove-podcliquescalinggroups"
PCS_REPLICA_INDEX = 0  # a DGD's PodCliqueSet has one replica

STATE_PENDING = "pending"
STATE_SUCCESSFUL = "successful"


def grove_resource_name(pcs_name: str, component: Component) -> str:
    """The PodClique (single-node) or PodCliqueScalingGroup (multinode) Grove creates for a component."""
    return f"{pcs_name}-{PCS_REPLICA_INDEX}-{component.key}"


def grove_requirements(pcs_name: str, namespace: str) -> dict[str, ResourceSelector]:
    """Required resources: the PodCliques and PodCliqueScalingGroups of the PodCliqueSet ``pcs_name``."""
    labels = {PART_OF_LABEL: pcs_name}
    return {
        name: ResourceSelector(GROVE_API_VERSION, kind, match_labels=labels, namespace=namespace)
        for name, kind in ((PODCLIQUE_REQUIREMENT, "PodClique"), (PCSG_REQUIREMENT, "PodCliqueScalingGroup"))
    }


@dataclass(frozen=True)
class ComponentStatus:
    """A component's Grove object: its name, readiness and replica counts."""

    name: str  # the service (v1alpha1) or component (v1beta1) name: the key of the status map
    resource_name: str
    multinode: bool
    readiness: Readiness
    replicas: ReplicaStatus

    @property
    def ref(self) -> str:
        """How upstream names the object in a reason: ``podclique/<name>`` or ``pcsg/<name>``."""
        return f"{'pcsg' if self.multinode else 'podclique'}/{self.resource_name}"


def _lookup(objects: Iterable[dict[str, Any]], name: str, namespace: str) -> dict[str, Any] | None:
    for obj in objects:
        meta = obj.get("metadata") or {}
        if meta.get("name") == name and meta.get("namespace", namespace) == namespace:
            return obj
    return None


def template_replicas(podcliqueset: dict[str, Any] | None, component: Component) -> int | None:
    """The replicas the (desired) PodCliqueSet template gives the component's clique or scaling group."""
    template = ((podcliqueset or {}).get("spec") or {}).get("template") or {}
    if component.scaling_group:
        entries = [g for g in template.get("podCliqueScalingGroups") or [] if g.get("name") == component.key]
        return count(entries[0], "replicas", default=1) if entries else None
    cliques = [c for c in template.get("cliques") or [] if c.get("name") == component.key]
    return count(cliques[0].get("spec") or {}, "replicas") if cliques else None


def component_statuses(
    graph: Graph,
    pcs_name: str,
    podcliques: list[dict[str, Any]],
    pcsgs: list[dict[str, Any]],
    podcliqueset: dict[str, Any] | None = None,
) -> tuple[ComponentStatus, ...]:
    """Each component's status, in the graph's (name) order, from the observed Grove objects; ``podcliqueset``
    (the desired one) says what each component wants. A stall is measured against the newest timestamp in the
    observed Grove objects (``functions.readiness.grove``)."""
    now = newest_time([*podcliques, *pcsgs])
    out = []
    for component in graph.components:
        name = grove_resource_name(pcs_name, component)
        want = template_replicas(podcliqueset, component)
        if component.scaling_group:
            readiness, counts = pcsg_readiness(_lookup(pcsgs, name, graph.namespace), name, want, now)
        else:
            readiness, counts = podclique_readiness(_lookup(podcliques, name, graph.namespace), name, want, now)
        out.append(ComponentStatus(component.name, name, component.scaling_group, readiness, counts))
    return tuple(out)


def podcliqueset_rollout(observed: dict[str, Any] | None) -> Readiness:
    """The observed PodCliqueSet itself: Grove has processed its spec and updated every replica. Upstream looks
    only at the PodCliques and scaling groups, which look ready until Grove starts rolling a new spec."""
    if observed is None:
        return READY
    status = observed.get("status") or {}
    # Only a generation behind: until Grove first writes the status, its PodCliques do not exist either.
    if status.get("observedGeneration") is not None and generation_problem(observed):
        return Readiness(False, str(generation_problem(observed)), ROLLOUT_UPDATING)
    replicas, updated = count(status, "replicas"), count(status, "updatedReplicas")
    if updated < replicas:
        return Readiness(False, f"replicas={replicas}, updatedReplicas={updated}", ROLLOUT_UPDATING)
    return READY


def podcliqueset_readiness(components: Iterable[ComponentStatus], observed: dict[str, Any] | None = None) -> Readiness:
    """The PodCliqueSet is ready iff every component's PodClique/PodCliqueScalingGroup is, and the observed
    PodCliqueSet has rolled out its spec."""
    reasons = [f"{c.ref}: {c.readiness.reason}" for c in components if not c.readiness.ready]
    own = podcliqueset_rollout(observed)
    if not own.ready:
        reasons.insert(0, f"podcliqueset: {own.reason}")
    return not_ready("; ".join(reasons)) if reasons else READY


NOTHING_RUNNING = "no component is running: every component has zero ready or available replicas"


def nothing_running(components: Iterable[ComponentStatus]) -> str | None:
    """Why a graph whose every workload reports ready has nothing to serve with, or None: none of its components
    has a ready or available replica (all scaled to zero, or the counts not reported yet). Upstream calls such a
    graph successful; a graph that serves nothing is not (docs/kinds/dgd.md "Honest readiness")."""
    listed = list(components)
    if not listed or any((c.replicas.ready or 0) > 0 or (c.replicas.available or 0) > 0 for c in listed):
        return None
    return NOTHING_RUNNING


def has_topology_constraint(graph: Graph) -> bool:
    """A topology constraint at any level (upstream ``HasAnyTopologyConstraint``); a graph-level one counts
    even without a pack domain (it may name only the topology)."""
    return graph.has_any_topology_constraint


def status_map_key(graph: Graph) -> str:
    """``services`` for a graph written in the v1alpha1 shape, ``components`` for v1beta1."""
    return "services" if graph.shape == "v1alpha1" else "components"


def xr_status(
    graph: Graph, ready: bool, components: Iterable[ComponentStatus], generation: int | None
) -> dict[str, Any]:
    """The XR status the step owns: ``state``, ``observedGeneration`` and the per-component replica map."""
    status: dict[str, Any] = {"state": STATE_SUCCESSFUL if ready else STATE_PENDING}
    if generation is not None:
        status["observedGeneration"] = generation
    v1alpha1 = graph.shape == "v1alpha1"
    entries = {c.name: c.replicas.as_status(with_component_name=v1alpha1) for c in components}
    if entries:
        status[status_map_key(graph)] = entries
    return status
