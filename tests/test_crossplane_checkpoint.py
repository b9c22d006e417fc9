"""A DynamoCheckpoint's lifecycle on a real Crossplane: the claim's checkpoint Job, the PodSnapshot of its pod, and
the phase reaching Ready. The test plays the controllers this package does not ship: the Job controller (the Job's
pod, then the Job's status) and the snapshot project's operator and node agent (the PodSnapshot's status)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from fixtures.corpus import CHECKPOINT_EXAMPLE
from fixtures.rendering import CHECKPOINT_GATE
from fixtures.tooling import require_shared
from harness.apiserver import install_crd
from harness.composites import composed_kinds, create_claim, example_namespace, listed, manifest_path, nudge, xr_of
from harness.controller_play import play_job_pod, write_status
from harness.crossplane_core import ENVIRONMENT_CONFIGS, Crossplane, apply
from harness.poll import until

DONE = "2026-12-01T10:04:10Z"
CAPTURED = "Checkpoint captured and verified"
COMPLETIONS = "Reached expected number of succeeded pods"


@pytest.fixture
def checkpoint_platform(crossplane: Crossplane) -> Iterator[None]:
    """The snapshot project's PodSnapshot CRD, and the operator config with the checkpoint gate on."""
    cp = crossplane.cp
    crd = yaml.safe_load(require_shared("upstream", "crds", "nvidia.com_podsnapshots.yaml").read_text())
    assert install_crd(cp.client, crd).accepted
    apply(cp, CHECKPOINT_GATE, ENVIRONMENT_CONFIGS)
    yield
    cp.client.delete(f"{ENVIRONMENT_CONFIGS}/{CHECKPOINT_GATE['metadata']['name']}")


def _condition(kind: str, status: str, reason: str, message: str) -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": DONE}


def _claim_status(crossplane: Crossplane, claim: dict[str, Any]) -> dict[str, Any]:
    return crossplane.cp.client.get(manifest_path(claim)).get("status") or {}


def _ready_status(crossplane: Crossplane, claim: dict[str, Any]) -> dict[str, Any] | None:
    status = _claim_status(crossplane, claim)
    kinds = {c["type"] for c in status.get("conditions") or []}
    return status if status.get("phase") == "Ready" and "JobCompleted" in kinds else None


