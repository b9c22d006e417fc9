"""vLLM multinode executor choice: multiprocessing (``mp``) or Ray (docs/upstream/operator.md §2.4).

Upstream facts (``backend_vllm.go`` ``shouldUseMpBackend``, ``graph.go`` ``propagateDGDAnnotations``,
``featuregate/operator_origin.go``, ``featuregate/gates.go``):

* the DGD's metadata annotations are copied under the service's own annotations (the service wins), for both
  ``nvidia.com/vllm-distributed-executor-backend`` and ``nvidia.com/dynamo-operator-origin-version``;
* the executor annotation is compared case-insensitively; a value other than mp/ray is ignored (falls through);
* otherwise mp iff the origin version parses as a (lenient, Masterminds-style) semantic version >= 1.0.0;
  pre-releases of 1.0.0 are below it; absent or unparsable means ray.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

EXECUTOR_ANNOTATION = "nvidia.com/vllm-distributed-executor-backend"
ORIGIN_VERSION_ANNOTATION = "nvidia.com/dynamo-operator-origin-version"
MP_MIN_ORIGIN = (1, 0, 0)

_SEMVER = re.compile(
    r"v?(?P<major>\d+)(?:\.(?P<minor>\d+))?(?:\.(?P<patch>\d+))?"
    r"(?:-(?P<pre>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?"
)


def origin_at_least(version: str, minimum: tuple[int, int, int]) -> bool:
    """Whether ``version`` parses and is >= ``minimum`` (a pre-release sorts before its release)."""
    match = _SEMVER.fullmatch(version.strip())
    if not match:
        return False
    core = (int(match["major"]), int(match["minor"] or 0), int(match["patch"] or 0))
    if core != minimum:
        return core > minimum
    return match["pre"] is None


def executor_backend(
    service_annotations: Mapping[str, str] | None, graph_annotations: Mapping[str, str] | None
) -> Literal["mp", "ray"]:
    """The vLLM distributed executor for a multinode service."""
    merged = {**(graph_annotations or {}), **(service_annotations or {})}
    explicit = str(merged.get(EXECUTOR_ANNOTATION, "")).lower()
    if explicit == "mp":
        return "mp"
    if explicit == "ray":
        return "ray"
    origin = merged.get(ORIGIN_VERSION_ANNOTATION)
    if origin is not None and origin_at_least(str(origin), MP_MIN_ORIGIN):
        return "mp"
    return "ray"
