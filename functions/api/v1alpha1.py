"""DynamoGraphDeployment ``nvidia.com/v1alpha1``: services keyed by name in ``spec.services``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from functions.api.common import (
    CHECKPOINT_JOB_XOR_REF,
    MIN_AVAILABLE_RULES,
    NO_RESTART_ON_CREATE,
    BackendFramework,
    CheckpointJob,
    ConfigMapKeyRef,
    DNSLabel,
    EndpointPickerConfig,
    ExtraClientPod,
    GraphExperimental,
    GraphStatusBase,
    ProviderOverride,
    ReplicaCounts,
    Restart,
    RoleOverride,
    RollingUpdateStatusBase,
    gms_rules,
)
from functions.api.fields import (
    SCHEMA_REQUIRED,
    SEMVER_CORE_PATTERN,
    TOPOLOGY_DOMAIN_PATTERN,
    DateTime,
    DynamoModel,
    EnvVar,
    ExtraPodSpec,
    HPABehavior,
    Int32,
    Int64,
    MetricSpec,
    Probe,
    Quantity,
    cel,
    schema_config,
)

GMSMode = Literal["intraPod", "interPod"]


class Autoscaling(DynamoModel):
    behavior: HPABehavior | None = None
    enabled: bool | None = None
    maxReplicas: int | None = None
    metrics: list[MetricSpec] | None = None
    minReplicas: int | None = None


class CheckpointIdentity(DynamoModel):
    backendFramework: Literal["vllm", "sglang", "trtllm"]
    dtype: str | None = None
    dynamoVersion: str | None = None
    extraParameters: dict[str, str] | None = None
    maxModelLen: Int32 | None = Field(default=None, ge=1)
    model: str
    pipelineParallelSize: Int32 = Field(default=1, ge=1)
    tensorParallelSize: Int32 = Field(default=1, ge=1)


class Checkpoint(DynamoModel):
    model_config = schema_config(x_kubernetes_validations=[CHECKPOINT_JOB_XOR_REF])
    checkpointRef: str | None = None
    deletionPolicy: Literal["Delete", "Retain"] = "Delete"
    enabled: bool = False
    identity: CheckpointIdentity | None = None
    job: CheckpointJob | None = None
    mode: Literal["Auto", "Manual"] | None = None
    startupPolicy: Literal["Immediate", "WaitForCheckpoint"] = "Immediate"
    targetContainerName: DNSLabel = "main"


class EppConfig(DynamoModel):
    config: EndpointPickerConfig | None = None
    configMapRef: ConfigMapKeyRef | None = None


class ExtraPodMetadata(DynamoModel):
    annotations: dict[str, str] | None = None
    labels: dict[str, str] | None = None


class Failover(DynamoModel):
    enabled: bool
    mode: GMSMode = "intraPod"
    numShadows: Int32 = Field(default=1, ge=1)


class FrontendSidecar(DynamoModel):
    args: list[str] | None = None
    envFromSecret: str | None = None
    envs: list[EnvVar] | None = None
    image: str


class GpuMemoryService(DynamoModel):
    model_config = schema_config(x_kubernetes_validations=gms_rules("intraPod", "interPod"))
    deviceClassName: str = "gpu.nvidia.com"
    enabled: bool
    extraClientContainers: list[DNSLabel] | None = Field(
        default=None, json_schema_extra={"x-kubernetes-list-type": "set"}
    )
    extraClientPods: list[ExtraClientPod] | None = Field(
        default=None,
        json_schema_extra={"x-kubernetes-list-map-keys": ["name"], "x-kubernetes-list-type": "map"},
    )
    mode: GMSMode = "intraPod"


class IngressTLS(DynamoModel):
    secretName: str | None = None


class Ingress(DynamoModel):
    annotations: dict[str, str] | None = None
    enabled: bool | None = None
    host: str | None = None
    hostPrefix: str | None = None
    hostSuffix: str | None = None
    ingressControllerClassName: str | None = None
    labels: dict[str, str] | None = None
    tls: IngressTLS | None = None
    useVirtualService: bool | None = None
    virtualServiceGateway: str | None = None


class ModelRef(DynamoModel):
    name: str
    revision: str | None = None


class Multinode(DynamoModel):
    leader: RoleOverride | None = None
    nodeCount: Int32 = Field(default=2, ge=2, json_schema_extra={SCHEMA_REQUIRED: True})
    worker: RoleOverride | None = None


class ResourceClaim(DynamoModel):
    name: str
    request: str | None = None


class ResourceItem(DynamoModel):
    cpu: str | None = None
    custom: dict[str, str] | None = None
    gpu: str | None = None
    gpuType: str | None = None
    memory: str | None = None


class Resources(DynamoModel):
    claims: list[ResourceClaim] | None = None
    limits: ResourceItem | None = None
    requests: ResourceItem | None = None


class ScalingAdapter(DynamoModel):
    enabled: bool = False


# Upstream's rule reads the size as its webhook re-encodes it, always a string: an integer size (the schema's
# int-or-string allows one) is compared as a number, where upstream's rule text would find no quantity() of it.
SHARED_MEMORY_RULE = cel(
    "(has(self.disabled) && self.disabled) || (has(self.size) && (type(self.size) == int "
    "? int(self.size) > 0 : quantity(self.size).isGreaterThan(quantity('0'))))",
    "size is required when disabled is false",
)


class SharedMemory(DynamoModel):
    model_config = schema_config(x_kubernetes_validations=[SHARED_MEMORY_RULE])
    disabled: bool | None = None
    size: Quantity | None = None


class ServiceTopologyConstraint(DynamoModel):
    packDomain: str = Field(pattern=TOPOLOGY_DOMAIN_PATTERN)


class VolumeMount(DynamoModel):
    mountPoint: str | None = None
    name: str
    useAsCompilationCache: bool = False


class ServiceBase(DynamoModel):
    """A service's fields shared by a DGD ``spec.services`` entry and a DynamoComponentDeployment spec."""

    model_config = schema_config(x_kubernetes_validations=MIN_AVAILABLE_RULES)
    annotations: dict[str, str] | None = None
    autoscaling: Autoscaling | None = None
    checkpoint: Checkpoint | None = None
    componentType: str | None = None
    dynamoNamespace: str | None = None
    envFromSecret: str | None = None
    envs: list[EnvVar] | None = None
    eppConfig: EppConfig | None = None
    extraPodMetadata: ExtraPodMetadata | None = None
    extraPodSpec: ExtraPodSpec | None = None
    failover: Failover | None = None
    frontendSidecar: FrontendSidecar | None = None
    globalDynamoNamespace: bool | None = None
    gpuMemoryService: GpuMemoryService | None = None
    ingress: Ingress | None = None
    labels: dict[str, str] | None = None
    livenessProbe: Probe | None = None
    minAvailable: Int32 | None = Field(default=None, ge=1)
    modelRef: ModelRef | None = None
    readinessProbe: Probe | None = None
    replicas: Int32 | None = Field(default=None, ge=0)
    resources: Resources | None = None
    runtimeVersionOverride: str | None = Field(default=None, pattern=SEMVER_CORE_PATTERN)
    scalingAdapter: ScalingAdapter | None = None
    serviceName: str | None = None
    sharedMemory: SharedMemory | None = None
    subComponentType: str | None = None
    topologyConstraint: ServiceTopologyConstraint | None = None
    volumeMounts: list[VolumeMount] | None = None


