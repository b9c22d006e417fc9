"""The schema defaults inside the pod specs an XR embeds, which the API server no longer applies.

Upstream's CRDs embed Kubernetes' pod spec schema, and its ``default`` values (a container port's ``protocol:
TCP``, a gRPC probe's ``service: ""``, the ``name: ""`` of a Secret or ConfigMap reference, ``optional: false``
of a file key reference, an iSCSI volume's ``iscsiInterface: default``, the RBD, ScaleIO and Azure disk
defaults) are filled in by the API server at admission: what upstream's operator reads, and copies into the
objects it writes, always has them. Our XRDs serve those pod specs open (``functions/xrd/served.py``), so the
API server stores them as written. Each step fills those defaults in from the kind's full spec schema before it
renders, so the composed objects carry them as upstream's do.

Only the pod specs are defaulted here; everywhere else the served schema keeps its defaults and the API server
applies them. A pod spec is recognised as ``functions/xrd/served.py`` recognises it, by its properties.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from functions.api.schema_check import Schema, load_schema

# The properties every PodSpec schema has and no other Dynamo type has all of.
POD_SPEC_MARKERS = frozenset({"containers", "initContainers", "volumes", "affinity", "tolerations"})


def is_pod_spec(node: Schema) -> bool:
    properties = node.get("properties")
    return isinstance(properties, dict) and properties.keys() >= POD_SPEC_MARKERS


def with_pod_spec_defaults(value: Any, node: Schema, inside: bool = False) -> Any:
    """``value`` (checked against ``node`` already) with the schema's defaults set where a field inside a pod spec
    is absent or null (the API server prunes a null of a non-nullable field, then defaults it). A new value; the
    input is not changed."""
    if isinstance(value, list) and isinstance(node.get("items"), dict):
        return [with_pod_spec_defaults(item, node["items"], inside) for item in value]
    if not isinstance(value, dict):
        return value
    properties = node.get("properties")
    if not isinstance(properties, dict):
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            return {k: with_pod_spec_defaults(v, extra, inside) for k, v in value.items()}
        return value
    inside = inside or is_pod_spec(node)
    out = {k: with_pod_spec_defaults(v, properties[k], inside) if k in properties else v for k, v in value.items()}
    if inside:
        for name, sub in properties.items():
            if "default" in sub and out.get(name) is None and not (name in out and sub.get("nullable")):
                out[name] = copy.deepcopy(sub["default"])
    return out


def spec_with_pod_spec_defaults(xr: dict[str, Any], schema_file: Path) -> dict[str, Any]:
    """``xr`` with its spec's pod specs defaulted from the kind's spec schema in ``schema_file``."""
    spec = xr.get("spec")
    if not isinstance(spec, dict):
        return xr
    return {**xr, "spec": with_pod_spec_defaults(spec, load_schema(schema_file))}
