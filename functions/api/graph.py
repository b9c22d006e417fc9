"""The normalised DynamoGraphDeployment: one graph model whichever API version was written.

Both shapes share one stored version (the XRD has no conversion webhook), so the shape is
recognised by its content: ``spec.services`` (v1alpha1) or ``spec.components`` (v1beta1).
Renderers only ever see a ``Graph``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from functions.api import v1alpha1, v1beta1

# Keys Crossplane adds to an XR's spec; they are not part of the Dynamo API.
CROSSPLANE_SPEC_KEYS = frozenset(
    {
        "claimRef",
        "compositionRef",
        "compositionRevisionRef",
        "compositionRevisionSelector",
        "compositionSelector",
        "compositionUpdatePolicy",
        "compositeDeletePolicy",
        "crossplane",
        "resourceRef",
        "resourceRefs",
        "writeConnectionSecretToRef",
        "publishConnectionDetailsTo",
    }
)


class SpecError(ValueError):
    """Bad input; ``str()`` names the field path and the rule, e.g. ``spec.services.X.replicas: ...``."""


@dataclass(frozen=True)
class Component:
    """One component (v1alpha1 service) with its pod template in v1beta1 form."""

    name: str
    component_type: str | None
    sub_component_type: str | None
    replicas: int
    node_count: int  # 1 for single-node components
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    pod_template: dict[str, Any] = field(default_factory=dict)  # metadata + spec, main container "main"
    pack_domain: str | None = None
    model_ref: str | None = None

    @property
    def multinode(self) -> bool:
        return self.node_count > 1

    @property
    def key(self) -> str:
        """Lower-case name used in child object names (upstream ``strings.ToLower(serviceKey)``)."""
        return self.name.lower()


@dataclass(frozen=True)
class Graph:
    name: str
    namespace: str
    shape: str  # "v1alpha1" or "v1beta1": the shape the user wrote
    components: tuple[Component, ...]
    backend_framework: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    envs: tuple[dict[str, Any], ...] = ()
    metadata_annotations: dict[str, str] = field(default_factory=dict)
    pack_domain: str | None = None
    priority_class_name: str | None = None


MAIN_CONTAINER = "main"


def _error_path(err: dict[str, Any], prefix: str) -> str:
    parts = [prefix]
    for loc in err["loc"]:
        parts.append(f"[{loc}]" if isinstance(loc, int) else f".{loc}")
    return "".join(parts).replace(".[", "[")


def _validation_error(exc: ValidationError, prefix: str) -> SpecError:
    lines = [f"{_error_path(e, prefix)}: {e['msg']}" for e in exc.errors(include_url=False)]
    return SpecError("; ".join(lines))


def spec_shape(spec: dict[str, Any]) -> str:
    has_services, has_components = "services" in spec, "components" in spec
    if has_services == has_components:
        raise SpecError(
            "spec: exactly one of spec.services (v1alpha1 shape) or spec.components (v1beta1 shape) must be set"
        )
    return "v1alpha1" if has_services else "v1beta1"


def graph_from_xr(xr: dict[str, Any]) -> Graph:
    """Normalise an XDynamoGraphDeployment (or a claim) into a ``Graph``; raises ``SpecError``."""
    metadata = xr.get("metadata") or {}
    spec = {k: v for k, v in (xr.get("spec") or {}).items() if k not in CROSSPLANE_SPEC_KEYS}
    claim = (xr.get("spec") or {}).get("claimRef") or {}
    labels = metadata.get("labels") or {}
    name = claim.get("name") or labels.get("crossplane.io/claim-name") or metadata.get("name")
    namespace = claim.get("namespace") or labels.get("crossplane.io/claim-namespace") or metadata.get("namespace")
    if not name:
        raise SpecError("metadata.name: the DynamoGraphDeployment has no name")
    if not namespace:
        raise SpecError("spec.claimRef.namespace: a DynamoGraphDeployment must be claimed in a namespace")
    shape = spec_shape(spec)
    try:
        if shape == "v1alpha1":
            parsed_a = v1alpha1.DynamoGraphDeploymentSpec.model_validate(spec)
            components = tuple(_from_service(k, s) for k, s in sorted((parsed_a.services or {}).items()))
            parsed: Any = parsed_a
            graph_envs = parsed_a.envs or []
            pack_domain = parsed_a.topologyConstraint.packDomain if parsed_a.topologyConstraint else None
        else:
            parsed_b = v1beta1.DynamoGraphDeploymentSpec.model_validate(spec)
            components = tuple(_from_component(c) for c in sorted(parsed_b.components or [], key=lambda c: c.name))
            parsed = parsed_b
            graph_envs = parsed_b.env or []
            pack_domain = parsed_b.topologyConstraint.packDomain if parsed_b.topologyConstraint else None
    except ValidationError as exc:
        raise _validation_error(exc, "spec") from None
    if not components:
        raise SpecError(f"spec.{'services' if shape == 'v1alpha1' else 'components'}: must not be empty")
    return Graph(
        name=name,
        namespace=namespace,
        shape=shape,
        components=components,
        backend_framework=parsed.backendFramework,
        labels=dict(parsed.labels or {}),
        annotations=dict(parsed.annotations or {}),
        envs=tuple(copy.deepcopy(graph_envs)),
        metadata_annotations=dict(metadata.get("annotations") or {}),
        pack_domain=pack_domain,
        priority_class_name=parsed.priorityClassName,
    )


def _from_service(key: str, service: v1alpha1.Service) -> Component:
    extra = copy.deepcopy(service.extraPodSpec or {})
    main = extra.pop("mainContainer", None) or {}
    main = {"name": MAIN_CONTAINER, **{k: v for k, v in main.items() if k != "name"}}
    if service.envs:
        main["env"] = merge_envs(main.get("env", []), copy.deepcopy(service.envs))
    if service.envFromSecret:
        main["envFrom"] = [*main.get("envFrom", []), {"secretRef": {"name": service.envFromSecret}}]
    if service.livenessProbe is not None:
        main["livenessProbe"] = copy.deepcopy(service.livenessProbe)
    if service.readinessProbe is not None:
        main["readinessProbe"] = copy.deepcopy(service.readinessProbe)
    if service.resources is not None:
        main["resources"] = container_resources(service.resources, main.get("resources") or {})
    containers = [*extra.pop("containers", []), main]
    pod_metadata = service.extraPodMetadata
    return Component(
        name=key,
        component_type=service.componentType,
        sub_component_type=service.subComponentType,
        replicas=1 if service.replicas is None else service.replicas,
        node_count=service.multinode.nodeCount if service.multinode else 1,
        labels=dict(service.labels or {}),
        annotations=dict(service.annotations or {}),
        pod_template={
            "metadata": {
                "labels": dict((pod_metadata.labels if pod_metadata else None) or {}),
                "annotations": dict((pod_metadata.annotations if pod_metadata else None) or {}),
            },
            "spec": {**extra, "containers": containers},
        },
        pack_domain=service.topologyConstraint.packDomain if service.topologyConstraint else None,
        model_ref=service.modelRef.name if service.modelRef else None,
    )


def merge_envs(base: list[dict[str, Any]], override: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Env lists merged by name, ``override`` winning, sorted by name (upstream MergeEnvs)."""
    merged = {e["name"]: e for e in base}
    merged.update({e["name"]: e for e in override})
    return [merged[name] for name in sorted(merged)]


