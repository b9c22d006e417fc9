"""Regenerate the observed-state examples in this directory from the current render step.

Run from the repository root after the render step changes what it composes:

    .venv/bin/python tests/scenarios/status/regenerate.py

For each claim and state it renders the claim in-process, then writes
``<claim>-<state>/observed.yaml`` (the composed resources as the API server would return them:
uid, generation, a Service's clusterIP, the PodCliqueSet's status) and ``required.yaml`` (the
PodCliques and PodCliqueScalingGroups Grove creates for the PodCliqueSet, with their status).
Everything is derived from names, so the output is stable.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from functions.api.operator_config import deep_merge
from functions.contract import StepRequest
from functions.kinds.component.component_step import component_deployment
from functions.tooling.manifests import claim_to_xr, find_composition, load_documents
from functions.tooling.pipeline import render

REPO = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO / "tests"))

from fixtures.corpus import example_claim  # noqa: E402  (the graph each scenario is built from, as the tests find it)

CLAIMS = ("sglang-multinode", "vllm-agg")
CREATED = "2026-01-15T10:00:00Z"
CHANGED = "2026-01-15T10:02:30Z"
GROVE = "grove.io/v1alpha1"
UNVERSIONED = ("ConfigMap", "ServiceAccount", "Role", "RoleBinding", "Service")

Obj = dict[str, Any]


def _digest(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


def uid(kind: str, namespace: str, name: str) -> str:
    h = _digest(kind, namespace, name)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def resource_version(name: str) -> str:
    return str(int(_digest(name)[:6], 16))


def condition(type_: str, status: str, reason: str, message: str, when: str = CREATED) -> Obj:
    return {"lastTransitionTime": when, "message": message, "reason": reason, "status": status, "type": type_}


def as_observed(obj: Obj, ready: bool) -> Obj:
    """A composed resource as the API server returns it."""
    out = copy.deepcopy(obj)
    meta = out["metadata"]
    meta.update(
        uid=uid(out["kind"], meta.get("namespace", ""), meta["name"]),
        creationTimestamp=CREATED,
        resourceVersion=resource_version(meta["name"]),
    )
    if out["kind"] not in UNVERSIONED:
        meta["generation"] = 1
    if out["kind"] == "PodCliqueSet":
        part_of = f"app.kubernetes.io/managed-by=grove-operator,app.kubernetes.io/part-of={meta['name']}"
        out["status"] = {
            "observedGeneration": 1,
            "replicas": 1,
            "availableReplicas": 1 if ready else 0,
            "updatedReplicas": 1,
            "hpaPodSelector": part_of,
            "currentGenerationHash": _digest(meta["name"])[:16],
        }
    if out["kind"] == "Service":
        ip = f"10.96.{int(meta['uid'][:2], 16)}.{int(meta['uid'][2:4], 16)}"
        out["spec"].update(clusterIP=ip, clusterIPs=[ip])
        out["spec"].setdefault("type", "ClusterIP")
        out["status"] = {"loadBalancer": {}}
    return out


def grove_metadata(
    kind: str, name: str, namespace: str, pcs: str, component: str, labels: Obj, owner: Obj, generation: int = 1
) -> Obj:
    all_labels = {
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/managed-by": "grove-operator",
        "app.kubernetes.io/part-of": pcs,
        "grove.io/podcliqueset-replica-index": "0",
        **labels,
    }
    return {
        "name": name,
        "namespace": namespace,
        "uid": uid(kind, namespace, name),
        "generation": generation,
        "creationTimestamp": CREATED,
        "resourceVersion": resource_version(name),
        "labels": dict(sorted(all_labels.items())),
        "ownerReferences": [
            {
                "apiVersion": GROVE,
                "kind": owner["kind"],
                "name": owner["name"],
                "uid": uid(owner["kind"], namespace, owner["name"]),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }


def podclique(
    name: str, namespace: str, pcs: str, clique: Obj, owner: Obj, labels: Obj, ready: int, generation: int = 1
) -> Obj:
    replicas, min_available = clique["spec"]["replicas"], clique["spec"]["minAvailable"]
    enough = ready >= min_available
    component = "pcsg-podclique" if owner["kind"] == "PodCliqueScalingGroup" else "pcs-podclique"
    all_labels = {**clique.get("labels", {}), "grove.io/podclique": name, **labels}
    return {
        "apiVersion": GROVE,
        "kind": "PodClique",
        "metadata": grove_metadata("PodClique", name, namespace, pcs, component, all_labels, owner, generation),
        "spec": copy.deepcopy(clique["spec"]),
        "status": {
            "observedGeneration": generation,
            "replicas": replicas,
            "readyReplicas": ready,
            "updatedReplicas": replicas,
            "scheduledReplicas": replicas,
            "scheduleGatedReplicas": 0,
            "hpaPodSelector": f"app.kubernetes.io/managed-by=grove-operator,app.kubernetes.io/part-of={pcs},"
            f"grove.io/podclique={name}",
            "conditions": [
                condition(
                    "MinAvailableBreached",
                    "False" if enough else "True",
                    "SufficientReadyPods" if enough else "InsufficientReadyPods",
                    f"{'Sufficient' if enough else 'Insufficient'} ready pods. "
                    f"Expected at least: {min_available}, found: {ready}",
                    CHANGED,
                ),
                condition(
                    "PodCliqueScheduled",
                    "True",
                    "SufficientScheduledPods",
                    f"Sufficient scheduled pods found. Expected at least: {min_available}, found: {replicas}",
                ),
            ],
        },
    }


def scaling_group(name: str, namespace: str, pcs: str, config: Obj, available: int) -> Obj:
    enough = available >= config["minAvailable"]
    owner = {"kind": "PodCliqueSet", "name": pcs}
    return {
        "apiVersion": GROVE,
        "kind": "PodCliqueScalingGroup",
        "metadata": grove_metadata(
            "PodCliqueScalingGroup", name, namespace, pcs, "pcs-podcliquescalinggroup", {}, owner
        ),
        "spec": {
            "replicas": config["replicas"],
            "minAvailable": config["minAvailable"],
            "cliqueNames": list(config["cliqueNames"]),
        },
        "status": {
            "observedGeneration": 1,
            "replicas": config["replicas"],
            "availableReplicas": available,
            "updatedReplicas": config["replicas"],
            "scheduledReplicas": config["replicas"],
            "selector": f"app.kubernetes.io/managed-by=grove-operator,app.kubernetes.io/part-of={pcs},"
            f"grove.io/podcliquescalinggroup={name}",
            "conditions": [
                condition(
                    "MinAvailableBreached",
                    "False" if enough else "True",
                    f"{'Sufficient' if enough else 'Insufficient'}AvailablePodCliqueScalingGroupReplicas",
                    f"{'Sufficient' if enough else 'Insufficient'} PodCliqueScalingGroup replicas are available. "
                    f"Expected at least: {config['minAvailable']}, found: {available}",
                    CHANGED,
                )
            ],
        },
    }


def grove_objects(
    pcs_obj: Obj,
    ready: bool,
    rollouts: dict[str, tuple[int, int]] | None = None,
    patches: dict[str, Obj] | None = None,
) -> list[Obj]:
    """What Grove creates for the PodCliqueSet; when not ready, multi-replica and worker cliques lag.

    ``rollouts``: clique name -> (ready pods, generation) of a standalone PodClique whose template changed;
    ``patches``: clique name -> what to merge into that standalone PodClique (its spec or status).
    """
    rollouts, patches = rollouts or {}, patches or {}
    pcs, namespace = pcs_obj["metadata"]["name"], pcs_obj["metadata"]["namespace"]
    template = pcs_obj["spec"]["template"]
    cliques = {c["name"]: c for c in template["cliques"]}
    groups = template.get("podCliqueScalingGroups", [])
    grouped = {n for g in groups for n in g["cliqueNames"]}
    podgang = {"grove.io/podgang": f"{pcs}-0"}
    out = []
    for name, clique in cliques.items():
        if name in grouped:
            continue
        want = clique["spec"]["replicas"]
        owner = {"kind": "PodCliqueSet", "name": pcs}
        got = want if ready or want == 1 else want - 1
        got, generation = rollouts.get(name, (got, 1))
        obj = podclique(f"{pcs}-0-{name}", namespace, pcs, clique, owner, podgang, got, generation)
        out.append(deep_merge(obj, patches[name]) if name in patches else obj)
    for group in groups:
        group_name = f"{pcs}-0-{group['name']}"
        out.append(scaling_group(group_name, namespace, pcs, group, group["replicas"] if ready else 0))
        labels = {
            **podgang,
            "grove.io/podcliquescalinggroup": group_name,
            "grove.io/podcliquescalinggroup-replica-index": "0",
        }
        owner = {"kind": "PodCliqueScalingGroup", "name": group_name}
        for name in group["cliqueNames"]:
            clique = cliques[name]
            got = clique["spec"]["replicas"] if ready or name.endswith("-ldr") else 0
            out.append(podclique(f"{group_name}-0-{name}", namespace, pcs, clique, owner, labels, got))
    return sorted(out, key=lambda o: (o["kind"], o["metadata"]["name"]))


def write_overlay(target: Path, overlay: Obj) -> None:
    """The XR's changes beyond the claim. JSON, not YAML: every YAML file under examples/ must be a Kubernetes
    object (the package build parses them)."""
    target.mkdir(parents=True, exist_ok=True)
    (target / "xr-overlay.json").write_text(json.dumps(overlay, indent=2, sort_keys=True) + "\n")


def write(path: Path, header: str, docs: list[Obj]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join("---\n" + yaml.safe_dump(d, sort_keys=True, width=120) for d in docs)
    path.write_text(header + body)


def regenerate(claim_name: str, ready: bool) -> Path:
    claim = yaml.safe_load((example_claim(claim_name)).read_text())
    xr = claim_to_xr(claim)
    composed = render(xr, find_composition(xr, load_documents(REPO / "compositions"))).composed
    observed = [as_observed(o, ready) for o in composed]
    pcs = next(o for o in observed if o["kind"] == "PodCliqueSet")
    pcs_name = pcs["metadata"]["name"]
    state = "every component ready" if ready else "still rolling out"
    target = HERE / f"{claim_name}-{'ready' if ready else 'pending'}"
    source = example_claim(claim_name).relative_to(REPO)
    write(
        target / "observed.yaml",
        f"# Observed composed resources of {source} ({state}), as Crossplane passes them to the\n"
        "# pipeline: the render step's names and the crossplane.io/composition-resource-name annotation.\n"
        "# Generated by tests/scenarios/status/regenerate.py.\n",
        observed,
    )
    write(
        target / "required.yaml",
        f"# The Grove objects Grove created for PodCliqueSet {pcs_name} ({state}); the status step reads them as\n"
        f"# required resources (label app.kubernetes.io/part-of: {pcs_name}).\n"
        "# Generated by tests/scenarios/status/regenerate.py.\n",
        grove_objects(pcs, ready),
    )
    return target


# A Sequential restart half-way (examples/v1alpha1/vllm-disagg.yaml): an earlier restart "restart-1" completed, then
# spec.restart.id became "restart-2". Frontend (first in alphabetical order) has restarted; the decode worker
# is rolling (its PodClique caught up with the new template, the new pod is not ready yet); the prefill worker
# waits for its turn and keeps "restart-1".
RESTART_CLAIM = "vllm-disagg"
RESTART_ID, EARLIER_RESTART_ID = "restart-2", "restart-1"
RESTART_OVERLAY = {
    "spec": {"restart": {"id": RESTART_ID}},
    "status": {"restart": {"inProgress": ["VllmDecodeWorker"], "observedID": RESTART_ID, "phase": "Restarting"}},
}
PCS_GENERATION = 4  # created, restart-1, restart-2 on the frontend, restart-2 on the decode worker
CLIQUE_ROLLOUTS = {"frontend": (1, 3), "vllmdecodeworker": (0, 3), "vllmprefillworker": (2, 2)}


def regenerate_restarting() -> Path:
    claim = yaml.safe_load((example_claim(RESTART_CLAIM)).read_text())
    xr = deep_merge(claim_to_xr(claim), RESTART_OVERLAY)
    composed = render(xr, find_composition(xr, load_documents(REPO / "compositions"))).composed
    observed = [as_observed(o, ready=False) for o in composed]
    pcs = next(o for o in observed if o["kind"] == "PodCliqueSet")
    pcs["metadata"]["generation"] = pcs["status"]["observedGeneration"] = PCS_GENERATION
    for clique in pcs["spec"]["template"]["cliques"]:
        if clique["annotations"].get("nvidia.com/restartAt") != RESTART_ID:
            clique["annotations"]["nvidia.com/restartAt"] = EARLIER_RESTART_ID
    target = HERE / f"{RESTART_CLAIM}-restarting"
    write_overlay(target, RESTART_OVERLAY)
    source = example_claim(RESTART_CLAIM).relative_to(REPO)
    write(
        target / "observed.yaml",
        f"# Observed composed resources of {source} half-way through a Sequential restart to\n"
        f"# {RESTART_ID}: the frontend and decode cliques carry it, the prefill clique still {EARLIER_RESTART_ID}.\n"
        "# Generated by tests/scenarios/status/regenerate.py.\n",
        observed,
    )
    write(
        target / "required.yaml",
        f"# The Grove objects of PodCliqueSet {pcs['metadata']['name']} during the restart: the frontend restarted,\n"
        "# the decode worker's PodClique rolling (new template processed, new pod not ready), the prefill worker\n"
        "# untouched. Generated by tests/scenarios/status/regenerate.py.\n",
        grove_objects(pcs, ready=True, rollouts=CLIQUE_ROLLOUTS),
    )
    return target


# The component pathway (examples/v1alpha1/vllm-disagg-no-grove.yaml): nested DynamoComponentDeployments report their
# own status, which the DGD reads from the observed XRs; nothing is read as a required resource.
COMPONENT_CLAIM = "vllm-disagg-no-grove"
NEW_IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.1"
ROLLING_OVERLAY = {
    "spec": {
        "services": {
            name: {"extraPodSpec": {"mainContainer": {"image": NEW_IMAGE}}}
            for name in ("VllmDecodeWorker", "VllmPrefillWorker")
        }
    }
}


def observed_dcd(obj: Obj, ready: int, replicas: int | None = None, created: str = CREATED) -> Obj:
    """A DynamoComponentDeployment XR as observed once its own pipeline has written its status."""
    out = as_observed(obj, True)
    if replicas is not None:
        out["spec"]["replicas"] = replicas
    out["metadata"]["creationTimestamp"] = created
    name = out["metadata"]["annotations"]["dynamo.fn.crossplane.io/claim-name"]
    want = out["spec"]["replicas"]
    available = ready >= want
    why = "Deployment is ready" if available else f"desired={want}, available={ready}"
    out["status"] = {
        "observedGeneration": 1,
        "podSelector": {"nvidia.com/selector": name},
        "service": {
            "componentKind": "Deployment",
            "componentName": name,
            "componentNames": [name],
            "replicas": want,
            "updatedReplicas": want,
            "readyReplicas": ready,
            "availableReplicas": ready,
        },
        "conditions": [
            condition("Available", "True" if available else "False",
                      "DeploymentReady" if available else "DeploymentNotReady", why, CHANGED),
            condition("DynamoComponentReady", "True" if available else "False",
                      "ComponentReady" if available else "ComponentNotReady",
                      "component is ready" if available else why, CHANGED),
            condition("Progressing", "True", "RolloutComplete", "Every component's replicas are updated", CHANGED),
        ],
    }  # fmt: skip
    return out


def _observed_graph(composed: list[Obj], dcds: dict[str, Obj]) -> list[Obj]:
    resource = "crossplane.io/composition-resource-name"
    return [dcds.get(o["metadata"]["annotations"][resource]) or as_observed(o, True) for o in composed]


def regenerate_components_ready() -> Path:
    claim = yaml.safe_load((example_claim(COMPONENT_CLAIM)).read_text())
    xr = claim_to_xr(claim)
    composed = render(xr, find_composition(xr, load_documents(REPO / "compositions"))).composed
    dcds = {
        o["metadata"]["annotations"]["crossplane.io/composition-resource-name"]: observed_dcd(o, o["spec"]["replicas"])
        for o in composed
        if o["kind"] == "XDynamoComponentDeployment"
    }
    target = HERE / f"{COMPONENT_CLAIM}-ready"
    source = example_claim(COMPONENT_CLAIM).relative_to(REPO)
    write(
        target / "observed.yaml",
        f"# Observed composed resources of {source} (every DynamoComponentDeployment\n"
        "# Available). Generated by tests/scenarios/status/regenerate.py.\n",
        _observed_graph(composed, dcds),
    )
    return target


def regenerate_components_rolling() -> Path:
    """Half-way through a managed rolling update: both workers' images changed; the new decode DCD has one
    of two replicas ready, the new prefill DCD none; the old DCDs still serve."""
    claim = yaml.safe_load((example_claim(COMPONENT_CLAIM)).read_text())
    old_xr = claim_to_xr(claim)
    compositions = load_documents(REPO / "compositions")
    old = render(old_xr, find_composition(old_xr, compositions)).composed
    resource = "crossplane.io/composition-resource-name"
    dcds = {
        o["metadata"]["annotations"][resource]: observed_dcd(o, o["spec"]["replicas"])
        for o in old
        if o["kind"] == "XDynamoComponentDeployment"
    }
    xr = deep_merge(old_xr, ROLLING_OVERLAY)
    planned = render(xr, find_composition(xr, compositions), list(dcds.values())).composed
    for obj in planned:
        key = obj["metadata"]["annotations"][resource]
        if obj["kind"] == "XDynamoComponentDeployment" and key not in dcds:
            decode = "decode" in key
            dcds[key] = observed_dcd(obj, ready=1 if decode else 0, replicas=1, created=CHANGED)
    target = HERE / f"{COMPONENT_CLAIM}-rolling"
    write_overlay(target, ROLLING_OVERLAY)
    source = example_claim(COMPONENT_CLAIM).relative_to(REPO)
    write(
        target / "observed.yaml",
        f"# Observed composed resources of {source} during a managed rolling update to\n"
        f"# {NEW_IMAGE}: the old worker DCDs serving, the new decode DCD 1/1 ready, the new prefill DCD 0/1.\n"
        "# Generated by tests/scenarios/status/regenerate.py.\n",
        _observed_graph(planned, dcds),
    )
    return target


# Honest readiness (docs/kinds/dgd.md): Grove rolling the vLLM worker of examples/v1beta1/vllm-agg.yaml to a new
# template, one of its two pods updated. "lagging": the update started at CHANGED, nothing observed since;
# "stalled": the worker's MinAvailableBreached condition moved at STALL_SEEN, 750 s after the update started
# (deadline 600 s). "idle": the worker's PodClique wants no pods (Grove has not applied the template's 2 yet):
# nothing runs, which is not Ready.
GROVE_CLAIM = "vllm-agg"
WORKER_CLIQUE = "vllmworker"
STALL_SEEN = "2026-01-15T10:15:00Z"


def _rolling_worker(breached_at: str) -> Obj:
    in_progress = condition(
        "MinAvailableBreached", "Unknown", "UpdateInProgress", "PodClique is undergoing a rolling update", breached_at
    )
    return {
        "status": {
            "readyReplicas": 1,
            "updatedReplicas": 1,
            "conditions": [in_progress, condition("PodCliqueScheduled", "True", "SufficientScheduledPods",
                                                  "Sufficient scheduled pods found. Expected at least: 2, found: 2")],
            "updateProgress": {
                "updateStartedAt": CHANGED,
                "podCliqueSetGenerationHash": _digest("vllm-agg", "2")[:16],
                "podTemplateHash": _digest("vllm-agg", WORKER_CLIQUE, "2")[:16],
                "readyPodsSelectedToUpdate": {"current": "vllm-agg-0-vllmworker-x7k2p"},
            },
        }
    }  # fmt: skip


IDLE_WORKER = {
    "spec": {"replicas": 0},
    "status": {
        "replicas": 0,
        "readyReplicas": 0,
        "updatedReplicas": 0,
        "scheduledReplicas": 0,
        "conditions": [
            condition("PodCliqueScheduled", "True", "SufficientScheduledPods", "PodClique is idle (replicas: 0)")
        ],
    },
}
GROVE_STATES = {
    "lagging": ("Grove rolling the worker, one of two pods updated", _rolling_worker(CHANGED)),
    "stalled": ("the worker's rolling update stalled past its deadline", _rolling_worker(STALL_SEEN)),
    "idle": ("the worker PodClique wanting no pods while the PodCliqueSet wants 2", IDLE_WORKER),
}


def regenerate_grove_state(state: str) -> Path:
    what, patch = GROVE_STATES[state]
    claim = yaml.safe_load((example_claim(GROVE_CLAIM)).read_text())
    xr = claim_to_xr(claim)
    composed = render(xr, find_composition(xr, load_documents(REPO / "compositions"))).composed
    observed = [as_observed(o, ready=True) for o in composed]
    pcs = next(o for o in observed if o["kind"] == "PodCliqueSet")
    if state != "idle":
        pcs["status"]["updatedReplicas"] = 0  # the PodCliqueSet replica is not fully updated while a clique rolls
    target = HERE / f"{GROVE_CLAIM}-{state}"
    source = example_claim(GROVE_CLAIM).relative_to(REPO)
    write(
        target / "observed.yaml",
        f"# Observed composed resources of {source} ({what}).\n# Generated by tests/scenarios/status/regenerate.py.\n",
        observed,
    )
    write(
        target / "required.yaml",
        f"# The Grove objects of PodCliqueSet {pcs['metadata']['name']}: {what}.\n"
        "# Generated by tests/scenarios/status/regenerate.py.\n",
        grove_objects(pcs, ready=True, patches={WORKER_CLIQUE: patch}),
    )
    return target


# The component pathway with the Deployment controller's view: the decode worker's Deployment rolling to a new
# ReplicaSet (maxSurge 1: 3 pods, 1 updated, 2 available). "lagging": still progressing; "stalled": the
# Deployment reports ProgressDeadlineExceeded. Each scenario's deployments.yaml holds the Deployment statuses
# (the real-cluster test writes them); the DCD statuses in observed.yaml are what the DCD step derives from them.
DECODE = "VllmDecodeWorker"
COMPONENT_LABEL = "nvidia.com/dynamo-component"


def _decode_deployment_status(name: str, stalled: bool) -> Obj:
    new_rs = f"{name}-{_digest(name, 'new')[:10]}"
    progressing = (
        condition("Progressing", "False", "ProgressDeadlineExceeded",
                  f'ReplicaSet "{new_rs}" has timed out progressing.', STALL_SEEN)
        if stalled
        else condition("Progressing", "True", "ReplicaSetUpdated", f'ReplicaSet "{new_rs}" is progressing.', CHANGED)
    )  # fmt: skip
    progressing["lastUpdateTime"] = progressing["lastTransitionTime"]
    available = condition("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
    available["lastUpdateTime"] = CREATED
    return {
        "observedGeneration": 1,
        "replicas": 3,
        "updatedReplicas": 1,
        "readyReplicas": 2,
        "availableReplicas": 2,
        "unavailableReplicas": 1,
        "conditions": [available, progressing],
    }


def ready_deployment_status(replicas: int) -> Obj:
    available = condition("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
    return {
        "observedGeneration": 1,
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": replicas,
        "availableReplicas": replicas,
        "conditions": [available],
    }


def dcd_step_status(dcd: Obj, deployment_status: Obj) -> tuple[Obj, Obj]:
    """(the Deployment as observed, the DCD as observed) after the DCD step ran on that Deployment."""
    xr = {k: v for k, v in dcd.items() if k != "status"}
    desired = component_deployment(StepRequest(input={}, observed_composite=xr)).desired_resources
    deployment = copy.deepcopy(desired["deployment"].resource)
    deployment["metadata"]["generation"] = 1
    deployment["status"] = deployment_status
    rsp = component_deployment(
        StepRequest(input={}, observed_composite=xr, observed_resources={"deployment": deployment})
    )
    out = copy.deepcopy(dcd)
    out["status"] = {
        **(rsp.composite_status or {}),
        "conditions": [condition(c.type, c.status, c.reason, c.message, CHANGED) for c in rsp.conditions],
    }
    labels = {COMPONENT_LABEL: dcd["metadata"]["labels"][COMPONENT_LABEL]}
    played = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": deployment["metadata"]["name"], "labels": labels},
        "status": deployment_status,
    }
    return played, out


def regenerate_components_rollout(state: str) -> Path:
    claim = yaml.safe_load((example_claim(COMPONENT_CLAIM)).read_text())
    xr = claim_to_xr(claim)
    composed = render(xr, find_composition(xr, load_documents(REPO / "compositions"))).composed
    resource = "crossplane.io/composition-resource-name"
    dcds, played = {}, []
    for obj in composed:
        if obj["kind"] != "XDynamoComponentDeployment":
            continue
        replicas = obj["spec"]["replicas"]
        decode = obj["metadata"]["labels"][COMPONENT_LABEL] == DECODE
        name = obj["metadata"]["annotations"]["dynamo.fn.crossplane.io/claim-name"]
        status = _decode_deployment_status(name, state == "stalled") if decode else ready_deployment_status(replicas)
        deployment, dcd = dcd_step_status(as_observed(obj, True), status)
        dcds[obj["metadata"]["annotations"][resource]] = dcd
        played.append(deployment)
    target = HERE / f"{COMPONENT_CLAIM}-{state}"
    source = example_claim(COMPONENT_CLAIM).relative_to(REPO)
    what = "stalled (ProgressDeadlineExceeded)" if state == "stalled" else "rolling, 1 of 2 pods updated"
    write(
        target / "observed.yaml",
        f"# Observed composed resources of {source}: the decode worker's Deployment\n"
        f"# {what}; each DCD's status as its step derives it from deployments.yaml.\n"
        "# Generated by tests/scenarios/status/regenerate.py.\n",
        _observed_graph(composed, dcds),
    )
    write(
        target / "deployments.yaml",
        "# The status of each DCD's Deployment (by component label), as the Deployment controller writes it; the\n"
        "# real-cluster status test plays them. Generated by tests/scenarios/status/regenerate.py.\n",
        sorted(played, key=lambda d: d["metadata"]["name"]),
    )
    return target


if __name__ == "__main__":
    for claim_name in CLAIMS:
        for ready in (True, False):
            print(f"wrote {regenerate(claim_name, ready).relative_to(REPO)}")
    print(f"wrote {regenerate_restarting().relative_to(REPO)}")
    print(f"wrote {regenerate_components_ready().relative_to(REPO)}")
    print(f"wrote {regenerate_components_rolling().relative_to(REPO)}")
    for grove_state in GROVE_STATES:
        print(f"wrote {regenerate_grove_state(grove_state).relative_to(REPO)}")
    for component_state in ("lagging", "stalled"):
        print(f"wrote {regenerate_components_rollout(component_state).relative_to(REPO)}")
