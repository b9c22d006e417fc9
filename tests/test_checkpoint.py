"""DynamoCheckpoint: upstream's IDs, the checkpoint Job, the PodSnapshot of its pod, and the phase machine over
observed state (docs/upstream/checkpoint-gms-dgdr-model.md §1.3, §1.9, §2; docs/upstream/operator.md §4.3)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from fixtures.rendering import check_resource, render_xr
from fixtures.tooling import REPO, crank_render, regenerated, require_shared
from functions.api.operator_config import OPERATOR_CONFIG_REQUIREMENT
from functions.contract import StepRequest, StepResponse
from functions.kinds.checkpoint.checkpoint_step import POD_REQUIREMENT, dynamo_checkpoint
from functions.kube.checkpoint_ids import dgd_checkpoint_id, go_json, identity_hash
from functions.tooling.manifests import claim_to_xr, dump_documents, find_composition, load_documents
from functions.tooling.pipeline import render
from functions.tooling.validation import load_crds, validate_object

EXAMPLE = REPO / "examples" / "checkpoint" / "vllm-checkpoint.yaml"
PLATFORM_FILE = REPO / "examples" / "operator-config.yaml"
CLAIM = load_documents(EXAMPLE)[0]
CKPT_ID = identity_hash(CLAIM["spec"]["identity"])
JOB = f"checkpoint-job-{CKPT_ID}-1"


# --- IDs -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("identity", "expected"),
    [
        ({"model": "meta-llama/Llama-2-7b-hf", "backendFramework": "vllm"}, "96429b2725761a09"),
        (
            {
                "model": "meta-llama/Llama-2-13b-hf",
                "backendFramework": "sglang",
                "dynamoVersion": "0.4.2",
                "tensorParallelSize": 2,
                "pipelineParallelSize": 1,
                "dtype": "float16",
                "maxModelLen": 4096,
                "extraParameters": {"gpu_memory_utilization": "0.9"},
            },
            "f4ba65bccbb8e4fb",
        ),
    ],
)
def test_identity_hash_matches_upstreams_vectors(identity: dict[str, Any], expected: str) -> None:
    assert identity_hash(identity) == expected


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("ns", "dgd", "uid-1", "worker", "hash-1"), "197725d87a037228bc935cbbfe6158a8"),
        (("default", "my-dgd", "", "Frontend", ""), "f234b2c71432515a48da5bb4796e2460"),
    ],
)
def test_dgd_checkpoint_id_matches_upstreams_vectors(args: tuple[str, ...], expected: str) -> None:
    assert dgd_checkpoint_id(*args) == expected


def test_go_json_escapes_html_characters_as_go_does() -> None:
    assert go_json({"model": "a<b>&c"}) == '{"model":"a\\u003cb\\u003e\\u0026c"}'


# --- the step over observed state --------------------------------------------------------------------------------


def operator_config(**checkpoint: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.crossplane.io/v1beta1",
        "kind": "EnvironmentConfig",
        "metadata": {"name": "dynamo-platform"},
        "data": {"checkpoint": {"enabled": True, **checkpoint}},
    }


def job_obj(**conditions: str) -> dict[str, Any]:
    status: dict[str, Any] = {
        "conditions": [{"type": t, "status": s, "message": f"{t} says so"} for t, s in conditions.items()]
    }
    if conditions.get("Complete") == "True":
        status["completionTime"] = "2026-12-01T10:00:00Z"
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": JOB, "uid": "job-uid"}, "status": status}


def pod_obj(owner_uid: str = "job-uid") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{JOB}-abcde",
            "uid": "pod-uid",
            "ownerReferences": [{"kind": "Job", "name": JOB, "uid": owner_uid, "controller": True}],
        },
    }


def snapshot_obj(bound: bool = True, **conditions: str) -> dict[str, Any]:
    status: dict[str, Any] = {
        "conditions": [
            {
                "type": t,
                "status": s,
                "message": "Checkpoint captured and verified",
                "lastTransitionTime": "2026-12-01T09:59:00Z",
            }
            for t, s in conditions.items()
        ]
    }
    if bound:
        status["boundSnapshotContentName"] = "podsnapshotcontent-1"
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "PodSnapshot",
        "metadata": {"name": "qwen3-0-6b", "namespace": "dynamo-demo", "uid": "snap-uid", "resourceVersion": "9"},
        "spec": {"source": {"podRef": {"name": f"{JOB}-abcde", "uid": "pod-uid", "containers": ["main"]}}},
        "status": status,
    }


def run(
    *,
    status: dict[str, Any] | None = None,
    job: dict[str, Any] | None = None,
    snapshot: dict[str, Any] | None = None,
    pods: list[dict[str, Any]] | None = None,
    config: dict[str, Any] | None = None,
    claim: dict[str, Any] | None = None,
) -> StepResponse:
    xr = claim_to_xr(claim or CLAIM)
    if status:
        xr["status"] = status
    observed = {k: v for k, v in (("checkpoint-job", job), ("podsnapshot", snapshot)) if v is not None}
    required = {OPERATOR_CONFIG_REQUIREMENT: [config or operator_config()], POD_REQUIREMENT: pods or []}
    return dynamo_checkpoint(
        StepRequest(input={}, observed_composite=xr, observed_resources=observed, required=required)
    )


def conditions(rsp: StepResponse) -> dict[str, tuple[str, str]]:
    return {c.type: (c.status, c.reason) for c in rsp.conditions}


@pytest.mark.parametrize("config", [operator_config(enabled=False), None], ids=["off", "no operator config"])
def test_the_gate_off_refuses_the_checkpoint_naming_spec(config: dict[str, Any] | None) -> None:
    """Upstream's webhook refuses a DynamoCheckpoint (create or update) while its checkpoint gate is off."""
    xr = claim_to_xr(CLAIM)
    required = {OPERATOR_CONFIG_REQUIREMENT: [config] if config else []}
    for status in (None, {"phase": "Ready", "jobName": JOB}):  # a new checkpoint, or one made before
        if status:
            xr["status"] = status
        rsp = dynamo_checkpoint(StepRequest(input={}, observed_composite=xr, required=required))
        assert [(r.severity, r.message) for r in rsp.results] == [
            ("fatal", "spec: checkpoint functionality is disabled in the operator configuration")
        ]
        assert rsp.desired_resources == {}


