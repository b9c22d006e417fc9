"""Pipeline step ``GraphDeployment``: a DynamoGraphDeployment XR becomes Grove and Kubernetes objects."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from functions.api.echo import shown
from functions.api.graph import Graph, SpecError
from functions.api.normalise import graph_claim, graph_from_graph_claim
from functions.api.operator_config import (
    OPERATOR_CONFIG_REQUIREMENT,
    OperatorConfig,
    OperatorConfigError,
    read_operator_config,
)
from functions.api.pod_defaults import spec_with_pod_spec_defaults
from functions.api.schema_check import check_xr_spec, spec_schema_file
from functions.contract import (
    PREVIOUS_COMPOSITE_CONTEXT_KEY,
    READY_TTL_SECONDS,
    DesiredResource,
    ResourceSelector,
    Result,
    StepRequest,
    StepResponse,
    fatal,
)
from functions.kinds.component.webhook_rules import (
    Before,
    before_update,
    check_annotations,
    check_costly_rules,
    check_main_images,
    deprecation_condition,
    graph_main_images,
)
from functions.kinds.graph.adopted_worker_hash import STATUS_FIELD as ADOPTED_HASH_FIELD
from functions.kinds.graph.adopted_worker_hash import graph_worker_hash
from functions.kinds.graph.component_pathway import DCD_KINDS, raw_components
from functions.kinds.graph.dcds import render_components
from functions.kinds.graph.graph_checkpoints import STATUS_FIELD as CHECKPOINTS_STATUS
from functions.kinds.graph.graph_checkpoints import resolve_checkpoints
from functions.kinds.graph.origin import STATUS_FIELD, resolve_origin_version, with_origin_version
from functions.kinds.graph.restart import stamp_restart
from functions.kinds.scaling.scaling_adapters import (
    pin_observed_adapters,
    render_scaling_adapters,
    with_adapter_replicas,
)
from functions.kube import backends
from functions.kube.admissible import check_component_name, check_names
from functions.kube.failover import ENGINES, check_failover, engine_name
from functions.kube.gms_graph import check_gms, check_inter_pod, render_claim_templates
from functions.kube.grove import render_podcliqueset
from functions.kube.labels import COMPONENT
from functions.kube.mesh import render_mesh
from functions.kube.mpi_secret import needs_ssh_secret, ssh_secret, ssh_secret_requirement
from functions.kube.naming import MAX_COMBINED_GROVE_NAME, component_path, grove_name_budget, podcliqueset_name
from functions.kube.podspec import PodContext
from functions.kube.rbac import render_discovery_rbac
from functions.kube.services import (
    model_service_name,
    needs_service,
    render_component_service,
    render_model_service,
)
from functions.kube.storage import (
    PVC_REQUIREMENT_PREFIX,
    check_existing,
    graph_pvcs,
    pvc_resource_name,
    render_pvc,
    required_pvc_names,
)

PCS_RESOURCE = "podcliqueset"
WAIT_LEADER_RESOURCE = "wait-leader-configmap"
ENABLE_GROVE_ANNOTATION = "nvidia.com/enable-grove"
SPEC_SCHEMA = spec_schema_file(Path(__file__).parent)  # the XRD's spec schema, checked first


def service_resource_name(component_key: str) -> str:
    return f"service-{component_key}"


def uses_grove(graph: Graph, operator_config: OperatorConfig) -> bool:
    """Upstream's pathway choice (docs/upstream/operator.md §1.1): Grove unless the DGD opts out or the platform
    has no Grove."""
    return (
        graph.metadata_annotations.get(ENABLE_GROVE_ANNOTATION, "").lower() != "false" and operator_config.grove_enabled
    )


def check_component_pathway_fields(graph: Graph) -> None:
    """Fields only the Grove pathway renders are rejected without it (upstream webhook,
    docs/upstream/operator.md §5.6 rule 4)."""
    if graph.priority_class_name:
        raise SpecError("spec.priorityClassName: allowed only on the Grove pathway (this graph does not use Grove)")
    for component in graph.components:
        if component.min_available is not None:
            raise SpecError(
                f"{component_path(graph, component)}.minAvailable: allowed only on the Grove pathway "
                "(this graph does not use Grove)"
            )


def _check_grove_names(graph: Graph) -> None:
    pcs = podcliqueset_name(graph)
    for component in graph.components:
        if len(pcs) + grove_name_budget(component) > MAX_COMBINED_GROVE_NAME:
            raise SpecError(
                f"{component_path(graph, component)}: Grove limits "
                f"PodCliqueSet + scaling group + clique names to {MAX_COMBINED_GROVE_NAME} characters; "
                f"{component.key!r} leaves no room for the name {pcs!r}"
            )


def _backends(graph: Graph) -> dict[str, str]:
    resolved = {}
    for component in graph.components:
        main = next(c for c in component.pod_template["spec"]["containers"] if c.get("name") == "main")
        try:
            resolved[component.name] = backends.resolve_backend(component.component_type, main, graph.backend_framework)
        except backends.BackendError as err:
            raise SpecError(f"spec.backendFramework: {component.name}: {err}") from None
    return resolved


def render_graph(
    graph: Graph, operator_config: OperatorConfig, component_backends: dict[str, str] | None = None
) -> dict[str, dict[str, Any]]:
    """Composed resource name -> object for the Grove pathway; ``component_backends`` as ``_backends`` gives
    them (resolved here when not given)."""
    _check_grove_names(graph)
    ctx = PodContext(graph=graph, operator_config=operator_config)
    backends_by_component = component_backends if component_backends is not None else _backends(graph)
    desired: dict[str, dict[str, Any]] = {PCS_RESOURCE: render_podcliqueset(ctx, backends_by_component)}
    for component in graph.components:
        if needs_service(component, ctx.discovery_backend):
            desired[service_resource_name(component.key)] = render_component_service(
                graph, component, ctx.discovery_backend
            )
    desired.update(render_graph_shared(graph, operator_config, frontend_mesh=True))
    return dict(sorted(desired.items()))


def render_graph_shared(
    graph: Graph, operator_config: OperatorConfig, *, frontend_mesh: bool
) -> dict[str, dict[str, Any]]:
    """What the DGD itself composes on either pathway: discovery RBAC, model Services, the wait-for-leader
    ConfigMap, EPP resources (and, on the Grove pathway, the frontend Ingress/VirtualService), adapters, the
    GPU memory services' ResourceClaimTemplates."""
    ctx = PodContext(graph=graph, operator_config=operator_config)
    desired: dict[str, dict[str, Any]] = {}
    if ctx.discovery_backend == "kubernetes":
        desired.update(render_discovery_rbac(graph))
    for model in sorted({c.model_ref for c in graph.components if c.model_ref}):
        desired[model_service_name(model)] = render_model_service(graph, model)
    if any(c.multinode for c in graph.components):
        desired[WAIT_LEADER_RESOURCE] = backends.wait_leader_configmap(graph.name, graph.namespace)
    desired.update(render_mesh(graph, operator_config, frontend=frontend_mesh))
    desired.update(render_scaling_adapters(graph))
    desired.update(render_claim_templates(graph))
    return desired


