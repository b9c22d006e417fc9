"""DynamoModel ``nvidia.com/v1alpha1`` (upstream's only version): a model served by a graph's workers, a base
model or a LoRA adapter loaded onto them (docs/upstream/checkpoint-gms-dgdr-model.md §5;
docs/upstream/operator.md §4.4).

The kind's name collides with ``fields.DynamoModel``, the base class of every API model here, hence the
``DynamoModel*`` names of the parts."""

from __future__ import annotations

from typing import Literal

from functions.api.fields import DynamoModel

ModelType = Literal["base", "lora", "adapter"]


class ModelSource(DynamoModel):
    uri: str


class DynamoModelSpec(DynamoModel):
    baseModelName: str
    modelName: str
    modelType: ModelType = "base"
    source: ModelSource | None = None


class EndpointInfo(DynamoModel):
    address: str
    loraFallbackCovered: bool | None = None
    podName: str | None = None
    ready: bool


class DynamoModelStatus(DynamoModel):
    endpoints: list[EndpointInfo] | None = None
    loraFallbackCoveredEndpoints: int | None = None
    readyEndpoints: int
    totalEndpoints: int