def test_first_the_job_then_creating_then_the_podsnapshot_of_its_pod() -> None:
    first = run()
    assert list(first.desired_resources) == ["checkpoint-job"]
    assert first.composite_status["phase"] == "Pending"
    assert first.composite_status["checkpointID"] == first.composite_status["identityHash"] == CKPT_ID
    assert POD_REQUIREMENT not in first.requirements  # no Job yet, no pod to look for
    waiting = run(status=first.composite_status, job=job_obj())
    assert waiting.composite_status["phase"] == "Creating"
    assert conditions(waiting)["JobCreated"] == ("True", "JobCreated")
    assert list(waiting.desired_resources) == ["checkpoint-job"]
    assert waiting.requirements[POD_REQUIREMENT].match_labels == {"batch.kubernetes.io/job-name": JOB}
    foreign = run(status=waiting.composite_status, job=job_obj(), pods=[pod_obj(owner_uid="other")])
    assert "podsnapshot" not in foreign.desired_resources  # a pod the Job does not control is not the source
    snap = run(status=waiting.composite_status, job=job_obj(), pods=[pod_obj()]).desired_resources["podsnapshot"]
    assert snap.resource == {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "PodSnapshot",
        "metadata": {
            "name": "qwen3-0-6b",
            "namespace": "dynamo-demo",
            "labels": {"nvidia.com/snapshot-checkpoint-id": CKPT_ID, "nvidia.com/snapshot-owner": "qwen3-0-6b"},
        },
        "spec": {"source": {"podRef": {"name": f"{JOB}-abcde", "uid": "pod-uid", "containers": ["main"]}}},
    }


