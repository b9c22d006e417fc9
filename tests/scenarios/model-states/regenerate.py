"""Regenerate the observed states of the DynamoModel examples from the current Model step.

    .venv/bin/python tests/scenarios/model-states/regenerate.py

Each ``<state>/`` holds ``required.yaml`` (the operator config, the EndpointSlices of the base model's Service
with the pods behind them, as the EndpointSlice controller and the kubelet report them, and for a LoRA adapter
the load Job's pod with the termination message the Job wrote) and, for a LoRA adapter, ``observed.yaml`` (the
load Job as Crossplane observes it). ``base-discovered`` belongs to ``examples/model/qwen3-base.yaml``, the
others to ``examples/model/qwen3-lora.yaml``. The two states the examples' previews read live beside them, in
``examples/model/cluster/`` (``EXAMPLE_STATES``). Names, IPs and UIDs are derived from names: the output is stable.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from functions.kube.labels import model_hash
from functions.tooling.manifests import find_composition, load_documents
from functions.tooling.pipeline import render
from functions.tooling.render import admitted_xr

REPO = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
BASE = REPO / "examples" / "model" / "qwen3-base.yaml"
LORA = REPO / "examples" / "model" / "qwen3-lora.yaml"
PLATFORM = REPO / "examples" / "operator-config.yaml"
# The states examples/README.md's previews read, kept beside the examples; the others are here.
EXAMPLE_STATES = {
    "base-discovered": REPO / "examples" / "model" / "cluster" / "qwen3-base",
    "all-loaded": REPO / "examples" / "model" / "cluster" / "qwen3-lora",
}
NAMESPACE = "dynamo-demo"
GRAPH = "vllm-agg-model"
CREATED = "2026-01-15T10:00:00Z"
Obj = dict[str, Any]


def uid(*parts: str) -> str:
    h = hashlib.sha256("/".join(parts).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def ip(name: str) -> str:
    h = hashlib.sha256(name.encode()).digest()
    return f"10.244.{h[0] % 8}.{h[1] % 250 + 2}"


def worker_pods(count: int) -> list[Obj]:
    labels = {
        "nvidia.com/dynamo-base-model-hash": model_hash("Qwen/Qwen3-0.6B"),
        "nvidia.com/dynamo-component-type": "worker",
        "nvidia.com/dynamo-graph-deployment-name": GRAPH,
    }
    pods = []
    for i in range(count):
        name = f"{GRAPH}-0-vllmworker-{'abcdef'[i]}{i}x7k"
        pods.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NAMESPACE, "uid": uid("Pod", name), "labels": labels},
            "status": {"phase": "Running", "podIP": ip(name)},
        })  # fmt: skip
    return pods


def endpoint_slice(pods: list[Obj]) -> Obj:
    service = f"dynamo-model-{model_hash('Qwen/Qwen3-0.6B')}"
    name = f"{service}-x8q2n"
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": name, "namespace": NAMESPACE, "uid": uid("EndpointSlice", name),
            "labels": {"kubernetes.io/service-name": service,
                       "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                       "nvidia.com/dynamo-base-model-hash": model_hash("Qwen/Qwen3-0.6B")},
        },
        "addressType": "IPv4",
        "ports": [{"name": "system", "port": 9090, "protocol": "TCP"}],
        "endpoints": [
            {"addresses": [p["status"]["podIP"]], "conditions": {"ready": True, "serving": True, "terminating": False},
             "targetRef": {"kind": "Pod", "name": p["metadata"]["name"], "namespace": NAMESPACE,
                           "uid": p["metadata"]["uid"]}}
            for p in pods
        ],
    }  # fmt: skip


def run(claim: Path, observed: list[Obj], required: list[Obj]) -> Any:
    xr = admitted_xr(load_documents(claim)[0], NAMESPACE, "Strict")
    return render(xr, find_composition(xr, load_documents(REPO / "compositions")), observed, required, converge=False)


def job_pod(job: Obj, results: list[tuple[str, int, str]]) -> Obj:
    name = job["metadata"]["name"]
    lines = [json.dumps({"address": a, "code": c, "message": m}, separators=(",", ":")) for a, c, m in results]
    message = "\n".join(sorted(lines)) + "\n"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{name}-q4z8d", "namespace": NAMESPACE, "uid": uid("Pod", f"{name}-q4z8d"),
            "labels": {"batch.kubernetes.io/job-name": name, **job["spec"]["template"]["metadata"]["labels"]},
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": uid("Job", name),
                                 "controller": True, "blockOwnerDeletion": True}],
        },
        "status": {"phase": "Succeeded", "containerStatuses": [{"name": "load", "ready": False, "restartCount": 0,
                   "state": {"terminated": {"exitCode": 0, "reason": "Completed", "message": message}}}]},
    }  # fmt: skip


def observed_job(job: Obj) -> Obj:
    out = json.loads(json.dumps(job))
    meta = out["metadata"]
    meta.update(uid=uid("Job", meta["name"]), creationTimestamp=CREATED, generation=1)
    out["status"] = {"succeeded": 1, "startTime": CREATED, "completionTime": "2026-01-15T10:00:04Z"}
    return out


def write(state: str, observed: list[Obj], required: list[Obj], what: str) -> None:
    folder = EXAMPLE_STATES.get(state, HERE / state)
    folder.mkdir(parents=True, exist_ok=True)
    header = f"# {what} Generated by tests/scenarios/model-states/regenerate.py.\n"
    (folder / "required.yaml").write_text(header + yaml.safe_dump_all(required, sort_keys=True))
    if observed:
        (folder / "observed.yaml").write_text(header + yaml.safe_dump_all(observed, sort_keys=True))
    print(f"wrote {folder.relative_to(REPO)}")


def lora_state(state: str, count: int, outcomes: list[tuple[int, str]], what: str) -> None:
    operator_config = load_documents(PLATFORM)
    pods = worker_pods(count)
    required = [*operator_config, endpoint_slice(pods), *pods]
    (job,) = [o for o in run(LORA, [], required).composed if o["kind"] == "Job"]
    results = [(f"http://{p['status']['podIP']}:9090", c, m) for p, (c, m) in zip(pods, outcomes, strict=True)]
    write(state, [observed_job(job)], [*required, job_pod(job, results)], what)


def main() -> None:
    write("no-endpoints", [], load_documents(PLATFORM), "No Service serves the base model yet: no EndpointSlices.")
    pods = worker_pods(2)
    write("base-discovered", [], [*load_documents(PLATFORM), endpoint_slice(pods), *pods],
          "Two worker pods behind the base model's Service.")  # fmt: skip
    lora_state("some-ready", 3, [(200, ""), (200, ""), (0, "curl: (28) Operation timed out after 15002 milliseconds")],
               "Three workers; the load reached two, the third timed out.")  # fmt: skip
    lora_state("all-loaded", 2, [(200, ""), (200, "")], "Two workers; the adapter loaded on both.")
    lora_state("failed-load", 2, [(404, '{"error":"adapter not found at hf://example-org/qwen3-0.6b-sql-lora"}')] * 2,
               "Two workers; both refused the adapter's source.")  # fmt: skip


if __name__ == "__main__":
    main()
