"""What the upstream operator and the package store for the same graphs, compared object by object: pure.

Each controller's bookkeeping and what the API server allocates are dropped (``normalised``), each graph's worker
hash is masked (``masked_worker_hashes``), and the rest is compared by namespace, kind and name (``compare``),
tabled (``table``) and held against the allow-list of accepted deviations (``unexplained``). The graphs and the
live stacks are ``tests/differential.py``'s.
"""

from __future__ import annotations

import collections
import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]
Key = tuple[str, str, str]  # namespace, kind, name

META_DROPPED = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "ownerReferences",
    "finalizers",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
)
# Bookkeeping labels and annotations: Crossplane's own (by prefix), and the operator's change tracking
# (the hash and generation it last applied) and the conversion webhook's round-trip record of what a
# DCD's other API version cannot hold.
BOOKKEEPING_PREFIXES = ("crossplane.io/",)
BOOKKEEPING_KEYS = frozenset(
    {
        "nvidia.com/last-applied-hash",
        "nvidia.com/last-applied-generation",
        "nvidia.com/dcd-spec",
        "nvidia.com/dcd-status",
    }
)
# What the API server allocates for a Service, not what a controller writes.
SERVICE_ALLOCATED = ("clusterIP", "clusterIPs")


def _kept(mapping: dict[str, str] | None) -> dict[str, str]:
    return {
        k: v for k, v in (mapping or {}).items() if not k.startswith(BOOKKEEPING_PREFIXES) and k not in BOOKKEEPING_KEYS
    }


def normalised(obj: Obj) -> Obj:
    """``obj`` without its controller's bookkeeping: server-set metadata, owner references, finalizers, status,
    Crossplane's labels, annotations and ``spec.crossplane``, a Service's allocated IPs, a Secret's values."""
    out = copy.deepcopy(obj)
    out.pop("status", None)
    meta = out.get("metadata") or {}
    for key in META_DROPPED:
        meta.pop(key, None)
    for key in ("labels", "annotations"):
        kept = _kept(meta.get(key))
        if kept:
            meta[key] = kept
        else:
            meta.pop(key, None)
    spec = out.get("spec")
    if isinstance(spec, dict):
        spec.pop("crossplane", None)
        if out.get("kind") == "Service":
            for key in SERVICE_ALLOCATED:
                spec.pop(key, None)
    if out.get("kind") == "Secret":  # generated keys differ by nature; which keys is what matters
        out["data"] = dict.fromkeys(sorted(out.get("data") or {}), "<value>")
    return out


def differing_paths(a: Any, b: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """(path, a's value, b's value) where ``a`` and ``b`` differ; lists of named items are matched by name."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in a or key not in b:
                out.append((sub, a.get(key, "<absent>"), b.get(key, "<absent>")))
            else:
                out.extend(differing_paths(a[key], b[key], sub))
        return out
    if isinstance(a, list) and isinstance(b, list) and _named(a) and _named(b):
        return differing_paths({i["name"]: i for i in a}, {i["name"]: i for i in b}, path + "[name]")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differing_paths(x, y, f"{path}[{i}]")]
    return [] if a == b else [(path, a, b)]


def _named(items: list[Any]) -> bool:
    names = [i.get("name") for i in items if isinstance(i, dict)]
    return len(names) == len(items) and all(isinstance(n, str) for n in names) and len(set(names)) == len(names)


WORKER_HASH_LABEL = "nvidia.com/dynamo-worker-hash"
WORKER_HASH_MASK = "<worker-hash>"


def _replace_strings(node: Any, old: set[str]) -> Any:
    if isinstance(node, dict):
        return {_replace_strings(k, old): _replace_strings(v, old) for k, v in node.items()}
    if isinstance(node, list):
        return [_replace_strings(v, old) for v in node]
    if isinstance(node, str):
        for value in old:
            node = node.replace(value, WORKER_HASH_MASK)
    return node


def _hashes(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        value = node.get(WORKER_HASH_LABEL)
        if isinstance(value, str) and value:
            found.add(value)
        for child in node.values():
            _hashes(child, found)
    elif isinstance(node, list):
        for child in node:
            _hashes(child, found)


def masked_worker_hashes(objects: dict[Key, Obj]) -> dict[Key, Obj]:
    """``objects`` with each namespace's worker hashes (the values of its ``nvidia.com/dynamo-worker-hash``
    labels) replaced by ``<worker-hash>`` everywhere, names included: the two compute the hash differently (a
    row of docs/deviations.md), and the names, labels and env values that carry it follow from that alone."""
    by_namespace: dict[str, set[str]] = collections.defaultdict(set)
    for key, obj in objects.items():
        _hashes(obj, by_namespace[key[0]])
    out = {}
    for (namespace, kind, name), obj in objects.items():
        hashes = by_namespace[namespace]
        out[(namespace, kind, _replace_strings(name, hashes))] = _replace_strings(obj, hashes)
    return out


@dataclass
class Comparison:
    """Per kind: identical, differing, only the operator's, only ours; and every differing path with examples."""

    identical: collections.Counter[str] = field(default_factory=collections.Counter)
    differing: collections.Counter[str] = field(default_factory=collections.Counter)
    only_operator: collections.Counter[str] = field(default_factory=collections.Counter)
    only_ours: collections.Counter[str] = field(default_factory=collections.Counter)
    paths: dict[tuple[str, str], list[tuple[str, Any, Any]]] = field(default_factory=dict)  # (kind, path) → examples
    one_sided: list[tuple[str, Key]] = field(default_factory=list)  # ("operator"|"ours", key)
    # namespace -> (component deployment name, why the operator's reconcile of it fails), worker hashes masked
    component_failures: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def kinds(self) -> list[str]:
        return sorted(set(self.identical) | set(self.differing) | set(self.only_operator) | set(self.only_ours))


