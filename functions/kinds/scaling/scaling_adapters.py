"""DynamoGraphDeploymentScalingAdapters: one per component with a scaling adapter
(docs/upstream/operator.md §1.6, §4.2).

Upstream, the DGD controller creates a DGDSA per component with ``scalingAdapter`` (v1alpha1
``enabled: true``; v1beta1: present), its ``spec.replicas`` initialised from the component's
replicas, and from then on the adapter is the source of truth: the adapter controller copies its
replicas into the DGD. A composition function cannot write the DGD's spec, so here the DGD's
render step composes the adapter as a nested composite (``DynamoGraphDeploymentScalingAdapter``)
and, once Crossplane observes it, renders the component with the adapter's ``spec.replicas``
instead of the DGD's (``with_adapter_replicas``). The desired adapter repeats those observed
replicas, so Crossplane never resets what an autoscaler wrote.

Repeating an observed value races with a writer: a DGD reconcile that read the adapter before an
autoscaler's patch and applies after it would put the old replicas back. So the desired adapter
carries the observed ``metadata.resourceVersion`` (``pin_observed_adapters``), which server-side
apply treats as a precondition: a stale apply is refused with a conflict and Crossplane reconciles
again from the fresh adapter. Leaving the field out of an existing adapter is no way out:
Crossplane's field manager owns it from creation, so server-side apply would remove it, and the
schema requires it.

Nested in a namespaced DGD the adapter has upstream's name, ``{dgd}-{lower(component)}``, in the DGD's
namespace. Under a claim it is a cluster-scoped ``XDynamoGraphDeploymentScalingAdapter``, so its name carries
the DGD's namespace: upstream's name alone would collide between two namespaces holding DGDs of the same name.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from functions.api.graph import Component, Graph
from functions.kube.labels import COMPONENT, GRAPH_NAME
from functions.kube.naming import component_path, component_resource_name, nested_composite_name

ADAPTER_API_VERSION = "nvidia.com/v1beta1"
ADAPTER_KIND = "DynamoGraphDeploymentScalingAdapter"  # nested in a namespaced DGD; in a claim's cluster XR, X + this
RESOURCE_PREFIX = "scaling-adapter-"


def adapter_resource_name(component: Component) -> str:
    """The adapter's composition resource name (key of the desired and observed state)."""
    return RESOURCE_PREFIX + component.key


def adapter_name(graph: Graph, component: Component) -> str:
    """Upstream's DGDSA name ``{dgd}-{lower(component)}`` (qualified by the namespace under a claim)."""
    return nested_composite_name(
        graph,
        component_resource_name(graph, component),
        "scaling adapter",
        f"{component_path(graph, component)}.scalingAdapter",
    )


def adapter_selector(graph_name: str, component_name: str) -> str:
    """The label selector of the component's pods, as upstream's adapter puts it in ``status.selector``."""
    return f"{GRAPH_NAME}={graph_name},{COMPONENT}={component_name}"


def observed_replicas(observed: dict[str, Any] | None) -> int | None:
    """``spec.replicas`` of an observed adapter; None when there is none or it holds no replica count."""
    value = ((observed or {}).get("spec") or {}).get("replicas")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def with_adapter_replicas(graph: Graph, observed_resources: dict[str, dict[str, Any]]) -> Graph:
    """The graph with each adapted component's replicas taken from its observed adapter, if there is one.

    Everything downstream (the PodCliqueSet's cliques and scaling groups, and any other pathway)
    renders from the graph, so the adapter is the source of truth everywhere.
    """
    replaced = []
    changed = False
    for component in graph.components:
        replicas = (
            observed_replicas(observed_resources.get(adapter_resource_name(component)))
            if component.scaling_adapter
            else None
        )
        if replicas is None or replicas == component.replicas:
            replaced.append(component)
            continue
        replaced.append(dataclasses.replace(component, replicas=replicas))
        changed = True
    return dataclasses.replace(graph, components=tuple(replaced)) if changed else graph


def render_scaling_adapter(graph: Graph, component: Component) -> dict[str, Any]:
    name = adapter_name(graph, component)
    return {
        "apiVersion": ADAPTER_API_VERSION,
        "kind": ADAPTER_KIND if graph.namespaced else f"X{ADAPTER_KIND}",
        "metadata": {
            "name": name,
            "labels": {COMPONENT: component.name, GRAPH_NAME: graph.name},
        },
        "spec": {
            "dgdRef": {"componentName": component.name, "name": graph.name},
            "replicas": component.replicas,
        },
    }


def render_scaling_adapters(graph: Graph) -> dict[str, dict[str, Any]]:
    """Composition resource name -> adapter, for every component with a scaling adapter.

    ``graph`` is the one ``with_adapter_replicas`` returned, so an existing adapter's replicas are
    repeated as observed; a new adapter starts from the component's replicas (default 1).
    """
    return {adapter_resource_name(c): render_scaling_adapter(graph, c) for c in graph.components if c.scaling_adapter}


def pin_observed_adapters(
    desired: dict[str, dict[str, Any]], observed_resources: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """``desired`` with each existing adapter carrying its observed resourceVersion (see the module doc)."""
    pinned = dict(desired)
    for name, adapter in desired.items():
        version = ((observed_resources.get(name) or {}).get("metadata") or {}).get("resourceVersion")
        if name.startswith(RESOURCE_PREFIX) and version:
            pinned[name] = {**adapter, "metadata": {**adapter["metadata"], "resourceVersion": version}}
    return pinned
