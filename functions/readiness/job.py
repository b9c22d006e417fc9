"""The pod a Job runs, among pods read as a required resource (the Job controller labels them with the Job's
name; the one the observed Job controls is its own)."""

from __future__ import annotations

from typing import Any


def job_pod(pods: list[dict[str, Any]], job: dict[str, Any] | None) -> dict[str, Any] | None:
    """The pod controlled by the observed ``job`` (by UID when it has one), or None."""
    if job is None:
        return None
    uid = (job.get("metadata") or {}).get("uid")
    for pod in pods:
        for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
            if ref.get("kind") == "Job" and ref.get("controller") and (uid is None or ref.get("uid") == uid):
                return pod
    return None
