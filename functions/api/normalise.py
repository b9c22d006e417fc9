"""Normalisation of a DynamoGraphDeployment XR (either API shape) into the ``Graph`` model.

Both shapes share one stored version (the XRD has no conversion webhook), so the shape is
recognised by its content: ``spec.services`` (v1alpha1) or ``spec.components`` (v1beta1).
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import ValidationError

from functions.api import v1alpha1, v1beta1
from functions.api.from_v1alpha1 import component_from_service
from functions.api.from_v1beta1 import component_from_v1beta1
from functions.api.graph import Graph, SpecError

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
        restart_id=parsed.restart.id_ if parsed.restart else None,
        has_topology_constraint=parsed.topologyConstraint is not None,
    )
