"""The render step's component pathway: a DGD's XDynamoComponentDeployments, with restart and rolling update.

Ties the pure parts together against what Crossplane observed: the DCDs of the current worker hash
(``functions.kinds.graph.component_pathway``), the old ones a managed rolling update keeps for now
(``functions.kinds.graph.rolling_update``) and the restart id each DCD carries
(``functions.kinds.graph.dcd_restart``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from functions.api.graph import Component, Graph, ResolvedCheckpoint, SpecError
from functions.api.operator_config import OperatorConfig
from functions.contract import StepRequest
from functions.kinds.component.component_step import dcd_graph, dcd_shape, render_component
from functions.kinds.graph.component_pathway import (
    dcd_resource_name,
    dcd_spec,
    generated_backend_framework,
    render_component_deployment,
)
from functions.kinds.graph.dcd_restart import component_restart_status, dcd_restart_at
from functions.kinds.graph.restart import restart_targets
from functions.kinds.graph.restart_status import restart_request
from functions.kinds.graph.rolling_update import old_dcd, plan_rolling_update, rolling_update_status
from functions.kube.checkpoint_restore import apply_candidate_metadata
from functions.kube.labels import COMPONENT
from functions.kube.naming import component_path

ROLLING_UPDATE_STATUS = "rollingUpdate"


@dataclass(frozen=True)
class RenderedComponents:
    desired: dict[str, dict[str, Any]]
    status: dict[str, Any] | None  # status fields the render step owns (rollingUpdate)
    warnings: tuple[str, ...] = ()  # DCDs whose own step will refuse them
    nested: tuple[dict[str, Any], ...] = ()  # what the DCDs' own steps will compose (their names and labels)


def dcd_rendered(
    dcd: dict[str, Any], operator_config: OperatorConfig, namespace: str | None = None
) -> tuple[dict[str, dict[str, Any]], str | None]:
    """What the DCD's own step will compose, or what it would refuse the DCD for (upstream's render-time
    checks).

    The DGD still composes a refused DCD, as upstream creates a DCD that then fails to reconcile; the DGD's
    step reports it too, so the reason shows on the graph and not only on the nested composite.
    A namespaced DCD is composed without a namespace (Crossplane gives it the DGD's): ``namespace`` is
    the one it will have.
    """
    if namespace is not None:
        dcd = {**dcd, "metadata": {**(dcd.get("metadata") or {}), "namespace": namespace}}
    try:
        graph, name = dcd_graph(dcd)
        return render_component(graph, name, operator_config, (dcd.get("metadata") or {}).get("labels") or {}), None
    except SpecError as err:
        return {}, str(err)


def check_multinode(graph: Graph, operator_config: OperatorConfig) -> None:
    """Multinode components need LeaderWorkerSet (with Volcano) when Grove is not used
    (docs/upstream/operator.md §1.1)."""
    if operator_config.lws_enabled:
        return
    for component in graph.components:
        if component.multinode:
            raise SpecError(
                f"{component_path(graph, component)}.multinode: no multinode orchestrator available: "
                "this graph does not use Grove, and LeaderWorkerSet needs EnvironmentConfig/dynamo-platform "
                "data.orchestrators.lws.enabled and .volcanoScheduler.enabled not false"
            )


def with_checkpoint_ref(spec: dict[str, Any], shape: str, checkpoint: ResolvedCheckpoint) -> dict[str, Any]:
    """Upstream ``applyCheckpointStartupPolicy``: once the DynamoCheckpoint exists, the DCD restores from it by
    name (``identity`` and ``job`` cleared), and under ``Immediate`` its pod template carries the candidate
    metadata."""
    if not checkpoint.exists:
        return spec
    holder = spec if shape == "v1alpha1" else spec.setdefault("experimental", {})
    block = {k: v for k, v in (holder.get("checkpoint") or {}).items() if k not in ("identity", "job", "mode")}
    block.update({"enabled": True, "checkpointRef": checkpoint.name, "startupPolicy": checkpoint.startup_policy})
    holder["checkpoint"] = dict(sorted(block.items()))
    if checkpoint.startup_policy == "Immediate":
        metadata = (
            spec.setdefault("extraPodMetadata", {})
            if shape == "v1alpha1"
            else spec.setdefault("podTemplate", {}).setdefault("metadata", {})
        )
        apply_candidate_metadata(metadata, checkpoint)
    return spec


def kept_backend_framework(observed: dict[str, Any] | None, backend: str | None) -> str | None:
    """The ``backendFramework`` a component's DCD gets: ``backend``, or what its observed DCD holds, which is
    immutable (a DCD composed before the package set it keeps none)."""
    if observed is None:
        return backend
    kept = (observed.get("spec") or {}).get("backendFramework")
    return str(kept) if kept else None


def current_dcds(graph: Graph, hash8: str, observed: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any] | None]:
    """Component name -> its observed DCD of the current worker hash (None when not created yet)."""
    return {c.name: observed.get(dcd_resource_name(c, hash8)) for c in graph.components}


def _previous_restart_at(component: Component, current: dict[str, Any] | None, observed: dict[str, Any]) -> str | None:
    """The restart id the component's pods run with: from its current DCD, else from an older one."""
    value = dcd_restart_at(current)
    if value is not None:
        return value
    for _, obj in sorted(observed.items()):
        if ((obj.get("metadata") or {}).get("labels") or {}).get(COMPONENT) == component.name:
            value = dcd_restart_at(obj)
            if value is not None:
                return value
    return None


def render_components(
    req: StepRequest, graph: Graph, operator_config: OperatorConfig, raw: dict[str, dict[str, Any]]
) -> RenderedComponents:
    """Composed resource name -> object: one DCD per component, plus the old DCDs a rolling update keeps.

    ``raw`` is each component's spec as the DGD holds it (``raw_components``); ``graph.worker_hash`` is
    set from it by the render step."""
    check_multinode(graph, operator_config)
    xr = req.observed_composite
    observed = req.observed_resources
    assert graph.worker_hash is not None, "the render step sets the worker hash"
    hash8 = graph.worker_hash
    plan = plan_rolling_update(graph, hash8, observed)
    current = current_dcds(graph, hash8, observed)
    restart = component_restart_status(xr, graph, current, plan.in_progress)
    restart_id, targets = restart_targets(restart_request(xr), restart, (c.name for c in graph.components))
    backend = generated_backend_framework(graph)
    desired: dict[str, dict[str, Any]] = {}
    for component in graph.components:
        restart_at = (
            restart_id
            if component.name in targets
            else _previous_restart_at(component, current[component.name], observed)
        )
        replicas = plan.new_replicas.get(component.name, component.replicas)
        checkpoint = graph.checkpoint_of(component.name)
        if checkpoint is not None and checkpoint.waiting:
            # WaitForCheckpoint: no pods until the checkpoint is Ready (docs/upstream/checkpoint-gms-dgdr-model.md §1.6)
            replicas = 0
        spec = dcd_spec(
            graph, component, raw.get(component.name, {}), hash8, replicas, restart_at,
            kept_backend_framework(current[component.name], backend),
        )  # fmt: skip
        if checkpoint is not None:
            spec = with_checkpoint_ref(spec, dcd_shape(spec), checkpoint)
        desired[dcd_resource_name(component, hash8)] = render_component_deployment(graph, component, hash8, spec)
    warnings, nested = [], []
    for component in graph.components:
        composed, problem = dcd_rendered(
            desired[dcd_resource_name(component, hash8)],
            operator_config,
            graph.namespace if graph.namespaced else None,
        )
        nested.extend(composed.values())
        if problem:
            warnings.append(
                f"{component_path(graph, component)}: its DynamoComponentDeployment cannot render: {problem}"
            )
    for resource, (obj, replicas) in plan.old.items():
        desired[resource] = old_dcd(obj, replicas)
    previous = ((xr.get("status") or {}).get(ROLLING_UPDATE_STATUS)) or None
    rolling = rolling_update_status(graph, plan, previous)
    return RenderedComponents(
        desired, {ROLLING_UPDATE_STATUS: rolling} if rolling else None, tuple(warnings), tuple(nested)
    )
