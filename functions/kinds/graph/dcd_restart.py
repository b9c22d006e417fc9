"""``spec.restart`` on the component pathway (docs/upstream/operator.md §3.4): the restart id travels in each
DCD's spec.

The state machine is the Grove pathway's (``functions.kinds.graph.restart_status``); only the two questions it
asks of what runs differ:

* what a component's ``nvidia.com/restartAt`` is now: read from its observed DCD (``spec.annotations``
  in the v1alpha1 shape, ``spec.podTemplate.metadata.annotations`` in v1beta1);
* whether a component has finished restarting to an id: its observed DCD carries that id, its
  ``status.observedGeneration`` has caught up with its generation (the DCD's step has seen the id)
  and its ``Available`` condition is True (upstream's rule for DCDs). The DCD's step only reports
  ``Available`` once the observed Deployment or LeaderWorkerSets carry the id themselves
  (``functions.kinds.component.component_step``), so old pods cannot pass for restarted ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from functions.api.graph import Graph
from functions.kinds.graph.dcd_status import dcd_readiness
from functions.kinds.graph.restart_status import (
    SUPERSEDED,
    Progress,
    RestartStatus,
    is_new_request,
    next_restart_status,
    observed_restart_status,
    restart_request,
)
from functions.kube.labels import RESTART_AT
from functions.readiness.verdicts import generation_problem


def dcd_restart_at(dcd: dict[str, Any] | None) -> str | None:
    """The ``nvidia.com/restartAt`` a DCD asks its pods for, if any."""
    spec = (dcd or {}).get("spec") or {}
    for found in (
        spec.get("annotations"),
        (((spec.get("podTemplate") or {}).get("metadata")) or {}).get("annotations"),
    ):
        if isinstance(found, dict) and found.get(RESTART_AT) is not None:
            return str(found[RESTART_AT])
    return None


def dcd_progress(graph: Graph, restart_id: str, current: dict[str, dict[str, Any] | None]) -> Progress:
    """Which of the given components are still restarting to ``restart_id`` (the rule in the module doc)."""
    known = {c.name for c in graph.components}

    def still_restarting(names: Sequence[str]) -> list[str]:
        out = []
        for name in names:
            if name not in known:
                continue  # no longer in the graph: nothing left to restart
            dcd = current.get(name)
            done = (
                dcd is not None
                and dcd_restart_at(dcd) == restart_id
                and generation_problem(dcd) is None
                and dcd_readiness(dcd).ready
            )
            if not done:
                out.append(name)
        return out

    return still_restarting


def component_restart_status(
    xr: dict[str, Any], graph: Graph, current: dict[str, dict[str, Any] | None], rolling_update: bool = False
) -> RestartStatus | None:
    """The next ``status.restart`` from the XR and each component's observed (current) DCD.

    A new restart id while a managed rolling update is under way is ``Superseded`` (upstream), and
    nothing restarts for it.
    """
    request = restart_request(xr)
    previous = observed_restart_status(xr)
    if rolling_update and request is not None and is_new_request(request, previous):
        return RestartStatus(request.id_, SUPERSEDED)
    progress = dcd_progress(graph, request.id_ if request else "", current)
    return next_restart_status(request, previous, (c.name for c in graph.components), progress)
