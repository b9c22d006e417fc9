"""Status for real: the tests/scenarios/status scenarios played on a real Crossplane.

The test plays the controllers this package does not run, from each scenario's files: Grove (the
PodCliques and PodCliqueScalingGroups of ``required.yaml``, created owned by the real PodCliqueSet, and
the PodCliqueSet's status from ``observed.yaml``) or, on the component pathway, the Deployment
controller (every Deployment the nested component deployments composed reports its replicas ready).
The claim's status and conditions must then equal what the in-process render derives from the same
files, and a ready scenario must reach ``Ready=True`` and ``state: successful``.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from apiserver import ensure_namespace, resource_path
from controlplane import APIError, ControlPlane
from corpus import example_claim
from crossplane_core import Crossplane
from functions.tooling.manifests import claim_to_xr, find_composition, load_documents
from functions.tooling.pipeline import render

REPO = Path(__file__).resolve().parents[1]
STATUS = REPO / "tests" / "scenarios" / "status"
SETTLE_SECONDS = 90.0
# Scenarios whose state a test can reach by playing controllers (no xr-overlay: the others need an XR
# status written by an earlier reconcile, which only their history gives).
SCENARIOS = sorted(d.name for d in STATUS.iterdir() if d.is_dir() and not (d / "xr-overlay.json").exists())
COMPONENT_LABEL = "nvidia.com/dynamo-component"
SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")


def _claim(scenario: str, namespace: str) -> dict[str, Any]:
    claim = yaml.safe_load((example_claim(scenario.rsplit("-", 1)[0])).read_text())
    claim["metadata"]["namespace"] = namespace
    return claim


def expected_status(scenario: str) -> dict[str, Any]:
    """What the in-process render derives from the scenario's files (namespace as they were written)."""
    directory = STATUS / scenario
    xr = claim_to_xr(_claim(scenario, "dynamo-demo"))
    observed = load_documents(directory / "observed.yaml")
    required = load_documents(directory / "required.yaml") if (directory / "required.yaml").exists() else []
    return render(xr, find_composition(xr, load_documents(REPO / "compositions")), observed, required).composite[
        "status"
    ]


def comparable(status: dict[str, Any]) -> dict[str, Any]:
    """The status fields and conditions the function writes (not Crossplane's bookkeeping or times)."""
    fields = {k: v for k, v in status.items() if k in ("state", "services", "components", "rollingUpdate", "restart")}
    conditions = {
        # A claim's Ready has Crossplane's own reason and message ("Claim is waiting for composite resource
        # to become Ready"); its status is the XR's.
        c["type"]: (c.get("status"),)
        if c["type"] == "Ready"
        else (c.get("status"), c.get("reason"), c.get("message", ""))
        for c in status.get("conditions") or []
        if c["type"] not in ("Synced", "Responsive")
    }
    return {**fields, "conditions": conditions}


def _path(api_version: str, plural: str, namespace: str, name: str = "") -> str:
    group, version = api_version.split("/")
    return resource_path(group, version, plural, namespace, name or None)


def _wait(what: str, get: Any, seconds: float = SETTLE_SECONDS) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        try:
            got = get()
            if got:
                return got
        except APIError as err:
            if err.code != 404:
                raise
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not there after {seconds:.0f}s")
        time.sleep(0.5)


def _write_status(cp: ControlPlane, path: str, status: dict[str, Any]) -> None:
    """Replace the object's status through its status subresource, observedGeneration its generation."""
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


def play_grove(cp: ControlPlane, scenario: str, namespace: str) -> None:
    directory = STATUS / scenario
    observed = {o["kind"]: o for o in load_documents(directory / "observed.yaml")}
    pcs_obj = observed["PodCliqueSet"]
    pcs_path = _path(pcs_obj["apiVersion"], "podcliquesets", namespace, pcs_obj["metadata"]["name"])
    pcs = _wait(f"PodCliqueSet {pcs_obj['metadata']['name']}", lambda: cp.client.get(pcs_path))
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
                _write_status(cp, f"{collection}/{meta['name']}", status)
    _write_status(cp, pcs_path, pcs_obj["status"])  # last: its change makes Crossplane reconcile at once


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
            _write_status(cp, path, played)
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
        _write_status(cp, f"/apis/apps/v1/namespaces/{namespace}/deployments/{deployment['metadata']['name']}", status)
    return len(deployments)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_status_scenario_on_a_real_crossplane_reports_what_the_preview_derives(
    scenario: str, crossplane: Crossplane
) -> None:
    cp = crossplane.cp
    namespace = f"status-{scenario}"
    ensure_namespace(cp.client, namespace)
    claim = _claim(scenario, namespace)
    version = claim["apiVersion"].split("/")[1]
    claim_path = resource_path("nvidia.com", version, "dynamographdeployments", namespace, claim["metadata"]["name"])
    cp.client.create(resource_path("nvidia.com", version, "dynamographdeployments", namespace), claim)
    if (STATUS / scenario / "required.yaml").exists():
        play_grove(cp, scenario, namespace)
    else:
        want = sum(
            1
            for o in load_documents(STATUS / scenario / "observed.yaml")
            if o["kind"].removeprefix("X") == "DynamoComponentDeployment"
        )
        _wait(
            f"{want} Deployments",
            lambda: len(cp.client.get(f"/apis/apps/v1/namespaces/{namespace}/deployments")["items"]) >= want,
        )
        play_deployments(cp, namespace, statuses=played_statuses(scenario))
    want = comparable(expected_status(scenario))
    deadline = time.monotonic() + SETTLE_SECONDS
    got: dict[str, Any] = {}
    while time.monotonic() < deadline:
        got = comparable(cp.client.get(claim_path).get("status") or {})
        if got == want:
            break
        time.sleep(1)
    assert got == want, (
        f"claim status after {SETTLE_SECONDS:.0f}s:\n{yaml.safe_dump(got)}\nin-process:\n{yaml.safe_dump(want)}"
    )
    if scenario.endswith("-ready"):
        assert got["state"] == "successful" and got["conditions"]["Ready"][0] == "True"
