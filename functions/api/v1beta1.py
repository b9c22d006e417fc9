"""DynamoGraphDeployment ``nvidia.com/v1beta1``: a list of components in ``spec.components``."""

from __future__ import annotations

from typing import Any, Literal

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
    SEMVER_CORE_PATTERN,
    TOPOLOGY_DOMAIN_PATTERN,
    DateTime,
    DynamoModel,
    EnvVar,
    Int32,
    Int64,
    PodTemplateSpec,
    Quantity,
    cel,
    schema_config,
)

ComponentType = Literal["frontend", "worker", "prefill", "decode", "planner", "epp"]
GMSMode = Literal["IntraPod", "InterPod"]


class CompilationCache(DynamoModel):
    mountPath: str | None = None
    pvcName: str = Field(min_length=1)


class EppConfig(DynamoModel):
    config: EndpointPickerConfig | None = None
    configMapRef: ConfigMapKeyRef | None = None


class CheckpointIdentity(DynamoModel):
    backendFramework: Literal["vllm", "sglang", "trtllm"]
    dtype: str | None = None
    dynamoVersion: str | None = None
    extraParameters: dict[str, str] | None = None
    maxModelLen: Int32 | None = Field(default=None, ge=1)
    model: str = Field(min_length=1)
    pipelineParallelSize: Int32 = Field(default=1, ge=1)
    tensorParallelSize: Int32 = Field(default=1, ge=1)


class Checkpoint(DynamoModel):
    model_config = schema_config(x_kubernetes_validations=[CHECKPOINT_JOB_XOR_REF])
    checkpointRef: str | None = None
    deletionPolicy: Literal["Delete", "Retain"] = "Delete"
    enabled: bool
    identity: CheckpointIdentity | None = None
    job: CheckpointJob | None = None
    mode: Literal["Auto", "Manual"] | None = None
    startupPolicy: Literal["Immediate", "WaitForCheckpoint"] = "Immediate"
    targetContainerName: DNSLabel = "main"


class Failover(DynamoModel):
    mode: GMSMode = "IntraPod"
    numShadows: Int32 = Field(default=1, ge=1, le=1)


class GpuMemoryService(DynamoModel):
    model_config = schema_config(x_kubernetes_validations=gms_rules("IntraPod", "InterPod"))
    deviceClassName: str = "gpu.nvidia.com"
    extraClientContainers: list[DNSLabel] | None = Field(
        default=None, json_schema_extra={"x-kubernetes-list-type": "set"}
    )
    extraClientPods: list[ExtraClientPod] | None = Field(
        default=None,
        json_schema_extra={"x-kubernetes-list-map-keys": ["name"], "x-kubernetes-list-type": "map"},
    )
    mode: GMSMode = "IntraPod"


class GroveOptions(DynamoModel):
    forceScalingGroup: bool | None = None


class ComponentExperimental(DynamoModel):
    checkpoint: Checkpoint | None = None
    failover: Failover | None = None
    gpuMemoryService: GpuMemoryService | None = None
    grove: GroveOptions | None = None


class ModelRef(DynamoModel):
    name: str = Field(min_length=1)
    revision: str | None = None


class Multinode(DynamoModel):
    leader: RoleOverride | None = None
    nodeCount: Int32 = Field(default=2, ge=2)
    worker: RoleOverride | None = None


class ComponentTopologyConstraint(DynamoModel):
    packDomain: str = Field(pattern=TOPOLOGY_DOMAIN_PATTERN)


NAME_PATTERN = r"^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$"


