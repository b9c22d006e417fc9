"""A parsed, walkable view of a structural ``openAPIV3Schema`` used for defaulting and CEL.

Each node records the facts the API server uses while walking an object: the structural children
(``properties``, ``additionalProperties``, ``items``), the x-kubernetes-* extensions, ``default``,
``nullable`` and the ``x-kubernetes-validations`` rules (including those inside ``allOf``, which the API
server also evaluates). ``cel_below`` / ``default_below`` let walkers skip subtrees with nothing to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class _Missing:
    """No ``default``: one object, which a pickled tree (``compiled``'s disk cache) refers to by name."""

    def __reduce__(self) -> str:
        return "_MISSING"


_MISSING = _Missing()


@dataclass(eq=False, slots=True)
class SchemaNode:
    type: str | None = None
    properties: dict[str, SchemaNode] = field(default_factory=dict)
    additional: SchemaNode | None = None
    items: SchemaNode | None = None
    preserve_unknown: bool = False
    embedded: bool = False
    int_or_string: bool = False
    nullable: bool = False
    default: Any = _MISSING
    list_type: str | None = None
    map_keys: tuple[str, ...] = ()
    map_type: str | None = None
    format: str | None = None
    rules: tuple[dict[str, Any], ...] = ()
    cel_below: bool = False
    default_below: bool = False

    @property
    def has_default(self) -> bool:
        return self.default is not _MISSING

    @property
    def is_object_with_properties(self) -> bool:
        return bool(self.properties) or self.embedded

    def child(self, key: str) -> SchemaNode | None:
        """Schema of field / map value ``key`` (None for unknown fields)."""
        node = self.properties.get(key)
        if node is None:
            return self.additional
        return node


def _all_of_rules(raw: dict[str, Any]) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = []
    for branch in raw.get("allOf") or []:
        if isinstance(branch, dict):
            rules.extend(branch.get("x-kubernetes-validations") or [])
            rules.extend(_all_of_rules(branch))
    return rules


def build(raw: Any) -> SchemaNode:
    """Parse a raw schema dict into a :class:`SchemaNode` tree."""
    if not isinstance(raw, dict):
        return SchemaNode(preserve_unknown=True)
    node = SchemaNode(
        type=raw.get("type"),
        preserve_unknown=raw.get("x-kubernetes-preserve-unknown-fields") is True,
        embedded=raw.get("x-kubernetes-embedded-resource") is True,
        int_or_string=raw.get("x-kubernetes-int-or-string") is True,
        nullable=raw.get("nullable") is True,
        list_type=raw.get("x-kubernetes-list-type"),
        map_keys=tuple(raw.get("x-kubernetes-list-map-keys") or ()),
        map_type=raw.get("x-kubernetes-map-type"),
        format=raw.get("format"),
        rules=tuple((raw.get("x-kubernetes-validations") or []) + _all_of_rules(raw)),
    )
    if "default" in raw:
        node.default = raw["default"]
    node.properties = {name: build(sub) for name, sub in (raw.get("properties") or {}).items()}
    additional = raw.get("additionalProperties")
    if isinstance(additional, dict):
        node.additional = build(additional)
    items = raw.get("items")
    if isinstance(items, dict):
        node.items = build(items)
    children = [*node.properties.values(), *(c for c in (node.additional, node.items) if c is not None)]
    node.cel_below = bool(node.rules) or any(c.cel_below for c in children)
    node.default_below = any(c.has_default or c.default_below for c in children)
    return node
