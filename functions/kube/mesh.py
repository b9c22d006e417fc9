"""Networking children: the frontend Ingress and Istio VirtualService, and the EPP's ConfigMap,
InferencePool and Istio DestinationRule (docs/upstream/operator.md §1.5, §1.6).

Facts taken from upstream's Go source (ai-dynamo/dynamo ``deploy/operator``), where docs/upstream/operator.md
is silent:

* ``dgd_grove_stable_resources_reconciler.go`` ``reconcileFrontendIngress``: a frontend's own
  ``ingress`` replaces the default built from the operator config as a whole (no field merge); the
  Ingress is kept only when ``enabled`` and a class name is set; the VirtualService is synced only
  when the operator config has a ``virtualServiceGateway`` and kept only when the spec is VS-enabled.
* ``graph.go`` ``GenerateComponentIngress`` / ``GenerateComponentVirtualService``: both are named
  ``NormalizeKubeResourceName(component resource name)`` (dots -> dashes, lower case: the Service's
  name) and route ``/`` to that Service on port 8000; the Ingress TLS block is added whenever the spec
  has ``tls`` (``hosts: [host]`` plus ``secretName`` when set).
* ``graph.go`` ``GenerateDefaultIngressSpec``: enabled iff a gateway or class name is configured,
  ``useVirtualService`` iff a gateway is, host = DGD name; ``getIngressHost`` defaults the suffix to
  ``consts.DefaultIngressSuffix`` = ``local``.
* ``graph.go`` ``GenerateEPPDestinationRule``: name and host from the normalised EPP Service name,
  host ``<name>.<ns>.svc.cluster.local``; TLS mode from ``serviceMesh.istio.tlsMode`` (anything
  unknown is SIMPLE), ``insecureSkipVerify`` default true; client certificate, key and CA only for
  MUTUAL.
* ``api/config/v1alpha1`` ``ServiceMeshConfiguration.IsEnabled``: ``provider == istio`` and
  ``enabled`` not false. ``enabled`` unset means auto-detect the DestinationRule API
  (``features/gates.go``); a function cannot discover APIs, so unset counts as present.
* ``dgd_epp_reconciler.go`` + ``epp/config.go``: the ConfigMap only for an inline ``config`` (a
  ``configMapRef`` wins); its YAML is the EndpointPickerConfig with the TypeMeta overwritten.
  Upstream marshals GAIE's Go struct, which also writes ``name: ""``, ``parameters: null`` and
  ``weight: null`` for absent fields; the EPP reads both forms alike, so only set fields are written.
* ``epp/inference_pool.go``: labels graph-deployment-name / component / component-type ``epp``;
  selector ``nvidia.com/dynamo-component-class: worker`` (HEAD) + the EPP component's Dynamo namespace;
  ``endpointPickerRef`` kind Service, port 9002 (group and failureMode left to the CRD defaults). Upstream
  names the Service with the un-normalised ``GetDCDResourceName``; the normalised name is used here so the
  reference finds the Service even when the DGD name has a dot.
"""

from __future__ import annotations

from typing import Any

import yaml

from functions.api.graph import Component, Graph, IngressSpec, IngressTLS
from functions.api.operator_config import OperatorConfig
from functions.kube.defaults import EPP_CONFIG_KEY, EPP_GRPC_PORT, FRONTEND_PORT, epp_config_map_name
from functions.kube.labels import COMPONENT, COMPONENT_CLASS, COMPONENT_TYPE, GRAPH_NAME, NAMESPACE, WORKER_CLASS
from functions.kube.naming import dynamo_namespace, service_name

INGRESS_API_VERSION = "networking.k8s.io/v1"
ISTIO_API_VERSION = "networking.istio.io/v1beta1"  # what upstream builds; served by Istio 1.22+ and older
INFERENCE_POOL_API_VERSION = "inference.networking.k8s.io/v1"
EPP_CONFIG_API_VERSION = "inference.networking.x-k8s.io/v1alpha1"
EPP_CONFIG_KIND = "EndpointPickerConfig"
DEFAULT_INGRESS_SUFFIX = "local"
CONFIGMAP_RESOURCE = "epp-configmap"
INFERENCE_POOL_RESOURCE = "inferencepool"


