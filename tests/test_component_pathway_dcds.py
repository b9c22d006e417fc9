"""The DynamoComponentDeployments a DGD composes, as upstream's ``generateSingleDCD`` writes them and the operator's
API server returns them at v1beta1: a v1alpha1 graph's in the v1beta1 shape (``service_as_component``), the
``backendFramework`` of every one, the origin version in the pod template only, the planner's ServiceAccount, and
what their own step renders from them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fixtures.rendering import render_xr, rendered
from functions.api.conversion import service_as_component
from functions.contract import StepRequest
from functions.kinds.graph.graph_render_step import render_graph_deployment
from functions.tooling.manifests import claim_to_xr

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"
ORIGIN = "nvidia.com/dynamo-operator-origin-version"
VLLM = {"image": IMAGE, "command": ["python3", "-m", "dynamo.vllm"], "args": ["--model", "m"]}


def claim(services: dict[str, Any], api: str = "nvidia.com/v1alpha1", **spec: Any) -> dict[str, Any]:
    key = "services" if api.endswith("v1alpha1") else "components"
    return {
        "apiVersion": api,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns", "annotations": {"nvidia.com/enable-grove": "false"}},
        "spec": {key: services, **spec},
    }


def dcds(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Component name -> its DCD, whichever shape."""
    out = {}
    for obj in rendered(doc):
        if obj["kind"].endswith("DynamoComponentDeployment"):
            out[obj["spec"].get("name") or obj["spec"].get("serviceName")] = obj
    return out


WORKER = {"componentType": "worker", "extraPodSpec": {"mainContainer": dict(VLLM)}}
FRONTEND = {"componentType": "frontend", "extraPodSpec": {"mainContainer": {"image": IMAGE}}}


