"""Per-(CRD name, version) cache of everything derived from a schema: structural schema and schema tree."""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from .schemanode import SchemaNode, build
from .structural import StructuralSchema, compile_schema

_MAX_ENTRIES = 128


@dataclass(frozen=True)
class CompiledVersion:
    crd_name: str
    version: str
    node: SchemaNode
    structural: StructuralSchema


@dataclass
class _Entry:
    schema: dict[str, Any]
    fingerprint: str
    compiled: CompiledVersion


_CACHE: OrderedDict[tuple[str, str], _Entry] = OrderedDict()


def _fingerprint(schema: dict[str, Any]) -> str:
    text = json.dumps(schema, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def compiled_version(crd_name: str, version: str, schema: dict[str, Any]) -> CompiledVersion:
    """Compile ``schema`` once per (CRD name, version).

    A cached entry is reused while the same schema object is passed; a different object with the same
    content (e.g. the CRD re-derived or re-loaded) is recognised by a content hash. Mutating a schema
    in place after it was compiled is not detected.
    """
    key = (crd_name, version)
    entry = _CACHE.get(key)
    if entry is not None and entry.schema is schema:
        _CACHE.move_to_end(key)
        return entry.compiled
    fingerprint = _fingerprint(schema)
    if entry is not None and entry.fingerprint == fingerprint:
        entry.schema = schema
        _CACHE.move_to_end(key)
        return entry.compiled
    compiled = CompiledVersion(crd_name, version, build(schema), compile_schema(schema))
    _CACHE[key] = _Entry(schema, fingerprint, compiled)
    _CACHE.move_to_end(key)
    while len(_CACHE) > _MAX_ENTRIES:
        _CACHE.popitem(last=False)
    return compiled


def clear_cache() -> None:
    _CACHE.clear()
