"""Checkpoint IDs as upstream computes them (docs/upstream/checkpoint-gms-dgdr-model.md §1.3;
docs/upstream/operator.md §4.3).

Both hash Go ``encoding/json``'s compact output: no spaces, keys in struct order, and ``<``, ``>``, ``&`` (and
U+2028/U+2029) escaped as ``\\u003c``-style sequences, which Python's ``json`` does not do by itself.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

CHECKPOINT_ID_LABEL = "nvidia.com/snapshot-checkpoint-id"
ARTIFACT_VERSION_ANNOTATION = "nvidia.com/snapshot-artifact-version"
_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def go_json(value: Any) -> str:
    """``value`` as Go's json.Marshal writes it (dict order is kept: pass keys in struct order)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for char, escape in _GO_ESCAPES.items():
        text = text.replace(char, escape)
    return text


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def identity_hash(identity: Mapping[str, Any]) -> str:
    """The legacy 16-hex identity hash of a ``spec.identity``."""
    ordered: dict[str, Any] = {
        "model": identity.get("model", ""),
        "backendFramework": identity.get("backendFramework", ""),
    }
    if identity.get("dynamoVersion"):
        ordered["dynamoVersion"] = identity["dynamoVersion"]
    ordered["tensorParallelSize"] = identity.get("tensorParallelSize") or 1
    ordered["pipelineParallelSize"] = identity.get("pipelineParallelSize") or 1
    if identity.get("dtype"):
        ordered["dtype"] = identity["dtype"]
    if identity.get("maxModelLen"):
        ordered["maxModelLen"] = identity["maxModelLen"]
    if identity.get("extraParameters"):
        ordered["extraParameters"] = dict(sorted(identity["extraParameters"].items()))
    return _sha256(go_json(ordered))[:16]


def dgd_checkpoint_id(namespace: str, dgd_name: str, dgd_uid: str, component: str, worker_hash: str) -> str:
    """The 32-hex ID of a DGD's auto checkpoint of one component and worker generation."""
    ordered: dict[str, str] = {}
    if namespace:
        ordered["namespace"] = namespace
    ordered["dgdName"] = dgd_name
    if dgd_uid:
        ordered["dgdUID"] = dgd_uid
    ordered["componentName"] = component
    if worker_hash:
        ordered["workerHash"] = worker_hash
    return _sha256(go_json(ordered))[:32]


def checkpoint_id(obj: Mapping[str, Any]) -> str:
    """CheckpointID(CR): the first of status.checkpointID, status.identityHash, the ID label, the identity hash."""
    status = obj.get("status") or {}
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for candidate in (status.get("checkpointID"), status.get("identityHash"), labels.get(CHECKPOINT_ID_LABEL)):
        if candidate:
            return str(candidate)
    return identity_hash((obj.get("spec") or {}).get("identity") or {})


def artifact_version(obj: Mapping[str, Any]) -> str:
    return str(((obj.get("metadata") or {}).get("annotations") or {}).get(ARTIFACT_VERSION_ANNOTATION) or "1")
