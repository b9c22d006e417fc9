"""The offline Kubernetes CEL library subset (quantity, lists, regex, sets).

Expected values were checked against k8s.io/apimachinery resource.ParseQuantity and the Kubernetes CEL
environment (k8s.io/apiserver v0.35) during development.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from fixtures.crdfactory import build_crd
from functions.tooling.validation import validate
from functions.tooling.validation.k8scel import parse_quantity


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", Fraction(1)),
        ("1Gi", Fraction(2**30)),
        ("1.5Gi", Fraction(3 * 2**29)),
        ("200k", Fraction(200_000)),
        ("100m", Fraction(1, 10)),
        ("-1.5", Fraction(-3, 2)),
        ("1e3", Fraction(1000)),
        ("1E-3", Fraction(1, 1000)),
        ("1.5e+2", Fraction(150)),
        ("0.1n", Fraction(1, 10**9)),  # rounded up to 1n
        ("1.0000000001", Fraction(1_000_000_001, 10**9)),
        ("12Ei", Fraction(2**63 - 1)),  # binary quantities are capped at int64
        ("0.5Ki", Fraction(512)),
        ("+.5", Fraction(1, 2)),
        ("Mi", Fraction(0)),
        (".", Fraction(0)),
    ],
)
def test_parse_quantity(text: str, value: Fraction) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["", "200K", "1e", "1ki", " 1", "1 ", "1ee3", "1e3k", "1kk", "1m5", "Ei", ".e-10"])
def test_parse_quantity_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_quantity(text)


RULES = [
    "quantity(self.s).compareTo(quantity('1Gi')) == 1",
    "quantity(self.s) == quantity('1024Mi')",
    "!quantity(self.s).isInteger() || quantity(self.s).asInteger() > 100",
    "quantity(self.s).add(quantity('1k')).isLessThan(quantity('2k'))",
    "sign(quantity(self.s).sub(5)) < 0",
    "quantity(self.s).asApproximateFloat() > 1.5",
    "isQuantity(self.s)",
    "self.l.isSorted()",
    "self.l.sum() > 3",
    "self.l.min() == 1",
    "self.l.indexOf(2) == 1",
    "self.l.lastIndexOf(2) == 2",
    "self.s.find('[0-9]+') == '1'",
    "self.s.findAll('[a-zA-Z]') == ['G', 'i']",
    "sets.contains(self.l, [1, 2])",
    "sets.equivalent(self.l, [3, 2, 1])",
    "sets.intersects(self.l, [9, 2])",
]

CRD: dict[str, Any] = build_crd(
    "x.org",
    "T",
    "ts",
    {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "s": {"type": "string"},
                    "l": {"type": "array", "items": {"type": "integer"}},
                },
                "x-kubernetes-validations": [{"rule": r} for r in RULES],
            }
        },
    },
)


@pytest.mark.parametrize(
    ("s", "items", "failing"),
    [
        # indexes into RULES of the rules that fail, as reported by the Kubernetes CEL validator
        ("1Gi", [1, 2, 2, 3], [0, 3, 4]),
        ("0", [3, 2, 1], [0, 1, 2, 5, 7, 11, 12, 13]),
        ("1024Mi", [2, 2, 2], [0, 3, 4, 9, 10, 12, 13, 14, 15]),
        ("1500", [5, 1, 9], [0, 1, 3, 4, 7, 10, 11, 12, 13, 14, 15]),
        ("abc", [], [0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16]),
    ],
)
def test_library_functions_match_kubernetes(s: str, items: list[int], failing: list[int]) -> None:
    obj = {"apiVersion": "x.org/v1", "kind": "T", "metadata": {"name": "a"}, "spec": {"s": s, "l": items}}
    result = validate(obj, CRD)
    assert result.not_evaluated == ()
    assert sorted(RULES.index(v.rule.removeprefix("cel: ")) for v in result.violations) == failing


def test_library_errors_are_violations_like_kubernetes() -> None:
    obj = {"apiVersion": "x.org/v1", "kind": "T", "metadata": {"name": "a"}, "spec": {"s": "abc", "l": []}}
    messages = {v.rule.removeprefix("cel: "): v.message for v in validate(obj, CRD).violations}
    assert "quantities must match the regular expression" in messages["quantity(self.s) == quantity('1024Mi')"]
    assert "evaluating rule: self.l.min() == 1" in messages["self.l.min() == 1"]
    assert "isQuantity(self.s)" in messages