def _ready(status: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions") or [])


def play_capture(cp: Any, namespace: str, snapshot: dict[str, Any], job_name: str) -> None:
    """The snapshot operator and node agent's part (bound and captured), then the Job controller's (the pod
    finished)."""
    snapshots = f"/apis/nvidia.com/v1alpha1/namespaces/{namespace}/podsnapshots"
    jobs = f"/apis/batch/v1/namespaces/{namespace}/jobs"
    snapshot["status"] = {
        "boundSnapshotContentName": "podsnapshotcontent-1",
        "conditions": [
            _condition("Ready", "True", "Captured", CAPTURED),
            _condition("Failed", "False", "Captured", CAPTURED),
        ],
    }
    cp.client.replace(f"{snapshots}/{snapshot['metadata']['name']}/status", snapshot)
    # the real Job controller writes the Job's status too: a 409 is read again, not fatal
    write_status(cp, f"{jobs}/{job_name}", {
        "startTime": "2026-12-01T10:00:00Z",
        "completionTime": DONE,
        "succeeded": 1,
        "conditions": [
            _condition("SuccessCriteriaMet", "True", "CompletionsReached", COMPLETIONS),
            _condition("Complete", "True", "CompletionsReached", COMPLETIONS),
        ],
    })  # fmt: skip


def test_a_checkpoint_goes_from_its_job_to_ready(crossplane: Crossplane, checkpoint_platform: None) -> None:
    cp = crossplane.cp
    namespace = example_namespace(CHECKPOINT_EXAMPLE, "lifecycle-")
    claim = create_claim(cp, CHECKPOINT_EXAMPLE, namespace)
    until("no checkpoint Job composed", lambda: "Job" in composed_kinds(cp, claim))
    jobs = f"/apis/batch/v1/namespaces/{namespace}/jobs"
    (job,) = listed(cp, jobs, "the checkpoint Job was never created")
    name = job["metadata"]["name"]
    assert job["spec"]["template"]["metadata"]["labels"]["nvidia.com/snapshot-is-checkpoint-source"] == "true"
    created = play_job_pod(cp, namespace, job)  # the Job controller's part
    nudge(cp, claim)
    until("no PodSnapshot composed for the Job's pod", lambda: "PodSnapshot" in composed_kinds(cp, claim))
    snapshots = f"/apis/nvidia.com/v1alpha1/namespaces/{namespace}/podsnapshots"
    (snapshot,) = listed(cp, snapshots, "no PodSnapshot created for the Job's pod")
    assert snapshot["spec"]["source"]["podRef"] == {
        "name": created["metadata"]["name"],
        "uid": created["metadata"]["uid"],
        "containers": ["main"],
    }
    until("the claim never reported Creating", lambda: _claim_status(crossplane, claim).get("phase") == "Creating")
    play_capture(cp, namespace, snapshot, name)
    # The claim gets the XR's status fields and its conditions in separate updates: wait for both.
    status = until("the claim never reported Ready with JobCompleted", lambda: _ready_status(crossplane, claim))
    assert status["createdAt"] == DONE
    assert status["podSnapshotName"] == snapshot["metadata"]["name"]
    conditions = {c["type"]: c for c in status.get("conditions") or []}
    assert conditions["JobCompleted"]["reason"] == "PodSnapshotAndJobReady"
    until("the claim never became Ready", lambda: _ready(_claim_status(crossplane, claim)))
    # Upstream deletes the Job once Ready; the PodSnapshot (and so the capture) stays.
    until("the Job was not removed after Ready", lambda: "Job" not in composed_kinds(cp, claim))
    assert composed_kinds(cp, claim) == {"PodSnapshot"}


AUTO_EXAMPLE = CHECKPOINT_EXAMPLE.parent / "vllm-agg-auto-checkpoint.yaml"


def _worker_clique(cp: Any, namespace: str) -> dict[str, Any] | None:
    pcs = cp.client.get(f"/apis/grove.io/v1alpha1/namespaces/{namespace}/podcliquesets")["items"]
    cliques = [c for p in pcs for c in p["spec"]["template"]["cliques"] if c["name"] == "vllmworker"]
    return cliques[0] if cliques else None


def test_a_dgd_waits_for_its_auto_checkpoint_then_restores_from_it(
    crossplane: Crossplane, checkpoint_platform: None
) -> None:
    """The DGD composes its DynamoCheckpoint claim, holds the worker at 0 replicas, and once the checkpoint's own
    pipeline reports Ready (its Job and PodSnapshot played here) renders the worker restore-shaped."""
    cp = crossplane.cp
    namespace = example_namespace(AUTO_EXAMPLE, "lifecycle-")
    dgd = create_claim(cp, AUTO_EXAMPLE, namespace)
    checkpoints = f"/apis/nvidia.com/v1alpha1/namespaces/{namespace}/dynamocheckpoints"
    (checkpoint,) = listed(cp, checkpoints, "the DGD composed no DynamoCheckpoint")
    ckpt_id = checkpoint["metadata"]["labels"]["nvidia.com/snapshot-checkpoint-id"]
    assert checkpoint["metadata"]["name"] == f"checkpoint-{ckpt_id}"
    xr = until("the DGD's XR", lambda: xr_of(cp, dgd))
    assert checkpoint["spec"]["identity"]["extraParameters"]["dgdUID"], "the XR's UID is part of the ID"
    owners = {(r["kind"], r["name"]) for r in checkpoint["metadata"]["ownerReferences"]}
    assert (xr["kind"], xr["metadata"]["name"]) in owners, "owned by the DGD (deletionPolicy Delete)"
    clique = until("no PodCliqueSet with the worker", lambda: _worker_clique(cp, namespace))
    assert clique["spec"]["replicas"] == 0, "WaitForCheckpoint holds the worker at 0"
    waiting = until("the DGD never reported waiting_for_checkpoint", lambda: next(
        (c for c in _claim_status(crossplane, dgd).get("conditions") or []
         if c["type"] == "DynamoGraphReady" and c["reason"] == "waiting_for_checkpoint"), None))  # fmt: skip
    assert waiting["message"] == f"Waiting for checkpoints: VllmWorker ({checkpoint['metadata']['name']})"

    # The checkpoint's own pipeline: its Job, the Job's pod, the PodSnapshot, Ready.
    until("no checkpoint Job composed", lambda: "Job" in composed_kinds(cp, checkpoint))
    jobs = f"/apis/batch/v1/namespaces/{namespace}/jobs"
    (job,) = listed(cp, jobs, "the checkpoint Job was never created")
    assert job["metadata"]["name"] == f"checkpoint-job-{ckpt_id}-1", "the Job carries the auto checkpoint's ID"
    template = job["spec"]["template"]
    assert [c["name"] for c in template["spec"]["containers"]] == ["main"]
    assert template["metadata"]["labels"]["nvidia.com/dynamo-graph-deployment-name"] == "vllm-agg-ckpt"
    play_job_pod(cp, namespace, job)
    nudge(cp, checkpoint)
    until("no PodSnapshot composed", lambda: "PodSnapshot" in composed_kinds(cp, checkpoint))
    (snapshot,) = listed(cp, f"/apis/nvidia.com/v1alpha1/namespaces/{namespace}/podsnapshots", "no PodSnapshot")
    play_capture(cp, namespace, snapshot, job["metadata"]["name"])
    until("the checkpoint never became Ready", lambda: _ready_status(crossplane, checkpoint))

    # The DGD sees it Ready: the worker runs its replicas, restore-shaped.
    nudge(cp, dgd)
    restored = until("the worker was never restore-shaped", lambda: (
        c if (c := _worker_clique(cp, namespace)) and c["spec"]["replicas"] == 2 else None))  # fmt: skip
    assert restored["labels"]["nvidia.com/snapshot-is-restore-target"] == "true"
    assert restored["labels"]["nvidia.com/snapshot-checkpoint-id"] == ckpt_id
    main = restored["spec"]["podSpec"]["containers"][0]
    assert {"name": "DYN_SNAPSHOT_RESTORE_STANDBY", "value": "1"} in main["env"]
    entry = until("status.checkpoints never said ready", lambda: (
        e if (e := (_claim_status(crossplane, dgd).get("checkpoints") or {}).get("VllmWorker", {})).get("ready")
        else None))  # fmt: skip
    assert entry["checkpointName"] == checkpoint["metadata"]["name"]

    # Deleting the DGD takes its (Delete-policy) checkpoint with it.
    cp.client.delete(manifest_path(dgd))
    until("the auto checkpoint outlived its DGD", lambda: not cp.client.get(checkpoints)["items"])
