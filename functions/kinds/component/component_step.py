"""Pipeline step ``ComponentDeployment``: a DynamoComponentDeployment XR becomes its workload and Services.

A DCD is one DGD service (v1alpha1) or component (v1beta1) as an object of its own
(docs/upstream/operator.md §1.4). A single-node DCD renders a Deployment (``functions.kube.deployment``); a
multinode one with LeaderWorkerSet available (platform ``orchestrators.lws`` and ``volcanoScheduler`` not
disabled) one LeaderWorkerSet with every replica (``functions.kube.lws``), else, as upstream, a
Deployment. Around it: the component Service (leader pods only for LWS), the frontend Ingress and
VirtualService, and for a DCD no DGD composed (no graph-name label) the discovery RBAC, the model
Service, the wait-for-leader ConfigMap and the MPI SSH Secret copy a DGD would compose.

The pod template comes from the same renderer as the Grove pathway, through a ``Graph`` whose
single component is the DCD: namespace from the claim, graph name from the DGD name label when
a DGD made the DCD, else the DCD's own name.

The step also writes the status (docs/upstream/operator.md §3.3): conditions ``Available`` and
``DynamoComponentReady`` from the observed Deployment or LeaderWorkerSets (docs/upstream/operator.md §3.2 rules),
the replica counts in
``status.service`` (v1alpha1 shape, with ``podSelector``) or ``status.component`` (v1beta1 shape).
The XR is ready when its workload is. A workload whose pod template does not carry the desired
``nvidia.com/restartAt`` yet is not ready: the observed object predates the restart, and its
ready pods are the old ones (this is what the DGD's restart progress relies on). Beyond upstream, the condition
``Progressing`` reports the workload's rollout (``functions.readiness.deployment``, ``functions.readiness.lws``):
True ``RolloutComplete`` or ``RolloutInProgress`` (updated replicas lag), False ``ProgressDeadlineExceeded``
(stalled); the DGD reads it to name a stalled component.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from functions.api import v1alpha1, v1beta1
from functions.api.from_v1alpha1 import component_from_service
from functions.api.from_v1beta1 import component_from_v1beta1
from functions.api.graph import MAIN_CONTAINER, Component, Graph, SpecError
from functions.api.normalise import claimed_object, validation_error
from functions.api.operator_config import (
    OPERATOR_CONFIG_REQUIREMENT,
    OperatorConfig,
    OperatorConfigError,
    read_operator_config,
)
from functions.api.pod_defaults import spec_with_pod_spec_defaults
from functions.api.schema_check import check_xr_spec, spec_schema_file
from functions.contract import (
    DEFAULT_TTL_SECONDS,
    READY_TTL_SECONDS,
    Condition,
    DesiredResource,
    StepRequest,
    StepResponse,
    fatal,
)
from functions.kinds.component.component_checkpoints import resolve_dcd_checkpoint
from functions.kinds.component.webhook_rules import (
    check_epp_config,
    check_main_images,
    check_main_mount_paths,
    check_service_sidecar,
    dcd_main_image,
)
from functions.kube import backends
from functions.kube.admissible import check_component_name, check_names
from functions.kube.deployment import base_model_annotation, kube_labels, render_deployment
from functions.kube.failover import check_failover
from functions.kube.gms_graph import check_gms, check_inter_pod, render_claim_templates
from functions.kube.labels import (
    GRAPH_NAME,
    PROPAGATED_ANNOTATIONS,
    RESTART_AT,
    SELECTOR,
    WORKER_HASH,
    discovery_labels,
)
from functions.kube.lws import LWS_KIND, ROLE_LABEL, render_leaderworkersets
from functions.kube.mesh import render_frontend_mesh
from functions.kube.mpi_secret import needs_ssh_secret, ssh_secret, ssh_secret_requirement
from functions.kube.podspec import PodContext
from functions.kube.rbac import render_discovery_rbac
from functions.kube.services import model_service_name, needs_service, render_component_service, render_model_service
from functions.readiness import lws as lws_status
from functions.readiness.conditions import PROGRESSING_CONDITION, component_progressing
from functions.readiness.deployment import deployment_readiness, deployment_replica_status
from functions.readiness.verdicts import (
    Readiness,
    ReplicaStatus,
    count,
    updating,
)

DEPLOYMENT_RESOURCE = "deployment"
SERVICE_RESOURCE = "service"
WAIT_LEADER_RESOURCE = "wait-leader-configmap"
SPEC_SCHEMA = spec_schema_file(Path(__file__).parent)  # the XRD's spec schema, checked first

AVAILABLE = "Available"
COMPONENT_READY = "DynamoComponentReady"
# The v1beta1 shape is recognised by the fields only v1beta1 has
# (functions.kinds.component.component_xrd.dcd_shape_fields).
V1BETA1_ONLY = frozenset({"compilationCache", "experimental", "name", "podTemplate", "sharedMemorySize", "type"})


def dcd_shape(spec: dict[str, Any]) -> str:
    if V1BETA1_ONLY & set(spec) or isinstance(spec.get("frontendSidecar"), str):
        return "v1beta1"
    return "v1alpha1"


def propagated_annotations(annotations: dict[str, Any], component: Component) -> dict[str, str]:
    """The annotations the DCD's pods read as the DGD's own (the origin version, the discovery backend and mode, the
    vLLM executor, metrics): the DCD's metadata annotations, under those its spec carries, where a DGD puts them (the
    pod template's, the v1alpha1 ``spec.annotations``), as upstream's DCD controller reads them."""
    carried = {**(component.pod_template.get("metadata", {}).get("annotations") or {}), **component.annotations}
    out = {k: v for k, v in annotations.items() if isinstance(v, str)}
    out.update({k: v for k, v in carried.items() if k in PROPAGATED_ANNOTATIONS and isinstance(v, str)})
    return out


def dcd_graph(xr: dict[str, Any]) -> tuple[Graph, str]:
    """The DCD as a one-component ``Graph``, and the DCD (claim) name; raises ``SpecError``."""
    obj = claimed_object(xr, "DynamoComponentDeployment")
    name, labels, annotations, spec = obj.name, obj.labels, obj.annotations, obj.spec
    shape = dcd_shape(spec)
    shared = {k: v for k, v in spec.items() if k != "backendFramework"}
    if shape == "v1alpha1":
        # the DGD's per-service rule (docs/upstream/operator.md §5.3), too costly for the XRD's CEL
        check_service_sidecar(spec, "spec")
    else:
        # upstream's webhook checks a v1beta1 DCD as v1alpha1 too, as it does a DGD's components
        check_main_mount_paths(spec, "spec")
        check_epp_config(spec, "spec")
    try:
        if shape == "v1alpha1":
            parsed_a = v1alpha1.DynamoComponentDeploymentSpec.model_validate(spec)
            if parsed_a.serviceName:
                check_component_name(parsed_a.serviceName, "spec.serviceName")
            service = v1alpha1.Service.model_validate(shared)
            component = component_from_service(parsed_a.serviceName or name, service)
            backend = parsed_a.backendFramework
        else:
            parsed_b = v1beta1.DynamoComponentDeploymentSpec.model_validate(spec)
            component = component_from_v1beta1(
                v1beta1.Component.model_validate({**shared, "name": parsed_b.name or name})
            )
            backend = parsed_b.backendFramework
    except ValidationError as exc:
        raise validation_error(exc, "spec") from None
    graph = Graph(
        name=str(labels.get(GRAPH_NAME) or name),
        namespace=obj.namespace,
        shape=shape,
        components=(component,),
        backend_framework=backend,
        metadata_annotations=propagated_annotations(annotations, component),
        worker_hash=str(labels[WORKER_HASH]) if labels.get(WORKER_HASH) else None,  # a DGD's worker DCD
        standalone_component=GRAPH_NAME not in labels,
    )
    return graph, name


def uses_lws(component: Component, operator_config: OperatorConfig) -> bool:
    """Upstream: multinode with LWS (and Volcano) available; a multinode DCD without it becomes a Deployment."""
    return component.multinode and operator_config.lws_enabled


def component_backend(graph: Graph) -> str:
    """The DCD's backend (``sglang``, ``vllm``, ``trtllm`` or ``noop``); raises ``SpecError``."""
    (component,) = graph.components
    main = next(c for c in component.pod_template["spec"]["containers"] if c.get("name") == MAIN_CONTAINER)
    try:
        return backends.resolve_backend(component.component_type, main, graph.backend_framework)
    except backends.BackendError as err:
        raise SpecError(f"spec.backendFramework: {err}") from None


