"""Bounds on what the tooling reads: a hostile manifest is refused, never expanded, recursed into or echoed in full.

``function-dynamo validate`` runs in CI on manifests from pull requests, ``render`` on files people download:
whatever they are given, they refuse with a message naming the file, the line and the field, in seconds and a
few hundred MB. Every file goes through ``read_limited``, ``check_value_count`` (libyaml's events, before
anything is composed), ``check_yaml_document`` (each document as libyaml composed it, before a Python object is
built) and ``check_document_size`` (``functions.tooling.documents.file_documents``); what is sent through the
pipeline, through ``check_request_depth``, and the objects a render is given (``-e``, ``--observed-resources``)
through ``check_object``.

The limits and where they come from:

- ``MAX_OBJECT_BYTES`` (1.5 MiB): an object whose JSON is larger cannot be stored: etcd refuses requests over
  1.5 MiB (``--max-request-bytes``' default) and the API server stores each object in one. The API server
  refuses a request body over 3 MiB before that (``MAX_REQUEST_BYTES``).
- ``MAX_FILE_BYTES`` (4 MiB): a file is read no further: more than the largest request the API server takes
  (3 MiB), and more than the YAML of an object at etcd's limit.
- ``MAX_NODES``: a YAML document whose aliases would expand it beyond this many values (or whose strings,
  expanded, hold more than ``MAX_OBJECT_BYTES``) is refused before it is built: JSON takes at least two bytes
  per value (``1,``, ``[]``), so no object etcd stores has more. kubectl (sigs.k8s.io/yaml) refuses a
  document of excessive aliasing as well, with a ratio of its own.
- ``MAX_DEPTH`` (100): collections nested deeper are refused where the 101st level starts (libyaml itself
  stops at 1000, deeper than Python recurses).
- ``INT64_MIN``/``INT64_MAX``: the API server decodes a JSON integer as an int64 and refuses one out of
  range; infinity and NaN (YAML's ``.inf``, ``.nan``) have no JSON form at all.
- ``PROTOBUF_RECURSION_LIMIT`` (100): protobuf (upb, as the function decodes its requests; C++ alike) refuses a
  message nested deeper. An object travels to a composition function as a ``google.protobuf.Struct`` inside a
  ``RunFunctionRequest``, where each level of objects takes three messages (Struct, map entry, Value) and
  each list two (ListValue, Value): the messages around it leave a composed, observed or required resource
  ``MAX_RESOURCE_DEPTH`` levels (about 32 levels of objects), measured, and pinned by
  ``tests/test_hostile_input.py``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, BinaryIO

import yaml

from functions.api.echo import shown

MIB = 1024 * 1024
MAX_REQUEST_BYTES = 3 * MIB
MAX_OBJECT_BYTES = 3 * MIB // 2
MAX_FILE_BYTES = 4 * MIB
MAX_NODES = MAX_OBJECT_BYTES // 2 + 1
MAX_DEPTH = 100
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
PROTOBUF_RECURSION_LIMIT = 100
MAX_RESOURCE_DEPTH = PROTOBUF_RECURSION_LIMIT - 3

# The YAML tags a document may hold: those JSON has a form for (a timestamp becomes a string, as with kubectl).
_TAG = "tag:yaml.org,2002:"
_NAMED_TAGS = {_TAG + "binary": "!!binary", _TAG + "set": "!!set", _TAG + "omap": "!!omap", _TAG + "pairs": "!!pairs"}
_MERGE = _TAG + "merge"
_STR = _TAG + "str"
_PLAIN_TAGS = frozenset(_TAG + t for t in ("null", "bool", "timestamp"))  # nothing to check
_SHORT_DECIMAL = re.compile(r"[-+]?[0-9]{1,18}")
# An int64 written any way YAML 1.1 allows (binary digits, underscores) is shorter than this.
_MAX_INT_TEXT = 80

Segment = str | int


class InputRefused(ValueError):
    """What a file or an object holds is beyond the bounds; ``str()`` names the field (and line) and the limit."""


def _size(n: int) -> str:
    return f"{n / MIB:.1f} MiB" if n >= MIB else f"{n / 1024:.1f} KiB" if n >= 1024 else f"{n} bytes"


def _exact(n: int) -> str:
    return f"{_size(n)} ({n:,} bytes)"


def format_path(segments: list[Segment] | tuple[Segment, ...]) -> str:
    """``spec.components[0].podTemplate`` (keys that are not plain words as ``[key]``), each key clipped, and a
    path of more than 12 levels shown by its first 8 and last 2."""
    parts = [f"[{s}]" if isinstance(s, int) else _key(s) for s in segments]
    if len(parts) > 12:
        parts = [*parts[:8], f"…({len(parts) - 10} more levels)…", *parts[-2:]]
    text = ""
    for part in parts:
        text += part if not text or part[0] in "[…" or text.endswith("…") else f".{part}"
    return text or "<root>"


def _key(key: str) -> str:
    text = shown(key, 40)
    return text if text and all(c.isascii() and (c.isalnum() or c in "-_") for c in text) else f"[{text}]"


def _at(segments: list[Segment], node: yaml.Node | None = None) -> str:
    line = f" (line {node.start_mark.line + 1})" if node is not None and node.start_mark is not None else ""
    return f"{format_path(segments)}{line}"


def read_limited(file: Path) -> bytes:
    """The bytes of ``file``, refused unread beyond ``MAX_FILE_BYTES`` (a pipe or device included)."""
    try:
        size = file.stat().st_size
    except OSError:
        size = 0
    if size > MAX_FILE_BYTES:
        raise InputRefused(f"the file is {_exact(size)}, over the {_exact(MAX_FILE_BYTES)} this command reads")
    with file.open("rb") as f:
        return read_stream_limited(f)


def read_stream_limited(stream: BinaryIO) -> bytes:
    """The bytes of ``stream`` (standard input, an open file), refused beyond ``MAX_FILE_BYTES``, the rest unread."""
    data = stream.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise InputRefused(f"the file is over the {_exact(MAX_FILE_BYTES)} this command reads")
    return data


_VALUE_EVENTS = (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent, yaml.AliasEvent)


def check_value_count(data: bytes) -> None:
    """Refuse a document of more than ``MAX_NODES`` values as written (an alias counted once), reading libyaml's
    events only: before anything is composed, which takes hundreds of bytes of memory per value."""
    values, start = 0, 0
    for event in yaml.parse(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        if isinstance(event, yaml.DocumentStartEvent):
            values, start = 0, event.start_mark.line + 1
        elif isinstance(event, _VALUE_EVENTS):
            values += 1
            if values > MAX_NODES:
                raise InputRefused(
                    f"the document at line {start} holds more than {MAX_NODES:,} values (by line "
                    f"{event.start_mark.line + 1}), more than an object of at most {_exact(MAX_OBJECT_BYTES)} of "
                    "JSON can hold (etcd's limit)"
                )


class _Walk:
    """One pass over a composed YAML document: each collection's expanded size and height once (an alias is the
    node it names, met again), so that an alias bomb costs what it is written in."""

    def __init__(self, loader: yaml.BaseConstructor) -> None:
        self.loader = loader
        self.sizes: dict[int, tuple[int, int, int]] = {}  # id(collection) -> (values, string characters, height)
        self.open: set[int] = set()  # the collections being walked: met again, they contain themselves
        self.aliases = 0
        self.path: list[Segment] = []  # where the walk is

    def collection(self, node: yaml.CollectionNode, depth: int) -> tuple[int, int, int]:
        key = id(node)
        if key in self.open:
            raise InputRefused(
                f"{_at(self.path, node)}: an alias names a collection it is inside of: "
                "the value would be infinite (JSON has no form for it)"
            )
        known = self.sizes.get(key)
        if known is not None:
            self.aliases += 1
            if depth + known[2] > MAX_DEPTH:
                raise InputRefused(f"{_at(self.path, node)}: an alias nests a value more than {MAX_DEPTH} levels deep")
            return known
        if depth > MAX_DEPTH:
            raise InputRefused(f"{_at(self.path, node)}: nested more than {MAX_DEPTH} levels deep")
        if node.tag in _NAMED_TAGS:
            raise InputRefused(f"{_at(self.path, node)}: a YAML {_NAMED_TAGS[node.tag]} value has no JSON form")
        self.open.add(key)
        values, chars, height = 1, 0, 0
        if isinstance(node, yaml.SequenceNode):
            children = [(item, i) for i, item in enumerate(node.value)]
        else:
            children = []
            for k, v in node.value:
                children.append((k, "<key>"))
                merge = k.tag == _MERGE
                children.append((v, "<<" if merge else k.value if isinstance(k, yaml.ScalarNode) else "<key>"))
        for child, segment in children:
            self.path.append(segment)
            if isinstance(child, yaml.ScalarNode):
                values += 1
                if child.tag == _STR:
                    chars += len(child.value)
                    if len(child.value) > MAX_OBJECT_BYTES:
                        self.oversize(child, 1, len(child.value))
                elif child.tag not in _PLAIN_TAGS:
                    self.scalar(child)
            else:
                sub = self.collection(child, depth + 1)
                values, chars, height = values + sub[0], chars + sub[1], max(height, sub[2] + 1)
            self.path.pop()
        self.open.discard(key)
        size = self.sizes[key] = (values, chars, height)
        if values > MAX_NODES or chars > MAX_OBJECT_BYTES:
            self.oversize(node, values, chars)
        return size

    def oversize(self, node: yaml.Node, values: int, chars: int) -> None:
        what = f"more than {MAX_NODES:,} values" if values > MAX_NODES else f"{chars:,} characters of strings"
        how = "its aliases expand it to" if self.aliases else "it holds"
        if isinstance(node, yaml.ScalarNode):
            how, what = "a string of", f"{chars:,} characters"
        raise InputRefused(
            f"{_at(self.path, node)}: {how} {what}, more than an object of at most {_size(MAX_OBJECT_BYTES)} "
            f"({MAX_OBJECT_BYTES:,} bytes) of JSON can hold (etcd's limit)"
            f"{'; kubectl refuses such aliasing too' if self.aliases else ''}"
        )

    def scalar(self, node: yaml.ScalarNode) -> None:
        """Refuse a scalar JSON cannot carry: an integer out of int64's range, infinity, NaN, a !!binary."""
        text = node.value
        if node.tag == _TAG + "int":
            if _SHORT_DECIMAL.fullmatch(text):
                return  # at most 18 digits: within range
            number = None
            if len(text) <= _MAX_INT_TEXT:
                try:
                    number = self.loader.construct_yaml_int(node)
                except ValueError:
                    raise InputRefused(f"{_at(self.path, node)}: {shown(text, 20)} is not an integer") from None
            if number is None or not INT64_MIN <= number <= INT64_MAX:
                raise InputRefused(
                    f"{_at(self.path, node)}: the integer {shown(text, 20)} is out of range "
                    f"(a 64-bit integer, {INT64_MIN} to {INT64_MAX})"
                )
        elif node.tag == _TAG + "float":
            try:
                value = self.loader.construct_yaml_float(node)
            except ValueError:
                raise InputRefused(f"{_at(self.path, node)}: {shown(text, 20)} is not a number") from None
            if not math.isfinite(value):
                what = "not a number" if math.isnan(value) else "infinite"
                raise InputRefused(
                    f"{_at(self.path, node)}: {shown(text, 20)} is {what}: JSON has no form for it "
                    "(quote it to make it a string)"
                )
        elif node.tag in _NAMED_TAGS:
            raise InputRefused(f"{_at(self.path, node)}: a YAML {_NAMED_TAGS[node.tag]} value has no JSON form")


