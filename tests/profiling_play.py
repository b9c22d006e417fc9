"""Plays what a DynamoGraphDeploymentRequest's profiling run leaves behind, for tests and the status examples.

This package does not ship the profiler, the Job controller or the kubelet: these helpers write what they would
(the Job's status, its pod's termination, the output ConfigMap the Job's sidecar applies from the profiler's
files), so the DGDR step can be driven from one phase to the next, in-process or on a real Crossplane.
"""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

import yaml

from functions.kinds.request.profiling_job import job_labels, job_name, output_configmap_name
from functions.tooling.manifests import find_composition, load_documents
from functions.tooling.pipeline import RenderOutput, render

REPO = Path(__file__).resolve().parents[1]
Obj = dict[str, Any]
STARTED, FINISHED = "2026-02-01T09:00:00Z", "2026-02-01T09:12:00Z"


def uid(*parts: str) -> str:
    h = hashlib.sha256("/".join(parts).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def reconcile(xr: Obj, observed: list[Obj], required: list[Obj]) -> RenderOutput:
    """One reconcile of the XR, as ``crossplane render`` shows it."""
    return render(xr, find_composition(xr, load_documents(REPO / "compositions")), observed, required, converge=False)


def with_status(xr: Obj, out: RenderOutput) -> Obj:
    """The XR as the next reconcile reads it: the status (and conditions) this reconcile wrote."""
    nxt = copy.deepcopy(xr)
    status = copy.deepcopy(out.composite.get("status") or {})
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != "Ready"]
    nxt["status"] = status
    return nxt


def as_observed(obj: Obj, status: Obj | None = None) -> Obj:
    """A composed object as Crossplane observes it once created: a UID, and ``status`` when given."""
    out = copy.deepcopy(obj)
    meta = out.setdefault("metadata", {})
    meta.setdefault("uid", uid(out.get("kind", ""), meta.get("namespace", ""), meta.get("name", "")))
    meta.setdefault("creationTimestamp", STARTED)
    meta.setdefault("generation", 1)
    if status is not None:
        out["status"] = status
    return out


def composed(out: RenderOutput, kind: str) -> Obj:
    (obj,) = [o for o in out.composed if o.get("kind") == kind]
    return obj


def job_running() -> Obj:
    return {"active": 1, "ready": 1, "startTime": STARTED}


def job_succeeded() -> Obj:
    return {
        "succeeded": 1,
        "startTime": STARTED,
        "completionTime": FINISHED,
        "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached"},
            {"type": "Complete", "status": "True", "reason": "CompletionsReached"},
        ],
    }


def job_failed() -> Obj:
    message = "Job has reached the specified backoff limit"
    return {
        "failed": 1,
        "startTime": STARTED,
        "conditions": [
            {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded", "message": message},
            {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": message},
        ],
    }


def job_pod(dgdr: str, namespace: str, job: Obj, exit_code: int, reason: str) -> Obj:
    name = f"{job_name(dgdr)}-7xk2p"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid("Pod", namespace, name),
            "labels": {"batch.kubernetes.io/job-name": job_name(dgdr), **job_labels(dgdr)},
            "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "Job", "name": job_name(dgdr), "uid": job["metadata"]["uid"],
                 "controller": True, "blockOwnerDeletion": True},
            ],
        },
        "status": {
            "phase": "Failed" if exit_code else "Succeeded",
            "containerStatuses": [
                {"name": "output-copier", "ready": False, "restartCount": 0,
                 "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
                {"name": "profiler", "ready": False, "restartCount": 0,
                 "state": {"terminated": {"exitCode": exit_code, "reason": reason}}},
            ],
        },
    }  # fmt: skip


def output_configmap(dgdr: str, namespace: str, data: dict[str, str]) -> Obj:
    """``dgdr-output-<dgdr>`` as the Job's sidecar applies it."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": output_configmap_name(dgdr),
            "namespace": namespace,
            "uid": uid("ConfigMap", namespace, output_configmap_name(dgdr)),
            "labels": {"dgdr.nvidia.com/name": dgdr, "dgdr.nvidia.com/namespace": namespace,
                       "nvidia.com/managed-by": "dynamo-operator"},
        },
        "data": data,
    }  # fmt: skip


def running_output(phase: str, message: str) -> dict[str, str]:
    return {"phase": phase, "message": message}


def success_output(final_config: str) -> dict[str, str]:
    return {
        "phase": "Done",
        "message": "profiling completed",
        "profiler_status": "success",
        "final_config.yaml": final_config,
        "profiler_status.yaml": "status: success\nphase: Done\nmessage: profiling completed\n",
    }


def failed_output(phase: str, error: str) -> dict[str, str]:
    return {
        "phase": phase,
        "message": f"{phase} failed",
        "profiler_status": "failed",
        "profiler_error": error,
        "profiler_status.yaml": f"status: failed\nphase: {phase}\nerror: {error}\n",
    }


def final_config(*docs: Obj) -> str:
    return yaml.safe_dump_all(list(docs), sort_keys=False)
