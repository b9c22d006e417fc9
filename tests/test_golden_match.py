"""The golden-output matcher (tests/fixtures/golden_match.py), rule by rule: what matches, and what does not."""

from __future__ import annotations

from typing import Any

import pytest

from fixtures.golden_match import match

# (expected, actual): each must match.
MATCHING = {
    "equal-scalars": ("a", "a"),
    "equal-ints": (3, 3),
    "int-equals-float": (1, 1.0),
    "null": (None, None),
    "strict-mapping-same-keys": ({"a": 1, "b": {"c": "x"}}, {"a": 1, "b": {"c": "x"}}),
    "empty-mapping": ({}, {}),
    "non-strict-ignores-extra": ({"$strict": False, "a": 1}, {"a": 1, "b": 2}),
    "non-strict-explicit-true": ({"$strict": True, "a": 1}, {"a": 1}),
    "escaped-strict-field": ({"$$strict": False}, {"$strict": False}),
    "ignore-present": ({"a": "$ignore"}, {"a": {"deep": [1]}}),
    "ignore-absent": ({"a": "$ignore"}, {}),
    "ignore-mapping-form": ({"status": {"$ignore": True}}, {"status": {"x": 1}}),
    "ignore-mapping-form-absent": ({"status": {"$ignore": True}}, {}),
    "exists": ({"a": "$exists"}, {"a": None}),
    "exists-mapping-form": ({"a": {"$exists": True}}, {"a": 0}),
    "notexists": ({"status": "$notexists"}, {}),
    "notexists-mapping-form": ({"status": {"$notexists": True}}, {}),
    "glob": ("$glob:dgd-decode-*", "dgd-decode-71bc6676"),
    "glob-question-mark": ("$glob:v?", "v1"),
    "pattern": ("$pattern:1\\.4\\..*", "1.4.0"),
    "pattern-in-mapping": ({"ns": "$pattern:clusterenv-.*"}, {"ns": "clusterenv-golden"}),
    "sequence-in-order": ([1, {"a": 2}], [1, {"a": 2}]),
    "empty-sequence": ([], []),
    "named-items": ([{"name": "A", "value": "1"}], [{"name": "A", "value": "1"}]),
    "dollar-text-is-literal": (["echo $FOO"], ["echo $FOO"]),
    "strict-again-below-non-strict": ({"$strict": False, "m": {"$strict": False, "a": 1}}, {"m": {"a": 1, "b": 2}}),
}

# (expected, actual, a piece of every mismatch line expected, in order).
MISMATCHING = {
    "different-scalar": ("a", "b", ["<root>: expected 'a', got 'b'"]),
    "bool-is-not-int": (True, 1, ["expected True, got 1"]),
    "string-is-not-int": ("1", 1, ["expected '1', got 1"]),
    "missing-field": ({"a": 1}, {}, ["a: missing (expected 1)"]),
    "extra-field-strict": ({"a": 1}, {"a": 1, "b": 2}, ["b: unexpected field (2)"]),
    "extra-field-in-child-of-non-strict": (
        {"$strict": False, "m": {"a": 1}},
        {"m": {"a": 1, "b": 2}},
        ["m.b: unexpected field"],
    ),
    "extra-in-empty-mapping": ({"resources": {}}, {"resources": {"limits": {}}}, ["resources.limits: unexpected"]),
    "escaped-strict-is-a-field": ({"$$strict": False}, {}, ["$strict: missing"]),
    "strict-escape-does-not-relax": ({"$$strict": False}, {"$strict": False, "b": 1}, ["b: unexpected field"]),
    "malformed-strict": ({"$strict": "no"}, {}, ["$strict must be true or false"]),
    "mapping-vs-scalar": ({"a": {"b": 1}}, {"a": 3}, ["a: expected a mapping, got 3"]),
    "exists-absent": ({"a": "$exists"}, {}, ["a: missing (expected it to exist)"]),
    "exists-mapping-form-absent": ({"a": {"$exists": True}}, {}, ["a: missing (expected it to exist)"]),
    "notexists-present": ({"status": "$notexists"}, {"status": {}}, ["status: present ({}), expected it not"]),
    "notexists-mapping-form-present": ({"s": {"$notexists": True}}, {"s": 1}, ["s: present (1)"]),
    "glob-no-match": ("$glob:dgd-decode-*", "dgd-prefill-1", ["'dgd-prefill-1' does not match $glob:dgd-decode-*"]),
    "glob-absent": ({"n": "$glob:x*"}, {}, ["n: missing (expected $glob:x*)"]),
    "glob-not-a-string": ("$glob:*", 5, ["expected a string matching $glob:*, got 5"]),
    "pattern-is-anchored": ("$pattern:clusterenv-.*", "x-clusterenv-a", ["does not match $pattern:clusterenv-.*"]),
    "pattern-is-anchored-at-end": ("$pattern:1\\.4", "1.4.0", ["does not match"]),
    "sequence-length": ([1, 2], [1], ["<root>: expected 2 items, got 1"]),
    "sequence-order": ([1, 2], [2, 1], ["[0]: expected 1, got 2", "[1]: expected 2, got 1"]),
    "sequence-vs-mapping": ([1], {"a": 1}, ["expected a sequence"]),
    "named-item-missing": (
        {"env": [{"name": "A"}, {"name": "B"}]},
        {"env": [{"name": "A"}]},
        ["env: missing item named 'B'"],
    ),
    "named-item-extra": ({"env": [{"name": "A"}]}, {"env": [{"name": "A"}, {"name": "C"}]}, ["named 'C'"]),
    "named-item-order": (
        [{"name": "A"}, {"name": "B"}],
        [{"name": "B"}, {"name": "A"}],
        ["items in order ['B', 'A'], expected ['A', 'B']"],
    ),
    "named-item-compared-by-name": (
        [{"name": "A", "v": 1}, {"name": "B", "v": 2}],
        [{"name": "B", "v": 3}],
        ["missing item named 'A'", "[1].v: expected 2, got 3"],
    ),
    "deep-path": (
        {"spec": {"cliques": [{"name": "a"}, {"name": "b", "labels": {"nvidia.com/x": "1"}}]}},
        {"spec": {"cliques": [{"name": "a"}, {"name": "b", "labels": {}}]}},
        ["spec.cliques[1].labels['nvidia.com/x']: missing"],
    ),
}