GPU_RESOURCE = "nvidia.com/gpu"


def container_resources(resources: v1alpha1.Resources, existing: dict[str, Any]) -> dict[str, Any]:
    """Dynamo's cpu/memory/gpu/custom resources as container requests/limits; claims are appended."""
    out = copy.deepcopy(existing)
    for part in ("requests", "limits"):
        item = getattr(resources, part)
        if item is None:
            continue
        values = out.setdefault(part, {})
        if item.cpu:
            values["cpu"] = item.cpu
        if item.memory:
            values["memory"] = item.memory
        if item.gpu:
            values[item.gpuType or GPU_RESOURCE] = item.gpu
        values.update(item.custom or {})
    if resources.claims:
        out["claims"] = [*out.get("claims", []), *(c.model_dump(exclude_none=True) for c in resources.claims)]
    return out


def _from_component(component: v1beta1.Component) -> Component:
    template = copy.deepcopy(component.podTemplate or {})
    spec = template.setdefault("spec", {})
    containers = spec.get("containers") or []
    if not any(c.get("name") == MAIN_CONTAINER for c in containers):
        containers = [*containers, {"name": MAIN_CONTAINER}]
    spec["containers"] = containers
    meta = template.setdefault("metadata", {})
    ctype = component.type_
    return Component(
        name=component.name,
        component_type=ctype,
        sub_component_type=None,
        replicas=1 if component.replicas is None else component.replicas,
        node_count=component.multinode.nodeCount if component.multinode else 1,
        labels={},
        annotations={},
        pod_template={
            "metadata": {"labels": dict(meta.get("labels") or {}), "annotations": dict(meta.get("annotations") or {})},
            "spec": spec,
        },
        pack_domain=component.topologyConstraint.packDomain if component.topologyConstraint else None,
        model_ref=component.modelRef.name if component.modelRef else None,
    )
