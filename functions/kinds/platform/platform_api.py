"""DynamoPlatform ``nvidia.com/v1alpha1``: a Kubernetes cluster made ready for Dynamo (this package's own kind).

A platform team declares the cloud (``aws``, ``gcp``, ``azure``, or ``existing`` with a kubeconfig Secret), the
region, the Kubernetes version, a system node pool and GPU node pools, and which prerequisites to install with which
chart versions. The step composes the cloud's managed resources, the provider-helm and provider-kubernetes
configurations for the new cluster, a Helm Release per prerequisite, and the EnvironmentConfig
``dynamo-platform-<name>`` that DGDs placed on the platform read.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from functions.api.fields import DynamoModel, FreeObject

Cloud = Literal["aws", "gcp", "azure", "existing"]
TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
# AKS allows a Linux pool name of at most 12 lowercase alphanumerics; every cloud takes that, so pools keep their
# names when a platform moves between clouds.
POOL_NAME_PATTERN = r"^[a-z][a-z0-9]{0,11}$"
PoolCount = Annotated[int, Field(ge=0, le=1000)]


class SecretKeyRef(DynamoModel):
    """A key of a Secret in the DynamoPlatform's namespace."""

    name: Annotated[str, Field(min_length=1, max_length=253)]
    key: str = "kubeconfig"


class CredentialsKeyRef(DynamoModel):
    """A key of a Secret in the DynamoPlatform's namespace holding a cloud credential."""

    name: Annotated[str, Field(min_length=1, max_length=253)]
    key: Annotated[str, Field(min_length=1, max_length=253)]


class ProviderConfigRef(DynamoModel):
    """The cloud provider's configuration its managed resources use (namespaced ``.m.`` kinds take both fields;
    GCP's cluster-scoped kinds only the name)."""

    kind: Literal["ClusterProviderConfig", "ProviderConfig"] = "ClusterProviderConfig"
    name: Annotated[str, Field(min_length=1, max_length=253)] = "default"


class AWSNetwork(DynamoModel):
    subnetIds: Annotated[list[str], Field(min_length=2, max_length=16)]  # EKS wants two availability zones
    endpointPublicAccess: bool = True


class GCPNetwork(DynamoModel):
    project: str | None = None  # None: the provider configuration's project
    network: str | None = None  # None: the project's default network
    subnetwork: str | None = None
    # The service-account key (JSON) the new cluster's kubeconfig authenticates with: GKE's kubeconfig carries no
    # credentials of its own.
    credentialsSecretRef: CredentialsKeyRef


class AzureNetwork(DynamoModel):
    resourceGroupName: str | None = None  # None: a resource group named after the platform is composed


class ExistingCluster(DynamoModel):
    kubeconfigSecretRef: SecretKeyRef


class Taint(DynamoModel):
    key: Annotated[str, Field(min_length=1, max_length=316)]
    value: Annotated[str, Field(max_length=63)] = ""
    effect: TaintEffect = "NoSchedule"


class SystemNodePool(DynamoModel):
    machineType: Annotated[str, Field(min_length=1, max_length=128)]
    minNodes: PoolCount = 1
    maxNodes: PoolCount = 3


class GPU(DynamoModel):
    type: Annotated[str, Field(min_length=1, max_length=128)]  # e.g. nvidia-h100-80gb (GKE accelerator type)
    count: Annotated[int, Field(ge=1, le=16)]


class GPUNodePool(DynamoModel):
    name: Annotated[str, Field(pattern=POOL_NAME_PATTERN)]
    machineType: Annotated[str, Field(min_length=1, max_length=128)]
    # Attached by GCP; on AWS and Azure the machine type brings its GPUs, so it is optional there.
    gpu: GPU | None = None
    minNodes: PoolCount = 0
    maxNodes: PoolCount = 1
    spot: bool = False
    labels: dict[str, str] = Field(default_factory=dict)
    taints: list[Taint] = Field(default_factory=lambda: [Taint(key="nvidia.com/gpu", value="present")])


class Chart(DynamoModel):
    repository: Annotated[str, Field(min_length=1, max_length=512)]
    name: Annotated[str, Field(min_length=1, max_length=128)]
    version: Annotated[str, Field(min_length=1, max_length=64)]


class Prerequisite(DynamoModel):
    """One Helm chart installed on the cluster. ``chart`` absent: the version this package pins."""

    enabled: bool = True
    chart: Chart | None = None
    values: FreeObject = Field(default_factory=dict)


class Scheduler(DynamoModel):
    kind: Literal["kai", "volcano", "none"] = "kai"
    chart: Chart | None = None
    values: FreeObject = Field(default_factory=dict)


class Ingress(DynamoModel):
    kind: Literal["nginx", "istio", "none"] = "nginx"
    chart: Chart | None = None
    values: FreeObject = Field(default_factory=dict)


class Prerequisites(DynamoModel):
    namespace: Annotated[str, Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)] = "dynamo-system"
    scheduler: Scheduler = Field(default_factory=Scheduler)
    grove: Prerequisite = Field(default_factory=Prerequisite)
    lws: Prerequisite = Field(default_factory=lambda: Prerequisite(enabled=False))
    ingress: Ingress = Field(default_factory=Ingress)
    snapshot: Prerequisite = Field(default_factory=lambda: Prerequisite(enabled=False))
    nats: Prerequisite = Field(default_factory=Prerequisite)


