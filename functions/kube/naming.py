"""Names of the objects the operator creates (docs/upstream/operator.md §1.2)."""

from __future__ import annotations

import hashlib

from functions.api.graph import Component, Graph, SpecError
from functions.api.normalise import DNS1123_SUBDOMAIN

GLOBAL_DYNAMO_NAMESPACE = "dynamo"


def dynamo_namespace(graph: Graph, component: Component | None = None) -> str:
    """Dynamo's runtime namespace: ``{k8sNamespace}-{dgdName}`` with dots replaced, or ``dynamo`` if global."""
    if component is not None and component.global_namespace:
        return GLOBAL_DYNAMO_NAMESPACE
    return f"{graph.namespace}-{graph.name.replace('.', '-')}"


def component_resource_name(graph: Graph, component: Component) -> str:
    return f"{graph.name}-{component.key}"


def component_path(graph: Graph, component: Component) -> str:
    """Where the component sits in the spec, for messages: ``spec.services.<name>`` or ``spec.components.<name>``."""
    return f"spec.{'services' if graph.shape == 'v1alpha1' else 'components'}.{component.name}"


def service_name(graph: Graph, component: Component) -> str:
    return component_resource_name(graph, component).replace(".", "-")


MAX_COMBINED_GROVE_NAME = 45  # Grove's webhook limit on len(pcs) + len(pcsg) + len(clique)
MIN_PCS_NAME = 8


def _fnv32a(data: bytes) -> int:
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def grove_name_budget(component: Component) -> int:
    """Characters a component takes from the 45: its clique, plus its scaling group when it has one."""
    if component.scaling_group:
        return len(component.key) + max(len(n) for n in clique_names(component))
    return len(component.key)


def podcliqueset_name(graph: Graph) -> str:
    """The DGD name, or when too long for Grove's limit, a prefix plus 4 hex of its FNV-1a hash (newer upstream)."""
    budget = MAX_COMBINED_GROVE_NAME - max((grove_name_budget(c) for c in graph.components), default=0)
    budget = max(budget, MIN_PCS_NAME)
    if len(graph.name) <= budget:
        return graph.name
    return f"{graph.name[: budget - 5]}-{_fnv32a(graph.name.encode()) & 0xFFFF:04x}"


def clique_names(component: Component) -> tuple[str, ...]:
    """Single-node: ``{svc}``; multinode: leader ``{svc}-ldr`` and worker ``{svc}-wkr``; an inter-pod GPU
    memory service: per rank its weight server ``{svc}-gms-{r}`` and its engines (``{svc}``, or multinode
    ``{svc}-ldr`` and ``{svc}-wkr-{r}``)."""
    if component.inter_pod_gms:
        ranks = range(component.node_count) if component.multinode else range(1)
        engines = [component.key] if not component.multinode else [
            f"{component.key}-ldr", *(f"{component.key}-wkr-{r}" for r in ranks if r)]  # fmt: skip
        return tuple(n for r in ranks for n in (f"{component.key}-gms-{r}", engines[r]))
    if component.multinode:
        return (f"{component.key}-ldr", f"{component.key}-wkr")
    return (component.key,)


def discovery_service_account(graph: Graph) -> str:
    """The per-DGD ServiceAccount for Kubernetes discovery; its Role and RoleBinding add suffixes."""
    return f"{graph.name}-k8s-service-discovery"


# Crossplane's XR CRDs cap metadata.name at 63 characters (composite names become label values).
MAX_COMPOSITE_NAME = 63
COMPOSITE_HASH_LENGTH = 8


def cut_with_hash(value: str, limit: int, strip: str = "") -> str:
    """``value`` if it fits ``limit``; else cut (trailing ``strip`` characters dropped) to end in ``-`` and
    8 hex digits of its SHA-256, so it stays unique and stable."""
    if len(value) <= limit:
        return value
    digest = hashlib.sha256(value.encode()).hexdigest()[:COMPOSITE_HASH_LENGTH]
    return f"{value[: limit - COMPOSITE_HASH_LENGTH - 1].rstrip(strip)}-{digest}"


def nested_composite_name(graph: Graph, name: str, what: str, path: str) -> str:
    """The name of a composite a DGD nests for one of its components (a DCD, a scaling adapter).

    Nested in a namespaced XR it is upstream's ``name`` itself, in the DGD's namespace. Nested in a claim's
    cluster-scoped XR it is ``{namespace}.{name}``: upstream's name alone would collide between two namespaces
    holding DGDs of the same name. A name longer than a composite may be is cut and ends in ``-`` and 8 hex
    digits of its SHA-256, so it stays unique and stable. Raises ``SpecError`` at ``path`` when the result is
    not a valid object name.
    """
    full = name if graph.namespaced else f"{graph.namespace}.{name}"
    qualified = cut_with_hash(full, MAX_COMPOSITE_NAME, strip=".-")
    if not DNS1123_SUBDOMAIN.match(qualified):
        raise SpecError(
            f"{path}: the {what}'s name {qualified!r} is not a valid object name "
            f"(a lowercase RFC 1123 subdomain of at most {MAX_COMPOSITE_NAME} characters)"
        )
    return qualified