def test_ready_needs_a_bound_ready_snapshot_and_a_complete_job_then_the_job_goes() -> None:
    creating = {"phase": "Creating", "jobName": JOB, "checkpointID": CKPT_ID}
    unbound = run(status=creating, job=job_obj(Complete="True"), snapshot=snapshot_obj(bound=False, Ready="True"))
    assert unbound.composite_status["phase"] == "Creating"
    not_complete = run(status=creating, job=job_obj(), snapshot=snapshot_obj(Ready="True"))
    assert not_complete.composite_status["phase"] == "Creating"
    ready = run(status=creating, job=job_obj(Complete="True"), snapshot=snapshot_obj(Ready="True"))
    assert ready.composite_status["phase"] == "Ready"
    assert ready.composite_status["createdAt"] == "2026-12-01T10:00:00Z"  # the Job's completion, not a clock
    assert conditions(ready)["JobCompleted"] == ("True", "PodSnapshotAndJobReady")
    assert ready.composite_ready is True
    assert "checkpoint-job" in ready.desired_resources  # dropped one reconcile later, once Ready is stored
    after = run(status=ready.composite_status, job=job_obj(Complete="True"), snapshot=snapshot_obj(Ready="True"))
    assert list(after.desired_resources) == ["podsnapshot"]
    assert after.composite_status["phase"] == "Ready"
    assert after.composite_status["createdAt"] == "2026-12-01T10:00:00Z"
    # the PodSnapshot's observed (immutable) spec is repeated, not re-derived from a pod that is gone
    assert after.desired_resources["podsnapshot"].resource["spec"] == snapshot_obj()["spec"]
    assert "resourceVersion" not in after.desired_resources["podsnapshot"].resource["metadata"]


@pytest.mark.parametrize(
    ("job", "snapshot", "reason", "message"),
    [
        (job_obj(Failed="True"), None, "JobFailed", "checkpoint job failed: Failed says so"),
        (job_obj(), snapshot_obj(Failed="True"), "PodSnapshotFailed", "Checkpoint captured and verified"),
        (None, None, "JobDeleted", "checkpoint job was deleted"),
        (
            None,
            snapshot_obj(Ready="True"),
            "JobDeletedBeforeComplete",
            "checkpoint job was deleted before JobComplete was observed",
        ),
    ],
    ids=["job-failed", "snapshot-failed", "job-deleted", "job-deleted-before-complete"],
)
def test_failures(job: dict | None, snapshot: dict | None, reason: str, message: str) -> None:
    rsp = run(status={"phase": "Creating", "jobName": JOB}, job=job, snapshot=snapshot)
    assert (rsp.composite_status["phase"], rsp.composite_status["message"]) == ("Failed", message)
    assert conditions(rsp)["JobCompleted"] == ("False", reason)
    stays = run(status=rsp.composite_status, job=job, snapshot=snapshot)
    assert stays.composite_status["phase"] == "Failed"
    assert "checkpoint-job" not in stays.desired_resources


def test_a_new_artifact_version_captures_again() -> None:
    claim = copy.deepcopy(CLAIM)
    claim["metadata"]["annotations"] = {"nvidia.com/snapshot-artifact-version": "2"}
    rsp = run(claim=claim, status={"phase": "Ready", "jobName": JOB, "checkpointID": CKPT_ID})
    assert rsp.composite_status["phase"] == "Pending"
    assert rsp.composite_status["jobName"] == f"checkpoint-job-{CKPT_ID}-2"
    assert rsp.desired_resources["checkpoint-job"].resource["metadata"]["name"] == f"checkpoint-job-{CKPT_ID}-2"


def test_a_written_checkpoint_id_wins_over_the_identity_hash() -> None:
    rsp = run(status={"checkpointID": "abc123"})
    assert rsp.composite_status["checkpointID"] == "abc123"
    assert rsp.desired_resources["checkpoint-job"].resource["metadata"]["name"] == "checkpoint-job-abc123-1"


# --- the Job -----------------------------------------------------------------------------------------------------


def job_of(claim: dict[str, Any] | None = None, **config: Any) -> dict[str, Any]:
    return run(claim=claim, config=operator_config(**config)).desired_resources["checkpoint-job"].resource