def compare(operator: dict[Key, Obj], ours: dict[Key, Obj], *, where: Callable[[Key], str] = str) -> Comparison:
    """Both stacks' normalised objects compared by (namespace, kind, name), worker hashes masked."""
    operator, ours = masked_worker_hashes(operator), masked_worker_hashes(ours)
    out = Comparison(component_failures=component_failures(operator))
    for key in sorted(set(operator) | set(ours)):
        kind = key[1]
        if key not in ours:
            out.only_operator[kind] += 1
            out.one_sided.append(("operator", key))
        elif key not in operator:
            out.only_ours[kind] += 1
            out.one_sided.append(("ours", key))
        else:
            diffs = differing_paths(normalised(operator[key]), normalised(ours[key]))
            if not diffs:
                out.identical[kind] += 1
                continue
            out.differing[kind] += 1
            for path, theirs, mine in diffs:
                out.paths.setdefault((kind, _indexless(path)), []).append((where(key), theirs, mine))
    return out


def _indexless(path: str) -> str:
    parts = []
    for part in path.split("."):
        parts.append(
            part.split("[")[0]
            + ("[]" if "[" in part and not part.endswith("[name]") else "")
            + ("[name]" if part.endswith("[name]") else "")
        )
    return ".".join(parts)


def _short(value: Any, width: int = 70) -> str:
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else value
    text = text.replace("|", "\\|").replace("\n", "\\n")
    return text if len(text) <= width else text[: width - 1] + "…"


def table(result: Comparison, *, top: int = 40) -> str:
    """The Markdown table per kind, then the most frequent differing paths with one example each."""
    lines = ["| kind | identical | differing | only the operator's | only ours |", "|---|---:|---:|---:|---:|"]
    for kind in result.kinds():
        lines.append(
            f"| {kind} | {result.identical[kind]} | {result.differing[kind]} | "
            f"{result.only_operator[kind]} | {result.only_ours[kind]} |"
        )
    total = [sum(c.values()) for c in (result.identical, result.differing, result.only_operator, result.only_ours)]
    lines.append(f"| **all** | {total[0]} | {total[1]} | {total[2]} | {total[3]} |")
    lines += ["", "| kind | path | objects | example: where | the operator's | ours |", "|---|---|---:|---|---|---|"]
    ranked = sorted(result.paths.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    for (kind, path), examples in ranked[:top]:
        where, theirs, mine = examples[0]
        lines.append(f"| {kind} | `{path}` | {len(examples)} | {where} | {_short(theirs)} | {_short(mine)} |")
    if len(ranked) > top:
        lines.append(f"\n{len(ranked) - top} more differing paths not shown.")
    sided = collections.Counter((side, key[1]) for side, key in result.one_sided)
    if sided:
        lines += ["", "One-sided objects (an example of each):", ""]
        for (side, kind), n in sorted(sided.items()):
            example = next(key for s, key in result.one_sided if (s, key[1]) == (side, kind))
            lines.append(
                f"- only {'the operator' if side == 'operator' else 'ours'}: {n} {kind} (e.g. "
                f"`{example[0]}/{example[2]}`)"
            )
    return "\n".join(lines) + "\n"


def component_failures(objects: dict[Key, Obj]) -> dict[str, list[tuple[str, str]]]:
    """The component deployments whose controller reports a failed reconcile (a false condition's message)."""
    out: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    for (namespace, kind, name), obj in sorted(objects.items()):
        if kind == "DynamoComponentDeployment":
            for condition in (obj.get("status") or {}).get("conditions") or []:
                if condition.get("status") == "False" and "Failed" in str(condition.get("message", "")):
                    out[namespace].append((name, str(condition["message"])))
    return dict(out)


def unexplained(result: Comparison, allowed: list[Obj], operator_states: dict[str, str]) -> list[str]:
    """Every difference of ``result`` no entry of ``allowed`` (``tests/differential_allowed.yaml``) explains;
    ``operator_states`` is the operator's state of each graph, by namespace. What the package composes for a
    graph the operator fails (``operator_failed``), or for a component deployment whose reconcile fails
    (``component_failed``: the objects named after it), is one-sided by nature."""
    out = []
    for (kind, path), examples in sorted(result.paths.items()):
        if not any(e.get("kind") == kind and "path" in e and re.fullmatch(e["path"], path) for e in allowed):
            where, theirs, mine = examples[0]
            out.append(
                f"{kind} {path}: {len(examples)} objects, e.g. {where}: "
                f"the operator's {_short(theirs)}, ours {_short(mine)}"
            )
    failed = [re.compile(e["operator_failed"]) for e in allowed if "operator_failed" in e]
    for side, (namespace, kind, name) in result.one_sided:
        by_name = any(
            e.get("side") == side and e.get("kind") == kind and re.fullmatch(e["name"], name)
            for e in allowed
            if "name" in e
        )
        by_failure = side == "ours" and any(f.search(operator_states.get(namespace, "")) for f in failed)
        by_component = side == "ours" and any(
            name.startswith(component) and re.search(e["component_failed"], message)
            for component, message in result.component_failures.get(namespace, [])
            for e in allowed
            if "component_failed" in e
        )
        if not (by_name or by_failure or by_component):
            out.append(f"only {side}: {kind} {namespace}/{name}")
    return out
