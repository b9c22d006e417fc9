"""Container and pod defaults per component type (docs/upstream/operator.md §2.2-2.3; upstream component_*.go)."""

from __future__ import annotations

from typing import Any

from functions.api.graph import MAIN_CONTAINER, ConfigMapKey

FRONTEND_PORT = 8000
SYSTEM_PORT = 9090
NIXL_PORT = 19090
FORWARDPASS_METRIC_PORT = 20380  # the forward-pass metrics publisher (env only, no container port)
PLANNER_METRICS_PORT = 9085
EPP_GRPC_PORT = 9002
EPP_HEALTH_PORT = 9003
WORKER_TYPES = frozenset({"worker", "prefill", "decode"})
PLANNER_SERVICE_ACCOUNT = "planner-serviceaccount"
EPP_SERVICE_ACCOUNT = "epp-serviceaccount"
EPP_CONFIG_KEY = "epp-config-dynamo.yaml"  # the ConfigMap key and the file name under /etc/epp


def _port(name: str, number: int) -> dict[str, Any]:
    return {"name": name, "containerPort": number, "protocol": "TCP"}


def _http_probe(path: str, port: str, **timing: int) -> dict[str, Any]:
    return {"httpGet": {"path": path, "port": port}, **timing}


def _grpc_probe(**timing: int) -> dict[str, Any]:
    return {"grpc": {"port": EPP_HEALTH_PORT, "service": "inference-extension"}, **timing}


def _env(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "value": value}


