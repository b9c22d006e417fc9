"""The component pathway: one DynamoComponentDeployment per component
(docs/upstream/operator.md §1.1, §1.2, §1.4, §3.5).

Without Grove (the DGD annotation ``nvidia.com/enable-grove: "false"``, or the operator config's
``orchestrators.grove.enabled: false``) upstream's DGD controller creates one DynamoComponentDeployment
per service and the DCD controller renders it. Here the DGD composes a nested composite,
``DynamoComponentDeployment`` (``XDynamoComponentDeployment`` under a claim), whose own Composition
renders the Deployment or LeaderWorkerSets (``functions.kinds.component.component_step``).

The DCD's spec is the component as the user wrote it, plus what upstream's ``generateSingleDCD``
adds: ``backendFramework``; for the v1alpha1 shape ``serviceName``, ``dynamoNamespace``, the labels
(component, Dynamo namespace, graph name, worker hash, DGD ``spec.labels`` as low-priority defaults),
the annotations (DGD ``spec.annotations`` and the propagated DGD annotations under the service's own)
and the DGD ``envs`` merged under the service's. The v1beta1 shape has no spec labels, annotations
or envs, so those go into the pod template (labels and annotations into its metadata, envs into
container ``main``), which renders the same pods. ``replicas`` is the component's (the scaling
adapter's once it exists) or, during a managed rolling update, the planned count.

Names (docs/upstream/operator.md §1.2): ``{dgd}-{lower(component)}``, with ``-{workerHash}`` for worker,
prefill and decode components. The XR is cluster-scoped, so ``metadata.name`` is that name qualified by the namespace
(as for the scaling adapters), and the annotations ``dynamo.fn.crossplane.io/claim-name`` and
``…/claim-namespace`` tell the DCD's step which DCD it stands for.

The worker hash (docs/upstream/operator.md §3.5) is the first 8 hex characters of the SHA-256 of the
JSON of every worker, prefill and decode component spec (keys sorted, integers written as integers),
each without the fields that do not change pods. Upstream hashes Go's JSON of its structs; only a
deterministic suffix is needed (the same section), so the values differ from upstream's.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from functions.api.conversion import V1BETA1_TYPES, component_type, service_as_component
from functions.api.graph import MAIN_CONTAINER, Component, Graph, SpecError, json_copy, merge_envs, whole_numbers
from functions.api.normalise import COMPOSED_NAME_ANNOTATION, COMPOSED_NAMESPACE_ANNOTATION
from functions.kube import backends
from functions.kube.defaults import PLANNER_SERVICE_ACCOUNT, WORKER_TYPES
from functions.kube.go_written import go_pod_spec
from functions.kube.labels import (
    COMPONENT,
    COMPONENT_CLASS,
    GRAPH_NAME,
    NAMESPACE,
    PROPAGATED_ANNOTATIONS,
    RESTART_AT,
    WORKER_CLASS,
    WORKER_HASH,
    has_epp,
)
from functions.kube.mesh import EPP_CONFIG_API_VERSION, EPP_CONFIG_KIND
from functions.kube.naming import component_path, component_resource_name, dynamo_namespace, nested_composite_name

DCD_SYSTEM_LABELS = (COMPONENT, NAMESPACE, GRAPH_NAME)
# EPP serves its own TLS; an Istio sidecar in front of it breaks the handshake under STRICT mTLS (upstream HEAD
# stamps this on the EPP DCD's pod template, above the DGD's annotations).
ISTIO_INJECT_ANNOTATION = "sidecar.istio.io/inject"
DCD_API_VERSION = "nvidia.com/v1beta1"
DCD_KIND = "DynamoComponentDeployment"  # nested in a namespaced DGD; in a claim's cluster XR, X + this
DCD_KINDS = frozenset({DCD_KIND, f"X{DCD_KIND}"})
RESOURCE_PREFIX = "component-"
WORKER_HASH_LABEL = WORKER_HASH
# Fields that do not change a worker's pods: left out of the worker hash (both API shapes' names).
HASH_EXCLUDED = frozenset(
    {
        "annotations",
        "autoscaling",
        "componentType",
        "dynamoNamespace",
        "eppConfig",
        "ingress",
        "labels",
        "modelRef",
        "name",
        "replicas",
        "scalingAdapter",
        "serviceName",
        "subComponentType",
        "type",
    }
)
# DCD specs accept a component's fields except these (multinode is reduced to nodeCount).
NOT_IN_DCD = frozenset({"providerOverride"})


def is_worker(component: Component) -> bool:
    return component.component_type in WORKER_TYPES


def raw_components(graph: Graph, spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Component name -> the component's spec as written in the XR (``spec.services`` or ``spec.components``)."""
    if graph.shape == "v1alpha1":
        return {str(k): v for k, v in (spec.get("services") or {}).items() if isinstance(v, dict)}
    return {str(c.get("name")): c for c in spec.get("components") or [] if isinstance(c, dict)}