def render_component(
    graph: Graph, name: str, operator_config: OperatorConfig, xr_labels: dict[str, Any]
) -> dict[str, Any]:
    """Composed resource name -> object for a DCD."""
    (component,) = graph.components
    backend = component_backend(graph)
    ctx = PodContext(graph=graph, operator_config=operator_config, backend=backend)
    lws = uses_lws(component, operator_config)
    if lws:
        desired = render_leaderworkersets(ctx, component, name, xr_labels)
    else:
        desired = {DEPLOYMENT_RESOURCE: render_deployment(ctx, component, name, xr_labels)}
    object_name = name.replace(".", "-")  # the DCD controller names its Service, Ingress and VS after the DCD
    if needs_service(component, ctx.discovery_backend):
        service = render_component_service(graph, component, ctx.discovery_backend)
        service["metadata"]["name"] = object_name
        # upstream labels a DCD's Service as its workload (GetDCDKubeLabels), plus the discovery labels
        service["metadata"]["labels"] = dict(
            sorted({**kube_labels(graph, component, xr_labels), **discovery_labels(ctx.discovery_backend)}.items())
        )
        # and annotates it as its workload too (GetDCDKubeAnnotations): a modelRef's base model with the rest
        annotations = {**(service["metadata"].get("annotations") or {}), **base_model_annotation(component)}
        if annotations:
            service["metadata"]["annotations"] = dict(sorted(annotations.items()))
        if lws:
            service["spec"]["selector"] = dict(sorted({**service["spec"]["selector"], ROLE_LABEL: "leader"}.items()))
        desired[SERVICE_RESOURCE] = service
    desired.update(render_frontend_mesh(graph, component, operator_config, object_name))
    if GRAPH_NAME not in xr_labels:
        # A standalone DCD: no DGD composes what its pods rely on.
        if ctx.discovery_backend == "kubernetes":
            desired.update(render_discovery_rbac(graph))
        if component.model_ref:
            desired[model_service_name(component.model_ref)] = render_model_service(graph, component.model_ref)
        if component.multinode:
            desired[WAIT_LEADER_RESOURCE] = backends.wait_leader_configmap(graph.name, graph.namespace)
        desired.update(render_claim_templates(graph))
    return dict(sorted(desired.items()))


