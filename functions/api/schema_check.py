"""The XRD's structural schema, checked by the function itself: an XR that never passed the API server.

Crossplane only sends XRs the API server stored, but a hand-written XR given to ``crossplane render``, or one
stored before a schema change, reaches the function unchecked. ``check_xr_spec`` walks the XR's spec against
its kind's spec schema and raises ``SpecError`` at the first violation, naming the field path
(``spec.components[0].podTemplate.spec.containers[0].image: ...``), so that the renderers only ever see the
shapes they were written for.

It follows the API server's decoding: a ``null`` in a field that is not ``nullable`` counts as absent (the API
server prunes it), and unknown fields are errors (``kubectl``'s strict field validation). What it checks:
``type`` (and ``nullable``), ``x-kubernetes-int-or-string``, ``x-kubernetes-preserve-unknown-fields``,
``properties``/``additionalProperties``/``items``, ``required``, ``enum``, ``pattern``, ``minimum``/``maximum``,
``minLength``/``maxLength``, ``minItems``/``maxItems``, ``minProperties``/``maxProperties`` and list-type
``set``/``map`` uniqueness. CEL rules (``x-kubernetes-validations``) and string formats are left out. Messages
use the wording of the pydantic errors the steps give for the same rules (``Field required``, ``Extra inputs are
not permitted``, ``Input should be greater than or equal to 0``), so a rule reads the same from either check.

The schemas are the XRDs' spec schemas reduced to these keywords (``compact_schema``), one JSON file per kind
written by ``function-dynamo xrds`` beside the kind's step, read once per process when first needed: the
runtime image holds neither the XRD builders nor a JSON Schema library. They keep ``default`` too, which the
check ignores: the steps fill those defaults into the pod specs (``functions/api/pod_defaults.py``).
"""

from __future__ import annotations

import functools
import json
import math
import re
from pathlib import Path
from typing import Any

from functions.api.graph import SpecError
from functions.api.normalise import CROSSPLANE_SPEC_KEYS

Schema = dict[str, Any]

# The keywords the checker reads; ``compact_schema`` keeps only these.
KEYWORDS = frozenset(
    {
        "type",
        "nullable",
        "properties",
        "additionalProperties",
        "items",
        "required",
        "enum",
        "pattern",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "x-kubernetes-int-or-string",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "default",  # not checked: the defaults the step fills into the pod specs (functions/api/pod_defaults.py)
    }
)
_COMBINATORS = ("anyOf", "allOf", "oneOf", "not")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_SHOWN = 60  # characters of a value quoted in a message


def compact_schema(node: Schema) -> Schema:
    """``node`` with only the keywords the checker reads, at every depth (what the per-kind JSON files hold)."""
    out: Schema = {}
    for key, value in node.items():
        if key in _COMBINATORS and not node.get("x-kubernetes-int-or-string"):
            raise ValueError(f"{key} (other than int-or-string's) is not something the schema check reads")
        if key not in KEYWORDS or (key == "x-kubernetes-list-type" and value == "atomic"):
            continue
        if key == "properties":
            out[key] = {name: compact_schema(sub) for name, sub in value.items()}
        elif key in ("additionalProperties", "items") and isinstance(value, dict):
            out[key] = compact_schema(value)
        else:
            out[key] = value
    return out


def spec_schema_file(kind_folder: Path) -> Path:
    """Where a kind's compact spec schema lives: ``functions/kinds/<folder>/<folder>_spec_schema.json``."""
    return kind_folder / f"{kind_folder.name}_spec_schema.json"


@functools.cache
def load_schema(path: Path) -> Schema:
    """The compact spec schema in ``path``, read once per process."""
    return json.loads(path.read_text())


def check_xr_spec(xr: dict[str, Any], schema_file: Path) -> None:
    """Check the XR's spec, without the fields Crossplane adds, against the schema in ``schema_file``; raises
    ``SpecError`` naming the first bad field. A missing spec is left to the step's own checks."""
    spec = xr.get("spec")
    if spec is None:
        return
    if not isinstance(spec, dict):
        raise SpecError(f"spec: must be of type object, not {json_type(spec)}")
    schema = load_schema(schema_file)
    check_value({k: v for k, v in spec.items() if k not in CROSSPLANE_SPEC_KEYS}, schema, "spec")


def check_value(value: Any, node: Schema, path: str) -> None:
    """Check ``value`` against schema ``node``; raises ``SpecError`` naming the first bad field below ``path``."""
    try:
        _check(value, node)
    except _Invalid as err:
        raise SpecError(f"{path}{''.join(reversed(err.where))}: {err}") from None


