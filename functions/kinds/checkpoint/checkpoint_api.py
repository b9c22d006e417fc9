"""DynamoCheckpoint ``nvidia.com/v1alpha1`` (upstream's only version): a checkpoint Job whose pod the snapshot
project captures (docs/upstream/checkpoint-gms-dgdr-model.md §1.9)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from functions.api.common import DNSLabel
from functions.api.fields import DateTime, DynamoModel, Int32, Int64, PodTemplateSpec
from functions.api.v1alpha1 import CheckpointIdentity, GpuMemoryService, SharedMemory

CheckpointPhase = Literal["Pending", "Creating", "Ready", "Failed"]


class DynamoCheckpointJob(DynamoModel):
    activeDeadlineSeconds: Int64 = Field(default=3600, ge=1)
    backoffLimit: Int32 | None = Field(default=None, ge=0)  # deprecated upstream: ignored
    podTemplateSpec: PodTemplateSpec
    sharedMemory: SharedMemory | None = None
    targetContainerName: DNSLabel = "main"
    ttlSecondsAfterFinished: Int32 | None = Field(default=None, ge=0)  # deprecated upstream: ignored


class DynamoCheckpointSpec(DynamoModel):
    gpuMemoryService: GpuMemoryService | None = None
    identity: CheckpointIdentity  # deprecated upstream, still required; immutable (XRD CEL)
    job: DynamoCheckpointJob


class DynamoCheckpointStatus(DynamoModel):
    checkpointID: str | None = None
    createdAt: DateTime | None = None
    identityHash: str | None = None
    jobName: str | None = None
    location: str | None = None  # deprecated upstream: no longer written
    message: str | None = None
    phase: CheckpointPhase | None = None
    podSnapshotName: str | None = None
    storageType: Literal["pvc", "s3", "oci"] | None = None  # deprecated upstream: no longer written
