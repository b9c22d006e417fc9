"""Copy an object the way the API server decodes it: prune non-nullable nulls, then apply defaults.

Follows k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting (prunenulls.go, algorithm.go):
a ``null`` in a field whose schema is not ``nullable`` and has no ``default`` is dropped; a missing field,
or a non-nullable ``null`` field, with a ``default`` gets a deep copy of the default, and defaulting
continues inside defaulted values. YAML-only scalars (dates, timestamps) become RFC 3339 strings, as they
would after YAML -> JSON conversion, so the result is plain JSON data.
"""

from __future__ import annotations

import copy
import datetime
from typing import Any

from .schemanode import SchemaNode


def _scalar(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.UTC)
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, datetime.date):
        return value.isoformat()
    return value


def _plain(value: Any) -> Any:
    """Deep copy of data with no schema (unknown or preserved fields)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return _scalar(value)


def _drops_null(node: SchemaNode | None) -> bool:
    return node is not None and not node.nullable and not node.has_default


def _needs_default(value: Any, node: SchemaNode) -> bool:
    return node.has_default and value is None and not node.nullable


def prepare(value: Any, node: SchemaNode | None) -> Any:
    """Return a defaulted, null-pruned deep copy of ``value`` for schema ``node``."""
    if node is None:
        return _plain(value)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            key = str(key)
            sub = node.child(key)
            if item is None and _drops_null(sub):
                continue
            if sub is not None and _needs_default(item, sub):
                item = copy.deepcopy(sub.default)
            out[key] = prepare(item, sub)
        if node.default_below:
            for key, sub in node.properties.items():
                if sub.has_default and key not in out:
                    out[key] = prepare(copy.deepcopy(sub.default), sub)
        return out
    if isinstance(value, list | tuple):
        items = node.items
        result = []
        for item in value:
            if items is not None and _needs_default(item, items):
                item = copy.deepcopy(items.default)
            result.append(prepare(item, items))
        return result
    return _scalar(value)