def main_of(job: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in job["spec"]["template"]["spec"]["containers"] if c["name"] == "main")


def with_pod(**changes: Any) -> dict[str, Any]:
    claim = copy.deepcopy(CLAIM)
    template = claim["spec"]["job"]["podTemplateSpec"]
    for key, value in changes.items():
        if key == "metadata":
            template["metadata"] = value
        else:
            template["spec"][key] = value
    return claim


def test_the_job_shape() -> None:
    job = job_of()
    assert job["metadata"] == {
        "name": JOB,
        "namespace": "dynamo-demo",
        "labels": {"nvidia.com/snapshot-checkpoint-id": CKPT_ID},
    }
    assert job["spec"]["backoffLimit"] == 0 and job["spec"]["activeDeadlineSeconds"] == 1800
    assert "ttlSecondsAfterFinished" not in job["spec"]
    pod = job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["securityContext"]["seccompProfile"] == {
        "type": "Localhost",
        "localhostProfile": "profiles/block-iouring.json",
    }
    main = main_of(job)
    assert main["readinessProbe"] == {
        "exec": {"command": ["cat", "/snapshot-control/ready-for-snapshot"]},
        "periodSeconds": 1,
    }
    assert {"name": "DYN_SNAPSHOT_CONTROL_DIR", "value": "/snapshot-control"} in main["env"]
    assert {"name": "snapshot-control", "mountPath": "/snapshot-control", "subPath": "main"} in main["volumeMounts"]
    assert {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}} in pod["volumes"]
    assert main["command"] == ["python3", "-m", "dynamo.vllm"]  # one GPU: no cuda-checkpoint wrapper
    assert not any(v["name"] == "checkpoint-storage" for v in pod["volumes"])  # no storage configured


def test_the_user_template_gets_the_schema_defaults_upstream_stores() -> None:
    """Upstream's API server defaults the checkpoint's embedded pod spec at admission; ours serves it open."""
    claim = copy.deepcopy(CLAIM)
    (main,) = claim["spec"]["job"]["podTemplateSpec"]["spec"]["containers"]
    main["ports"] = [{"name": "extra", "containerPort": 7000}]
    assert main_of(job_of(claim))["ports"] == [{"name": "extra", "containerPort": 7000, "protocol": "TCP"}]


