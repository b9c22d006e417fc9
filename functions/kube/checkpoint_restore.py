"""Worker pods that start from a checkpoint (docs/upstream/checkpoint-gms-dgdr-model.md §1.5, §1.7).

Upstream has two paths. ``WaitForCheckpoint`` renders the restore shaping into the pod template once the
checkpoint is Ready. ``Immediate`` puts *candidate* metadata on the template and a pod-CREATE webhook
restore-shapes the pods created after Ready. A composition function has no pod webhook, so here the
template carries the candidate metadata until the checkpoint is Ready and the restore shaping after that
(which rolls the running pods; docs/kinds/checkpoint.md lists the difference).

Restore shaping never changes a container's command or args.
"""

from __future__ import annotations

import copy
from typing import Any

from functions.api.graph import Component, ResolvedCheckpoint, SpecError
from functions.kube import gms
from functions.kube.backends.podparts import replace_named
from functions.kube.checkpoint_ids import ARTIFACT_VERSION_ANNOTATION, CHECKPOINT_ID_LABEL
from functions.kube.checkpoint_job import (
    CONTROL_DIR,
    CONTROL_ENV,
    CONTROL_VOLUME,
    RESTORE_TARGET_LABEL,
    SOURCE_LABEL,
    STORAGE_BASE_ANNOTATION,
    STORAGE_TYPE_ANNOTATION,
    STORAGE_VOLUME,
)
from functions.kube.defaults import WORKER_TYPES
from functions.kube.podspec import PodContext

CANDIDATE_ANNOTATION = "nvidia.com/dynamo-checkpoint-restore-candidate"
CHECKPOINT_NAME_ANNOTATION = "nvidia.com/dynamo-checkpoint-name"
STARTUP_POLICY_ANNOTATION = "nvidia.com/dynamo-checkpoint-startup-policy"
TARGETS_ANNOTATION = "nvidia.com/snapshot-target-containers"
RESTORE_STATUS_ANNOTATION = "nvidia.com/snapshot-restore-status"
RESTORE_CONTAINER_ID_ANNOTATION = "nvidia.com/snapshot-restore-container-id"
STANDBY_ENV = "DYN_SNAPSHOT_RESTORE_STANDBY"
RESTORE_COMPLETE = f"{CONTROL_DIR}/restore-complete"
STARTUP_FAILURES = 1800

_CLEARED_LABELS = (CHECKPOINT_ID_LABEL, RESTORE_TARGET_LABEL, SOURCE_LABEL)
_CLEARED_ANNOTATIONS = (
    ARTIFACT_VERSION_ANNOTATION,
    STORAGE_TYPE_ANNOTATION,
    STORAGE_BASE_ANNOTATION,
    CANDIDATE_ANNOTATION,
    CHECKPOINT_NAME_ANNOTATION,
    STARTUP_POLICY_ANNOTATION,
    TARGETS_ANNOTATION,
)