def check_yaml_document(node: yaml.Node, loader: yaml.BaseConstructor) -> None:
    """Refuse a composed document (``InputRefused``, naming the path and line) that nests deeper than
    ``MAX_DEPTH``, contains itself through an alias, expands beyond ``MAX_NODES`` values or ``MAX_OBJECT_BYTES``
    of strings, or holds a number out of int64's range, infinity, NaN, or a value JSON has no form for.
    ``loader`` reads the numbers as it will when it builds the document."""
    walk = _Walk(loader)
    if isinstance(node, yaml.ScalarNode):
        walk.scalar(node)
    else:
        walk.collection(node, 1)


def check_document_size(doc: Any) -> None:
    """Refuse a document whose JSON is over ``MAX_OBJECT_BYTES``, saying its size and the limit."""
    size = len(json.dumps(doc, separators=(",", ":"), ensure_ascii=False, default=str).encode())
    if size > MAX_OBJECT_BYTES:
        raise InputRefused(
            f"the object is {_exact(size)} as JSON, over the {_exact(MAX_OBJECT_BYTES)} an object may be "
            f"(etcd's request limit; the API server refuses requests over {_size(MAX_REQUEST_BYTES)})"
        )


def check_request_depth(doc: Any) -> None:
    """Refuse an object that protobuf cannot carry in a ``RunFunctionRequest``: nested beyond
    ``MAX_RESOURCE_DEPTH`` messages, naming the path where it passes the limit."""
    stack: list[tuple[Any, tuple[Segment, ...], int]] = [(doc, (), 0)]
    while stack:
        value, path, level = stack.pop()  # ``level``: the message level of the Value holding ``value``
        if isinstance(value, dict):
            deepest = level + 1  # its Struct (the root: the Resource's Struct, at level 1); a map entry, then
            children = [(v, (*path, str(k)), deepest + 2) for k, v in value.items()]  # each value's Value
        elif isinstance(value, list):
            deepest = level + 1  # its ListValue, then each item's Value
            children = [(v, (*path, i), deepest + 1) for i, v in enumerate(value)]
        else:
            deepest, children = level, []
        if deepest > MAX_RESOURCE_DEPTH:
            raise InputRefused(
                f"{format_path(list(path))}: nested too deeply for a composition function's request: protobuf "
                f"decodes {PROTOBUF_RECURSION_LIMIT} nested messages at most, {MAX_RESOURCE_DEPTH} of them for an "
                "object, and each level of objects takes 3, each list 2 (about 32 levels of objects)"
            )
        stack.extend(reversed(children))