def ingress_resource_name(component_key: str) -> str:
    return f"ingress-{component_key}"


def virtual_service_resource_name(component_key: str) -> str:
    return f"virtualservice-{component_key}"


def destination_rule_resource_name(component_key: str) -> str:
    return f"destinationrule-{component_key}"


def inference_pool_name(graph: Graph) -> str:
    return f"{graph.name}-pool"


# --- Frontend Ingress and VirtualService --------------------------------------------------


def default_ingress(graph: Graph, operator_config: OperatorConfig) -> IngressSpec:
    """The ingress a frontend without its own gets, from the platform's ``ingress`` settings."""
    config = operator_config.ingress
    gateway = config.virtualServiceGateway or None
    class_name = config.controllerClassName or None
    return IngressSpec(
        enabled=bool(gateway or class_name),
        host=graph.name,
        host_suffix=config.hostSuffix or None,
        class_name=class_name,
        tls=IngressTLS(config.controllerTLSSecretName) if config.controllerTLSSecretName else None,
        use_virtual_service=gateway is not None,
        virtual_service_gateway=gateway,
    )


def ingress_host(spec: IngressSpec) -> str:
    return f"{spec.host_prefix or ''}{spec.host}.{spec.host_suffix or DEFAULT_INGRESS_SUFFIX}"


def _metadata(name: str, graph: Graph, labels: dict[str, str] | None = None, **more: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": graph.namespace}
    if labels:
        meta["labels"] = dict(sorted(labels.items()))
    meta.update({k: dict(sorted(v.items())) for k, v in more.items() if v})
    return meta


def render_ingress(
    graph: Graph, component: Component, spec: IngressSpec, name: str | None = None
) -> dict[str, Any] | None:
    """The frontend's Ingress (named after its Service), or None when the spec is disabled or names no class."""
    if not spec.enabled or not spec.class_name:
        return None
    name = name or service_name(graph, component)
    host = ingress_host(spec)
    path = {
        "path": "/",
        "pathType": "Prefix",
        "backend": {"service": {"name": name, "port": {"number": FRONTEND_PORT}}},
    }
    rule = {"host": host, "http": {"paths": [path]}}
    ingress_spec: dict[str, Any] = {"ingressClassName": spec.class_name, "rules": [rule]}
    if spec.tls is not None:
        tls: dict[str, Any] = {"hosts": [host]}
        if spec.tls.secret_name:
            tls["secretName"] = spec.tls.secret_name
        ingress_spec["tls"] = [tls]
    return {
        "apiVersion": INGRESS_API_VERSION,
        "kind": "Ingress",
        # The spec's labels and annotations (upstream's GenerateComponentIngress drops them).
        "metadata": _metadata(name, graph, spec.labels, annotations=spec.annotations),
        "spec": ingress_spec,
    }


def render_virtual_service(
    graph: Graph, component: Component, spec: IngressSpec, operator_config: OperatorConfig, name: str | None = None
) -> dict[str, Any] | None:
    """The frontend's Istio VirtualService, when the platform has a gateway and the spec is VS-enabled."""
    if not operator_config.ingress.virtualServiceGateway or not spec.virtual_service_enabled:
        return None
    name = name or service_name(graph, component)
    route = {"destination": {"host": name, "port": {"number": FRONTEND_PORT}}}
    return {
        "apiVersion": ISTIO_API_VERSION,
        "kind": "VirtualService",
        "metadata": _metadata(name, graph),
        "spec": {
            "hosts": [ingress_host(spec)],
            "gateways": [spec.virtual_service_gateway],
            "http": [{"match": [{"uri": {"prefix": "/"}}], "route": [route]}],
        },
    }


# --- EPP: ConfigMap, InferencePool, DestinationRule ---------------------------------------


def epp_component(graph: Graph) -> Component | None:
    """The EPP component; with several (v1alpha1 allows it), the first by name, where upstream's pick is random."""
    return next((c for c in graph.components if c.component_type == "epp"), None)


def _epp_labels(graph: Graph, epp: Component) -> dict[str, str]:
    return {GRAPH_NAME: graph.name, COMPONENT: epp.name, COMPONENT_TYPE: "epp"}


def epp_config_yaml(config: dict[str, Any]) -> str:
    document = {**config, "apiVersion": EPP_CONFIG_API_VERSION, "kind": EPP_CONFIG_KIND}
    return yaml.safe_dump(document, sort_keys=True, default_flow_style=False, allow_unicode=True)


def render_epp_configmap(graph: Graph, epp: Component) -> dict[str, Any] | None:
    if epp.epp_config is None or epp.epp_config_ref is not None:
        return None
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _metadata(epp_config_map_name(graph.name), graph, _epp_labels(graph, epp)),
        "data": {EPP_CONFIG_KEY: epp_config_yaml(epp.epp_config)},
    }


