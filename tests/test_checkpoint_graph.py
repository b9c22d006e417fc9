"""DGDs that start from a checkpoint: auto checkpoints, ``checkpointRef``, WaitForCheckpoint gating and restore
shaping on both pathways (docs/upstream/checkpoint-gms-dgdr-model.md §1.1-§1.7)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from fixtures.corpus import as_upstream_admits
from fixtures.rendering import check_resource
from fixtures.tooling import REPO, crank_render, regenerated, require_shared
from functions.api.graph import Component, Graph
from functions.kinds.checkpoint.auto_checkpoint import auto_checkpoint_id, overlay_pod_template
from functions.kube.checkpoint_ids import identity_hash
from functions.tooling.manifests import dump_documents, find_composition, load_documents
from functions.tooling.pipeline import render
from functions.tooling.render import admitted_xr
from functions.tooling.validation import load_crds, validate_object

AUTO = REPO / "examples" / "checkpoint" / "vllm-agg-auto-checkpoint.yaml"
REF = REPO / "examples" / "v1alpha1" / "vllm-disagg-checkpoint-ref.yaml"
REF_CHECKPOINT = REPO / "examples" / "checkpoint" / "vllm-checkpoint.yaml"
PLATFORM_FILE = REPO / "examples" / "operator-config.yaml"
STATES = REPO / "tests" / "scenarios" / "checkpoint-graph"
# What the checkpoint-ref examples' previews read (examples/README.md): written by STATES' regenerate.py too.
REF_READY = REPO / "examples" / "checkpoint" / "cluster" / "required.yaml"
COMPOSITIONS = load_documents(REPO / "compositions")
Obj = dict[str, Any]


def operator_config(**checkpoint: Any) -> list[Obj]:
    config = copy.deepcopy(load_documents(PLATFORM_FILE)[0])
    config["data"]["checkpoint"].update(checkpoint)
    return [config]


def xr_of(claim: Obj) -> Obj:
    return admitted_xr(copy.deepcopy(claim), "dynamo-demo", "Strict")


def run(claim: Obj, observed: list[Obj] | None = None, required: list[Obj] | None = None) -> Any:
    xr = xr_of(claim)
    return render(xr, find_composition(xr, COMPOSITIONS), observed or [], required or operator_config(), converge=False)


def auto_claim(**checkpoint: Any) -> Obj:
    claim = load_documents(AUTO)[0]
    claim["spec"]["components"][1]["experimental"]["checkpoint"].update(checkpoint)
    return claim


def of_kind(out: Any, kind: str) -> list[Obj]:
    return [o for o in out.composed if o["kind"] == kind]


def cliques(out: Any) -> dict[str, Obj]:
    (pcs,) = of_kind(out, "PodCliqueSet")
    return {c["name"]: c for c in pcs["spec"]["template"]["cliques"]}


def observed_checkpoint(out: Any, phase: str) -> Obj:
    (checkpoint,) = of_kind(out, "DynamoCheckpoint")
    seen = copy.deepcopy(checkpoint)
    ckpt_id = seen["metadata"]["labels"]["nvidia.com/snapshot-checkpoint-id"]
    seen["status"] = {"phase": phase, "checkpointID": ckpt_id, "identityHash": ckpt_id}
    return seen


def graph_ready(out: Any) -> Obj:
    return next(c for c in out.composite["status"]["conditions"] if c["type"] == "DynamoGraphReady")


# --- the auto checkpoint ----------------------------------------------------------------------------------------


def test_the_auto_checkpoint_id_is_upstreams_for_workers_and_others() -> None:
    worker = Component(name="worker", component_type="worker", sub_component_type=None, replicas=1, node_count=1)
    graph = Graph(name="dgd", namespace="ns", shape="v1beta1", components=(worker,), worker_hash="hash-1")
    assert auto_checkpoint_id(graph, worker, "uid-1") == "197725d87a037228bc935cbbfe6158a8"
    frontend = Component(name="Frontend", component_type="frontend", sub_component_type=None, replicas=1, node_count=1)
    graph = Graph(name="my-dgd", namespace="default", shape="v1beta1", components=(frontend,), worker_hash="h")
    assert auto_checkpoint_id(graph, frontend, "") == "f234b2c71432515a48da5bb4796e2460"


def test_the_dgd_composes_its_auto_checkpoint_as_upstream_builds_it() -> None:
    out = run(load_documents(AUTO)[0])
    (checkpoint,) = of_kind(out, "DynamoCheckpoint")
    meta = checkpoint["metadata"]
    ckpt_id = meta["labels"]["nvidia.com/snapshot-checkpoint-id"]
    assert meta["name"] == f"checkpoint-{ckpt_id}" and len(ckpt_id) == 32
    assert meta["namespace"] == "dynamo-demo"
    worker_hash = cliques(out)["vllmworker"]["labels"]["nvidia.com/dynamo-worker-hash"]
    assert {k: v for k, v in meta["labels"].items() if k.startswith("nvidia.com/")} == {
        "nvidia.com/dynamo-component": "VllmWorker",
        "nvidia.com/dynamo-graph-deployment-name": "vllm-agg-ckpt",
        "nvidia.com/dynamo-worker-hash": worker_hash,
        "nvidia.com/snapshot-checkpoint-id": ckpt_id,
    }
    assert {k: v for k, v in meta["annotations"].items() if k.startswith("nvidia.com/")} == {
        "nvidia.com/dynamo-auto-checkpoint": "true",
        "nvidia.com/dynamo-checkpoint-deletion-policy": "Delete",
        "nvidia.com/snapshot-artifact-version": "1",
    }
    spec = checkpoint["spec"]
    assert spec["identity"] == {
        "model": "dynamo-demo/vllm-agg-ckpt",
        "backendFramework": "vllm",
        "extraParameters": {"checkpointID": ckpt_id, "component": "VllmWorker", "dgdUID": ""},
    }
    template = spec["job"]["podTemplateSpec"]
    assert spec["job"]["targetContainerName"] == "main"
    assert [c["name"] for c in template["spec"]["containers"]] == ["main"]
    assert template["spec"]["restartPolicy"] == "Never"
    assert template["spec"]["serviceAccountName"] == "vllm-agg-ckpt-k8s-service-discovery"
    main = template["spec"]["containers"][0]
    assert main["command"] == ["python3", "-m", "dynamo.vllm"] and "readinessProbe" in main
    assert template["metadata"]["labels"]["nvidia.com/dynamo-graph-deployment-name"] == "vllm-agg-ckpt"
    assert out.composite["status"]["checkpoints"] == {
        "VllmWorker": {"checkpointName": meta["name"], "checkpointID": ckpt_id, "identityHash": ckpt_id, "ready": False}
    }
    crd = load_crds([require_shared("upstream", "crds", "nvidia.com_dynamocheckpoints.yaml")])
    assert validate_object(checkpoint, crd[("nvidia.com", "DynamoCheckpoint")]) == []


def test_a_new_worker_generation_gets_a_new_checkpoint_and_keeps_the_old_one() -> None:
    first = run(load_documents(AUTO)[0])
    old = observed_checkpoint(first, "Ready")
    changed = load_documents(AUTO)[0]
    changed["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["args"] += ["--max-model-len", "4096"]
    out = run(changed, observed=[old])
    names = sorted(o["metadata"]["name"] for o in of_kind(out, "DynamoCheckpoint"))
    assert old["metadata"]["name"] in names and len(names) == 2
    assert out.composite["status"]["checkpoints"]["VllmWorker"]["checkpointName"] != old["metadata"]["name"]
    assert cliques(out)["vllmworker"]["spec"]["replicas"] == 0, "the new generation waits for its own checkpoint"


def test_retain_is_recorded_on_the_checkpoint() -> None:
    out = run(auto_claim(deletionPolicy="Retain"))
    (checkpoint,) = of_kind(out, "DynamoCheckpoint")
    assert checkpoint["metadata"]["annotations"]["nvidia.com/dynamo-checkpoint-deletion-policy"] == "Retain"


def test_the_job_pod_template_overlay_merges_as_upstream() -> None:
    base = {
        "metadata": {"labels": {"a": "1"}},
        "spec": {
            "containers": [
                {"name": "main", "image": "x", "env": [{"name": "A", "value": "1"}], "readinessProbe": {"p": 1}}
            ],
            "volumes": [{"name": "v1", "emptyDir": {}}],
            "restartPolicy": "Never",
        },
    }  # fmt: skip
    overlay = {
        "metadata": {"labels": {"b": "2"}, "annotations": {"c": "3"}},
        "spec": {
            "containers": [
                {"name": "main", "env": [{"name": "B", "value": "2"}], "readinessProbe": {"q": 2}},
                {"name": "gms-saver", "image": "y"},
            ],
            "volumes": [{"name": "v1", "hostPath": {"path": "/x"}}, {"name": "v2", "emptyDir": {}}],
            "nodeName": "n1",
        },
    }
    out = overlay_pod_template(base, overlay)
    assert out["metadata"] == {"labels": {"a": "1", "b": "2"}, "annotations": {"c": "3"}}
    main, saver = out["spec"]["containers"]
    assert (
        main["image"] == "x" and [e["name"] for e in main["env"]] == ["A", "B"] and main["readinessProbe"] == {"q": 2}
    )
    assert saver == {"name": "gms-saver", "image": "y"}
    assert out["spec"]["volumes"] == [{"name": "v1", "hostPath": {"path": "/x"}}, {"name": "v2", "emptyDir": {}}]
    assert out["spec"]["nodeName"] == "n1" and out["spec"]["restartPolicy"] == "Never"
    assert base["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}], "the base is not changed"


def test_a_missing_target_container_is_fatal_naming_the_field() -> None:
    with pytest.raises(Exception, match=r"experimental\.checkpoint\.targetContainerName: checkpoint target container"):
        run(auto_claim(targetContainerName="engine"))


# --- gating and shaping on the Grove pathway ----------------------------------------------------------------------


def test_wait_for_checkpoint_holds_the_worker_at_zero_until_ready_then_restores() -> None:
    first = run(load_documents(AUTO)[0])
    waiting = cliques(first)["vllmworker"]
    assert waiting["spec"]["replicas"] == 0 and cliques(first)["frontend"]["spec"]["replicas"] == 1
    assert "nvidia.com/snapshot-checkpoint-id" not in waiting["labels"]
    assert graph_ready(first)["reason"] == "waiting_for_checkpoint"
    name = first.composite["status"]["checkpoints"]["VllmWorker"]["checkpointName"]
    assert graph_ready(first)["message"] == f"Waiting for checkpoints: VllmWorker ({name})"

    ready = run(load_documents(AUTO)[0], observed=[observed_checkpoint(first, "Ready")])
    clique = cliques(ready)["vllmworker"]
    ckpt_id = name.removeprefix("checkpoint-")
    assert clique["spec"]["replicas"] == 2
    assert clique["labels"]["nvidia.com/snapshot-is-restore-target"] == "true"
    assert clique["labels"]["nvidia.com/snapshot-checkpoint-id"] == ckpt_id
    assert {k: clique["annotations"][k] for k in clique["annotations"] if k.startswith("nvidia.com/snapshot")} == {
        "nvidia.com/snapshot-artifact-version": "1",
        "nvidia.com/snapshot-storage-base-path": "/checkpoints",
        "nvidia.com/snapshot-storage-type": "pvc",
        "nvidia.com/snapshot-target-containers": "main",
    }
    pod = clique["spec"]["podSpec"]
    assert pod["securityContext"]["seccompProfile"] == {
        "type": "Localhost",
        "localhostProfile": "profiles/block-iouring.json",
    }
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["checkpoint-storage"] == {
        "name": "checkpoint-storage",
        "persistentVolumeClaim": {"claimName": "snapshot-pvc"},
    }
    assert volumes["snapshot-control"] == {"name": "snapshot-control", "emptyDir": {}}
    main = pod["containers"][0]
    assert {"name": "snapshot-control", "mountPath": "/snapshot-control", "subPath": "main"} in main["volumeMounts"]
    assert {"name": "checkpoint-storage", "mountPath": "/checkpoints"} in main["volumeMounts"]
    env = {e["name"]: e.get("value") for e in main["env"]}
    assert env["DYN_SNAPSHOT_RESTORE_STANDBY"] == "1" and env["DYN_SNAPSHOT_CONTROL_DIR"] == "/snapshot-control"
    assert main["startupProbe"]["failureThreshold"] == 1800 and main["startupProbe"]["periodSeconds"] == 1
    assert main["startupProbe"]["initialDelaySeconds"] == 0 and main["startupProbe"]["successThreshold"] == 1
    assert main["readinessProbe"]["periodSeconds"] == 1, "a Ready checkpoint's workers probe every second"
    assert main["command"] == waiting["spec"]["podSpec"]["containers"][0]["command"], "never the command"
    assert main["args"] == waiting["spec"]["podSpec"]["containers"][0]["args"], "never the args"
    assert ready.composite["status"]["checkpoints"]["VllmWorker"]["ready"] is True
    assert graph_ready(ready)["reason"] != "waiting_for_checkpoint"


def test_a_failed_checkpoint_keeps_the_worker_waiting() -> None:
    first = run(load_documents(AUTO)[0])
    failed = run(load_documents(AUTO)[0], observed=[observed_checkpoint(first, "Failed")])
    assert cliques(failed)["vllmworker"]["spec"]["replicas"] == 0
    assert graph_ready(failed)["reason"] == "waiting_for_checkpoint"


def test_immediate_runs_at_once_with_candidate_metadata_then_restores_once_ready() -> None:
    claim = auto_claim(startupPolicy="Immediate")
    first = run(claim)
    assert cliques(first)["vllmworker"]["spec"]["replicas"] == 2
    assert "nvidia.com/dynamo-checkpoint-restore-candidate" not in cliques(first)["vllmworker"]["annotations"], (
        "no candidate metadata before the checkpoint exists"
    )
    assert graph_ready(first)["reason"] != "waiting_for_checkpoint"
    creating = run(claim, observed=[observed_checkpoint(first, "Creating")])
    annotations = cliques(creating)["vllmworker"]["annotations"]
    name = first.composite["status"]["checkpoints"]["VllmWorker"]["checkpointName"]
    assert {k: v for k, v in annotations.items() if "checkpoint" in k or "snapshot" in k} == {
        "nvidia.com/dynamo-checkpoint-name": name,
        "nvidia.com/dynamo-checkpoint-restore-candidate": "true",
        "nvidia.com/dynamo-checkpoint-startup-policy": "Immediate",
        "nvidia.com/snapshot-target-containers": "main",
    }
    ready = run(claim, observed=[observed_checkpoint(first, "Ready")])
    clique = cliques(ready)["vllmworker"]
    assert clique["labels"]["nvidia.com/snapshot-is-restore-target"] == "true"
    assert "nvidia.com/dynamo-checkpoint-restore-candidate" not in clique["annotations"]


def test_a_multinode_worker_waits_through_its_scaling_group() -> None:
    claim = load_documents(REPO / "examples" / "v1alpha1" / "sglang-multinode.yaml")[0]
    worker = (
        next(c for c in claim["spec"]["components"] if c["type"] == "worker") if "components" in claim["spec"] else None
    )
    if worker is None:
        name = next(n for n, s in claim["spec"]["services"].items() if s.get("componentType") == "worker")
        claim["spec"]["services"][name]["checkpoint"] = {"enabled": True, "startupPolicy": "WaitForCheckpoint"}
    else:
        worker.setdefault("experimental", {})["checkpoint"] = {"enabled": True, "startupPolicy": "WaitForCheckpoint"}
    out = run(claim)
    (pcs,) = of_kind(out, "PodCliqueSet")
    assert [g["replicas"] for g in pcs["spec"]["template"]["podCliqueScalingGroups"]] == [0]


# --- rules ------------------------------------------------------------------------------------------------------


def test_the_gate_off_is_fatal_naming_the_component() -> None:
    with pytest.raises(Exception) as err:
        run(load_documents(AUTO)[0], required=operator_config(enabled=False))
    assert (
        "spec.components[1].experimental.checkpoint: component VllmWorker: checkpoint functionality is disabled"
        in str(err.value)
    )


def test_checkpoint_with_failover_is_fatal_with_upstreams_message() -> None:
    claim = load_documents(AUTO)[0]
    claim["spec"]["components"][1]["experimental"]["failover"] = {"mode": "IntraPod"}
    with pytest.raises(Exception, match="Snapshot with active/passive failover is temporarily unsupported"):
        run(claim)


def test_checkpoint_storage_misconfigured_is_fatal_naming_the_config_field() -> None:
    with pytest.raises(Exception, match=r"EnvironmentConfig/dynamo-platform data\.checkpoint\.storage"):
        run(load_documents(AUTO)[0], required=operator_config(storage={"type": "pvc", "pvc": {"pvcName": "x"}}))


# --- checkpointRef on the component pathway ----------------------------------------------------------------------


def ref_checkpoint(phase: str) -> Obj:
    claim = copy.deepcopy(load_documents(REF_CHECKPOINT)[0])
    claim["status"] = {"phase": phase, "checkpointID": "0123456789abcdef"}
    return claim


def decode_dcd(out: Any) -> Obj:
    return next(o for o in of_kind(out, "DynamoComponentDeployment") if "decode" in o["metadata"]["name"])


def test_a_missing_checkpoint_ref_is_fatal_naming_the_field() -> None:
    with pytest.raises(
        Exception,
        match=r"VllmDecodeWorker\.checkpoint\.checkpointRef: DynamoCheckpoint dynamo-demo/qwen3-0-6b does not exist",
    ):
        run(load_documents(REF)[0])


def test_the_dcd_names_the_checkpoint_and_its_deployment_restores_once_ready() -> None:
    claim = load_documents(REF)[0]
    out = run(claim, required=[*operator_config(), ref_checkpoint("Creating")])
    dcd = decode_dcd(out)
    # a v1alpha1 graph's DCD is in the v1beta1 shape: the checkpoint under experimental, the candidate metadata
    # in the pod template
    assert dcd["spec"]["experimental"]["checkpoint"] == {
        "checkpointRef": "qwen3-0-6b", "deletionPolicy": "Delete", "enabled": True, "startupPolicy": "Immediate",
        "targetContainerName": "main",
    }  # fmt: skip
    candidate = dcd["spec"]["podTemplate"]["metadata"]["annotations"]
    assert candidate["nvidia.com/dynamo-checkpoint-restore-candidate"] == "true"
    assert not of_kind(out, "DynamoCheckpoint"), "a reference composes no checkpoint"
    assert out.composite["status"]["checkpoints"]["VllmDecodeWorker"]["checkpointID"] == "0123456789abcdef"

    composition = find_composition(dcd, COMPOSITIONS)
    for phase, restores in (("Creating", False), ("Ready", True)):
        nested = render(dcd, composition, [], [*operator_config(), ref_checkpoint(phase)], converge=False)
        (deployment,) = of_kind(nested, "Deployment")
        template = deployment["spec"]["template"]
        labels = template["metadata"]["labels"]
        assert (labels.get("nvidia.com/snapshot-checkpoint-id") == "0123456789abcdef") is restores
        annotations = template["metadata"].get("annotations") or {}
        assert (annotations.get("nvidia.com/dynamo-checkpoint-restore-candidate") == "true") is not restores
        volumes = {v["name"] for v in template["spec"].get("volumes") or []}
        assert ("snapshot-control" in volumes) is restores
        check_resource(deployment)


def test_wait_for_checkpoint_on_the_component_pathway_zeroes_the_dcd() -> None:
    claim = load_documents(REF)[0]
    claim["spec"]["services"]["VllmDecodeWorker"]["checkpoint"]["startupPolicy"] = "WaitForCheckpoint"
    waiting = run(claim, required=[*operator_config(), ref_checkpoint("Creating")])
    assert decode_dcd(waiting)["spec"]["replicas"] == 0
    assert graph_ready(waiting)["message"] == "Waiting for checkpoints: VllmDecodeWorker (qwen3-0-6b)"
    ready = run(claim, required=[*operator_config(), ref_checkpoint("Ready")])
    assert decode_dcd(ready)["spec"]["replicas"] == 1
    annotations = decode_dcd(ready)["spec"]["podTemplate"]["metadata"]["annotations"]
    assert "nvidia.com/dynamo-checkpoint-restore-candidate" not in annotations, "none under WaitForCheckpoint"


def test_a_standalone_dcd_looks_a_legacy_identity_up_by_label() -> None:
    dcd = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "decode", "namespace": "dynamo-demo"},
        "spec": {
            "backendFramework": "vllm",
            "componentType": "worker",
            "checkpoint": {"enabled": True, "identity": {"model": "Qwen/Qwen3-0.6B", "backendFramework": "vllm"}},
            "extraPodSpec": {"mainContainer": {"image": "img", "command": ["python3", "-m", "dynamo.vllm"]}},
        },
    }
    xr = xr_of(dcd)
    composition = find_composition(xr, COMPOSITIONS)
    found = ref_checkpoint("Ready")
    ckpt_id = identity_hash(dcd["spec"]["checkpoint"]["identity"])
    found["metadata"]["labels"] = {"nvidia.com/snapshot-checkpoint-id": ckpt_id}
    other = copy.deepcopy(found)
    other["metadata"].update(name="other", labels={"nvidia.com/snapshot-checkpoint-id": "another-id"})
    assert not of_kind(render(xr, composition, [], [*operator_config(), other], converge=False), "Deployment")[0][
        "spec"
    ]["template"]["metadata"]["labels"].get("nvidia.com/snapshot-is-restore-target"), (
        "only a checkpoint with its ID is found"
    )
    out = render(xr, composition, [], [*operator_config(), found], converge=False)
    (deployment,) = of_kind(out, "Deployment")
    assert deployment["spec"]["template"]["metadata"]["labels"]["nvidia.com/snapshot-is-restore-target"] == "true"
    twice = copy.deepcopy(found)
    twice["metadata"]["name"] = "another"
    with pytest.raises(Exception, match="multiple checkpoints found for checkpoint ID"):
        render(xr, composition, [], [*operator_config(), found, twice], converge=False)


# --- the example states -------------------------------------------------------------------------------------------

AUTO_STATES = {
    # state: (worker replicas, DynamoGraphReady reason, restore-shaped)
    "auto-pending": (0, "waiting_for_checkpoint", False),
    "auto-creating": (0, "waiting_for_checkpoint", False),
    "auto-ready": (2, "all_resources_are_ready", True),
    "auto-failed": (0, "waiting_for_checkpoint", False),
}


def state_files(state: str) -> tuple[list[Obj], list[Obj]]:
    return load_documents(STATES / state / "observed.yaml"), load_documents(STATES / state / "required.yaml")


@pytest.mark.parametrize("state", sorted(AUTO_STATES))
def test_each_example_state_renders_as_described(state: str) -> None:
    replicas, reason, shaped = AUTO_STATES[state]
    observed, required = state_files(state)
    out = run(load_documents(AUTO)[0], observed=observed, required=required)
    clique = cliques(out)["vllmworker"]
    assert clique["spec"]["replicas"] == replicas
    assert graph_ready(out)["reason"] == reason
    assert ("nvidia.com/snapshot-is-restore-target" in clique["labels"]) is shaped
    assert out.composite["status"]["state"] == ("successful" if state == "auto-ready" else "pending")


@pytest.mark.parametrize("state", sorted(AUTO_STATES))
def test_crank_renders_each_example_state_as_in_process(state: str, functions_file: Path, tmp_path: Path) -> None:
    xr = xr_of(load_documents(AUTO)[0])
    composition = find_composition(xr, COMPOSITIONS)
    (tmp_path / "xr.yaml").write_text(yaml.safe_dump(xr))
    (tmp_path / "composition.yaml").write_text(yaml.safe_dump(composition))
    folder = STATES / state
    theirs = crank_render(
        str(tmp_path / "xr.yaml"), str(tmp_path / "composition.yaml"), str(functions_file),
        "-o", str(folder / "observed.yaml"), "-e", str(folder / "required.yaml"),
    )  # fmt: skip
    observed, required = state_files(state)
    out = render(xr, composition, observed, required, converge=False)
    assert dump_documents([out.composite, *out.composed]) == theirs


def test_crank_renders_the_checkpoint_ref_example_as_in_process(functions_file: Path, tmp_path: Path) -> None:
    xr = xr_of(load_documents(REF)[0])
    composition = find_composition(xr, COMPOSITIONS)
    (tmp_path / "xr.yaml").write_text(yaml.safe_dump(xr))
    (tmp_path / "composition.yaml").write_text(yaml.safe_dump(composition))
    theirs = crank_render(
        str(tmp_path / "xr.yaml"), str(tmp_path / "composition.yaml"), str(functions_file), "-e", str(REF_READY)
    )
    out = render(xr, composition, [], load_documents(REF_READY), converge=False)
    assert dump_documents([out.composite, *out.composed]) == theirs
    assert decode_dcd(out)["spec"]["experimental"]["checkpoint"]["checkpointRef"] == "qwen3-0-6b"


def test_the_example_states_are_what_the_step_renders_today() -> None:
    """regenerate.py's output is committed: a step change that alters it must be reviewed and regenerated."""
    ref_ready = REF_READY.read_text()
    before, after = regenerated(STATES)
    before[REF_READY], after[REF_READY] = ref_ready, REF_READY.read_text()
    stale = [str(p.relative_to(REPO)) for p in before if before[p] != after.get(p)]
    assert not stale and set(before) == set(after), f"stale: {stale} (run {STATES / 'regenerate.py'})"


def test_the_corpus_snapshot_restore_manifest_renders() -> None:
    claim = as_upstream_admits(  # its images carry a placeholder tag
        load_documents(
            require_shared("corpus", "v1beta1", "examples", "backends", "trtllm", "deploy", "snapshot-restore.yaml")
        )[0]
    )
    claim["metadata"]["namespace"] = "dynamo-demo"
    out = run(claim)
    (checkpoint,) = of_kind(out, "DynamoCheckpoint")
    assert checkpoint["spec"]["identity"]["backendFramework"] == "trtllm"
    worker = next(
        o
        for o in of_kind(out, "DynamoComponentDeployment")
        if o["metadata"]["labels"]["nvidia.com/dynamo-component"] == "TRTLLMWorker"
    )
    assert worker["spec"]["replicas"] == 0, "WaitForCheckpoint"
