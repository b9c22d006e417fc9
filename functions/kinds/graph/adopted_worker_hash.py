"""A graph's worker hash, kept from the upstream operator when the graph moved over from it.

The worker hash names a graph's worker generation: it is in every worker's pod labels and environment
(``nvidia.com/dynamo-worker-hash``, ``DYN_NAMESPACE_WORKER_SUFFIX``) and, on the component pathway, in the
worker component deployments' names. The operator and this package hash the same inputs differently (a
row of docs/deviations.md), so a graph that changed hands would roll every worker once, for a name alone.

The operator records the hash of the generation it runs in the graph's own annotation
``nvidia.com/current-worker-hash-v2`` (``nvidia.com/current-worker-hash`` on graphs from its 1.2 line), and
``migrate release`` carries annotations over. So the first time the render step sees such a graph it keeps the
operator's hash, and remembers in ``status.adoptedWorkerHash`` which spec it kept it for (our own hash of that
spec). As long as our hash of the spec is that one, the operator's hash stays; once the workers' spec changes,
the graph moves to our hash (the change rolls the workers anyway) and never back to the annotation, which by then
names a generation that no longer runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from functions.api.graph import Graph
from functions.kinds.graph.component_pathway import raw_components, worker_hash

STATUS_FIELD = "adoptedWorkerHash"
# The operator's record of the generation it runs, newest form first.
OPERATOR_HASH_ANNOTATIONS = ("nvidia.com/current-worker-hash-v2", "nvidia.com/current-worker-hash")
_HASH = re.compile(r"^[0-9a-f]{8}$")  # the operator's own sentinel values ("legacy") are not hashes


def operator_worker_hash(annotations: Mapping[str, str]) -> str | None:
    """The worker hash the operator recorded on the graph, or None."""
    for key in OPERATOR_HASH_ANNOTATIONS:
        value = annotations.get(key)
        if isinstance(value, str) and _HASH.match(value):
            return value
    return None


def resolve_worker_hash(
    ours: str, annotations: Mapping[str, str], observed_status: Mapping[str, Any]
) -> tuple[str, dict[str, str] | None]:
    """The worker hash to render with, and what to keep in ``status.adoptedWorkerHash`` (None: nothing)."""
    kept = observed_status.get(STATUS_FIELD)
    if isinstance(kept, dict) and isinstance(kept.get("hash"), str) and isinstance(kept.get("for"), str):
        record = {"hash": kept["hash"], "for": kept["for"]}
        return (record["hash"] if record["for"] == ours else ours), record
    adopted = operator_worker_hash(annotations)
    if adopted is None or adopted == ours:
        return ours, None
    return adopted, {"hash": adopted, "for": ours}


def graph_worker_hash(
    graph: Graph, spec: Mapping[str, Any], observed_status: Mapping[str, Any]
) -> tuple[str, dict[str, str] | None]:
    """``resolve_worker_hash`` for ``graph`` as written in ``spec``: what the render and status steps both use."""
    ours = worker_hash(graph, raw_components(graph, dict(spec)))
    return resolve_worker_hash(ours, graph.metadata_annotations, observed_status)