@pytest.mark.parametrize(("expected", "actual"), MATCHING.values(), ids=MATCHING.keys())
def test_matches(expected: Any, actual: Any) -> None:
    assert match(expected, actual, {}) == []


@pytest.mark.parametrize(("expected", "actual", "lines"), MISMATCHING.values(), ids=MISMATCHING.keys())
def test_mismatches(expected: Any, actual: Any, lines: list[str]) -> None:
    problems = match(expected, actual, {})
    assert len(problems) == len(lines), problems
    for problem, piece in zip(problems, lines, strict=True):
        assert piece in problem, problems


# (expected, actual, preset variables, mismatch pieces, the variables afterwards).
VARIABLES = {
    "preset-equal": ("$var:h", "abc", {"h": "abc"}, [], {"h": "abc"}),
    "preset-different": ("$var:h", "abd", {"h": "abc"}, ["'abd' is not $var:h = 'abc'"], {"h": "abc"}),
    "bound-on-first-sight": ("$var:h", "abc", {}, [], {"h": "abc"}),
    "same-everywhere": ({"l": "$var:h", "e": ["$var:h"]}, {"l": "x1", "e": ["x1"]}, {}, [], {"h": "x1"}),
    "differs-second-time": (
        {"l": "$var:h", "e": ["$var:h"]},
        {"l": "x1", "e": ["x2"]},
        {},
        ["e[0]: 'x2' is not $var:h = 'x1'"],
        {"h": "x1"},
    ),
    "two-names": ({"a": "$var:a", "b": "$var:b"}, {"a": 1, "b": 2}, {}, [], {"a": 1, "b": 2}),
    "type-counts": ("$var:h", 1, {"h": "1"}, ["1 is not $var:h = '1'"], {"h": "1"}),
    "absent": ({"l": "$var:h"}, {}, {}, ["l: missing (expected $var:h)"], {}),
}


@pytest.mark.parametrize(("expected", "actual", "preset", "lines", "after"), VARIABLES.values(), ids=VARIABLES.keys())
def test_variables(expected: Any, actual: Any, preset: dict[str, Any], lines: list[str], after: dict[str, Any]) -> None:
    variables = dict(preset)
    problems = match(expected, actual, variables)
    assert len(problems) == len(lines), problems
    for problem, piece in zip(problems, lines, strict=True):
        assert piece in problem, problems
    assert variables == after


def test_variables_are_shared_across_calls() -> None:
    variables: dict[str, Any] = {}
    assert match({"hash": "$var:h"}, {"hash": "h1"}, variables) == []
    assert match({"hash": "$var:h"}, {"hash": "h2"}, variables) == ["hash: 'h2' is not $var:h = 'h1'"]


def test_without_variables_argument_binds_locally() -> None:
    assert match(["$var:h", "$var:h"], ["a", "a"]) == []
    assert match(["$var:h", "$var:h"], ["a", "b"]) == ["[1]: 'b' is not $var:h = 'a'"]
