"""DynamoGraphDeploymentRequest: the profiling Job, the phases, the generated graph, the spec freeze, both versions.

Every case runs the real Composition pipeline in-process (one reconcile at a time, as ``crossplane render``); the
Job controller, the profiler and its sidecar are played by ``profiling_play``.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fixtures.profiling_play import (
    as_observed,
    composed,
    failed_output,
    final_config,
    job_failed,
    job_pod,
    job_running,
    job_succeeded,
    output_configmap,
    reconcile,
    running_output,
    success_output,
    with_status,
)
from fixtures.tooling import require_shared, shared_dir
from functions.kinds.request.profiling_job import COPIER_CONTAINER, PROFILING_RULES
from functions.kinds.request.request_rules import DISCOVERY_FAILED, product_sku
from functions.tooling.manifests import claim_to_xr, load_documents
from functions.tooling.pipeline import RenderError, RenderOutput
from functions.tooling.render import admitted_xr

REPO = Path(__file__).resolve().parents[1]
NS = "dynamo"
Obj = dict[str, Any]

BASE_SPEC: Obj = {
    "model": "Qwen/Qwen3-0.6B",
    "backend": "vllm",
    "image": "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.4.0",
    "hardware": {"gpuSku": "h100_sxm", "vramMb": 81920, "numGpusPerNode": 8},
    "sla": {"ttft": 500, "itl": 20},
    "features": {"mocker": {"enabled": True}},
}

GRAPH: Obj = {
    "apiVersion": "nvidia.com/v1beta1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "vllm-disagg", "labels": {"app": "qwen"}},
    "spec": {
        "backendFramework": "vllm",
        "components": [
            {"name": "Frontend", "type": "frontend", "replicas": 1,
             "podTemplate": {"spec": {"containers": [{"name": "main", "image": "nvcr.io/x/vllm-runtime:1.4.0"}]}}},
            {"name": "decode", "type": "decode", "replicas": 2, "runtimeVersionOverride": "1.3.0",
             "podTemplate": {"spec": {"containers": [{"name": "main", "image": "nvcr.io/x/vllm-runtime:1.4.0"}]}}},
        ],
    },
}  # fmt: skip
PLANNER_DATA: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "planner-profile-data"},
                     "data": {"prefill.json": "{}"}}  # fmt: skip


def request_xr(spec: Obj | None = None, name: str = "qwen", api: str = "v1beta1") -> Obj:
    claim = {
        "apiVersion": f"nvidia.com/{api}",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": name, "namespace": NS},
        "spec": copy.deepcopy(BASE_SPEC if spec is None else spec),
    }
    xr = claim_to_xr(claim)
    xr["metadata"].update(uid="6a1f0c52-0000-4000-8000-00000000d9d7", generation=1)
    return xr


def operator_config(data: Obj) -> Obj:
    return {"apiVersion": "apiextensions.crossplane.io/v1beta1", "kind": "EnvironmentConfig",
            "metadata": {"name": "dynamo-platform"}, "data": data}  # fmt: skip


def conditions(out: RenderOutput) -> dict[str, tuple[str, str, str]]:
    return {
        c["type"]: (c["status"], c.get("reason", ""), c.get("message", ""))
        for c in out.composite["status"]["conditions"]
        if c["type"] != "Ready"
    }


def kinds(out: RenderOutput) -> list[str]:
    return sorted(o["kind"] for o in out.composed)


def profiler_container(job: Obj) -> Obj:
    return job["spec"]["template"]["spec"]["containers"][0]


def profiler_config(job: Obj) -> Obj:
    args = profiler_container(job)["args"]
    assert args[0] == "--config" and args[2:] == ["--output-dir", "/data"]
    return json.loads(args[1])


class Flow:
    """One request driven reconcile by reconcile: the XR carries the status the last reconcile wrote."""

    def __init__(self, xr: Obj, required: list[Obj] | None = None) -> None:
        self.xr, self.required = xr, list(required or [])
        self.observed: dict[str, Obj] = {}
        self.out = self.step()

    def step(self) -> RenderOutput:
        self.out = reconcile(self.xr, list(self.observed.values()), self.required)
        self.xr = with_status(self.xr, self.out)
        return self.out

    def observe(self, kind: str, status: Obj | None = None) -> Obj:
        obj = as_observed(composed(self.out, kind), status)
        self.observed[kind] = obj
        return obj

    def output(self, data: dict[str, str]) -> None:
        name = self.xr["spec"]["claimRef"]["name"]
        self.required = [o for o in self.required if o.get("kind") != "ConfigMap"]
        self.required.append(output_configmap(name, NS, data))

    def profiled(self, *docs: Obj) -> RenderOutput:
        """The Job ran and the profiler chose ``docs`` (the graph and its extra documents)."""
        self.observe("Job", job_succeeded())
        self.output(success_output(final_config(*(docs or (GRAPH,)))))
        return self.step()

    @property
    def status(self) -> Obj:
        return self.out.composite["status"]


# --- Pending: the Job and its RBAC -------------------------------------------------------------------------------


def test_a_new_request_composes_the_profiling_job_with_upstreams_contract() -> None:
    flow = Flow(request_xr())
    assert kinds(flow.out) == ["Job", "Role", "RoleBinding", "ServiceAccount"]  # the binding with its Role
    assert flow.status["phase"] == "Pending" and flow.status["profilingJobName"] == "profile-qwen"
    assert conditions(flow.out) == {
        "Validation": ("True", "ValidationPassed", "DGDR spec validation passed"),
        "Profiling": ("False", "DiscoveringHardware", "Discovering GPU hardware and preparing profiling job"),
        "Succeeded": ("False", "Pending", "Discovering GPU hardware and preparing profiling job"),
    }
    job = composed(flow.out, "Job")
    labels = {"app": "dynamo-profiler", "dgdr": "qwen", "nvidia.com/managed-by": "dynamo-operator"}
    assert {k: job["metadata"]["labels"][k] for k in labels} == labels
    assert job["spec"]["backoffLimit"] == 0 and job["spec"]["template"]["metadata"]["labels"] == labels
    pod = job["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "profile-qwen" and pod["restartPolicy"] == "Never"
    assert pod["securityContext"] == {"fsGroup": 1000, "runAsGroup": 1000, "runAsNonRoot": True, "runAsUser": 1000}
    assert pod["imagePullSecrets"] == [{"name": "nvcr-imagepullsecret"}]
    profiler = profiler_container(job)
    assert profiler["command"] == ["python", "-m", "dynamo.profiler"] and profiler["workingDir"] == "/workspace"
    assert profiler_config(job) == {**BASE_SPEC, "autoApply": True, "searchStrategy": "rapid"}
    assert [e["name"] for e in profiler["env"]] == ["HUGGING_FACE_HUB_TOKEN", "DGDR_NAME", "DGDR_NAMESPACE", "DGDR_UID"]
    assert profiler["env"][0]["valueFrom"] == {"secretKeyRef": {"name": "hf-token-secret", "key": "HF_TOKEN"}}
    assert profiler["env"][3]["value"] == flow.xr["metadata"]["uid"]
    assert pod["volumes"] == [{"name": "profiling-output", "emptyDir": {}}]
    copier = pod["containers"][1]
    assert (copier["name"], copier["image"]) == (COPIER_CONTAINER, "bitnami/kubectl:latest")
    env = {e["name"]: e.get("value") for e in copier["env"]}
    assert env["OUTPUT_CONFIGMAP"] == "dgdr-output-qwen" and env["OWNER_KIND"] == "XDynamoGraphDeploymentRequest"
    assert env["OWNER_UID"] == flow.xr["metadata"]["uid"]
    assert composed(flow.out, "Role")["rules"] == PROFILING_RULES
    binding = composed(flow.out, "RoleBinding")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "profile-qwen"}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "profile-qwen", "namespace": NS}]


def events(out: RenderOutput) -> list[tuple[str, str]]:
    return [(r["severity"], r["message"]) for r in out.results]


def test_phase_changes_are_recorded_as_upstreams_events_once() -> None:
    flow = Flow(request_xr())
    assert events(flow.out) == [
        ("SEVERITY_NORMAL", "DGDR initialized successfully"),
        ("SEVERITY_NORMAL", "Profiling job created"),
    ]
    flow.observe("Job", job_running())
    assert events(flow.step()) == []
    flow.profiled()
    assert events(flow.out) == [("SEVERITY_NORMAL", "DynamoGraphDeployment spec generated successfully")]
    assert events(flow.step()) == []  # Deploying again: nothing new


def test_an_output_configmap_another_request_left_behind_is_not_read() -> None:
    flow = Flow(request_xr())
    flow.observe("Job", job_running())
    flow.output(running_output("SweepingDecode", "old"))
    flow.required[-1]["metadata"]["ownerReferences"] = [
        {"apiVersion": "nvidia.com/v1beta1", "kind": "XDynamoGraphDeploymentRequest", "name": "qwen-old",
         "uid": "00000000-0000-4000-8000-000000000001", "controller": True},
    ]  # fmt: skip
    flow.step()
    assert flow.status["profilingPhase"] == "Initializing"
    flow.required[-1]["metadata"]["ownerReferences"][0]["uid"] = flow.xr["metadata"]["uid"]
    flow.step()
    assert flow.status["profilingPhase"] == "SweepingDecode"


def test_a_platform_cluster_role_is_bound_instead_and_the_infrastructure_reaches_the_profiler() -> None:
    config = operator_config({
        "dgdr": {"profilingClusterRoleName": "dynamo-platform-dgdr-profiling"},
        "infrastructure": {"natsAddress": "nats://nats.dynamo-system:4222", "etcdAddress": "etcd.dynamo-system:2379"},
    })  # fmt: skip
    flow = Flow(request_xr(), [config])
    assert kinds(flow.out) == ["Job", "RoleBinding", "ServiceAccount"]
    assert composed(flow.out, "RoleBinding")["roleRef"]["name"] == "dynamo-platform-dgdr-profiling"
    env = {e["name"]: e.get("value") for e in profiler_container(composed(flow.out, "Job"))["env"]}
    assert env["NATS_SERVER"] == "nats://nats.dynamo-system:4222" and env["ETCD_ENDPOINTS"] == "etcd.dynamo-system:2379"
    assert "MODEL_EXPRESS_URL" not in env


def test_the_default_profiler_image_comes_from_the_platform_or_upstreams_planner_image() -> None:
    spec = {k: v for k, v in BASE_SPEC.items() if k != "image"}
    job = composed(Flow(request_xr(spec)).out, "Job")
    assert profiler_container(job)["image"] == "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.5.0"
    flow = Flow(request_xr(spec), [operator_config({"dgdr": {"defaultImage": "registry.local/planner:1.4.1"}})])
    assert profiler_container(composed(flow.out, "Job"))["image"] == "registry.local/planner:1.4.1"


# --- validation ----------------------------------------------------------------------------------------------------


def test_a_missing_model_cache_pvc_fails_validation_and_a_present_one_is_mounted_read_only() -> None:
    spec = {**BASE_SPEC, "modelCache": {"pvcName": "model-cache", "pvcModelPath": "qwen3"}}
    flow = Flow(request_xr(spec))
    assert flow.status["phase"] == "Failed" and kinds(flow.out) == []
    message = "spec.modelCache.pvcName: model cache PVC model-cache not found in namespace dynamo"
    assert conditions(flow.out)["Validation"] == ("False", "ValidationFailed", message)
    assert conditions(flow.out)["Succeeded"] == ("False", "ValidationFailed", f"Validation failed: {message}")
    assert events(flow.out) == [("SEVERITY_WARNING", message)]
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "model-cache", "namespace": NS}}
    job = composed(Flow(request_xr(spec), [pvc]).out, "Job")
    profiler = profiler_container(job)
    assert {"name": "model-cache", "mountPath": "/opt/model-cache", "readOnly": True} in profiler["volumeMounts"]
    assert {"name": "model-cache", "persistentVolumeClaim": {"claimName": "model-cache", "readOnly": True}} in job[
        "spec"
    ]["template"]["spec"]["volumes"]


def gpu_node(name: str, product: str, count: int, memory: int) -> Obj:
    labels = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": product,
              "nvidia.com/gpu.count": str(count), "nvidia.com/gpu.memory": str(memory)}  # fmt: skip
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def test_missing_hardware_is_discovered_from_gpu_feature_discovery_labels() -> None:
    spec = {**BASE_SPEC, "hardware": {"interconnect": "nvlink"}}
    nodes = [gpu_node("gpu-b", "NVIDIA-H200", 8, 143771), gpu_node("gpu-a", "NVIDIA-H200", 4, 143771)]
    job = composed(Flow(request_xr(spec), nodes).out, "Job")
    assert profiler_config(job)["hardware"] == {
        "gpuSku": "h200_sxm", "interconnect": "nvlink", "numGpusPerNode": 8, "totalGpus": 12, "vramMb": 143771,
    }  # fmt: skip
    failed = Flow(request_xr(spec))
    assert conditions(failed.out)["Validation"] == ("False", "ValidationFailed", DISCOVERY_FAILED)


@pytest.mark.parametrize(
    ("product", "sku"),
    [("NVIDIA-H100-80GB-HBM3", "h100_sxm"), ("NVIDIA-H100-PCIe", "h100_pcie"), ("NVIDIA-A100-SXM4-80GB", "a100_sxm"),
     ("NVIDIA-L40S", "l40s"), ("NVIDIA-L4", "l4"), ("NVIDIA-GB200", "gb200_sxm"), ("Tesla-T4", "t4"),
     ("NVIDIA-RTX-6000", None)],
)  # fmt: skip
def test_gpu_products_map_to_the_profilers_skus(product: str, sku: str | None) -> None:
    assert product_sku(product) == sku


@pytest.mark.parametrize(
    ("spec", "platform_data", "message"),
    [
        ({**BASE_SPEC, "hardware": {}}, {"gpu": {"discoveryEnabled": False}}, "spec.hardware: gpuSku, vramMb and"),
        ({**BASE_SPEC, "hardware": {}}, {"namespace": {"restricted": NS}}, "spec.hardware: gpuSku, vramMb and"),
        ({**BASE_SPEC, "image": "registry.local/planner:latest"}, {}, "spec.runtimeVersionOverride: is required"),
    ],
)
def test_webhook_rules_the_xrd_cannot_hold_are_fatal(spec: Obj, platform_data: Obj, message: str) -> None:
    with pytest.raises(RenderError, match="fatal result: " + re.escape(message)):
        reconcile(request_xr(spec), [], [operator_config(platform_data)])


def test_an_image_without_a_version_tag_is_fine_with_a_runtime_version_override() -> None:
    spec = {**BASE_SPEC, "image": "registry.local/planner:latest", "runtimeVersionOverride": "1.4.0"}
    assert Flow(request_xr(spec)).status["phase"] == "Pending"


# --- Profiling -----------------------------------------------------------------------------------------------------


def test_profiling_phases_follow_the_job_and_the_output_configmap() -> None:
    flow = Flow(request_xr())
    flow.observe("Job")
    flow.step()
    assert (flow.status["phase"], flow.status["profilingPhase"]) == ("Profiling", "Initializing")
    assert conditions(flow.out)["Profiling"] == (
        "False",
        "Initializing",
        "Discovering GPU hardware and preparing profiling job",
    )
    flow.observe("Job", job_running())
    flow.step()
    assert conditions(flow.out)["Profiling"] == ("False", "ProfilingRunning", "Profiling is in progress")
    assert conditions(flow.out)["Succeeded"] == ("False", "Profiling", "Profiling is in progress")
    flow.output(running_output("SweepingDecode", "sweeping decode: tp 2 of 4"))
    flow.step()
    assert flow.status["profilingPhase"] == "SweepingDecode"
    assert conditions(flow.out)["Profiling"] == ("False", "SweepingDecode", "sweeping decode: tp 2 of 4")
    flow.output(running_output("Thinking", "?"))
    flow.step()
    assert flow.status["profilingPhase"] == "SweepingDecode"  # an unknown phase is reported, not taken
    assert any("'Thinking' is not one of" in r["message"] for r in flow.out.results)


def test_a_failed_job_fails_the_request_with_the_pods_details() -> None:
    flow = Flow(request_xr())
    job = flow.observe("Job", job_running())
    flow.output(running_output("SweepingPrefill", "prefill"))
    flow.step()
    flow.observe("Job", job_failed())
    flow.required.append(job_pod("qwen", NS, job, 137, "OOMKilled"))
    flow.step()
    assert flow.status["phase"] == "Failed"
    message = (
        "profiling job failed: Job has reached the specified backoff limit. Details: Pod: profile-qwen-7xk2p, "
        "Container: profiler, ExitCode: 137, Reason: OOMKilled"
    )
    assert conditions(flow.out)["Profiling"] == ("False", "SweepingPrefillFailed", message)
    assert conditions(flow.out)["Succeeded"] == ("False", "SweepingPrefillFailed", f"Profiling failed: {message}")
    assert kinds(flow.out) == ["Job", "Role", "RoleBinding", "ServiceAccount"]  # the Job stays for its logs
    flow.observe("Job", job_succeeded())
    flow.step()
    assert flow.status["phase"] == "Failed"  # terminal


def test_a_failure_the_profiler_reports_names_its_error() -> None:
    flow = Flow(request_xr())
    flow.observe("Job", job_succeeded())
    flow.output(failed_output("SelectingConfig", "no configuration meets ttft 500 ms"))
    flow.step()
    assert flow.status["phase"] == "Failed"
    expected = ("False", "SelectingConfigFailed", "profiling failed: no configuration meets ttft 500 ms")
    assert conditions(flow.out)["Profiling"] == expected


def test_the_error_comes_from_the_copied_status_file_where_the_sidecar_cut_it() -> None:
    error = "CUDA out of memory. Tried to allocate 2.00 GiB.\n\nGPU 0 has 1.5 GiB free."
    flow = Flow(request_xr())
    flow.observe("Job", job_succeeded())
    data = failed_output("SweepingDecode", "CUDA out of memory. Tried to allocate 2.00 GiB.")
    data["profiler_status.yaml"] = yaml.safe_dump({"status": "failed", "phase": "SweepingDecode", "error": error})
    flow.output(data)
    flow.step()
    assert conditions(flow.out)["Profiling"] == ("False", "SweepingDecodeFailed", f"profiling failed: {error}")


def test_a_complete_job_without_its_output_waits() -> None:
    flow = Flow(request_xr())
    flow.observe("Job", job_succeeded())
    flow.step()
    assert flow.status["phase"] == "Profiling" and "DynamoGraphDeployment" not in kinds(flow.out)


# --- the generated graph ---------------------------------------------------------------------------------------------


def test_auto_apply_deploys_the_generated_graph_as_a_claim_named_after_the_request() -> None:
    flow = Flow(request_xr())
    flow.profiled(GRAPH, PLANNER_DATA)
    assert flow.status["phase"] == "Deploying" and flow.status["dgdName"] == "qwen-dgd"
    dgd = composed(flow.out, "DynamoGraphDeployment")
    assert (dgd["apiVersion"], dgd["metadata"]["name"], dgd["metadata"]["namespace"]) == (
        "nvidia.com/v1beta1",
        "qwen-dgd",
        NS,
    )
    assert {k: v for k, v in dgd["metadata"]["labels"].items() if not k.startswith("crossplane.io/")} == {
        "app": "qwen",
        "dgdr.nvidia.com/name": "qwen",
        "dgdr.nvidia.com/namespace": NS,
        "nvidia.com/managed-by": "dynamo-operator",
    }
    versions = [c.get("runtimeVersionOverride") for c in dgd["spec"]["components"]]
    assert versions == ["1.4.0", "1.3.0"]  # the image tag's version fills what the profiler left out
    cm = composed(flow.out, "ConfigMap")
    assert cm["metadata"]["name"] == "planner-profile-data" and cm["data"] == PLANNER_DATA["data"]
    assert cm["metadata"]["labels"]["dgdr.nvidia.com/name"] == "qwen"
    assert conditions(flow.out)["Profiling"] == ("True", "ProfilingCompleted", "Profiling job completed successfully")
    assert conditions(flow.out)["SpecGenerated"] == (
        "True",
        "SpecGenerated",
        "DynamoGraphDeployment spec generated successfully",
    )
    assert conditions(flow.out)["DeploymentReady"] == (
        "False",
        "DeploymentCreated",
        "DynamoGraphDeployment qwen-dgd created successfully",
    )
    assert flow.status["profilingResults"]["selectedConfig"]["spec"] == dgd["spec"]


def test_deploying_becomes_deployed_then_degraded_then_deleted() -> None:
    flow = Flow(request_xr())
    flow.profiled()
    flow.observe("DynamoGraphDeployment", {"state": "pending"})
    flow.step()
    assert conditions(flow.out)["DeploymentReady"] == (
        "False",
        "DeploymentInProgress",
        "DGD qwen-dgd is in pending state",
    )
    ready = {"state": "successful", "components": {"Frontend": {"replicas": 1, "availableReplicas": 1},
                                                   "decode": {"replicas": 2, "availableReplicas": 2}}}  # fmt: skip
    flow.observe("DynamoGraphDeployment", ready)
    flow.step()
    assert flow.status["phase"] == "Deployed" and flow.status["deploymentInfo"] == {
        "replicas": 3,
        "availableReplicas": 3,
    }
    assert conditions(flow.out)["Succeeded"] == ("True", "Deployed", "DynamoGraphDeployment qwen-dgd is ready")
    flow.observe(
        "DynamoGraphDeployment", {"state": "failed", "components": {"decode": {"replicas": 2, "availableReplicas": 1}}}
    )
    flow.step()
    assert flow.status["phase"] == "Deploying"
    assert conditions(flow.out)["DeploymentReady"] == ("False", "DeploymentDegraded", "Deployment degraded to failed")
    del flow.observed["DynamoGraphDeployment"]
    flow.step()
    assert flow.status["phase"] == "Failed" and "dgdName" not in flow.status and "deploymentInfo" not in flow.status
    deleted = "Deployment was deleted by user. Create a new DGDR to redeploy."
    assert conditions(flow.out)["DeploymentReady"] == ("False", "DeploymentDeleted", deleted)
    assert "DynamoGraphDeployment" not in kinds(flow.out)  # not recreated


def test_without_auto_apply_the_graph_waits_in_the_status_until_auto_apply_is_turned_on() -> None:
    flow = Flow(request_xr({**BASE_SPEC, "autoApply": False}))
    flow.profiled()
    assert flow.status["phase"] == "Ready" and "DynamoGraphDeployment" not in kinds(flow.out)
    assert flow.status["profilingResults"]["selectedConfig"]["metadata"]["name"] == "qwen-dgd"
    summary = ("True", "SpecGenerated", "Generated spec is available in status.profilingResults.selectedConfig")
    assert conditions(flow.out)["Succeeded"] == summary
    flow.xr["spec"]["autoApply"] = True  # the deferred edit upstream allows
    flow.xr["metadata"]["generation"] = 2
    flow.step()
    assert flow.status["phase"] == "Deploying" and flow.status["observedGeneration"] == 2
    assert composed(flow.out, "DynamoGraphDeployment")["metadata"]["name"] == "qwen-dgd"
    assert not [r for r in flow.out.results if "Cannot modify" in r["message"]]


def test_other_edits_once_profiling_started_are_rejected_and_change_nothing() -> None:
    flow = Flow(request_xr())
    flow.observe("Job", job_running())
    flow.step()
    job_before = composed(flow.out, "Job")
    flow.xr["spec"]["model"] = "Qwen/Qwen3-8B"
    flow.xr["metadata"]["generation"] = 2
    flow.step()
    (rejected,) = [r for r in flow.out.results if "Cannot modify" in r["message"]]
    assert rejected["severity"] == "SEVERITY_WARNING"
    assert rejected["message"].startswith("Cannot modify spec in phase 'Profiling'.")
    assert flow.status["processedSpec"]["model"] == "Qwen/Qwen3-0.6B" and flow.status["observedGeneration"] == 1
    assert composed(flow.out, "Job")["spec"] == job_before["spec"]


def test_the_graph_name_comes_from_the_dgd_override_and_the_override_installer_joins_the_job() -> None:
    spec = {**BASE_SPEC, "overrides": {"dgd": {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
                                               "metadata": {"name": "qwen-prod"}}}}  # fmt: skip
    flow = Flow(request_xr(spec))
    pod = composed(flow.out, "Job")["spec"]["template"]["spec"]
    (installer,) = pod["initContainers"]
    assert installer["name"] == "dgd-override-installer"
    assert installer["image"] == "nvcr.io/nvidia/ai-dynamo/kubernetes-operator:1.5.0"
    assert installer["command"] == ["/dgd-apply-overrides", "--install-to", "/opt/dynamo/bin/dgd-apply-overrides"]
    assert installer["securityContext"]["readOnlyRootFilesystem"] is True
    env = {e["name"]: e.get("value") for e in profiler_container({"spec": {"template": {"spec": pod}}})["env"]}
    assert env["DYNAMO_DGD_APPLY_OVERRIDES_BIN"] == "/opt/dynamo/bin/dgd-apply-overrides"
    assert {"name": "dgd-override-tool", "emptyDir": {}} in pod["volumes"]
    flow.profiled()
    assert composed(flow.out, "DynamoGraphDeployment")["metadata"]["name"] == "qwen-prod"


@pytest.mark.parametrize(
    ("docs", "message"),
    [
        ([PLANNER_DATA], "final_config.yaml holds 0 DynamoGraphDeployment documents, not 1"),
        ([{**GRAPH, "apiVersion": "nvidia.com/v2"}], "has apiVersion 'nvidia.com/v2', not one of"),
    ],
)
def test_output_that_is_not_one_graph_fails_spec_generation(docs: list[Obj], message: str) -> None:
    flow = Flow(request_xr())
    flow.profiled(*docs)
    assert flow.status["phase"] == "Failed"
    status, reason, text = conditions(flow.out)["SpecGenerated"]
    assert (status, reason) == ("False", "GenerationFailed") and message in text
    assert conditions(flow.out)["Succeeded"][2].startswith("Spec generation failed: ")


def test_a_v1alpha1_graph_from_the_profiler_is_deployed_as_v1beta1() -> None:
    alpha = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment", "metadata": {"name": "g"},
             "spec": {"services": {"Frontend": {"componentType": "frontend", "replicas": 1}}}}  # fmt: skip
    flow = Flow(request_xr())
    flow.profiled(alpha)
    dgd = composed(flow.out, "DynamoGraphDeployment")
    assert dgd["apiVersion"] == "nvidia.com/v1beta1"
    assert [(c["name"], c["type"]) for c in dgd["spec"]["components"]] == [("Frontend", "frontend")]


# --- overrides.profilingJob ------------------------------------------------------------------------------------------


def test_profiling_job_overrides_go_through_upstreams_allow_list() -> None:
    override = {
        "backoffLimit": 2,
        "completionMode": "Indexed",
        "template": {
            "metadata": {"labels": {"team": "ml", "app": "mine"}, "annotations": {"a": "b"}},
            "spec": {
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                "automountServiceAccountToken": False,
                "hostNetwork": True,
                "containers": [
                    {"name": "", "resources": {"limits": {"nvidia.com/gpu": "1"}}, "env": [{"name": "X", "value": "1"}],
                     "command": ["sh"]},
                    {"name": "output-copier", "image": "registry.local/kubectl:1.31", "env": [{"name": "Y"}]},
                ],
            },
        },
    }  # fmt: skip
    flow = Flow(request_xr({**BASE_SPEC, "overrides": {"profilingJob": override}}))
    job = composed(flow.out, "Job")
    assert job["spec"]["backoffLimit"] == 2 and "completionMode" not in job["spec"]
    meta, pod = job["spec"]["template"]["metadata"], job["spec"]["template"]["spec"]
    assert meta["labels"]["app"] == "dynamo-profiler" and meta["labels"]["team"] == "ml"  # protected keys kept
    assert meta["annotations"] == {"a": "b"} and pod["tolerations"] == override["template"]["spec"]["tolerations"]
    assert "hostNetwork" not in pod
    profiler, copier = pod["containers"]
    assert profiler["resources"] == {"limits": {"nvidia.com/gpu": "1"}} and profiler["command"][0] == "python"
    assert profiler["env"][-1] == {"name": "X", "value": "1"}
    assert copier["image"] == "registry.local/kubectl:1.31" and "Y" not in {e["name"] for e in copier["env"]}
    token = "output-copier-kube-api-access"
    assert {"name": token, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True} in copier[
        "volumeMounts"
    ]
    (volume,) = [v for v in pod["volumes"] if v["name"] == token]
    assert volume["projected"]["sources"][0] == {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}}
    (ignored,) = [r["message"] for r in flow.out.results if r["message"].startswith("ignored")]
    base = "spec.overrides.profilingJob"
    for path in ("completionMode", "template.spec.hostNetwork", "template.spec.containers[0].command",
                 "template.spec.containers[1].env"):  # fmt: skip
        assert f"{base}.{path}" in ignored


# --- v1alpha1 --------------------------------------------------------------------------------------------------------

ALPHA_SPEC: Obj = {
    "model": "Qwen/Qwen3-0.6B",
    "backend": "trtllm",
    "useMocker": True,
    "enableGpuDiscovery": False,
    "deploymentOverrides": {"workersImage": "nvcr.io/x/trtllm-runtime:1.4.0"},
    "profilingConfig": {
        "profilerImage": "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.4.0",
        "config": {
            "sla": {"ttft": 200, "itl": 10, "isl": 2000, "osl": 256},
            "deployment": {"modelCache": {"pvcName": "models", "modelPathInPvc": "qwen", "pvcMountPath": "/models"}},
            "planner": {"plannerMinEndpoint": 2},
            "sweep": {"maxNumGpus": 8},
        },
        "configMapRef": {"name": "disagg-config"},
        "outputPVC": "profiling-results",
        "resources": {"requests": {"cpu": "2"}},
        "nodeSelector": {"pool": "cpu"},
    },
}


def test_the_profiling_jobs_override_pod_spec_gets_the_schema_defaults_upstream_stores() -> None:
    """Upstream's API server defaults the DGDR's embedded pod spec at admission; ours serves it open."""
    spec = {
        "containers": [{"name": "profiler"}],
        "initContainers": [{"name": "warm", "image": "busybox:1", "ports": [{"containerPort": 7000}]}],
        "volumes": [{"name": "cfg", "configMap": {}}],
    }
    flow = Flow(request_xr({**BASE_SPEC, "overrides": {"profilingJob": {"template": {"spec": spec}}}}))
    pod = composed(flow.out, "Job")["spec"]["template"]["spec"]
    (warm,) = [c for c in pod["initContainers"] if c["name"] == "warm"]
    assert warm["ports"] == [{"containerPort": 7000, "protocol": "TCP"}]
    (cfg,) = [v for v in pod["volumes"] if v["name"] == "cfg"]
    assert cfg["configMap"] == {"name": ""}


def test_a_v1alpha1_request_is_converted_to_the_hub_as_upstream_converts_it() -> None:
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "models", "namespace": NS}}
    spec = {**ALPHA_SPEC, "profilingConfig": {**ALPHA_SPEC["profilingConfig"]}}
    with pytest.raises(RenderError, match=r"spec\.hardware: gpuSku, vramMb and numGpusPerNode are required"):
        reconcile(request_xr(spec, api="v1alpha1"), [], [pvc])
    flow = Flow(
        request_xr({**spec, "enableGpuDiscovery": True}, api="v1alpha1"), [pvc, gpu_node("n", "NVIDIA-H100", 8, 81559)]
    )
    job = composed(flow.out, "Job")
    config = profiler_config(job)
    assert config["image"] == "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.4.0"  # profilerImage over workersImage
    assert config["autoApply"] is False and config["features"] == {
        "mocker": {"enabled": True},
        "planner": {"plannerMinEndpoint": 2},
    }
    assert config["sla"] == {"ttft": 200, "itl": 10} and config["workload"] == {"isl": 2000, "osl": 256}
    assert config["modelCache"] == {"pvcName": "models", "pvcModelPath": "qwen", "pvcMountPath": "/models"}
    pod = job["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"pool": "cpu"} and profiler_container(job)["resources"] == {"requests": {"cpu": "2"}}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["profiling-output"] == {
        "name": "profiling-output",
        "persistentVolumeClaim": {"claimName": "profiling-results"},
    }
    assert volumes["profiling-config"]["configMap"] == {
        "name": "disagg-config",
        "items": [{"key": "disagg.yaml", "path": "disagg.yaml"}],
    }
    assert {"name": "profiling-config", "mountPath": "/config", "readOnly": True} in profiler_container(job)[
        "volumeMounts"
    ]
    assert flow.status["state"] == "Pending" and flow.status["backend"] == "trtllm"


@pytest.mark.parametrize(
    ("overrides", "image"),
    [
        ({}, "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.5.0"),  # the operator version's, as upstream defaults it
        ({"workersImage": "nvcr.io/x/trtllm-runtime:1.4.0"}, "nvcr.io/x/trtllm-runtime:1.4.0"),
    ],
    ids=["default", "workers-image"],
)
def test_a_v1alpha1_request_without_a_profiler_image_is_admitted(overrides: Obj, image: str) -> None:
    """Upstream's v1alpha1 schema requires profilerImage, but its defaulting webhook fills the hub's image first
    (the converted workersImage, else its default profiler image), so the request is admitted."""
    spec = {"model": "Qwen/Qwen3-0.6B", "backend": "vllm", "profilingConfig": {}, "enableGpuDiscovery": True}
    if overrides:
        spec["deploymentOverrides"] = overrides
    claim = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeploymentRequest",
             "metadata": {"name": "qwen", "namespace": NS}, "spec": spec}  # fmt: skip
    xr = admitted_xr(claim, NS, "Strict")  # the API server's admission: schema, CEL, defaults
    out = reconcile(xr, [], [gpu_node("n", "NVIDIA-H100", 8, 81559)])
    assert profiler_config(composed(out, "Job"))["image"] == image


def test_a_v1alpha1_request_reports_v1alpha1_status_beside_the_hubs() -> None:
    spec = {k: v for k, v in ALPHA_SPEC.items() if k != "enableGpuDiscovery"}
    spec["profilingConfig"] = {"profilerImage": "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.4.0"}
    spec["autoApply"] = True
    flow = Flow(request_xr(spec, api="v1alpha1"), [gpu_node("n", "NVIDIA-H100", 8, 81559)])
    flow.profiled()
    flow.observe("DynamoGraphDeployment", {"state": "successful"})
    flow.step()
    status = flow.status
    assert (status["phase"], status["state"]) == ("Deployed", "Ready")  # Deployed reads as Ready in v1alpha1
    assert status["deployment"] == {"name": "qwen-dgd", "namespace": NS, "created": True, "state": "successful"}
    assert status["generatedDeployment"]["metadata"]["name"] == "qwen-dgd"


# --- the examples ----------------------------------------------------------------------------------------------------

EXAMPLES = sorted((REPO / "examples" / "dgdr").glob("*.yaml"))


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_request_composes_its_profiling_job(example: Path) -> None:
    claim = load_documents(example)[0]
    required = load_documents(REPO / "examples" / "dgdr" / "cluster")
    out = reconcile(claim_to_xr(claim), [], required)
    assert out.composite["status"]["phase"] == "Pending", out.composite["status"]
    assert composed(out, "Job")["metadata"]["name"] == f"profile-{claim['metadata']['name']}"


def corpus_requests() -> list[tuple[str, Obj]]:
    root = shared_dir() / "corpus"
    found = []
    for path in sorted(root.rglob("*.yaml")) if root.is_dir() else []:
        for i, doc in enumerate(load_documents(path)):
            if doc.get("kind") == "DynamoGraphDeploymentRequest":
                found.append((f"{path.relative_to(root)}#{i}", doc))
    return found


def test_the_corpus_requests_validate_and_render() -> None:
    require_shared("corpus")
    requests = corpus_requests()
    assert requests, "the corpus holds DynamoGraphDeploymentRequests"
    cluster = load_documents(REPO / "examples" / "dgdr" / "cluster")
    for case, doc in requests:
        claim = {**doc, "metadata": {**doc["metadata"], "namespace": NS}}
        xr = admitted_xr(claim, NS, "Strict")  # the API server's admission: schema, CEL, defaults
        out = reconcile(xr, [], cluster)
        assert out.composite["status"]["phase"] == "Pending", (case, out.composite["status"])
        hardware = profiler_config(composed(out, "Job"))["hardware"]
        written = doc["spec"].get("hardware") or {}
        assert {k: hardware[k] for k in written} == written, case  # what the manifest says wins
        assert {"gpuSku", "vramMb", "numGpusPerNode"} <= set(hardware), case  # the rest discovered