def check_object(doc: Any) -> None:
    """Refuse what cannot be an object in a cluster, as a render's ``-e`` or observed resource must be: a
    mapping with string ``apiVersion``, ``kind`` and ``metadata.name``, string labels and annotations,
    string keys and JSON values throughout, that protobuf can carry (``check_request_depth``)."""
    if not isinstance(doc, dict):
        raise InputRefused(f"<root>: must be a Kubernetes object (a mapping), not {_kind(doc)}")
    for field in ("apiVersion", "kind"):
        if not isinstance(doc.get(field), str) or not doc[field]:
            raise InputRefused(f"{field}: must be a non-empty string, not {_kind(doc.get(field))}")
    meta = doc.get("metadata")
    if not isinstance(meta, dict):
        raise InputRefused(f"metadata: must be a mapping, not {_kind(meta)}")
    if not isinstance(meta.get("name"), str) or not meta["name"]:
        raise InputRefused(f"metadata.name: must be a non-empty string, not {_kind(meta.get('name'))}")
    if meta.get("namespace") is not None and not isinstance(meta["namespace"], str):
        raise InputRefused(f"metadata.namespace: must be a string, not {_kind(meta['namespace'])}")
    for field in ("labels", "annotations"):
        entries = meta.get(field)
        if entries is None:
            continue
        if not isinstance(entries, dict):
            raise InputRefused(f"metadata.{field}: must be a mapping of strings, not {_kind(entries)}")
        for key, value in entries.items():
            if not isinstance(value, str):
                raise InputRefused(
                    f"{format_path(['metadata', field, str(key)])}: must be a string, not {_kind(value)}"
                )
    _check_json(doc, [])
    check_request_depth(doc)


def _check_json(value: Any, path: list[Segment]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InputRefused(f"{format_path([*path, str(key)])}: a key must be a string, not {_kind(key)}")
            _check_json(item, [*path, key])
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_json(item, [*path, i])
    elif value is not None and not isinstance(value, str | int | float | bool):
        raise InputRefused(f"{format_path(path)}: {_kind(value)} has no JSON form here (quote it to make it a string)")


def _kind(value: Any) -> str:
    """How a message names a value's type, with the value itself when it is short."""
    if value is None:
        return "missing"
    if isinstance(value, dict | list):
        return "a mapping" if isinstance(value, dict) else "a list"
    kind = {str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(type(value))
    return f"{kind or f'a {type(value).__name__}'} ({shown(value, 40)})"
