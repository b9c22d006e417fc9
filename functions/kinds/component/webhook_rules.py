"""Upstream webhook rules that need more than the XRD schema can see or afford (docs/upstream/operator.md §5.2, §5.6).

Rules on the object alone are CEL in the XRD (``functions.xrd.rules``). These read the claim's
metadata, which Crossplane does not let XRD CEL rules see, or cost more than the API server's CEL
budget allows (``check_costly_rules``), and become Fatal results naming the field.
Deprecated fields are reported as a condition, not a warning event on every reconcile.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from functions.api.graph import Graph, SpecError
from functions.contract import Condition
from functions.kube.quantity import parse_quantity

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


# --- the webhook rules the XRD cannot afford as CEL (functions.xrd.rules) -------------------------

SIDECAR_CONTAINER = "sidecar-frontend"


def _quantity(value: Any) -> Fraction | None:
    """An int-or-string quantity's value; None when it is not one (the schema's pattern reports that)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Fraction(value)
    try:
        return parse_quantity(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _container_names(pod_spec: Any) -> list[Any]:
    containers = pod_spec.get("containers") if isinstance(pod_spec, dict) else None
    return [c.get("name") for c in containers if isinstance(c, dict)] if isinstance(containers, list) else []


def check_service_sidecar(service: Any, path: str) -> None:
    """v1alpha1: ``frontendSidecar`` cannot be combined with an extraPodSpec container named sidecar-frontend."""
    if not isinstance(service, dict) or service.get("frontendSidecar") is None:
        return
    if SIDECAR_CONTAINER in _container_names(service.get("extraPodSpec")):
        raise SpecError(
            f"{path}.frontendSidecar: cannot be combined with an extraPodSpec container named {SIDECAR_CONTAINER}"
        )


def check_costly_rules(spec: dict[str, Any]) -> None:
    """Upstream's webhook rules on the spec whose CEL exceeds the API server's cost budget, as a Fatal."""
    services = spec.get("services")
    if isinstance(services, dict):
        for name, service in sorted(services.items()):
            check_service_sidecar(service, f"spec.services.{name}")
    components = spec.get("components")
    for i, component in enumerate(components if isinstance(components, list) else []):
        if not isinstance(component, dict):
            continue
        sidecar = component.get("frontendSidecar")
        pod_spec = (
            (component.get("podTemplate") or {}).get("spec") if isinstance(component.get("podTemplate"), dict) else None
        )
        if sidecar is not None and sidecar not in _container_names(pod_spec):
            raise SpecError(
                f"spec.components[{i}].frontendSidecar: must name a container of podTemplate.spec.containers"
            )
        size = _quantity(component.get("sharedMemorySize"))
        if size is not None and size < 0:
            raise SpecError(f"spec.components[{i}].sharedMemorySize: must not be negative")
    pvcs = spec.get("pvcs")
    for i, pvc in enumerate(pvcs if isinstance(pvcs, list) else []):
        if isinstance(pvc, dict) and pvc.get("create") is True:
            size = _quantity(pvc.get("size"))
            if size is not None and size <= 0:
                raise SpecError(f"spec.pvcs[{i}].size: must be greater than 0 when create is true")
