"""Upstream webhook rules that need more than the XRD schema can see or afford (docs/upstream/operator.md §5.2, §5.6).

Rules on the object alone are CEL in the XRD (``functions.xrd.rules``). These read the claim's
metadata, which Crossplane does not let XRD CEL rules see, or cost more than the API server's CEL
budget allows (``check_costly_rules``), and become Fatal results naming the field.
Deprecated fields are reported as a condition, not a warning event on every reconcile.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from functions.api.graph import Graph, SpecError
from functions.contract import Condition
from functions.kube.quantity import parse_quantity
from functions.kube.runtime_version import needs_runtime_version_override

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


def check_main_mount_paths(component: dict[str, Any], path: str) -> None:
    """v1beta1: upstream's webhook also checks a component as v1alpha1 (its conversion lifts the main container's
    mounts into ``volumeMounts``, whose ``mountPoint`` must be set), so a main container mount needs a
    ``mountPath`` that is not empty (upstream names ``spec.services.<name>.volumeMounts[j].mountPoint``)."""
    template = component.get("podTemplate")
    pod_spec = template.get("spec") if isinstance(template, dict) else None
    containers = pod_spec.get("containers") if isinstance(pod_spec, dict) else None
    for k, container in enumerate(containers if isinstance(containers, list) else []):
        if not isinstance(container, dict) or container.get("name") != "main":
            continue
        mounts = container.get("volumeMounts")
        for j, mount in enumerate(mounts if isinstance(mounts, list) else []):
            if isinstance(mount, dict) and mount.get("mountPath") == "":
                raise SpecError(f"{path}.podTemplate.spec.containers[{k}].volumeMounts[{j}].mountPath: is required")


def check_epp_config(component: dict[str, Any], path: str) -> None:
    """v1beta1: an EPP component needs an ``eppConfig``. The XRD's CEL refuses one without (epp-component-config);
    this refuses a graph the API server stored before that rule (rendered then with a launch upstream does not
    have at the reference commit) rather than compose an EPP without its config."""
    if component.get("type") == "epp" and component.get("eppConfig") is None:
        raise SpecError(f"{path}.eppConfig: an epp component needs eppConfig")


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
        check_main_mount_paths(component, f"spec.components[{i}]")
        check_epp_config(component, f"spec.components[{i}]")
    pvcs = spec.get("pvcs")
    for i, pvc in enumerate(pvcs if isinstance(pvcs, list) else []):
        if isinstance(pvc, dict) and pvc.get("create") is True:
            size = _quantity(pvc.get("size"))
            if size is not None and size <= 0:
                raise SpecError(f"spec.pvcs[{i}].size: must be greater than 0 when create is true")


# --- the main container's image and the runtime version it names (docs/upstream/operator.md §5.6 rule 7) ----------

IMAGE_REQUIRED = "is required: the main container needs an image"
OVERRIDE_REQUIRED = "is required when the specified main container image has no parseable semantic-version tag"


@dataclass(frozen=True)
class MainImage:
    """A component's main container image, where it is written, and its ``runtimeVersionOverride``."""

    component: str  # the component's name (a v1alpha1 service's key)
    path: str  # the component's field path: spec.services.<name>, spec.components[<i>], or spec for a DCD
    image: str  # "" when unset
    image_path: str  # where the image is written, or belongs
    override: str  # "" when unset


@dataclass(frozen=True)
class Before:
    """A component as it was before an update: its main image (several while a rolling update runs) and its
    ``runtimeVersionOverride`` (None when unknown, which counts as unchanged)."""

    images: frozenset[str]
    override: str | None = None


def _v1alpha1_main_image(name: str, service: Any, path: str) -> MainImage:
    service = service if isinstance(service, dict) else {}
    extra = service.get("extraPodSpec") if isinstance(service.get("extraPodSpec"), dict) else {}
    main = extra.get("mainContainer") if isinstance(extra.get("mainContainer"), dict) else {}
    override = str(service.get("runtimeVersionOverride") or "")
    return MainImage(name, path, str(main.get("image") or ""), f"{path}.extraPodSpec.mainContainer.image", override)


