"""The inter-pod GPU Memory Service on the Grove pathway (docs/upstream/checkpoint-gms-dgdr-model.md §3.6): the
weights live in a GMS weight-server pod, the engines run in pods of their own beside it, and Grove gives both one
DRA claim per scaling-group replica and rank.

The component becomes a PodCliqueScalingGroup ``{comp}`` with, per rank r (one for a single-node component, one
per node for a multinode one), a weight-server clique ``{comp}-gms-{r}`` (one pod) and an engine clique
(``{comp}`` single-node; ``{comp}-ldr`` for rank 0 and ``{comp}-wkr-{r}`` multinode), whose pods are one engine,
or with inter-pod failover a primary and its shadows, and start after their rank's server. The PodCliqueSet
declares the claim template ``{comp}-gpu-rank-{r}`` per rank and the scaling group shares each per replica
between the rank's two cliques. The pods of a rank reach each other over a host directory under ``/run/gms``,
one per scaling-group replica and rank.
"""

from __future__ import annotations

import copy
from typing import Any

from functions.api.graph import Component
from functions.kube import gms
from functions.kube.backends.shell import inject_flags

SHARED_VOLUME = "gms-shared"
HOST_PATH = "/run/gms"
SHARED_DIR = "/run/gms/shared"
PERMISSIONS_INIT = "fix-gms-perms"
FAILOVER_MEMBER_LABEL = "nvidia.com/dynamo-failover-engine-group-member"
POD_INDEX_FIELD = "metadata.labels['grove.io/podclique-pod-index']"
# Removes stale sockets, runs the GMS server, forwards SIGTERM/SIGINT to it and exits with its status.
SERVER_SCRIPT = f"""rm -f {SHARED_DIR}/gms_*.sock
python3 -m gpu_memory_service.cli.server &
server=$!
trap 'kill -TERM "$server" 2>/dev/null' TERM INT
rc=1
while kill -0 "$server" 2>/dev/null; do wait "$server"; rc=$?; done
exit "$rc"
"""


def rank_cliques(component: Component) -> list[tuple[int, str, str]]:
    """(rank, weight-server clique, engine clique) for each rank."""
    key = component.key
    if not component.multinode:
        return [(0, f"{key}-gms-0", key)]
    return [(r, f"{key}-gms-{r}", f"{key}-ldr" if r == 0 else f"{key}-wkr-{r}") for r in range(component.node_count)]


def claim_template_name(component: Component, rank: int) -> str:
    return f"{component.key}-gpu-rank-{rank}"


def engine_replicas(component: Component) -> int:
    """A primary and ``numShadows`` shadows with inter-pod failover, else one engine."""
    failover = component.failover
    return failover.num_shadows + 1 if failover is not None and failover.mode == "InterPod" else 1


def engine_min_available(component: Component) -> int:
    """Every engine of a rank for a multinode component without failover, else one."""
    failover = component.failover is not None and component.failover.mode == "InterPod"
    return engine_replicas(component) if component.multinode and not failover else 1


def pcs_claim_templates(component: Component, gpus: int) -> list[dict[str, Any]]:
    """The PodCliqueSet's ``resourceClaimTemplates`` entries, one per rank."""
    assert component.gms is not None
    request = {
        "name": "gpu",
        "exactly": {"deviceClassName": component.gms.device_class, "allocationMode": "ExactCount", "count": gpus},
    }
    return [
        {"name": claim_template_name(component, r), "templateSpec": {"spec": {"devices": {"requests": [request]}}}}
        for r, _, _ in rank_cliques(component)
    ]


def resource_sharing(component: Component) -> list[dict[str, Any]]:
    """The scaling group's per-replica sharing of each rank's claim between its server and its engines."""
    return [
        {
            "name": claim_template_name(component, rank),
            "scope": "PerReplica",
            "filter": {"childCliqueNames": [server, engine]},
        }
        for rank, server, engine in rank_cliques(component)
    ]