def _template_restart_at(obj: dict[str, Any] | None) -> str | None:
    """``restartAt`` on a Deployment's pod template, or on a LeaderWorkerSet's leader template."""
    spec = (obj or {}).get("spec") or {}
    template = spec.get("template") or ((spec.get("leaderWorkerTemplate") or {}).get("leaderTemplate")) or {}
    return ((template.get("metadata") or {}).get("annotations") or {}).get(RESTART_AT)


def _stale_restart(desired: dict[str, Any], observed: dict[str, Any] | None) -> str | None:
    """Why an observed workload still runs the pods of an earlier restart id (None when it does not)."""
    want = _template_restart_at(desired)
    if observed is None or want is None or _template_restart_at(observed) == want:
        return None
    return (
        f"{observed.get('kind')} {(observed.get('metadata') or {}).get('name')} does not carry {RESTART_AT}={want} yet"
    )


def _workload_readiness(
    desired: dict[str, Any], observed: dict[str, dict[str, Any]], lws: bool
) -> tuple[Readiness, ReplicaStatus, bool]:
    """(readiness, replica counts, exists) of the Deployment or the LeaderWorkerSets, against the desired ones."""
    if lws:
        keys = sorted(k for k, o in desired.items() if o.get("kind") == LWS_KIND)
        names = [desired[k]["metadata"]["name"] for k in keys]
        objs = [observed.get(k) for k in keys]
        readiness = lws_status.lws_readiness(objs, names)
        counts = lws_status.lws_replica_status(objs, names)
        exists = any(o is not None for o in objs) or not keys
        stale = next((p for k in keys if (p := _stale_restart(desired[k], observed.get(k)))), None)
    else:
        got = observed.get(DEPLOYMENT_RESOURCE)
        readiness = deployment_readiness(got, count(desired[DEPLOYMENT_RESOURCE]["spec"], "replicas", default=1))
        counts = deployment_replica_status(got, desired[DEPLOYMENT_RESOURCE]["metadata"]["name"])
        exists = got is not None
        stale = _stale_restart(desired[DEPLOYMENT_RESOURCE], got)
    if stale and readiness.ready:
        readiness = updating(stale)
    return readiness, counts, exists


