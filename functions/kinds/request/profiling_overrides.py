"""``overrides.profilingJob`` merged into a DGDR's profiling Job through upstream's allow-list
(docs/upstream/checkpoint-gms-dgdr-model.md §4.3, docs/upstream/operator.md §4.1): the Job's limits, the pod's
labels (not the Job's own keys), annotations and scheduling, security and DNS fields, volumes and init containers by
name; the profiler's
override entry (the container named ``profiler``, else the first unnamed or not the copier) gives its image,
resources, security context, env and mounts by name, and appends envFrom; the ``output-copier`` entry gives
only image and resources. Everything else is reported, not applied.
"""

from __future__ import annotations

import copy
from typing import Any

from functions.kinds.request.request_conversion import PROFILER_CONTAINER

COPIER_CONTAINER = "output-copier"
COPIER_TOKEN_VOLUME = "output-copier-kube-api-access"
SERVICE_ACCOUNT_TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"

# overrides.profilingJob, the parts upstream's allow-list takes (anything else is reported and ignored)
JOB_FIELDS = (
    "activeDeadlineSeconds",
    "backoffLimit",
    "completions",
    "parallelism",
    "suspend",
    "ttlSecondsAfterFinished",
)
POD_FIELDS = (
    "affinity",
    "automountServiceAccountToken",
    "dnsConfig",
    "dnsPolicy",
    "imagePullSecrets",
    "nodeSelector",
    "priorityClassName",
    "runtimeClassName",
    "securityContext",
    "serviceAccountName",
    "terminationGracePeriodSeconds",
    "tolerations",
    "topologySpreadConstraints",
)
PROFILER_FIELDS = ("image", "resources", "securityContext")
COPIER_FIELDS = ("image", "resources")


def _merge_by_name(
    base: list[dict[str, Any]], overlay: list[dict[str, Any]], key: str = "name"
) -> list[dict[str, Any]]:
    out = [copy.deepcopy(item) for item in base]
    for item in overlay:
        index = next((i for i, b in enumerate(out) if b.get(key) == item.get(key)), None)
        if index is None:
            out.append(copy.deepcopy(item))
        else:
            out[index] = copy.deepcopy(item)
    return out


def _override_target(containers: list[dict[str, Any]]) -> int | None:
    """The override entry for the profiler: the one named ``profiler``, else the first unnamed or not the copier."""
    for i, c in enumerate(containers):
        if c.get("name") == PROFILER_CONTAINER:
            return i
    return next((i for i, c in enumerate(containers) if not c.get("name") or c.get("name") != COPIER_CONTAINER), None)


def _override_container(
    target: dict[str, Any], overlay: dict[str, Any], fields: tuple[str, ...], where: str
) -> list[str]:
    for key in fields:
        if key in overlay:
            target[key] = copy.deepcopy(overlay[key])
    if fields == PROFILER_FIELDS:
        if overlay.get("env"):
            target["env"] = _merge_by_name(target.get("env") or [], overlay["env"])
        if overlay.get("volumeMounts"):
            target["volumeMounts"] = _merge_by_name(target.get("volumeMounts") or [], overlay["volumeMounts"])
        if overlay.get("envFrom"):
            target["envFrom"] = [*(target.get("envFrom") or []), *copy.deepcopy(overlay["envFrom"])]
        taken = (*fields, "name", "env", "volumeMounts", "envFrom")
    else:
        taken = (*fields, "name")
    return [f"{where}.{k}" for k in sorted(overlay) if k not in taken]


def apply_overrides(job: dict[str, Any], override: dict[str, Any], copier_token: dict[str, Any]) -> list[str]:
    """Merge ``overrides.profilingJob`` into ``job`` as upstream's allow-list does; the ignored field paths.
    With the token automount off the copier, which talks to the API server, gets ``copier_token`` mounted."""
    base = "spec.overrides.profilingJob"
    ignored = [f"{base}.{k}" for k in sorted(override) if k not in (*JOB_FIELDS, "template")]
    for key in JOB_FIELDS:
        if key in override:
            job["spec"][key] = copy.deepcopy(override[key])
    template = override.get("template") or {}
    ignored += [f"{base}.template.{k}" for k in sorted(template) if k not in ("metadata", "spec")]
    meta, spec = template.get("metadata") or {}, template.get("spec") or {}
    pod_meta, pod = job["spec"]["template"]["metadata"], job["spec"]["template"]["spec"]
    protected = set(pod_meta["labels"])
    for key, value in (meta.get("labels") or {}).items():
        if key not in protected:
            pod_meta["labels"][key] = value
    if meta.get("annotations"):
        pod_meta["annotations"] = dict(meta["annotations"])
    ignored += [f"{base}.template.metadata.{k}" for k in sorted(meta) if k not in ("labels", "annotations")]
    for key in POD_FIELDS:
        if key in spec:
            pod[key] = copy.deepcopy(spec[key])
    for key in ("volumes", "initContainers"):
        if spec.get(key):
            pod[key] = _merge_by_name(pod.get(key) or [], spec[key])
    containers = spec.get("containers") or []
    target = _override_target(containers)
    for i, overlay in enumerate(containers):
        where = f"{base}.template.spec.containers[{i}]"
        if i == target:
            ignored += _override_container(pod["containers"][0], overlay, PROFILER_FIELDS, where)
        elif overlay.get("name") == COPIER_CONTAINER:
            ignored += _override_container(pod["containers"][1], overlay, COPIER_FIELDS, where)
        else:
            ignored.append(where)
    taken = {*POD_FIELDS, "volumes", "initContainers", "containers"}
    ignored += [f"{base}.template.spec.{k}" for k in sorted(spec) if k not in taken]
    if pod.get("automountServiceAccountToken") is False:
        # the copier still talks to the API server: its own projected token
        pod["volumes"] = [*pod["volumes"], copier_token]
        pod["containers"][1]["volumeMounts"].append(
            {"name": COPIER_TOKEN_VOLUME, "mountPath": SERVICE_ACCOUNT_TOKEN_DIR, "readOnly": True}
        )
    return ignored
