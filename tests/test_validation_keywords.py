"""The structural check's keywords one by one: what JSON Schema means by each, in Kubernetes' wording.

``tests/test_validation_structural.py`` covers a CRD's common rules through ``validate``; this table pins the
semantics the check implements itself (JSON equality, combinators, keywords checked independently), each against
one schema node under ``spec``.
"""

from __future__ import annotations

from typing import Any

import pytest

from functions.tooling.validation.structural import compile_schema, validate_structure


def problems(node: dict[str, Any], value: Any) -> list[tuple[str, str, str]]:
    schema = compile_schema({"type": "object", "properties": {"spec": node}})
    found = validate_structure(schema, {"apiVersion": "v1", "kind": "K", "spec": value})
    return sorted((v.path, v.rule, v.message) for v in found)


INT_OR_STRING = {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
NAMED = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "minLength": 3}}}

CASES: list[tuple[str, dict[str, Any], Any, list[tuple[str, str, str]]]] = [
    ("an integral float is an integer", {"type": "integer"}, 2.0, []),
    ("a fraction is not", {"type": "integer"}, 2.5, [("spec", "type", "must be of type integer, got number")]),
    ("true is not an integer", {"type": "integer"}, True, [("spec", "type", "must be of type integer, got boolean")]),
    ("true is not a number", {"type": "number"}, True, [("spec", "type", "must be of type number, got boolean")]),
    ("null passes a nullable type", {"type": "string", "nullable": True}, None, []),
    (
        "type and enum are checked each on its own",
        {"type": "string", "enum": ["a"]},
        1,
        [
            ("spec", "enum", 'Unsupported value: 1: supported values: "a"'),
            ("spec", "type", "must be of type string, got integer"),
        ],
    ),
    ("enum: 1 is 1.0", {"enum": [1]}, 1.0, []),
    ("enum: true is not 1", {"enum": [1]}, True, [("spec", "enum", "Unsupported value: true: supported values: 1")]),
    ("enum: objects compared deeply", {"enum": [{"a": [1, True]}]}, {"a": [1.0, True]}, []),
    (
        "enum: true inside an object is not 1",
        {"enum": [{"a": 1}]},
        {"a": True},
        [("spec", "enum", 'Unsupported value: {"a": true}: supported values: {"a": 1}')],
    ),
    ("minLength ignores what is not a string", {"minLength": 3}, 7, []),
    ("minLength counts characters", {"type": "string", "minLength": 3}, "äöü", []),
    ("maximum ignores booleans", {"maximum": 0}, True, []),
    (
        "exclusive bound",
        {"type": "number", "minimum": 1, "exclusiveMinimum": True},
        1,
        [("spec", "exclusiveMinimum", "should be greater than 1")],
    ),
    ("multipleOf with a float step", {"type": "number", "multipleOf": 0.5}, 2.5, []),
    (
        "not a multiple",
        {"type": "number", "multipleOf": 0.5},
        2.25,
        [("spec", "multipleOf", "should be a multiple of 0.5")],
    ),
    ("a huge multiple of a small step", {"type": "number", "multipleOf": 0.5}, 1e308, []),
    ("uniqueItems: true and 1 differ", {"type": "array", "uniqueItems": True}, [True, 1], []),
    (
        "uniqueItems: 1 and 1.0 do not",
        {"type": "array", "uniqueItems": True},
        [1, 1.0],
        [("spec", "uniqueItems", "shall not have duplicate items")],
    ),
    (
        "maxItems counts",
        {"type": "array", "maxItems": 1},
        [1, 2],
        [("spec", "maxItems", "Too many: 2: must have at most 1 items")],
    ),
    (
        "minProperties",
        {"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 2},
        {"a": "x"},
        [("spec", "minProperties", "should have at least 2 properties")],
    ),
    (
        "additionalProperties checks every map value, named by its key",
        {"type": "object", "additionalProperties": {"type": "integer"}},
        {"ok": 1, "a b": "x"},
        [("spec[a b]", "type", "must be of type integer, got string")],
    ),
    (
        "required is reported at the missing field, items by index",
        {"type": "array", "items": NAMED},
        [{"name": "abc"}, {}],
        [("spec[1].name", "required", "Required value")],
    ),
    (
        "a closed object names the unknown field",
        NAMED,
        {"name": "abc", "nam": 1},
        [("spec.nam", "unknown field", 'unknown field "nam"')],
    ),
    ("int-or-string takes an int", INT_OR_STRING, 5, []),
    (
        "int-or-string refuses a float, and anyOf says which branch came closest",
        INT_OR_STRING,
        1.5,
        [
            ("spec", "anyOf", "must validate at least one schema (anyOf): must be of type integer, got number"),
            ("spec", "type", "must be of type int-or-string, got number"),
        ],
    ),
    (
        "anyOf: the explanation names the failing field below",
        {"anyOf": [{"type": "string"}, {"type": "object", "properties": {"a": {"type": "integer"}}}]},
        {"a": "x"},
        [("spec", "anyOf", "must validate at least one schema (anyOf): must be of type string, got object")],
    ),
    (
        "anyOf: of two errors as close, the one whose message sorts first",
        {"anyOf": [{"properties": {"a": {"type": "integer"}}}, {"required": ["b"]}]},
        {"a": "x"},
        [("spec", "anyOf", "must validate at least one schema (anyOf): b: Required value")],
    ),
    (
        "oneOf: none valid",
        {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        True,
        [("spec", "oneOf", "must validate one and only one schema (oneOf): must be of type integer, got boolean")],
    ),
    (
        "oneOf: two valid, no explanation",
        {"oneOf": [{"type": "integer"}, {"minimum": 0}]},
        3,
        [("spec", "oneOf", "must validate one and only one schema (oneOf)")],
    ),
    ("oneOf: exactly one", {"oneOf": [{"type": "integer"}, {"type": "string"}]}, 3, []),
    ("not", {"not": {"type": "string"}}, "x", [("spec", "not", "must not validate the schema (not)")]),
    (
        "allOf reports its branches' own errors",
        {"allOf": [{"minimum": 2}, {"maximum": 0}]},
        1,
        [
            ("spec", "maximum", "should be less than or equal to 0"),
            ("spec", "minimum", "should be greater than or equal to 2"),
        ],
    ),
]


@pytest.mark.parametrize(("node", "value", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_keyword(node: dict[str, Any], value: Any, expected: list[tuple[str, str, str]]) -> None:
    assert problems(node, value) == expected


def test_a_valid_object_builds_no_errors_and_an_invalid_one_its_path_once() -> None:
    deep = {"type": "object", "properties": {"a": {"type": "array", "items": NAMED}}}
    assert problems(deep, {"a": [{"name": "abcd"}] * 50}) == []
    assert problems(deep, {"a": [{"name": "abcd"}, {"name": "ab"}]}) == [
        ("spec.a[1].name", "minLength", "should be at least 3 chars long")
    ]
