"""Per-(CRD name, version) cache of everything derived from a schema: structural schema and schema tree.

Converting a CRD version's schema and building its tree take ~60 ms for a DynamoGraphDeployment version, most of
what admitting one manifest costs a fresh process. Both are also kept on disk, by the schema's content and the
code that derives them, under the tooling's cache directory (``functions.tooling.cache``), so that the next
``render`` or ``validate`` reads them back in a few milliseconds.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from collections import OrderedDict
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from functions.tooling.cache import cache_dir, keep

from . import jsconvert, objectmeta, schemanode
from .schemanode import SchemaNode, build
from .structural import StructuralSchema, compile_schema

_MAX_ENTRIES = 128
# The code whose output the disk cache keeps: a change to any of it makes new entries.
_DERIVATION = (Path(jsconvert.__file__), Path(objectmeta.__file__), Path(schemanode.__file__))


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


@cache
def _derivation_digest() -> str:
    digest = hashlib.sha256()
    for source in _DERIVATION:
        digest.update(source.read_bytes())
    return digest.hexdigest()


def _disk_entry(fingerprint: str) -> Path:
    key = hashlib.sha256(f"{fingerprint}:{_derivation_digest()}".encode()).hexdigest()[:32]
    return cache_dir() / "compiled-schemas" / f"{key}.pickle"


def _read(path: Path) -> tuple[SchemaNode, dict[str, Any]] | None:
    """The entry at ``path``; None when there is none, or it does not load (it is then written again).

    The cache directory is the user's own, like the byte-code caches Python itself writes and runs."""
    try:
        node, root = pickle.loads(path.read_bytes())
    except Exception:  # a missing, truncated or foreign file: derive again
        return None
    return (node, root) if isinstance(node, SchemaNode) and isinstance(root, dict) else None


def _derive(crd_name: str, version: str, schema: dict[str, Any], fingerprint: str) -> CompiledVersion:
    path = _disk_entry(fingerprint)
    stored = _read(path)
    if stored is not None:
        node, root = stored
        return CompiledVersion(crd_name, version, node, StructuralSchema(root))
    compiled = CompiledVersion(crd_name, version, build(schema), compile_schema(schema))
    keep(path, pickle.dumps((compiled.node, compiled.structural.root), protocol=pickle.HIGHEST_PROTOCOL))
    return compiled


def compiled_version(crd_name: str, version: str, schema: dict[str, Any]) -> CompiledVersion:
    """Compile ``schema`` once per (CRD name, version), and once per content across processes (on disk).

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
    compiled = _derive(crd_name, version, schema, fingerprint)
    _CACHE[key] = _Entry(schema, fingerprint, compiled)
    _CACHE.move_to_end(key)
    while len(_CACHE) > _MAX_ENTRIES:
        _CACHE.popitem(last=False)
    return compiled


def clear_cache() -> None:
    """Forget the compiled schemas this process holds (the disk entries stay)."""
    _CACHE.clear()
