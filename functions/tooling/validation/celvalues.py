"""Map JSON data to the values CEL rules see, following the schema like the API server.

Follows k8s.io/apiserver/pkg/cel/common/valuesunstructured.go and schemas.go:

* object properties are exposed under CEL-escaped names (``namespace`` -> ``__namespace__``,
  ``foo-bar`` -> ``foo__dash__bar``, see k8s.io/apiserver/pkg/cel/escaping.go); unknown fields and
  ``null`` fields of objects with properties are invisible (``has()`` is false);
* the resource root and embedded resources expose ``apiVersion``, ``kind`` and ``metadata.name`` /
  ``metadata.generateName`` only;
* ``type: number`` values are doubles; strings with ``format: date``/``date-time`` are timestamps,
  ``duration`` durations and ``byte`` bytes (passed as protobuf well-known types, which cel-expr-python
  unwraps to CEL timestamp/duration; plain ``datetime`` objects are only accepted as top-level variables).
"""

from __future__ import annotations

import re
from typing import Any

from google.protobuf import duration_pb2, timestamp_pb2

from .formats import parse_base64, parse_date, parse_datetime, parse_duration
from .schemanode import SchemaNode

_RESERVED = frozenset(
    {
        "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if",
        "import", "let", "loop", "package", "namespace", "return", "var", "void", "while",
    }
)  # fmt: skip
_SIMPLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ESCAPABLE = re.compile(r"^[A-Za-z_.\-/][A-Za-z0-9_.\-/]*$")
_EXPAND = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}
_EXPAND_RE = re.compile(r"__|[./-]")
_META_VISIBLE = ("name", "generateName")
_TYPE_META = frozenset({"apiVersion", "kind", "metadata"})

Memo = dict[tuple[int, int], Any]


def escape(name: str) -> str | None:
    """k8s cel.Escape: the CEL identifier for a property name, or None when it cannot be accessed."""
    if not name or name[0].isdigit():
        return None
    if name in _RESERVED:
        return f"__{name}__"
    if _SIMPLE.match(name) and "__" not in name:
        return name
    if not _ESCAPABLE.match(name):
        return None
    return _EXPAND_RE.sub(lambda m: _EXPAND[m.group(0)], name)


def _string(value: str, fmt: str | None) -> Any:
    if fmt in ("date-time", "datetime", "date"):
        parsed = parse_datetime(value) if fmt != "date" else parse_date(value)
        if parsed is not None:
            ts = timestamp_pb2.Timestamp()
            ts.FromDatetime(parsed)
            return ts
    elif fmt == "duration":
        delta = parse_duration(value)
        if delta is not None:
            du = duration_pb2.Duration()
            du.FromTimedelta(delta)
            return du
    elif fmt == "byte":
        raw = parse_base64(value)
        if raw is not None:
            return raw
    return value


def _type_meta(value: dict[str, Any], out: dict[str, Any]) -> None:
    for key in ("apiVersion", "kind"):
        if isinstance(value.get(key), str):
            out[key] = value[key]
    meta = value.get("metadata")
    if isinstance(meta, dict):
        out["metadata"] = {k: meta[k] for k in _META_VISIBLE if isinstance(meta.get(k), str)}


def to_cel(value: Any, node: SchemaNode | None, memo: Memo, *, resource_root: bool = False) -> Any:
    """The CEL view of ``value`` (already defaulted) under schema ``node``."""
    if value is None or node is None or node.int_or_string:
        return value
    if isinstance(value, dict | list):
        key = (id(value), id(node))
        if key in memo:
            return memo[key]
        converted = _container(value, node, memo, resource_root or node.embedded)
        memo[key] = converted
        return converted
    if isinstance(value, str):
        return _string(value, node.format)
    if node.type == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _container(value: dict[str, Any] | list[Any], node: SchemaNode, memo: Memo, with_type_meta: bool) -> Any:
    if isinstance(value, list):
        return [to_cel(item, node.items, memo) for item in value]
    if node.properties or with_type_meta:
        out: dict[str, Any] = {}
        if with_type_meta:
            _type_meta(value, out)
        for name, item in value.items():
            sub = node.properties.get(name)
            if sub is None or item is None or (with_type_meta and name in _TYPE_META):
                continue
            escaped = escape(name)
            if escaped is not None:
                out[escaped] = to_cel(item, sub, memo)
        return out
    if node.additional is not None:
        return {k: to_cel(v, node.additional, memo) for k, v in value.items()}
    return value
