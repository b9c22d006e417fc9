"""Drop the fields a structural schema does not know, as the API server does before it stores an object.

Follows k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning (algorithm.go): a field is kept
when the schema declares it (``properties``) or the map declares its values (``additionalProperties``);
below ``x-kubernetes-preserve-unknown-fields`` unknown fields are kept and known ones still pruned;
``apiVersion``, ``kind`` and ``metadata`` of the object and of ``x-kubernetes-embedded-resource`` nodes
are kept. The object's own ``metadata`` is decoded as ObjectMeta, which drops the fields ObjectMeta does
not have. Returns the pruned copy and the paths of what was dropped (``kubectl`` warns about them).
"""

from __future__ import annotations

from typing import Any

from .paths import ROOT, child, index
from .schemanode import SchemaNode

RESOURCE_KEYS = frozenset({"apiVersion", "kind", "metadata"})
OBJECT_META_FIELDS = frozenset(
    {
        "annotations",
        "creationTimestamp",
        "deletionGracePeriodSeconds",
        "deletionTimestamp",
        "finalizers",
        "generateName",
        "generation",
        "labels",
        "managedFields",
        "name",
        "namespace",
        "ownerReferences",
        "resourceVersion",
        "selfLink",
        "uid",
    }
)


def prune(obj: Any, node: SchemaNode) -> tuple[Any, list[str]]:
    """``obj`` (a whole resource) without the fields ``node`` (its ``openAPIV3Schema``) does not declare."""
    dropped: list[str] = []
    if not isinstance(obj, dict):
        return obj, dropped
    out = _prune(obj, node, ROOT, dropped, resource=True)
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        out["metadata"] = {k: v for k, v in meta.items() if k in OBJECT_META_FIELDS}
        dropped.extend(child("metadata", k) for k in meta if k not in OBJECT_META_FIELDS)
    return out, sorted(dropped)


def _prune(
    value: Any, node: SchemaNode | None, path: str, dropped: list[str], resource: bool = False, keep: bool = False
) -> Any:
    """``keep``: the items of a list that preserves unknown fields keep theirs (the API server's skipPrune)."""
    if isinstance(value, dict):
        keep_unknown = keep or (node is not None and node.preserve_unknown)
        resource = resource or (node is not None and node.embedded)
        out: dict[str, Any] = {}
        for key, item in value.items():
            key = str(key)
            if resource and key in RESOURCE_KEYS:
                out[key] = item
                continue
            sub = None if node is None else node.child(key)
            if sub is not None:
                out[key] = _prune(item, sub, child(path, key), dropped)
            elif keep_unknown:
                out[key] = item
            else:
                dropped.append(child(path, key))
        return out
    if isinstance(value, list):
        items = None if node is None else node.items
        preserve = keep or (node is not None and node.preserve_unknown)
        if preserve and items is None:
            return list(value)
        return [_prune(item, items, index(path, i), dropped, keep=preserve) for i, item in enumerate(value)]
    return value
