"""Structural (OpenAPI) validation: types, required, enum, pattern, bounds, strictness, defaults, lists."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from fixtures.crdfactory import build_crd
from functions.tooling.validation import Violation, validate, validate_object
from functions.tooling.validation.defaults import prepare
from functions.tooling.validation.jsconvert import go_regex_to_python
from functions.tooling.validation.schemanode import build

SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "pattern": "^[a-z]+$", "minLength": 2, "maxLength": 8},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "format": "int32"},
        "ratio": {"type": "number", "exclusiveMaximum": True, "maximum": 1},
        "mode": {"type": "string", "enum": ["agg", "disagg"]},
        "enabled": {"type": "boolean"},
        "port": {"x-kubernetes-int-or-string": True},
        "tags": {
            "type": "array",
            "items": {"type": "string"},
            "maxItems": 3,
            "x-kubernetes-list-type": "set",
        },
        "ports": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name", "protocol"],
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string"},
                    "protocol": {"type": "string", "default": "TCP"},
                    "port": {"type": "integer"},
                },
            },
        },
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "opaque": {"type": "object"},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "nested": {
            "type": "object",
            "properties": {"inner": {"type": "object", "properties": {"leaf": {"type": "string"}}}},
        },
        "note": {"type": "string", "nullable": True},
        "level": {"type": "string", "default": "info"},
        "when": {"type": "string", "format": "date-time"},
        "template": {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
        },
        "choice": {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
        },
    },
}


def make_crd(spec_schema: dict[str, Any], *, served: bool = True) -> dict[str, Any]:
    root_schema = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}}},
            "spec": spec_schema,
        },
    }
    v0 = {"name": "v0", "served": False, "storage": False, "schema": {"openAPIV3Schema": {}}}
    return build_crd("example.org", "Widget", "widgets", root_schema, served=served, extra_versions=[v0])


CRD = make_crd(SPEC_SCHEMA)


def widget(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.org/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"name": "ok", **spec},
    }


def test_valid_object_has_no_violations() -> None:
    obj = widget(
        replicas=3,
        ratio=0.5,
        mode="agg",
        enabled=True,
        port="http",
        tags=["a", "b"],
        ports=[{"name": "http", "port": 80}, {"name": "http", "protocol": "UDP"}],
        labels={"team": "x"},
        free={"anything": {"goes": [1, 2]}},
        nested={"inner": {"leaf": "x"}},
        note=None,
        when="2024-01-02T03:04:05Z",
        template={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}},
        choice={"a": "1"},
    )
    assert validate_object(obj, CRD) == []


@pytest.mark.parametrize(
    ("spec", "path", "rule"),
    [
        ({"replicas": "three"}, "spec.replicas", "type"),
        ({"replicas": 1.5}, "spec.replicas", "type"),
        ({"replicas": True}, "spec.replicas", "type"),
        ({"enabled": "yes"}, "spec.enabled", "type"),
        ({"labels": {"team": 1}}, "spec.labels.team", "type"),
        ({"tags": "a"}, "spec.tags", "type"),
        ({"mode": "other"}, "spec.mode", "enum"),
        ({"name": "UPPER"}, "spec.name", "pattern"),
        ({"name": "a"}, "spec.name", "minLength"),
        ({"name": "abcdefghij"}, "spec.name", "maxLength"),
        ({"replicas": 0}, "spec.replicas", "minimum"),
        ({"replicas": 11}, "spec.replicas", "maximum"),
        ({"ratio": 1}, "spec.ratio", "exclusiveMaximum"),
        ({"tags": ["a", "b", "c", "d"]}, "spec.tags", "maxItems"),
        ({"port": 1.5}, "spec.port", "type"),
        ({"port": False}, "spec.port", "type"),
        ({"bogus": 1}, "spec.bogus", "unknown field"),
        ({"nested": {"inner": {"leaf": "x", "extra": 1}}}, "spec.nested.inner.extra", "unknown field"),
        ({"opaque": {"x": 1}}, "spec.opaque.x", "unknown field"),
        ({"tags": ["a", "b", "a"]}, "spec.tags[2]", "duplicate"),
        ({"ports": [{"name": "h"}, {"name": "h", "protocol": "TCP"}]}, "spec.ports[1]", "duplicate"),
        ({"when": "yesterday"}, "spec.when", "format"),
        ({"choice": {"a": "1", "b": "2"}}, "spec.choice", "oneOf"),
        ({"template": {"kind": "Pod"}}, "spec.template.apiVersion", "required"),
        (
            {"template": {"apiVersion": "v1", "kind": "Pod", "bogus": 1}},
            "spec.template.bogus",
            "unknown field",
        ),
        ({"template": {"apiVersion": "v1", "kind": ""}}, "spec.template.kind", "embedded resource"),
    ],
)
def test_single_structural_violation(spec: dict[str, Any], path: str, rule: str) -> None:
    violations = validate_object(widget(**spec), CRD)
    assert [(v.path, v.rule) for v in violations] == [(path, rule)], violations


def test_required_is_reported_at_the_missing_field() -> None:
    obj = widget()
    del obj["spec"]["name"]
    assert validate_object(obj, CRD) == [Violation("spec.name", "required", "Required value")]


def test_pattern_message_shows_the_schema_pattern() -> None:
    (violation,) = validate_object(widget(name="UPPER"), CRD)
    assert violation.message == "should match '^[a-z]+$'"


def test_enum_message_lists_supported_values() -> None:
    (violation,) = validate_object(widget(mode="other"), CRD)
    assert violation.message == 'Unsupported value: "other": supported values: "agg", "disagg"'
    assert str(violation) == f"spec.mode: {violation.message} (enum)"


@pytest.mark.parametrize("value", [5, "50%", 0])
def test_int_or_string_accepts_ints_and_strings(value: Any) -> None:
    assert validate_object(widget(port=value), CRD) == []


def test_integer_valued_float_is_an_integer_like_the_api_server() -> None:
    assert validate_object(widget(replicas=2.0), CRD) == []


def test_nulls_nullable_kept_non_nullable_pruned() -> None:
    # nullable field: null is valid; non-nullable field without default: null is pruned (not an error).
    assert validate_object(widget(note=None, replicas=None), CRD) == []
    prepared = prepare(widget(note=None, replicas=None), build(CRD["spec"]["versions"][0]["schema"]["openAPIV3Schema"]))
    assert "replicas" not in prepared["spec"]
    assert prepared["spec"]["note"] is None


def test_defaults_are_applied_recursively_and_input_not_mutated() -> None:
    obj = widget(ports=[{"name": "http"}], level=None)
    before = copy.deepcopy(obj)
    node = build(CRD["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    prepared = prepare(obj, node)
    assert prepared["spec"]["level"] == "info"  # non-nullable null with a default gets the default
    assert prepared["spec"]["ports"] == [{"name": "http", "protocol": "TCP"}]
    assert obj == before


def test_defaults_take_part_in_list_map_uniqueness() -> None:
    # Both items have key (name=h, protocol=TCP) once the default is applied.
    violations = validate_object(widget(ports=[{"name": "h"}, {"name": "h", "protocol": "TCP"}]), CRD)
    assert [v.rule for v in violations] == ["duplicate"]
    assert validate_object(widget(ports=[{"name": "h"}, {"name": "h", "protocol": "UDP"}]), CRD) == []


def test_preserve_unknown_fields_allows_anything_below() -> None:
    assert validate_object(widget(free={"a": {"b": {"c": [1, {"d": None}]}}}), CRD) == []


@pytest.mark.parametrize(
    ("metadata", "path", "rule"),
    [
        ({"name": "w", "labels": {"a": 1}}, "metadata.labels.a", "type"),
        ({"name": "w", "labels": {"bad key!": "x"}}, "metadata.labels[bad key!]", "metadata"),
        ({"name": "w", "labels": {"a": "-bad-"}}, "metadata.labels.a", "metadata"),
        ({"name": "Not_DNS"}, "metadata.name", "metadata"),
        ({"name": "a" * 21}, "metadata.name", "maxLength"),
        ({"name": "w", "bogus": 1}, "metadata.bogus", "unknown field"),
        ({"name": "w", "annotations": {"example.org/x": 5}}, "metadata.annotations[example.org/x]", "type"),
    ],
)
def test_root_metadata_is_validated_as_object_meta(metadata: dict[str, Any], path: str, rule: str) -> None:
    obj = widget()
    obj["metadata"] = metadata
    assert [(v.path, v.rule) for v in validate_object(obj, CRD)] == [(path, rule)]


def test_root_allows_api_version_kind_metadata_but_not_other_fields() -> None:
    obj = widget()
    obj["extra"] = 1
    assert [(v.path, v.rule) for v in validate_object(obj, CRD)] == [("extra", "unknown field")]


@pytest.mark.parametrize(
    ("api_version", "kind", "path", "rule"),
    [
        ("other.org/v1", "Widget", "apiVersion", "version"),
        ("example.org/v1", "Gadget", "kind", "kind"),
        ("example.org/v9", "Widget", "apiVersion", "version"),
        ("example.org/v0", "Widget", "apiVersion", "version"),  # exists but not served
    ],
)
def test_version_selection(api_version: str, kind: str, path: str, rule: str) -> None:
    obj = widget()
    obj["apiVersion"], obj["kind"] = api_version, kind
    assert [(v.path, v.rule) for v in validate_object(obj, CRD)] == [(path, rule)]


def test_violations_are_sorted_by_path_then_rule() -> None:
    obj = widget(mode="x", replicas="y")
    paths = [(v.path, v.rule) for v in validate_object(widget(mode="x", replicas="y"), CRD)]
    assert paths == sorted(paths)
    assert paths == [("spec.mode", "enum"), ("spec.replicas", "type")]
    with_unknown = [
        (v.path, v.rule) for v in validate_object({**obj, "spec": {**obj["spec"], "zzz": 1, "aaa": 2}}, CRD)
    ]
    # Strict decoding fails first: the API server reports the unknown fields alone, sorted.
    assert with_unknown == [("spec.aaa", "unknown field"), ("spec.zzz", "unknown field")]


def test_validation_result_exposes_ok() -> None:
    assert validate(widget(), CRD).ok
    assert not validate(widget(mode="x"), CRD).ok


@pytest.mark.parametrize(
    ("pattern", "matches", "rejects"),
    [
        (r"^[a-z]+$", "abc", "abc\n"),  # RE2 "$" is end of text, Python's also matches before a final newline
        (r"^\d+\z", "123", "\u0661\u0662"),  # RE2 \d is ASCII only
        (r"^[[:alpha:]]+$", "abc", "ab1"),
        (r"^(?<year>\d{4})$", "2024", "24"),
        (r"^[^]a]+$", "bc", "]"),
        (r"(?m)^a$", "b\na", "b"),
    ],
)
def test_go_patterns_keep_re2_meaning(pattern: str, matches: str, rejects: str) -> None:
    translated = go_regex_to_python(pattern)
    assert translated is not None
    assert re.search(translated, matches)
    assert not re.search(translated, rejects)


def test_pattern_python_cannot_compile_is_skipped() -> None:
    assert go_regex_to_python(r"\p{L}+") is None
    crd = make_crd({"type": "object", "properties": {"name": {"type": "string", "pattern": r"^\p{L}+$"}}})
    assert validate_object(widget(name="anything"), crd) == []
