"""A DynamoCheckpoint's lifecycle on a real Crossplane: the claim's checkpoint Job, the PodSnapshot of its pod, and
the phase reaching Ready. The test plays the controllers this package does not ship: the Job controller (the Job's
pod, then the Job's status) and the snapshot project's operator and node agent (the PodSnapshot's status)."""

from __future__ import annotations

from typing import Any

import yaml
from test_crossplane_rbac import (
    CHECKPOINT_EXAMPLE,
    CHECKPOINT_PLATFORM,
    ENVIRONMENT_CONFIGS,
    _composed,
    _create,
    _namespace,
    _until,
    claim_path,
    listed,
    nudge,
    play_job_pod,
)

from apiserver import install_crd
from crossplane_core import Crossplane, apply
from tooling import require_shared

DONE = "2026-12-01T10:04:10Z"
CAPTURED = "Checkpoint captured and verified"
COMPLETIONS = "Reached expected number of succeeded pods"


def _condition(kind: str, status: str, reason: str, message: str) -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": DONE}


def _claim_status(crossplane: Crossplane, claim: dict[str, Any]) -> dict[str, Any]:
    return crossplane.cp.client.get(claim_path(claim)).get("status") or {}


def _ready_status(crossplane: Crossplane, claim: dict[str, Any]) -> dict[str, Any] | None:
    status = _claim_status(crossplane, claim)
    kinds = {c["type"] for c in status.get("conditions") or []}
    return status if status.get("phase") == "Ready" and "JobCompleted" in kinds else None


def _ready(status: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions") or [])


def test_a_checkpoint_goes_from_its_job_to_ready(crossplane: Crossplane) -> None:
    cp = crossplane.cp
    crd = yaml.safe_load(require_shared("upstream", "crds", "nvidia.com_podsnapshots.yaml").read_text())
    assert install_crd(cp.client, crd).accepted
    apply(cp, CHECKPOINT_PLATFORM, ENVIRONMENT_CONFIGS)
    try:
        namespace = _namespace(CHECKPOINT_EXAMPLE, "lifecycle-")
        claim = _create(cp, CHECKPOINT_EXAMPLE, namespace)
        _until("no checkpoint Job composed", lambda: "Job" in _composed(cp, claim))
        jobs = f"/apis/batch/v1/namespaces/{namespace}/jobs"
        (job,) = listed(cp, jobs, "the checkpoint Job was never created")
        name = job["metadata"]["name"]
        assert job["spec"]["template"]["metadata"]["labels"]["nvidia.com/snapshot-is-checkpoint-source"] == "true"
        created = play_job_pod(cp, namespace, job)  # the Job controller's part
        nudge(cp, claim)
        _until("no PodSnapshot composed for the Job's pod", lambda: "PodSnapshot" in _composed(cp, claim))
        snapshots = f"/apis/nvidia.com/v1alpha1/namespaces/{namespace}/podsnapshots"
        (snapshot,) = listed(cp, snapshots, "no PodSnapshot created for the Job's pod")
        assert snapshot["spec"]["source"]["podRef"] == {
            "name": created["metadata"]["name"],
            "uid": created["metadata"]["uid"],
            "containers": ["main"],
        }
        _until("the claim never reported Creating", lambda: _claim_status(crossplane, claim).get("phase") == "Creating")
        # The snapshot operator and node agent's part: bound and captured.
        snapshot["status"] = {
            "boundSnapshotContentName": "podsnapshotcontent-1",
            "conditions": [
                _condition("Ready", "True", "Captured", CAPTURED),
                _condition("Failed", "False", "Captured", CAPTURED),
            ],
        }
        cp.client.replace(f"{snapshots}/{snapshot['metadata']['name']}/status", snapshot)
        # The Job controller's part again: the pod finished.
        job = cp.client.get(f"{jobs}/{name}")
        job["status"] = {
            "startTime": "2026-12-01T10:00:00Z",
            "completionTime": DONE,
            "succeeded": 1,
            "conditions": [
                _condition("SuccessCriteriaMet", "True", "CompletionsReached", COMPLETIONS),
                _condition("Complete", "True", "CompletionsReached", COMPLETIONS),
            ],
        }
        cp.client.replace(f"{jobs}/{name}/status", job)
        # The claim gets the XR's status fields and its conditions in separate updates: wait for both.
        status = _until("the claim never reported Ready with JobCompleted", lambda: _ready_status(crossplane, claim))
        assert status["createdAt"] == DONE
        assert status["podSnapshotName"] == snapshot["metadata"]["name"]
        conditions = {c["type"]: c for c in status.get("conditions") or []}
        assert conditions["JobCompleted"]["reason"] == "PodSnapshotAndJobReady"
        _until("the claim never became Ready", lambda: _ready(_claim_status(crossplane, claim)))
        # Upstream deletes the Job once Ready; the PodSnapshot (and so the capture) stays.
        _until("the Job was not removed after Ready", lambda: "Job" not in _composed(cp, claim))
        assert _composed(cp, claim) == {"PodSnapshot"}
    finally:
        cp.client.delete(f"{ENVIRONMENT_CONFIGS}/{CHECKPOINT_PLATFORM['metadata']['name']}")
