"""A GKE cluster for a DynamoPlatform: provider-upjet-gcp v1.14.0's cluster-scoped ``container.gcp.upbound.io``
kinds, at their storage version v1beta1 (nested blocks as lists of one; docs/upstream/target-apis.md §4.3).

The module proxy serves no ``provider-gcp/v2``, whose namespaced ``.m.`` kinds the other clouds use; v1.14.0's
CRDs have no conversion webhook, so the storage version is the one written. The Cluster without its default pool
(it writes the kubeconfig); once it is Ready, one NodePool per pool, GPU pools with their accelerators attached
and GKE's driver installed. GKE's kubeconfig has no credentials: the service-account key the platform names is
the identity provider-helm and provider-kubernetes authenticate with.
"""

from __future__ import annotations

from typing import Any

from functions.kinds.platform.cloud import CloudPlan, Platform, pool_labels, upper_taints
from functions.kinds.platform.platform_names import PLATFORM_LABEL

CONTAINER = "container.gcp.upbound.io/v1beta1"
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
GPU_DRIVER_VERSION = "LATEST"


def _cluster_scoped(kind: str, name: str, platform: Platform, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": CONTAINER,
        "kind": kind,
        "metadata": {"name": name, "labels": {PLATFORM_LABEL: platform.name}},
        "spec": {
            **spec,
            "deletionPolicy": "Delete",
            "providerConfigRef": {"name": platform.spec.providerConfigRef.name},
        },
    }


def _node_pool(platform: Platform, pool: str, node_config: dict[str, Any], sizes: tuple[int, int]) -> dict[str, Any]:
    low, high = sizes
    for_provider: dict[str, Any] = {
        "clusterRef": {"name": platform.name},
        "location": platform.spec.region,
        "initialNodeCount": low,
        "autoscaling": [{"minNodeCount": low, "maxNodeCount": high}],
        "management": [{"autoRepair": True, "autoUpgrade": True}],
        "nodeConfig": [{"oauthScopes": [CLOUD_PLATFORM_SCOPE], **node_config}],
    }
    if platform.spec.gcp is not None and platform.spec.gcp.project:
        for_provider["project"] = platform.spec.gcp.project
    return _cluster_scoped("NodePool", f"{platform.name}-{pool}", platform, {"forProvider": for_provider})


def render_gcp(platform: Platform) -> CloudPlan:
    spec = platform.spec
    assert spec.gcp is not None and spec.region is not None
    network = spec.gcp
    cluster: dict[str, Any] = {
        "location": spec.region,
        "initialNodeCount": 1,
        "removeDefaultNodePool": True,
        "deletionProtection": False,
    }
    for field in ("project", "network", "subnetwork"):
        if getattr(network, field):
            cluster[field] = getattr(network, field)
    if spec.kubernetesVersion:
        cluster["minMasterVersion"] = spec.kubernetesVersion
    plan = CloudPlan(cluster_key="cluster", kubeconfig=(platform.kubeconfig_secret, "kubeconfig"))
    plan.control_plane["cluster"] = _cluster_scoped("Cluster", platform.name, platform, {
        "forProvider": cluster,
        "writeConnectionSecretToRef": {"name": platform.kubeconfig_secret, "namespace": platform.namespace},
    })  # fmt: skip
    if spec.systemNodePool is not None:
        system = spec.systemNodePool
        plan.after_cluster["nodepool-system"] = _node_pool(
            platform, "system", {"machineType": system.machineType}, (system.minNodes, system.maxNodes)
        )
        plan.node_pools["system"] = "nodepool-system"
    for pool in spec.gpuNodePools:
        node_config: dict[str, Any] = {
            "machineType": pool.machineType,
            "labels": pool_labels(pool.labels),
            "spot": pool.spot,
        }
        if pool.gpu is not None:
            node_config["guestAccelerator"] = [{
                "type": pool.gpu.type, "count": pool.gpu.count,
                "gpuDriverInstallationConfig": [{"gpuDriverVersion": GPU_DRIVER_VERSION}],
            }]  # fmt: skip
        if pool.taints:
            node_config["taint"] = upper_taints(pool.taints)
        key = f"nodepool-{pool.name}"
        plan.after_cluster[key] = _node_pool(platform, pool.name, node_config, (pool.minNodes, pool.maxNodes))
        plan.node_pools[pool.name] = key
    plan.identity = {
        "type": "GoogleApplicationCredentials",
        "source": "Secret",
        "secretRef": {
            "name": network.credentialsSecretRef.name,
            "namespace": platform.namespace,
            "key": network.credentialsSecretRef.key,
        },
    }
    return plan
