"""Networking children: frontend Ingress and Istio VirtualService, EPP ConfigMap, InferencePool and
DestinationRule; each present or absent by its conditions, with exact fields, valid against its schema."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest
import yaml

from fixtures.tooling import require_crds
from functions.api.normalise import graph_from_xr
from functions.api.operator_config import OperatorConfig
from functions.kinds.graph.graph_render_step import render_graph
from functions.tooling.validation import load_crds, validate_object

NS = "ns"
CLASS_ONLY = {"ingress": {"controllerClassName": "nginx"}}
GATEWAY = "istio-system/dynamo-gateway"
EPP_CONFIG = {
    "plugins": [
        {"type": "single-profile-handler"},
        {"name": "kv", "type": "kv-aware-scorer", "parameters": {"blockSize": 128, "enabled": True}},
        {"name": "picker", "type": "max-score-picker"},
    ],
    "schedulingProfiles": [
        {"name": "default", "plugins": [{"pluginRef": "kv", "weight": 1}, {"pluginRef": "picker", "weight": 1}]}
    ],
}
MESH_KINDS = {"Ingress", "VirtualService", "ConfigMap", "InferencePool", "DestinationRule"}


@pytest.fixture(scope="module")
def crds() -> dict:
    return {**load_crds(sorted(require_crds("istio").glob("*.yaml"))), **load_crds(require_crds("gaie"))}


def check_valid(obj: dict[str, Any], crds: dict) -> None:
    group = obj["apiVersion"].rpartition("/")[0]
    if group in ("networking.istio.io", "inference.networking.k8s.io"):
        violations = validate_object(obj, crds[(group, obj["kind"])])
        assert violations == [], "\n".join(map(str, violations))
    else:
        kubernetes_validate.validate(obj, "1.33", strict=True)


def render(
    services: dict[str, Any], operator_config: dict[str, Any] | None = None, name: str = "g"
) -> dict[str, dict[str, Any]]:
    claim = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"services": services},
    }
    return render_graph(graph_from_xr(claim), OperatorConfig.model_validate(operator_config or {}))


def mesh(out: dict[str, dict[str, Any]], crds: dict) -> dict[str, dict[str, Any]]:
    """The networking objects of a render, each checked against its schema."""
    found = {name: obj for name, obj in out.items() if obj["kind"] in MESH_KINDS and name != "wait-leader-configmap"}
    for obj in found.values():
        check_valid(obj, crds)
    return found


def frontend(**ingress: Any) -> dict[str, Any]:
    return {"Frontend": {"componentType": "frontend", **({"ingress": ingress} if ingress else {})}}


def ingress(name: str, host: str, class_name: str, **extra: Any) -> dict[str, Any]:
    tls = extra.pop("tls", None)
    spec: dict[str, Any] = {
        "ingressClassName": class_name,
        "rules": [
            {
                "host": host,
                "http": {
                    "paths": [
                        {
                            "path": "/",
                            "pathType": "Prefix",
                            "backend": {"service": {"name": name, "port": {"number": 8000}}},
                        }
                    ]
                },
            }
        ],
    }
    if tls is not None:
        spec["tls"] = [{"hosts": [host], **tls}]
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": name, "namespace": NS, **extra},
        "spec": spec,
    }


def virtual_service(name: str, host: str, gateway: str) -> dict[str, Any]:
    return {
        "apiVersion": "networking.istio.io/v1beta1",
        "kind": "VirtualService",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "hosts": [host],
            "gateways": [gateway],
            "http": [
                {
                    "match": [{"uri": {"prefix": "/"}}],
                    "route": [{"destination": {"host": name, "port": {"number": 8000}}}],
                }
            ],
        },
    }


USER_INGRESS = {
    "enabled": True,
    "host": "api",
    "hostPrefix": "v1-",
    "hostSuffix": "corp.example",
    "ingressControllerClassName": "traefik",
    "tls": {"secretName": "api-tls"},
    "labels": {"team": "ml"},
    "annotations": {"traefik.ingress.kubernetes.io/router.tls": "true"},
}

INGRESS_CASES = [
    pytest.param(frontend(), {}, {}, id="no-config-nothing"),
    pytest.param(
        frontend(), CLASS_ONLY, {"ingress-frontend": ingress("g-frontend", "g.local", "nginx")}, id="platform-class"
    ),
    pytest.param(
        frontend(),
        {"ingress": {"controllerClassName": "nginx", "hostSuffix": "example.com", "controllerTLSSecretName": "wild"}},
        {"ingress-frontend": ingress("g-frontend", "g.example.com", "nginx", tls={"secretName": "wild"})},
        id="platform-suffix-and-tls",
    ),
    pytest.param(
        frontend(),
        {"ingress": {"virtualServiceGateway": GATEWAY}},
        {"virtualservice-frontend": virtual_service("g-frontend", "g.local", GATEWAY)},
        id="platform-gateway-only-no-class",
    ),
    pytest.param(
        frontend(),
        {"ingress": {"virtualServiceGateway": GATEWAY, "controllerClassName": "nginx"}},
        {
            "ingress-frontend": ingress("g-frontend", "g.local", "nginx"),
            "virtualservice-frontend": virtual_service("g-frontend", "g.local", GATEWAY),
        },
        id="platform-gateway-and-class",
    ),
    pytest.param(
        frontend(**USER_INGRESS),
        {"ingress": {"controllerClassName": "nginx", "controllerTLSSecretName": "wild", "hostSuffix": "x.io"}},
        {
            "ingress-frontend": ingress(
                "g-frontend",
                "v1-api.corp.example",
                "traefik",
                tls={"secretName": "api-tls"},
                labels={"team": "ml"},
                annotations={"traefik.ingress.kubernetes.io/router.tls": "true"},
            )
        },
        id="own-spec-replaces-default",
    ),
    pytest.param(
        frontend(enabled=True, host="api"), CLASS_ONLY, {}, id="own-spec-without-class-not-merged-with-platform"
    ),
    pytest.param(
        frontend(enabled=False, host="api", ingressControllerClassName="nginx"),
        {"ingress": {"controllerClassName": "nginx", "virtualServiceGateway": GATEWAY}},
        {},
        id="own-spec-disabled",
    ),
    pytest.param(
        frontend(enabled=True, host="api", tls={}, ingressControllerClassName="nginx"),
        {},
        {"ingress-frontend": ingress("g-frontend", "api.local", "nginx", tls={})},
        id="tls-without-secret",
    ),
    pytest.param(
        frontend(enabled=True, host="api", useVirtualService=True, virtualServiceGateway="ns/own"),
        {"ingress": {"virtualServiceGateway": GATEWAY}},
        {"virtualservice-frontend": virtual_service("g-frontend", "api.local", "ns/own")},
        id="own-virtual-service-gateway",
    ),
    pytest.param(
        frontend(enabled=True, host="api", useVirtualService=True, virtualServiceGateway="ns/own"),
        {},
        {},
        id="virtual-service-needs-platform-gateway",
    ),
    pytest.param(
        frontend(enabled=True, host="api", useVirtualService=True),
        {"ingress": {"virtualServiceGateway": GATEWAY}},
        {},
        id="virtual-service-needs-spec-gateway",
    ),
    pytest.param(
        frontend(enabled=True, host="api", virtualServiceGateway="ns/own"),
        {"ingress": {"virtualServiceGateway": GATEWAY}},
        {},
        id="virtual-service-needs-use-flag",
    ),
    pytest.param(
        {
            "W": {
                "componentType": "worker",
                "ingress": {"enabled": True, "host": "w", "ingressControllerClassName": "x"},
            }
        },
        {"ingress": {"controllerClassName": "nginx", "virtualServiceGateway": GATEWAY}},
        {},
        id="frontend-only",
    ),
]


@pytest.mark.parametrize(("services", "operator_config", "expected"), INGRESS_CASES)
def test_frontend_ingress_and_virtual_service(
    services: dict[str, Any], operator_config: dict[str, Any], expected: dict[str, Any], crds: dict
) -> None:
    assert mesh(render(services, operator_config), crds) == expected


def test_dotted_graph_name_routes_to_the_service_name() -> None:
    out = render(frontend(), {"ingress": {"controllerClassName": "nginx", "virtualServiceGateway": GATEWAY}}, "my.app")
    assert out["ingress-frontend"] == ingress("my-app-frontend", "my.app.local", "nginx")
    assert out["virtualservice-frontend"] == virtual_service("my-app-frontend", "my.app.local", GATEWAY)
    assert out["service-frontend"]["metadata"]["name"] == "my-app-frontend"


def test_every_frontend_gets_its_own_ingress(crds: dict) -> None:
    services = {**frontend(), "Api": {"componentType": "frontend"}}
    found = mesh(render(services, CLASS_ONLY), crds)
    assert found == {
        "ingress-api": ingress("g-api", "g.local", "nginx"),
        "ingress-frontend": ingress("g-frontend", "g.local", "nginx"),
    }


# --- EPP ---------------------------------------------------------------------------------

EPP_LABELS = {
    "nvidia.com/dynamo-component": "Epp",
    "nvidia.com/dynamo-component-type": "epp",
    "nvidia.com/dynamo-graph-deployment-name": "g",
}


def epp(**epp_config: Any) -> dict[str, Any]:
    return {
        "Epp": {"componentType": "epp", "eppConfig": epp_config or {"config": EPP_CONFIG}},
        "Worker": {"componentType": "worker"},
    }


def inference_pool(dynamo_namespace: str = "ns-g") -> dict[str, Any]:
    return {
        "apiVersion": "inference.networking.k8s.io/v1",
        "kind": "InferencePool",
        "metadata": {"name": "g-pool", "namespace": NS, "labels": EPP_LABELS},
        "spec": {
            "targetPorts": [{"number": 8000}],
            "selector": {
                "matchLabels": {
                    "nvidia.com/dynamo-component-class": "worker",
                    "nvidia.com/dynamo-namespace": dynamo_namespace,
                }
            },
            "endpointPickerRef": {"kind": "Service", "name": "g-epp", "port": {"number": 9002}},
        },
    }


def destination_rule(**tls: Any) -> dict[str, Any]:
    return {
        "apiVersion": "networking.istio.io/v1beta1",
        "kind": "DestinationRule",
        "metadata": {"name": "g-epp", "namespace": NS},
        "spec": {"host": "g-epp.ns.svc.cluster.local", "trafficPolicy": {"tls": tls}},
    }


EPP_CONFIG_YAML = """\
apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: single-profile-handler
- name: kv
  parameters:
    blockSize: 128
    enabled: true
  type: kv-aware-scorer
