"""DynamoGraphDeploymentRequest (DGDR): an SLA-driven request that a profiling Job turns into a DynamoGraphDeployment
(docs/upstream/checkpoint-gms-dgdr-model.md §4, docs/upstream/operator.md §4.1).

Both of upstream's versions: ``nvidia.com/v1beta1`` (the hub and storage version) and the deprecated
``nvidia.com/v1alpha1``, told apart by content (v1alpha1 requires ``profilingConfig``, which v1beta1 does not
have) and converted to the hub by ``functions.kinds.request.request_conversion``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from functions.api.fields import SCHEMA_REQUIRED, SEMVER_CORE_PATTERN, DynamoModel, FreeObject, Int32, Int64, Kube

Backend = Literal["auto", "sglang", "trtllm", "vllm"]
BackendV1alpha1 = Literal["auto", "vllm", "sglang", "trtllm"]  # the same values, in v1alpha1's CRD order
GpuSku = Literal[
    "gb200_sxm",
    "gb10",
    "b200_sxm",
    "h200_sxm",
    "h100_sxm",
    "h100_pcie",
    "a100_sxm",
    "a100_pcie",
    "a30",
    "l40s",
    "l40",
    "l4",
    "v100_sxm",
    "v100_pcie",
    "t4",
    "mi200",
    "mi300",
]
Phase = Literal["Pending", "Profiling", "Ready", "Deploying", "Deployed", "Failed"]
ProfilingPhase = Literal[
    "Initializing", "SweepingPrefill", "SweepingDecode", "SelectingConfig", "BuildingCurves", "GeneratingDGD", "Done"
]
PROFILING_PHASES: tuple[str, ...] = ProfilingPhase.__args__  # type: ignore[attr-defined]

EMBEDDED = {"x-kubernetes-embedded-resource": True}  # an object with apiVersion, kind and metadata
JobSpec = Annotated[dict[str, Any], Kube("JobSpec")]
ResourceRequirements = Annotated[dict[str, Any], Kube("ResourceRequirements")]
Toleration = Annotated[dict[str, Any], Kube("Toleration")]
RuntimeVersion = Annotated[str, Field(pattern=SEMVER_CORE_PATTERN)]


# --- v1beta1 (hub) -----------------------------------------------------------------------------------------------


class ModelCache(DynamoModel):
    pvcModelPath: str | None = None
    pvcMountPath: str = "/opt/model-cache"
    pvcName: str | None = None


class Hardware(DynamoModel):
    gpuSku: GpuSku | None = None
    interconnect: str | None = None
    numGpusPerNode: Int32 | None = None
    rdma: bool | None = None
    totalGpus: Int32 | None = None
    vramMb: float | None = None


class Workload(DynamoModel):
    concurrency: float | None = None
    isl: Int32 = 4000
    osl: Int32 = 1000
    requestRate: float | None = None


class SLA(DynamoModel):
    e2eLatency: float | None = None
    itl: float | None = None
    optimizationType: Literal["latency", "throughput"] | None = None
    ttft: float | None = None


class Overrides(DynamoModel):
    dgd: FreeObject | None = Field(default=None, json_schema_extra=EMBEDDED)
    profilingJob: JobSpec | None = None


class Mocker(DynamoModel):
    enabled: bool | None = None


class Features(DynamoModel):
    mocker: Mocker | None = None
    planner: FreeObject | None = None


class DynamoGraphDeploymentRequestSpec(DynamoModel):
    autoApply: bool = True
    backend: Backend = "auto"
    features: Features | None = None
    hardware: Hardware | None = None
    image: str | None = None
    model: str = Field(min_length=1)
    modelCache: ModelCache | None = None
    overrides: Overrides | None = None
    runtimeVersionOverride: RuntimeVersion | None = None
    searchStrategy: Literal["rapid", "thorough"] = "rapid"
    sla: SLA | None = None
    workload: Workload | None = None


class DeploymentInfo(DynamoModel):
    availableReplicas: Int32 | None = None
    replicas: Int32 | None = None


class ParetoConfig(DynamoModel):
    config: FreeObject


class ProfilingResults(DynamoModel):
    pareto: list[ParetoConfig] | None = None
    selectedConfig: FreeObject | None = None


class DynamoGraphDeploymentRequestStatus(DynamoModel):
    deploymentInfo: DeploymentInfo | None = None
    dgdName: str | None = None
    observedGeneration: Int64 | None = None
    phase: Phase | None = None
    profilingJobName: str | None = None
    profilingPhase: ProfilingPhase | None = None
    profilingResults: ProfilingResults | None = None


# --- v1alpha1 (deprecated) ---------------------------------------------------------------------------------------


class ConfigMapKeySelector(DynamoModel):
    key: str = "disagg.yaml"
    name: str


class ProfilingConfig(DynamoModel):
    config: FreeObject | None = None
    configMapRef: ConfigMapKeySelector | None = None
    nodeSelector: dict[str, str] | None = None
    outputPVC: str | None = None
    profilerImage: str | None = None  # upstream's CRD requires it, but its defaulting webhook fills it first
    resources: ResourceRequirements | None = None
    tolerations: list[Toleration] | None = None


class DeploymentOverrides(DynamoModel):
    annotations: dict[str, str] | None = None
    labels: dict[str, str] | None = None
    name: str | None = None
    namespace: str | None = None
    workersImage: str | None = None


class DynamoGraphDeploymentRequestSpecV1alpha1(DynamoModel):
    autoApply: bool = False
    backend: BackendV1alpha1
    deploymentOverrides: DeploymentOverrides | None = None
    enableGpuDiscovery: bool = True
    model: str
    profilingConfig: ProfilingConfig
    runtimeVersionOverride: RuntimeVersion | None = None
    useMocker: bool = False


AlphaState = Literal["Initializing", "Pending", "Profiling", "Deploying", "Ready", "DeploymentDeleted", "Failed"]


class DeploymentStatusV1alpha1(DynamoModel):
    created: bool | None = None
    name: str | None = None
    namespace: str | None = None
    state: Literal["initializing", "pending", "successful", "failed"] = Field(
        default="initializing", json_schema_extra={SCHEMA_REQUIRED: True}
    )


class DynamoGraphDeploymentRequestStatusV1alpha1(DynamoModel):
    backend: str | None = None
    deployment: DeploymentStatusV1alpha1 | None = None
    generatedDeployment: FreeObject | None = Field(default=None, json_schema_extra=EMBEDDED)
    observedGeneration: Int64 | None = None
    profilingResults: str | None = None
    state: AlphaState = Field(default="Initializing", json_schema_extra={SCHEMA_REQUIRED: True})
