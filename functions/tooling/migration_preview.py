"""Would moving a graph to this package restart its pods? The rules, over objects as ``kubectl`` prints them.

A pod restarts when its template changes: a Deployment's ``spec.template`` (a new ReplicaSet), a
LeaderWorkerSet's leader or worker template, a Grove PodCliqueSet clique's pod spec, labels or annotations.
After ``release``, Crossplane server-side applies what the package composes over the objects the operator made:
fields only the operator wrote stay, fields the package writes take its values. So the honest preview is the
API server's own answer: the composed object applied as a dry run (``--dry-run=server``, conflicts forced as
Crossplane forces them), its pod templates compared with the live ones. ``functions.tooling.migrate`` does that
I/O; this module says where templates are, where two differ and, for the differences this package knows it
makes, why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]

# Why a template differs, for the differences docs/deviations.md gives a reason for. A path is
# written with list items by name: ``spec.template.cliques[worker-ldr].spec.podSpec.containers[main].args``.
KNOWN_REASONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"\.containers\[[^]]+\]\.(args|command)\b"),
        "the package writes its own launch command (for multinode graphs, its own SSH and mpirun setup; "
        "deviation 'The multinode helper scripts')",
    ),
    (
        re.compile(r"mpi-run-ssh-secret"),
        "the MPI SSH key is a per-graph Secret copy (deviation 'The MPI SSH Secret is a per-graph copy')",
    ),
    (
        re.compile(r"nvidia\.com/dynamo-worker-hash|DYN_NAMESPACE_WORKER_SUFFIX"),
        "the worker hash: the graph carries no operator hash annotation to keep (deviation on the worker hash)",
    ),
)
UNKNOWN_REASON = "the package renders this field differently"


def pod_templates(obj: Obj) -> dict[str, Any]:
    """Where ``obj`` holds pod templates, by path: nothing for an object that runs no pods."""
    kind = obj.get("kind")
    spec = obj.get("spec") or {}
    if kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"):
        return {"spec.template": spec.get("template")}
    if kind == "LeaderWorkerSet":
        lwt = spec.get("leaderWorkerTemplate") or {}
        return {
            f"spec.leaderWorkerTemplate.{part}": lwt.get(part)
            for part in ("leaderTemplate", "workerTemplate")
            if part in lwt
        }
    if kind == "PodCliqueSet":
        out: dict[str, Any] = {}
        for clique in (spec.get("template") or {}).get("cliques") or []:
            where = f"spec.template.cliques[{clique.get('name')}]"
            out[f"{where}.spec.podSpec"] = (clique.get("spec") or {}).get("podSpec")
            out[f"{where}.labels"] = clique.get("labels")
            out[f"{where}.annotations"] = clique.get("annotations")
        return out
    return {}


def _by_name(items: list[Any]) -> dict[str, Any] | None:
    """A list of named items (containers, env, volumes, ports) as a mapping by name; None if it is not one."""
    if not items or not all(isinstance(i, dict) and isinstance(i.get("name"), str) for i in items):
        return None
    named = {i["name"]: i for i in items}
    return named if len(named) == len(items) else None


def differences(before: Any, after: Any, path: str) -> list[str]:
    """The paths where two values differ; list items of a named list by name, others by index."""
    if isinstance(before, dict) and isinstance(after, dict):
        return [
            d for k in sorted(set(before) | set(after)) for d in differences(before.get(k), after.get(k), f"{path}.{k}")
        ]
    if isinstance(before, list) and isinstance(after, list):
        named_before, named_after = _by_name(before), _by_name(after)
        if named_before is not None and named_after is not None:
            names = sorted(set(named_before) | set(named_after))
            return [d for n in names for d in differences(named_before.get(n), named_after.get(n), f"{path}[{n}]")]
        if len(before) == len(after):
            return [
                d for i, (b, a) in enumerate(zip(before, after, strict=True)) for d in differences(b, a, f"{path}[{i}]")
            ]
    return [] if before == after else [path]


def template_changes(live: Obj, applied: Obj) -> list[str]:
    """The paths of ``live``'s pod templates that ``applied`` (the object once the package's apply lands) changes."""
    before, after = pod_templates(live), pod_templates(applied)
    return [
        d for where in sorted(set(before) | set(after)) for d in differences(before.get(where), after.get(where), where)
    ]


def _pod_specs(obj: Obj) -> list[dict[str, Any]]:
    """The pod specs among ``obj``'s templates (a PodCliqueSet's are pod specs, the others' pod template specs)."""
    specs = []
    for where, template in pod_templates(obj).items():
        if where.endswith(".podSpec"):
            specs.append(template)
        elif not where.endswith((".labels", ".annotations")):
            specs.append((template or {}).get("spec"))
    return [s for s in specs if isinstance(s, dict)]


def clashes(applied: Obj) -> list[str]:
    """What would keep the pods of ``applied`` from starting: two volume mounts of one container at one path
    (the operator's mount of a volume stays beside the package's mount of its own, under another name)."""
    out = []
    for pod in _pod_specs(applied):
        for container in [*(pod.get("containers") or []), *(pod.get("initContainers") or [])]:
            paths: dict[str, str] = {}
            for mount in container.get("volumeMounts") or []:
                first = paths.setdefault(mount.get("mountPath"), mount.get("name"))
                if first != mount.get("name"):
                    out.append(
                        f"container {container.get('name')}: volume mounts {first} and {mount.get('name')} both at "
                        f"{mount.get('mountPath')}"
                    )
    return out


def reason_for(path: str) -> str:
    for pattern, reason in KNOWN_REASONS:
        if pattern.search(path):
            return reason
    return UNKNOWN_REASON


@dataclass
class GraphPreview:
    """What moving one graph to the package would do to what it runs."""

    graph: str  # "<Kind>/<namespace>/<name>"
    unchanged: list[str] = field(default_factory=list)  # "<Kind>/<name>" of workloads whose templates stay
    changed: dict[str, list[str]] = field(default_factory=dict)  # workload -> template paths that would change
    created: list[str] = field(default_factory=list)  # workloads the package composes that do not run yet
    broken: dict[str, list[str]] = field(default_factory=dict)  # workload -> why its pods would not start
    refused: str = ""  # why the package would not compose the graph at all

    @property
    def restarts(self) -> bool:
        return bool(self.changed or self.refused)

    def lines(self, shown: int = 4) -> list[str]:
        """What a person reads: the verdict, then each workload that would roll with its paths and reasons."""
        if self.refused:
            return [f"{self.graph}: cannot move: the package refuses it: {self.refused}"]
        if not self.changed:
            kept = f"{len(self.unchanged)} workload(s) keep their pod templates"
            new = f"; the package would also create {', '.join(self.created)}" if self.created else ""
            return [f"{self.graph}: moves without a restart ({kept}{new})"]
        out = [f"{self.graph}: would restart {len(self.changed)} workload(s)"]
        for workload, paths in sorted(self.changed.items()):
            out.append(f"  {workload}:")
            reasons: dict[str, list[str]] = {}
            for path in paths:
                reasons.setdefault(reason_for(path), []).append(path)
            for reason, where in reasons.items():
                more = f" (+{len(where) - shown} more)" if len(where) > shown else ""
                out.append(f"    {', '.join(where[:shown])}{more}: {reason}")
        for workload, why in sorted(self.broken.items()):
            out.append(
                f"  {workload}: its new pods would not start ({'; '.join(why)}): after `release`, delete it so "
                "the package creates it afresh (its pods restart either way)"
            )
        return out
