"""The single-node DynamoComponentDeployment as an apps/v1 Deployment (docs/upstream/operator.md §1.4)."""

from __future__ import annotations

from typing import Any

from functions.api.graph import Component, Graph
from functions.kube.backends import ORIGIN_VERSION_ANNOTATION
from functions.kube.checkpoint_restore import apply_component_checkpoint
from functions.kube.gms_graph import apply_component_gms
from functions.kube.labels import (
    BASE_MODEL_HASH,
    COMPONENT,
    COMPONENT_CLASS,
    GRAPH_NAME,
    NAMESPACE,
    RESTART_AT,
    SELECTOR,
    SUB_COMPONENT_TYPE,
    WORKER_HASH,
    clique_labels,
    model_hash,
)
from functions.kube.naming import dynamo_namespace
from functions.kube.podspec import PodContext, render_pod_spec

BASE_MODEL_ANNOTATION = "nvidia.com/dynamo-base-model"
STRATEGY_ANNOTATION = "nvidia.com/deployment-strategy"
MAX_SURGE_ANNOTATION = "nvidia.com/deployment-rolling-update-max-surge"
MAX_UNAVAILABLE_ANNOTATION = "nvidia.com/deployment-rolling-update-max-unavailable"
DEFAULT_ROLLING_UPDATE = "25%"


def crossplane_free(labels: dict[str, Any]) -> dict[str, Any]:
    """An XR's labels without the ones Crossplane sets (composite, claim name and namespace)."""
    return {k: v for k, v in labels.items() if not k.startswith("crossplane.io/")}


def kube_labels(graph: Graph, component: Component, xr_labels: dict[str, Any]) -> dict[str, str]:
    """Upstream HEAD ``GetDCDKubeLabels``, the labels of the Deployment, LWS or Service object itself: the DCD's
    own labels (less Crossplane's), then v1alpha1 ``spec.labels``, then the pod template's labels, the
    base-model hash, the sub-component type, the component name and Dynamo namespace; the DCD's own values of
    the identity labels win over all of these.

    The sub-component type is the DCD's as its v1alpha1 form has it: a v1alpha1 ``subComponentType``, and for
    a v1beta1 ``prefill`` or ``decode`` component its type (the v1alpha1 form of such a DCD is a ``worker``
    with that sub-type), whichever API version the DCD was written in."""
    own = crossplane_free(xr_labels)
    labels = {**own, **component.labels, **(component.pod_template.get("metadata", {}).get("labels") or {})}
    if component.model_ref:
        labels[BASE_MODEL_HASH] = model_hash(component.model_ref)
    if component.sub_component_type:
        labels[SUB_COMPONENT_TYPE] = component.sub_component_type
    labels[COMPONENT] = component.name
    labels[NAMESPACE] = dynamo_namespace(graph, component)
    for key in (COMPONENT, NAMESPACE, GRAPH_NAME, WORKER_HASH, COMPONENT_CLASS):
        if own.get(key):
            labels[key] = own[key]
    return dict(sorted(labels.items()))


def _int_or_string(value: str) -> int | str:
    return int(value) if value.isdigit() else value


def deployment_strategy(annotations: dict[str, str]) -> dict[str, Any]:
    """RollingUpdate 25%/25%, or what the DCD's strategy annotations ask for (docs/upstream/operator.md §1.4)."""
    if annotations.get(STRATEGY_ANNOTATION) == "Recreate":
        return {"type": "Recreate"}
    return {
        "type": "RollingUpdate",
        "rollingUpdate": {
            "maxSurge": _int_or_string(annotations.get(MAX_SURGE_ANNOTATION, DEFAULT_ROLLING_UPDATE)),
            "maxUnavailable": _int_or_string(annotations.get(MAX_UNAVAILABLE_ANNOTATION, DEFAULT_ROLLING_UPDATE)),
        },
    }


def pod_annotations(component: Component) -> dict[str, str]:
    """The pod template's annotations: extraPodMetadata's (or the v1beta1 pod template's) plus ``restartAt`` and
    a ``modelRef``'s base model, without the origin version a DGD's DCD carries for its feature gates (upstream
    ``GetDCDKubeAnnotations``)."""
    annotations = dict(component.pod_template.get("metadata", {}).get("annotations") or {})
    annotations.pop(ORIGIN_VERSION_ANNOTATION, None)
    if RESTART_AT in component.annotations:
        annotations[RESTART_AT] = component.annotations[RESTART_AT]
    annotations.update(base_model_annotation(component))
    return dict(sorted(annotations.items()))


def base_model_annotation(component: Component) -> dict[str, str]:
    """Upstream ``AddBaseModelAnnotation``: a DCD's workload, pods and Service name the ``modelRef``'s model."""
    return {BASE_MODEL_ANNOTATION: component.model_ref} if component.model_ref else {}


def render_deployment(ctx: PodContext, component: Component, name: str, xr_labels: dict[str, Any]) -> dict[str, Any]:
    graph = ctx.graph
    pod_meta = component.pod_template.get("metadata", {})
    labels = kube_labels(graph, component, xr_labels)
    annotations = {**component.annotations, **pod_meta.get("annotations", {})}
    annotations.pop(ORIGIN_VERSION_ANNOTATION, None)
    annotations.update(base_model_annotation(component))
    pod_labels = {**clique_labels(ctx, component), SELECTOR: name}
    metadata: dict[str, Any] = {"name": name, "namespace": graph.namespace, "labels": dict(sorted(labels.items()))}
    if annotations:
        metadata["annotations"] = dict(sorted(annotations.items()))
    template_meta: dict[str, Any] = {"labels": dict(sorted(pod_labels.items()))}
    template_annotations = pod_annotations(component)
    if template_annotations:
        template_meta["annotations"] = template_annotations
    pod = render_pod_spec(ctx, component)
    apply_component_gms(graph, component, pod, ctx.backend)
    apply_component_checkpoint(ctx, component, template_meta, pod)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata,
        "spec": {
            "replicas": component.replicas,
            "selector": {"matchLabels": {SELECTOR: name}},
            "strategy": deployment_strategy(annotations),  # upstream reads GetDCDKubeAnnotations, as above
            "template": {"metadata": template_meta, "spec": pod},
        },
    }
