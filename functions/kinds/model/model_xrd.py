"""The DynamoModel XRD: upstream's one version (v1alpha1), its schema, printer columns and webhook rules."""

from __future__ import annotations

from typing import Any

from functions.api.fields import cel
from functions.kinds.model.model_api import DynamoModelSpec, DynamoModelStatus
from functions.xrd.builder import GROUP, single_version_xrd
from functions.xrd.schema import openapi_for_model

DM_XRD_NAME = f"xdynamomodels.{GROUP}"
DM_COMPOSITION_NAME = f"dynamomodels.{GROUP}"
# Upstream's columns without Age, which Crossplane appends (after SYNCED and READY, whose Ready differs from
# this kind's own "Ready endpoints" column: that one is kept as upstream names it).
DM_COLUMNS = [
    {"name": "BaseModel", "type": "string", "description": "Base model name", "jsonPath": ".spec.baseModelName"},
    {"name": "Type", "type": "string", "description": "Model type", "jsonPath": ".spec.modelType"},
    {"name": "Ready", "type": "integer", "description": "Ready endpoints", "jsonPath": ".status.readyEndpoints"},
    {"name": "Total", "type": "integer", "description": "Total endpoints", "jsonPath": ".status.totalEndpoints"},
]
URI_SCHEMES = ("s3://", "hf://", "file:///")
# Upstream's webhook (docs/upstream/operator.md §5.5 and docs/upstream/checkpoint-gms-dgdr-model.md §5), as CEL on spec.
WEBHOOK_RULES = [
    cel("size(self.modelName) > 0", "modelName is required"),
    cel("size(self.baseModelName) > 0", "baseModelName is required"),
    cel(
        "!has(self.modelType) || self.modelType.lowerAscii() != 'lora' || (has(self.source) && ("
        + " || ".join(f"self.source.uri.startsWith('{s}')" for s in URI_SCHEMES)
        + "))",
        "a lora model needs source.uri starting with s3://, hf:// or file:///",
    ),
    cel("self.baseModelName == oldSelf.baseModelName", "baseModelName is immutable"),
    cel(
        "(has(self.modelType) ? self.modelType : 'base') == (has(oldSelf.modelType) ? oldSelf.modelType : 'base')",
        "modelType is immutable",
    ),
]
SPEC_BOUNDS = {"baseModelName": 512, "modelName": 512}  # for the CEL cost budget; model IDs are far shorter
URI_BOUND = 4096


def dm_schema() -> dict[str, Any]:
    spec = openapi_for_model(DynamoModelSpec, {})
    for field, bound in SPEC_BOUNDS.items():
        spec["properties"][field]["maxLength"] = bound
    spec["properties"]["source"]["properties"]["uri"]["maxLength"] = URI_BOUND
    spec["x-kubernetes-validations"] = [*spec.get("x-kubernetes-validations", []), *WEBHOOK_RULES]
    return {"type": "object", "properties": {"spec": spec, "status": openapi_for_model(DynamoModelStatus, {})}}


def dm_xrd() -> dict[str, Any]:
    return single_version_xrd("DynamoModel", "dm", "v1alpha1", {"openAPIV3Schema": dm_schema()}, DM_COLUMNS)
