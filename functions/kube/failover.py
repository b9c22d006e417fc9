"""Intra-pod active/passive failover (docs/upstream/checkpoint-gms-dgdr-model.md §3.2, §3.5): the worker's ``main``
container becomes two engines, ``engine-0`` and ``engine-1``, that share the GPU memory service; one serves,
the other waits as a shadow and takes over through a lock file on the GMS control volume.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from functions.api.graph import MAIN_CONTAINER, Component, Graph, SpecError
from functions.kube import gms
from functions.kube.backends.shell import inject_flags
from functions.kube.podspec import DISCOVERY_MODE_ANNOTATION

ENGINES = 2  # intra-pod: a fixed primary and one shadow
SYSTEM_PORT = 9090
FORWARDPASS_PORT = 20380
NIXL_SIDE_CHANNEL_PORT = 5600
KV_EVENT_PORT = 20080
MASTER_PORT_DEFAULT = 29600
DROPPED_ENV = frozenset(
    {
        "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS",
        "DYN_SYSTEM_PORT",
        "DYN_SYSTEM_ENABLED",
        "DYN_HEALTH_CHECK_ENABLED",
        "CONTAINER_NAME",
        "DYN_FORWARDPASS_METRIC_PORT",
    }
)
_MASTER_PORT = re.compile(r"(--master-port(?:\s+|=))(\d+)")


def engine_name(index: int) -> str:
    return f"engine-{index}"


def check_failover(graph: Graph, component: Component, backend: str) -> None:
    """Upstream's failover rules (docs/upstream/checkpoint-gms-dgdr-model.md §3.2 items 5, 7, 8); raises
    ``SpecError`` naming the field."""
    config = component.failover
    if config is None:
        return
    if component.gms is None:
        raise SpecError(f"{config.path}: gpuMemoryService is required when failover mode is {config.mode!r}")
    if component.gms.mode != config.mode:
        raise SpecError(f"{config.path}.mode: must match gpuMemoryService.mode {component.gms.mode!r}")
    if config.mode != "IntraPod":
        return
    if config.num_shadows > 1:
        raise SpecError(
            f'{config.path}.numShadows: {config.num_shadows} is invalid for mode="intraPod": intraPod uses a fixed '
            '1 primary + 1 shadow sidecar; use failover.mode="interPod" to configure numShadows'
        )
    if graph.metadata_annotations.get(DISCOVERY_MODE_ANNOTATION) != "container":
        raise SpecError(
            f'metadata.annotations[{DISCOVERY_MODE_ANNOTATION}]: must be "container" when intra-pod failover is '
            "configured"
        )
    if backend != "vllm":
        raise SpecError(f"{config.path}: failover is currently supported only for vLLM (detected: {backend})")


def _shift_master_port(value: str, offset: int) -> tuple[str, bool]:
    found = False

    def shifted(match: re.Match[str]) -> str:
        nonlocal found
        found = True
        return f"{match.group(1)}{int(match.group(2)) + offset}"

    return _MASTER_PORT.sub(shifted, value), found


def _master_port(engine: dict[str, Any], index: int) -> None:
    """Engines after the first move ``--master-port P`` to P+100·N, or get ``--master-port 29600``."""
    offset = 100 * index
    found = False
    for key in ("command", "args"):
        tokens = list(engine.get(key) or [])
        for i, token in enumerate(tokens):
            if token == "--master-port" and i + 1 < len(tokens) and tokens[i + 1].isdigit():
                tokens[i + 1] = str(int(tokens[i + 1]) + offset)
                found = True
            elif "--master-port" in token:
                tokens[i], hit = _shift_master_port(token, offset)
                found = found or hit
        if tokens:
            engine[key] = tokens
    if not found:
        inject_flags(engine, f"--master-port {MASTER_PORT_DEFAULT}", False, "dynamo.vllm")


def _retarget(probe: dict[str, Any] | None, port: str) -> None:
    if probe and "httpGet" in probe:
        probe["httpGet"]["port"] = port


def render_engine(main: dict[str, Any], index: int, backend: str, node_count: int) -> dict[str, Any]:
    engine = copy.deepcopy(main)
    engine["name"] = engine_name(index)
    port = f"system-{index}"
    engine["ports"] = [{"name": port, "containerPort": SYSTEM_PORT + index, "protocol": "TCP"}]
    env = [e for e in engine.get("env") or [] if e.get("name") not in DROPPED_ENV]
    values = [
        ("ENGINE_ID", str(index)),
        ("CONTAINER_NAME", engine["name"]),
        ("FAILOVER_LOCK_PATH", f"{gms.CONTROL_DIR}/failover.lock"),
        ("DYN_SYSTEM_STARTING_HEALTH_STATUS", "notready"),
        ("DYN_SYSTEM_PORT", str(SYSTEM_PORT + index)),
        ("DYN_SYSTEM_ENABLED", "true"),
        ("DYN_FORWARDPASS_METRIC_PORT", str(FORWARDPASS_PORT + index)),
    ]
    if backend == "vllm":
        values += [
            ("DYN_VLLM_GMS_SHADOW_MODE", "true"),
            ("VLLM_NIXL_SIDE_CHANNEL_PORT", str(NIXL_SIDE_CHANNEL_PORT + index)),
            ("DYN_VLLM_KV_EVENT_PORT", str(KV_EVENT_PORT + index)),
        ]
        if index > 0:
            _master_port(engine, index)
    if node_count > 1:
        values.append(("NNODES", str(node_count)))
    names = {name for name, _ in values}
    engine["env"] = [*(e for e in env if e.get("name") not in names), *({"name": n, "value": v} for n, v in values)]
    for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
        _retarget(engine.get(kind), port)
    return engine


def apply_intrapod_failover(pod: dict[str, Any], component: Component, backend: str) -> None:
    """``main`` becomes ``engine-0`` and ``engine-1`` (in place), after the GPU memory service wiring; the other
    containers follow them."""
    config = component.failover
    if config is None or config.mode != "IntraPod":
        return
    containers = pod.get("containers") or []
    main = next(c for c in containers if c.get("name") == MAIN_CONTAINER)
    engines = [render_engine(main, i, backend, component.node_count) for i in range(ENGINES)]
    pod["containers"] = [*engines, *(c for c in containers if c.get("name") != MAIN_CONTAINER)]
