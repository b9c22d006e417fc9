"""An AKS cluster for a DynamoPlatform: provider-upjet-azure's namespaced kinds (``containerservice.azure.m``,
``azure.m.upbound.io``, v1beta1; docs/upstream/target-apis.md §4.4).

A ResourceGroup (unless one is named), the KubernetesCluster with the system pool as its default pool (it writes
the kubeconfig); once it is Ready, one KubernetesClusterNodePool per GPU pool with the GPU driver installed.
"""

from __future__ import annotations

from typing import Any

from functions.kinds.platform.cloud import EXTERNAL_NAME, CloudPlan, Platform, managed, pool_labels

CONTAINER_SERVICE = "containerservice.azure.m.upbound.io/v1beta1"
AZURE = "azure.m.upbound.io/v1beta1"
DEFAULT_SYSTEM_VM = "Standard_D4s_v5"


def render_azure(platform: Platform) -> CloudPlan:
    spec = platform.spec
    assert spec.region is not None
    network = spec.azure
    plan = CloudPlan(cluster_key="cluster", kubeconfig=(platform.kubeconfig_secret, "kubeconfig"))
    group: dict[str, Any]
    if network is not None and network.resourceGroupName:
        group = {"resourceGroupName": network.resourceGroupName}
    else:
        plan.control_plane["resourcegroup"] = managed(
            AZURE, "ResourceGroup", platform.name, platform, {"forProvider": {"location": spec.region}}
        )
        group = {"resourceGroupNameRef": {"name": platform.name}}
    system = spec.systemNodePool
    default_pool: dict[str, Any] = {
        "name": "system",
        "vmSize": system.machineType if system else DEFAULT_SYSTEM_VM,
        "autoScalingEnabled": True,
        "minCount": max(system.minNodes, 1) if system else 1,
        "maxCount": max(system.maxNodes, 1) if system else 3,
        "onlyCriticalAddonsEnabled": False,
    }
    cluster: dict[str, Any] = {
        "location": spec.region,
        **group,
        "dnsPrefix": platform.name,
        "identity": {"type": "SystemAssigned"},
        "defaultNodePool": default_pool,
        "oidcIssuerEnabled": True,
    }
    if spec.kubernetesVersion:
        cluster["kubernetesVersion"] = spec.kubernetesVersion
    plan.control_plane["cluster"] = managed(CONTAINER_SERVICE, "KubernetesCluster", platform.name, platform, {
        "forProvider": cluster, "writeConnectionSecretToRef": {"name": platform.kubeconfig_secret}})  # fmt: skip
    plan.node_pools["system"] = "cluster"
    for pool in spec.gpuNodePools:
        key = f"nodepool-{pool.name}"
        for_provider: dict[str, Any] = {
            "kubernetesClusterIdRef": {"name": platform.name},
            "vmSize": pool.machineType,
            "mode": "User",
            "autoScalingEnabled": True,
            "minCount": pool.minNodes,
            "maxCount": pool.maxNodes,
            "nodeCount": pool.minNodes,
            "nodeLabels": pool_labels(pool.labels),
            "nodeTaints": [f"{t.key}={t.value}:{t.effect}" for t in pool.taints],
            "priority": "Spot" if pool.spot else "Regular",
            "gpuDriver": "Install",
        }
        if pool.spot:
            for_provider["evictionPolicy"] = "Delete"
        obj = managed(CONTAINER_SERVICE, "KubernetesClusterNodePool", f"{platform.name}-{pool.name}", platform, {
            "forProvider": for_provider})  # fmt: skip
        # AKS names the pool by the external name: the pool's own (at most 12 lowercase alphanumerics).
        obj["metadata"]["annotations"] = {EXTERNAL_NAME: pool.name}
        plan.after_cluster[key] = obj
        plan.node_pools[pool.name] = key
    return plan
