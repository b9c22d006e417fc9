"""CEL x-kubernetes-validations: per-node evaluation, messages, transition rules, unsupported functions."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fixtures.crdfactory import build_crd
from functions.tooling.validation import NotEvaluated, Violation, validate, validate_object
from functions.tooling.validation.cel import compile_rule, uses_old_self
from functions.tooling.validation.celvalues import escape


def rule(text: str, **extra: Any) -> dict[str, Any]:
    return {"rule": text, **extra}


SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "x-kubernetes-validations": [
        rule("!has(self.min) || !has(self.max) || self.min <= self.max", message="min must be <= max"),
        rule(
            "self.level != 'debug' || self.replicas == 1",
            messageExpression="'debug needs 1 replica, got ' + string(self.replicas)",
        ),
        rule("self.replicas <= 5"),
        rule("!has(self.secret) || self.secret.size() > 3", fieldPath=".secret", reason="FieldValueForbidden"),
    ],
    "properties": {
        "min": {"type": "integer"},
        "max": {"type": "integer"},
        "replicas": {"type": "integer", "default": 1},
        "level": {"type": "string", "default": "info"},
        "ratio": {"type": "number", "x-kubernetes-validations": [rule("self > 0.5")]},
        "secret": {"type": "string"},
        "namespace": {"type": "string"},
        "dash-name": {"type": "string"},
        "services": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "properties": {"replicas": {"type": "integer"}, "image": {"type": "string"}},
                "x-kubernetes-validations": [rule("self.replicas >= 1", message="replicas must be >= 1")],
            },
        },
        "containers": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "image": {"type": "string"}},
                "x-kubernetes-validations": [rule("self.name == 'main' || has(self.image)", message="image")],
            },
        },
        "optional": {
            "type": "object",
            "properties": {"x": {"type": "string"}},
            "x-kubernetes-validations": [rule("false", message="never run when absent")],
        },
        "immutable": {
            "type": "string",
            "x-kubernetes-validations": [rule("self == oldSelf", message="immutable")],
        },
        "restart": {
            "type": "string",
            "x-kubernetes-validations": [
                rule("oldSelf.hasValue() || self == 'fresh'", optionalOldSelf=True, message="new restart")
            ],
        },
        "ports": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string"},
                    "port": {
                        "type": "integer",
                        "x-kubernetes-validations": [rule("self >= oldSelf", message="grow")],
                    },
                },
            },
        },
        "size": {
            "type": "string",
            "x-kubernetes-validations": [rule("quantity(self).isGreaterThan(quantity('0'))", message="positive")],
        },
        "endpoint": {
            "type": "string",
            "x-kubernetes-validations": [rule("url(self).getScheme() == 'https'", message="https only")],
        },
        "when": {
            "type": "string",
            "format": "date-time",
            "x-kubernetes-validations": [rule("self > timestamp('2020-01-01T00:00:00Z')", message="too old")],
        },
        "timeout": {
            "type": "string",
            "format": "duration",
            "x-kubernetes-validations": [rule("self <= duration('1h')", message="too long")],
        },
        "items": {
            "type": "array",
            "items": {"type": "string"},
            "x-kubernetes-validations": [rule("self[3] == 'x'")],
        },
    },
}

CRD: dict[str, Any] = build_crd(
    "example.org",
    "Gizmo",
    "gizmos",
    {
        "type": "object",
        "x-kubernetes-validations": [
            rule("self.metadata.name.startsWith('g')", message="name must start with g"),
            rule("self.kind == 'Gizmo' && self.apiVersion == 'example.org/v1'"),
        ],
        "properties": {"spec": SPEC_SCHEMA},
    },
)


def gizmo(name: str = "g1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.org/v1", "kind": "Gizmo", "metadata": {"name": name}, "spec": spec}


def cel_violations(obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    return [(v.path, v.message) for v in validate_object(obj, CRD, old=old)]


def test_passing_rules_produce_nothing() -> None:
    result = validate(gizmo(min=1, max=2, ratio=1, services={"a": {"replicas": 1}}), CRD)
    assert result.violations == ()
    assert result.not_evaluated == ()


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"min": 3, "max": 2}, [("spec", "min must be <= max")]),
        # messageExpression wins over the default message; level/replicas come from defaults.
        ({"level": "debug", "replicas": 2}, [("spec", "debug needs 1 replica, got 2")]),
        # no message: "failed rule: <rule>"
        ({"replicas": 6}, [("spec", "failed rule: self.replicas <= 5")]),
        # fieldPath moves the error to the field.
        ({"secret": "abc"}, [("spec.secret", "failed rule: !has(self.secret) || self.secret.size() > 3")]),
        # number fields are doubles in CEL: an integer 1 compares with 0.5
        ({"ratio": 0}, [("spec.ratio", "failed rule: self > 0.5")]),
        # rule on map values: every value, path includes the key
        (
            {"services": {"ok": {"replicas": 2}, "bad": {"replicas": 0}}},
            [("spec.services.bad", "replicas must be >= 1")],
        ),
        # rule on list items: every item, path includes the index
        (
            {"containers": [{"name": "main"}, {"name": "side", "image": "i"}, {"name": "side2"}]},
            [("spec.containers[2]", "image")],
        ),
        ({"when": "2019-05-01T00:00:00Z"}, [("spec.when", "too old")]),
        ({"timeout": "2h"}, [("spec.timeout", "too long")]),
    ],
)
def test_rule_failures(spec: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert cel_violations(gizmo(**spec)) == expected


def test_rule_violation_carries_rule_text_and_reason() -> None:
    (violation,) = validate_object(gizmo(secret="abc"), CRD)
    assert violation.rule == "cel: !has(self.secret) || self.secret.size() > 3"
    assert violation.reason == "FieldValueForbidden"


def test_root_rules_see_type_meta_and_metadata_name() -> None:
    assert cel_violations(gizmo(name="x1")) == [("<root>", "name must start with g")]


def test_defaults_are_applied_before_cel() -> None:
    # replicas defaults to 1 and level to "info": without defaulting, self.replicas would be a missing key.
    assert validate(gizmo(), CRD).ok
    # With level=debug and no replicas, the default replicas=1 satisfies the rule.
    assert cel_violations(gizmo(level="debug")) == []


def test_rules_on_absent_optional_fields_are_skipped() -> None:
    assert cel_violations(gizmo()) == []
    assert cel_violations(gizmo(optional={"x": "y"})) == [("spec.optional", "never run when absent")]


def test_runtime_error_is_a_violation() -> None:
    (violation,) = validate_object(gizmo(items=["a"]), CRD)
    assert violation.path == "spec.items"
    assert "evaluating rule: self[3] == 'x'" in violation.message


def test_transition_rule_skipped_on_create_evaluated_on_update() -> None:
    assert cel_violations(gizmo(immutable="a")) == []
    assert cel_violations(gizmo(immutable="b"), old=gizmo(immutable="a")) == [("spec.immutable", "immutable")]
    assert cel_violations(gizmo(immutable="a"), old=gizmo(immutable="a")) == []
    # The field is new in this update: no old value, so the transition rule does not run.
    assert cel_violations(gizmo(immutable="b"), old=gizmo()) == []


def test_optional_old_self_on_create_and_update() -> None:
    # create: oldSelf is optional.none(), so the rule needs self == 'fresh'
    assert cel_violations(gizmo(restart="again")) == [("spec.restart", "new restart")]
    assert cel_violations(gizmo(restart="fresh")) == []
    # update: oldSelf = optional.of(old) -> hasValue() is true
    assert cel_violations(gizmo(restart="again"), old=gizmo(restart="fresh")) == []


def test_transition_rules_correlate_list_map_items_by_key() -> None:
    old = gizmo(ports=[{"name": "a", "port": 10}, {"name": "b", "port": 10}])
    new = gizmo(ports=[{"name": "b", "port": 5}, {"name": "a", "port": 11}, {"name": "c", "port": 1}])
    assert cel_violations(new, old=old) == [("spec.ports[0].port", "grow")]


def test_unsupported_kubernetes_function_is_reported_as_not_evaluated() -> None:
    for endpoint in ("http://x", "https://x"):
        result = validate(gizmo(endpoint=endpoint), CRD)
        assert result.violations == ()
        (skipped,) = result.not_evaluated
        assert isinstance(skipped, NotEvaluated)
        assert skipped.path == "spec.endpoint"
        assert skipped.rule == "cel: url(self).getScheme() == 'https'"
        assert "url" in skipped.reason


@pytest.mark.parametrize(("size", "ok"), [("1Gi", True), ("100m", True), ("0", False), ("-1k", False)])
def test_quantity_rules_are_evaluated(size: str, ok: bool) -> None:
    result = validate(gizmo(size=size), CRD)
    assert result.not_evaluated == ()
    assert [(v.path, v.message) for v in result.violations] == ([] if ok else [("spec.size", "positive")])


def test_escaped_property_names() -> None:
    assert escape("namespace") == "__namespace__"
    assert escape("dash-name") == "dash__dash__name"
    assert escape("a.b/c") == "a__dot__b__slash__c"
    assert escape("x__y") == "x__underscores__y"
    assert escape("plain_name") == "plain_name"
    assert escape("1abc") is None
    crd = copy.deepcopy(CRD)
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["x-kubernetes-validations"] = [
        rule("!has(self.__namespace__) || self.__namespace__ != self.dash__dash__name", message="differ")
    ]
    bad = gizmo(**{"namespace": "a", "dash-name": "a"})
    assert [(v.path, v.message) for v in validate_object(bad, crd)] == [("spec", "differ")]
    assert validate_object(gizmo(**{"namespace": "a", "dash-name": "b"}), crd) == []


def test_blocking_structural_errors_skip_cel_like_the_api_server() -> None:
    obj = gizmo(min=3, max=2, replicas="many")
    assert [(v.path, v.rule) for v in validate_object(obj, CRD)] == [
        ("<root>", "cel"),
        ("spec.replicas", "type"),
    ]
    forced = validate(gizmo(min=3, max=2, level=5), CRD, cel_on_invalid=True)
    assert Violation("spec", "cel: !has(self.min) || !has(self.max) || self.min <= self.max", "min must be <= max") in (
        forced.violations
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("self == oldSelf", True),
        ("oldSelf.hasValue()", True),
        ("self.oldSelfish == 1", False),
        ("self.name == 'oldSelf'", False),
        ('self.x != "oldSelf" && oldSelf.x == 1', True),
    ],
)
def test_uses_old_self(text: str, expected: bool) -> None:
    assert uses_old_self(text) is expected


def test_rules_are_compiled_once() -> None:
    first = compile_rule("self.a == 1")
    assert compile_rule("self.a == 1") is first
    assert compile_rule("self.a == 1").problem is None
    assert compile_rule("self.a ==").problem is not None