@pytest.mark.parametrize(
    ("service", "expected"),
    [
        pytest.param(
            {
                "componentType": "worker",
                "subComponentType": "decode",
                "extraPodSpec": {"mainContainer": {"image": "i"}},
            },
            {"name": "W", "type": "decode", "podTemplate": {"spec": {"containers": [{"name": "main", "image": "i"}]}}},
            id="promoted-sub-type",
        ),
        pytest.param(
            {"componentType": "frontend", "dynamoNamespace": "old", "serviceName": "X", "autoscaling": {}},
            {"name": "W", "type": "frontend"},
            id="no-pod-template-and-alpha-only-fields-dropped",
        ),
        pytest.param(
            {
                "envs": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                "envFromSecret": "s",
                "resources": {"limits": {"gpu": "1", "cpu": "2"}, "requests": {"custom": {"x/y": "3"}}},
                "extraPodSpec": {"mainContainer": {"env": [{"name": "B", "value": "m"}, {"name": "C", "value": "3"}]}},
            },
            {
                "name": "W",
                "podTemplate": {
                    "spec": {
                        "containers": [
                            {
                                "name": "main",
                                # the service's envs first, the main container's replacing by name or appended
                                "env": [
                                    {"name": "A", "value": "1"},
                                    {"name": "B", "value": "m"},
                                    {"name": "C", "value": "3"},
                                ],
                                "envFrom": [{"secretRef": {"name": "s"}}],
                                "resources": {"limits": {"cpu": "2", "nvidia.com/gpu": "1"}, "requests": {"x/y": "3"}},
                            }
                        ]
                    }
                },
            },
            id="dedicated-fields-into-main",
        ),
        pytest.param(
            {"envFromSecret": "s", "extraPodSpec": {"mainContainer": {"envFrom": [{"configMapRef": {"name": "c"}}]}}},
            {
                "name": "W",
                "podTemplate": {
                    "spec": {"containers": [{"name": "main", "envFrom": [{"configMapRef": {"name": "c"}}]}]}
                },
            },
            id="the-main-containers-own-list-wins",
        ),
        pytest.param(
            {"sharedMemory": {"size": "2Gi"}},
            {"name": "W", "sharedMemorySize": "2Gi"},
            id="shared-memory-size",
        ),
        pytest.param(
            {"sharedMemory": {"disabled": True}}, {"name": "W", "sharedMemorySize": "0"}, id="no-shared-memory"
        ),
        pytest.param(
            {
                "volumeMounts": [
                    {"name": "models", "mountPoint": "/models"},
                    {"name": "cache", "mountPoint": "/cache", "useAsCompilationCache": True},
                ]
            },
            {
                "name": "W",
                "compilationCache": {"pvcName": "cache", "mountPath": "/cache"},
                "podTemplate": {
                    "spec": {
                        "containers": [
                            {
                                "name": "main",
                                # the cache's mount too (upstream buildMainContainerFromDedicated)
                                "volumeMounts": [
                                    {"name": "models", "mountPath": "/models"},
                                    {"name": "cache", "mountPath": "/cache"},
                                ],
                            }
                        ]
                    }
                },
            },
            id="compilation-cache",
        ),
        pytest.param(
            {"volumeMounts": [{"name": "cache", "mountPoint": "/cache", "useAsCompilationCache": True}]},
            {"name": "W", "compilationCache": {"pvcName": "cache", "mountPath": "/cache"}},
            id="compilation-cache-alone-makes-no-pod-template",
        ),
        pytest.param(
            {"frontendSidecar": {"image": "f", "args": ["-m", "dynamo.frontend"], "envFromSecret": "s"}},
            {
                "name": "W",
                "frontendSidecar": "sidecar-frontend",
                "podTemplate": {
                    "spec": {
                        "containers": [
                            {"name": "main"},
                            {
                                "name": "sidecar-frontend",
                                "image": "f",
                                "args": ["-m", "dynamo.frontend"],
                                "envFrom": [{"secretRef": {"name": "s"}}],
                            },
                        ]
                    }
                },
            },
            id="frontend-sidecar",
        ),
        pytest.param(
            {
                "gpuMemoryService": {"enabled": True, "mode": "intraPod", "deviceClassName": "gpu.nvidia.com"},
                "failover": {"enabled": True, "mode": "intraPod", "numShadows": 1},
                "scalingAdapter": {"enabled": True},
            },
            {
                "name": "W",
                "scalingAdapter": {},
                "experimental": {
                    "gpuMemoryService": {"mode": "IntraPod", "deviceClassName": "gpu.nvidia.com"},
                    "failover": {"mode": "IntraPod", "numShadows": 1},
                },
            },
            id="experimental",
        ),
    ],
)
def test_a_service_converts_as_upstreams_conversion_writes_it(
    service: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert service_as_component("W", service) == expected


def test_a_v1alpha1_graphs_dcds_are_in_the_v1beta1_shape_as_the_operator_reads_them() -> None:
    services = {
        "Frontend": FRONTEND,
        "W": {**WORKER, "sharedMemory": {"size": "2Gi"}, "envFromSecret": "hf"},
    }
    doc = claim(services, envs=[{"name": "DYN_LOG", "value": "info"}])
    worker = dcds(doc)["W"]["spec"]
    assert not {
        "serviceName",
        "componentType",
        "dynamoNamespace",
        "labels",
        "envs",
        "extraPodSpec",
        "sharedMemory",
    } & set(worker)
    assert (worker["name"], worker["type"], worker["sharedMemorySize"]) == ("W", "worker", "2Gi")
    (main,) = worker["podTemplate"]["spec"]["containers"]
    assert main["env"] == [{"name": "DYN_LOG", "value": "info"}]  # the graph's envs, merged as upstream's do
    assert main["envFrom"] == [{"secretRef": {"name": "hf"}}]


@pytest.mark.parametrize("api", ["nvidia.com/v1alpha1", "nvidia.com/v1beta1"])
def test_the_origin_version_travels_in_the_pod_template_only(api: str) -> None:
    """Upstream propagates the DGD's origin version into each DCD's pod template, not onto the DCD itself; the
    DCD's step still gates vLLM multiprocessing on it, and drops it from the pods."""
    decode = (
        {"D": {**WORKER, "multinode": {"nodeCount": 2}, "resources": {"limits": {"gpu": "1"}}}}
        if api.endswith("v1alpha1")
        else [
            {
                "name": "D",
                "type": "worker",
                "multinode": {"nodeCount": 2},
                "podTemplate": {
                    "spec": {"containers": [{"name": "main", **VLLM, "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}
                },
            }
        ]
    )
    dcd = dcds(claim(decode, api))["D"]
    assert ORIGIN not in (dcd["metadata"].get("annotations") or {})
    assert dcd["spec"]["podTemplate"]["metadata"]["annotations"][ORIGIN] == "1.5.0"
    (lws,) = [o for o in render_xr(dcd) if o["kind"] == "LeaderWorkerSet"]
    for role in ("leaderTemplate", "workerTemplate"):
        template = lws["spec"]["leaderWorkerTemplate"][role]
        assert "VLLM_NIXL_SIDE_CHANNEL_HOST" in {e["name"] for e in template["spec"]["containers"][0]["env"]}  # mp
        assert ORIGIN not in (template["metadata"].get("annotations") or {})


@pytest.mark.parametrize(
    ("services", "spec", "expected"),
    [
        pytest.param({"F": FRONTEND, "W": WORKER}, {}, "vllm", id="detected-from-a-worker"),
        pytest.param({"F": FRONTEND}, {"backendFramework": "sglang"}, "sglang", id="declared"),
        pytest.param({"F": FRONTEND}, {}, None, id="no-worker-none"),
    ],
)
def test_every_dcd_carries_the_graphs_backend_framework(
    services: dict[str, Any], spec: dict[str, Any], expected: str | None
) -> None:
    """Upstream ``backendFrameworkForGeneratedDCDs``: the DGD's, else the one its workers' commands launch."""
    for dcd in dcds(claim(services, **spec)).values():
        assert dcd["spec"].get("backendFramework") == expected


def test_workers_launching_two_backends_are_refused_on_the_component_pathway() -> None:
    sglang = {
        "componentType": "worker",
        "extraPodSpec": {"mainContainer": {"image": IMAGE, "command": ["python3", "-m", "dynamo.sglang"]}},
    }
    xr = claim_to_xr(claim({"A": WORKER, "B": sglang}))
    rsp = render_graph_deployment(StepRequest(input={}, observed_composite=xr))
    assert rsp.fatal
    assert "multiple backend frameworks detected for generated DynamoComponentDeployments" in rsp.results[0].message


def test_a_dcd_composed_without_a_backend_framework_keeps_none() -> None:
    """backendFramework is immutable on a DCD: one composed before the package set it stays without."""
    xr = claim_to_xr(claim({"W": WORKER}))
    first = render_graph_deployment(StepRequest(input={}, observed_composite=xr))
    observed = {}
    for key, desired in first.desired_resources.items():
        obj = copy.deepcopy(desired.resource)
        if obj["kind"].endswith("DynamoComponentDeployment"):
            obj["spec"].pop("backendFramework")
        observed[key] = obj
    again = render_graph_deployment(StepRequest(input={}, observed_composite=xr, observed_resources=observed))
    specs = [d.resource["spec"] for d in again.desired_resources.values() if d.resource["kind"].endswith("Deployment")]
    assert specs and all("backendFramework" not in s for s in specs)


@pytest.mark.parametrize("api", ["nvidia.com/v1alpha1", "nvidia.com/v1beta1"])
def test_the_planners_dcd_names_its_service_account(api: str) -> None:
    """Upstream sets ``planner-serviceaccount`` on the planner DCD's pod template, whatever it says."""
    services = (
        {
            "P": {
                "componentType": "planner",
                "extraPodSpec": {"serviceAccountName": "mine", "mainContainer": {"image": IMAGE}},
            }
        }
        if api.endswith("v1alpha1")
        else [
            {
                "name": "P",
                "type": "planner",
                "podTemplate": {
                    "spec": {"serviceAccountName": "mine", "containers": [{"name": "main", "image": IMAGE}]}
                },
            }
        ]
    )
    dcd = dcds(claim(services, api))["P"]
    assert dcd["spec"]["podTemplate"]["spec"]["serviceAccountName"] == "planner-serviceaccount"
    (deployment,) = [o for o in render_xr(dcd) if o["kind"] == "Deployment"]
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "planner-serviceaccount"


def test_an_inline_epp_config_is_held_as_the_operator_holds_it() -> None:
    """The operator stamps the config's apiVersion and kind while rendering its ConfigMap, before the DCD copies
    it, and Go writes each plugin's name."""
    config = {
        "plugins": [{"type": "a"}, {"name": "b", "type": "b"}],
        "schedulingProfiles": [{"name": "p", "plugins": [{"pluginRef": "b", "weight": 1}]}],
    }
    epp = {"componentType": "epp", "eppConfig": {"config": config}, "extraPodSpec": {"mainContainer": {"image": IMAGE}}}
    held = dcds(claim({"Epp": epp}))["Epp"]["spec"]["eppConfig"]["config"]
    assert held == {
        "apiVersion": "inference.networking.x-k8s.io/v1alpha1",
        "kind": "EndpointPickerConfig",
        "plugins": [{"name": "", "type": "a"}, {"name": "b", "type": "b"}],
        "schedulingProfiles": [{"name": "p", "plugins": [{"pluginRef": "b", "weight": 1}]}],
    }


def test_an_empty_env_value_is_left_out_of_the_dcd_as_go_writes_it() -> None:
    components = [
        {
            "name": "W",
            "type": "worker",
            "podTemplate": {
                "spec": {"containers": [{"name": "main", **VLLM, "env": [{"name": "LD_LIBRARY_PATH", "value": ""}]}]}
            },
        }
    ]
    (main,) = dcds(claim(components, "nvidia.com/v1beta1"))["W"]["spec"]["podTemplate"]["spec"]["containers"]
    assert {"name": "LD_LIBRARY_PATH"} in main["env"]


@pytest.mark.parametrize(
    "service",
    [
        pytest.param({"componentType": "main"}, id="a-type-v1beta1-lacks"),
        pytest.param({"componentType": "frontend", "ingress": {"enabled": True, "host": "h"}}, id="its-own-ingress"),
        pytest.param({"componentType": "worker", "subComponentType": "other"}, id="a-sub-type-not-promoted"),
    ],
)
def test_a_service_v1beta1_cannot_hold_keeps_the_v1alpha1_shape(service: dict[str, Any]) -> None:
    """What v1beta1 has no place for would change what the DCD renders: its DCD stays a v1alpha1 one (upstream
    refuses a type it lacks, and keeps the rest in its conversion record annotation)."""
    spec = dcds(claim({"S": {**service, "extraPodSpec": {"mainContainer": dict(VLLM)}}}))["S"]["spec"]
    assert spec["serviceName"] == "S" and "podTemplate" not in spec
    assert spec["annotations"][ORIGIN] == "1.5.0"


def test_service_as_component_is_pure() -> None:
    service = {
        "envs": [{"name": "A", "value": "1"}],
        "extraPodSpec": {"mainContainer": {"env": [{"name": "A", "value": "2"}]}},
    }
    before = copy.deepcopy(service)
    service_as_component("W", service)
    assert service == before
