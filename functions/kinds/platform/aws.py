"""An EKS cluster for a DynamoPlatform: provider-upjet-aws's namespaced kinds (``eks.aws.m.upbound.io``,
``iam.aws.m.upbound.io``, v1beta1; docs/upstream/target-apis.md §4.2).

The cluster and node roles with AWS's managed policies, the Cluster; once it is Ready, one NodeGroup per pool
(AL2023 AMIs, the NVIDIA variant for GPU pools) and the ClusterAuth that writes the kubeconfig.
"""

from __future__ import annotations

import json
from typing import Any

from functions.kinds.platform.cloud import CloudPlan, Platform, managed, pool_labels, upper_taints

EKS = "eks.aws.m.upbound.io/v1beta1"
IAM = "iam.aws.m.upbound.io/v1beta1"
CLUSTER_POLICIES = ("AmazonEKSClusterPolicy",)
NODE_POLICIES = ("AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly")
SYSTEM_AMI = "AL2023_x86_64_STANDARD"
GPU_AMI = "AL2023_x86_64_NVIDIA"


def _assume_role_policy(service: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}],
        },
        sort_keys=True,
    )


def _role(platform: Platform, key: str, service: str, policies: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    name = f"{platform.name}-{key}"
    out = {f"role-{key}": managed(IAM, "Role", name, platform, {"forProvider": {
        "assumeRolePolicy": _assume_role_policy(service)}})}  # fmt: skip
    for policy in policies:
        out[f"role-{key}-{policy.lower().replace('_', '-')}"] = managed(
            IAM,
            "RolePolicyAttachment",
            f"{name}-{policy.lower().replace('_', '-')}",
            platform,
            {"forProvider": {"policyArn": f"arn:aws:iam::aws:policy/{policy}", "roleRef": {"name": name}}},
        )
    return out


def _node_group(
    platform: Platform,
    pool: str,
    machine_type: str,
    ami: str,
    sizes: tuple[int, int],
    spot: bool,
    labels: dict[str, str],
    taints: list[dict[str, str]],
) -> dict[str, Any]:
    assert platform.spec.aws is not None
    low, high = sizes
    for_provider: dict[str, Any] = {
        "region": platform.spec.region,
        "clusterNameRef": {"name": platform.name},
        "nodeRoleArnRef": {"name": f"{platform.name}-node"},
        "subnetIds": list(platform.spec.aws.subnetIds),
        "instanceTypes": [machine_type],
        "amiType": ami,
        "capacityType": "SPOT" if spot else "ON_DEMAND",
        "scalingConfig": {"minSize": low, "maxSize": high},
        "labels": labels,
    }
    if taints:
        for_provider["taint"] = taints
    if platform.spec.kubernetesVersion:
        for_provider["version"] = platform.spec.kubernetesVersion
    # The autoscaler owns the desired size after creation (only initProvider sets it).
    spec = {"forProvider": for_provider, "initProvider": {"scalingConfig": {"desiredSize": max(low, 1 if high else 0)}}}
    return managed(EKS, "NodeGroup", f"{platform.name}-{pool}", platform, spec)


def render_aws(platform: Platform) -> CloudPlan:
    spec = platform.spec
    assert spec.aws is not None and spec.region is not None  # the XRD's rules
    cluster: dict[str, Any] = {
        "region": spec.region,
        "roleArnRef": {"name": f"{platform.name}-cluster"},
        "vpcConfig": {"subnetIds": list(spec.aws.subnetIds), "endpointPublicAccess": spec.aws.endpointPublicAccess},
        "accessConfig": {"authenticationMode": "API_AND_CONFIG_MAP", "bootstrapClusterCreatorAdminPermissions": True},
    }
    if spec.kubernetesVersion:
        cluster["version"] = spec.kubernetesVersion
    plan = CloudPlan(cluster_key="cluster", kubeconfig=(platform.kubeconfig_secret, "kubeconfig"))
    plan.control_plane.update(_role(platform, "cluster", "eks.amazonaws.com", CLUSTER_POLICIES))
    plan.control_plane.update(_role(platform, "node", "ec2.amazonaws.com", NODE_POLICIES))
    plan.control_plane["cluster"] = managed(EKS, "Cluster", platform.name, platform, {"forProvider": cluster})
    if spec.systemNodePool is not None:
        system = spec.systemNodePool
        plan.after_cluster["nodepool-system"] = _node_group(
            platform, "system", system.machineType, SYSTEM_AMI, (system.minNodes, system.maxNodes), False, {}, []
        )
        plan.node_pools["system"] = "nodepool-system"
    for pool in spec.gpuNodePools:
        key = f"nodepool-{pool.name}"
        plan.after_cluster[key] = _node_group(
            platform,
            pool.name,
            pool.machineType,
            GPU_AMI,
            (pool.minNodes, pool.maxNodes),
            pool.spot,
            pool_labels(pool.labels),
            upper_taints(pool.taints),
        )
        plan.node_pools[pool.name] = key
    plan.after_cluster["clusterauth"] = managed(EKS, "ClusterAuth", platform.name, platform, {
        "forProvider": {"region": spec.region, "clusterNameRef": {"name": platform.name}},
        "writeConnectionSecretToRef": {"name": platform.kubeconfig_secret},
    })  # fmt: skip
    return plan