def test_the_user_template_is_kept_around_what_the_checkpoint_needs() -> None:
    claim = with_pod(
        metadata={
            "labels": {"team": "llm", "nvidia.com/snapshot-is-restore-target": "true"},
            "annotations": {"a": "b"},
        },
        volumes=[{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
        containers=[
            {**CLAIM["spec"]["job"]["podTemplateSpec"]["spec"]["containers"][0],
             "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
             "livenessProbe": {"httpGet": {"path": "/live", "port": 9090}},
             "startupProbe": {"httpGet": {"path": "/live", "port": 9090}}},
            {"name": "sidecar", "image": "busybox", "livenessProbe": {"exec": {"command": ["true"]}}},
        ],
        securityContext={"runAsUser": 1000},
    )  # fmt: skip
    job = job_of(
        claim,
        seccomp={"profile": "profiles/custom.json"},
        storage={"type": "pvc", "pvc": {"pvcName": "ckpts", "basePath": "/data/ckpt/"}},
    )
    template = job["spec"]["template"]
    assert template["metadata"]["labels"]["team"] == "llm"
    assert "nvidia.com/snapshot-is-restore-target" not in template["metadata"]["labels"]
    assert template["metadata"]["annotations"]["a"] == "b"
    assert template["metadata"]["annotations"]["nvidia.com/snapshot-storage-base-path"] == "/data/ckpt"
    pod = template["spec"]
    assert pod["securityContext"] == {
        "runAsUser": 1000,
        "seccompProfile": {"type": "Localhost", "localhostProfile": "profiles/custom.json"},
    }
    main = main_of(job)
    assert [m["mountPath"] for m in main["volumeMounts"]].count("/dev/shm") == 1  # the user's /dev/shm gave way
    assert {"name": "checkpoint-storage", "mountPath": "/data/ckpt"} in main["volumeMounts"]
    assert {"name": "checkpoint-storage", "persistentVolumeClaim": {"claimName": "ckpts"}} in pod["volumes"]
    assert "livenessProbe" not in main and "startupProbe" not in main
    sidecar = next(c for c in pod["containers"] if c["name"] == "sidecar")
    assert sidecar == {"name": "sidecar", "image": "busybox", "livenessProbe": {"exec": {"command": ["true"]}}}


def test_shared_memory_size_and_disabled_and_seccomp_disabled() -> None:
    claim = copy.deepcopy(CLAIM)
    claim["spec"]["job"]["sharedMemory"] = {"size": "16Gi"}
    pod = job_of(claim)["spec"]["template"]["spec"]
    assert {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}} in pod["volumes"]
    claim["spec"]["job"]["sharedMemory"] = {"disabled": True}
    pod = job_of(claim, seccomp={"disabled": True})["spec"]["template"]["spec"]
    assert not any(v["name"] == "shared-memory" for v in pod["volumes"])
    assert "securityContext" not in pod


def test_more_than_one_gpu_runs_the_command_under_cuda_checkpoint() -> None:
    claim = copy.deepcopy(CLAIM)
    claim["spec"]["job"]["podTemplateSpec"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "2"}}
    main = main_of(job_of(claim))
    assert main["command"] == ["cuda-checkpoint"]
    args = main["args"]
    assert args[:3] == ["--launch-job", "/bin/sh", "-c"]
    assert args[4:6] == ["dynamo-cuda-checkpoint", "/snapshot-control/cuda-checkpoint-job"]
    assert args[6:] == ["python3", "-m", "dynamo.vllm", "--model", "Qwen/Qwen3-0.6B"]
    del claim["spec"]["job"]["podTemplateSpec"]["spec"]["containers"][0]["command"]
    rsp = run(claim=claim)
    assert rsp.fatal and "containers[main].command" in rsp.results[0].message


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (None, 'must contain the default target container "main"'),
        ("engine", "spec.job.targetContainerName: 'engine' does not name a container"),
    ],
)
def test_a_missing_target_container_is_fatal_naming_the_field(target: str | None, message: str) -> None:
    claim = copy.deepcopy(CLAIM)
    claim["spec"]["job"]["podTemplateSpec"]["spec"]["containers"][0]["name"] = "other"
    if target:
        claim["spec"]["job"]["targetContainerName"] = target
    rsp = run(claim=claim)
    assert rsp.fatal and message in rsp.results[0].message


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda c: c["spec"].pop("identity"), "spec.identity: Field required"),
        (lambda c: c["spec"]["job"].update(activeDeadlineSeconds=0), "spec.job.activeDeadlineSeconds"),
        (
            lambda c: c["spec"].update(gpuMemoryService={"enabled": True, "mode": "interPod"}),
            'spec.gpuMemoryService.mode: Unsupported value: "interPod"',
        ),
        (
            lambda c: c["spec"].update(gpuMemoryService={"enabled": True, "extraClientContainers": ["saver"]}),
            "spec.gpuMemoryService.extraClientContainers[0]: 'saver' does not name a container",
        ),
    ],
    ids=["no-identity", "deadline-zero", "gms-inter-pod", "gms-unknown-client"],
)
def test_bad_specs_are_fatal_naming_the_field(mutate: Any, message: str) -> None:
    claim = copy.deepcopy(CLAIM)
    mutate(claim)
    rsp = run(claim=claim)
    assert rsp.fatal and message in rsp.results[0].message


def test_unsupported_storage_is_fatal_naming_the_config_field() -> None:
    rsp = run(config=operator_config(storage={"type": "nfs"}))
    assert rsp.fatal
    assert "data.checkpoint.storage" in rsp.results[0].message or "storage.type" in rsp.results[0].message


# --- through the pipeline, crank and the real schemas ------------------------------------------------------------


