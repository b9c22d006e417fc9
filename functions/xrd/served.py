"""The schema an XRD gives the API server: the full schema, with the embedded Kubernetes pod specs left open.

Every pod spec the Dynamo API embeds (a v1beta1 component's ``podTemplate.spec``, a v1alpha1 service's
``extraPodSpec``, a checkpoint job's pod template, a DGDR's profiling job template) carries the whole
``PodSpec`` schema: about 70 KB of JSON each, three quarters of the DynamoGraphDeployment's. The API server
keeps every version of every such schema several times over (the XRD object and its history in the watch
cache, the CRD Crossplane derives, its structural schema, validators and OpenAPI), which took its memory
from 0.5 GiB to 1.5 GiB once the package was installed (docs/performance.md).

So the XRDs the packages ship serve those pod specs open: inside a pod spec, every object without a CEL rule
of its own or below it becomes ``type: object`` with ``x-kubernetes-preserve-unknown-fields``; scalars,
lists of scalars, string maps and the nodes that lead to a rule (the v1beta1 containers' image rules) keep
their schema. The full schema is not lost: each kind's step checks the XR's spec against it before
rendering (``functions/api/schema_check.py``, from the per-kind files ``function-dynamo xrds`` writes from
the full XRDs), so a wrong field in a pod spec is refused by the function, naming the field, instead of by
the API server. docs/deviations.md says what that changes for a user.
"""

from __future__ import annotations

import copy
from typing import Any

from functions.api.pod_defaults import is_pod_spec

Schema = dict[str, Any]

OPEN_OBJECT: Schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
RULES = "x-kubernetes-validations"


def served_xrd(xrd: dict[str, Any]) -> dict[str, Any]:
    """``xrd`` with every version's schema as ``served_schema`` gives it."""
    out = copy.deepcopy(xrd)
    for version in out["spec"]["versions"]:
        schema = version.get("schema") or {}
        if "openAPIV3Schema" in schema:
            schema["openAPIV3Schema"] = served_schema(schema["openAPIV3Schema"])
    return out


def served_schema(node: Schema) -> Schema:
    """``node`` with each pod spec found in it opened (``open_pod_spec``); everything else as it is."""
    if is_pod_spec(node):
        return open_pod_spec(node)
    properties = node.get("properties")
    out = dict(node)
    if isinstance(properties, dict):
        out["properties"] = {name: served_schema(sub) for name, sub in properties.items()}
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            out[key] = served_schema(node[key])
    return out


def open_pod_spec(node: Schema) -> Schema:
    """A pod spec's schema with its objects open, except those on the way to a CEL rule."""
    if not _has_rules(node):
        return _open(node)
    out = dict(node)
    if isinstance(node.get("properties"), dict):
        out["properties"] = {name: open_pod_spec(sub) for name, sub in node["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            out[key] = open_pod_spec(node[key])
    return out


def _open(node: Schema) -> Schema:
    """An object with declared properties becomes an open object; a list of them, a list of open objects
    (without its list-type, whose map keys the open items no longer declare). Anything else is kept."""
    if "properties" in node:
        opened = dict(OPEN_OBJECT)
        if node.get("nullable"):
            opened["nullable"] = True
        return opened
    items = node.get("items")
    if node.get("type") == "array" and isinstance(items, dict) and "properties" in items:
        kept = {k: v for k, v in node.items() if k in ("type", "nullable", "maxItems", "minItems")}
        return {**kept, "items": dict(OPEN_OBJECT)}
    return node


def _has_rules(node: Any) -> bool:
    if not isinstance(node, dict):
        return False
    if node.get(RULES):
        return True
    children = list((node.get("properties") or {}).values())
    children += [node[k] for k in ("items", "additionalProperties") if isinstance(node.get(k), dict)]
    return any(_has_rules(child) for child in children)
