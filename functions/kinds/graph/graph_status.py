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
from functions.readiness.verdicts import READY, Readiness, ReplicaStatus, not_ready

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


def component_statuses(
    graph: Graph, pcs_name: str, podcliques: list[dict[str, Any]], pcsgs: list[dict[str, Any]]
) -> tuple[ComponentStatus, ...]:
    """Each component's status, in the graph's (name) order, from the observed Grove objects."""
    out = []
    for component in graph.components:
        name = grove_resource_name(pcs_name, component)
        if component.scaling_group:
            readiness, counts = pcsg_readiness(_lookup(pcsgs, name, graph.namespace), name)
        else:
            readiness, counts = podclique_readiness(_lookup(podcliques, name, graph.namespace), name)
        out.append(ComponentStatus(component.name, name, component.scaling_group, readiness, counts))
    return tuple(out)


def podcliqueset_readiness(components: Iterable[ComponentStatus]) -> Readiness:
    """The PodCliqueSet is ready iff every component's PodClique/PodCliqueScalingGroup is."""
    reasons = [f"{c.ref}: {c.readiness.reason}" for c in components if not c.readiness.ready]
    return not_ready("; ".join(reasons)) if reasons else READY


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
