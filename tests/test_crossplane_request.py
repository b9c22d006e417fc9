"""A DynamoGraphDeploymentRequest end to end on a real Crossplane: the profiling Job, its phases, the generated
graph deployed as a DynamoGraphDeployment claim, and that graph becoming ready makes the request Deployed.

The test plays what this package does not ship: the Job controller (the Job's status), the profiler's sidecar
(the output ConfigMap it applies, here with a mocker graph on the component pathway) and the Deployment
controller (the graph's Deployments report their replicas ready)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from fixtures.profiling_play import final_config, job_running, job_succeeded, running_output, success_output
from harness.composites import composed_kinds, create_claim, example_namespace, listed, manifest_path, nudge, xr_of
from harness.controller_play import play_deployments, write_status
from harness.controlplane import APIError
from harness.crossplane_core import Crossplane
from harness.poll import until

REPO = Path(__file__).resolve().parents[1]
REQUEST = REPO / "examples" / "dgdr" / "vllm-sla.yaml"
MODEL = "Qwen/Qwen3-0.6B"
PLANNER = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "planner-profile-data"},
           "data": {"decode.json": "{}"}}  # fmt: skip


def mocker_graph() -> dict[str, Any]:
    """What the mocker profiler writes for the request: a frontend and a decode worker, on the component pathway."""

    def container(args: list[str]) -> dict[str, Any]:
        return {
            "name": "main",
            "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0",
            "command": ["python3"],
            "args": args,
        }

    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "mocker", "annotations": {"nvidia.com/enable-grove": "false"}},
        "spec": {
            "backendFramework": "vllm",
            "components": [
                {"name": "Frontend", "type": "frontend", "replicas": 1,
                 "podTemplate": {"spec": {"containers": [container(["-m", "dynamo.frontend"])]}}},
                {"name": "decode", "type": "decode", "replicas": 1,
                 "podTemplate": {"spec": {"containers": [container(["-m", "dynamo.mocker", "--model-path", MODEL])]}}},
            ],
        },
    }  # fmt: skip


def _status(crossplane: Crossplane, claim: dict[str, Any]) -> dict[str, Any]:
    return crossplane.cp.client.get(manifest_path(claim)).get("status") or {}


def _condition(status: dict[str, Any], type_: str) -> dict[str, Any]:
    return next((c for c in status.get("conditions") or [] if c["type"] == type_), {})


def _write_job_status(crossplane: Crossplane, namespace: str, name: str, status: dict[str, Any]) -> None:
    # the real Job controller writes the Job's status too (its start time): a 409 is read again, not fatal
    write_status(crossplane.cp, f"/apis/batch/v1/namespaces/{namespace}/jobs/{name}", status)


def _publish(crossplane: Crossplane, namespace: str, xr: dict[str, Any], data: dict[str, str]) -> None:
    """The sidecar's part: the output ConfigMap, controlled by the request's composite."""
    client = crossplane.cp.client
    collection = f"/api/v1/namespaces/{namespace}/configmaps"
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "dgdr-output-qwen3-sla",
            "labels": {"dgdr.nvidia.com/name": "qwen3-sla", "dgdr.nvidia.com/namespace": namespace,
                       "nvidia.com/managed-by": "dynamo-operator"},
            "ownerReferences": [{"apiVersion": xr["apiVersion"], "kind": xr["kind"], "name": xr["name"],
                                 "uid": xr["uid"], "controller": True}],
        },
        "data": data,
    }  # fmt: skip
    try:
        client.create(collection, cm)
    except APIError as err:
        if err.code != 409:
            raise
        current = client.get(f"{collection}/{cm['metadata']['name']}")
        cm["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        client.replace(f"{collection}/{cm['metadata']['name']}", cm)


def test_a_request_profiles_then_deploys_its_graph_until_deployed(crossplane: Crossplane) -> None:
    cp = crossplane.cp
    namespace = example_namespace(REQUEST, "lifecycle-")
    request = create_claim(cp, REQUEST, namespace)
    jobs = f"/apis/batch/v1/namespaces/{namespace}/jobs"
    (job,) = listed(cp, jobs, "the profiling Job was never created")
    assert job["metadata"]["name"] == "profile-qwen3-sla" and job["spec"]["backoffLimit"] == 0
    pod = job["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["profiler", "output-copier"]
    assert pod["serviceAccountName"] == "profile-qwen3-sla"
    until("the profiling RoleBinding", lambda: "RoleBinding" in composed_kinds(cp, request))
    got = until("the request's XR", lambda: xr_of(cp, request))
    xr = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": got["kind"],  # the request itself in the default package; its cluster XR under a claim
        "name": got["metadata"]["name"],
        "uid": got["metadata"]["uid"],
    }

    # The Job runs; the sidecar publishes the profiler's phase.
    _write_job_status(crossplane, namespace, job["metadata"]["name"], job_running())
    _publish(crossplane, namespace, xr, running_output("SweepingDecode", "Sweeping decode"))
    nudge(cp, request)
    status = until("the claim never reported SweepingDecode", lambda: (
        s if (s := _status(crossplane, request)).get("profilingPhase") == "SweepingDecode"
        and _condition(s, "Profiling").get("reason") == "SweepingDecode" else None))  # fmt: skip
    assert status["phase"] == "Profiling"
    assert _condition(status, "Profiling").get("reason") == "SweepingDecode"

    # Profiling succeeds: the graph is composed as a DynamoGraphDeployment claim beside the request.
    _publish(crossplane, namespace, xr, success_output(final_config(mocker_graph(), PLANNER)))
    _write_job_status(crossplane, namespace, job["metadata"]["name"], job_succeeded())
    nudge(cp, request)
    graphs = f"/apis/nvidia.com/v1beta1/namespaces/{namespace}/dynamographdeployments"
    (graph,) = listed(cp, graphs, "the generated DynamoGraphDeployment was never created")
    assert graph["metadata"]["name"] == "qwen3-sla-dgd"
    assert graph["metadata"]["labels"]["dgdr.nvidia.com/name"] == "qwen3-sla"
    assert {c["runtimeVersionOverride"] for c in graph["spec"]["components"]} == {"1.4.0"}
    listed(cp, f"/api/v1/namespaces/{namespace}/configmaps?labelSelector=dgdr.nvidia.com%2Fname%3Dqwen3-sla",
           "the planner ConfigMap")  # fmt: skip
    until("the claim never reported Deploying", lambda: _status(crossplane, request).get("phase") == "Deploying")

    # The graph renders like any other: its component deployments' Deployments come up.
    deployments = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    until("the graph's two Deployments", lambda: len(cp.client.get(deployments)["items"]) == 2)
    play_deployments(cp, namespace)
    # The claim gets the XR's status fields and its conditions in separate updates: wait for both.
    status = until("the claim never reported Deployed with DeploymentReady", lambda: (
        s if (s := _status(crossplane, request)).get("phase") == "Deployed"
        and _condition(s, "DeploymentReady").get("reason") == "DeploymentReady" else None))  # fmt: skip
    assert status["dgdName"] == "qwen3-sla-dgd"
    assert status["deploymentInfo"] == {"replicas": 2, "availableReplicas": 2}
    assert _condition(status, "DeploymentReady")["message"] == "DynamoGraphDeployment qwen3-sla-dgd is ready"
    until(
        "the claim never became Ready",
        lambda: _condition(_status(crossplane, request), "Ready").get("status") == "True",
    )
    assert (
        yaml.safe_load(yaml.safe_dump(status["profilingResults"]["selectedConfig"]))["metadata"]["name"]
        == "qwen3-sla-dgd"
    )

    # Deleting the request takes the graph with it (composed objects belong to their composite).
    cp.client.delete(manifest_path(request))
    until("the graph outlived its request", lambda: not cp.client.get(graphs)["items"])
