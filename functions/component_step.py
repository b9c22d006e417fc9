"""Pipeline step ``ComponentDeployment``: a DynamoComponentDeployment XR becomes a Deployment and its Service.

A DCD is one DGD service (v1alpha1) or component (v1beta1) as an object of its own (reference
§1.4). This first slice renders the single-node Deployment path; a multinode DCD (upstream's
LeaderWorkerSet + Volcano PodGroup path) ends in a Fatal naming ``spec.multinode``.

The pod template comes from the same renderer as the Grove pathway, through a ``Graph`` whose
single component is the DCD: namespace from the claim, graph name from the DGD name label when
a DGD made the DCD, else the DCD's own name.

The step also writes the status (§3.3): conditions ``Available`` and ``DynamoComponentReady``
from the observed Deployment (§3.2 Deployment rule), and the replica counts in ``status.service``
(v1alpha1 shape) or ``status.component`` (v1beta1 shape). The XR is ready when the Deployment is.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from functions.api import v1alpha1, v1beta1
from functions.api.from_v1alpha1 import component_from_service
from functions.api.from_v1beta1 import component_from_v1beta1
from functions.api.graph import MAIN_CONTAINER, Component, Graph, SpecError
from functions.api.normalise import _validation_error, claimed_object
from functions.api.platform import PLATFORM_REQUIREMENT, PlatformConfig, PlatformConfigError, platform_config
from functions.render import backends
from functions.render.labels import BASE_MODEL_HASH, GRAPH_NAME, SELECTOR, clique_labels, model_hash
from functions.render.podspec import PodContext, render_pod_spec
from functions.render.rbac import render_discovery_rbac
from functions.render.services import needs_service, render_component_service
from functions.status.deployment import deployment_readiness, deployment_replica_status
from functions.step import Condition, DesiredResource, StepRequest, StepResponse, fatal

DEPLOYMENT_RESOURCE = "deployment"
SERVICE_RESOURCE = "service"
BASE_MODEL_ANNOTATION = "nvidia.com/dynamo-base-model"
STRATEGY_ANNOTATION = "nvidia.com/deployment-strategy"
MAX_SURGE_ANNOTATION = "nvidia.com/deployment-rolling-update-max-surge"
MAX_UNAVAILABLE_ANNOTATION = "nvidia.com/deployment-rolling-update-max-unavailable"
DEFAULT_ROLLING_UPDATE = "25%"

AVAILABLE = "Available"
COMPONENT_READY = "DynamoComponentReady"
# The v1beta1 shape is recognised by the fields only v1beta1 has (functions.xrds.dcd_shape_fields).
V1BETA1_ONLY = frozenset({"compilationCache", "experimental", "name", "podTemplate", "sharedMemorySize", "type"})


def dcd_shape(spec: dict[str, Any]) -> str:
    if V1BETA1_ONLY & set(spec) or isinstance(spec.get("frontendSidecar"), str):
        return "v1beta1"
    return "v1alpha1"


def _crossplane_labels(labels: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in labels.items() if not k.startswith("crossplane.io/")}


def dcd_graph(xr: dict[str, Any]) -> tuple[Graph, str]:
    """The DCD as a one-component ``Graph``, and the DCD (claim) name; raises ``SpecError``."""
    obj = claimed_object(xr, "DynamoComponentDeployment")
    name, labels, annotations, spec = obj.name, obj.labels, obj.annotations, obj.spec
    if spec.get("multinode") is not None:
        raise SpecError(
            "spec.multinode: a multinode DynamoComponentDeployment (LeaderWorkerSet rendering) is not supported yet"
        )
    shape = dcd_shape(spec)
    shared = {k: v for k, v in spec.items() if k not in ("backendFramework", "multinode")}
    try:
        if shape == "v1alpha1":
            parsed_a = v1alpha1.DynamoComponentDeploymentSpec.model_validate(spec)
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
        raise _validation_error(exc, "spec") from None
    for path in component.unsupported:
        raise SpecError(f"{path}: not supported yet by function-dynamo")
    graph = Graph(
        name=str(labels.get(GRAPH_NAME) or name),
        namespace=obj.namespace,
        shape=shape,
        components=(component,),
        backend_framework=backend,
        metadata_annotations={k: v for k, v in annotations.items() if isinstance(v, str)},
    )
    return graph, name


def _int_or_string(value: str) -> int | str:
    return int(value) if value.isdigit() else value


def deployment_strategy(annotations: dict[str, str]) -> dict[str, Any]:
    """RollingUpdate 25%/25%, or what the DCD's strategy annotations ask for (§1.4)."""
    if annotations.get(STRATEGY_ANNOTATION) == "Recreate":
        return {"type": "Recreate"}
    return {
        "type": "RollingUpdate",
        "rollingUpdate": {
            "maxSurge": _int_or_string(annotations.get(MAX_SURGE_ANNOTATION, DEFAULT_ROLLING_UPDATE)),
            "maxUnavailable": _int_or_string(annotations.get(MAX_UNAVAILABLE_ANNOTATION, DEFAULT_ROLLING_UPDATE)),
        },
    }


