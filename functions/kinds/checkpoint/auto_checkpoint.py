"""A DGD component's auto checkpoint: the DynamoCheckpoint the graph composes for it
(docs/upstream/checkpoint-gms-dgdr-model.md §1.3, §1.4).

It is ``checkpoint-<id>``, the ID a hash of the DGD's namespace, name, UID, the component's name and its
worker generation, so there is one per DGD, component and worker generation. Its checkpoint Job runs the
component's own pod (the normal pod generator, single node, only the target container) with
``checkpoint.job.podTemplate`` laid over it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from functions.api.graph import CheckpointConfig, Component, Graph, SpecError, json_copy, merge_envs
from functions.kube import gms
from functions.kube.checkpoint_ids import ARTIFACT_VERSION_ANNOTATION, CHECKPOINT_ID_LABEL, dgd_checkpoint_id
from functions.kube.defaults import WORKER_TYPES
from functions.kube.labels import COMPONENT, GRAPH_NAME, WORKER_HASH
from functions.kube.podspec import PodContext, render_pod_spec

CHECKPOINT_API_VERSION = "nvidia.com/v1alpha1"
CHECKPOINT_KIND = "DynamoCheckpoint"
AUTO_ANNOTATION = "nvidia.com/dynamo-auto-checkpoint"
DELETION_POLICY_ANNOTATION = "nvidia.com/dynamo-checkpoint-deletion-policy"
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")


def auto_checkpoint_id(graph: Graph, component: Component, dgd_uid: str) -> str:
    """``DGDCheckpointID``: the worker generation counts only for worker, prefill and decode components."""
    worker_hash = graph.worker_hash or "" if component.component_type in WORKER_TYPES else ""
    return dgd_checkpoint_id(graph.namespace, graph.name, dgd_uid, component.name, worker_hash)


def auto_checkpoint_name(checkpoint_id: str) -> str:
    return f"checkpoint-{checkpoint_id}"


def _by_name(base: list[dict[str, Any]], overlay: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items merged by name: an overlay item replaces the base item of its name, new ones are appended."""
    merged = {item.get("name"): item for item in base}
    order = [item.get("name") for item in base]
    for item in overlay:
        if item.get("name") not in merged:
            order.append(item.get("name"))
        merged[item.get("name")] = item
    return [merged[name] for name in order]


