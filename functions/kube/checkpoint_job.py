"""The checkpoint Job of a DynamoCheckpoint and the PodSnapshot of its pod
(docs/upstream/checkpoint-gms-dgdr-model.md §1.9): the Job runs the workload until it writes
``ready-for-snapshot``; the snapshot project's node agent then captures the target container and the workload
exits."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from functions.api.graph import DEFAULT_SHARED_MEMORY, SpecError
from functions.kube.backends.podparts import replace_named
from functions.kube.checkpoint_ids import ARTIFACT_VERSION_ANNOTATION, CHECKPOINT_ID_LABEL
from functions.kube.gms import scalar_gpus
from functions.kube.podspec import SHARED_MEMORY_PATH, SHARED_MEMORY_VOLUME

JOB_RESOURCE = "checkpoint-job"
PODSNAPSHOT_RESOURCE = "podsnapshot"
PODSNAPSHOT_API_VERSION = "nvidia.com/v1alpha1"
OWNER_LABEL = "nvidia.com/snapshot-owner"
SOURCE_LABEL = "nvidia.com/snapshot-is-checkpoint-source"
RESTORE_TARGET_LABEL = "nvidia.com/snapshot-is-restore-target"
STORAGE_TYPE_ANNOTATION = "nvidia.com/snapshot-storage-type"
STORAGE_BASE_ANNOTATION = "nvidia.com/snapshot-storage-base-path"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
CONTROL_VOLUME = "snapshot-control"
CONTROL_DIR = "/snapshot-control"
CONTROL_ENV = "DYN_SNAPSHOT_CONTROL_DIR"
STORAGE_VOLUME = "checkpoint-storage"
CUDA_JOB_FILE = f"{CONTROL_DIR}/cuda-checkpoint-job"
# Run by ``cuda-checkpoint --launch-job``: it needs the job file the driver (>= 610) names, and hands the
# workload a stable copy of it in the control directory. $0 is a name, $1 the stable path, then the command.
CUDA_WRAPPER_SCRIPT = (
    'if [ -z "${CUDA_CHECKPOINT_JOB_FILE:-}" ]; then '
    'echo "$0: CUDA_CHECKPOINT_JOB_FILE is not set (cuda-checkpoint --launch-job needs driver 610 or newer)" >&2; '
    "exit 1; fi; "
    'cp "$CUDA_CHECKPOINT_JOB_FILE" "$1" && export CUDA_CHECKPOINT_JOB_FILE="$1" && shift && exec "$@"'
)


@dataclass(frozen=True)
class JobSettings:
    name: str  # the DynamoCheckpoint's name
    namespace: str
    checkpoint_id: str
    artifact_version: str
    spec: dict[str, Any]  # the DynamoCheckpoint spec (defaults applied)
    seccomp_profile: str | None
    storage: tuple[str, str] | None  # (PVC name, base path)
    dra_gpus: int = 0  # GPUs the target holds through DRA claims (a GPU memory service's)


def job_name(checkpoint_id: str, artifact_version: str) -> str:
    return f"checkpoint-job-{checkpoint_id}-{artifact_version}"


def _target(pod: dict[str, Any], name: str) -> dict[str, Any]:
    for container in pod.get("containers") or []:
        if container.get("name") == name:
            return container
    if name == "main":
        raise SpecError('spec.job.podTemplateSpec.spec.containers: must contain the default target container "main"')
    raise SpecError(f"spec.job.targetContainerName: {name!r} does not name a container of spec.job.podTemplateSpec")


def _shape_target(container: dict[str, Any], settings: JobSettings, pod: dict[str, Any]) -> None:
    job = settings.spec["job"]
    shm = job.get("sharedMemory") or {}
    volumes = list(pod.get("volumes") or [])
    mounts = list(container.get("volumeMounts") or [])
    if not shm.get("disabled"):
        size = shm.get("size") or DEFAULT_SHARED_MEMORY
        volumes = replace_named(
            volumes, {"name": SHARED_MEMORY_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": str(size)}}
        )
        mounts = replace_named(
            mounts, {"name": SHARED_MEMORY_VOLUME, "mountPath": SHARED_MEMORY_PATH}, also_path=SHARED_MEMORY_PATH
        )
    if settings.storage:
        pvc, base = settings.storage
        volumes = replace_named(volumes, {"name": STORAGE_VOLUME, "persistentVolumeClaim": {"claimName": pvc}})
        mounts = replace_named(mounts, {"name": STORAGE_VOLUME, "mountPath": base})
    volumes = replace_named(volumes, {"name": CONTROL_VOLUME, "emptyDir": {}})
    mounts = replace_named(mounts, {"name": CONTROL_VOLUME, "mountPath": CONTROL_DIR, "subPath": container["name"]})
    pod["volumes"] = volumes
    container["volumeMounts"] = mounts
    env = [e for e in container.get("env") or [] if e.get("name") != CONTROL_ENV]
    container["env"] = [*env, {"name": CONTROL_ENV, "value": CONTROL_DIR}]
    container["readinessProbe"] = {
        "exec": {"command": ["cat", f"{CONTROL_DIR}/ready-for-snapshot"]},
        "periodSeconds": 1,
    }
    container.pop("livenessProbe", None)
    container.pop("startupProbe", None)
    if scalar_gpus(container, "spec.job.podTemplateSpec") + settings.dra_gpus > 1:
        command = list(container.get("command") or [])
        if not command:
            raise SpecError(
                f"spec.job.podTemplateSpec.spec.containers[{container['name']}].command: a multi-GPU checkpoint "
                "runs the command under cuda-checkpoint, so it must be set"
            )
        container["command"] = ["cuda-checkpoint"]
        container["args"] = [
            "--launch-job", "/bin/sh", "-c", CUDA_WRAPPER_SCRIPT, "dynamo-cuda-checkpoint", CUDA_JOB_FILE,
            *command, *(container.get("args") or []),
        ]  # fmt: skip


def render_checkpoint_job(settings: JobSettings) -> dict[str, Any]:
    job = settings.spec["job"]
    template = copy.deepcopy(job.get("podTemplateSpec") or {})
    metadata = template.setdefault("metadata", {})
    labels = {k: v for k, v in (metadata.get("labels") or {}).items() if k != RESTORE_TARGET_LABEL}
    labels.update({OWNER_LABEL: settings.name, SOURCE_LABEL: "true", CHECKPOINT_ID_LABEL: settings.checkpoint_id})
    annotations = {
        **(metadata.get("annotations") or {}),
        "linkerd.io/inject": "disabled",
        "sidecar.istio.io/inject": "false",
        ARTIFACT_VERSION_ANNOTATION: settings.artifact_version,
    }
    if settings.storage:
        annotations[STORAGE_TYPE_ANNOTATION] = "pvc"
        annotations[STORAGE_BASE_ANNOTATION] = settings.storage[1]
    metadata["labels"] = dict(sorted(labels.items()))
    metadata["annotations"] = dict(sorted(annotations.items()))
    pod = template.setdefault("spec", {})
    pod["restartPolicy"] = "Never"
    if settings.seccomp_profile:
        security = pod.setdefault("securityContext", {})
        security["seccompProfile"] = {"type": "Localhost", "localhostProfile": settings.seccomp_profile}
    _shape_target(_target(pod, job.get("targetContainerName") or "main"), settings, pod)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": job_name(settings.checkpoint_id, settings.artifact_version),
            "namespace": settings.namespace,
            "labels": {CHECKPOINT_ID_LABEL: settings.checkpoint_id},
        },
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": job.get("activeDeadlineSeconds") or 3600,
            "template": template,
        },
    }


def render_podsnapshot(settings: JobSettings, pod: dict[str, Any]) -> dict[str, Any]:
    """The PodSnapshot of the checkpoint Job's pod (its spec is immutable: the pod it names never changes)."""
    meta = pod.get("metadata") or {}
    target = settings.spec["job"].get("targetContainerName") or "main"
    return {
        "apiVersion": PODSNAPSHOT_API_VERSION,
        "kind": "PodSnapshot",
        "metadata": {
            "name": settings.name,
            "namespace": settings.namespace,
            "labels": {OWNER_LABEL: settings.name, CHECKPOINT_ID_LABEL: settings.checkpoint_id},
        },
        "spec": {"source": {"podRef": {"name": meta.get("name"), "uid": meta.get("uid"), "containers": [target]}}},
    }
