"""Rules and lookups shared by the DGD and DCD steps for a component's checkpoint
(docs/upstream/checkpoint-gms-dgdr-model.md §1.2, §1.3): upstream's gate and compatibility rules, and a checkpoint
resolved from the DynamoCheckpoint observed for it."""

from __future__ import annotations

from typing import Any

from functions.api.graph import Component, ResolvedCheckpoint, SpecError
from functions.api.operator_config import OperatorConfig
from functions.contract import ResourceSelector
from functions.kinds.checkpoint.auto_checkpoint import CHECKPOINT_API_VERSION, CHECKPOINT_KIND
from functions.kube.checkpoint_ids import artifact_version, checkpoint_id

REF_REQUIREMENT_PREFIX = "checkpoint-ref-"
GATE_OFF = "checkpoint functionality is disabled in the operator configuration"
WITH_FAILOVER = "Snapshot with active/passive failover is temporarily unsupported"
WITH_INTERPOD_GMS = "Snapshot with gpuMemoryService.mode=InterPod is unsupported"


def check_checkpoints(components: tuple[Component, ...], operator_config: OperatorConfig) -> None:
    """Upstream's gate and compatibility rules (docs/upstream/checkpoint-gms-dgdr-model.md §1.2) for components
    with an enabled checkpoint, and the operator config's checkpoint storage."""
    if any(c.checkpoint for c in components) and operator_config.checkpoint.enabled:
        try:
            operator_config.checkpoint.pvc_storage()
        except ValueError as err:
            raise SpecError(f"EnvironmentConfig/dynamo-platform data.{err}") from None
    for component in components:
        config = component.checkpoint
        if config is None:
            continue
        if not operator_config.checkpoint.enabled:
            raise SpecError(f"{config.path}: component {component.name}: {GATE_OFF}")
        if component.failover:
            raise SpecError(f"{config.path}: component {component.name!r}: {WITH_FAILOVER}")
        if component.gms is not None and component.gms.mode == "InterPod":
            raise SpecError(f"{config.path}: component {component.name!r}: {WITH_INTERPOD_GMS}")


def ref_requirement(name: str, namespace: str) -> tuple[str, ResourceSelector]:
    return REF_REQUIREMENT_PREFIX + name, ResourceSelector(
        CHECKPOINT_API_VERSION, CHECKPOINT_KIND, match_name=name, namespace=namespace
    )


def resolved_from(component: Component, obj: dict[str, Any] | None, name: str, known_id: str) -> ResolvedCheckpoint:
    """A component's checkpoint from the observed DynamoCheckpoint (None: not there yet); ``known_id`` is an
    auto checkpoint's ID, "" for a reference (then CheckpointID of the object)."""
    config = component.checkpoint
    assert config is not None
    targets = (config.target_container,)
    if obj is None:
        return ResolvedCheckpoint(component.name, name, known_id, config.startup_policy, False, False, "1", targets)
    service = (obj.get("spec") or {}).get("gpuMemoryService") or {}
    if component.gms is not None and not service.get("enabled"):
        raise SpecError(
            f"{config.path}: gpuMemoryService restore requires resolved checkpoint {name!r} to enable gpuMemoryService"
        )
    return ResolvedCheckpoint(
        component=component.name,
        name=name,
        checkpoint_id=known_id or checkpoint_id(obj),
        startup_policy=config.startup_policy,
        exists=True,
        ready=(obj.get("status") or {}).get("phase") == "Ready",
        artifact_version=artifact_version(obj),
        targets=targets,
        gms=bool(service.get("enabled")),
        gms_extra_clients=tuple(service.get("extraClientContainers") or ()),
    )


def resolve_ref(
    component: Component, namespace: str, required: dict[str, list[dict[str, Any]]]
) -> tuple[ResolvedCheckpoint, tuple[str, ResourceSelector]]:
    """A ``checkpointRef``: the named DynamoCheckpoint must exist (upstream: NotFound is an error)."""
    config = component.checkpoint
    assert config is not None and config.checkpoint_ref
    key, selector = ref_requirement(config.checkpoint_ref, namespace)
    if key in required and not required[key]:
        raise SpecError(
            f"{config.path}.checkpointRef: DynamoCheckpoint {namespace}/{config.checkpoint_ref} does not exist"
        )
    found = (required.get(key) or [None])[0]
    return resolved_from(component, found, config.checkpoint_ref, ""), (key, selector)