def _cleared(metadata: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    labels = {k: v for k, v in (metadata.get("labels") or {}).items() if k not in _CLEARED_LABELS}
    annotations = {
        k: v
        for k, v in (metadata.get("annotations") or {}).items()
        if k not in _CLEARED_ANNOTATIONS
        and not k.startswith((RESTORE_STATUS_ANNOTATION, RESTORE_CONTAINER_ID_ANNOTATION))
    }
    return labels, annotations


def _set(metadata: dict[str, Any], labels: dict[str, str], annotations: dict[str, str]) -> None:
    for key, values in (("labels", labels), ("annotations", annotations)):
        if values:
            metadata[key] = dict(sorted(values.items()))
        else:
            metadata.pop(key, None)


def apply_candidate_metadata(metadata: dict[str, Any], checkpoint: ResolvedCheckpoint) -> None:
    """Upstream ``ApplyRestoreCandidateMetadata`` (docs/upstream/checkpoint-gms-dgdr-model.md §1.7a), in place."""
    labels, annotations = _cleared(metadata)
    if checkpoint.exists:
        annotations.update(
            {
                CANDIDATE_ANNOTATION: "true",
                CHECKPOINT_NAME_ANNOTATION: checkpoint.name,
                STARTUP_POLICY_ANNOTATION: checkpoint.startup_policy,
                TARGETS_ANNOTATION: ",".join(checkpoint.targets),
            }
        )
    _set(metadata, labels, annotations)


def apply_restore_metadata(
    metadata: dict[str, Any], checkpoint: ResolvedCheckpoint, storage: tuple[str, str] | None
) -> None:
    """Upstream ``ApplyRestorePodMetadataWithStorageConfig`` (docs/upstream/checkpoint-gms-dgdr-model.md §1.7c),
    in place."""
    labels, annotations = _cleared(metadata)
    if checkpoint.restores:
        labels.update({RESTORE_TARGET_LABEL: "true", CHECKPOINT_ID_LABEL: checkpoint.checkpoint_id})
        annotations.update(
            {ARTIFACT_VERSION_ANNOTATION: checkpoint.artifact_version, TARGETS_ANNOTATION: ",".join(checkpoint.targets)}
        )
        if storage:
            annotations.update({STORAGE_TYPE_ANNOTATION: "pvc", STORAGE_BASE_ANNOTATION: storage[1]})
    _set(metadata, labels, annotations)


def _startup_probe(container: dict[str, Any]) -> dict[str, Any]:
    for kind in ("startupProbe", "livenessProbe", "readinessProbe"):
        if container.get(kind):
            probe = copy.deepcopy(container[kind])
            probe.update({"initialDelaySeconds": 0, "periodSeconds": 1, "failureThreshold": STARTUP_FAILURES})
            probe["successThreshold"] = 1
            return probe
    return {
        "exec": {"command": ["cat", RESTORE_COMPLETE]},
        "timeoutSeconds": 1,
        "periodSeconds": 1,
        "failureThreshold": STARTUP_FAILURES,
        "successThreshold": 1,
    }


def apply_restore_pod_spec(
    pod: dict[str, Any], checkpoint: ResolvedCheckpoint, storage: tuple[str, str] | None, seccomp: str | None
) -> None:
    """Upstream ``PrepareRestorePodSpec`` (docs/upstream/checkpoint-gms-dgdr-model.md §1.7d), in place; only for
    a Ready checkpoint."""
    if not checkpoint.restores:
        return
    if seccomp:
        pod.setdefault("securityContext", {})["seccompProfile"] = {"type": "Localhost", "localhostProfile": seccomp}
    volumes = list(pod.get("volumes") or [])
    if storage:
        volumes = replace_named(volumes, {"name": STORAGE_VOLUME, "persistentVolumeClaim": {"claimName": storage[0]}})
    volumes = replace_named(volumes, {"name": CONTROL_VOLUME, "emptyDir": {}})
    pod["volumes"] = volumes
    containers = {c.get("name"): c for c in pod.get("containers") or []}
    for target in checkpoint.targets:
        container = containers.get(target)
        if container is None:
            raise SpecError(
                f"restore target container {target!r} not found in pod spec (from {TARGETS_ANNOTATION} annotation)"
            )
        mounts = list(container.get("volumeMounts") or [])
        if storage:
            mounts = replace_named(mounts, {"name": STORAGE_VOLUME, "mountPath": storage[1]})
        container["volumeMounts"] = replace_named(
            mounts, {"name": CONTROL_VOLUME, "mountPath": CONTROL_DIR, "subPath": container["name"]}
        )
        env = list(container.get("env") or [])
        if not any(e.get("name") == CONTROL_ENV for e in env):
            env.append({"name": CONTROL_ENV, "value": CONTROL_DIR})
        container["env"] = replace_named(env, {"name": STANDBY_ENV, "value": "1"})
        container["startupProbe"] = _startup_probe(container)
    if checkpoint.gms:
        _restore_gms(pod, checkpoint, containers)


def _restore_gms(pod: dict[str, Any], checkpoint: ResolvedCheckpoint, containers: dict[str, dict[str, Any]]) -> None:
    """A checkpoint taken with a GPU memory service restores with one: the ``gms-server`` sidecar and client
    wiring on the targets and the checkpoint's extra clients in the pod. No pod claim is added: the component's
    own GPU memory service provides it."""
    for name in (*checkpoint.targets, *checkpoint.gms_extra_clients):
        if name in containers:
            gms.wire_client(containers[name])
    pod["volumes"] = replace_named(list(pod.get("volumes") or []), {"name": gms.CONTROL_VOLUME, "emptyDir": {}})
    if not any(c.get("name") == gms.SERVER for c in pod.get("initContainers") or []):
        image = containers[checkpoint.targets[0]].get("image")
        pod["initContainers"] = [*(pod.get("initContainers") or []), gms.server_sidecar(image)]


def apply_probe_cadence(pod: dict[str, Any], targets: tuple[str, ...]) -> None:
    """Upstream ``applyCheckpointProbeCadence``: a Ready checkpoint's workers probe every second
    (docs/upstream/checkpoint-gms-dgdr-model.md §1.5)."""
    for container in pod.get("containers") or []:
        if container.get("name") not in targets:
            continue
        for kind in ("readinessProbe", "startupProbe"):
            if container.get(kind):
                container[kind]["periodSeconds"] = 1


def apply_checkpoint(
    metadata: dict[str, Any],
    pod: dict[str, Any],
    checkpoint: ResolvedCheckpoint | None,
    *,
    worker: bool,
    storage: tuple[str, str] | None,
    seccomp: str | None,
) -> None:
    """A component's pod template (``metadata`` with labels and annotations, and ``pod``) for its checkpoint,
    in place: restore-shaped once the checkpoint is Ready, candidate metadata before that under ``Immediate``."""
    if checkpoint is None:
        return
    if checkpoint.restores:
        if worker:
            apply_probe_cadence(pod, checkpoint.targets)
        apply_restore_metadata(metadata, checkpoint, storage)
        apply_restore_pod_spec(pod, checkpoint, storage, seccomp)
    elif checkpoint.startup_policy == "Immediate":
        apply_candidate_metadata(metadata, checkpoint)


def apply_component_checkpoint(
    ctx: PodContext, component: Component, metadata: dict[str, Any], pod: dict[str, Any]
) -> None:
    """``apply_checkpoint`` with the component's resolved checkpoint and the platform's storage and seccomp."""
    apply_checkpoint(
        metadata,
        pod,
        ctx.graph.checkpoint_of(component.name),
        worker=component.component_type in WORKER_TYPES,
        storage=ctx.operator_config.checkpoint.pvc_storage(),
        seccomp=ctx.operator_config.checkpoint.seccomp_profile,
    )