class ComponentBase(DynamoModel):
    """A component's fields shared by a DGD ``spec.components`` entry and a DynamoComponentDeployment spec."""

    model_config = schema_config(
        x_kubernetes_validations=[
            cel(
                "!has(self.eppConfig) || (has(self.type) && self.type == 'epp')",
                "eppConfig may only be set when type is epp",
            ),
            *MIN_AVAILABLE_RULES,
        ]
    )
    compilationCache: CompilationCache | None = None
    eppConfig: EppConfig | None = Field(
        default=None,
        json_schema_extra={
            "x-kubernetes-validations": [
                cel(
                    "has(self.configMapRef) != has(self.config)",
                    "exactly one of configMapRef or config must be specified",
                )
            ]
        },
    )
    experimental: ComponentExperimental | None = None
    frontendSidecar: str | None = None
    globalDynamoNamespace: bool | None = None
    minAvailable: Int32 | None = Field(default=None, ge=1)
    modelRef: ModelRef | None = None
    podTemplate: PodTemplateSpec | None = None
    replicas: Int32 | None = Field(default=None, ge=0)
    runtimeVersionOverride: str | None = Field(default=None, pattern=SEMVER_CORE_PATTERN)
    scalingAdapter: dict[str, Any] | None = None
    sharedMemorySize: Quantity | None = None
    topologyConstraint: ComponentTopologyConstraint | None = None
    type_: ComponentType | None = Field(default=None, alias="type")


class Component(ComponentBase):
    """One entry of ``spec.components`` (upstream's DynamoComponentDeploymentSharedSpec, v1beta1)."""

    multinode: Multinode | None = None
    name: str = Field(min_length=1, max_length=63, pattern=NAME_PATTERN)
    providerOverride: ProviderOverride | None = None


class GraphTopologyConstraint(DynamoModel):
    clusterTopologyName: str = Field(min_length=1)
    packDomain: str | None = Field(default=None, pattern=TOPOLOGY_DOMAIN_PATTERN)


class DynamoGraphDeploymentSpec(DynamoModel):
    model_config = schema_config(x_kubernetes_validations=[NO_RESTART_ON_CREATE])
    annotations: dict[str, str] | None = None
    backendFramework: BackendFramework | None = None
    components: list[Component] | None = Field(
        default=None,
        max_length=25,
        json_schema_extra={
            "x-kubernetes-list-map-keys": ["name"],
            "x-kubernetes-list-type": "map",
            "x-kubernetes-validations": [
                cel(
                    "self.filter(c, has(c.type) && c.type == 'epp').size() <= 1",
                    "at most one component may have type epp",
                ),
                cel(
                    "self.all(c1, !has(c1.name) || self.filter(c2, has(c2.name) && "
                    "c2.name.lowerAscii() == c1.name.lowerAscii()).size() == 1)",
                    "component names must be unique case-insensitively",
                ),
            ],
        },
    )
    env: list[EnvVar] | None = None
    experimental: GraphExperimental | None = None
    labels: dict[str, str] | None = None
    priorityClassName: str | None = None
    providerOverride: ProviderOverride | None = None
    restart: Restart | None = None
    topologyConstraint: GraphTopologyConstraint | None = None


class RollingUpdateStatus(RollingUpdateStatusBase):
    updatedComponents: list[str] | None = None


class DynamoGraphDeploymentStatus(GraphStatusBase):
    components: dict[str, ReplicaCounts] | None = None
    rollingUpdate: RollingUpdateStatus | None = None


# --- DynamoGraphDeploymentScalingAdapter v1beta1 (upstream: a component of a spec.components list) ---


class ScalingAdapterDGDRef(DynamoModel):
    componentName: str = Field(min_length=1)
    name: str = Field(min_length=1)


class DynamoGraphDeploymentScalingAdapterSpec(DynamoModel):
    dgdRef: ScalingAdapterDGDRef
    replicas: Int32 = Field(ge=0)


class DynamoGraphDeploymentScalingAdapterStatus(DynamoModel):
    lastScaleTime: DateTime | None = None
    replicas: Int32
    selector: str | None = None


# --- DynamoComponentDeployment v1beta1 (upstream: one component of a DGD, as its own object) ---


class DCDMultinode(DynamoModel):
    nodeCount: Int32 = Field(default=2, ge=2)


class DynamoComponentDeploymentSpec(ComponentBase):
    """A DGD component plus ``backendFramework``, without ``providerOverride``; ``name`` is optional and
    multinode is only ``nodeCount``."""

    backendFramework: BackendFramework | None = None
    multinode: DCDMultinode | None = None
    name: str | None = Field(default=None, min_length=1, max_length=63, pattern=NAME_PATTERN)


class DynamoComponentDeploymentStatus(DynamoModel):
    component: ReplicaCounts | None = None
    observedGeneration: Int64 | None = None