- name: picker
  type: max-score-picker
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: kv
    weight: 1
  - pluginRef: picker
    weight: 1
"""

EPP_CONFIG_MAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "g-epp-config", "namespace": NS, "labels": EPP_LABELS},
    "data": {"epp-config-dynamo.yaml": EPP_CONFIG_YAML},
}

ISTIO = {"provider": "istio"}
MUTUAL = {"tlsMode": "MUTUAL", "clientCertificate": "/c.pem", "privateKey": "/k.pem", "caCertificates": "/ca.pem"}

EPP_CASES = [
    pytest.param(epp(), {}, {"epp-configmap": EPP_CONFIG_MAP, "inferencepool": inference_pool()}, id="inline-config"),
    pytest.param(
        epp(configMapRef={"name": "mine", "key": "epp.yaml"}),
        {},
        {"inferencepool": inference_pool()},
        id="config-map-ref-no-configmap",
    ),
    pytest.param(
        epp(),
        {"serviceMesh": ISTIO},
        {
            "epp-configmap": EPP_CONFIG_MAP,
            "inferencepool": inference_pool(),
            "destinationrule-epp": destination_rule(mode="SIMPLE", insecureSkipVerify=True),
        },
        id="istio-default-simple",
    ),
    pytest.param(
        epp(),
        {"serviceMesh": {"provider": "istio", "enabled": False}},
        {"epp-configmap": EPP_CONFIG_MAP, "inferencepool": inference_pool()},
        id="istio-disabled",
    ),
    pytest.param(
        epp(),
        {"serviceMesh": {"enabled": True}},
        {"epp-configmap": EPP_CONFIG_MAP, "inferencepool": inference_pool()},
        id="mesh-without-provider",
    ),
    pytest.param(
        epp(),
        {"serviceMesh": {"provider": "istio", "enabled": True, "istio": MUTUAL}},
        {
            "epp-configmap": EPP_CONFIG_MAP,
            "inferencepool": inference_pool(),
            "destinationrule-epp": destination_rule(
                mode="MUTUAL",
                insecureSkipVerify=True,
                clientCertificate="/c.pem",
                privateKey="/k.pem",
                caCertificates="/ca.pem",
            ),
        },
        id="istio-mutual-with-client-cert",
    ),
    pytest.param(
        epp(),
        {
            "serviceMesh": {
                "provider": "istio",
                "istio": {**MUTUAL, "tlsMode": "ISTIO_MUTUAL", "insecureSkipVerify": False},
            }
        },
        {
            "epp-configmap": EPP_CONFIG_MAP,
            "inferencepool": inference_pool(),
            "destinationrule-epp": destination_rule(mode="ISTIO_MUTUAL", insecureSkipVerify=False),
        },
        id="istio-mutual-certs-only-for-mutual",
    ),
    pytest.param(frontend(), {"serviceMesh": ISTIO}, {}, id="no-epp-nothing"),
]


@pytest.mark.parametrize(("services", "operator_config", "expected"), EPP_CASES)
def test_epp_objects(
    services: dict[str, Any], operator_config: dict[str, Any], expected: dict[str, Any], crds: dict
) -> None:
    assert mesh(render(services, operator_config), crds) == expected


def test_epp_config_yaml_is_the_endpoint_picker_config() -> None:
    data = render(epp())["epp-configmap"]["data"]["epp-config-dynamo.yaml"]
    assert yaml.safe_load(data) == {
        "apiVersion": "inference.networking.x-k8s.io/v1alpha1",
        "kind": "EndpointPickerConfig",
        **EPP_CONFIG,
    }


def test_epp_config_type_meta_is_overwritten() -> None:
    config = {**EPP_CONFIG, "apiVersion": "example.com/v9", "kind": "Other"}
    data = yaml.safe_load(render(epp(config=config))["epp-configmap"]["data"]["epp-config-dynamo.yaml"])
    assert (data["apiVersion"], data["kind"]) == ("inference.networking.x-k8s.io/v1alpha1", "EndpointPickerConfig")


def epp_volume(out: dict[str, dict[str, Any]]) -> dict[str, Any]:
    cliques = out["podcliqueset"]["spec"]["template"]["cliques"]
    pod = next(c["spec"]["podSpec"] for c in cliques if c["name"] == "epp")
    return next(v for v in pod["volumes"] if v["name"] == "epp-config")


@pytest.mark.parametrize(
    ("epp_config", "config_map", "key"),
    [
        pytest.param({"config": EPP_CONFIG}, "g-epp-config", "epp-config-dynamo.yaml", id="composed"),
        pytest.param({"configMapRef": {"name": "mine", "key": "custom.yaml"}}, "mine", "custom.yaml", id="ref"),
        pytest.param({"configMapRef": {"name": "mine", "key": ""}}, "mine", "epp-config-dynamo.yaml", id="ref-no-key"),
    ],
)
def test_epp_pod_mounts_the_config_it_is_given(epp_config: dict[str, Any], config_map: str, key: str) -> None:
    assert epp_volume(render(epp(**epp_config))) == {
        "name": "epp-config",
        "configMap": {"name": config_map, "items": [{"key": key, "path": "epp-config-dynamo.yaml"}]},
    }


def test_inference_pool_selects_the_epp_dynamo_namespace() -> None:
    services = epp()
    services["Epp"]["globalDynamoNamespace"] = True
    assert render(services)["inferencepool"] == inference_pool("dynamo")


def test_v1beta1_epp_renders_the_same_objects() -> None:
    claim = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": NS},
        "spec": {
            "components": [
                {"name": "Epp", "type": "epp", "eppConfig": {"config": EPP_CONFIG}},
                {"name": "Worker", "type": "worker"},
            ]
        },
    }
    out = render_graph(graph_from_xr(claim), OperatorConfig.model_validate({"serviceMesh": ISTIO}))
    assert out["epp-configmap"] == EPP_CONFIG_MAP
    assert out["inferencepool"] == inference_pool()
    assert out["destinationrule-epp"] == destination_rule(mode="SIMPLE", insecureSkipVerify=True)


def test_v1beta1_frontend_gets_the_platform_default_ingress() -> None:
    claim = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": NS},
        "spec": {"components": [{"name": "Frontend", "type": "frontend"}]},
    }
    out = render_graph(graph_from_xr(claim), OperatorConfig.model_validate(CLASS_ONLY))
    assert out["ingress-frontend"] == ingress("g-frontend", "g.local", "nginx")


def test_composed_resource_names_are_sorted_and_stable() -> None:
    operator_config = {
        "ingress": {"controllerClassName": "nginx", "virtualServiceGateway": GATEWAY},
        "serviceMesh": ISTIO,
    }
    out = render({**frontend(), **epp()}, operator_config)
    assert list(out) == sorted(out)
    assert {
        "ingress-frontend",
        "virtualservice-frontend",
        "epp-configmap",
        "inferencepool",
        "destinationrule-epp",
    } <= set(out)
    assert render({**frontend(), **epp()}, operator_config) == out