class Service(ServiceBase):
    """One entry of ``spec.services`` (upstream's DynamoComponentDeploymentSharedSpec)."""

    multinode: Multinode | None = None
    providerOverride: ProviderOverride | None = None


class PVC(DynamoModel):
    model_config = schema_config(
        x_kubernetes_validations=[
            cel(
                "!has(self.create) || self.create == false || "
                "(has(self.size) && has(self.storageClass) && has(self.volumeAccessMode))",
                "When create is true, size, storageClass, and volumeAccessMode are required",
            )
        ]
    )
    create: bool | None = None
    name: str
    size: Quantity | None = None
    storageClass: str | None = None
    volumeAccessMode: str | None = None


class GraphTopologyConstraint(DynamoModel):
    packDomain: str | None = Field(default=None, pattern=TOPOLOGY_DOMAIN_PATTERN)
    topologyProfile: str = Field(min_length=1)


class DynamoGraphDeploymentSpec(DynamoModel):
    model_config = schema_config(x_kubernetes_validations=[NO_RESTART_ON_CREATE])
    annotations: dict[str, str] | None = None
    backendFramework: BackendFramework | None = None
    envs: list[EnvVar] | None = None
    experimental: GraphExperimental | None = None
    labels: dict[str, str] | None = None
    priorityClassName: str | None = None
    providerOverride: ProviderOverride | None = None
    pvcs: list[PVC] | None = Field(default=None, max_length=100)
    restart: Restart | None = None
    services: dict[str, Service] | None = Field(default=None, max_length=25)
    topologyConstraint: GraphTopologyConstraint | None = None


class ServiceReplicaStatus(ReplicaCounts):
    componentName: str


class RollingUpdateStatus(RollingUpdateStatusBase):
    updatedServices: list[str] | None = None


class DynamoGraphDeploymentStatus(GraphStatusBase):
    rollingUpdate: RollingUpdateStatus | None = None
    services: dict[str, ServiceReplicaStatus] | None = None


# --- DynamoGraphDeploymentScalingAdapter v1alpha1 (upstream: a service of a spec.services map) ---


class ScalingAdapterDGDRef(DynamoModel):
    name: str = Field(min_length=1)
    serviceName: str = Field(min_length=1)


class DynamoGraphDeploymentScalingAdapterSpec(DynamoModel):
    dgdRef: ScalingAdapterDGDRef
    replicas: Int32 = Field(ge=0)


class DynamoGraphDeploymentScalingAdapterStatus(DynamoModel):
    lastScaleTime: DateTime | None = None
    replicas: Int32 | None = None
    selector: str | None = None


# --- DynamoComponentDeployment v1alpha1 (upstream: one service of a DGD, as its own object) ---


class DCDMultinode(DynamoModel):
    nodeCount: Int32 = Field(default=2, ge=2, json_schema_extra={SCHEMA_REQUIRED: True})


class DynamoComponentDeploymentSpec(ServiceBase):
    """A DGD service plus ``backendFramework``, without ``providerOverride``; multinode is only ``nodeCount``."""

    backendFramework: BackendFramework | None = None
    multinode: DCDMultinode | None = None


class DynamoComponentDeploymentStatus(DynamoModel):
    observedGeneration: Int64 | None = None
    podSelector: dict[str, str] | None = None
    service: ServiceReplicaStatus | None = None
