"""The inter-pod GPU Memory Service on the Grove pathway, single-node components (reference
checkpoint-gms-dgdr-model.md §3.6): the weights live in a GMS weight-server pod, the engines run in pods of
their own beside it, and Grove gives both one DRA claim per scaling-group replica.

The component becomes a PodCliqueScalingGroup ``{comp}`` of two cliques: ``{comp}-gms-0`` (the weight server,
one pod) and ``{comp}`` (the engines: one, or with inter-pod failover a primary and its shadows), the engines
starting after the server. The PodCliqueSet declares the claim template ``{comp}-gpu-rank-0`` and the scaling
group shares it per replica between the two cliques. Both pods reach each other over a host directory under
``/run/gms``, one per scaling-group replica and rank.
"""

from __future__ import annotations

import copy
from typing import Any

from functions.api.graph import Component
from functions.render import gms
from functions.render.backends.shell import inject_flags

SHARED_VOLUME = "gms-shared"
HOST_PATH = "/run/gms"
SHARED_DIR = "/run/gms/shared"
PERMISSIONS_INIT = "fix-gms-perms"
FAILOVER_MEMBER_LABEL = "nvidia.com/dynamo-failover-engine-group-member"
RANK = 0  # single-node: one rank
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


def gms_clique_name(component: Component) -> str:
    return f"{component.key}-gms-{RANK}"


def claim_template_name(component: Component) -> str:
    return f"{component.key}-gpu-rank-{RANK}"


def engine_replicas(component: Component) -> int:
    """A primary and ``numShadows`` shadows with inter-pod failover, else one engine."""
    failover = component.failover
    return failover.num_shadows + 1 if failover is not None and failover.mode == "InterPod" else 1


def pcs_claim_template(component: Component, gpus: int) -> dict[str, Any]:
    """The PodCliqueSet's ``resourceClaimTemplates`` entry of the component's rank."""
    assert component.gms is not None
    request = {
        "name": "gpu",
        "exactly": {"deviceClassName": component.gms.device_class, "allocationMode": "ExactCount", "count": gpus},
    }
    return {"name": claim_template_name(component), "templateSpec": {"spec": {"devices": {"requests": [request]}}}}


def resource_sharing(component: Component) -> list[dict[str, Any]]:
    """The scaling group's per-replica sharing of the rank's claim between the server and the engines."""
    return [
        {
            "name": claim_template_name(component),
            "scope": "PerReplica",
            "filter": {"childCliqueNames": [gms_clique_name(component), component.key]},
        }
    ]


def _shared(pod: dict[str, Any]) -> None:
    """What the server and engine pods share: no GPU scalars (the claim holds them), the GPU toleration, the
    host directory of this replica and rank, and the init container that opens it to the non-root user."""
    main = pod["containers"][0]
    resources = dict(main.get("resources") or {})
    for part in ("limits", "requests"):
        kept = {k: v for k, v in (resources.get(part) or {}).items() if not gms.is_gpu_resource(k)}
        if kept:
            resources[part] = kept
        else:
            resources.pop(part, None)
    main["resources"] = resources
    tolerations = list(pod.get("tolerations") or [])
    if not any(all(t.get(k) == v for k, v in gms.GPU_TOLERATION.items()) for t in tolerations):
        tolerations.append(dict(gms.GPU_TOLERATION))
    pod["tolerations"] = tolerations
    mount = {
        "name": SHARED_VOLUME,
        "mountPath": SHARED_DIR,
        "subPathExpr": f"$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)/rank-{RANK}",
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


def server_pod(base: dict[str, Any], gpus: int) -> dict[str, Any]:
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
    _set_env(main, [{"name": gms.SOCKET_ENV, "value": SHARED_DIR}])
    _shared(pod)
    return pod


def _has_flag(container: dict[str, Any], flag: str) -> bool:
    words = [w for t in [*(container.get("command") or []), *(container.get("args") or [])] for w in str(t).split()]
    return any(w == flag or w.startswith(f"{flag}=") for w in words)


def engine_pod(base: dict[str, Any], component: Component, backend: str) -> dict[str, Any]:
    """An engine pod: reads its weights from the server through the shared directory."""
    pod = copy.deepcopy(base)
    main = pod["containers"][0]
    failover = component.failover is not None and component.failover.mode == "InterPod"
    entries = [
        {"name": "ENGINE_ID", "valueFrom": {"fieldRef": {"fieldPath": POD_INDEX_FIELD}}},
        {"name": gms.SOCKET_ENV, "value": SHARED_DIR},
        {"name": "FAILOVER_LOCK_PATH", "value": f"{SHARED_DIR}/failover.lock"},
        {"name": "DYN_SYSTEM_STARTING_HEALTH_STATUS", "value": "notready"},
    ]  # fmt: skip
    if backend == "vllm" and failover:
        entries.append({"name": "DYN_VLLM_GMS_SHADOW_MODE", "value": "true"})
    _set_env(main, entries, drop=("DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS",))
    if backend == "vllm" and not _has_flag(main, "--load-format"):
        inject_flags(main, "--load-format gms", False, "dynamo.vllm")
    if failover:
        pod["restartPolicy"] = "Never"
    _shared(pod)
    return pod
