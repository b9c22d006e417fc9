"""A DynamoGraphDeploymentRequest's profiling Job ``profile-<dgdr>`` and the RBAC its pod runs with
(docs/upstream/checkpoint-gms-dgdr-model.md §4.3, docs/upstream/operator.md §4.1).

The ``profiler`` container runs ``python -m dynamo.profiler --config <the spec as JSON> --output-dir /data``;
the ``output-copier`` sidecar (``profiling_copier``) publishes its progress and result as the ConfigMap
``dgdr-output-<dgdr>``. ``overrides.profilingJob`` is merged through upstream's allow-list (``apply_overrides``).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from functions.api.graph import whole_numbers
from functions.api.operator_config import Infrastructure
from functions.kinds.request.profiling_copier import COPIER_SCRIPT
from functions.kinds.request.profiling_overrides import COPIER_CONTAINER, COPIER_TOKEN_VOLUME, apply_overrides
from functions.kinds.request.request_conversion import PROFILER_CONTAINER, AlphaExtras
from functions.kube.naming import cut_with_hash

COPIER_IMAGE = "bitnami/kubectl:latest"
INSTALLER_CONTAINER = "dgd-override-installer"
OUTPUT_DIR = "/data"
OUTPUT_VOLUME = "profiling-output"
MODEL_CACHE_VOLUME = "model-cache"
CONFIG_VOLUME = "profiling-config"
CONFIG_MOUNT = "/config"
OVERRIDE_TOOL_VOLUME = "dgd-override-tool"
OVERRIDE_TOOL_DIR = "/opt/dynamo/bin"
OVERRIDE_TOOL = f"{OVERRIDE_TOOL_DIR}/dgd-apply-overrides"
PULL_SECRET = "nvcr-imagepullsecret"
HF_TOKEN_SECRET, HF_TOKEN_KEY = "hf-token-secret", "HF_TOKEN"
OUTPUT_CONFIGMAP_PREFIX = "dgdr-output-"
MANAGED_BY = {"nvidia.com/managed-by": "dynamo-operator"}
NAME_LIMIT = 63  # a Job's name becomes its pods' job-name label


def job_name(dgdr: str) -> str:
    return cut_with_hash(f"profile-{dgdr}", NAME_LIMIT, "-")


def output_configmap_name(dgdr: str) -> str:
    return f"{OUTPUT_CONFIGMAP_PREFIX}{dgdr}"


def label_value(value: str) -> str:
    return cut_with_hash(value, NAME_LIMIT, "-_.")


def job_labels(dgdr: str) -> dict[str, str]:
    return {"app": "dynamo-profiler", "dgdr": label_value(dgdr), **MANAGED_BY}


@dataclass(frozen=True)
class ProfilingSettings:
    name: str  # the DGDR's
    namespace: str
    uid: str  # DGDR_UID: the composite's UID (the object this package reconciles)
    spec: dict[str, Any]  # the hub spec as the profiler gets it (image defaulted, hardware discovered)
    service_account: str
    owner: dict[str, str]  # apiVersion, kind, name, uid of the composite, the output ConfigMap's controller
    infrastructure: Infrastructure = field(default_factory=Infrastructure)
    alpha: AlphaExtras = field(default_factory=AlphaExtras)
    operator_image: str = ""
    operator_image_pull_policy: str = "IfNotPresent"


def profiler_config(spec: dict[str, Any]) -> str:
    """The ``--config`` argument: the spec as compact JSON, keys sorted."""
    return json.dumps(whole_numbers(spec), sort_keys=True, separators=(",", ":"))


def _env(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "value": value}


def _profiler_env(s: ProfilingSettings) -> list[dict[str, Any]]:
    env = [
        {
            "name": "HUGGING_FACE_HUB_TOKEN",
            "valueFrom": {"secretKeyRef": {"name": HF_TOKEN_SECRET, "key": HF_TOKEN_KEY}},
        },
        _env("DGDR_NAME", s.name),
        _env("DGDR_NAMESPACE", s.namespace),
        _env("DGDR_UID", s.uid),
    ]
    infra = s.infrastructure
    for name, value in (
        ("NATS_SERVER", infra.natsAddress),
        ("ETCD_ENDPOINTS", infra.etcdAddress),
        ("MODEL_EXPRESS_URL", infra.modelExpressURL),
        ("PROMETHEUS_ENDPOINT", infra.prometheusEndpoint),
    ):
        if value:
            env.append(_env(name, value))
    if _overrides_dgd(s.spec):
        env.append(_env("DYNAMO_DGD_APPLY_OVERRIDES_BIN", OVERRIDE_TOOL))
    return env


def _overrides_dgd(spec: dict[str, Any]) -> bool:
    return bool((spec.get("overrides") or {}).get("dgd"))


def _model_cache(spec: dict[str, Any]) -> dict[str, Any] | None:
    cache = spec.get("modelCache") or {}
    return cache if cache.get("pvcName") else None


def _profiler(s: ProfilingSettings) -> dict[str, Any]:
    mounts = [{"name": OUTPUT_VOLUME, "mountPath": OUTPUT_DIR}]
    cache = _model_cache(s.spec)
    if cache:
        mounts.append({"name": MODEL_CACHE_VOLUME, "mountPath": cache["pvcMountPath"], "readOnly": True})
    if s.alpha.config_map:
        mounts.append({"name": CONFIG_VOLUME, "mountPath": CONFIG_MOUNT, "readOnly": True})
    if _overrides_dgd(s.spec):
        mounts.append({"name": OVERRIDE_TOOL_VOLUME, "mountPath": OVERRIDE_TOOL_DIR, "readOnly": True})
    config = profiler_config(s.spec)
    return {
        "name": PROFILER_CONTAINER,
        "image": s.spec.get("image", ""),
        "command": ["python", "-m", "dynamo.profiler"],
        "args": ["--config", config, "--output-dir", OUTPUT_DIR],
        "workingDir": "/workspace",
        "env": _profiler_env(s),
        "volumeMounts": mounts,
    }


def _copier(s: ProfilingSettings) -> dict[str, Any]:
    env = [
        _env("DGDR_NAMESPACE", s.namespace),
        _env("DGDR_LABEL", label_value(s.name)),
        _env("OUTPUT_CONFIGMAP", output_configmap_name(s.name)),
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        *(
            _env(f"OWNER_{key.upper()}", s.owner[k])
            for k, key in (("apiVersion", "api_version"), ("kind", "kind"), ("name", "name"), ("uid", "uid"))
        ),
    ]
    return {
        "name": COPIER_CONTAINER,
        "image": COPIER_IMAGE,
        "command": ["/bin/sh", "-c"],
        "args": [COPIER_SCRIPT],
        "env": env,
        "volumeMounts": [{"name": OUTPUT_VOLUME, "mountPath": OUTPUT_DIR, "readOnly": True}],
    }


def _installer(s: ProfilingSettings) -> dict[str, Any]:
    return {
        "name": INSTALLER_CONTAINER,
        "image": s.operator_image,
        "imagePullPolicy": s.operator_image_pull_policy,
        "command": ["/dgd-apply-overrides", "--install-to", OVERRIDE_TOOL],
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
            "runAsGroup": 1000,
            "runAsNonRoot": True,
            "runAsUser": 1000,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "volumeMounts": [{"name": OVERRIDE_TOOL_VOLUME, "mountPath": OVERRIDE_TOOL_DIR}],
    }


def _volumes(s: ProfilingSettings) -> list[dict[str, Any]]:
    output: dict[str, Any] = (
        {"persistentVolumeClaim": {"claimName": s.alpha.output_pvc}} if s.alpha.output_pvc else {"emptyDir": {}}
    )
    volumes = [{"name": OUTPUT_VOLUME, **output}]
    cache = _model_cache(s.spec)
    if cache:
        volumes.append(
            {"name": MODEL_CACHE_VOLUME, "persistentVolumeClaim": {"claimName": cache["pvcName"], "readOnly": True}}
        )
    if s.alpha.config_map:
        name, key = s.alpha.config_map
        volumes.append({"name": CONFIG_VOLUME, "configMap": {"name": name, "items": [{"key": key, "path": key}]}})
    if _overrides_dgd(s.spec):
        volumes.append({"name": OVERRIDE_TOOL_VOLUME, "emptyDir": {}})
    return volumes


def render_profiling_job(s: ProfilingSettings) -> tuple[dict[str, Any], list[str]]:
    """The Job, and the ``overrides.profilingJob`` fields it ignored (outside upstream's allow-list)."""
    if _overrides_dgd(s.spec) and not s.operator_image:
        raise ValueError("dgdr.operatorImage: spec.overrides.dgd needs the operator image's dgd-apply-overrides")
    pod: dict[str, Any] = {
        "serviceAccountName": s.service_account,
        "restartPolicy": "Never",
        "securityContext": {"fsGroup": 1000, "runAsGroup": 1000, "runAsNonRoot": True, "runAsUser": 1000},
        "imagePullSecrets": [{"name": PULL_SECRET}],
        "containers": [_profiler(s), _copier(s)],
        "volumes": _volumes(s),
    }
    if _overrides_dgd(s.spec):
        pod["initContainers"] = [_installer(s)]
    labels = job_labels(s.name)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": job_name(s.name), "namespace": s.namespace, "labels": dict(labels)},
        "spec": {"backoffLimit": 0, "template": {"metadata": {"labels": dict(labels)}, "spec": pod}},
    }
    ignored = apply_overrides(job, (s.spec.get("overrides") or {}).get("profilingJob") or {}, _copier_token_volume())
    return job, ignored


