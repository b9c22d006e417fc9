"""The single-node DynamoComponentDeployment as an apps/v1 Deployment (reference §1.4)."""

from __future__ import annotations

from typing import Any

from functions.api.graph import Component
from functions.render.labels import BASE_MODEL_HASH, RESTART_AT, SELECTOR, clique_labels, model_hash
from functions.render.podspec import PodContext, render_pod_spec

BASE_MODEL_ANNOTATION = "nvidia.com/dynamo-base-model"
STRATEGY_ANNOTATION = "nvidia.com/deployment-strategy"
MAX_SURGE_ANNOTATION = "nvidia.com/deployment-rolling-update-max-surge"
MAX_UNAVAILABLE_ANNOTATION = "nvidia.com/deployment-rolling-update-max-unavailable"
DEFAULT_ROLLING_UPDATE = "25%"


def crossplane_free(labels: dict[str, Any]) -> dict[str, Any]:
    """An XR's labels without the ones Crossplane sets (composite, claim name and namespace)."""
    return {k: v for k, v in labels.items() if not k.startswith("crossplane.io/")}


def kube_labels(component: Component, xr_labels: dict[str, Any]) -> dict[str, str]:
    """Upstream ``getKubeLabels``: DCD spec.labels, metadata.labels (less Crossplane's), the base-model hash."""
    labels = {**component.labels, **crossplane_free(xr_labels)}
    if component.model_ref:
        labels[BASE_MODEL_HASH] = model_hash(component.model_ref)
    return labels


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


def pod_annotations(component: Component) -> dict[str, str]:
    """The pod template's annotations: extraPodMetadata's (or the v1beta1 pod template's) plus ``restartAt``."""
    annotations = dict(component.pod_template.get("metadata", {}).get("annotations") or {})
    if RESTART_AT in component.annotations:
        annotations[RESTART_AT] = component.annotations[RESTART_AT]
    return dict(sorted(annotations.items()))


def render_deployment(ctx: PodContext, component: Component, name: str, xr_labels: dict[str, Any]) -> dict[str, Any]:
    graph = ctx.graph
    pod_meta = component.pod_template.get("metadata", {})
    labels = {**kube_labels(component, xr_labels), SELECTOR: name}
    annotations = {**component.annotations, **pod_meta.get("annotations", {})}
    if component.model_ref:
        annotations[BASE_MODEL_ANNOTATION] = component.model_ref
    pod_labels = {**clique_labels(ctx, component), SELECTOR: name}
    metadata: dict[str, Any] = {"name": name, "namespace": graph.namespace, "labels": dict(sorted(labels.items()))}
    if annotations:
        metadata["annotations"] = dict(sorted(annotations.items()))
    template_meta: dict[str, Any] = {"labels": dict(sorted(pod_labels.items()))}
    template_annotations = pod_annotations(component)
    if template_annotations:
        template_meta["annotations"] = template_annotations
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
