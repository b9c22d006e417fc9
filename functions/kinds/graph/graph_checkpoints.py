"""The render step's checkpoints: each component's checkpoint resolved, its auto checkpoint composed
(docs/upstream/checkpoint-gms-dgdr-model.md §1.2, §1.3, §1.5).

- An auto checkpoint (no ``checkpointRef``) is the DynamoCheckpoint claim ``checkpoint-<id>`` in the graph's
  namespace, composed by the DGD (so ``kubectl get dynamocheckpoints`` lists it, as upstream's). Checkpoints of
  earlier worker generations stay composed until the DGD goes, as upstream keeps them.
- A ``checkpointRef`` names a DynamoCheckpoint claim the step reads as a required resource.
- The DGD's UID in the ID is the composite's: a function sees the XR, not the claim.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from functions.api.graph import Graph, ResolvedCheckpoint, SpecError
from functions.api.operator_config import OperatorConfig
from functions.contract import ResourceSelector, StepRequest
from functions.kinds.checkpoint.auto_checkpoint import (
    AUTO_ANNOTATION,
    CHECKPOINT_API_VERSION,
    CHECKPOINT_KIND,
    auto_checkpoint_id,
    auto_checkpoint_name,
    render_auto_checkpoint,
    render_checkpoint_claim_template,
)
from functions.kinds.checkpoint.checkpoint_refs import check_checkpoints, resolve_ref, resolved_from
from functions.kube.labels import GRAPH_NAME
from functions.kube.podspec import PodContext

STATUS_FIELD = "checkpoints"
WAITING_REASON = "waiting_for_checkpoint"


@dataclass(frozen=True)
class GraphCheckpoints:
    resolved: tuple[ResolvedCheckpoint, ...] = ()
    desired: dict[str, dict[str, Any]] = field(default_factory=dict)  # composed DynamoCheckpoint claims
    requirements: dict[str, ResourceSelector] = field(default_factory=dict)

    def status(self) -> dict[str, Any]:
        """``status.checkpoints``, keyed by component name."""
        return {c.component: c.as_status() for c in sorted(self.resolved, key=lambda c: c.component)}


def _retained_generations(graph: Graph, observed: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """This DGD's auto checkpoints of earlier worker generations, repeated as they are."""
    kept = {}
    for resource, obj in sorted(observed.items()):
        meta = obj.get("metadata") or {}
        if (
            obj.get("kind") == CHECKPOINT_KIND
            and (meta.get("annotations") or {}).get(AUTO_ANNOTATION) == "true"
            and (meta.get("labels") or {}).get(GRAPH_NAME) == graph.name
        ):
            kept[resource] = {
                "apiVersion": obj.get("apiVersion", CHECKPOINT_API_VERSION),
                "kind": CHECKPOINT_KIND,
                "metadata": {key: meta[key] for key in ("name", "namespace", "labels", "annotations") if meta.get(key)},
                "spec": obj.get("spec") or {},
            }
    return kept


def resolve_checkpoints(
    req: StepRequest, graph: Graph, operator_config: OperatorConfig, backends: dict[str, str]
) -> GraphCheckpoints:
    """Every component's checkpoint, the auto checkpoints to compose and the references to read."""
    components = [c for c in graph.components if c.checkpoint is not None]
    if not components:
        return GraphCheckpoints()
    check_checkpoints(graph.components, operator_config)
    uid = str((req.observed_composite.get("metadata") or {}).get("uid") or "")
    desired = _retained_generations(graph, req.observed_resources)
    resolved, requirements = [], {}
    for component in components:
        config = component.checkpoint
        assert config is not None
        if config.checkpoint_ref:
            checkpoint, (key, selector) = resolve_ref(component, graph.namespace, req.required)
            requirements[key] = selector
            resolved.append(checkpoint)
            continue
        ckpt_id = auto_checkpoint_id(graph, component, uid)
        name = auto_checkpoint_name(ckpt_id)
        observed = req.observed_resources.get(name)
        observed_id = ((observed or {}).get("status") or {}).get("checkpointID")
        if observed_id and observed_id != ckpt_id:
            raise SpecError(f"{config.path}: checkpoint {name} already exists with checkpoint ID {observed_id}")
        ctx = PodContext(graph=graph, operator_config=operator_config, backend=backends.get(component.name, "noop"))
        desired[name] = render_auto_checkpoint(ctx, component, config, ckpt_id, uid)
        claim_template = render_checkpoint_claim_template(ctx, component, config, ckpt_id)
        if claim_template is not None:
            desired[claim_template["metadata"]["name"]] = claim_template
        resolved.append(resolved_from(component, observed, name, ckpt_id))
    return GraphCheckpoints(tuple(resolved), desired, requirements)


def waiting_message(graph: Graph, checkpoints: dict[str, Any]) -> str | None:
    """Upstream's "Waiting for checkpoints: ..." while a ``WaitForCheckpoint`` component's checkpoint is not
    Ready, from ``status.checkpoints``; None when nothing waits."""
    waiting = []
    for component in graph.components:
        config = component.checkpoint
        if config is None or not config.waits:
            continue
        entry = checkpoints.get(component.name) or {}
        if entry.get("ready"):
            continue
        name = entry.get("checkpointName")
        waiting.append(f"{component.name} ({name})" if name else component.name)
    return "Waiting for checkpoints: " + ", ".join(sorted(waiting)) if waiting else None