def _storage(req: StepRequest, graph: Graph) -> tuple[dict[str, Any], dict[str, ResourceSelector]]:
    """Composed PVCs (``create: true``) and the existing ones to look up (``create: false``)."""
    pvcs = graph_pvcs(req.observed_composite)
    check_existing(pvcs, req.required, graph.namespace)
    desired = {
        pvc_resource_name(p.name): render_pvc(
            p, graph.name, graph.namespace, req.observed_resources.get(pvc_resource_name(p.name))
        )
        for p in pvcs
        if p.create
    }
    lookups = {
        PVC_REQUIREMENT_PREFIX + name: ResourceSelector(
            "v1", "PersistentVolumeClaim", match_name=name, namespace=graph.namespace
        )
        for name in required_pvc_names(pvcs)
    }
    return desired, lookups


def origin_carriers(observed_resources: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The observed objects that carry the origin version: the PodCliqueSet and the component deployments."""
    kinds = {"PodCliqueSet", *DCD_KINDS}
    return [obj for _, obj in sorted(observed_resources.items()) if obj.get("kind") in kinds]


# The containers that run a component's main image in what the step composes: ``main``, or the engines it becomes
# with intra-pod failover.
MAIN_IMAGE_CONTAINERS = frozenset({"main", *(engine_name(i) for i in range(ENGINES))})


def composed_main_images(observed_resources: dict[str, dict[str, Any]]) -> dict[str, Before]:
    """Each component's main images in what the graph composes now (its PodCliqueSet's cliques, its component
    deployments in either shape): the components as they were before the update being reconciled. Their
    ``runtimeVersionOverride`` counts as unchanged (a PodCliqueSet does not carry it)."""
    images: dict[str, set[str]] = {}
    for obj in observed_resources.values():
        spec = obj.get("spec") or {}
        if obj.get("kind") == "PodCliqueSet":
            cliques = (spec.get("template") or {}).get("cliques") or []
            pods = [(c.get("labels") or {}, (c.get("spec") or {}).get("podSpec") or {}) for c in cliques]
        elif obj.get("kind") in DCD_KINDS:
            labels = (obj.get("metadata") or {}).get("labels") or {}
            main = ((spec.get("extraPodSpec") or {}).get("mainContainer") or {}) | {"name": "main"}
            pods = [(labels, (spec.get("podTemplate") or {}).get("spec") or {"containers": [main]})]
        else:
            continue
        for labels, pod in pods:
            for container in pod.get("containers") or []:
                if labels.get(COMPONENT) and container.get("name") in MAIN_IMAGE_CONTAINERS:
                    images.setdefault(labels[COMPONENT], set()).add(str(container.get("image") or ""))
    return {name: Before(frozenset(found)) for name, found in images.items()}


def main_images_before(req: StepRequest) -> dict[str, Before]:
    """The components before this update: the previous composite ``validate --old`` passes, else what is composed."""
    previous = req.context.get(PREVIOUS_COMPOSITE_CONTEXT_KEY)
    if isinstance(previous, dict):
        return before_update(previous.get("spec") or {})
    return composed_main_images(req.observed_resources)


def render_graph_deployment(req: StepRequest) -> StepResponse:
    try:
        check_xr_spec(req.observed_composite, SPEC_SCHEMA)
        operator_config = read_operator_config(req.required.get(OPERATOR_CONFIG_REQUIREMENT, []))
        claim = graph_claim(req.observed_composite)
        # the spec as upstream's API server would store it; the worker hash reads it as ours stored it, so that
        # a package upgrade does not roll workers over a default
        defaulted = graph_claim(spec_with_pod_spec_defaults(req.observed_composite, SPEC_SCHEMA))
        graph = graph_from_graph_claim(defaulted)
        for component in graph.components:  # before anything is named after them
            where = "services" if graph.shape == "v1alpha1" else "components"
            check_component_name(component.name, f"spec.{where}.{shown(component.name)}")
        origin = resolve_origin_version(
            graph.metadata_annotations,
            req.observed_composite.get("status") or {},
            origin_carriers(req.observed_resources),
        )
        graph = with_origin_version(graph, origin)
        graph = with_adapter_replicas(graph, req.observed_resources)  # the adapters own their replicas
        hash8, adopted_hash = graph_worker_hash(graph, claim.spec, req.observed_composite.get("status") or {})
        graph = dataclasses.replace(graph, worker_hash=hash8)
        check_annotations(graph)
        check_costly_rules(req.observed_composite.get("spec") or {})
        pvcs, lookups = _storage(req, graph)
        check_gms(graph.components, operator_config)
        component_backends = _backends(graph)
        check_inter_pod(graph.components, component_backends, uses_grove(graph, operator_config))
        for component in graph.components:
            check_failover(graph, component, component_backends[component.name])
        checkpoints = resolve_checkpoints(req, graph, operator_config, component_backends)
        graph = dataclasses.replace(graph, checkpoints=checkpoints.resolved)
        lookups.update(checkpoints.requirements)
        status: dict[str, Any] = {STATUS_FIELD: origin}
        if adopted_hash:
            status[ADOPTED_HASH_FIELD] = adopted_hash
        if checkpoints.resolved:
            status[CHECKPOINTS_STATUS] = checkpoints.status()
        warnings: tuple[str, ...] = ()
        nested: tuple[dict[str, Any], ...] = ()
        conditions = [deprecation_condition(req.observed_composite)]
        if uses_grove(graph, operator_config):
            desired = {**pvcs, **render_graph(graph, operator_config, component_backends)}
            lookups.update(stamp_restart(req, graph, desired[PCS_RESOURCE], PCS_RESOURCE))
        else:
            check_component_pathway_fields(graph)
            rendered = render_components(req, graph, operator_config, raw_components(graph, defaulted.spec))
            desired = {**pvcs, **rendered.desired, **render_graph_shared(graph, operator_config, frontend_mesh=False)}
            status.update(rendered.status or {})
            warnings, nested = rendered.warnings, rendered.nested
        desired.update(checkpoints.desired)
        if needs_ssh_secret(graph, component_backends):
            copy, condition = ssh_secret(graph, operator_config, req.required)
            desired.update(copy)
            lookups.update(ssh_secret_requirement(graph, operator_config))
            conditions.append(condition)
        # upstream's webhook refuses these; checked late, so that a graph breaking another rule too names that one
        check_main_images(graph_main_images(req.observed_composite.get("spec") or {}), main_images_before(req))
        check_names(graph.name, [*desired.values(), *nested])  # nothing the cluster would refuse is composed
    except (SpecError, OperatorConfigError) as err:
        return fatal(str(err), reason="InvalidSpec")
    desired = pin_observed_adapters(desired, req.observed_resources)
    return StepResponse(
        desired_resources={name: DesiredResource(obj) for name, obj in sorted(desired.items())},
        composite_status=status,
        results=[Result("warning", message, "ComponentDeploymentInvalid") for message in warnings],
        conditions=conditions,
        requirements=lookups,
        ttl_seconds=READY_TTL_SECONDS,  # when to look again is the status step's (pendingTTL, readyTTL)
    )
