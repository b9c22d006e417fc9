"""The controllers the package does not run, played on a real API server: Grove (from a status scenario's
files), the Deployment controller and the Job controller's pod. A player writes what the controller would: the
objects it creates and the status it reports, through the status subresource, retrying a write another writer beat
(409).

Used by the real-stack tests (test_crossplane_status and the tests that share its scenarios, the quickstart)
and by tests/harness/kubelet_play.py.
"""

from __future__ import annotations

import copy
from typing import Any

from fixtures.tooling import REPO
from functions.tooling.manifests import load_documents
from harness.apiserver import resource_path
from harness.controlplane import APIError, ControlPlane
from harness.poll import until

STATUS = REPO / "tests" / "scenarios" / "status"
COMPONENT_LABEL = "nvidia.com/dynamo-component"
SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")


def _path(api_version: str, plural: str, namespace: str, name: str = "") -> str:
    group, version = api_version.split("/")
    return resource_path(group, version, plural, namespace, name or None)


def write_status(cp: ControlPlane, path: str, status: dict[str, Any]) -> None:
    """Replace the object's status through its status subresource (``observedGeneration``, when given, set to
    its generation), reading it again after a conflict; RuntimeError after five conflicts in a row."""
    for _ in range(5):
        obj = cp.client.get(path)
        status = copy.deepcopy(status)
        if "observedGeneration" in status:
            status["observedGeneration"] = obj["metadata"].get("generation", 1)
        obj["status"] = status
        try:
            cp.client.replace(f"{path}/status", obj)
            return
        except APIError as err:
            if err.code != 409:
                raise
    raise RuntimeError(f"could not write the status of {path}: five conflicts in a row")


def play_grove(cp: ControlPlane, scenario: str, namespace: str) -> None:
    directory = STATUS / scenario
    observed = {o["kind"]: o for o in load_documents(directory / "observed.yaml")}
    pcs_obj = observed["PodCliqueSet"]
    pcs_path = _path(pcs_obj["apiVersion"], "podcliquesets", namespace, pcs_obj["metadata"]["name"])
    pcs = until(f"PodCliqueSet {pcs_obj['metadata']['name']}", lambda: cp.client.get(pcs_path))
    plurals = {"PodClique": "podcliques", "PodCliqueScalingGroup": "podcliquescalinggroups"}
    uids = {("PodCliqueSet", pcs["metadata"]["name"]): pcs["metadata"]["uid"]}
    pending = load_documents(directory / "required.yaml")
    while pending:  # owners first: the scaling groups own their cliques; the garbage collector runs
        ready = [
            o
            for o in pending
            if all((r["kind"], r["name"]) in uids for r in o["metadata"].get("ownerReferences") or [])
        ]
        assert ready, f"owners missing for {[o['metadata']['name'] for o in pending]}"
        for obj in ready:
            pending.remove(obj)
            obj = copy.deepcopy(obj)
            status = obj.pop("status", None)
            meta = obj["metadata"]
            for key in SERVER_FIELDS:
                meta.pop(key, None)
            meta["namespace"] = namespace
            meta["ownerReferences"] = [
                {**r, "uid": uids[(r["kind"], r["name"])]} for r in meta.get("ownerReferences") or []
            ]
            collection = _path(obj["apiVersion"], plurals[obj["kind"]], namespace)
            created = cp.client.create(collection, obj)
            uids[(obj["kind"], meta["name"])] = created["metadata"]["uid"]
            if status:
                write_status(cp, f"{collection}/{meta['name']}", status)
    write_status(cp, pcs_path, pcs_obj["status"])  # last: its change makes Crossplane reconcile at once


def played_statuses(scenario: str) -> dict[str, dict[str, Any]]:
    """Component -> the Deployment status a scenario's ``deployments.yaml`` plays (none: all ready)."""
    path = STATUS / scenario / "deployments.yaml"
    if not path.exists():
        return {}
    return {d["metadata"]["labels"][COMPONENT_LABEL]: d["status"] for d in load_documents(path)}


def play_deployments(
    cp: ControlPlane,
    namespace: str,
    components: set[str] | None = None,
    statuses: dict[str, dict[str, Any]] | None = None,
) -> int:
    """Every Deployment in ``namespace`` (the nested component deployments'), or those of ``components``
    (label ``nvidia.com/dynamo-component``), reports all replicas ready, or the status ``statuses`` gives
    its component."""
    deployments = cp.client.get(f"/apis/apps/v1/namespaces/{namespace}/deployments")["items"]
    if components is not None:
        deployments = [d for d in deployments if d["metadata"]["labels"].get(COMPONENT_LABEL) in components]
    for deployment in deployments:
        played = (statuses or {}).get(deployment["metadata"]["labels"].get(COMPONENT_LABEL))
        if played is not None:
            path = f"/apis/apps/v1/namespaces/{namespace}/deployments/{deployment['metadata']['name']}"
            write_status(cp, path, played)
            continue
        replicas = (deployment.get("spec") or {}).get("replicas", 1)
        status = {
            "observedGeneration": 0,
            "replicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
            "updatedReplicas": replicas,
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                 "lastUpdateTime": "2026-01-15T10:00:00Z", "lastTransitionTime": "2026-01-15T10:00:00Z"},
            ],
        }  # fmt: skip
        write_status(cp, f"/apis/apps/v1/namespaces/{namespace}/deployments/{deployment['metadata']['name']}", status)
    return len(deployments)


def play_job_pod(cp: ControlPlane, namespace: str, job: dict[str, Any]) -> dict[str, Any]:
    """The Job controller's part (not running on the test control plane): the Job's pod, controlled by it."""
    name = job["metadata"]["name"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{name}-x7k2p",
            "labels": {"batch.kubernetes.io/job-name": name},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": name,
                    "uid": job["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    }
    return cp.client.create(f"/api/v1/namespaces/{namespace}/pods", pod)


def clique_replicas(pcs: dict[str, Any], clique: str) -> int | None:
    """The replicas the PodCliqueSet ``pcs`` asks of its clique ``clique`` (None: unset)."""
    for c in pcs["spec"]["template"]["cliques"]:
        if c["name"] == clique:
            return c["spec"].get("replicas")
    return None
