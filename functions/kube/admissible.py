"""Whether the names and label values a graph's objects carry are ones the cluster admits.

Upstream names a component's Service, its DynamoComponentDeployment, Deployment and LeaderWorkerSet after the
graph (``{dgd}-{component}``), and labels them and their pods with the graph's Dynamo namespace
(``{namespace}-{dgd}``) and ``{dgd}-{component}`` selectors. Only the PodCliqueSet name and the elastic-EP
leader's Service are cut to fit, with a hash (``naming.podcliqueset_name``). So a long graph name (or a long
namespace or component name) makes objects the cluster refuses: a Service or LeaderWorkerSet name is a DNS-1035
label (at most 63 characters, starting with a letter), and a label value has at most 63 characters. Upstream's
webhook admits such a graph and its reconcile then fails on the first of them (the API server refuses the
Service, Grove its PodCliques). Here the step refuses the graph with a Fatal naming ``metadata.name`` before
anything is composed, and ``function-dynamo validate`` reports it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from functions.api.echo import shown
from functions.api.graph import SpecError

MAX_LABEL = 63  # a DNS-1035 label, and a label value
# A component's name is part of the names of what it composes (its Service, workloads and Grove clique, label
# values), which the cluster checks as DNS-1123 names: ASCII letters, digits, '-' and '.' (a Service name gets '-'
# for '.'), a letter or digit first and last, at most 63 characters. The v1beta1 schema asks the same of
# spec.components[].name (without '.'); v1alpha1's service keys and a DCD's serviceName have no schema rule.
COMPONENT_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9.]{0,61}[A-Za-z0-9])?$")
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
# Kinds whose name must be a DNS-1035 label: the API server's Service validation, LeaderWorkerSet's webhook (its
# name is its headless Service's).
DNS1035_NAMED = ("Service", "LeaderWorkerSet")
LABEL_MAPS = ("labels", "matchLabels")


@dataclass(frozen=True)
class Refused:
    """One name or label value the cluster would refuse."""

    what: str  # 'Service name "x"', 'label nvidia.com/dynamo-namespace "y"'
    value: str
    rule: str

    def __str__(self) -> str:
        return f"{self.what} {self.rule}"


def _label_maps(node: Any, kind: str, path: tuple[str, ...] = ()) -> Iterator[dict[str, Any]]:
    """Every label map in a composed object: ``labels``/``matchLabels`` at any depth (metadata, pod templates,
    Grove cliques, selectors), and a Service's ``spec.selector``."""
    if isinstance(node, dict):
        for key, value in node.items():
            if not isinstance(value, dict):
                yield from _label_maps(value, kind, (*path, key))
            elif key in LABEL_MAPS or (kind == "Service" and (*path, key) == ("spec", "selector")):
                yield value
            else:
                yield from _label_maps(value, kind, (*path, key))
    elif isinstance(node, list):
        for item in node:
            yield from _label_maps(item, kind, path)


def refused_names(owner: str, objects: Iterable[dict[str, Any]]) -> list[Refused]:
    """The names and label values derived from ``owner`` (a graph's name; dots may be replaced by dashes) in
    ``objects`` that the cluster would refuse, each once."""
    variants = {owner, owner.replace(".", "-")}
    found: dict[str, Refused] = {}

    def derived(value: Any) -> bool:
        return isinstance(value, str) and any(v in value for v in variants)

    for obj in objects:
        kind = str(obj.get("kind") or "")
        name = (obj.get("metadata") or {}).get("name")
        if kind in DNS1035_NAMED and derived(name):
            what = f'{kind} name "{name}"'
            if len(name) > MAX_LABEL:
                found[what] = Refused(what, name, f"is {len(name)} characters, at most {MAX_LABEL}")
            elif not DNS1035_LABEL.match(name):
                found[what] = Refused(what, name, "must start with a letter (a DNS-1035 label)")
        for labels in _label_maps(obj, kind):
            for key, value in labels.items():
                if derived(value) and len(value) > MAX_LABEL:
                    what = f'label {key} "{value}"'
                    found[what] = Refused(what, value, f"is {len(value)} characters, at most {MAX_LABEL}")
    return sorted(found.values(), key=lambda r: r.what)


def check_names(owner: str, objects: Iterable[dict[str, Any]], field: str = "metadata.name") -> None:
    """Raise ``SpecError`` at ``field`` (the owner's name) when ``refused_names`` finds anything, saying how long a
    name fits."""
    refused = refused_names(owner, objects)
    if not refused:
        return
    shown = "; ".join(map(str, refused[:3])) + (f"; and {len(refused) - 3} more" if len(refused) > 3 else "")
    longest = min(
        (MAX_LABEL - (len(r.value) - len(owner)) for r in refused if len(r.value) > MAX_LABEL), default=len(owner)
    )
    if any(not DNS1035_LABEL.match(r.value) and len(r.value) <= MAX_LABEL for r in refused):
        fix = "start the name with a letter"
    elif longest >= 1:
        fix = f"a name of at most {longest} characters fits"
    else:
        fix = "no name fits: the namespace or a component name leaves no room"
    raise SpecError(
        f"{field}: {owner!r} ({len(owner)} characters) makes names the cluster refuses in the objects it composes: "
        f"{shown}; {fix}"
    )


def check_component_name(name: str, path: str) -> None:
    """Raise ``SpecError`` at ``path`` when ``name`` (a component's) is not one the objects it composes can carry
    (``COMPONENT_NAME``), saying which character is wrong, invisible ones (a right-to-left mark) included."""
    if COMPONENT_NAME.match(name):
        return
    bad = next((i for i, c in enumerate(name) if not (c.isascii() and (c.isalnum() or c in "-."))), None)
    if not name:
        problem = "is empty"
    elif bad is not None:
        char = name[bad]
        label = unicodedata.name(char, "")
        what = f"'{char}' " if char.isprintable() and not char.isspace() else ""
        problem = f"has {what}(U+{ord(char):04X}{f' {label}' if label else ''}) at character {bad + 1}"
    elif len(name) > MAX_LABEL:
        problem = f"is {len(name)} characters"
    else:
        problem = "does not start and end with a letter or digit"
    raise SpecError(
        f'{path}: the name "{shown(name)}" {problem}: a component\'s name is part of the names of the objects it '
        "composes (its Service, workloads, labels), which the cluster checks as DNS-1123 names: ASCII letters, "
        f"digits, '-' and '.', a letter or digit first and last, at most {MAX_LABEL} characters"
    )