def _field_env(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def worker_probes() -> dict[str, dict[str, Any]]:
    """New objects on every call, like every other default: a rendered container owns what it holds."""
    return {
        "livenessProbe": _http_probe("/live", "system", periodSeconds=5, timeoutSeconds=4, failureThreshold=1),
        "readinessProbe": _http_probe("/health", "system", periodSeconds=10, timeoutSeconds=4, failureThreshold=3),
        "startupProbe": _http_probe("/live", "system", periodSeconds=10, timeoutSeconds=5, failureThreshold=720),
    }


def common_env(
    component_type: str | None,
    dynamo_namespace: str,
    graph_name: str,
    graph_namespace: str,
    discovery_backend: str,
    container_discovery: bool,
) -> list[dict[str, Any]]:
    env = [
        _env("DYN_NAMESPACE", dynamo_namespace),
        _env("DYN_COMPONENT", component_type or ""),
        _env("DYN_PARENT_DGD_K8S_NAME", graph_name),
        _env("DYN_PARENT_DGD_K8S_NAMESPACE", graph_namespace),
        _field_env("POD_NAME", "metadata.name"),
        _field_env("POD_NAMESPACE", "metadata.namespace"),
        _field_env("POD_UID", "metadata.uid"),
    ]
    if discovery_backend != "etcd":
        env.append(_env("DYN_DISCOVERY_BACKEND", "kubernetes"))
    if container_discovery:
        env += [_env("CONTAINER_NAME", MAIN_CONTAINER), _env("DYN_KUBE_DISCOVERY_MODE", "container")]
    return env


HF_CACHE_VOLUME = "hf-cache"  # the EPP's model-config download cache, an emptyDir
EPP_CACHE = "/home/nonroot/.cache"  # where upstream mounts it


def epp_args(graph_name: str, namespace: str) -> list[str]:
    """The Go EPP's launch flags as upstream HEAD writes them (GNU style; ``-v`` keeps its single dash)."""
    flags = {
        "--pool-name": f"{graph_name}-pool",
        "--pool-namespace": namespace,
        "--pool-group": "inference.networking.k8s.io",
        "-v": "4",
        "--zap-encoder": "json",
        "--grpc-port": str(EPP_GRPC_PORT),
        "--grpc-health-port": str(EPP_HEALTH_PORT),
        "--config-file": f"/etc/epp/{EPP_CONFIG_KEY}",
    }
    return [part for flag, value in flags.items() for part in (flag, value)]


def type_container(component_type: str | None, dynamo_namespace: str, graph_name: str, namespace: str) -> dict:
    """The type-specific part of container ``main``: command/args, ports, probes and env."""
    if component_type == "frontend":
        return {
            "command": ["python3"],
            "args": ["-m", "dynamo.frontend"],
            "ports": [_port("http", FRONTEND_PORT)],
            "livenessProbe": _http_probe(
                "/live", "http", initialDelaySeconds=15, periodSeconds=10, timeoutSeconds=1, failureThreshold=3
            ),
            "readinessProbe": _http_probe(
                "/health", "http", initialDelaySeconds=10, periodSeconds=10, timeoutSeconds=3, failureThreshold=3
            ),
            "env": [
                _env("DYNAMO_PORT", str(FRONTEND_PORT)),
                _env("DYN_HTTP_PORT", str(FRONTEND_PORT)),
                _env("DYN_NAMESPACE_PREFIX", dynamo_namespace),
            ],
        }
    if component_type in WORKER_TYPES:
        return {
            "ports": [_port("system", SYSTEM_PORT), _port("nixl", NIXL_PORT)],
            **worker_probes(),
            "env": [
                _env("DYN_SYSTEM_ENABLED", "true"),
                _env("DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS", '["generate"]'),
                _env("DYN_SYSTEM_PORT", str(SYSTEM_PORT)),
                _env("DYN_HEALTH_CHECK_ENABLED", "false"),
                _env("DYN_FORWARDPASS_METRIC_PORT", str(FORWARDPASS_METRIC_PORT)),
                _env("NIXL_TELEMETRY_ENABLE", "n"),
                _env("NIXL_TELEMETRY_EXPORTER", "prometheus"),
                _env("NIXL_TELEMETRY_PROMETHEUS_PORT", str(NIXL_PORT)),
            ],
        }
    if component_type == "planner":
        return {
            "ports": [_port("metrics", PLANNER_METRICS_PORT), _port("system", SYSTEM_PORT)],
            **worker_probes(),
            "env": [
                _env("PLANNER_PROMETHEUS_PORT", str(PLANNER_METRICS_PORT)),
                _env("DYN_SYSTEM_PORT", str(SYSTEM_PORT)),
            ],
        }
    if component_type == "epp":
        return epp_container(dynamo_namespace, graph_name, namespace)
    return {}


def epp_container(dynamo_namespace: str, graph_name: str, namespace: str) -> dict[str, Any]:
    """Upstream's EPP launch (component_epp.go): its flags, the config file and the model-config cache under the
    nonroot user's home. Every EPP has an ``eppConfig`` (upstream's webhook requires one)."""
    return {
        "command": [],
        "args": epp_args(graph_name, namespace),
        "ports": [
            _port("grpc", EPP_GRPC_PORT),
            _port("grpc-health", EPP_HEALTH_PORT),
            _port("metrics", SYSTEM_PORT),
        ],
        "livenessProbe": _grpc_probe(initialDelaySeconds=5, periodSeconds=10),
        "readinessProbe": _grpc_probe(initialDelaySeconds=5, periodSeconds=10),
        "startupProbe": _grpc_probe(periodSeconds=10, failureThreshold=180),
        "env": [
            _env("USE_STREAMING", "true"),
            _env("RUST_LOG", "info"),
            _env("DYN_ENFORCE_DISAGG", "false"),
            _env("DYN_NAMESPACE_PREFIX", dynamo_namespace),
        ],
        "volumeMounts": [
            {"name": "epp-config", "mountPath": "/etc/epp", "readOnly": True},
            {"name": HF_CACHE_VOLUME, "mountPath": EPP_CACHE},
        ],
    }


def epp_config_map_name(graph_name: str) -> str:
    return f"{graph_name}-epp-config"


def type_pod(component_type: str | None, graph_name: str, epp_config_ref: ConfigMapKey | None = None) -> dict[str, Any]:
    """Pod-level defaults: the common ones plus the type's service account, grace period and volumes.

    The EPP reads its config from the ConfigMap the function composes, or from the user's
    ``eppConfig.configMapRef`` (upstream epp/config.go GetConfigMapVolumeMount: its name, its key when
    set, always mounted at path ``epp-config-dynamo.yaml``).
    """
    pod: dict[str, Any] = {"terminationGracePeriodSeconds": 60, "restartPolicy": "Always"}
    if component_type == "planner":
        pod["serviceAccountName"] = PLANNER_SERVICE_ACCOUNT
    elif component_type == "epp":
        pod["serviceAccountName"] = EPP_SERVICE_ACCOUNT
        pod["terminationGracePeriodSeconds"] = 130
        cache = {"name": HF_CACHE_VOLUME, "emptyDir": {}}  # the model-config cache
        config_map = epp_config_ref.name if epp_config_ref else epp_config_map_name(graph_name)
        key = (epp_config_ref.key if epp_config_ref else "") or EPP_CONFIG_KEY
        pod["volumes"] = [
            {"name": "epp-config", "configMap": {"name": config_map, "items": [{"key": key, "path": EPP_CONFIG_KEY}]}},
            cache,
        ]
    return pod
