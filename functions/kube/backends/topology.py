"""Where the leader is and which rank a pod has, per multinode pathway (docs/upstream/operator.md §2.4).

Upstream facts (``grove.go`` ``GroveMultinodeDeployer``, ``lws.go`` ``LWSMultinodeDeployer``):

* Grove leader ``$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-{key}-ldr-0.$(GROVE_HEADLESS_SERVICE)``; worker hosts use
  ``-wkr-{i}`` for i = 0 … nodes-2; the worker rank ``$((GROVE_PCLQ_POD_INDEX + 1))`` is shell arithmetic;
* inter-pod GPU memory service (one clique per rank, its pods a primary and shadows): the leader
  ``…-{key}-ldr-$(GROVE_PCLQ_POD_INDEX)…`` (the same engine index), workers
  ``…-{key}-wkr-{r}-$(GROVE_PCLQ_POD_INDEX)…``, and the node rank is the literal rank;
* LWS leader ``$(LWS_LEADER_ADDRESS)`` and rank ``$(LWS_WORKER_INDEX)`` are expanded by the kubelet (no shell);
  LWS exposes no per-worker host names, so worker i's host is the leader address with ``-{i}`` before its first dot,
  computed by the shell at run time; the LWS pathway needs a DNS wait before ``mpirun`` (pods start together).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

GROVE_HOST = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-{key}-{suffix}.$(GROVE_HEADLESS_SERVICE)"
GROVE_WORKER_RANK = "$((GROVE_PCLQ_POD_INDEX + 1))"
GROVE_POD_INDEX = "$(GROVE_PCLQ_POD_INDEX)"
LWS_LEADER = "$(LWS_LEADER_ADDRESS)"
LWS_WORKER_RANK = "$(LWS_WORKER_INDEX)"


@dataclass(frozen=True)
class MultinodeRole:
    """One pod role of a multinode component and where it is rendered."""

    pathway: Literal["grove", "lws"]
    role: Literal["leader", "worker"]
    node_count: int
    component_key: str  # lower-case service name, used in Grove host names
    graph_name: str
    namespace: str
    # The inter-pod GPU memory service's per-rank layout: this pod's rank (one clique per rank, its pods a
    # primary and its shadows); None for the usual leader and worker cliques.
    inter_pod_rank: int | None = None

    @property
    def is_leader(self) -> bool:
        return self.role == "leader"


def leader_host(role: MultinodeRole) -> str:
    """The leader's address as seen from any pod of the group."""
    if role.pathway == "lws":
        return LWS_LEADER
    if role.inter_pod_rank is not None:  # the leader engine with this pod's engine index
        return GROVE_HOST.format(key=role.component_key.lower(), suffix=f"ldr-{GROVE_POD_INDEX}")
    return GROVE_HOST.format(key=role.component_key.lower(), suffix="ldr-0")


def node_rank(role: MultinodeRole) -> tuple[str, bool]:
    """This pod's node rank expression and whether it needs a shell to evaluate."""
    if role.is_leader:
        return "0", False
    if role.inter_pod_rank is not None:
        return str(role.inter_pod_rank), False
    if role.pathway == "lws":
        return LWS_WORKER_RANK, False
    return GROVE_WORKER_RANK, True


def host_names(role: MultinodeRole) -> list[str]:
    """Every node's host, leader first; LWS worker entries are shell expressions (use inside ``sh -c`` only)."""
    hosts = [leader_host(role)]
    for index in range(1, role.node_count):
        if role.pathway == "lws":
            # the leader address with "-<index>" spliced in before its first dot
            hosts.append(f"${{LWS_LEADER_ADDRESS%%.*}}-{index}.${{LWS_LEADER_ADDRESS#*.}}")
        elif role.inter_pod_rank is not None:
            suffix = f"wkr-{index}-{GROVE_POD_INDEX}"
            hosts.append(GROVE_HOST.format(key=role.component_key.lower(), suffix=suffix))
        else:
            hosts.append(GROVE_HOST.format(key=role.component_key.lower(), suffix=f"wkr-{index - 1}"))
    return hosts


def needs_dns_wait(role: MultinodeRole) -> bool:
    """LWS starts all pods at once, so the leader waits for the workers' DNS records before launching."""
    return role.pathway == "lws"
