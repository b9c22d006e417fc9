"""The intra-pod GPU Memory Service: the ResourceClaimTemplate, the ``gms-server`` sidecar and client wiring on
both pathways, upstream's rules, and checkpoints taken and restored with it (reference
checkpoint-gms-dgdr-model.md §1.3, §1.4, §1.7, §3.2-§3.4)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from functions.cli.manifests import find_composition, load_documents
from functions.cli.pipeline import RenderError, render
from functions.cli.render import admitted_xr
from server import REPO

COMPOSITIONS = load_documents(REPO / "compositions")
PLATFORM = load_documents(REPO / "examples" / "platform" / "dynamo-platform.yaml")
Obj = dict[str, Any]


def graph(gms: Obj | None = None, *, grove: bool = True, checkpoint: Obj | None = None, **main: Any) -> Obj:
    worker: Obj = {
        "name": "VllmWorker",
        "type": "worker",
        "experimental": {"gpuMemoryService": gms if gms is not None else {}},
        "podTemplate": {"spec": {"containers": [{
            "name": "main", "image": "vllm:1", "command": ["python3", "-m", "dynamo.vllm"],
            "args": ["--model", "m", "--load-format", "gms"],
            "resources": {"limits": {"nvidia.com/gpu": "2"}, "requests": {"cpu": "1"}}, **main,
        }]}},
    }  # fmt: skip
    if checkpoint is not None:
        worker["experimental"]["checkpoint"] = checkpoint
    claim: Obj = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "gms", "namespace": "demo"},
        "spec": {"backendFramework": "vllm", "components": [worker]},
    }
    if not grove:
        claim["metadata"]["annotations"] = {"nvidia.com/enable-grove": "false"}
    return claim


def run(claim: Obj, observed: list[Obj] | None = None, required: list[Obj] | None = None) -> Any:
    xr = admitted_xr(copy.deepcopy(claim), "demo", "Strict")
    return render(xr, find_composition(xr, COMPOSITIONS), observed or [], required or PLATFORM, converge=False)


def of_kind(objs: list[Obj], kind: str) -> list[Obj]:
    return [o for o in objs if o["kind"] == kind]


def worker_pod(out: Any) -> Obj:
    (pcs,) = of_kind(out.composed, "PodCliqueSet")
    (clique,) = pcs["spec"]["template"]["cliques"]
    return clique["spec"]["podSpec"]


def assert_intrapod_gms(pod: Obj, claim_template: str, clients: tuple[str, ...] = ("main",)) -> None:
    assert pod["resourceClaims"] == [{"name": "intrapod-shared-gpu", "resourceClaimTemplateName": claim_template}]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]
    assert {"name": "gms-intrapod-control", "emptyDir": {}} in pod["volumes"]
    (server,) = [c for c in pod["initContainers"] if c["name"] == "gms-server"]
    assert server["command"] == ["python3", "-m", "gpu_memory_service.cli.server"]
    assert server["restartPolicy"] == "Always" and not any(k.endswith("Probe") for k in server)
    containers = {c["name"]: c for c in pod["containers"]}
    assert server["image"] == containers[clients[0]]["image"]
    for container in (server, *(containers[n] for n in clients)):
        assert {"name": "intrapod-shared-gpu"} in container["resources"]["claims"]
        assert {"name": "GMS_SOCKET_DIR", "value": "/gms-intrapod-control"} in container["env"]
        assert {"name": "gms-intrapod-control", "mountPath": "/gms-intrapod-control"} in container["volumeMounts"]
        gpus = {**container["resources"].get("limits", {}), **container["resources"].get("requests", {})}
        assert "nvidia.com/gpu" not in gpus, "the GPUs moved to the claim"


def test_the_grove_worker_shares_its_gpus_through_the_gms_sidecar() -> None:
    out = run(graph())
    pod = worker_pod(out)
    assert_intrapod_gms(pod, "gms-vllmworker-gpu")
    assert pod["containers"][0]["resources"]["requests"] == {"cpu": "1"}, "other resources stay"
    (template,) = of_kind(out.composed, "ResourceClaimTemplate")
    assert template["metadata"]["name"] == "gms-vllmworker-gpu" and template["metadata"]["namespace"] == "demo"
    assert template["spec"] == {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
        "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 2}}]}}}  # fmt: skip


def test_extra_clients_and_the_device_class() -> None:
    sidecar = {"name": "loader", "image": "loader:1", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
    claim = graph({"deviceClassName": "gpu.example.com", "extraClientContainers": ["loader"]})
    claim["spec"]["components"][0]["podTemplate"]["spec"]["containers"].append(sidecar)
    out = run(claim)
    assert_intrapod_gms(worker_pod(out), "gms-vllmworker-gpu", ("main", "loader"))
    (template,) = of_kind(out.composed, "ResourceClaimTemplate")
    assert template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.example.com"


def test_the_component_pathway_deployment_gets_it_too() -> None:
    out = run(graph(grove=False))
    (dcd,) = of_kind(out.composed, "XDynamoComponentDeployment")
    assert of_kind(out.composed, "ResourceClaimTemplate"), "the DGD composes the claim template"
    nested = render(dcd, find_composition(dcd, COMPOSITIONS), [], PLATFORM, converge=False)
    (deployment,) = of_kind(nested.composed, "Deployment")
    assert_intrapod_gms(deployment["spec"]["template"]["spec"], "gms-vllmworker-gpu")
    assert not of_kind(nested.composed, "ResourceClaimTemplate"), "a DGD's DCD composes no claim template"


def test_a_standalone_dcd_composes_its_own_claim_template() -> None:
    dcd = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "decode", "namespace": "demo"},
        "spec": {
            "backendFramework": "vllm", "componentType": "worker", "gpuMemoryService": {"enabled": True},
            "resources": {"limits": {"gpu": "1"}},
            "extraPodSpec": {"mainContainer": {"image": "img", "command": ["python3", "-m", "dynamo.vllm"]}},
        },
    }  # fmt: skip
    out = run(dcd)
    (template,) = of_kind(out.composed, "ResourceClaimTemplate")
    assert template["metadata"]["name"] == "decode-decode-gpu"
    (deployment,) = of_kind(out.composed, "Deployment")
    assert_intrapod_gms(deployment["spec"]["template"]["spec"], "decode-decode-gpu")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c, p: p[0]["data"].update(dra={"enabled": False}), "requires DRA (Dynamic Resource Allocation)"),
        (lambda c, p: c["spec"]["components"][0].update(type="frontend"),
         "GPU memory service is only supported for worker, prefill, or decode components"),
        (lambda c, p: c["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0].update(resources={}),
         "requires podTemplate.spec.containers[main].resources.limits.nvidia.com/gpu >= 1"),
        (lambda c, p: c["spec"]["components"][0]["experimental"]["gpuMemoryService"].update(
            extraClientContainers=["ghost"]), "'ghost' does not name a container in podTemplate.spec.containers"),
        (lambda c, p: c["spec"]["components"][0]["experimental"].update(gpuMemoryService={"mode": "InterPod"}),
         "experimental.gpuMemoryService.mode: not supported yet"),
    ],
    ids=["dra-off", "frontend", "no-gpus", "unknown-client", "inter-pod"],
)  # fmt: skip
def test_upstreams_rules_are_fatal_naming_the_field(change: Any, message: str) -> None:
    claim, platform = graph(), copy.deepcopy(PLATFORM)
    change(claim, platform)
    with pytest.raises(RenderError, match=r"spec\.components\[0\]\.experimental\.gpuMemoryService") as err:
        run(claim, required=platform)
    assert message in str(err.value)


def test_checkpoint_gms_clients_need_an_intra_pod_gms() -> None:
    claim = graph(checkpoint={"enabled": True, "job": {"gmsClientContainers": ["saver"]}})
    del claim["spec"]["components"][0]["experimental"]["gpuMemoryService"]
    with pytest.raises(RenderError, match=r"job\.gmsClientContainers: requires gpuMemoryService to be set"):
        run(claim)


# --- checkpoints with a GPU memory service ----------------------------------------------------------------------


def test_an_auto_checkpoint_is_taken_and_restored_with_the_gms() -> None:
    saver = {"name": "saver", "image": "saver:1"}
    claim = graph(checkpoint={
        "enabled": True, "startupPolicy": "WaitForCheckpoint",
        "job": {"gmsClientContainers": ["saver"], "podTemplate": {"spec": {"containers": [saver]}}},
    })  # fmt: skip
    out = run(claim)
    (checkpoint,) = of_kind(out.composed, "DynamoCheckpoint")
    name = checkpoint["metadata"]["name"]
    assert checkpoint["spec"]["gpuMemoryService"] == {
        "enabled": True, "mode": "intraPod", "deviceClassName": "gpu.nvidia.com", "extraClientContainers": ["saver"],
    }  # fmt: skip
    job_pod = checkpoint["spec"]["job"]["podTemplateSpec"]["spec"]
    assert_intrapod_gms(job_pod, f"{name}-worker-gpu", ("main", "saver"))
    templates = {t["metadata"]["name"]: t for t in of_kind(out.composed, "ResourceClaimTemplate")}
    assert set(templates) == {"gms-vllmworker-gpu", f"{name}-worker-gpu"}
    assert templates[f"{name}-worker-gpu"]["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2

    # The checkpoint's own step finds the template prepared and counts the claim's GPUs for the wrapper.
    xr = admitted_xr(copy.deepcopy(checkpoint), "demo", "Strict")
    step = render(xr, find_composition(xr, COMPOSITIONS), [], [*PLATFORM, templates[f"{name}-worker-gpu"]],
                  converge=False)  # fmt: skip
    (job,) = of_kind(step.composed, "Job")
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["cuda-checkpoint"]

    # Ready: the worker restores with one gms-server and its wiring.
    ready = copy.deepcopy(checkpoint)
    ready["status"] = {"phase": "Ready", "checkpointID": name.removeprefix("checkpoint-")}
    pod = worker_pod(run(claim, observed=[ready]))
    assert [c["name"] for c in pod["initContainers"]].count("gms-server") == 1
    assert_intrapod_gms(pod, "gms-vllmworker-gpu")
    assert {"name": "DYN_SNAPSHOT_RESTORE_STANDBY", "value": "1"} in pod["containers"][0]["env"]


def test_a_gms_component_cannot_restore_from_a_checkpoint_without_one() -> None:
    claim = graph(checkpoint={"enabled": True, "checkpointRef": "plain"})
    plain = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoCheckpoint",
        "metadata": {"name": "plain", "namespace": "demo"},
        "spec": {"identity": {"model": "m", "backendFramework": "vllm"}, "job": {"podTemplateSpec": {}}},
        "status": {"phase": "Ready", "checkpointID": "abc"},
    }
    with pytest.raises(RenderError, match="gpuMemoryService restore requires resolved checkpoint 'plain'"):
        run(claim, required=[*PLATFORM, plain])
