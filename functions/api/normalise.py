"""Normalisation of a DynamoGraphDeployment XR (either API shape) into the ``Graph`` model.

Both shapes share one stored version (the XRD has no conversion webhook), so the shape is
recognised by its content: ``spec.services`` (v1alpha1) or ``spec.components`` (v1beta1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from functions.api import v1alpha1, v1beta1
from functions.api.from_v1alpha1 import component_from_service
from functions.api.from_v1beta1 import component_from_v1beta1
from functions.api.graph import Graph, SpecError, json_copy

CLAIM_NAME_LABEL = "crossplane.io/claim-name"
CLAIM_NAMESPACE_LABEL = "crossplane.io/claim-namespace"
# A composite composed by another (a DCD by its DGD) has no claim; these name the object it stands for.
# Crossplane would overwrite claim labels with the parent's claim, so annotations carry them.
COMPOSED_NAME_ANNOTATION = "dynamo.fn.crossplane.io/claim-name"
COMPOSED_NAMESPACE_ANNOTATION = "dynamo.fn.crossplane.io/claim-namespace"
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

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


def validation_error(exc: ValidationError, prefix: str) -> SpecError:
    lines = [f"{_error_path(e, prefix)}: {e['msg']}" for e in exc.errors(include_url=False)]
    return SpecError("; ".join(lines))


M = TypeVar("M", bound=BaseModel)


def parse_xr_spec(xr: dict[str, Any], model: type[M]) -> M:
    """The XR's spec, without Crossplane's fields, as ``model``; raises ``SpecError`` naming each bad field."""
    raw = {k: v for k, v in (xr.get("spec") or {}).items() if k not in CROSSPLANE_SPEC_KEYS}
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(exc, "spec") from None


def spec_shape(spec: dict[str, Any]) -> str:
    has_services, has_components = "services" in spec, "components" in spec
    if has_services == has_components:
        raise SpecError(
            "spec: exactly one of spec.services (v1alpha1 shape) or spec.components (v1beta1 shape) must be set"
        )
    return "v1alpha1" if has_services else "v1beta1"


def _object(value: Any, path: str) -> dict[str, Any]:
    """``value`` when it is an object, {} when absent; an API server never passes anything else."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SpecError(f"{path}: must be an object, not {type(value).__name__}")
    return value


def _identity(sources: tuple[tuple[dict[str, Any], str, str], ...], pattern: re.Pattern[str], rule: str) -> Any:
    """The first set value among (object, key, field path) ``sources``, checked against ``pattern``."""
    for obj, key, path in sources:
        value = obj.get(key)
        if value:
            if not isinstance(value, str) or len(value) > 253 or not pattern.match(value):
                raise SpecError(f"{path}: {value!r} is not {rule}")
            return value
    return None


@dataclass(frozen=True)
class ClaimedObject:
    """What every composite of this package reads first: its claim's identity and its Dynamo spec."""

    name: str
    namespace: str
    labels: dict[str, Any]
    annotations: dict[str, Any]
    spec: dict[str, Any]  # without the fields Crossplane adds
    # The XR itself is namespaced (the default package): what it composes lives in its namespace, and the
    # composites it nests are the upstream kinds under upstream's names. Otherwise it is a claim's cluster XR.
    namespaced: bool = False


def claimed_object(xr: dict[str, Any], kind: str, *, string_annotations: bool = False) -> ClaimedObject:
    """The claim's name and namespace (claimRef, the composed-identity annotations, claim labels, then metadata),
    each checked; raises ``SpecError``."""
    metadata = _object(xr.get("metadata"), "metadata")
    raw_spec = _object(xr.get("spec"), "spec")
    claim = _object(raw_spec.get("claimRef"), "spec.claimRef")
    labels = _object(metadata.get("labels"), "metadata.labels")
    annotations = _object(metadata.get("annotations"), "metadata.annotations")
    if string_annotations:
        for key, value in annotations.items():
            if not isinstance(value, str):
                raise SpecError(f"metadata.annotations[{key}]: must be a string, not {type(value).__name__}")
    name = _identity(
        (
            (claim, "name", "spec.claimRef.name"),
            (annotations, COMPOSED_NAME_ANNOTATION, f"metadata.annotations[{COMPOSED_NAME_ANNOTATION}]"),
            (labels, CLAIM_NAME_LABEL, f"metadata.labels[{CLAIM_NAME_LABEL}]"),
            (metadata, "name", "metadata.name"),
        ),
        DNS1123_SUBDOMAIN,
        "a valid object name (a lowercase RFC 1123 subdomain)",
    )
    namespace = _identity(
        (
            (claim, "namespace", "spec.claimRef.namespace"),
            (annotations, COMPOSED_NAMESPACE_ANNOTATION, f"metadata.annotations[{COMPOSED_NAMESPACE_ANNOTATION}]"),
            (labels, CLAIM_NAMESPACE_LABEL, f"metadata.labels[{CLAIM_NAMESPACE_LABEL}]"),
            (metadata, "namespace", "metadata.namespace"),
        ),
        DNS1123_LABEL,
        "a valid namespace name (a lowercase RFC 1123 label of at most 63 characters)",
    )
    if not name:
        raise SpecError(f"metadata.name: the {kind} has no name")
    if not namespace:
        raise SpecError(f"spec.claimRef.namespace: a {kind} must be claimed in a namespace")
    _check_own_namespace(metadata, claim, annotations, labels, kind)
    spec = {k: without_nulls(v) for k, v in raw_spec.items() if k not in CROSSPLANE_SPEC_KEYS and v is not None}
    return ClaimedObject(name, namespace, labels, annotations, spec, is_namespaced(xr))