def _copier_token_volume() -> dict[str, Any]:
    return {
        "name": COPIER_TOKEN_VOLUME,
        "projected": {
            "sources": [
                {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}}]}},
            ]
        },
    }


# --- RBAC ---------------------------------------------------------------------------------------------------------

# What the pod needs when the platform names no ClusterRole: the copier applies its ConfigMap and reads its own pod;
# the profiler (thorough search) deploys candidate graphs and reaches their frontends.
PROFILING_RULES = [
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch", "create", "update", "patch"]},
    {"apiGroups": [""], "resources": ["pods", "services"], "verbs": ["get", "list", "watch"]},
    {
        "apiGroups": ["nvidia.com"],
        "resources": ["dynamographdeployments"],
        "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"],
    },
]
SA_RESOURCE, ROLE_RESOURCE, BINDING_RESOURCE = "profiling-serviceaccount", "profiling-role", "profiling-rolebinding"


def service_account_name(dgdr: str) -> str:
    return job_name(dgdr)


def render_profiling_rbac(dgdr: str, namespace: str, cluster_role: str | None) -> dict[str, dict[str, Any]]:
    """The pod's ServiceAccount and its binding: to the platform's ClusterRole if named, else to a Role of ours."""
    name = service_account_name(dgdr)
    labels = {"dgdr.nvidia.com/name": label_value(dgdr), **MANAGED_BY}
    meta = {"name": name, "namespace": namespace, "labels": labels}
    out: dict[str, dict[str, Any]] = {
        SA_RESOURCE: {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": dict(meta)},
    }
    role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cluster_role or ""}
    if not cluster_role:
        out[ROLE_RESOURCE] = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": dict(meta),
            "rules": copy.deepcopy(PROFILING_RULES),
        }
        role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name}
    out[BINDING_RESOURCE] = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": dict(meta),
        "roleRef": role_ref,
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
    }
    return out