NAMESPACE_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
LABEL_KEY = Annotated[str, Field(min_length=1, max_length=316)]
LABEL_VALUE = Annotated[str, Field(max_length=63)]


class LabelSelectorRequirement(DynamoModel):
    key: LABEL_KEY
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: Annotated[list[LABEL_VALUE], Field(max_length=64)] = Field(default_factory=list)


class NamespaceSelector(DynamoModel):
    """Namespaces by their labels, as a Kubernetes label selector: every given term must hold."""

    matchLabels: Annotated[dict[str, LABEL_VALUE], Field(max_length=64)] = Field(default_factory=dict)
    matchExpressions: Annotated[list[LabelSelectorRequirement], Field(max_length=16)] = Field(default_factory=list)


class Tenants(DynamoModel):
    """The namespaces whose graphs may be placed on the platform, besides the platform's own namespace (always
    admitted): those listed, and those whose labels the selector matches. Empty: the platform's namespace only."""

    namespaces: Annotated[
        list[Annotated[str, Field(pattern=NAMESPACE_PATTERN, max_length=63)]], Field(max_length=256)
    ] = Field(default_factory=list)
    namespaceSelector: NamespaceSelector | None = None


class DynamoPlatformSpec(DynamoModel):
    cloud: Cloud
    region: Annotated[str, Field(max_length=64)] | None = None
    kubernetesVersion: Annotated[str, Field(pattern=r"^1\.[0-9]{2}$")] | None = None
    providerConfigRef: ProviderConfigRef = Field(default_factory=ProviderConfigRef)
    aws: AWSNetwork | None = None
    gcp: GCPNetwork | None = None
    azure: AzureNetwork | None = None
    existing: ExistingCluster | None = None
    systemNodePool: SystemNodePool | None = None
    gpuNodePools: Annotated[list[GPUNodePool], Field(max_length=16)] = Field(default_factory=list)
    prerequisites: Prerequisites = Field(default_factory=Prerequisites)
    tenants: Tenants = Field(default_factory=Tenants)
    # PlatformConfig fields (functions.api.operator_config) written over the ones derived from the prerequisites,
    # e.g. an ingress hostSuffix.
    config: FreeObject = Field(default_factory=dict)


class NodePoolStatus(DynamoModel):
    name: str
    ready: bool
    state: str


class PrerequisiteStatus(DynamoModel):
    name: str
    chart: str
    version: str
    ready: bool
    state: str


class ClusterStatus(DynamoModel):
    endpoint: str | None = None
    ready: bool
    kubernetesVersion: str | None = None


class DynamoPlatformStatus(DynamoModel):
    phase: str | None = None
    cluster: ClusterStatus | None = None
    nodePools: list[NodePoolStatus] | None = None
    prerequisites: list[PrerequisiteStatus] | None = None
    environmentConfig: str | None = None
    providerConfig: str | None = None


CLOUD_SECTIONS = ("aws", "gcp", "azure", "existing")
RESERVED_POOL = "system"


def platform_problems(spec: DynamoPlatformSpec) -> list[str]:
    """What the XRD's rules refuse, for a spec that reached the function some other way (a render, an older XRD):
    each message names its field."""
    problems = []
    for section in CLOUD_SECTIONS:
        given = getattr(spec, section) is not None
        if section == spec.cloud and not given and section != "azure":
            problems.append(f"spec.{section}: required when spec.cloud is {spec.cloud}")
        elif section != spec.cloud and given:
            problems.append(f"spec.{section}: set, but spec.cloud is {spec.cloud}")
    if spec.cloud == "existing":
        for field in ("region", "kubernetesVersion", "systemNodePool"):
            if getattr(spec, field) is not None:
                problems.append(f"spec.{field}: an existing cluster is not provisioned; remove it")
        if spec.gpuNodePools:
            problems.append("spec.gpuNodePools: an existing cluster is not provisioned; remove it")
    else:
        if spec.region is None:
            problems.append(f"spec.region: required when spec.cloud is {spec.cloud}")
        if spec.systemNodePool is None and spec.cloud != "azure":
            problems.append(f"spec.systemNodePool: required when spec.cloud is {spec.cloud}")
    if spec.systemNodePool is not None and spec.systemNodePool.minNodes > spec.systemNodePool.maxNodes:
        problems.append("spec.systemNodePool: minNodes must not exceed maxNodes")
    seen: set[str] = set()
    for i, pool in enumerate(spec.gpuNodePools):
        where = f"spec.gpuNodePools[{i}]"
        if pool.name == RESERVED_POOL or pool.name in seen:
            problems.append(f"{where}.name: {pool.name!r} is taken (pool names are unique, and 'system' is reserved)")
        seen.add(pool.name)
        if pool.minNodes > pool.maxNodes:
            problems.append(f"{where}: minNodes must not exceed maxNodes")
        if spec.cloud == "gcp" and pool.gpu is None:
            problems.append(f"{where}.gpu: required when spec.cloud is gcp (GKE attaches the accelerators)")
    return problems
