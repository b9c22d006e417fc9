"""API types that v1alpha1 and v1beta1 share unchanged."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from functions.api.fields import (
    DNS_LABEL_PATTERN,
    TOPOLOGY_DOMAIN_PATTERN,
    DateTime,
    DynamoModel,
    FreeObject,
    FreeValue,
    Int32,
    Int64,
    cel,
    schema_config,
)

BackendFramework = Literal["sglang", "vllm", "trtllm"]
DNSLabel = Annotated[str, Field(min_length=1, max_length=63, pattern=DNS_LABEL_PATTERN)]


class ProviderOverride(DynamoModel):
    apiVersion: str = Field(min_length=1)
    target: str | None = None
    value: FreeObject


class RoleOverride(DynamoModel):
    providerOverride: ProviderOverride | None = None


class KvTransferPolicy(DynamoModel):
    model_config = schema_config(
        x_kubernetes_validations=[
            cel(
                "(has(self.labelKey) && !has(self.clusterTopologyName)) || "
                "(!has(self.labelKey) && has(self.clusterTopologyName))",
                "exactly one of labelKey or clusterTopologyName is required",
            ),
            cel(
                "!has(self.enforcement) || self.enforcement != 'preferred' || has(self.preferredWeight)",
                "preferredWeight is required when enforcement is preferred",
            ),
            cel(
                "!has(self.preferredWeight) || (has(self.enforcement) && self.enforcement == 'preferred')",
                "preferredWeight may only be set when enforcement is preferred",
            ),
        ]
    )
    clusterTopologyName: str | None = Field(default=None, min_length=1)
    domain: str = Field(pattern=TOPOLOGY_DOMAIN_PATTERN)
    enforcement: Literal["required", "preferred"] = "required"
    labelKey: str | None = Field(
        default=None,
        min_length=1,
        max_length=317,
        pattern=r"^(([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*/)?"
        r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$",
        json_schema_extra={
            "x-kubernetes-validations": [
                cel(
                    "!self.contains('/') || self.split('/')[0].size() <= 253",
                    "labelKey prefix must be 253 characters or less",
                )
            ]
        },
    )
    preferredWeight: float | None = Field(default=None, ge=0, le=1)


class GraphExperimental(DynamoModel):
    kvTransferPolicy: KvTransferPolicy | None = None


class RestartStrategy(DynamoModel):
    order: list[str] | None = None
    type_: Literal["Sequential", "Parallel"] = Field(default="Sequential", alias="type")


class Restart(DynamoModel):
    id_: str = Field(alias="id", min_length=1)
    strategy: RestartStrategy | None = None


NO_RESTART_ON_CREATE = cel(
    "oldSelf.hasValue() || !has(self.restart)",
    "spec.restart must be unset on create; set spec.restart.id after creation to request a restart",
    optionalOldSelf=True,
)


# --- Endpoint picker (EPP) configuration -------------------------------------------------


class EppPlugin(DynamoModel):
    name: str | None = None
    parameters: FreeValue = None
    type_: str = Field(alias="type")


class SaturationDetector(DynamoModel):
    kvCacheUtilThreshold: float | None = None
    metricsStalenessThreshold: str | None = None
    queueDepthThreshold: int | None = None


class ProfilePluginRef(DynamoModel):
    pluginRef: str
    # Optional in upstream's type, but its webhooks re-encode an absent weight as null, which its schema refuses:
    # every plugin of a profile names its weight.
    weight: int


class SchedulingProfile(DynamoModel):
    name: str
    plugins: list[ProfilePluginRef]


class EndpointPickerConfig(DynamoModel):
    model_config = schema_config(x_kubernetes_preserve_unknown_fields=True)
    apiVersion: str | None = None
    featureGates: list[str] | None = None
    kind: str | None = None
    plugins: list[EppPlugin]
    saturationDetector: SaturationDetector | None = None
    schedulingProfiles: list[SchedulingProfile]


class ConfigMapKeyRef(DynamoModel):
    model_config = schema_config(x_kubernetes_map_type="atomic")
    key: str
    name: str = ""
    optional: bool | None = None


# --- Checkpointing and GPU memory service pieces -----------------------------------------


class CheckpointJob(DynamoModel):
    gmsClientContainers: list[DNSLabel] | None = Field(
        default=None, json_schema_extra={"x-kubernetes-list-type": "set"}
    )
    podTemplate: FreeObject | None = None


class ExtraClientPod(DynamoModel):
    name: DNSLabel
    podTemplate: FreeObject


CHECKPOINT_JOB_XOR_REF = cel(
    "!has(self.job) || !has(self.checkpointRef) || size(self.checkpointRef) == 0",
    "checkpoint.job cannot be set when checkpointRef is specified",
)


def gms_rules(intra: str, inter: str) -> list[dict[str, str]]:
    """GPU memory service CEL rules; the mode spelling differs between versions."""
    return [
        cel(
            f"!has(self.extraClientContainers) || size(self.extraClientContainers) == 0 || self.mode == '{intra}'",
            f"extraClientContainers is only supported with mode={intra}",
        ),
        cel(
            f"!has(self.extraClientPods) || size(self.extraClientPods) == 0 || self.mode == '{inter}'",
            f"extraClientPods is only supported with mode={inter}",
        ),
        cel(
            "!has(self.extraClientPods) || size(self.extraClientPods) == 0",
            "extraClientPods is reserved for inter-pod GMS and is not implemented yet",
        ),
    ]


MIN_AVAILABLE_RULES = [
    cel(
        "!has(self.minAvailable) || (has(self.replicas) && self.replicas == 0) || "
        "self.minAvailable <= (has(self.replicas) ? self.replicas : 1)",
        "minAvailable must be less than or equal to replicas unless replicas is 0",
    ),
    cel(
        "!has(oldSelf.minAvailable) || (has(self.minAvailable) && self.minAvailable == oldSelf.minAvailable)",
        "minAvailable is immutable after creation",
    ),
]


# --- Status ------------------------------------------------------------------------------


class CheckpointStatus(DynamoModel):
    checkpointID: str | None = None
    checkpointName: str | None = None
    identityHash: str | None = None
    ready: bool | None = None


class PlacementStatus(DynamoModel):
    score: float | None = Field(default=None, ge=0, le=1)
    state: Literal["Reported", "Partial", "Unsupported", "Unknown"] | None = None


class RestartStatus(DynamoModel):
    inProgress: list[str] | None = None
    observedID: str | None = None
    phase: str | None = None


ComponentKind = Literal["PodClique", "PodCliqueScalingGroup", "Deployment", "LeaderWorkerSet"]
GraphState = Literal["initializing", "pending", "successful", "failed"]
RollingUpdatePhase = Literal["Pending", "InProgress", "Completed", "Failed", ""]


class ReplicaCounts(DynamoModel):
    availableReplicas: Int32 | None = Field(default=None, ge=0)
    componentKind: ComponentKind
    componentNames: list[str] | None = None
    readyReplicas: Int32 | None = Field(default=None, ge=0)
    replicas: Int32 = Field(ge=0)
    runtimeNamespace: str | None = None
    scheduledReplicas: Int32 | None = Field(default=None, ge=0)
    updatedReplicas: Int32 = Field(ge=0)


class GraphStatusBase(DynamoModel):
    checkpoints: dict[str, CheckpointStatus] | None = None
    observedGeneration: Int64 | None = None
    placement: PlacementStatus | None = None
    restart: RestartStatus | None = None
    state: GraphState = Field(default="initializing", json_schema_extra={"x-function-dynamo-required": True})


class RollingUpdateStatusBase(DynamoModel):
    endTime: DateTime | None = None
    phase: RollingUpdatePhase | None = None
    startTime: DateTime | None = None
