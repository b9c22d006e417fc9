"""The dynamo-platform EnvironmentConfig changes rendering as upstream's OperatorConfiguration does."""

from __future__ import annotations

from typing import Any

import pytest

from functions.api.normalise import graph_from_xr
from functions.api.operator_config import OperatorConfig, OperatorConfigError, read_operator_config
from functions.contract import StepRequest
from functions.kinds.graph.graph_render_step import render_graph, render_graph_deployment
from functions.tooling.manifests import claim_to_xr

CLAIM = {
    "apiVersion": "nvidia.com/v1beta1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "g", "namespace": "ns", "annotations": {"nvidia.com/kai-scheduler-queue": " team-a "}},
    "spec": {
        "components": [
            {
                "name": "Frontend",
                "type": "frontend",
                "podTemplate": {
                    "spec": {"containers": [{"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"}]}
                },
            },
            {
                "name": "Worker",
                "type": "worker",
                "podTemplate": {
                    "spec": {"containers": [{"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"}]}
                },
            },
        ]
    },
}


def env_config(data: dict[str, Any], name: str = "dynamo-platform") -> dict[str, Any]:
    return {"apiVersion": "apiextensions.crossplane.io/v1beta1", "kind": "EnvironmentConfig",
            "metadata": {"name": name}, "data": data}  # fmt: skip


def rendered(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return render_graph(graph_from_xr(claim_to_xr(CLAIM)), read_operator_config([env_config(data)]))


def test_absent_config_means_upstream_defaults() -> None:
    config = read_operator_config([env_config({"discovery": {"backend": "etcd"}}, name="something-else")])
    assert config == OperatorConfig()
    assert config.orchestrators.grove.terminationDelay == "15m"
    assert config.discovery.backend == "kubernetes"


def test_termination_delay_and_infrastructure_env() -> None:
    out = rendered({"orchestrators": {"grove": {"terminationDelay": "4h"}},
                    "infrastructure": {"modelExpressURL": "http://mx:8001"}})  # fmt: skip
    template = out["podcliqueset"]["spec"]["template"]
    assert template["terminationDelay"] == "4h0m0s"
    main = template["cliques"][0]["spec"]["podSpec"]["containers"][0]
    assert {"name": "MODEL_EXPRESS_URL", "value": "http://mx:8001"} in main["env"]
    assert not any(e["name"] == "NATS_SERVER" for e in main["env"])


def test_etcd_discovery_drops_component_services_and_discovery_rbac() -> None:
    out = rendered({"discovery": {"backend": "etcd"}})
    assert sorted(out) == ["podcliqueset", "service-frontend"]
    clique = out["podcliqueset"]["spec"]["template"]["cliques"][1]
    env = {e["name"] for e in clique["spec"]["podSpec"]["containers"][0]["env"]}
    assert "DYN_DISCOVERY_BACKEND" not in env
    assert "serviceAccountName" not in clique["spec"]["podSpec"]
    assert "nvidia.com/dynamo-discovery-enabled" not in clique["labels"]


def test_kubernetes_discovery_composes_service_per_component_and_rbac() -> None:
    out = rendered({})
    assert sorted(out) == [
        "discovery-role", "discovery-rolebinding", "discovery-serviceaccount",
        "podcliqueset", "service-frontend", "service-worker",
    ]  # fmt: skip
    assert out["discovery-rolebinding"]["subjects"] == [
        {"kind": "ServiceAccount", "name": "g-k8s-service-discovery", "namespace": "ns"}
    ]
    clique = out["podcliqueset"]["spec"]["template"]["cliques"][0]
    assert clique["labels"]["nvidia.com/dynamo-discovery-backend"] == "kubernetes"
    assert clique["annotations"]["nvidia.com/dynamo-discovery-backend"] == "kubernetes"
    assert clique["spec"]["podSpec"]["serviceAccountName"] == "g-k8s-service-discovery"


def test_kai_scheduler_sets_scheduler_and_queue_label() -> None:
    out = rendered({"orchestrators": {"kaiScheduler": {"enabled": True}}})
    for clique in out["podcliqueset"]["spec"]["template"]["cliques"]:
        assert clique["spec"]["podSpec"]["schedulerName"] == "kai-scheduler"
        assert clique["labels"]["kai.scheduler/queue"] == "team-a"


def test_grove_disabled_selects_the_component_pathway() -> None:
    request = StepRequest(
        input={},
        observed_composite=claim_to_xr(CLAIM),
        required={"platform": [env_config({"orchestrators": {"grove": {"enabled": False}}})]},
    )
    rsp = render_graph_deployment(request)
    assert not rsp.results
    kinds = {r.resource["kind"] for r in rsp.desired_resources.values()}
    assert "XDynamoComponentDeployment" in kinds and "PodCliqueSet" not in kinds


def test_bad_config_is_a_fatal_naming_the_field() -> None:
    with pytest.raises(OperatorConfigError, match=r"data\.discovery\.backend: Input should be"):
        read_operator_config([env_config({"discovery": {"backend": "consul"}})])
