"""A matcher for upstream's golden ``output.yaml`` files (``../shared/upstream/golden/README.md``).

``match(expected, actual, variables)`` returns one human-readable line per mismatch, each starting with the
path of the field (``spec.template.cliques[1].spec.podSpec.containers[0].env: ...``); ``[]`` means a match.

The rules, as the README states them:

- Mappings are strict: every expected key must match, and a key of ``actual`` the expected mapping does not
  list is a mismatch. ``$strict: false`` in a mapping checks only the keys it lists (its child mappings are
  strict again unless they say otherwise); the key ``$$strict`` names a real field called ``$strict``.
- Scalar directives: ``$ignore`` (anything, or nothing), ``$exists`` (present, any value), ``$notexists``
  (absent), ``$glob:<glob>`` and ``$pattern:<regexp>`` (a string matching all of it), ``$var:<name>``
  (present, and equal to ``variables[name]``; a name without a value is bound to the first value seen, so
  every later ``$var:<name>`` must equal it). Mapping forms: ``{$ignore: true}``, ``{$exists: true}``,
  ``{$notexists: true}``.
- Sequences match exactly and in order. When the items carry literal ``name`` keys, a mismatch is also
  described by name (missing, unexpected, out of order) so that one absent env var is one line, not a
  cascade; the items both have are then compared by name, under the expected file's index.
- Other scalars match by equality of value and type (``1`` is not ``true``, ``"1"`` is not ``1``).
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any, Final

IGNORE: Final = "$ignore"
EXISTS: Final = "$exists"
NOTEXISTS: Final = "$notexists"
GLOB: Final = "$glob:"
PATTERN: Final = "$pattern:"
VAR: Final = "$var:"
STRICT: Final = "$strict"
EXISTENCE = (IGNORE, EXISTS, NOTEXISTS)
IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")
SUMMARY_LENGTH = 80


class _Missing:
    """The value of a field that is not there."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Final = _Missing()


def match(expected: Any, actual: Any, variables: dict[str, Any] | None = None) -> list[str]:
    """Mismatches of ``actual`` against ``expected`` (``[]`` when it matches). ``variables`` holds the
    values of ``$var:<name>``; names not in it are bound (in place) on first sight."""
    return _match(expected, actual, "", {} if variables is None else variables)


def _match(expected: Any, actual: Any, path: str, variables: dict[str, Any]) -> list[str]:
    directive = existence_directive(expected)
    if directive is not None:
        return _existence(directive, actual, path)
    if isinstance(expected, str) and expected.startswith((GLOB, PATTERN, VAR)):
        return _string_directive(expected, actual, path, variables)
    if actual is MISSING:
        return [f"{_where(path)}: missing (expected {summary(expected)})"]
    if isinstance(expected, dict):
        return _match_mapping(expected, actual, path, variables)
    if isinstance(expected, list):
        return _match_sequence(expected, actual, path, variables)
    return _match_scalar(expected, actual, path)


def existence_directive(expected: Any) -> str | None:
    """``$ignore``/``$exists``/``$notexists`` when ``expected`` is one (scalar or mapping form), else None."""
    if isinstance(expected, str) and expected in EXISTENCE:
        return expected
    if isinstance(expected, dict) and len(expected) == 1:
        ((key, value),) = expected.items()
        if key in EXISTENCE and value is True:
            return key
    return None


def _existence(directive: str, actual: Any, path: str) -> list[str]:
    if directive == EXISTS and actual is MISSING:
        return [f"{_where(path)}: missing (expected it to exist)"]
    if directive == NOTEXISTS and actual is not MISSING:
        return [f"{_where(path)}: present ({summary(actual)}), expected it not to exist"]
    return []


def _string_directive(expected: str, actual: Any, path: str, variables: dict[str, Any]) -> list[str]:
    if actual is MISSING:
        return [f"{_where(path)}: missing (expected {expected})"]
    if expected.startswith(VAR):
        return _match_variable(expected.removeprefix(VAR), actual, path, variables)
    if not isinstance(actual, str):
        return [f"{_where(path)}: expected a string matching {expected}, got {summary(actual)}"]
    if expected.startswith(GLOB):
        ok = fnmatch.fnmatchcase(actual, expected.removeprefix(GLOB))
    else:
        ok = re.fullmatch(expected.removeprefix(PATTERN), actual) is not None
    return [] if ok else [f"{_where(path)}: {actual!r} does not match {expected}"]


