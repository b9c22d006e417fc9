"""Upstream webhook rules that need more than the XRD schema can see (reference §5.2, §5.6).

Rules on the object alone are CEL in the XRD (``functions.xrd.rules``). These read the claim's
metadata, which Crossplane does not let XRD CEL rules see, and become Fatal results naming the field.
Deprecated fields are reported as a condition, not a warning event on every reconcile.
"""

from __future__ import annotations

import re
from typing import Any

from functions.api.graph import Graph, SpecError
from functions.contract import Condition

ORIGIN_VERSION = "nvidia.com/dynamo-operator-origin-version"
EXECUTOR_BACKEND = "nvidia.com/vllm-distributed-executor-backend"
DISCOVERY_MODE = "nvidia.com/dynamo-kube-discovery-mode"
SEMVER = re.compile(
    r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$"
)
DEPRECATED_SERVICE_FIELDS = ("dynamoNamespace", "autoscaling")
DEPRECATION_CONDITION = "DeprecatedFields"


def check_annotations(graph: Graph) -> None:
    """The DGD annotations upstream's webhook validates."""
    annotations = graph.metadata_annotations
    path = "metadata.annotations[{}]"
    if ORIGIN_VERSION in annotations and not SEMVER.match(annotations[ORIGIN_VERSION]):
        raise SpecError(f"{path.format(ORIGIN_VERSION)}: {annotations[ORIGIN_VERSION]!r} is not a semantic version")
    if EXECUTOR_BACKEND in annotations and annotations[EXECUTOR_BACKEND].lower() not in ("mp", "ray"):
        raise SpecError(f"{path.format(EXECUTOR_BACKEND)}: must be mp or ray, not {annotations[EXECUTOR_BACKEND]!r}")
    if DISCOVERY_MODE in annotations and annotations[DISCOVERY_MODE] not in ("pod", "container"):
        raise SpecError(f"{path.format(DISCOVERY_MODE)}: must be pod or container, not {annotations[DISCOVERY_MODE]!r}")


def deprecated_fields(xr: dict[str, Any]) -> list[str]:
    services = (xr.get("spec") or {}).get("services") or {}
    return [
        f"spec.services.{name}.{field}"
        for name, service in sorted(services.items())
        for field in DEPRECATED_SERVICE_FIELDS
        if isinstance(service, dict) and field in service
    ]


def deprecation_condition(xr: dict[str, Any]) -> Condition:
    """Always emitted, so it clears itself once the fields are gone."""
    fields = deprecated_fields(xr)
    if fields:
        return Condition(DEPRECATION_CONDITION, "True", "DeprecatedFieldsUsed", "deprecated: " + ", ".join(fields))
    return Condition(DEPRECATION_CONDITION, "False", "NoDeprecatedFields")
