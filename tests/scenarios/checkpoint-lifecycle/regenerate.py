"""Regenerate the DynamoCheckpoint lifecycle states in this directory from the current Checkpoint step.

    .venv/bin/python tests/scenarios/checkpoint-lifecycle/regenerate.py

For each state of ``examples/checkpoint/vllm-checkpoint.yaml`` it writes ``<state>/observed.yaml`` (the composed
Job and PodSnapshot as the API server returns them, with the status their controllers would write: the Job
controller, the snapshot operator and its node agent, none of which this package ships), ``<state>/required.yaml``
(the operator config, and the Job's pod once it exists) and ``<state>/xr-status.json`` (the phase the previous
reconcile stored). Names and UIDs are derived from names, so the output is stable.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from functions.tooling.manifests import claim_to_xr, find_composition, load_documents
from functions.tooling.pipeline import render

REPO = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
CLAIM = REPO / "examples" / "checkpoint" / "vllm-checkpoint.yaml"
PLATFORM = REPO / "examples" / "operator-config.yaml"
CREATED, DONE = "2026-01-15T10:00:00Z", "2026-01-15T10:04:10Z"
COMPLETIONS = "Reached expected number of succeeded pods"
DEADLINE = "Job was active longer than specified deadline"
Obj = dict[str, Any]


def uid(*parts: str) -> str:
    h = hashlib.sha256("/".join(parts).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def condition(type_: str, status: str, reason: str, message: str, when: str = CREATED) -> Obj:
    return {"lastTransitionTime": when, "message": message, "reason": reason, "status": status, "type": type_}


def observed(obj: Obj, status: Obj) -> Obj:
    out = copy.deepcopy(obj)
    meta = out["metadata"]
    meta.update(uid=uid(out["kind"], meta["namespace"], meta["name"]), creationTimestamp=CREATED, generation=1)
    out["status"] = status
    return out


def job_pod(job: Obj) -> Obj:
    name, namespace = job["metadata"]["name"], job["metadata"]["namespace"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{name}-x7k2p",
            "namespace": namespace,
            "uid": uid("Pod", namespace, f"{name}-x7k2p"),
            "labels": {"batch.kubernetes.io/job-name": name, **job["spec"]["template"]["metadata"]["labels"]},
            "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": uid("Job", namespace, name),
                 "controller": True, "blockOwnerDeletion": True}
            ],
        },
        "spec": copy.deepcopy(job["spec"]["template"]["spec"]) | {"nodeName": "gpu-node-1"},
        "status": {"phase": "Running", "podIP": "10.244.1.17"},
    }  # fmt: skip


def run(status: Obj | None, observed_objs: list[Obj], required: list[Obj]) -> Any:
    xr = claim_to_xr(load_documents(CLAIM)[0])
    if status:
        xr["status"] = status
    composition = find_composition(xr, load_documents(REPO / "compositions"))
    return render(xr, composition, observed=observed_objs, required=required, converge=False)


def write(state: str, status: Obj | None, objs: list[Obj], required: list[Obj]) -> None:
    folder = HERE / state
    folder.mkdir(exist_ok=True)
    (folder / "observed.yaml").write_text(yaml.safe_dump_all(objs, sort_keys=True) if objs else "")
    (folder / "required.yaml").write_text(yaml.safe_dump_all(required, sort_keys=True))
    (folder / "xr-status.json").write_text(json.dumps(status or {}, indent=2, sort_keys=True) + "\n")
    print(f"wrote {folder.relative_to(REPO)}")


def composed(out: Any, kind: str) -> Obj:
    return next(o for o in out.composed if o["kind"] == kind)


def main() -> None:
    operator_config = load_documents(PLATFORM)
    first = run(None, [], operator_config)
    job = composed(first, "Job")
    pod = job_pod(job)
    running = observed(job, {"active": 1, "startTime": CREATED, "ready": 0})
    creating = {**{k: v for k, v in first.composite["status"].items() if k != "conditions"}, "phase": "Creating"}
    write("pending", None, [], operator_config)
    write("creating", creating, [running], [*operator_config, pod])
    snapshot = composed(run(creating, [running], [*operator_config, pod]), "PodSnapshot")
    captured = observed(
        snapshot,
        {
            "boundSnapshotContentName": f"podsnapshotcontent-{uid('PodSnapshot', 'dynamo-demo', 'qwen3-0-6b')}",
            "conditions": [
                condition("Ready", "True", "Captured", "Checkpoint captured and verified", DONE),
                condition("Failed", "False", "Captured", "Checkpoint captured and verified", DONE),
            ],
        },
    )
    complete = observed(
        job,
        {
            "succeeded": 1,
            "startTime": CREATED,
            "completionTime": DONE,
            "conditions": [
                condition("SuccessCriteriaMet", "True", "CompletionsReached", COMPLETIONS, DONE),
                condition("Complete", "True", "CompletionsReached", COMPLETIONS, DONE),
            ],
        },
    )  # fmt: skip
    write("ready", creating, [complete, captured], [*operator_config, pod])
    failed_job = observed(
        job,
        {
            "failed": 1,
            "startTime": CREATED,
            "conditions": [condition("Failed", "True", "DeadlineExceeded", DEADLINE, DONE)],
        },
    )  # fmt: skip
    write("failed", creating, [failed_job], [*operator_config, pod])


if __name__ == "__main__":
    main()