def test_the_composed_objects_are_valid_against_their_schemas() -> None:
    xr = claim_to_xr(CLAIM)
    observed_status = {"phase": "Creating", "jobName": JOB, "checkpointID": CKPT_ID}
    rsp = run(status=observed_status, job=job_obj(), pods=[pod_obj()])
    job, snapshot = (rsp.desired_resources[k].resource for k in ("checkpoint-job", "podsnapshot"))
    check_resource(job)  # batch/v1 Job against Kubernetes' schema
    crd = load_crds([require_shared("upstream", "crds", "nvidia.com_podsnapshots.yaml")])[("nvidia.com", "PodSnapshot")]
    assert validate_object(snapshot, crd) == []
    broken = copy.deepcopy(snapshot)
    broken["spec"]["source"]["podRef"]["containers"] = []
    assert validate_object(broken, crd) != []
    out = render_xr(xr, required=load_documents(PLATFORM_FILE))
    assert [o["kind"] for o in out] == ["Job"]


def test_crank_renders_the_example_as_in_process(functions_file: Path, tmp_path: Path) -> None:
    xr = claim_to_xr(CLAIM)
    composition = find_composition(xr, load_documents(REPO / "compositions"))
    (tmp_path / "xr.yaml").write_text(yaml.safe_dump(xr))
    (tmp_path / "composition.yaml").write_text(yaml.safe_dump(composition))
    theirs = crank_render(
        str(tmp_path / "xr.yaml"), str(tmp_path / "composition.yaml"), str(functions_file), "-e", str(PLATFORM_FILE)
    )
    out = render(xr, composition, required=load_documents(PLATFORM_FILE), converge=False)
    assert dump_documents([out.composite, *out.composed]) == theirs


# --- the lifecycle states of tests/scenarios/checkpoint-lifecycle -------------------------------------------------

LIFECYCLE = REPO / "tests" / "scenarios" / "checkpoint-lifecycle"
STATES = {
    # state: (phase, composed kinds, XR ready)
    "pending": ("Pending", ["Job"], False),
    "creating": ("Creating", ["Job", "PodSnapshot"], False),
    "ready": ("Ready", ["Job", "PodSnapshot"], True),
    "failed": ("Failed", ["Job"], False),
}


def lifecycle_xr(state: str) -> dict[str, Any]:
    xr = claim_to_xr(CLAIM)
    status = json.loads((LIFECYCLE / state / "xr-status.json").read_text())
    if status:
        xr["status"] = status
    return xr


def lifecycle_files(state: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    folder = LIFECYCLE / state
    return load_documents(folder / "observed.yaml"), load_documents(folder / "required.yaml")


@pytest.mark.parametrize("state", sorted(STATES))
def test_each_lifecycle_state_renders_its_phase(state: str) -> None:
    phase, kinds, ready = STATES[state]
    observed, required = lifecycle_files(state)
    xr = lifecycle_xr(state)
    out = render(xr, find_composition(xr, load_documents(REPO / "compositions")), observed, required, converge=False)
    assert out.composite["status"]["phase"] == phase
    assert sorted(o["kind"] for o in out.composed) == kinds
    conditions = {c["type"]: c for c in out.composite["status"]["conditions"]}
    assert (conditions["Ready"]["status"] == "True") is ready
    if state == "ready":
        assert out.composite["status"]["createdAt"] == "2026-01-15T10:04:10Z"
        assert conditions["JobCompleted"]["reason"] == "PodSnapshotAndJobReady"
        assert conditions["JobCompleted"]["message"] == "Checkpoint captured and verified"
    if state == "failed":
        assert conditions["JobCompleted"]["reason"] == "JobFailed"
        assert "deadline" in out.composite["status"]["message"]
    for obj in out.composed:
        if obj["kind"] == "PodSnapshot":
            pod = next(r for r in required if r["kind"] == "Pod")
            assert obj["spec"]["source"]["podRef"] == {"name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"],
                                                       "containers": ["main"]}  # fmt: skip


