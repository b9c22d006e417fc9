"""The DynamoPlatform XRD: this package's own kind (v1alpha1), a cluster made ready for Dynamo.

The cloud's rules (which section goes with which cloud, what an existing cluster may not set) are CEL on the spec,
so ``kubectl apply`` refuses a bad platform; the step checks the same (``platform_problems``).
"""

from __future__ import annotations

from typing import Any

from functions.api.fields import cel
from functions.kinds.platform.platform_api import DynamoPlatformSpec, DynamoPlatformStatus
from functions.xrd.builder import GROUP, single_version_xrd
from functions.xrd.schema import openapi_for_model

DP_XRD_NAME = f"xdynamoplatforms.{GROUP}"
DP_COMPOSITION_NAME = f"dynamoplatforms.{GROUP}"
DP_COLUMNS = [
    {"name": "Cloud", "type": "string", "jsonPath": ".spec.cloud"},
    {"name": "Region", "type": "string", "jsonPath": ".spec.region"},
    {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
    {"name": "Endpoint", "type": "string", "jsonPath": ".status.cluster.endpoint", "priority": 1},
]
CLOUD_RULES = [
    cel("self.cloud != 'aws' || has(self.aws)", "spec.aws is required when spec.cloud is aws"),
    cel("self.cloud != 'gcp' || has(self.gcp)", "spec.gcp is required when spec.cloud is gcp"),
    cel("self.cloud != 'existing' || has(self.existing)", "spec.existing is required when spec.cloud is existing"),
    *(
        cel(
            f"self.cloud == '{section}' || !has(self.{section})",
            f"spec.{section} is set, but spec.cloud is not {section}",
        )
        for section in ("aws", "gcp", "azure", "existing")
    ),
    cel("self.cloud == 'existing' || has(self.region)", "spec.region is required for a cloud cluster"),
    cel(
        "self.cloud == 'existing' || self.cloud == 'azure' || has(self.systemNodePool)",
        "spec.systemNodePool is required on aws and gcp",
    ),
    cel(
        "self.cloud != 'existing' || (!has(self.region) && !has(self.kubernetesVersion) && !has(self.systemNodePool)"
        " && (!has(self.gpuNodePools) || size(self.gpuNodePools) == 0))",
        "an existing cluster is not provisioned: region, kubernetesVersion and node pools do not apply",
    ),
    cel(
        "self.cloud != 'gcp' || !has(self.gpuNodePools) || self.gpuNodePools.all(p, has(p.gpu))",
        "every GPU node pool needs gpu (type and count) on gcp",
    ),
    cel(
        "!has(self.gpuNodePools) || self.gpuNodePools.all(p, p.name != 'system')",
        "the node pool name 'system' is reserved",
    ),
    cel("self.cloud == oldSelf.cloud", "spec.cloud is immutable"),
]
POOL_RULES = [cel("self.minNodes <= self.maxNodes", "minNodes must not exceed maxNodes")]


def dp_schema() -> dict[str, Any]:
    spec = openapi_for_model(DynamoPlatformSpec, {})
    spec["x-kubernetes-validations"] = CLOUD_RULES
    pools = spec["properties"]["gpuNodePools"]
    pools["x-kubernetes-list-type"] = "map"
    pools["x-kubernetes-list-map-keys"] = ["name"]
    pools["items"]["x-kubernetes-validations"] = POOL_RULES
    spec["properties"]["systemNodePool"]["x-kubernetes-validations"] = POOL_RULES
    # bounded for the CEL cost budget; a subnet list of EKS is short
    spec["properties"]["aws"]["properties"]["subnetIds"]["items"]["maxLength"] = 64
    for field in ("labels",):
        node = pools["items"]["properties"][field]
        node["maxProperties"] = 64
    pools["items"]["properties"]["taints"]["maxItems"] = 16
    return {"type": "object", "properties": {"spec": spec, "status": openapi_for_model(DynamoPlatformStatus, {})}}


def dp_xrd() -> dict[str, Any]:
    return single_version_xrd("DynamoPlatform", "dynplat", "v1alpha1", {"openAPIV3Schema": dp_schema()}, DP_COLUMNS)
