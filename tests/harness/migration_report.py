"""Every corpus graph the operator runs, previewed as moving to the package (``migrate release --dry-run``), and the
page that lists them (``scripts/differential.py`` writes it to ``docs/upstream/migration-preview.md``)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from functions.tooling.kubectl import Kubectl
from functions.tooling.migrate_dry_run import preview_namespace, render_inputs
from functions.tooling.migration_preview import GraphPreview, reason_for
from harness.controlplane import ControlPlane, require_kubectl
from harness.differential import Graph

Obj = dict[str, Any]


def _summary(preview: GraphPreview) -> Obj:
    reasons = sorted({reason_for(p) for paths in preview.changed.values() for p in paths})
    return {
        "graph": preview.graph,
        "unchanged": preview.unchanged,
        "changed": {w: paths for w, paths in preview.changed.items()},
        "broken": preview.broken,
        "created": preview.created,
        "refused": preview.refused,
        "reasons": reasons,
    }


def preview_graphs(
    cp: ControlPlane, graphs: Iterable[Graph], platform: Obj, progress: Callable[[str], None] = lambda _: None
) -> dict[str, Obj]:
    """By namespace: the dry run of moving its graph from the operator (running on ``cp``) to the package, which
    reads ``platform`` (its ``dynamo-platform`` EnvironmentConfig)."""
    kubectl = Kubectl(str(require_kubectl()), kubeconfig=str(cp.kubeconfig))
    inputs = dataclasses.replace(render_inputs(None), required=[platform])
    out: dict[str, Obj] = {}
    graphs = list(graphs)
    for i, graph in enumerate(graphs, 1):
        previews = preview_namespace(kubectl, graph.namespace, inputs)
        out[graph.namespace] = {"graphs": [_summary(p) for p in previews]}
        if i % 25 == 0:
            progress(f"previewed {i} of {len(graphs)} graphs")
    return out


def _refusal(message: str, operator_state: str) -> str:
    """The first reason of a refusal (after kubectl's header), and what the operator made of the graph."""
    reasons = [p.strip() for p in message.split("* ") if p.strip() and "were not checked" not in p]
    first = (reasons[1] if len(reasons) > 1 and reasons[0].endswith("is invalid:") else reasons[0]) if reasons else ""
    return f"{first[:140]} (the operator: {operator_state.split(';')[0] or 'no state'})"


def verdict(summary: Obj) -> str:
    if summary["refused"]:
        return "the package refuses it"
    if summary["changed"]:
        return "would restart"
    if summary["unchanged"]:
        return "moves without a restart"
    return "nothing running to move"


def migration_report(previews: dict[str, Obj], graphs: list[Graph], version: str, states: dict[str, str]) -> str:
    """The page: counts by verdict, the reasons, a row per graph (a graph the package refuses with the state the
    operator left it in: most of those it does not run either)."""
    rows = []
    counts: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for graph in sorted(graphs, key=lambda g: (g.source, g.pathway)):
        summaries = (previews.get(graph.namespace) or {}).get("graphs") or []
        if not summaries:
            counts["not run by the operator"] += 1
            continue
        for summary in summaries:
            state = verdict(summary)
            counts[state] += 1
            reasons.update(summary["reasons"])
            why = "; ".join(summary["reasons"])
            if summary["refused"]:
                why = _refusal(summary["refused"], states.get(graph.namespace, ""))
            workloads = ", ".join(sorted(summary["changed"]) or summary["unchanged"])
            rows.append(f"| {graph.source} | {graph.pathway} | {state} | {workloads} | {why} |")
    lines = [
        "# Moving the corpus from the upstream operator to the package: which graphs restart",
        "",
        "Written by `scripts/differential.py`; do not edit by hand. With the upstream operator at the pinned commit",
        f"(version {version}) running every graph of `docs/upstream/differential.md`, `function-dynamo migrate",
        "release --dry-run` was run in each graph's namespace, the package reading the operator's own configuration:",
        "each graph rendered as the package will, each composed workload applied over the operator's as a",
        "server-side dry run, the pod templates compared. A graph *would restart* when a pod template changes",
        "(a Deployment's, a LeaderWorkerSet's or a PodCliqueSet clique's); the reasons are the rows of",
        "`docs/deviations.md` that touch pod templates. A graph *the package refuses* is one whose stored form it",
        "does not admit:",
        "most are v1alpha1 graphs with a service typed `main` or `default`, which the operator stores in a v1beta1",
        "form neither side admits again and fails to run itself; apply such a graph from its own v1alpha1 manifest",
        "(the package runs it: a deviation row), not from `release`'s `graphs.yaml`.",
        "",
        "| verdict | graphs |",
        "|---|---:|",
        *(f"| {state} | {n} |" for state, n in sorted(counts.items())),
        "",
        "Why graphs would restart:",
        "",
        *(f"- {n} graph(s): {reason}" for reason, n in reasons.most_common()),
        "",
        "| graph | pathway | verdict | workloads | why |",
        "|---|---|---|---|---|",
        *rows,
        "",
    ]
    return "\n".join(lines)
