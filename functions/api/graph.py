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


def merge_envs(base: list[dict[str, Any]], override: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Env lists merged by name, ``override`` winning, sorted by name (upstream MergeEnvs)."""
    merged = {e["name"]: e for e in base}
    merged.update({e["name"]: e for e in override})
    return [merged[name] for name in sorted(merged)]


class SpecError(ValueError):
    """Bad input; ``str()`` names the field path and the rule, e.g. ``spec.services.X.replicas: ...``."""


DEFAULT_SHARED_MEMORY = "8Gi"


@dataclass(frozen=True)
class VolumeMount:
    """A PVC mounted into container ``main``; the volume and claim are both named ``name``."""

    name: str
    mount_point: str | None = None
    compilation_cache: bool = False


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
    min_available: int | None = None
    shared_memory: str | None = DEFAULT_SHARED_MEMORY  # size of the /dev/shm volume; None: no volume
    volume_mounts: tuple[VolumeMount, ...] = ()
    frontend_sidecar: dict[str, Any] | None = None
    global_namespace: bool = False
    # Field paths of features this package does not render yet (the step returns a Fatal naming them).
    unsupported: tuple[str, ...] = ()

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
GPU_RESOURCE = "nvidia.com/gpu"


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
            components = tuple(component_from_service(k, s) for k, s in sorted((parsed_a.services or {}).items()))
            parsed: Any = parsed_a
            graph_envs = parsed_a.envs or []
            pack_domain = parsed_a.topologyConstraint.packDomain if parsed_a.topologyConstraint else None
        else:
            parsed_b = v1beta1.DynamoGraphDeploymentSpec.model_validate(spec)
            components = tuple(
                component_from_v1beta1(c, i)
                for i, c in sorted(enumerate(parsed_b.components or []), key=lambda ic: ic[1].name)
            )
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


# The per-version normalisers import the model above; imported last to avoid a cycle.
from functions.api.from_v1alpha1 import component_from_service  # noqa: E402
from functions.api.from_v1beta1 import component_from_v1beta1  # noqa: E402