def _match_variable(name: str, actual: Any, path: str, variables: dict[str, Any]) -> list[str]:
    if name not in variables:
        variables[name] = actual
        return []
    if _same(variables[name], actual):
        return []
    return [f"{_where(path)}: {summary(actual)} is not $var:{name} = {summary(variables[name])}"]


def _match_mapping(expected: dict[Any, Any], actual: Any, path: str, variables: dict[str, Any]) -> list[str]:
    if not isinstance(actual, dict):
        return [f"{_where(path)}: expected a mapping, got {summary(actual)}"]
    strict = expected.get(STRICT, True)
    if not isinstance(strict, bool):
        return [f"{_where(path)}: {STRICT} must be true or false, not {strict!r} (expected file is malformed)"]
    fields = {_field_name(key): value for key, value in expected.items() if key != STRICT}
    problems: list[str] = []
    for key, value in fields.items():
        problems += _match(value, actual.get(key, MISSING), _join(path, key), variables)
    if strict:
        for key in actual:
            if key not in fields:
                problems.append(f"{_join(path, key)}: unexpected field ({summary(actual[key])})")
    return problems


def _field_name(key: Any) -> Any:
    """The real field an expected key names: ``$$strict`` is the field ``$strict``."""
    return key[1:] if key == "$" + STRICT else key


def _match_sequence(expected: list[Any], actual: Any, path: str, variables: dict[str, Any]) -> list[str]:
    if not isinstance(actual, list):
        return [f"{_where(path)}: expected a sequence, got {summary(actual)}"]
    expected_names, actual_names = item_names(expected), item_names(actual)
    if expected_names is not None and actual_names is not None and expected_names != actual_names:
        return _match_named(expected, actual, path, variables, expected_names, actual_names)
    if len(expected) != len(actual):
        return [f"{_where(path)}: expected {len(expected)} items, got {len(actual)} ({summary(actual)})"]
    problems: list[str] = []
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        problems += _match(want, got, f"{path}[{index}]", variables)
    return problems


def item_names(items: list[Any]) -> list[str] | None:
    """The ``name`` of every item when each is a mapping with a distinct literal string name, else None."""
    names = [item.get("name") if isinstance(item, dict) else None for item in items]
    if not all(isinstance(n, str) and not n.startswith("$") for n in names) or len(set(names)) != len(names):
        return None
    return names


def _match_named(
    expected: list[Any],
    actual: list[Any],
    path: str,
    variables: dict[str, Any],
    expected_names: list[str],
    actual_names: list[str],
) -> list[str]:
    """A named-item sequence whose names differ: say which are missing, unexpected or out of order, then
    compare the items both have, pairing them by name."""
    where = _where(path)
    problems = [f"{where}: missing item named {n!r}" for n in expected_names if n not in actual_names]
    problems += [f"{where}: unexpected item named {n!r}" for n in actual_names if n not in expected_names]
    common_expected = [n for n in expected_names if n in actual_names]
    common_actual = [n for n in actual_names if n in expected_names]
    if common_expected != common_actual:
        problems.append(f"{where}: items in order {common_actual}, expected {common_expected}")
    for index, name in enumerate(expected_names):
        if name in actual_names:
            got = actual[actual_names.index(name)]
            problems += _match(expected[index], got, f"{path}[{index}]", variables)
    return problems


def _match_scalar(expected: Any, actual: Any, path: str) -> list[str]:
    if _same(expected, actual):
        return []
    return [f"{_where(path)}: expected {summary(expected)}, got {summary(actual)}"]


def _same(a: Any, b: Any) -> bool:
    """Equal in value and kind: a bool never equals a number, nor a string a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def _join(path: str, key: Any) -> str:
    text = str(key)
    segment = f".{text}" if IDENTIFIER.match(text) else f"[{text!r}]"
    return (path + segment).lstrip(".")


def _where(path: str) -> str:
    return path or "<root>"


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def summary(value: Any) -> str:
    """``value``'s repr with mapping keys sorted (a render's key order is not part of its meaning), cut to
    a readable length."""
    text = repr(_sorted(value))
    return text if len(text) <= SUMMARY_LENGTH else text[: SUMMARY_LENGTH - 3] + "..."
