"""What a DynamoPlatform composes for its cloud, in the order it is composed.

Each cloud's renderer (``platform_aws``, ``platform_gcp``, ``platform_azure``) returns a ``CloudPlan``: the managed
resources of the control plane, those composed once the control plane is Ready (node pools, the credential
resource), and where the new cluster's kubeconfig lands (a Secret in the platform's namespace). ``existing``
composes nothing: the kubeconfig Secret is given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from functions.kinds.platform.platform_api import DynamoPlatformSpec, Taint
from functions.kinds.platform.platform_names import PLATFORM_LABEL

EXTERNAL_NAME = "crossplane.io/external-name"
# Kubernetes' taint effects as the AWS and GCP APIs spell them.
UPPER_EFFECTS = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}


@dataclass(frozen=True)
class Platform:
    """The claim: its name and namespace, and its parsed spec."""

    name: str
    namespace: str
    spec: DynamoPlatformSpec

    @property
    def kubeconfig_secret(self) -> str:
        return f"{self.name}-kubeconfig"


@dataclass
class CloudPlan:
    control_plane: dict[str, dict[str, Any]] = field(default_factory=dict)
    cluster_key: str | None = None  # the resource whose Ready says the control plane is up
    after_cluster: dict[str, dict[str, Any]] = field(default_factory=dict)
    node_pools: dict[str, str] = field(
        default_factory=dict
    )  # pool name -> resource key (an Azure system pool: the cluster)
    kubeconfig: tuple[str, str] = ("", "kubeconfig")  # (Secret name, key) in the platform's namespace
    # provider-helm/-kubernetes identity block, for a kubeconfig without credentials (GKE)
    identity: dict[str, Any] | None = None


def managed(api_version: str, kind: str, name: str, platform: Platform, spec: dict[str, Any]) -> dict[str, Any]:
    """A namespaced (``.m.``) managed resource in the platform's namespace, on the cloud's provider config."""
    ref = platform.spec.providerConfigRef
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": platform.namespace, "labels": {PLATFORM_LABEL: platform.name}},
        "spec": {**spec, "providerConfigRef": {"kind": ref.kind, "name": ref.name}},
    }


def pool_labels(labels: dict[str, str]) -> dict[str, str]:
    return dict(sorted(labels.items()))


def upper_taints(taints: list[Taint]) -> list[dict[str, str]]:
    """Taints as EKS and GKE take them (effects in upper snake case)."""
    return [{"key": t.key, "value": t.value, "effect": UPPER_EFFECTS[t.effect]} for t in taints]
