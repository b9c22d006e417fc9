"""Intra-pod active/passive failover: ``main`` becomes ``engine-0`` and ``engine-1`` on the GPU memory service, and
upstream's rules (docs/upstream/checkpoint-gms-dgdr-model.md §3.2, §3.5)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fixtures.gms import COMPOSITIONS, DISCOVERY, PLATFORM, failover_graph, of_kind, run, worker_pod
from functions.tooling.manifests import find_composition
from functions.tooling.pipeline import RenderError, render

Obj = dict[str, Any]


def env(container: Obj) -> dict[str, Any]:
    return {e["name"]: e.get("value") for e in container["env"]}


def test_main_becomes_two_engines_on_the_gms() -> None:
    claim = failover_graph()
    claim["spec"]["components"][0]["podTemplate"]["spec"]["containers"].append({"name": "metrics", "image": "m:1"})
    pod = worker_pod(run(claim))
    assert [c["name"] for c in pod["containers"]] == ["engine-0", "engine-1", "metrics"]
    assert [c["name"] for c in pod["initContainers"]] == ["gms-server"], "one GMS server for both engines"
    for index, engine in enumerate(pod["containers"][:2]):
        assert engine["ports"] == [{"name": f"system-{index}", "containerPort": 9090 + index, "protocol": "TCP"}]
        values = env(engine)
        assert values["ENGINE_ID"] == str(index) and values["CONTAINER_NAME"] == f"engine-{index}"
        assert values["FAILOVER_LOCK_PATH"] == "/gms-intrapod-control/failover.lock"
        assert values["DYN_SYSTEM_STARTING_HEALTH_STATUS"] == "notready"
        assert values["DYN_SYSTEM_PORT"] == str(9090 + index) and values["DYN_SYSTEM_ENABLED"] == "true"
        assert values["DYN_FORWARDPASS_METRIC_PORT"] == str(20380 + index)
        assert values["DYN_VLLM_GMS_SHADOW_MODE"] == "true"
        assert values["VLLM_NIXL_SIDE_CHANNEL_PORT"] == str(5600 + index)
        assert values["DYN_VLLM_KV_EVENT_PORT"] == str(20080 + index)
        assert "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS" not in values and "DYN_HEALTH_CHECK_ENABLED" not in values
        names = [e["name"] for e in engine["env"]]
        appended = ["ENGINE_ID", "CONTAINER_NAME", "FAILOVER_LOCK_PATH", "DYN_SYSTEM_STARTING_HEALTH_STATUS",
                    "DYN_SYSTEM_PORT", "DYN_SYSTEM_ENABLED", "DYN_FORWARDPASS_METRIC_PORT"]  # fmt: skip
        assert names[-10:-3] == appended, "upstream's order"
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            if engine.get(probe, {}).get("httpGet"):
                assert engine[probe]["httpGet"]["port"] == f"system-{index}"
        assert {"name": "intrapod-shared-gpu"} in engine["resources"]["claims"]
    assert "--master-port" not in pod["containers"][0]["args"]
    assert pod["containers"][1]["args"][-2:] == ["--master-port", "29600"]


@pytest.mark.parametrize(
    ("args", "command", "want"),
    [
        (["--model", "m", "--master-port", "29500"], None, ["--model", "m", "--master-port", "29600"]),
        (["python3 -m dynamo.vllm --master-port=29000 --model m"], ["sh", "-c"],
         ["python3 -m dynamo.vllm --master-port=29100 --model m"]),
    ],
    ids=["token", "shell-string"],
)  # fmt: skip
def test_the_second_engine_moves_an_existing_master_port(
    args: list[str], command: list[str] | None, want: list[str]
) -> None:
    main: Obj = {"args": args}
    if command:
        main["command"] = command
    pod = worker_pod(run(failover_graph(**main)))
    assert pod["containers"][0]["args"] == args
    assert pod["containers"][1]["args"] == want


def test_the_component_pathway_deployment_runs_the_engines() -> None:
    out = run(failover_graph(grove=False))
    (dcd,) = of_kind(out.composed, "DynamoComponentDeployment")
    nested = render(dcd, find_composition(dcd, COMPOSITIONS), [], PLATFORM, converge=False)
    (deployment,) = of_kind(nested.composed, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["engine-0", "engine-1"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c["spec"]["components"][0]["experimental"].pop("gpuMemoryService"),
         "experimental.failover: gpuMemoryService is required when failover mode is 'IntraPod'"),
        (lambda c: c["metadata"]["annotations"].clear(),
         'metadata.annotations[nvidia.com/dynamo-kube-discovery-mode]: must be "container" when intra-pod failover'),
        (lambda c: (c["spec"].update(backendFramework="sglang"),
                    c["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0].update(
                        command=["python3", "-m", "dynamo.sglang"])),
         "experimental.failover: failover is currently supported only for vLLM (detected: sglang)"),
        (lambda c: c["spec"]["components"][0]["experimental"]["failover"].update(mode="InterPod"),
         "experimental.failover.mode: must match gpuMemoryService.mode 'IntraPod'"),
    ],
    ids=["no-gms", "no-container-discovery", "sglang", "mode-mismatch"],
)  # fmt: skip
def test_upstreams_rules_are_fatal_naming_the_field(change: Any, message: str) -> None:
    claim = failover_graph()
    change(claim)
    with pytest.raises(RenderError) as err:
        run(claim)
    assert message in str(err.value)


def test_v1alpha1_intra_pod_failover_has_one_shadow() -> None:
    claim = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "fo", "namespace": "demo", "annotations": copy.deepcopy(DISCOVERY)},
        "spec": {"backendFramework": "vllm", "services": {"worker": {
            "componentType": "worker", "gpuMemoryService": {"enabled": True},
            "failover": {"enabled": True, "numShadows": 2}, "resources": {"limits": {"gpu": "1"}},
            "extraPodSpec": {"mainContainer": {"image": "vllm:1.0.0", "command": ["python3", "-m", "dynamo.vllm"]}},
        }}},
    }  # fmt: skip
    with pytest.raises(RenderError, match='is invalid for mode="intraPod": intraPod uses a fixed 1 primary'):
        run(claim)
