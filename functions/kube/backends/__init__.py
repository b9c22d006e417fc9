"""Backend-specific pod changes: vLLM, SGLang and TensorRT-LLM
(docs/upstream/operator.md §1.3 detection, §2.4 multinode).

Pure functions over plain-dict pod specs (main container named ``main``). Typical use while rendering one pod role::

    backend = resolve_backend(component_type, main_container, graph.backend_framework)
    executor = executor_backend(component_annotations, graph_metadata_annotations)
    apply_multinode(backend, MultinodeRole(...), pod_spec, vllm_executor=executor, ssh_secret_name=secret)

Call ``apply_multinode`` on the assembled base pod (user containers + main, volumes including ``shared-memory``)
before the frontend sidecar, GMS and failover steps, which is where upstream runs its backend hooks.
"""

from __future__ import annotations

from typing import Any

from functions.kube.backends.detect import BACKENDS, NOOP, WORKER_TYPES, detect_backend, resolve_backend
from functions.kube.backends.errors import BackendError
from functions.kube.backends.executor import (
    EXECUTOR_ANNOTATION,
    ORIGIN_VERSION_ANNOTATION,
    executor_backend,
)
from functions.kube.backends.leader_wait import (
    wait_leader_configmap,
    wait_leader_configmap_name,
    wait_leader_script,
)
from functions.kube.backends.podparts import GPU_RESOURCE, main_container
from functions.kube.backends.sglang import apply_sglang
from functions.kube.backends.topology import MultinodeRole, host_names, leader_host, node_rank
from functions.kube.backends.trtllm import apply_trtllm
from functions.kube.backends.vllm import VLLM_CACHE_ENV, apply_vllm, compilation_cache_env

__all__ = [
    "BACKENDS",
    "EXECUTOR_ANNOTATION",
    "GPU_RESOURCE",
    "NOOP",
    "ORIGIN_VERSION_ANNOTATION",
    "VLLM_CACHE_ENV",
    "WORKER_TYPES",
    "BackendError",
    "MultinodeRole",
    "apply_multinode",
    "compilation_cache_env",
    "detect_backend",
    "executor_backend",
    "host_names",
    "leader_host",
    "node_rank",
    "resolve_backend",
    "wait_leader_configmap",
    "wait_leader_configmap_name",
    "wait_leader_script",
]


def apply_multinode(
    backend: str,
    role: MultinodeRole,
    pod_spec: dict[str, Any],
    *,
    vllm_executor: str,
    ssh_secret_name: str,
    gpu_resource: str = GPU_RESOURCE,
) -> None:
    """Rewrite ``pod_spec`` in place for one role of a multinode component (no-op for ``noop`` or one node)."""
    if backend == NOOP or role.node_count <= 1:
        return
    if backend not in BACKENDS:
        raise BackendError(f"unsupported backend framework {backend!r} (valid values: {', '.join(BACKENDS)})")
    main = main_container(pod_spec)
    if backend == "vllm":
        apply_vllm(role, pod_spec, main, executor=vllm_executor, gpu_resource=gpu_resource)
    elif backend == "sglang":
        apply_sglang(role, main)
    else:
        apply_trtllm(role, pod_spec, main, ssh_secret_name=ssh_secret_name, gpu_resource=gpu_resource)
