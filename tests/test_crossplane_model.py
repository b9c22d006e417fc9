"""DynamoModels on a real Crossplane: a base model discovers the pods behind its base model's Service, and a
LoRA adapter's load Job reports each endpoint until the model serves. The test plays what this package does
not ship: the EndpointSlice controller and the kubelet (the pods' IPs and the slice), and the Job controller
(the load Job's pod and its termination message)."""

from __future__ import annotations

import json
from typing import Any

from fixtures.tooling import REPO
from functions.kube.labels import model_hash
from harness.apiserver import ensure_namespace
from harness.composites import create_claim, example_namespace, listed, manifest_path, nudge
from harness.controller_play import play_job_pod
from harness.crossplane_core import Crossplane
from harness.poll import until

BASE = REPO / "examples" / "model" / "qwen3-base.yaml"
LORA = REPO / "examples" / "model" / "qwen3-lora.yaml"
HASH = model_hash("Qwen/Qwen3-0.6B")


def _status(crossplane: Crossplane, claim: dict[str, Any]) -> dict[str, Any]:
    return crossplane.cp.client.get(manifest_path(claim)).get("status") or {}


def _condition(status: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in status.get("conditions") or [] if c["type"] == kind), {})


def play_workers(crossplane: Crossplane, namespace: str, count: int) -> list[str]:
    """Worker pods behind the base model's Service, with IPs, and the EndpointSlice the controller would write."""
    client = crossplane.cp.client
    ensure_namespace(client, namespace)
    pods, addresses = [], []
    for i in range(count):
        pod = client.create(f"/api/v1/namespaces/{namespace}/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"worker-{i}", "labels": {"nvidia.com/dynamo-base-model-hash": HASH}},
            "spec": {"containers": [{"name": "main", "image": "vllm:1"}]},
        })  # fmt: skip
        ip = f"10.244.0.{10 + i}"
        pod["status"] = {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}]}
        client.replace(f"/api/v1/namespaces/{namespace}/pods/worker-{i}/status", pod)
        pods.append(pod)
        addresses.append(f"http://{ip}:9090")
    client.create(f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices", {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": f"dynamo-model-{HASH}-abcde", "labels": {
            "kubernetes.io/service-name": f"dynamo-model-{HASH}", "nvidia.com/dynamo-base-model-hash": HASH}},
        "addressType": "IPv4",
        "ports": [{"name": "system", "port": 9090, "protocol": "TCP"}],
        "endpoints": [{"addresses": [p["status"]["podIP"]], "conditions": {"ready": True},
                       "targetRef": {"kind": "Pod", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]}}
                      for p in pods],
    })  # fmt: skip
    return addresses


def test_a_base_model_discovers_its_endpoints(crossplane: Crossplane) -> None:
    namespace = example_namespace(BASE, "model-")
    play_workers(crossplane, namespace, 2)
    claim = create_claim(crossplane.cp, BASE, namespace)
    status = until("the base model never discovered its endpoints",
                    lambda: s if (s := _status(crossplane, claim)).get("totalEndpoints") == 2 else None)  # fmt: skip
    assert status["readyEndpoints"] == 0
    assert {e["podName"] for e in status["endpoints"]} == {"worker-0", "worker-1"}
    ready = until("no EndpointsReady", lambda: _condition(_status(crossplane, claim), "EndpointsReady") or None)
    assert (ready["status"], ready["reason"]) == ("True", "EndpointsDiscovered")


def test_a_lora_is_loaded_by_its_job_and_then_serves(crossplane: Crossplane) -> None:
    cp = crossplane.cp
    namespace = example_namespace(LORA, "model-")
    addresses = play_workers(crossplane, namespace, 2)
    claim = create_claim(cp, LORA, namespace)
    jobs = f"/apis/batch/v1/namespaces/{namespace}/jobs"
    (job,) = listed(cp, jobs, "the LoRA load Job was never created")
    command = job["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[6:] == sorted(addresses), "the Job calls every endpoint"

    def loading() -> dict[str, Any] | None:
        condition = _condition(_status(crossplane, claim), "EndpointsReady")
        return condition if condition.get("reason") == "NotReady" else None

    waiting = until("the model never reported NotReady while loading", loading)
    assert waiting["status"] == "False"
    # The Job controller's part: the pod ran the script and wrote each endpoint's result.
    pod = play_job_pod(cp, namespace, job)
    lines = "\n".join(json.dumps({"address": a, "code": 200, "message": ""}) for a in sorted(addresses))
    pod["status"] = {"phase": "Succeeded", "containerStatuses": [{
        "name": "load", "image": "curl", "imageID": "", "ready": False, "restartCount": 0,
        "state": {"terminated": {"exitCode": 0, "reason": "Completed", "message": lines + "\n"}}}]}  # fmt: skip
    cp.client.replace(f"/api/v1/namespaces/{namespace}/pods/{pod['metadata']['name']}/status", pod)
    nudge(cp, claim)
    status = until("the LoRA never served",
                    lambda: s if (s := _status(crossplane, claim)).get("readyEndpoints") == 2 else None)  # fmt: skip
    assert all(e["ready"] for e in status["endpoints"])
    done = until("EndpointsReady never turned True", lambda: c if (
        c := _condition(_status(crossplane, claim), "EndpointsReady")).get("status") == "True" else None)  # fmt: skip
    assert done["reason"] == "AllEndpointsReady"
    assert done["message"] == "All 2 endpoint(s) are ready or covered by a capable prefill"
