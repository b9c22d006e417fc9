"""The DGD's operator origin version: what upstream's defaulting webhook stamps at CREATE.

Upstream stamps ``nvidia.com/dynamo-operator-origin-version: <operator version>`` on a new DGD and never
changes it; feature gates (vLLM multiprocessing) compare it with a minimum, so a DGD keeps the behaviour
of the operator that created it. A Crossplane package has no defaulting webhook and may not write the
XR's metadata, so the render step decides the origin once and keeps it in ``status.operatorOriginVersion``.
Later reconciles and package upgrades read it back from there:

1. the DGD's own annotation, when the manifest carries one (migrated from upstream, or pinned in Git);
2. else the value kept in the XR's status;
3. else the value on the composed objects that carry it (the PodCliqueSet's cliques, the component
   deployments), should the status have been lost;
4. else, when those objects exist without it, the DGD predates origin tracking: ``none`` (no gate is on,
   as upstream treats a DGD created before its webhook existed);
5. else the DGD is new: the upstream operator version whose behaviour this package renders.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from functions.api.graph import Graph
from functions.api.operator_config import OPERATOR_VERSION
from functions.kube.backends import ORIGIN_VERSION_ANNOTATION

# What upstream's operator at the reference commit (ai-dynamo/dynamo main at 2a6da14c8) stamps when installed from
# its chart: the chart's appVersion, which the chart passes as the operator's version.
RENDERED_OPERATOR_VERSION = OPERATOR_VERSION
STATUS_FIELD = "operatorOriginVersion"
# Kept in the status of a DGD whose objects were composed before the package tracked the origin.
NO_ORIGIN = "none"


def _stamped(obj: Mapping[str, Any] | None) -> str | None:
    """The origin annotation on a PodCliqueSet's cliques, or a component deployment's pod template (its
    ``spec.annotations`` in the v1alpha1 shape; its metadata before the package stopped stamping it there)."""
    if not obj:
        return None
    spec = obj.get("spec") or {}
    cliques = ((spec.get("template") or {}).get("cliques")) or []
    candidates = [clique.get("annotations") or {} for clique in cliques]
    candidates.append((obj.get("metadata") or {}).get("annotations") or {})
    candidates.append(((spec.get("podTemplate") or {}).get("metadata") or {}).get("annotations") or {})
    candidates.append(spec.get("annotations") if isinstance(spec.get("annotations"), dict) else {})
    for candidate in candidates:
        value = candidate.get(ORIGIN_VERSION_ANNOTATION)
        if isinstance(value, str) and value:
            return value
    return None


def resolve_origin_version(
    annotations: Mapping[str, str],
    observed_status: Mapping[str, Any],
    carriers: list[Mapping[str, Any]],
) -> str:
    """The DGD's origin version (or ``NO_ORIGIN``); ``carriers`` are the observed objects that would carry it."""
    if annotations.get(ORIGIN_VERSION_ANNOTATION):
        return annotations[ORIGIN_VERSION_ANNOTATION]
    kept = observed_status.get(STATUS_FIELD)
    if isinstance(kept, str) and kept:
        return kept
    for obj in carriers:
        stamped = _stamped(obj)
        if stamped:
            return stamped
    return NO_ORIGIN if carriers else RENDERED_OPERATOR_VERSION


def with_origin_version(graph: Graph, origin: str) -> Graph:
    """The graph as upstream's webhook leaves it: the origin annotation present unless there is none."""
    if origin == NO_ORIGIN or graph.metadata_annotations.get(ORIGIN_VERSION_ANNOTATION):
        return graph
    annotations = {**graph.metadata_annotations, ORIGIN_VERSION_ANNOTATION: origin}
    return dataclasses.replace(graph, metadata_annotations=annotations)
