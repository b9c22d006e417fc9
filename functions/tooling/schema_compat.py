"""Whether a new XRD would strand objects stored under the old one (docs/upgrading.md).

Upgrading the package replaces each XRD, and with it the CRD the API server validates against. Objects already
stored are not re-validated when that happens: they are read back as they are, and rejected or silently
pruned on their next write. A release must not do that to running graphs. These are the changes that can:

* a version that was served is gone or no longer served: clients and stored objects at it cannot be read at it;
* a field is removed where unknown fields are pruned: its stored values are dropped on the next write;
* a field's type changes, or it becomes required: stored objects without it, or with the old type, fail their
  next update;
* bounds tighten: an enum loses a value, a minimum rises, a maximum, maxLength or maxItems falls, a pattern
  changes: stored values outside them fail their next update;
* a CEL rule (``x-kubernetes-validations``) is added or changed: stored objects may not meet it.

Adding optional fields, versions, enum values, or loosening a bound strands nothing. Pure functions over the
XRD documents; ``function-dynamo xrds --check-against`` and ``scripts/release.sh`` are the callers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

Schema = dict[str, Any]

# bound -> whether a larger new value tightens it (False: a smaller one does)
LOWER_BOUNDS = ("minimum", "minLength", "minItems", "minProperties")
UPPER_BOUNDS = ("maximum", "maxLength", "maxItems", "maxProperties")


def _versions(xrd: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in (xrd.get("spec") or {}).get("versions") or []}


def _schema(version: dict[str, Any]) -> Schema:
    return ((version.get("schema") or {}).get("openAPIV3Schema")) or {}


def _rules(schema: Schema) -> set[str]:
    return {str(r.get("rule")) for r in schema.get("x-kubernetes-validations") or []}


def _schema_changes(path: str, old: Schema, new: Schema) -> Iterator[str]:
    if old.get("type") != new.get("type") and old.get("type") is not None:
        yield f"{path}: type {old.get('type')} -> {new.get('type')}"
        return
    if old.get("x-kubernetes-preserve-unknown-fields") and not new.get("x-kubernetes-preserve-unknown-fields"):
        yield f"{path}: no longer keeps unknown fields (stored ones are pruned on the next write)"
    added_required = sorted(set(new.get("required") or []) - set(old.get("required") or []))
    for name in added_required:
        yield f"{path}.{name}: now required"
    if "enum" in new:
        lost = [v for v in old.get("enum", []) if v not in new["enum"]] if "enum" in old else ["(any value)"]
        if lost:
            yield f"{path}: enum no longer allows {', '.join(map(str, lost))}"
    for bound in LOWER_BOUNDS:
        if bound in new and (bound not in old or new[bound] > old[bound]):
            yield f"{path}: {bound} {old.get(bound, 'unset')} -> {new[bound]}"
    for bound in UPPER_BOUNDS:
        if bound in new and (bound not in old or new[bound] < old[bound]):
            yield f"{path}: {bound} {old.get(bound, 'unset')} -> {new[bound]}"
    if "pattern" in new and new.get("pattern") != old.get("pattern"):
        yield f"{path}: pattern {old.get('pattern', 'unset')!r} -> {new['pattern']!r}"
    for rule in sorted(_rules(new) - _rules(old)):
        yield f"{path}: new validation rule {rule!r}"
    old_props, new_props = old.get("properties") or {}, new.get("properties") or {}
    for name in sorted(old_props):
        if name not in new_props:
            if not new.get("x-kubernetes-preserve-unknown-fields"):
                yield f"{path}.{name}: removed (stored values are pruned on the next write)"
            continue
        yield from _schema_changes(f"{path}.{name}", old_props[name], new_props[name])
    if isinstance(old.get("items"), dict) and isinstance(new.get("items"), dict):
        yield from _schema_changes(f"{path}[*]", old["items"], new["items"])
    old_extra, new_extra = old.get("additionalProperties"), new.get("additionalProperties")
    if isinstance(old_extra, dict) and isinstance(new_extra, dict):
        yield from _schema_changes(f"{path}[*]", old_extra, new_extra)


def stranding_changes(old: dict[str, Any], new: dict[str, Any] | None) -> list[str]:
    """Every change from XRD ``old`` to ``new`` that can strand objects stored under ``old`` (none: safe).

    ``new`` None is the XRD removed from the package: every object of its kind is stranded."""
    name = (old.get("metadata") or {}).get("name", "?")
    if new is None:
        return [f"{name}: the XRD is removed"]
    out = []
    old_versions, new_versions = _versions(old), _versions(new)
    for version_name, version in old_versions.items():
        if version.get("served") is False:
            continue
        after = new_versions.get(version_name)
        if after is None or after.get("served") is False:
            out.append(f"{name} {version_name}: no longer served")
            continue
        out.extend(f"{name} {version_name}: {c}" for c in _schema_changes("", _schema(version), _schema(after)))
    return [c.replace(": .", ": ", 1) for c in out]


def stranding_changes_of_packages(old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]]) -> list[str]:
    """Over two sets of XRDs keyed by name (the old release's and this one's)."""
    return [c for name in sorted(old) for c in stranding_changes(old[name], new.get(name))]