def _merge_container(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in overlay.items():
        if key == "env":
            out["env"] = merge_envs(out.get("env") or [], value or [])
        elif value not in (None, "", [], {}):
            out[key] = value  # probes the overlay supplies replace the generated ones
    return out


def overlay_pod_template(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """``checkpoint.job.podTemplate`` laid over the generated Job pod
    (docs/upstream/checkpoint-gms-dgdr-model.md §1.4 step 5)."""
    out = json_copy(base)
    over = json_copy(overlay)
    metadata = out.setdefault("metadata", {})
    for key in ("labels", "annotations"):
        extra = (over.get("metadata") or {}).get(key) or {}
        if extra:
            metadata[key] = {**(metadata.get(key) or {}), **extra}
    spec = out.setdefault("spec", {})
    for key, value in (over.get("spec") or {}).items():
        if key == "containers":
            current = {c.get("name"): c for c in spec.get("containers") or []}
            merged = [
                _merge_container(current[c.get("name")], c) if c.get("name") in current else c for c in value or []
            ]
            names = {c.get("name") for c in value or []}
            spec["containers"] = [
                *(next(m for m in merged if m.get("name") == c.get("name")) if c.get("name") in names else c
                  for c in spec.get("containers") or []),
                *(m for m in merged if m.get("name") not in current),
            ]  # fmt: skip
        elif key in ("volumes", "initContainers"):
            spec[key] = _by_name(spec.get(key) or [], value or [])
        elif value not in (None, "", [], {}):
            spec[key] = value
    return out


def checkpoint_claim_template_name(checkpoint_id: str) -> str:
    return f"{auto_checkpoint_name(checkpoint_id)}-worker-gpu"


def checkpoint_job_pod_template(
    ctx: PodContext, component: Component, config: CheckpointConfig, claim_template: str
) -> dict[str, Any]:
    """The checkpoint Job's pod template of a DGD component (upstream ``buildCheckpointJobPodTemplate``); with an
    intra-pod GPU memory service its GPUs are claimed through ``claim_template``."""
    single = dataclasses.replace(component, frontend_sidecar=None, checkpoint=None, node_count=1)
    pod = render_pod_spec(ctx, single)
    target = next((c for c in pod["containers"] if c.get("name") == config.target_container), None)
    if target is None:
        raise SpecError(
            f"{config.path}.targetContainerName: checkpoint target container {config.target_container!r} not found"
        )
    pod["containers"] = [target]
    pod["restartPolicy"] = "Never"
    user_meta = component.pod_template.get("metadata") or {}
    metadata: dict[str, Any] = {"labels": {**(user_meta.get("labels") or {}), COMPONENT: component.name}}
    if user_meta.get("annotations"):
        metadata["annotations"] = dict(user_meta["annotations"])
    template = {"metadata": metadata, "spec": pod}
    if config.job_pod_template:
        template = overlay_pod_template(template, config.job_pod_template)
    labels = template["metadata"].setdefault("labels", {})
    labels.update({GRAPH_NAME: ctx.graph.name, COMPONENT: component.name})
    if component.gms is not None and component.gms.mode == "IntraPod":
        clients = (config.target_container, *config.gms_client_containers)
        gms.apply_intrapod_gms(template["spec"], claim_template, clients, f"{config.path}.job.gmsClientContainers")
    if ctx.graph.worker_hash and component.component_type in WORKER_TYPES:
        labels[WORKER_HASH] = ctx.graph.worker_hash
    for key in ("labels", "annotations"):
        if template["metadata"].get(key):
            template["metadata"][key] = dict(sorted(template["metadata"][key].items()))
    return template


def checkpoint_backend(component: Component, config: CheckpointConfig, detected: str) -> str:
    """The backend the checkpoint's identity names: the detected one, else a legacy ``identity.backendFramework``."""
    if detected not in ("", "noop"):
        return detected
    legacy = (config.identity or {}).get("backendFramework")
    if legacy:
        return str(legacy)
    raise SpecError(
        f"{config.path}: checkpoint backend framework for component {component.name} could not be determined; "
        "set spec.backendFramework or use a recognizable worker command"
    )


def render_auto_checkpoint(
    ctx: PodContext, component: Component, config: CheckpointConfig, checkpoint_id: str, dgd_uid: str
) -> dict[str, Any]:
    """The DynamoCheckpoint claim ``checkpoint-<id>`` in the graph's namespace."""
    template = checkpoint_job_pod_template(ctx, component, config, checkpoint_claim_template_name(checkpoint_id))
    template_labels = template["metadata"]["labels"]
    labels = {CHECKPOINT_ID_LABEL: checkpoint_id}
    for key in (GRAPH_NAME, COMPONENT, WORKER_HASH):
        if template_labels.get(key):
            labels[key] = template_labels[key]
    graph = ctx.graph
    spec: dict[str, Any] = {
        "identity": {
            "model": f"{graph.namespace}/{graph.name}",
            "backendFramework": checkpoint_backend(component, config, ctx.backend),
            "extraParameters": {"checkpointID": checkpoint_id, "component": component.name, "dgdUID": dgd_uid},
        },
        "job": {"podTemplateSpec": template, "targetContainerName": config.target_container},
    }
    if component.gms is not None:
        service: dict[str, Any] = {
            "enabled": True,
            "mode": component.gms.mode[:1].lower() + component.gms.mode[1:],  # the v1alpha1 spelling
            "deviceClassName": component.gms.device_class,
        }
        if config.gms_client_containers:
            service["extraClientContainers"] = list(config.gms_client_containers)
        spec["gpuMemoryService"] = service
    return {
        "apiVersion": CHECKPOINT_API_VERSION,
        "kind": CHECKPOINT_KIND,
        "metadata": {
            "name": auto_checkpoint_name(checkpoint_id),
            "namespace": graph.namespace,
            "labels": dict(sorted(labels.items())),
            "annotations": {
                ARTIFACT_VERSION_ANNOTATION: "1",
                AUTO_ANNOTATION: "true",
                DELETION_POLICY_ANNOTATION: config.deletion_policy,
            },
        },
        "spec": spec,
    }


def render_checkpoint_claim_template(
    ctx: PodContext, component: Component, config: CheckpointConfig, checkpoint_id: str
) -> dict[str, Any] | None:
    """The ResourceClaimTemplate ``checkpoint-<id>-worker-gpu`` of an auto checkpoint's Job with an intra-pod GPU
    memory service: the target's GPUs (None without one, or without GPUs)."""
    if component.gms is None or component.gms.mode != "IntraPod":
        return None
    target = next(
        (c for c in component.pod_template["spec"]["containers"] if c.get("name") == config.target_container), {}
    )
    count = gms.scalar_gpus(target, config.path)
    if count < 1:
        return None
    return gms.render_resource_claim_template(
        checkpoint_claim_template_name(checkpoint_id), ctx.graph.namespace, component.gms.device_class, count,
        {CHECKPOINT_ID_LABEL: checkpoint_id, GRAPH_NAME: ctx.graph.name},
    )  # fmt: skip
