"""Pipeline step ``GraphStatus``: readiness of what the render step composed, and the DGD status.

It runs after ``render`` and passes every desired composed resource through, marked ready or not
by the health check of its kind against the observed state. The PodCliqueSet is ready iff the
PodCliques and PodCliqueScalingGroups Grove created for it are; the step reads them as required
resources (selected by ``app.kubernetes.io/part-of``), asking for the same ones on every call so
that Crossplane's requirement loop settles after one round.

XR status, re-emitted in full on every run because Crossplane server-side-applies it: ``state``,
``observedGeneration``, the per-component replica map (``services`` for the v1alpha1 shape,
``components`` for v1beta1) and ``restart`` (``functions.kinds.graph.restart_status``). Conditions:
``DynamoGraphReady`` (upstream's DGD ``Ready``, which Crossplane reserves; reason ``waiting_for_checkpoint``
while a ``WaitForCheckpoint`` component's checkpoint is not Ready) and
``TopologyLevelsAvailable`` when a topology constraint is set, and ``Progressing`` (beyond upstream: the
components' rollout, naming each one whose updated replicas lag or whose rollout stalled; docs/kinds/dgd.md
"Honest readiness").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from functions.api.graph import Graph, SpecError
from functions.api.normalise import claimed_object, graph_from_xr
from functions.api.schema_check import check_xr_spec
from functions.contract import (
    Condition,
    DesiredResource,
    ResourceSelector,
    Result,
    StepRequest,
    StepResponse,
    fatal,
)
from functions.kinds.graph.adopted_worker_hash import graph_worker_hash
from functions.kinds.graph.dcd_restart import component_restart_status
from functions.kinds.graph.dcd_status import (
    component_statuses_from_dcds,
    dcd_claim_name,
    dcd_readiness,
    is_dcd,
    rolling_update_phase,
)
from functions.kinds.graph.dcds import current_dcds
from functions.kinds.graph.graph_checkpoints import STATUS_FIELD as CHECKPOINTS_STATUS
from functions.kinds.graph.graph_checkpoints import WAITING_REASON, waiting_message
from functions.kinds.graph.graph_render_step import SPEC_SCHEMA
from functions.kinds.graph.graph_status import (
    PCSG_REQUIREMENT,
    PODCLIQUE_REQUIREMENT,
    ComponentStatus,
    component_statuses,
    grove_requirements,
    has_topology_constraint,
    nothing_running,
    podcliqueset_readiness,
    podcliqueset_rollout,
    xr_status,
)
from functions.kinds.graph.restart_status import RESTARTING, RestartStatus, restart_status
from functions.kinds.graph.rolling_update import IN_PROGRESS
from functions.kinds.graph.status_input import InputError, parse_status_input
from functions.kube.grove import GROVE_API_VERSION
from functions.readiness.conditions import (
    NOT_READY_REASON,
    READY_CONDITION,
    ROLLING_UPDATE_CONDITION,
    ROLLOUT_COMPLETE_REASON,
    ROLLOUT_IN_PROGRESS_REASON,
    graph_ready_condition,
    progressing_condition,
    topology_condition,
    topology_warning,
)
from functions.readiness.health import composed_readiness, ready_once_applied
from functions.readiness.verdicts import MISSING, Readiness


@dataclass(frozen=True)
class Verdict:
    """One composed resource's readiness, under the Kubernetes name upstream reports it by."""

    resource: str  # the composition resource name (key of the desired state)
    name: str  # metadata.name of the object
    readiness: Readiness


def _is_podcliqueset(obj: dict[str, Any]) -> bool:
    return obj.get("apiVersion") == GROVE_API_VERSION and obj.get("kind") == "PodCliqueSet"


