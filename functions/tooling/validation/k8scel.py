"""A Python implementation of a subset of the Kubernetes CEL libraries, for cel-expr-python.

Semantics follow k8s.io/apiserver/pkg/cel/library (quantity.go, lists.go, regex.go), cel-go's
``ext.Sets()`` and k8s.io/apimachinery/pkg/api/resource (quantity parsing):

* ``quantity(s)``, ``isQuantity(s)`` and the Quantity methods ``isGreaterThan``, ``isLessThan``,
  ``compareTo``, ``add``, ``sub``, ``asInteger``, ``isInteger``, ``asApproximateFloat`` and ``sign(q)``;
* list ``isSorted()``, ``sum()``, ``min()``, ``max()``, ``indexOf(x)``, ``lastIndexOf(x)``;
* string ``find(re)``, ``findAll(re)``, ``findAll(re, n)``;
* ``sets.contains``, ``sets.equivalent``, ``sets.intersects``.

cel-expr-python has no way to declare an opaque type from Python, so a Quantity is carried as a tagged
string holding its exact value: U+E000 (a private-use character; cel-expr-python truncates strings at
NUL), ``k8s.quantity:`` and ``<numerator>/<denominator>``. Equality of two quantities therefore compares
values, as in Kubernetes. Anything this module cannot handle (an element type it does not support, a
regex Python cannot compile) raises an error whose text contains
"No matching overloads found", which the rule runner reports as *not evaluated*.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from itertools import pairwise
from typing import Any

from functions.kube.quantity import MAX_INT64, parse_quantity

from .jsconvert import go_regex_to_python

QUANTITY_TAG = "\ue000k8s.quantity:"
_MIN_INT64 = -(2**63)


class Unsupported(ValueError):
    """Raised for inputs the offline library does not handle (reported as not evaluated)."""

    def __init__(self, what: str) -> None:
        super().__init__(f"No matching overloads found (offline Kubernetes CEL library): {what}")


def _tag(value: Fraction) -> str:
    return f"{QUANTITY_TAG}{value.numerator}/{value.denominator}"


def _untag(value: Any) -> Fraction:
    if isinstance(value, str) and value.startswith(QUANTITY_TAG):
        return Fraction(value[len(QUANTITY_TAG) :])
    raise Unsupported(f"expected a quantity, got {type(value).__name__}")


def _operand(value: Any) -> Fraction:
    if isinstance(value, int) and not isinstance(value, bool):
        return Fraction(value)
    return _untag(value)


def _as_integer(value: Any) -> int:
    q = _untag(value)
    if q.denominator != 1 or not _MIN_INT64 <= q.numerator <= MAX_INT64:
        raise ValueError("cannot convert value to integer")
    return q.numerator


def _is_integer(value: Any) -> bool:
    q = _untag(value)
    return q.denominator == 1 and _MIN_INT64 <= q.numerator <= MAX_INT64


def _sign(value: Any) -> int:
    q = _untag(value)
    return (q > 0) - (q < 0)


def _compare(a: Any, b: Any) -> int:
    x, y = _untag(a), _untag(b)
    return (x > y) - (x < y)


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except ValueError:
        return False
    return True


_COMPARABLE = (int, float, str, bytes, bool)


def cel_equal(a: Any, b: Any) -> bool:
    """CEL equality of plain values: numbers compare across int/double, bools only with bools."""
    numeric = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, numeric) and isinstance(b, numeric):
        return a == b
    return type(a) is type(b) and a == b


def _plain_list(items: Any, allowed: tuple[type, ...] = _COMPARABLE) -> list[Any]:
    values = list(items)
    for value in values:
        if not isinstance(value, allowed):
            raise Unsupported(f"list element of type {type(value).__name__}")
    return values


def _ordered(run: Callable[[list[Any]], Any]) -> Callable[[Any], Any]:
    def wrapped(items: Any) -> Any:
        values = _plain_list(items)
        try:
            return run(values)
        except TypeError as error:  # mixed element types
            raise Unsupported(str(error)) from error

    return wrapped


def _is_sorted(values: list[Any]) -> bool:
    return all(a <= b for a, b in pairwise(values))


def _sum(items: Any) -> Any:
    values = _plain_list(items, (int, float))
    if any(isinstance(v, bool) for v in values):
        raise Unsupported("sum of bools")
    return sum(values) if values else 0


def _extreme(pick: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
    def run(values: list[Any]) -> Any:
        if not values:
            raise ValueError("min/max of an empty list")
        return pick(values)

    return run


def _index_of(items: Any, value: Any) -> int:
    for i, item in enumerate(items):
        if cel_equal(item, value):
            return i
    return -1


def _last_index_of(items: Any, value: Any) -> int:
    values = list(items)
    for i in range(len(values) - 1, -1, -1):
        if cel_equal(values[i], value):
            return i
    return -1


def _regex(pattern: str) -> re.Pattern[str]:
    translated = go_regex_to_python(pattern)
    if translated is None:
        raise Unsupported(f"regex {pattern!r}")
    return re.compile(translated)


def _find(text: str, pattern: str) -> str:
    m = _regex(pattern).search(text)
    return m.group(0) if m else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    found = [m.group(0) for m in _regex(pattern).finditer(text)]
    return found if limit < 0 else found[:limit]


def _sets_contains(a: Any, b: Any) -> bool:
    items = list(a)
    return all(any(cel_equal(x, y) for x in items) for y in b)


def _sets_equivalent(a: Any, b: Any) -> bool:
    return _sets_contains(a, b) and _sets_contains(b, a)


def _sets_intersects(a: Any, b: Any) -> bool:
    items = list(a)
    return any(any(cel_equal(x, y) for x in items) for y in b)


def functions(cel: Any) -> list[Any]:
    """The FunctionDecl list for ``cel.CelExtension``; ``cel`` is the ``cel_expr_python.cel`` module."""
    t = cel.Type
    dyn_list, strings = t.List(t.DYN), t.List(t.STRING)
    quantity = [t.STRING]
    # (function, overload id, return type, parameter types (receiver first for members), member?, impl)
    table: list[tuple[str, str, Any, list[Any], bool, Callable[..., Any]]] = [
        ("quantity", "k8s_quantity", t.DYN, [t.STRING], False, lambda s: _tag(parse_quantity(s))),
        ("isQuantity", "k8s_is_quantity", t.BOOL, [t.STRING], False, _is_quantity),
        ("isGreaterThan", "k8s_q_gt", t.BOOL, [*quantity, t.DYN], True, lambda a, b: _compare(a, b) > 0),
        ("isLessThan", "k8s_q_lt", t.BOOL, [*quantity, t.DYN], True, lambda a, b: _compare(a, b) < 0),
        ("compareTo", "k8s_q_compare", t.INT, [*quantity, t.DYN], True, _compare),
        ("add", "k8s_q_add", t.DYN, [*quantity, t.DYN], True, lambda a, b: _tag(_untag(a) + _operand(b))),
        ("sub", "k8s_q_sub", t.DYN, [*quantity, t.DYN], True, lambda a, b: _tag(_untag(a) - _operand(b))),
        ("asInteger", "k8s_q_as_integer", t.INT, quantity, True, _as_integer),
        ("isInteger", "k8s_q_is_integer", t.BOOL, quantity, True, _is_integer),
        ("asApproximateFloat", "k8s_q_as_float", t.DOUBLE, quantity, True, lambda a: float(_untag(a))),
        ("sign", "k8s_q_sign", t.INT, quantity, False, _sign),  # a global function in Kubernetes
        ("isSorted", "k8s_list_is_sorted", t.BOOL, [dyn_list], True, _ordered(_is_sorted)),
        ("sum", "k8s_list_sum", t.DYN, [dyn_list], True, _sum),
        ("min", "k8s_list_min", t.DYN, [dyn_list], True, _ordered(_extreme(min))),
        ("max", "k8s_list_max", t.DYN, [dyn_list], True, _ordered(_extreme(max))),
        ("indexOf", "k8s_list_index_of", t.INT, [dyn_list, t.DYN], True, _index_of),
        ("lastIndexOf", "k8s_list_last_index_of", t.INT, [dyn_list, t.DYN], True, _last_index_of),
        ("find", "k8s_find", t.STRING, [t.STRING, t.STRING], True, _find),
        ("findAll", "k8s_find_all", strings, [t.STRING, t.STRING], True, _find_all),
        ("findAll", "k8s_find_all_n", strings, [t.STRING, t.STRING, t.INT], True, _find_all),
        ("sets.contains", "k8s_sets_contains", t.BOOL, [dyn_list, dyn_list], False, _sets_contains),
        ("sets.equivalent", "k8s_sets_equivalent", t.BOOL, [dyn_list, dyn_list], False, _sets_equivalent),
        ("sets.intersects", "k8s_sets_intersects", t.BOOL, [dyn_list, dyn_list], False, _sets_intersects),
    ]
    overloads: dict[str, list[Any]] = {}
    for name, oid, ret, params, is_member, impl in table:
        overload = cel.Overload(oid, return_type=ret, parameters=params, is_member=is_member, impl=impl)
        overloads.setdefault(name, []).append(overload)
    return [cel.FunctionDecl(name, items) for name, items in overloads.items()]
