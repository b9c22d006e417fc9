"""A DynamoPlatform's status from what it observes: managed resources' Ready conditions, the kubeconfig Secret,
the Releases' states.

Phases, in order: ``Provisioning`` (the control plane), ``NodePools``, ``Connecting`` (waiting for the kubeconfig),
``Installing`` (the prerequisites), ``Ready``. Conditions: ``ClusterReady``, ``NodePoolsReady``,
``PrerequisitesReady``, each with the first thing it waits for.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

import yaml

from functions.contract import Condition
from functions.readiness.conditions import condition, is_true


def is_ready(obj: dict[str, Any] | None) -> bool:
    """A managed resource's (or Release's) ``Ready`` condition is True."""
    return is_true(obj, "Ready")


def resource_state(obj: dict[str, Any] | None, at_provider_field: str | None = None) -> str:
    """``Pending`` (not composed yet), the provider's own word when it has one, else the Ready condition's reason."""
    if obj is None:
        return "Pending"
    at_provider = ((obj.get("status") or {}).get("atProvider")) or {}
    if at_provider_field and at_provider.get(at_provider_field):
        return str(at_provider[at_provider_field])
    cond = condition(obj, "Ready")
    if cond is None:
        return "Creating"
    return str(cond.get("reason") or ("Available" if cond.get("status") == "True" else "Creating"))


def kubeconfig_server(secrets: list[dict[str, Any]], key: str) -> tuple[bool, str | None]:
    """(the Secret holds ``key``, the API server URL its kubeconfig names)."""
    if not secrets:
        return False, None
    raw = (secrets[0].get("data") or {}).get(key)
    if not raw:
        return False, None
    try:
        config = yaml.safe_load(base64.b64decode(raw, validate=True))
    except (binascii.Error, ValueError, yaml.YAMLError):
        return True, None
    clusters = (config or {}).get("clusters") if isinstance(config, dict) else None
    if isinstance(clusters, list) and clusters and isinstance(clusters[0], dict):
        server = (clusters[0].get("cluster") or {}).get("server")
        return True, str(server) if server else None
    return True, None


@dataclass
class PlatformStatus:
    cluster_ready: bool = False
    endpoint: str | None = None
    kubernetes_version: str | None = None
    node_pools: list[dict[str, Any]] = field(default_factory=list)
    kubeconfig_ready: bool = False
    prerequisites: list[dict[str, Any]] = field(default_factory=list)
    environment_config: str | None = None
    provider_config: str | None = None
    waiting_for: str = ""

    @property
    def pools_ready(self) -> bool:
        return all(p["ready"] for p in self.node_pools)

    @property
    def prerequisites_ready(self) -> bool:
        return all(p["ready"] for p in self.prerequisites)

    @property
    def ready(self) -> bool:
        return (
            self.cluster_ready
            and self.pools_ready
            and self.kubeconfig_ready
            and self.prerequisites_ready
            and self.environment_config is not None
        )

    @property
    def phase(self) -> str:
        if not self.cluster_ready:
            return "Provisioning"
        if not self.pools_ready:
            return "NodePools"
        if not self.kubeconfig_ready:
            return "Connecting"
        if not self.ready:
            return "Installing"
        return "Ready"

    def conditions(self) -> list[Condition]:
        pools_waiting = [p["name"] for p in self.node_pools if not p["ready"]]
        pending = [p["name"] for p in self.prerequisites if not p["ready"]]
        return [
            Condition("ClusterReady", "True", "Available", f"API server {self.endpoint}")
            if self.cluster_ready and self.kubeconfig_ready
            else Condition("ClusterReady", "False", "Provisioning" if not self.cluster_ready else "Connecting",
                           self.waiting_for if not self.kubeconfig_ready else ""),
            Condition("NodePoolsReady", "True", "Available", f"{len(self.node_pools)} node pool(s) ready")
            if not pools_waiting
            else Condition("NodePoolsReady", "False", "Creating", "waiting for " + ", ".join(pools_waiting)),
            Condition("PrerequisitesReady", "True", "Installed", f"{len(self.prerequisites)} release(s) deployed")
            if not pending and self.environment_config
            else Condition("PrerequisitesReady", "False", "Installing",
                           "waiting for " + ", ".join(pending or ["the EnvironmentConfig"])),
        ]  # fmt: skip

    def as_status(self) -> dict[str, Any]:
        cluster: dict[str, Any] = {"ready": self.cluster_ready}
        if self.endpoint:
            cluster["endpoint"] = self.endpoint
        if self.kubernetes_version:
            cluster["kubernetesVersion"] = self.kubernetes_version
        status: dict[str, Any] = {
            "phase": self.phase,
            "cluster": cluster,
            "nodePools": self.node_pools,
            "prerequisites": self.prerequisites,
        }
        if self.environment_config:
            status["environmentConfig"] = self.environment_config
        if self.provider_config:
            status["providerConfig"] = self.provider_config
        return status