def _podcliqueset(desired: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    return next(((n, o) for n, o in sorted(desired.items()) if _is_podcliqueset(o)), None)


def _object_name(resource: str, desired: dict[str, Any], observed: dict[str, Any] | None) -> str:
    for obj in (observed, desired):
        name = ((obj or {}).get("metadata") or {}).get("name")
        if name:
            return str(name)
    return resource


def _verdicts(req: StepRequest, components: tuple[ComponentStatus, ...]) -> list[Verdict]:
    out = []
    for resource, desired in sorted(req.desired_resources.items()):
        observed = req.observed_resources.get(resource)
        if _is_podcliqueset(desired):
            readiness = MISSING if observed is None else podcliqueset_readiness(components, observed)
        elif is_dcd(desired):
            out.append(Verdict(resource, dcd_claim_name(desired), dcd_readiness(observed)))
            continue
        else:
            readiness = composed_readiness(desired, observed)
        out.append(Verdict(resource, _object_name(resource, desired, observed), readiness))
    return out


def _ready_once_applied(desired: dict[str, Any]) -> bool:
    """Whether ``desired`` counts as ready once applied: never the PodCliqueSet or a DCD, judged from what runs."""
    return not _is_podcliqueset(desired) and not is_dcd(desired) and ready_once_applied(desired)


def _desired_resources(desired: dict[str, dict[str, Any]], verdicts: list[Verdict]) -> dict[str, DesiredResource]:
    """The objects with the readiness Crossplane is told: each verdict's, except that while a workload is not
    ready anyway, an object ready once applied is told ready before it is observed. Crossplane's Ready stays
    False for the workload, and a graph's first reconcile records one "not yet ready" event, not one per
    object. With every workload ready, a missing Service is still reported, so Crossplane names it."""
    plain = {v.resource: _ready_once_applied(desired[v.resource]) for v in verdicts}
    workload_waits = any(not v.readiness.ready for v in verdicts if not plain[v.resource])
    return {
        v.resource: DesiredResource(
            desired[v.resource], ready=v.readiness.ready or (workload_waits and plain[v.resource])
        )
        for v in verdicts
    }


def _component_pathway(req: StepRequest, graph: Graph) -> tuple[tuple[ComponentStatus, ...], RestartStatus | None]:
    """Per-component statuses and the next restart status from the DCDs the render step composed."""
    xr = req.observed_composite
    hash8, _ = graph_worker_hash(graph, claimed_object(xr, "DynamoGraphDeployment").spec, xr.get("status") or {})
    components = component_statuses_from_dcds(graph, req.desired_resources, req.observed_resources, hash8)
    current = current_dcds(graph, hash8, req.observed_resources)
    rolling = rolling_update_phase(req.desired_composite) == IN_PROGRESS
    return components, component_restart_status(xr, graph, current, rolling)


def _topology(graph: Graph, req: StepRequest, pcs_resource: str | None) -> tuple[list[Condition], list[Result]]:
    """``TopologyLevelsAvailable`` once the PodCliqueSet exists, when any topology constraint is set."""
    observed_pcs = req.observed_resources.get(pcs_resource) if pcs_resource else None
    if observed_pcs is None or not has_topology_constraint(graph):
        return [], []
    condition = topology_condition(observed_pcs)
    previous = (req.observed_composite.get("status") or {}).get("conditions") or []
    warning = topology_warning(condition, previous)
    return [condition], [warning] if warning else []


def _progressing(rollouts: list[tuple[str, Readiness]], under_way: str | None) -> Condition:
    """``Progressing``; a managed rolling update or a restart ``under_way`` is a rollout in progress even while
    every workload reports its replicas updated (new pods created, not ready yet)."""
    condition = progressing_condition(rollouts)
    if under_way and condition.reason == ROLLOUT_COMPLETE_REASON:
        return Condition(condition.type, "True", ROLLOUT_IN_PROGRESS_REASON, under_way)
    return condition


def graph_status(req: StepRequest) -> StepResponse:
    try:
        settings = parse_status_input(req.input)
    except InputError as err:
        return fatal(str(err), reason="InvalidInput")
    try:
        check_xr_spec(req.observed_composite, SPEC_SCHEMA)
        graph = graph_from_xr(req.observed_composite)
    except SpecError as err:
        return fatal(str(err), reason="InvalidSpec")

    pcs = _podcliqueset(req.desired_resources)
    requirements: dict[str, ResourceSelector] = {}
    components: tuple[ComponentStatus, ...] = ()
    observed_pcs = req.observed_resources.get(pcs[0]) if pcs else None
    if pcs is not None:
        pcs_name = (pcs[1].get("metadata") or {}).get("name") or graph.name
        requirements = grove_requirements(pcs_name, graph.namespace)
        podcliques = req.required.get(PODCLIQUE_REQUIREMENT, [])
        pcsgs = req.required.get(PCSG_REQUIREMENT, [])
        components = component_statuses(graph, pcs_name, podcliques, pcsgs, pcs[1])
        restart = restart_status(req.observed_composite, graph, observed_pcs, components)
    elif any(is_dcd(o) for o in req.desired_resources.values()):
        try:
            components, restart = _component_pathway(req, graph)
        except SpecError as err:
            return fatal(str(err), reason="InvalidSpec")
    else:
        restart = restart_status(req.observed_composite, graph, None, components)

    verdicts = _verdicts(req, components)
    rolling_update = rolling_update_phase(req.desired_composite) == IN_PROGRESS
    waiting = waiting_message(graph, (req.desired_composite.get("status") or {}).get(CHECKPOINTS_STATUS) or {})
    workloads_ready = all(v.readiness.ready for v in verdicts) and not rolling_update and waiting is None
    idle = nothing_running(components) if workloads_ready else None
    all_ready = workloads_ready and idle is None
    generation = (req.observed_composite.get("metadata") or {}).get("generation")
    topology_conditions, results = _topology(graph, req, pcs[0] if pcs else None)
    rollouts = [(c.name, c.readiness) for c in components]
    if observed_pcs is not None:
        rollouts.append(
            (f"PodCliqueSet {observed_pcs['metadata'].get('name', '')}", podcliqueset_rollout(observed_pcs))
        )
    status = xr_status(graph, all_ready, components, generation)
    if restart is not None:
        status["restart"] = restart.as_status()
    restarting = restart is not None and restart.phase == RESTARTING
    under_way = (
        ROLLING_UPDATE_CONDITION.message
        if rolling_update
        else f"Restarting {', '.join(restart.in_progress)}"
        if restart is not None and restarting
        else None
    )
    return StepResponse(
        desired_resources=_desired_resources(req.desired_resources, verdicts),
        composite_status=status,
        # True overrides nothing Crossplane would not derive itself; when not ready the XR's Ready
        # condition is left to Crossplane, whose message lists the unready composed resources.
        composite_ready=True if all_ready else False if idle else None,
        results=results,
        conditions=[
            Condition(READY_CONDITION, "False", WAITING_REASON, waiting)
            if waiting
            else Condition(READY_CONDITION, "False", NOT_READY_REASON, idle)
            if idle
            else ROLLING_UPDATE_CONDITION
            if rolling_update
            else graph_ready_condition((v.name, v.readiness.reason) for v in verdicts if not v.readiness.ready),
            *([_progressing(rollouts, under_way)] if components else []),
            *topology_conditions,
        ],
        requirements=requirements,
        # A restart under way moves on as components finish: look again soon, as while pending.
        ttl_seconds=settings.ready_ttl_seconds if all_ready and not restarting else settings.pending_ttl_seconds,
    )