def component_status(
    graph: Graph,
    name: str,
    desired: dict[str, Any],
    observed: dict[str, dict[str, Any]],
    generation: Any,
    lws: bool,
) -> tuple[dict[str, Any], list[Condition], bool]:
    """(status fields, conditions, ready) from the observed Deployment or LeaderWorkerSets
    (docs/upstream/operator.md §3.2, §3.3)."""
    readiness, counts, exists = _workload_readiness(desired, observed, lws)
    what = "the LeaderWorkerSets do" if lws else "the Deployment does"
    if not exists:
        conditions = [
            Condition(AVAILABLE, "Unknown", "Reconciling", f"{what} not exist yet"),
            Condition(COMPONENT_READY, "Unknown", "Reconciling", f"{what} not exist yet"),
            Condition(PROGRESSING_CONDITION, "Unknown", "Reconciling", f"{what} not exist yet"),
        ]
        return {}, conditions, False
    if readiness.ready:
        available = (
            Condition(AVAILABLE, "True", lws_status.ALL_READY_REASON, lws_status.ALL_READY_MESSAGE)
            if lws
            else Condition(AVAILABLE, "True", "DeploymentReady", "Deployment is ready")
        )
        conditions = [available, Condition(COMPONENT_READY, "True", "ComponentReady", "component is ready")]
    else:
        reason = lws_status.NOT_READY_REASON if lws else "DeploymentNotReady"
        conditions = [
            Condition(AVAILABLE, "False", reason, readiness.reason),
            Condition(COMPONENT_READY, "False", "ComponentNotReady", readiness.reason),
        ]
    conditions.append(component_progressing(readiness))
    status: dict[str, Any] = {}
    if graph.shape == "v1alpha1":
        status["podSelector"] = {SELECTOR: name}
        status["service"] = counts.as_status(with_component_name=True)
    else:
        status["component"] = counts.as_status(with_component_name=False)
    if isinstance(generation, int) and not isinstance(generation, bool):
        status["observedGeneration"] = generation
    return status, conditions, readiness.ready


WORKLOAD_KINDS = frozenset({"Deployment", LWS_KIND})


def component_deployment(req: StepRequest) -> StepResponse:
    xr = req.observed_composite
    try:
        check_xr_spec(xr, SPEC_SCHEMA)
        xr = spec_with_pod_spec_defaults(xr, SPEC_SCHEMA)
        operator_config = read_operator_config(req.required.get(OPERATOR_CONFIG_REQUIREMENT, []))
        graph, name = dcd_graph(xr)
        xr_labels = (xr.get("metadata") or {}).get("labels") or {}
        (component,) = graph.components
        backend_by_component = {component.name: component_backend(graph)}
        check_gms(graph.components, operator_config)
        check_inter_pod(graph.components, backend_by_component, grove=False)
        check_failover(graph, component, backend_by_component[component.name])
        checkpoint, requirements = resolve_dcd_checkpoint(graph, operator_config, req.required)
        if checkpoint is not None:
            graph = dataclasses.replace(graph, checkpoints=(checkpoint,))
        desired = render_component(graph, name, operator_config, xr_labels)
        # upstream's webhook wants a DCD's main image too, but not its runtime version (a DGD's DCDs may leave it)
        spec = claimed_object(xr, "DynamoComponentDeployment").spec
        check_main_images([dcd_main_image(spec, dcd_shape(spec), component.name)], require_override=False)
        check_names(name, desired.values())  # a DGD checks its DCDs' first, naming its own metadata.name
    except (SpecError, OperatorConfigError) as err:
        return fatal(str(err), reason="InvalidSpec")
    mpi_conditions = []
    if GRAPH_NAME not in xr_labels and needs_ssh_secret(graph, backend_by_component):
        # A standalone DCD: no DGD provides the MPI SSH Secret its pods mount.
        copy, condition = ssh_secret(graph, operator_config, req.required)
        desired.update(copy)
        requirements.update(ssh_secret_requirement(graph, operator_config))
        mpi_conditions.append(condition)
    lws = uses_lws(graph.components[0], operator_config)
    generation = (xr.get("metadata") or {}).get("generation")
    status, conditions, ready = component_status(graph, name, desired, req.observed_resources, generation, lws)
    resources = {
        key: DesiredResource(obj, ready=ready if obj.get("kind") in WORKLOAD_KINDS else True)
        for key, obj in desired.items()
    }
    return StepResponse(
        desired_resources=resources,
        composite_status=status or None,
        composite_ready=ready,
        conditions=[*conditions, *mpi_conditions],
        requirements=requirements,
        ttl_seconds=READY_TTL_SECONDS if ready else DEFAULT_TTL_SECONDS,
    )
