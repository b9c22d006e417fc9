"""A DynamoComponentDeployment's checkpoint: the DynamoCheckpoint its pods restore from
(docs/upstream/checkpoint-gms-dgdr-model.md §1.3 "Standalone DCD path", §1.6).

A DCD never creates a checkpoint. A ``checkpointRef`` (what the DGD writes once its auto checkpoint exists) is
read by name; a legacy ``identity`` is looked up by the label ``nvidia.com/snapshot-checkpoint-id`` with its
16-hex hash; with neither the checkpoint is enabled but does not exist, and the pods are not shaped.
"""

from __future__ import annotations

from typing import Any

from functions.api.graph import Graph, ResolvedCheckpoint, SpecError
from functions.api.operator_config import OperatorConfig
from functions.contract import ResourceSelector
from functions.kinds.checkpoint.auto_checkpoint import CHECKPOINT_API_VERSION, CHECKPOINT_KIND
from functions.kinds.checkpoint.checkpoint_refs import check_checkpoints, resolve_ref, resolved_from
from functions.kube.checkpoint_ids import CHECKPOINT_ID_LABEL, identity_hash

IDENTITY_REQUIREMENT = "checkpoint-identity"


def resolve_dcd_checkpoint(
    graph: Graph, operator_config: OperatorConfig, required: dict[str, list[dict[str, Any]]]
) -> tuple[ResolvedCheckpoint | None, dict[str, ResourceSelector]]:
    """(the DCD's checkpoint, the required resources to read it); raises ``SpecError`` naming the field."""
    (component,) = graph.components
    config = component.checkpoint
    if config is None:
        return None, {}
    check_checkpoints(graph.components, operator_config)
    if config.checkpoint_ref:
        checkpoint, (key, selector) = resolve_ref(component, graph.namespace, required)
        return checkpoint, {key: selector}
    if not config.identity:
        return resolved_from(component, None, "", ""), {}
    wanted = identity_hash(config.identity)
    selector = ResourceSelector(
        CHECKPOINT_API_VERSION, CHECKPOINT_KIND, match_labels={CHECKPOINT_ID_LABEL: wanted}, namespace=graph.namespace
    )
    found = required.get(IDENTITY_REQUIREMENT) or []
    if len(found) > 1:
        raise SpecError(f"{config.path}.identity: multiple checkpoints found for checkpoint ID {wanted}")
    obj = found[0] if found else None
    name = str((obj or {}).get("metadata", {}).get("name") or "")
    return resolved_from(component, obj, name, wanted), {IDENTITY_REQUIREMENT: selector}
