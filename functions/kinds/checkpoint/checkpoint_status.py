"""A DynamoCheckpoint's phase from what is observed: its Job, the Job's pod, the PodSnapshot
(docs/upstream/checkpoint-gms-dgdr-model.md §1.9's phase machine, as a function of observed state).

Upstream's controller writes the phase as it acts; here the phase is derived again on every reconcile from the
observed objects and the phase the XR already reports, which also carries the terminal states: once ``Ready``
or ``Failed`` the Job is no longer composed (upstream deletes it), so nothing observed could tell them apart.
The Job is dropped one reconcile after the terminal phase is written, so a status write that fails cannot
make a finished Job look deleted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from functions.contract import Condition
from functions.readiness.conditions import condition, is_true

JOB_CREATED = "JobCreated"
JOB_COMPLETED = "JobCompleted"


@dataclass
class Decision:
    phase: str
    message: str = ""
    conditions: list[Condition] = field(default_factory=list)
    compose_job: bool = False
    compose_snapshot: bool = False  # the PodSnapshot is (still) composed
    created_at: str | None = None


def _failed(reason: str, message: str, *, job_created: Condition | None = None, keep_job: bool) -> Decision:
    conditions = [Condition(JOB_COMPLETED, "False", reason, message)]
    if job_created:
        conditions.insert(0, job_created)
    return Decision("Failed", message, conditions, compose_job=keep_job, compose_snapshot=True)


def decide(
    *,
    previous: dict[str, Any],
    job_name: str,
    job: dict[str, Any] | None,
    snapshot: dict[str, Any] | None,
    pod_observed: bool,
    unprepared: str | None = None,
) -> Decision:
    """The phase, conditions and what to compose; ``previous`` is the XR's observed status; ``unprepared`` why
    a GPU-memory-service pod template is not ready to run (then the Job is never created)."""
    phase = previous.get("phase")
    same_job = previous.get("jobName") in (None, "", job_name)
    if phase in ("Ready", "Failed") and same_job:
        kept = Decision(phase, previous.get("message") or "", compose_snapshot=True)  # terminal: the Job goes
        kept.created_at = previous.get("createdAt")
        return kept
    if job is None:
        if phase == "Creating" and previous.get("jobName") == job_name:
            if snapshot is not None and is_true(snapshot, "Ready"):
                message = "checkpoint job was deleted before JobComplete was observed"
                return _failed("JobDeletedBeforeComplete", message, keep_job=False)
            deleted = Condition(JOB_CREATED, "False", "JobDeleted", "Checkpoint job was deleted")
            return _failed("JobDeleted", "checkpoint job was deleted", job_created=deleted, keep_job=False)
        if unprepared:
            not_prepared = Condition(JOB_CREATED, "False", "GMSPodTemplateNotPrepared", unprepared)
            return Decision("Failed", unprepared, [not_prepared])
        return Decision("Pending", compose_job=True)
    created = Condition(JOB_CREATED, "True", "JobCreated", f"Checkpoint job {job_name} created")
    if is_true(job, "Failed"):
        detail = (condition(job, "Failed") or {}).get("message")
        message = f"checkpoint job failed: {detail}" if detail else "checkpoint job failed"
        return _failed("JobFailed", message, job_created=created, keep_job=True)
    if snapshot is None:
        return Decision("Creating", conditions=[created], compose_job=True, compose_snapshot=pod_observed)
    if is_true(snapshot, "Failed"):
        message = (condition(snapshot, "Failed") or {}).get("message") or "PodSnapshot failed"
        return _failed("PodSnapshotFailed", message, job_created=created, keep_job=True)
    bound = bool((snapshot.get("status") or {}).get("boundSnapshotContentName"))
    if bound and is_true(snapshot, "Ready") and is_true(job, "Complete"):
        ready_message = (condition(snapshot, "Ready") or {}).get("message") or ""
        done = Condition(JOB_COMPLETED, "True", "PodSnapshotAndJobReady", ready_message)
        decision = Decision("Ready", "", [created, done], compose_job=True, compose_snapshot=True)
        decision.created_at = (job.get("status") or {}).get("completionTime") or (
            condition(snapshot, "Ready") or {}
        ).get("lastTransitionTime")
        return decision
    return Decision("Creating", conditions=[created], compose_job=True, compose_snapshot=True)
