"""The DynamoCheckpoint XRD: upstream's one version (v1alpha1), its schema and printer columns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from functions.api.fields import cel
from functions.kinds.checkpoint.checkpoint_api import DynamoCheckpointSpec, DynamoCheckpointStatus
from functions.xrd.builder import GROUP, single_version_xrd
from functions.xrd.kube_catalog import checkpoint_kube_catalog
from functions.xrd.schema import openapi_for_model

DCKPT_XRD_NAME = f"xdynamocheckpoints.{GROUP}"
DCKPT_COMPOSITION_NAME = f"dynamocheckpoints.{GROUP}"
# Upstream's columns without Age, which Crossplane appends (after SYNCED and READY).
DCKPT_COLUMNS = [
    {"name": "Model", "type": "string", "description": "Model identifier", "jsonPath": ".spec.identity.model"},
    {
        "name": "Backend",
        "type": "string",
        "description": "Backend framework",
        "jsonPath": ".spec.identity.backendFramework",
    },
    {"name": "Phase", "type": "string", "description": "Current phase of the checkpoint", "jsonPath": ".status.phase"},
    {
        "name": "CheckpointID",
        "type": "string",
        "description": "Artifact ID of the checkpoint",
        "jsonPath": ".status.checkpointID",
    },
]
# Upstream's root-level rule, on spec here: Crossplane copies an XRD's spec and status, not its root rules.
IDENTITY_IMMUTABLE = cel(
    "!has(oldSelf.identity) || self.identity == oldSelf.identity", "spec.identity is immutable after creation"
)


def dckpt_schema(upstream_dir: Path | None = None) -> dict[str, Any]:
    spec = openapi_for_model(DynamoCheckpointSpec, checkpoint_kube_catalog(upstream_dir))
    spec["x-kubernetes-validations"] = [*spec.get("x-kubernetes-validations", []), IDENTITY_IMMUTABLE]
    status = openapi_for_model(DynamoCheckpointStatus, {})
    return {"type": "object", "properties": {"spec": spec, "status": status}}


def dckpt_xrd(upstream_dir: Path | None = None) -> dict[str, Any]:
    return single_version_xrd(
        "DynamoCheckpoint", "dckpt", "v1alpha1", {"openAPIV3Schema": dckpt_schema(upstream_dir)}, DCKPT_COLUMNS
    )
