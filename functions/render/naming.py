"""Names of the objects the operator creates (reference dynamo-operator.md §1.2)."""

from __future__ import annotations

from functions.api.graph import Component, Graph


def dynamo_namespace(graph: Graph) -> str:
    """Dynamo's runtime namespace: ``{k8sNamespace}-{dgdName}`` with dots replaced."""
    return f"{graph.namespace}-{graph.name.replace('.', '-')}"


def component_resource_name(graph: Graph, component: Component) -> str:
    return f"{graph.name}-{component.key}"


def service_name(graph: Graph, component: Component) -> str:
    return component_resource_name(graph, component).replace(".", "-")


def podcliqueset_name(graph: Graph) -> str:
    return graph.name


def clique_names(component: Component) -> tuple[str, ...]:
    """Single-node: ``{svc}``; multinode: leader ``{svc}-ldr`` and worker ``{svc}-wkr``."""
    if component.multinode:
        return (f"{component.key}-ldr", f"{component.key}-wkr")
    return (component.key,)
