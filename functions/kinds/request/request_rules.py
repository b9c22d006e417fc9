"""What a DynamoGraphDeploymentRequest's spec must satisfy before profiling, and which edits it takes afterwards
(docs/upstream/checkpoint-gms-dgdr-model.md §4.2, §4.5; docs/upstream/operator.md §5.4).

- Upstream's webhook rules that need the operator config (GPU discovery) or a parsed image tag are Fatal here:
  the XRD cannot read either.
- The controller's validation (the model cache PVC, the hardware after discovery) fails the request
  (``Validation=False/ValidationFailed``).
- Hardware discovery reads GPU Feature Discovery's node labels (Nodes read as a required resource); upstream
  asks DCGM first, which a function cannot reach.
- Once profiling starts the spec is frozen: an edit is ignored with a ``SpecChangeRejected`` warning, except
  upstream's deferred edit (with ``autoApply: false``: ``runtimeVersionOverride`` while profiling or Ready, and
  turning ``autoApply`` on once Ready). The spec last accepted is kept in ``status.processedSpec``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from functions.api.graph import SpecError
from functions.kube.runtime_version import image_tag_version

PROCESSED_SPEC = "processedSpec"
FROZEN_PHASES = ("Profiling", "Deploying", "Ready", "Deployed")
DEFERRED_FIELDS = frozenset({"runtimeVersionOverride", "autoApply"})
REQUIRED_HARDWARE = ("gpuSku", "vramMb", "numGpusPerNode")
GPU_NODE_LABEL = "nvidia.com/gpu.present"
GFD_PRODUCT, GFD_MEMORY, GFD_COUNT = "nvidia.com/gpu.product", "nvidia.com/gpu.memory", "nvidia.com/gpu.count"
DISCOVERY_FAILED = (
    "GPU hardware info required but auto-discovery failed: no node carries GPU Feature Discovery's labels "
    f"({GFD_PRODUCT}, {GFD_MEMORY}, {GFD_COUNT}); set spec.hardware.{{gpuSku,vramMb,numGpusPerNode}} explicitly."
)
# GPU Feature Discovery's product names (e.g. NVIDIA-H100-80GB-HBM3) to the profiler's SKUs, first match wins.
PRODUCT_SKUS = (
    (("GB200",), "gb200_sxm"),
    (("GB10",), "gb10"),
    (("B200",), "b200_sxm"),
    (("H200",), "h200_sxm"),
    (("H100", "PCIE"), "h100_pcie"),
    (("H100",), "h100_sxm"),
    (("A100", "PCIE"), "a100_pcie"),
    (("A100",), "a100_sxm"),
    (("A30",), "a30"),
    (("L40S",), "l40s"),
    (("L40",), "l40"),
    (("L4",), "l4"),
    (("V100", "PCIE"), "v100_pcie"),
    (("V100",), "v100_sxm"),
    (("T4",), "t4"),
    (("MI300",), "mi300"),
    (("MI200",), "mi200"),
)


def product_sku(product: str) -> str | None:
    words = product.upper().replace("_", "-").split("-")
    for parts, sku in PRODUCT_SKUS:
        if all(any(w == p or (p == "PCIE" and w.startswith("PCIE")) for w in words) for p in parts):
            return sku
    return None


def _int_label(labels: dict[str, str], key: str) -> int | None:
    try:
        return int(labels[key])
    except (KeyError, ValueError):
        return None


def discovered_hardware(nodes: list[dict[str, Any]]) -> dict[str, Any]:
    """What GPU Feature Discovery's labels say: the node with the most GPUs (first by name) for the per-node
    fields, every GPU node for ``totalGpus``."""
    gpu_nodes = []
    for node in sorted(nodes, key=lambda n: (n.get("metadata") or {}).get("name", "")):
        labels = (node.get("metadata") or {}).get("labels") or {}
        count = _int_label(labels, GFD_COUNT)
        if count:
            gpu_nodes.append((count, labels))
    if not gpu_nodes:
        return {}
    count, labels = max(gpu_nodes, key=lambda item: item[0])  # max keeps the first of equals
    found: dict[str, Any] = {"numGpusPerNode": count, "totalGpus": sum(c for c, _ in gpu_nodes)}
    memory = _int_label(labels, GFD_MEMORY)
    if memory:
        found["vramMb"] = memory
    sku = product_sku(labels.get(GFD_PRODUCT, ""))
    if sku:
        found["gpuSku"] = sku
    return found


def needs_discovery(spec: dict[str, Any]) -> bool:
    hardware = spec.get("hardware") or {}
    return any(hardware.get(k) is None for k in REQUIRED_HARDWARE)


def check_webhook_rules(spec: dict[str, Any], image: str, discovery: bool) -> None:
    """Upstream's webhook rules the XRD cannot hold; raises ``SpecError`` (a Fatal: nothing is composed)."""
    hardware = spec.get("hardware") or {}
    if not discovery and not any(hardware.get(k) is not None for k in REQUIRED_HARDWARE):
        raise SpecError(
            "spec.hardware: gpuSku, vramMb and numGpusPerNode are required when GPU discovery is off "
            "(EnvironmentConfig/dynamo-platform data.gpu.discoveryEnabled, data.namespace.restricted, "
            "or v1alpha1 enableGpuDiscovery: false)"
        )
    if not spec.get("runtimeVersionOverride") and image_tag_version(image) is None:
        raise SpecError(
            "spec.runtimeVersionOverride: is required when spec.image has no parseable semantic-version tag "
            f"({image!r})"
        )


def with_hardware(spec: dict[str, Any], discovered: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``spec`` with the discovered hardware filling what it leaves out, and the validation problem, if any."""
    hardware = {**discovered, **{k: v for k, v in (spec.get("hardware") or {}).items() if v is not None}}
    out = {**spec, "hardware": hardware} if hardware else dict(spec)
    if any(hardware.get(k) is None for k in REQUIRED_HARDWARE):
        return out, DISCOVERY_FAILED
    return out, None


@dataclass(frozen=True)
class Accepted:
    spec: dict[str, Any]  # the spec this reconcile works from
    observed_generation: int | None
    rejected: str | None = None  # the SpecChangeRejected message


def accepted_spec(current: dict[str, Any], previous_status: dict[str, Any], generation: int | None) -> Accepted:
    phase = previous_status.get("phase")
    processed = previous_status.get(PROCESSED_SPEC)
    kept_generation = previous_status.get("observedGeneration")
    if phase not in FROZEN_PHASES or not isinstance(processed, dict):
        if phase == "Failed" and isinstance(processed, dict):
            return Accepted(processed, kept_generation)
        return Accepted(current, generation)
    if current == processed:
        return Accepted(processed, generation)
    changed = {k for k in set(current) | set(processed) if current.get(k) != processed.get(k)}
    deferred = processed.get("autoApply") is False and changed <= DEFERRED_FIELDS and phase in ("Profiling", "Ready")
    if deferred and "autoApply" in changed:
        deferred = phase == "Ready" and current.get("autoApply") is True
    if deferred:
        return Accepted(current, generation)
    return Accepted(
        processed,
        kept_generation,
        f"Cannot modify spec in phase '{phase}'. DynamoGraphDeploymentRequest is immutable once profiling starts. "
        "Create a new resource with a different name instead.",
    )