def render_deployment(ctx: PodContext, component: Component, name: str, xr_labels: dict[str, Any]) -> dict[str, Any]:
    graph = ctx.graph
    pod_meta = component.pod_template.get("metadata", {})
    labels = {**component.labels, **_crossplane_labels(xr_labels), SELECTOR: name}
    annotations = {**component.annotations, **pod_meta.get("annotations", {})}
    if component.model_ref:
        labels[BASE_MODEL_HASH] = model_hash(component.model_ref)
        annotations[BASE_MODEL_ANNOTATION] = component.model_ref
    pod_labels = {**clique_labels(ctx, component), SELECTOR: name}
    metadata: dict[str, Any] = {"name": name, "namespace": graph.namespace, "labels": dict(sorted(labels.items()))}
    if annotations:
        metadata["annotations"] = dict(sorted(annotations.items()))
    template_meta: dict[str, Any] = {"labels": dict(sorted(pod_labels.items()))}
    if pod_meta.get("annotations"):
        template_meta["annotations"] = dict(sorted(pod_meta["annotations"].items()))
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata,
        "spec": {
            "replicas": component.replicas,
            "selector": {"matchLabels": {SELECTOR: name}},
            "strategy": deployment_strategy(component.annotations),
            "template": {"metadata": template_meta, "spec": render_pod_spec(ctx, component)},
        },
    }


def render_component(graph: Graph, name: str, platform: PlatformConfig, xr_labels: dict[str, Any]) -> dict[str, Any]:
    """Composed resource name -> object for a single-node DCD."""
    (component,) = graph.components
    main = next(c for c in component.pod_template["spec"]["containers"] if c.get("name") == MAIN_CONTAINER)
    try:
        backend = backends.resolve_backend(component.component_type, main, graph.backend_framework)
    except backends.BackendError as err:
        raise SpecError(f"spec.backendFramework: {err}") from None
    ctx = PodContext(graph=graph, platform=platform, backend=backend)
    desired = {DEPLOYMENT_RESOURCE: render_deployment(ctx, component, name, xr_labels)}
    if needs_service(component, ctx.discovery_backend):
        service = render_component_service(graph, component, ctx.discovery_backend)
        service["metadata"]["name"] = name.replace(".", "-")  # the DCD controller names it after the DCD
        service["metadata"]["labels"][SELECTOR] = name
        desired[SERVICE_RESOURCE] = service
    if ctx.discovery_backend == "kubernetes" and GRAPH_NAME not in xr_labels:
        # A standalone DCD: no DGD composes the discovery ServiceAccount its pods run as.
        desired.update(render_discovery_rbac(graph))
    return dict(sorted(desired.items()))


def component_status(
    graph: Graph, name: str, observed: dict[str, Any] | None, generation: Any
) -> tuple[dict[str, Any], list[Condition], bool]:
    """(status fields, conditions, ready) from the observed Deployment (§3.2 Deployment rule, §3.3)."""
    if observed is None:
        conditions = [
            Condition(AVAILABLE, "Unknown", "Reconciling", "the Deployment does not exist yet"),
            Condition(COMPONENT_READY, "Unknown", "Reconciling", "the Deployment does not exist yet"),
        ]
        return {}, conditions, False
    readiness = deployment_readiness(observed)
    counts = deployment_replica_status(observed, name)
    if readiness.ready:
        conditions = [
            Condition(AVAILABLE, "True", "DeploymentReady", "Deployment is ready"),
            Condition(COMPONENT_READY, "True", "ComponentReady", "component is ready"),
        ]
    else:
        conditions = [
            Condition(AVAILABLE, "False", "DeploymentNotReady", readiness.reason),
            Condition(COMPONENT_READY, "False", "ComponentNotReady", readiness.reason),
        ]
    status: dict[str, Any] = {}
    if graph.shape == "v1alpha1":
        status["service"] = counts.as_status(with_component_name=True)
    else:
        status["component"] = counts.as_status(with_component_name=False)
    if isinstance(generation, int) and not isinstance(generation, bool):
        status["observedGeneration"] = generation
    return status, conditions, readiness.ready


def component_deployment(request: StepRequest) -> StepResponse:
    xr = request.observed_composite
    try:
        platform = platform_config(request.required.get(PLATFORM_REQUIREMENT, []))
        graph, name = dcd_graph(xr)
        xr_labels = (xr.get("metadata") or {}).get("labels") or {}
        desired = render_component(graph, name, platform, xr_labels)
    except (SpecError, PlatformConfigError) as err:
        return fatal(str(err), reason="InvalidSpec")
    observed = request.observed_resources.get(DEPLOYMENT_RESOURCE)
    generation = (xr.get("metadata") or {}).get("generation")
    status, conditions, ready = component_status(graph, name, observed, generation)
    resources = {
        key: DesiredResource(obj, ready=ready if key == DEPLOYMENT_RESOURCE else True) for key, obj in desired.items()
    }
    return StepResponse(
        desired_resources=resources,
        composite_status=status or None,
        composite_ready=ready,
        conditions=conditions,
    )
