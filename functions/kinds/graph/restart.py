"""``nvidia.com/restartAt`` on the clique templates: which components restart now (docs/upstream/operator.md §3.4).

The render step works out the same next ``status.restart`` the status step will write
(``functions.kinds.graph.restart_status``: from the XR's observed status, ``spec.restart`` and, while a restart
is under way, the Grove objects it reads as required resources), then stamps, as upstream's
``DetermineRestartState`` does:

* the restart id on every component once the restart is Completed, and with Parallel;
* with Sequential, on the components of the order up to the one in progress (those before it have
  restarted and keep the id); on the first when nothing is in progress yet;
* without ``spec.restart`` but with a status kept from an earlier restart, its id on every component;
* nothing new when the status is Superseded or there is none.

A clique not stamped keeps the value it has on the observed PodCliqueSet, so a restart that leaves a
component alone, or the removal of ``spec.restart``, triggers no rollout; a clique that never had
one gets none.

The two steps read the Grove objects separately, so they may now and then see different states and
disagree by one component for one reconcile. That cannot skip a component: one only counts as
restarted once the observed PodCliqueSet carries its new id (``functions.kinds.graph.restart_status``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from functions.api.graph import Graph
from functions.contract import ResourceSelector, StepRequest
from functions.kinds.graph.graph_status import (
    PCSG_REQUIREMENT,
    PODCLIQUE_REQUIREMENT,
    component_statuses,
    grove_requirements,
)
from functions.kinds.graph.restart_status import (
    COMPLETED,
    PENDING,
    SUPERSEDED,
    RestartRequest,
    RestartStatus,
    clique_restart_annotations,
    needs_progress,
    observed_restart_status,
    restart_request,
    restart_status,
)
from functions.kube.labels import RESTART_AT
from functions.kube.naming import clique_names


def restart_targets(
    request: RestartRequest | None, status: RestartStatus | None, components: Iterable[str]
) -> tuple[str, frozenset[str]]:
    """The restart id to stamp and the components that get it (upstream ``DetermineRestartState``)."""
    names = tuple(components)
    if status is None:
        return "", frozenset()
    if request is None:
        return (status.observed_id, frozenset(names)) if status.observed_id else ("", frozenset())
    same_id = status.observed_id == request.id_
    if same_id and status.phase == SUPERSEDED:
        return "", frozenset()
    if (same_id and status.phase == COMPLETED) or request.parallel:
        return request.id_, frozenset(names)
    return request.id_, _sequential_targets(request.sequence(names), status)


def _sequential_targets(order: tuple[str, ...], status: RestartStatus) -> frozenset[str]:
    if not order:
        return frozenset()
    if status.phase == PENDING or not status.in_progress:
        return frozenset(order[:1])
    last = max((i for i, name in enumerate(order) if name in status.in_progress), default=-1)
    return frozenset(order[: last + 1])


def apply_restart_annotations(
    podcliqueset: dict[str, Any],
    graph: Graph,
    restart_id: str,
    targets: frozenset[str],
    observed_podcliqueset: dict[str, Any] | None,
) -> None:
    """Stamp ``restart_id`` on the targets' cliques; every other clique keeps its observed value, if any."""
    existing = clique_restart_annotations(observed_podcliqueset)
    cliques = {c["name"]: c for c in podcliqueset["spec"]["template"]["cliques"]}
    for component in graph.components:
        for name in clique_names(component):
            clique = cliques.get(name)
            value = restart_id if component.name in targets else existing.get(name)
            if clique is None or value is None:
                continue  # not stamped and never was: whatever the user's annotations say
            clique["annotations"] = dict(sorted({**clique.get("annotations", {}), RESTART_AT: value}.items()))


def stamp_restart(
    req: StepRequest,
    graph: Graph,
    podcliqueset: dict[str, Any],
    resource_name: str,
) -> dict[str, ResourceSelector]:
    """Set ``restartAt`` on the desired PodCliqueSet (composed as ``resource_name``); returns the Grove
    objects to read while a restart is under way."""
    xr = req.observed_composite
    observed_podcliqueset = req.observed_resources.get(resource_name)
    spec_restart = restart_request(xr)
    if not needs_progress(spec_restart, observed_restart_status(xr)):
        requirements: dict[str, ResourceSelector] = {}
        statuses = ()
    else:
        pcs_name = podcliqueset["metadata"]["name"]
        requirements = dict(grove_requirements(pcs_name, graph.namespace))
        statuses = component_statuses(
            graph,
            pcs_name,
            req.required.get(PODCLIQUE_REQUIREMENT, []),
            req.required.get(PCSG_REQUIREMENT, []),
        )
    status = restart_status(xr, graph, observed_podcliqueset, statuses)
    restart_id, targets = restart_targets(spec_restart, status, (c.name for c in graph.components))
    apply_restart_annotations(podcliqueset, graph, restart_id, targets, observed_podcliqueset)
    return requirements