@pytest.mark.parametrize("state", sorted(STATES))
def test_crank_renders_each_lifecycle_state_as_in_process(state: str, functions_file: Path, tmp_path: Path) -> None:
    xr = lifecycle_xr(state)
    composition = find_composition(xr, load_documents(REPO / "compositions"))
    (tmp_path / "xr.yaml").write_text(yaml.safe_dump(xr))
    (tmp_path / "composition.yaml").write_text(yaml.safe_dump(composition))
    args = ["-e", str(LIFECYCLE / state / "required.yaml")]
    observed, required = lifecycle_files(state)
    if observed:
        args += ["-o", str(LIFECYCLE / state / "observed.yaml")]
    theirs = crank_render(str(tmp_path / "xr.yaml"), str(tmp_path / "composition.yaml"), str(functions_file), *args)
    out = render(xr, composition, observed, required, converge=False)
    assert dump_documents([out.composite, *out.composed]) == theirs


def test_the_lifecycle_files_are_what_the_step_renders_today(tmp_path: Path) -> None:
    """regenerate.py's output is committed: a step change that alters it must be reviewed and regenerated."""
    before, after = regenerated(LIFECYCLE, ("*.yaml", "*.json"))
    stale = [str(p.relative_to(REPO)) for p in before if before[p] != after.get(p)]
    assert not stale, f"stale: {stale} (run tests/scenarios/checkpoint-lifecycle/regenerate.py and review the diff)"


# --- a checkpoint with a GPU memory service ---------------------------------------------------------------------


def gms_claim(*, prepared: bool = True, gpus: int = 2) -> dict[str, Any]:
    """The example with an intra-pod GMS, its pod template prepared as the DGD prepares it."""
    from functions.kube.gms import apply_intrapod_gms

    claim = copy.deepcopy(CLAIM)
    claim["spec"]["gpuMemoryService"] = {"enabled": True}
    pod = claim["spec"]["job"]["podTemplateSpec"]["spec"]
    if prepared:
        apply_intrapod_gms(pod, "ckpt-worker-gpu", ("main",), "spec.job")
    return claim


def rct(count: int) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "ckpt-worker-gpu", "namespace": "dynamo-demo"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
            "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": count}}]}}},
    }  # fmt: skip


def test_an_unprepared_gms_pod_template_fails_without_a_job() -> None:
    rsp = run(claim=gms_claim(prepared=False))
    assert rsp.composite_status["phase"] == "Failed"
    assert conditions(rsp)["JobCreated"] == ("False", "GMSPodTemplateNotPrepared")
    assert (
        "gpuMemoryService checkpoint pod template is missing volume 'gms-intrapod-control'"
        in (rsp.composite_status["message"])
    )
    assert not rsp.desired_resources


def test_a_prepared_gms_checkpoint_counts_its_dra_gpus_for_the_wrapper() -> None:
    claim = gms_claim()
    assert "gms-server" in [c["name"] for c in claim["spec"]["job"]["podTemplateSpec"]["spec"]["initContainers"]]
    xr = claim_to_xr(claim)
    required = {OPERATOR_CONFIG_REQUIREMENT: [operator_config()], "checkpoint-rct-ckpt-worker-gpu": [rct(2)]}
    rsp = dynamo_checkpoint(StepRequest(input={}, observed_composite=xr, required=required))
    assert rsp.requirements["checkpoint-rct-ckpt-worker-gpu"].match_name == "ckpt-worker-gpu"
    job = rsp.desired_resources["checkpoint-job"].resource
    main = job["spec"]["template"]["spec"]["containers"][0]
    assert main["command"] == ["cuda-checkpoint"], "two GPUs through the claim: the wrapper"
    assert "nvidia.com/gpu" not in (main["resources"].get("limits") or {}), "the GPUs moved to the claim"
    required["checkpoint-rct-ckpt-worker-gpu"] = [rct(1)]
    rsp = dynamo_checkpoint(StepRequest(input={}, observed_composite=xr, required=required))
    main = rsp.desired_resources["checkpoint-job"].resource["spec"]["template"]["spec"]["containers"][0]
    assert main["command"] == ["python3", "-m", "dynamo.vllm"], "one GPU: no wrapper"