def render_inference_pool(graph: Graph, epp: Component) -> dict[str, Any]:
    selector = {COMPONENT_CLASS: WORKER_CLASS, NAMESPACE: dynamo_namespace(graph, epp)}
    return {
        "apiVersion": INFERENCE_POOL_API_VERSION,
        "kind": "InferencePool",
        "metadata": _metadata(inference_pool_name(graph), graph, _epp_labels(graph, epp)),
        "spec": {
            "targetPorts": [{"number": FRONTEND_PORT}],
            "selector": {"matchLabels": dict(sorted(selector.items()))},
            "endpointPickerRef": {
                "kind": "Service",
                "name": service_name(graph, epp),
                "port": {"number": EPP_GRPC_PORT},
            },
        },
    }


def mesh_enabled(operator_config: OperatorConfig) -> bool:
    mesh = operator_config.serviceMesh
    return mesh.provider == "istio" and mesh.enabled is not False


def render_destination_rule(graph: Graph, epp: Component, operator_config: OperatorConfig) -> dict[str, Any] | None:
    if not mesh_enabled(operator_config):
        return None
    istio = operator_config.serviceMesh.istio
    name = service_name(graph, epp)
    tls: dict[str, Any] = {"mode": istio.tlsMode, "insecureSkipVerify": istio.insecureSkipVerify}
    if istio.tlsMode == "MUTUAL":
        mutual = {
            "clientCertificate": istio.clientCertificate,
            "privateKey": istio.privateKey,
            "caCertificates": istio.caCertificates,
        }
        tls.update({k: v for k, v in mutual.items() if v})
    return {
        "apiVersion": ISTIO_API_VERSION,
        "kind": "DestinationRule",
        "metadata": _metadata(name, graph),
        "spec": {"host": f"{name}.{graph.namespace}.svc.cluster.local", "trafficPolicy": {"tls": tls}},
    }


def render_frontend_mesh(
    graph: Graph, component: Component, operator_config: OperatorConfig, name: str | None = None
) -> dict[str, dict[str, Any]]:
    """A frontend's Ingress and VirtualService (either may be absent), named ``name`` or after its Service."""
    if component.component_type != "frontend":
        return {}
    spec = component.ingress if component.ingress is not None else default_ingress(graph, operator_config)
    desired = {
        ingress_resource_name(component.key): render_ingress(graph, component, spec, name),
        virtual_service_resource_name(component.key): render_virtual_service(
            graph, component, spec, operator_config, name
        ),
    }
    return {k: v for k, v in desired.items() if v is not None}


def render_mesh(graph: Graph, operator_config: OperatorConfig, *, frontend: bool = True) -> dict[str, dict[str, Any]]:
    """Composed resource name -> object for every networking child of the graph; ``frontend=False`` leaves
    the frontend's Ingress and VirtualService out (on the component pathway its DCD composes them)."""
    desired: dict[str, dict[str, Any] | None] = {}
    if frontend:
        for component in graph.components:
            desired.update(render_frontend_mesh(graph, component, operator_config))
    epp = epp_component(graph)
    if epp is not None:
        desired[CONFIGMAP_RESOURCE] = render_epp_configmap(graph, epp)
        desired[INFERENCE_POOL_RESOURCE] = render_inference_pool(graph, epp)
        desired[destination_rule_resource_name(epp.key)] = render_destination_rule(graph, epp, operator_config)
    return {name: obj for name, obj in sorted(desired.items()) if obj is not None}
