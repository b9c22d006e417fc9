"""Evaluate ``x-kubernetes-validations`` rules with cel-expr-python, the way the API server does.

Walk (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go): every rule of a schema node
runs with ``self`` bound to that node's value, for each present, non-null value (every array item, every
map value); absent optional fields are skipped. Transition rules (those referencing ``oldSelf``) only run
when an old value is available: on update, correlated by field name, map key or list-type=map keys (items
of other lists have no old value). With ``optionalOldSelf: true`` they also run without an old value.

cel-expr-python cannot take an optional value as a variable, so an ``optionalOldSelf`` rule is compiled as
``cel.bind(oldSelf, __hasOld ? optional.of(__old) : optional.none(), <rule>)``: ``oldSelf`` is then a real
CEL optional (``optional.none()`` on create, ``optional.of(old)`` on update).

Kubernetes CEL library functions missing from cel-expr-python are partly provided by ``k8scel``
(quantity, list helpers, regex find, sets). Rules that still do not compile (``url()``, ``ip()``,
``cidr()``, ``format.*``, semver, authz, two-variable comprehensions, cel-go ``ext.Lists`` ...), and rules
that fail at run time with "no matching overload" (dynamic dispatch found no implementation here), are
reported as :class:`NotEvaluated` instead of pass or fail.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from . import k8scel, paths
from .celvalues import Memo, to_cel
from .result import NotEvaluated, Violation
from .schemanode import SchemaNode

_STRING_LITERAL = re.compile(
    r"""[rRbB]{0,2}('''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")"""
)
_OLD_SELF = re.compile(r"\boldSelf\b")
_UNDECLARED = re.compile(r"undeclared reference to '([^']+)'")
_NO_OVERLOAD = re.compile(r"found no matching overload for '([^']+)'")
# Run-time errors caused by this evaluator rather than by the data: missing overloads (dynamic dispatch
# found no implementation here) and values cel-expr-python cannot represent (integers beyond 64 bits).
_OFFLINE_GAP = re.compile(r"[Nn]o matching overload|Non-CEL value type|out of range for '(self|oldSelf|__old)\b")
# ... except a call of a Kubernetes library function with an argument type Kubernetes has no overload
# for either (quantity() and isQuantity() take a string): the API server fails the rule on such data.
_NO_KUBERNETES_OVERLOAD = re.compile(r"No matching overloads found\s*:\s*((?:quantity|isQuantity)\((\w+)\))")
_CEL_TYPE_NAMES = {"int64": "int", "uint64": "uint", "double": "double", "bool": "bool", "bytes": "bytes"}
_FIELD_PATH_PART = re.compile(
    r"""\.([A-Za-z_][A-Za-z0-9_-]*)|\[\s*'((?:\\.|[^'])*)'\s*\]|\[\s*"((?:\\.|[^"])*)"\s*\]|\[(\d+)\]"""
)


def uses_old_self(rule: str) -> bool:
    """True when ``rule`` references the ``oldSelf`` variable (outside string literals)."""
    return bool(_OLD_SELF.search(_STRING_LITERAL.sub("''", rule)))


@dataclass(frozen=True)
class CompiledRule:
    rule: str
    program: Any = None
    problem: str | None = None
    transition: bool = False
    optional_old_self: bool = False
    message_program: Any = None


@lru_cache(maxsize=1)
def _cel() -> tuple[Any, Any] | None:
    """(module, env) or None when cel-expr-python is missing."""
    try:
        from cel_expr_python import cel
        from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings
    except ImportError:
        return None
    env = cel.NewEnv(
        variables={
            "self": cel.Type.DYN,
            "oldSelf": cel.Type.DYN,
            "__old": cel.Type.DYN,
            "__hasOld": cel.Type.BOOL,
        },
        extensions=[
            ext_optional.ExtOptional(),
            ext_strings.ExtStrings(),
            ext_bindings.ExtBindings(),
            cel.CelExtension("kubernetes", k8scel.functions(cel)),
        ],
    )
    return cel, env


ENGINE_MISSING = (
    "the CEL engine (cel-expr-python) is not installed, so the CRDs' CEL rules cannot be checked: install the "
    "tooling extra (pip install 'function-dynamo[tooling]', or pipx inject function-dynamo cel-expr-python)"
)


def engine_missing() -> str | None:
    """``ENGINE_MISSING`` when cel-expr-python cannot be loaded (the tooling extra is not installed), else None."""
    return ENGINE_MISSING if _cel() is None else None


def _compile_problem(error: Exception) -> str:
    text = str(error)
    missing = sorted(set(_UNDECLARED.findall(text)))
    if missing:
        return f"uses {', '.join(missing)}, not available in cel-expr-python (Kubernetes CEL library?)"
    overload = _NO_OVERLOAD.search(text)
    if overload:
        return f"no overload of {overload.group(1)}() in cel-expr-python (Kubernetes CEL library?)"
    first = text.split("\n", 1)[0]
    return f"does not compile: {first}"


@lru_cache(maxsize=4096)
def compile_rule(rule: str, optional_old_self: bool = False, message_expression: str = "") -> CompiledRule:
    """Compile a rule (and its messageExpression) once; results are cached by their text."""
    transition = uses_old_self(rule)
    optional = optional_old_self and transition
    loaded = _cel()
    if loaded is None:
        return CompiledRule(rule, problem="cel-expr-python is not installed", transition=transition)
    _, env = loaded
    source = rule
    if optional:
        source = f"cel.bind(oldSelf, __hasOld ? optional.of(__old) : optional.none(), (\n{rule}\n))"
    try:
        program = env.compile(source)
    except Exception as error:  # cel-expr-python raises RuntimeError for compile errors
        return CompiledRule(rule, problem=_compile_problem(error), transition=transition)
    message_program = None
    if message_expression:
        try:
            message_program = env.compile(message_expression)
        except Exception:  # the API server would reject the CRD; fall back to message
            message_program = None
    return CompiledRule(rule, program, None, transition, optional, message_program)


def _compiled(raw: dict[str, Any]) -> CompiledRule:
    return compile_rule(
        str(raw.get("rule", "")), raw.get("optionalOldSelf") is True, str(raw.get("messageExpression") or "")
    )


def _rule_error_string(raw: dict[str, Any]) -> str:
    message = str(raw.get("message") or "").strip()
    return message or str(raw.get("rule", "")).strip()


def _field_path(base: str, field_path: str) -> str:
    pos, path = 0, base
    text = field_path.strip()
    while pos < len(text):
        m = _FIELD_PATH_PART.match(text, pos)
        if not m:
            return base
        name, single, double, idx = m.groups()
        path = paths.index(path, int(idx)) if idx is not None else paths.child(path, name or single or double)
        pos = m.end()
    return path


@dataclass
class _Walk:
    violations: list[Violation] = field(default_factory=list)
    not_evaluated: list[NotEvaluated] = field(default_factory=list)
    memo: Memo = field(default_factory=dict)


def _message(cel: Any, compiled: CompiledRule, raw: dict[str, Any], activation: Any) -> str:
    if compiled.message_program is not None:
        result = compiled.message_program.eval(activation)
        if result.type() == cel.Type.STRING:
            text = str(result.value()).strip()
            if text and "\n" not in text:
                return text
    message = str(raw.get("message") or "").strip()
    return message or f"failed rule: {_rule_error_string(raw)}"


def _run_rules(node: SchemaNode, value: Any, old: Any, path: str, walk: _Walk, root: bool) -> None:
    loaded = _cel()
    activation = None
    for raw in node.rules:
        if not str(raw.get("rule") or "").strip():
            continue  # the API server skips empty rules
        compiled = _compiled(raw)
        label = f"cel: {compiled.rule}"
        if compiled.problem is not None or loaded is None:
            walk.not_evaluated.append(NotEvaluated(path, label, compiled.problem or "cel-expr-python is missing"))
            continue
        if compiled.transition and old is None and not compiled.optional_old_self:
            continue
        cel, env = loaded
        if activation is None:
            old_cel = to_cel(old, node, walk.memo, resource_root=root)
            activation = env.Activation(
                {
                    "self": to_cel(value, node, walk.memo, resource_root=root),
                    "oldSelf": old_cel,
                    "__old": old_cel,
                    "__hasOld": old is not None,
                }
            )
        try:
            result = compiled.program.eval(activation)
        except Exception as error:  # e.g. an integer beyond 64 bits in the data
            walk.not_evaluated.append(NotEvaluated(path, label, f"cel-expr-python cannot evaluate: {error}"))
            continue
        kind = result.type()
        if kind == cel.Type.BOOL:
            if result.value() is True:
                continue
            target = _field_path(path, str(raw.get("fieldPath") or "")) if raw.get("fieldPath") else path
            walk.violations.append(
                Violation(target, label, _message(cel, compiled, raw, activation), str(raw.get("reason") or ""))
            )
        elif kind == cel.Type.ERROR:
            error = str(result.value())
            no_overload = _NO_KUBERNETES_OVERLOAD.search(error)
            if no_overload:
                call = no_overload.group(1).replace(
                    no_overload.group(2), _CEL_TYPE_NAMES.get(no_overload.group(2), no_overload.group(2))
                )
                message = (
                    f"Invalid value: \"object\": 'no such overload: {call}': call arguments did not match a supported "
                    f"operator, function or macro signature for rule: {_rule_error_string(raw)}"
                )
                walk.violations.append(Violation(path, label, message))
            elif _OFFLINE_GAP.search(error):
                reason = f"cel-expr-python cannot evaluate it: {error}"
                walk.not_evaluated.append(NotEvaluated(path, label, reason))
            else:
                message = f"{error} evaluating rule: {_rule_error_string(raw)}"
                walk.violations.append(Violation(path, label, message))
        else:
            walk.not_evaluated.append(NotEvaluated(path, label, f"rule returned {kind}, not a bool"))


def _walk(node: SchemaNode, value: Any, old: Any, path: str, walk: _Walk, root: bool = False) -> None:
    if value is None or not node.cel_below:
        return
    if node.rules:
        _run_rules(node, value, old, path, walk, root)
    if isinstance(value, dict):
        old_map = old if isinstance(old, dict) else {}
        for key, item in value.items():
            sub = node.properties.get(key)
            if sub is None:
                sub = node.additional
            if sub is not None and sub.cel_below:
                _walk(sub, item, old_map.get(key), paths.child(path, key), walk)
    elif isinstance(value, list) and node.items is not None and node.items.cel_below:
        old_items = _correlate(node, old)
        for i, item in enumerate(value):
            _walk(node.items, item, old_items(item), paths.index(path, i), walk)


def _correlate(node: SchemaNode, old: Any) -> Callable[[Any], Any]:
    """Old-item lookup for a list: by map keys for list-type=map, else nothing (as the API server)."""
    if node.list_type != "map" or not node.map_keys or not isinstance(old, list):
        return lambda item: None
    index: dict[tuple[Any, ...], Any] = {}
    for item in old:
        if isinstance(item, dict):
            index.setdefault(_map_key(node.map_keys, item), item)

    def lookup(item: Any) -> Any:
        return index.get(_map_key(node.map_keys, item)) if isinstance(item, dict) else None

    return lookup


def _map_key(keys: tuple[str, ...], item: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(repr(item.get(k)) for k in keys)


def evaluate_rules(root: SchemaNode, obj: Any, old: Any = None) -> tuple[list[Violation], list[NotEvaluated]]:
    """Run every rule in ``root`` against ``obj`` (and ``old`` for transition rules)."""
    walk = _Walk()
    _walk(root, obj, old, paths.ROOT, walk, root=True)
    return walk.violations, walk.not_evaluated