def _check_own_namespace(
    metadata: dict[str, Any],
    claim: dict[str, Any],
    annotations: dict[str, Any],
    labels: dict[str, Any],
    kind: str,
) -> None:
    """A namespaced XR acts in its own namespace only; raises ``SpecError`` naming a field that says otherwise.

    The API server sets ``metadata.namespace``; its labels and annotations are the tenant's to write. Every
    namespace a step reads from (required resources) or composes into follows the claim's namespace, and Crossplane
    pins only what is composed to the XR's namespace, not what a step reads: a tenant naming another namespace there
    would read that namespace's objects with Crossplane's rights (docs/security.md)."""
    own = metadata.get("namespace")
    if not own:
        return  # a claim's cluster-scoped XR: Crossplane writes spec.claimRef, which names the claim's namespace
    for obj, key, path in (
        (claim, "namespace", "spec.claimRef.namespace"),
        (annotations, COMPOSED_NAMESPACE_ANNOTATION, f"metadata.annotations[{COMPOSED_NAMESPACE_ANNOTATION}]"),
        (labels, CLAIM_NAMESPACE_LABEL, f"metadata.labels[{CLAIM_NAMESPACE_LABEL}]"),
    ):
        value = obj.get(key)
        if value and value != own:
            raise SpecError(f"{path}: {value!r} must be the {kind}'s own namespace ({own})")


def is_namespaced(xr: dict[str, Any]) -> bool:
    """A namespaced XR (apiextensions v2), as opposed to the cluster-scoped XR of a claim (or of a nesting XR)."""
    metadata = xr.get("metadata")
    return isinstance(metadata, dict) and bool(metadata.get("namespace")) and not _claim_ref(xr)


def _claim_ref(xr: dict[str, Any]) -> bool:
    spec = xr.get("spec")
    return isinstance(spec, dict) and bool(spec.get("claimRef"))


def without_nulls(value: Any) -> Any:
    """``value`` without the mapping keys whose value is ``null``, at any depth.

    No field of this package's schemas is nullable, so the API server drops such keys before it
    stores the object (``extraPodSpec.containers: null`` is in real recipes); an XR that did not pass
    through it (a test, a render of a raw file) is read the same way instead of crashing the render.
    """
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def graph_claim(xr: dict[str, Any]) -> ClaimedObject:
    """The DGD's identity and spec, as ``graph_from_graph_claim`` reads them."""
    return claimed_object(xr, "DynamoGraphDeployment", string_annotations=True)


def graph_from_xr(xr: dict[str, Any]) -> Graph:
    """Normalise an XDynamoGraphDeployment (or a claim) into a ``Graph``; raises ``SpecError``."""
    return graph_from_graph_claim(graph_claim(xr))


def graph_from_graph_claim(obj: ClaimedObject) -> Graph:
    """``graph_from_xr`` for a caller that also reads the spec as written (``graph_claim(xr).spec``)."""
    name, namespace, spec = obj.name, obj.namespace, obj.spec
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
            # the DGD's own order, as upstream keeps it (the PodCliqueSet's cliques follow it)
            components = tuple(component_from_v1beta1(c, i) for i, c in enumerate(parsed_b.components or []))
            parsed = parsed_b
            graph_envs = parsed_b.env or []
            pack_domain = parsed_b.topologyConstraint.packDomain if parsed_b.topologyConstraint else None
    except ValidationError as exc:
        raise validation_error(exc, "spec") from None
    if not components:
        raise SpecError(f"spec.{'services' if shape == 'v1alpha1' else 'components'}: must not be empty")
    return Graph(
        name=name,
        namespace=namespace,
        namespaced=obj.namespaced,
        shape=shape,
        components=components,
        backend_framework=parsed.backendFramework,
        labels=dict(parsed.labels or {}),
        annotations=dict(parsed.annotations or {}),
        envs=tuple(json_copy(graph_envs)),
        metadata_annotations=dict(obj.annotations),
        pack_domain=pack_domain,
        priority_class_name=parsed.priorityClassName,
        restart_id=parsed.restart.id_ if parsed.restart else None,
        has_topology_constraint=parsed.topologyConstraint is not None,
    )