def _shared(pod: dict[str, Any], rank: int) -> None:
    """What the server and engine pods share: no GPU scalars (the claim holds them), the GPU toleration, the
    host directory of this replica and rank, and the init container that opens it to the non-root user."""
    main = pod["containers"][0]
    gms.drop_gpu_scalars(main)
    gms.add_gpu_toleration(pod)
    mount = {
        "name": SHARED_VOLUME,
        "mountPath": SHARED_DIR,
        "subPathExpr": f"$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)/rank-{rank}",
    }
    pod["volumes"] = [
        *(pod.get("volumes") or []),
        {"name": SHARED_VOLUME, "hostPath": {"path": HOST_PATH, "type": "DirectoryOrCreate"}},
    ]
    main["volumeMounts"] = [*(main.get("volumeMounts") or []), mount]
    init = {
        "name": PERMISSIONS_INIT,
        "image": main.get("image"),
        "command": ["sh", "-c", f"chmod 1777 {SHARED_DIR}"],
        "securityContext": {"runAsUser": 0, "runAsNonRoot": False},
        "volumeMounts": [dict(mount)],
    }
    pod["initContainers"] = [*(pod.get("initContainers") or []), init]


def _set_env(container: dict[str, Any], entries: list[dict[str, Any]], drop: tuple[str, ...] = ()) -> None:
    names = {e["name"] for e in entries} | set(drop)
    container["env"] = [*(e for e in container.get("env") or [] if e.get("name") not in names), *entries]


def _shadow_mode(component: Component, backend: str) -> list[dict[str, Any]]:
    """vLLM's standby switch, for inter-pod failover only: standalone inter-pod GMS engines are active clients.
    The operator sets it on the component's main container before it splits the weight server from the engines,
    so both carry it."""
    if backend == "vllm" and component.failover is not None and component.failover.mode == "InterPod":
        return [{"name": "DYN_VLLM_GMS_SHADOW_MODE", "value": "true"}]
    return []


def server_pod(base: dict[str, Any], gpus: int, rank: int, component: Component, backend: str) -> dict[str, Any]:
    """The GMS weight-server pod: the component's pod with its main container running the server."""
    pod = copy.deepcopy(base)
    main = pod["containers"][0]
    main["command"] = ["bash", "-c"]
    main["args"] = [SERVER_SCRIPT]
    main["startupProbe"] = {
        "exec": {"command": ["sh", "-c", f"test $(ls {SHARED_DIR}/gms_*.sock 2>/dev/null | wc -l) -ge {2 * gpus}"]},
        "periodSeconds": 2,
        "timeoutSeconds": 2,
        "failureThreshold": 150,
    }
    main.pop("livenessProbe", None)
    main.pop("readinessProbe", None)
    _set_env(main, [*_shadow_mode(component, backend), {"name": gms.SOCKET_ENV, "value": SHARED_DIR}])
    _shared(pod, rank)
    return pod


def _has_flag(container: dict[str, Any], flag: str) -> bool:
    words = [w for t in [*(container.get("command") or []), *(container.get("args") or [])] for w in str(t).split()]
    return any(w == flag or w.startswith(f"{flag}=") for w in words)


def engine_pod(base: dict[str, Any], component: Component, backend: str, rank: int) -> dict[str, Any]:
    """An engine pod: reads its weights from the server through the shared directory."""
    pod = copy.deepcopy(base)
    main = pod["containers"][0]
    failover = component.failover is not None and component.failover.mode == "InterPod"
    entries = [
        {"name": "ENGINE_ID", "valueFrom": {"fieldRef": {"fieldPath": POD_INDEX_FIELD}}},
        {"name": gms.SOCKET_ENV, "value": SHARED_DIR},
        {"name": "FAILOVER_LOCK_PATH", "value": f"{SHARED_DIR}/failover.lock"},
        {"name": "DYN_SYSTEM_STARTING_HEALTH_STATUS", "value": "notready"},
        *_shadow_mode(component, backend),
    ]  # fmt: skip
    _set_env(main, entries, drop=("DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS",))
    if backend == "vllm" and not _has_flag(main, "--load-format"):
        inject_flags(main, "--load-format gms", False, "dynamo.vllm")
    if failover:
        pod["restartPolicy"] = "Never"
    _shared(pod, rank)
    return pod