def worker_hash(graph: Graph, raw: dict[str, dict[str, Any]]) -> str:
    """8 hex characters over every worker-type component's pod-relevant spec (see the module doc)."""
    specs = {
        c.name: {k: v for k, v in raw.get(c.name, {}).items() if k not in HASH_EXCLUDED}
        for c in graph.components
        if is_worker(c)
    }
    text = json.dumps(whole_numbers(specs), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def dcd_name(graph: Graph, component: Component, hash8: str) -> str:
    """Upstream's ``GetDCDResourceName``: ``{dgd}-{lower(component)}``, plus ``-{hash}`` for worker types."""
    base = component_resource_name(graph, component)
    return f"{base}-{hash8}" if is_worker(component) else base


def dcd_resource_name(component: Component, hash8: str) -> str:
    """The composition resource name; a worker's carries its hash, so an old one can live beside a new one."""
    return f"{RESOURCE_PREFIX}{component.key}-{hash8}" if is_worker(component) else RESOURCE_PREFIX + component.key


def identity_labels(graph: Graph, component: Component, hash8: str) -> dict[str, str]:
    """The labels upstream's ``generateSingleDCD`` sets on every DCD: component, Dynamo namespace and graph name,
    and for a worker type its hash and, in a graph with an EPP, the worker class."""
    labels = {COMPONENT: component.name, NAMESPACE: dynamo_namespace(graph, component), GRAPH_NAME: graph.name}
    if is_worker(component):
        labels[WORKER_HASH_LABEL] = hash8
        if has_epp(graph):
            labels[COMPONENT_CLASS] = WORKER_CLASS
    return labels


def dcd_labels(graph: Graph, component: Component, hash8: str) -> dict[str, str]:
    """The DCD's own labels: the component's pod-template labels (v1alpha1 ``extraPodMetadata.labels``) under the
    identity labels. Not the DGD's ``spec.labels`` nor a v1alpha1 service's ``labels``: upstream passes those to
    the pods through the DCD's spec only."""
    own = component.pod_template.get("metadata", {}).get("labels") or {}
    return dict(sorted({**own, **identity_labels(graph, component, hash8)}.items()))


def spec_labels(graph: Graph, component: Component, hash8: str) -> dict[str, str]:
    """The labels the DCD's spec gives its pods: the DGD's and the component's under the identity labels."""
    return dict(sorted({**graph.labels, **component.labels, **identity_labels(graph, component, hash8)}.items()))


def dcd_annotations(graph: Graph, component: Component, restart_at: str | None) -> dict[str, str]:
    annotations = dict(graph.annotations)
    annotations.update({k: v for k, v in graph.metadata_annotations.items() if k in PROPAGATED_ANNOTATIONS})
    annotations.update(component.annotations)
    if restart_at is not None:
        annotations[RESTART_AT] = restart_at
    return dict(sorted(annotations.items()))


def _main_container(containers: list[dict[str, Any]]) -> dict[str, Any]:
    for container in containers:
        if container.get("name") == MAIN_CONTAINER:
            return container
    main: dict[str, Any] = {"name": MAIN_CONTAINER}
    containers.append(main)
    return main


def fits_v1beta1(service: dict[str, Any]) -> bool:
    """Whether a v1alpha1 service loses nothing its component deployment renders from when written in the v1beta1
    shape: a type v1beta1 has (or none), no ``subComponentType`` but the one it promotes to the type, no
    ``ingress`` of its own. Its ``labels`` and ``annotations`` travel in the pod template."""
    ctype, sub = component_type(service), service.get("subComponentType")
    return (ctype is None or ctype in V1BETA1_TYPES) and (not sub or sub == ctype) and service.get("ingress") is None


def generated_backend_framework(graph: Graph) -> str | None:
    """Upstream ``backendFrameworkForGeneratedDCDs``, the ``backendFramework`` of every DCD of the graph: the DGD's
    own, else the one backend its worker, prefill and decode components launch (``noop`` ones aside); raises
    ``SpecError`` when they launch two."""
    if graph.backend_framework:
        return graph.backend_framework
    found: str | None = None
    for component in graph.components:
        if not is_worker(component):
            continue
        main = next(c for c in component.pod_template["spec"]["containers"] if c.get("name") == MAIN_CONTAINER)
        try:
            backend = backends.resolve_backend(component.component_type, main, None)
        except backends.BackendError as err:
            raise SpecError(
                f"spec.backendFramework: failed to determine backend framework for component {component.name}: {err}"
            ) from None
        if backend == backends.NOOP:
            continue
        if found is not None and backend != found:
            raise SpecError(
                "spec.backendFramework: multiple backend frameworks detected for generated "
                f"DynamoComponentDeployments: {found} and {backend}"
            )
        found = backend
    return found


def operator_epp_config(config: dict[str, Any]) -> dict[str, Any]:
    """An inline ``eppConfig.config`` as upstream's DCD holds it: rendering the EPP's ConfigMap stamps the config's
    ``apiVersion`` and ``kind`` in place before the DCD copies it, and Go writes every plugin's ``name`` ("" when
    unset)."""
    out = {**config, "apiVersion": EPP_CONFIG_API_VERSION, "kind": EPP_CONFIG_KIND}
    if isinstance(out.get("plugins"), list):
        out["plugins"] = [{"name": "", **p} if isinstance(p, dict) else p for p in out["plugins"]]
    return out


def _v1alpha1_dcd_spec(
    graph: Graph, component: Component, spec: dict[str, Any], labels: dict[str, str], annotations: dict[str, str]
) -> dict[str, Any]:
    """The v1alpha1 shape, for a service ``fits_v1beta1`` refuses: what upstream's ``generateSingleDCD`` added to a
    v1alpha1 DCD, the propagated DGD annotations in ``spec.annotations``."""
    spec["serviceName"] = component.name
    spec["dynamoNamespace"] = dynamo_namespace(graph, component)
    spec["labels"] = labels
    if annotations:
        spec["annotations"] = annotations
    if graph.envs:
        spec["envs"] = merge_envs(json_copy(list(graph.envs)), spec.get("envs") or [])
    if component.component_type == "planner":
        extra = spec.setdefault("extraPodSpec", {})
        extra.setdefault("serviceAccountName", PLANNER_SERVICE_ACCOUNT)
    if component.component_type == "epp":
        pod_meta = spec.setdefault("extraPodMetadata", {})
        pod_meta["annotations"] = {**(pod_meta.get("annotations") or {}), ISTIO_INJECT_ANNOTATION: "false"}
    return whole_numbers(spec)


def dcd_spec(
    graph: Graph,
    component: Component,
    raw: dict[str, Any],
    hash8: str,
    replicas: int,
    restart_at: str | None,
    backend_framework: str | None = None,
) -> dict[str, Any]:
    """The DCD spec for one component, as upstream's generated DCD reads at v1beta1 (a v1alpha1 service converted
    as upstream's conversion does, ``service_as_component``); a v1alpha1 service ``fits_v1beta1`` refuses keeps
    its own shape. ``backend_framework`` is ``generated_backend_framework``'s, or None to leave it out."""
    alpha_shape = graph.shape == "v1alpha1" and not fits_v1beta1(raw)
    source = service_as_component(component.name, raw) if graph.shape == "v1alpha1" and not alpha_shape else raw
    spec = {k: json_copy(v) for k, v in source.items() if k not in NOT_IN_DCD}
    if component.multinode:
        spec["multinode"] = {"nodeCount": component.node_count}
    else:
        spec.pop("multinode", None)
    if backend_framework:
        spec["backendFramework"] = backend_framework
    spec["replicas"] = replicas
    labels = spec_labels(graph, component, hash8)
    annotations = dcd_annotations(graph, component, restart_at)
    if alpha_shape:
        return _v1alpha1_dcd_spec(graph, component, spec, labels, annotations)
    if isinstance((spec.get("eppConfig") or {}).get("config"), dict):
        spec["eppConfig"] = {**spec["eppConfig"], "config": operator_epp_config(spec["eppConfig"]["config"])}
    template = spec.setdefault("podTemplate", {})
    metadata = template.setdefault("metadata", {})
    # The system labels live on the DCD itself (its step re-derives them on the pods); the pod template
    # carries the DGD's and component's labels and, for a worker, its hash, as upstream HEAD's.
    pod_labels = {k: v for k, v in labels.items() if k not in DCD_SYSTEM_LABELS}
    pod_labels.update(metadata.get("labels") or {})
    if pod_labels:
        metadata["labels"] = dict(sorted(pod_labels.items()))
    if annotations:
        merged = {**annotations, **(metadata.get("annotations") or {})}
        if restart_at is not None:
            merged[RESTART_AT] = restart_at
        metadata["annotations"] = dict(sorted(merged.items()))
    if component.component_type == "epp":
        metadata["annotations"] = dict(
            sorted({**(metadata.get("annotations") or {}), ISTIO_INJECT_ANNOTATION: "false"}.items())
        )
    if graph.envs:
        containers = template.setdefault("spec", {}).setdefault("containers", [])
        main = _main_container(containers)
        main["env"] = merge_envs(json_copy(list(graph.envs)), main.get("env") or [])
    if component.component_type == "planner":
        # upstream sets it whatever the pod template says
        template.setdefault("spec", {})["serviceAccountName"] = PLANNER_SERVICE_ACCOUNT
    if "spec" in template:
        template["spec"] = go_pod_spec(template["spec"], with_resources=False)  # as the operator writes it
    if not metadata:
        del template["metadata"]
    return whole_numbers(spec)


def render_component_deployment(graph: Graph, component: Component, hash8: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The DynamoComponentDeployment of one component, with ``spec`` from ``dcd_spec``: in the DGD's namespace
    (namespaced), or an XDynamoComponentDeployment carrying its upstream name and namespace as annotations."""
    name = dcd_name(graph, component, hash8)
    xr_name = nested_composite_name(graph, name, "component deployment", component_path(graph, component))
    identity = (
        {COMPOSED_NAME_ANNOTATION: name, COMPOSED_NAMESPACE_ANNOTATION: graph.namespace}
        if not graph.namespaced
        else {COMPOSED_NAME_ANNOTATION: name}  # a namespaced XR whose name was cut keeps upstream's for its objects
        if xr_name != name
        else {}
    )
    # No DGD annotation of its own: upstream carries the propagated ones (the origin version among them) in the
    # spec, where the DCD's step reads them (functions.kinds.component.component_step.dcd_graph).
    metadata: dict[str, Any] = {"name": xr_name, "labels": dcd_labels(graph, component, hash8)}
    if identity:
        metadata["annotations"] = dict(sorted(identity.items()))
    return {
        "apiVersion": DCD_API_VERSION,
        "kind": DCD_KIND if graph.namespaced else f"X{DCD_KIND}",
        "metadata": metadata,
        "spec": spec,
    }