class _Invalid(Exception):
    """A violation; ``where`` collects the path's segments, innermost first, as it propagates up (paths are built
    only for the one violation reported, not for every field checked)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.where: list[str] = []


def _check(value: Any, node: Schema) -> None:
    if value is None:
        if not node.get("nullable") and (node.get("type") or node.get("x-kubernetes-int-or-string")):
            raise _Invalid(f"must be of type {_expected(node)}, not null")
        return
    if node.get("x-kubernetes-int-or-string"):
        if not (isinstance(value, str) or _is_integer(value)):
            raise _Invalid(f"must be an integer or a string, not {json_type(value)}")
    elif "type" in node and not has_type(value, node["type"]):
        raise _Invalid(f"must be of type {node['type']}, not {json_type(value)}")
    if "enum" in node and not any(_same(value, allowed) for allowed in node["enum"]):
        raise _Invalid(f"Unsupported value: {_shown(value)}: supported values: {', '.join(map(_shown, node['enum']))}")
    if isinstance(value, str):
        _check_string(value, node)
    elif isinstance(value, bool):
        return
    elif isinstance(value, int | float):
        _check_number(value, node)
    elif isinstance(value, list):
        _check_array(value, node)
    elif isinstance(value, dict):
        _check_object(value, node)


def _check_string(value: str, node: Schema) -> None:
    if "minLength" in node and len(value) < node["minLength"]:
        raise _Invalid(f"String should have at least {_count(node['minLength'], 'character')}")
    if "maxLength" in node and len(value) > node["maxLength"]:
        raise _Invalid(f"String should have at most {_count(node['maxLength'], 'character')}")
    if "pattern" in node and not _regex(node["pattern"]).search(value):
        raise _Invalid(f"{_shown(value)} does not match {node['pattern']}")


def _check_number(value: float, node: Schema) -> None:
    if not math.isfinite(value):
        raise _Invalid("must be a finite number")
    if "minimum" in node and value < node["minimum"]:
        raise _Invalid(f"Input should be greater than or equal to {node['minimum']}")
    if "maximum" in node and value > node["maximum"]:
        raise _Invalid(f"Input should be less than or equal to {node['maximum']}")


def _check_array(value: list[Any], node: Schema) -> None:
    if "minItems" in node and len(value) < node["minItems"]:
        raise _Invalid(f"List should have at least {_count(node['minItems'], 'item')}, not {len(value)}")
    if "maxItems" in node and len(value) > node["maxItems"]:
        raise _Invalid(f"List should have at most {_count(node['maxItems'], 'item')}, not {len(value)}")
    items = node.get("items")
    if items is not None:
        for index, item in enumerate(value):
            try:
                _check(item, items)
            except _Invalid as err:
                err.where.append(f"[{index}]")
                raise
    list_type = node.get("x-kubernetes-list-type")
    if list_type in ("map", "set"):
        _check_unique(value, list_type, node.get("x-kubernetes-list-map-keys") or [])


def _check_unique(value: list[Any], list_type: str, keys: list[str]) -> None:
    """No two items of a list-type set, nor two of a list-type map with the same key fields."""
    seen: set[Any] = set()
    for index, item in enumerate(value):
        if list_type == "map" and not isinstance(item, dict):
            continue  # only when the schema gives no item type: nothing to compare
        identity = {k: item[k] for k in keys if k in item} if list_type == "map" else item
        canonical = _canonical(identity)
        if canonical in seen:
            err = _Invalid(f"duplicate entry {_shown(identity)}")
            err.where.append(f"[{index}]")
            raise err
        seen.add(canonical)


def _canonical(value: Any) -> Any:
    """A hashable stand-in for JSON ``value``, equal for equal values (``1`` and ``true`` differ)."""
    if isinstance(value, dict):
        return tuple(sorted((k, _canonical(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("[]", *map(_canonical, value))
    return (type(value) is bool, value)


def _check_object(value: dict[str, Any], node: Schema) -> None:
    properties: Schema = node.get("properties") or {}
    additional = node.get("additionalProperties")
    open_ended = node.get("x-kubernetes-preserve-unknown-fields") is True or additional not in (None, False)
    closed = (node.get("type") == "object" or bool(properties)) and not open_ended
    present = 0
    for key, item in value.items():
        sub = properties.get(key)
        if sub is None and isinstance(additional, dict):
            sub = additional
        if sub is None:
            if closed:
                err = _Invalid("Extra inputs are not permitted")
                err.where.append(_segment(key, declared=False))
                raise err
            present += 1
        elif item is not None or sub.get("nullable"):  # a null the API server would prune counts as absent
            present += 1
            try:
                _check(item, sub)
            except _Invalid as err:
                err.where.append(_segment(key, declared=key in properties))
                raise
    for name in node.get("required") or ():
        if value.get(name) is None and not (name in value and properties.get(name, {}).get("nullable")):
            err = _Invalid("Field required")
            err.where.append(_segment(name))
            raise err
    if "minProperties" in node and present < node["minProperties"]:
        raise _Invalid(f"Object should have at least {_count(node['minProperties'], 'entry', 'entries')}")
    if "maxProperties" in node and present > node["maxProperties"]:
        raise _Invalid(f"Object should have at most {_count(node['maxProperties'], 'entry', 'entries')}")


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _segment(key: str, *, declared: bool = True) -> str:
    """``.key`` for a schema property (or an identifier-like map key), ``[key]`` for other map keys."""
    return f".{key}" if declared or _IDENTIFIER.match(key) else f"[{key}]"


_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "object": (dict,),
    "array": (list,),
    "boolean": (bool,),
    "null": (type(None),),
}


def has_type(value: Any, expected: str) -> bool:
    """JSON Schema's ``type``: an integral float is an ``integer``, ``true`` is neither a number nor an integer."""
    if expected == "integer":
        return _is_integer(value)
    if expected == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, _TYPES.get(expected, object))


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _same(value: Any, allowed: Any) -> bool:
    """JSON equality: ``True`` is not ``1``."""
    return value == allowed and isinstance(value, bool) == isinstance(allowed, bool)


def _expected(node: Schema) -> str:
    return "integer or string" if node.get("x-kubernetes-int-or-string") else str(node.get("type"))


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object" if isinstance(value, dict) else type(value).__name__


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


@functools.lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    """A schema pattern (RE2) as Python ``re``: RE2's ``$`` matches only at the very end, as ``\\Z`` does."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)
