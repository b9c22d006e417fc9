"""Convert a CRD ``openAPIV3Schema`` into the JSON Schema dialect checked by ``structural.validate_structure``.

Standard Draft 7 keywords are kept (OpenAPI 3.0 boolean ``exclusiveMinimum``/``exclusiveMaximum`` become
Draft 7 numbers). Kubernetes semantics become private keywords handled in ``structural``:

* ``nullable`` stays and lets ``type``/``enum`` accept ``null``;
* ``x-kubernetes-int-or-string`` -> ``x-int-or-string``;
* a structural object without ``x-kubernetes-preserve-unknown-fields`` or ``additionalProperties`` gets
  ``x-closed`` (the allowed field names) so unknown fields are reported like ``kubectl --validate=strict``;
* ``x-kubernetes-list-type: set|map`` -> ``x-list-type``;
* the root and ``x-kubernetes-embedded-resource`` nodes accept ``apiVersion``/``kind``/``metadata``,
  with ``metadata`` checked as ObjectMeta (``objectmeta``).

Sub-schemas of ``allOf``/``anyOf``/``oneOf``/``not`` are value validations only and are never closed.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

from .objectmeta import objectmeta_schema

_COPIED = (
    "enum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "multipleOf",
    "required",
    "format",
)
_POSIX_CLASSES = {
    "[:alpha:]": "A-Za-z",
    "[:digit:]": "0-9",
    "[:alnum:]": "A-Za-z0-9",
    "[:upper:]": "A-Z",
    "[:lower:]": "a-z",
    "[:space:]": r"\s",
    "[:xdigit:]": "0-9A-Fa-f",
    "[:word:]": r"\w",
}
_TYPE_META = ("apiVersion", "kind", "metadata")

Schema = dict[str, Any]


def go_regex_to_python(pattern: str) -> str | None:
    """Translate an RE2 (Go) pattern to Python ``re``; None when Python cannot compile it.

    ``\\d``/``\\w``/``\\s`` are ASCII-only in RE2, so the result starts with ``(?a)``; a bare ``$`` only
    matches at the end of the text in RE2 (without ``(?m)``), so it becomes ``\\Z``; ``\\z`` becomes
    ``\\Z``, ``(?<name>`` becomes ``(?P<name>`` and POSIX classes such as ``[:alpha:]`` are expanded.
    """
    multiline = re.search(r"\(\?[a-zA-Z]*m", pattern) is not None
    out: list[str] = []
    i, class_start = 0, -1  # class_start: index in ``out`` where the open character class began
    while i < len(pattern):
        char, step = pattern[i], 1
        if char == "\\" and i + 1 < len(pattern):
            char, step = ("\\Z" if pattern[i + 1] == "z" else pattern[i : i + 2]), 2
        elif class_start >= 0:
            posix = next((p for p in _POSIX_CLASSES if pattern.startswith(p, i)), None)
            if posix:
                char, step = _POSIX_CLASSES[posix], len(posix)
            elif char == "]" and len(out) > class_start + (out[class_start : class_start + 1] == ["^"]):
                class_start = -1
        elif char == "[":
            class_start = len(out) + 1
        elif char == "$" and not multiline:
            char = "\\Z"
        elif pattern.startswith("(?<", i) and not pattern.startswith(("(?<=", "(?<!"), i):
            char, step = "(?P<", 3
        out.append(char)
        i += step
    translated = "(?a)" + "".join(out)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(translated)
    except re.error:
        return None
    return translated


def _bounds(raw: Schema, out: Schema) -> None:
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        if bound not in raw or raw[bound] is None:
            continue
        if raw.get(exclusive) is True:
            out[exclusive] = raw[bound]
        else:
            out[bound] = raw[bound]


def _meta_field(raw: Schema, name: str) -> Schema | None:
    sub = ((raw.get("properties") or {}).get("metadata") or {}).get("properties", {}).get(name)
    return convert(sub, structural=False) if isinstance(sub, dict) else None


def convert(raw: Any, *, structural: bool = True, root: bool = False) -> Schema:
    """Convert one schema node (recursively)."""
    if not isinstance(raw, dict):
        return {}
    out: Schema = {}
    for key in _COPIED:
        if raw.get(key) is not None:
            out[key] = raw[key]
    _bounds(raw, out)
    if raw.get("pattern"):
        translated = go_regex_to_python(raw["pattern"])
        if translated is not None:
            out["pattern"] = translated
            out["x-go-pattern"] = raw["pattern"]  # for messages only
    if raw.get("x-kubernetes-int-or-string") is True:
        out["x-int-or-string"] = True
    elif raw.get("type"):
        out["type"] = raw["type"]
    if raw.get("nullable") is True:
        out["nullable"] = True
    for key in ("allOf", "anyOf", "oneOf"):
        if raw.get(key):
            out[key] = [convert(branch, structural=False) for branch in raw[key]]
    if isinstance(raw.get("not"), dict):
        out["not"] = convert(raw["not"], structural=False)

    props = {name: convert(sub, structural=structural) for name, sub in (raw.get("properties") or {}).items()}
    embedded = raw.get("x-kubernetes-embedded-resource") is True
    if root or embedded:
        props.setdefault("apiVersion", {"type": "string"})
        props.setdefault("kind", {"type": "string"})
        props["metadata"] = objectmeta_schema(
            "root" if root else "embedded", _meta_field(raw, "name"), _meta_field(raw, "generateName")
        )
        if embedded and structural:
            out["x-k8s-embedded"] = True
            out["required"] = sorted({*out.get("required", ()), "apiVersion", "kind"})
    if props:
        out["properties"] = props

    additional = raw.get("additionalProperties")
    if isinstance(additional, dict):
        out["additionalProperties"] = convert(additional, structural=structural)
    if isinstance(raw.get("items"), dict):
        out["items"] = convert(raw["items"], structural=structural)

    list_type = raw.get("x-kubernetes-list-type")
    if list_type in ("set", "map"):
        out["x-list-type"] = (list_type, tuple(raw.get("x-kubernetes-list-map-keys") or ()))

    is_object = raw.get("type") == "object" or bool(raw.get("properties")) or root or embedded
    open_ended = raw.get("x-kubernetes-preserve-unknown-fields") is True or additional not in (None, False)
    if structural and is_object and not open_ended:
        out["x-closed"] = frozenset(props)
    return out