def _v1beta1_main_image(name: str, component: dict[str, Any], path: str) -> MainImage:
    template = component.get("podTemplate") if isinstance(component.get("podTemplate"), dict) else {}
    pod_spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
    containers = pod_spec.get("containers") if isinstance(pod_spec.get("containers"), list) else []
    index = next((j for j, c in enumerate(containers) if isinstance(c, dict) and c.get("name") == "main"), None)
    override = str(component.get("runtimeVersionOverride") or "")
    if index is None:
        return MainImage(name, path, "", f"{path}.podTemplate.spec.containers", override)
    image = str(containers[index].get("image") or "")
    return MainImage(name, path, image, f"{path}.podTemplate.spec.containers[{index}].image", override)


def graph_main_images(spec: dict[str, Any]) -> list[MainImage]:
    """Each component of a DGD spec, in the order upstream checks them: v1alpha1 services by name, v1beta1
    components as listed."""
    services = spec.get("services")
    if isinstance(services, dict):
        return [_v1alpha1_main_image(n, s, f"spec.services.{n}") for n, s in sorted(services.items())]
    components = spec.get("components")
    return [
        _v1beta1_main_image(str(c.get("name") or ""), c, f"spec.components[{i}]")
        for i, c in enumerate(components if isinstance(components, list) else [])
        if isinstance(c, dict)
    ]


def dcd_main_image(spec: dict[str, Any], shape: str, name: str) -> MainImage:
    if shape == "v1alpha1":
        return _v1alpha1_main_image(name, spec, "spec")
    return _v1beta1_main_image(name, spec, "spec")


def before_update(spec: dict[str, Any]) -> dict[str, Before]:
    """The components of the DGD spec an update replaces, as ``check_main_images`` compares them."""
    return {m.component: Before(frozenset({m.image}), m.override) for m in graph_main_images(spec)}


def check_main_images(
    images: list[MainImage], before: dict[str, Before] | None = None, *, require_override: bool = True
) -> None:
    """Upstream's webhook rule on a component's main image: it is set, and unless ``runtimeVersionOverride`` is,
    its tag is a semantic version (the override is not required of a DCD: ``require_override=False``).

    With ``before`` (the components before an update) it ratchets as upstream's update does: a component keeps
    an image it lacked before, and a tag without a version, as long as neither its image nor its override
    changes. A component not in ``before`` is checked as on create.
    """
    for main in images:
        old = None if before is None else before.get(main.component)
        if not main.image and (old is None or any(old.images)):
            raise SpecError(f"{main.image_path}: {IMAGE_REQUIRED}")
        if not require_override or not needs_runtime_version_override(main.image, main.override):
            continue
        changed = (
            old is None or main.image not in old.images or (old.override is not None and old.override != main.override)
        )
        if changed:
            raise SpecError(f"{main.path}.runtimeVersionOverride: {OVERRIDE_REQUIRED} ({main.image!r})")


def with_runtime_version_overrides(doc: dict[str, Any], version: str) -> dict[str, Any]:
    """A copy of the DynamoGraphDeployment ``doc`` with ``runtimeVersionOverride: version`` on each component whose
    main image names no runtime version and that has no override: what upstream's webhook asks of it. A component
    without an image stays as it is (no version makes upstream admit it)."""
    out = copy.deepcopy(doc)
    spec = out.get("spec") if isinstance(out.get("spec"), dict) else {}
    services = spec.get("services")
    if isinstance(services, dict):
        components = [services[name] for name in sorted(services)]  # graph_main_images' order
    else:
        components = [c for c in spec.get("components") or [] if isinstance(c, dict)]
    for main, component in zip(graph_main_images(spec), components, strict=True):
        if main.image and needs_runtime_version_override(main.image, main.override):
            component["runtimeVersionOverride"] = version
    return out
