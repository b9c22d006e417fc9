#!/usr/bin/env python3
"""The same graphs on the upstream operator and on the package: what each stores, compared object by object.

    .venv/bin/python scripts/differential.py [--limit N] [--out docs/upstream/differential.md]

Starts two control planes on 127.0.0.1: one with the upstream operator as its chart runs it
(``tests/harness/operator_stack.py``), one with Crossplane and the namespaced package
(``tests/harness/crossplane_core.py``), the package reading the operator's own configuration as its
``dynamo-platform`` EnvironmentConfig. Every DynamoGraphDeployment of ``../shared/corpus`` and of upstream's golden
DGD inputs is applied to both, on the Grove pathway and on the component pathway, each in a namespace of its own;
once nothing changes any more, what each stores is read back, each controller's bookkeeping dropped
(``tests/harness/differential.py``), and compared. Prints the table per kind and the most frequent differing paths,
and writes them with the run's facts to ``--out``.

Needs what ``scripts/test.sh`` sets up (the control plane, Crossplane, the packages in ``dist/``, the operator
built by ``scripts/install-tools.sh``) and root (the operator's namespace comes from a private mount namespace).
About 10 minutes on two cores for the whole corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from fixtures.corpus import RUNTIME_VERSION  # noqa: E402
from fixtures.differential_compare import Key, compare, table, unexplained  # noqa: E402
from fixtures.tooling import shared_dir  # noqa: E402
from harness.controlplane import ControlPlane, start_control_plane  # noqa: E402
from harness.crossplane_core import ENVIRONMENT_CONFIGS, apply, start_crossplane  # noqa: E402
from harness.differential import (  # noqa: E402
    Graph,
    all_graphs,
    apply_graphs,
    graph_states,
    platform_config,
    settle,
)
from harness.migration_report import migration_report, preview_graphs  # noqa: E402
from harness.operator_stack import start_operator  # noqa: E402

Obj = dict[str, Any]


def log(message: str) -> None:
    print(f"==> differential: {message}", file=sys.stderr, flush=True)


def package_stack(run_dir: Path, operator_config: dict) -> ControlPlane:
    """A control plane with Crossplane, the namespaced package and the operator's configuration."""
    cp = start_control_plane(run_dir, audit=False)
    try:
        start_crossplane(cp)
        apply(cp, platform_config(operator_config), ENVIRONMENT_CONFIGS)
    except BaseException:
        cp.stop()
        raise
    return cp


@dataclass
class Observed:
    """What one run saw, by side (``operator``, ``ours``): the objects, the refusals and each graph's state (both
    by namespace), and the operator's version."""

    version: str
    objects: dict[str, dict[Key, Obj]]
    refused: dict[str, dict[str, str]]
    states: dict[str, dict[str, str]]
    previews: dict[str, Obj]  # by namespace: `migrate release --dry-run` on the operator's stack

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        objects = {side: {"/".join(k): v for k, v in objs.items()} for side, objs in self.objects.items()}
        text = json.dumps(
            {
                "version": self.version,
                "objects": objects,
                "refused": self.refused,
                "states": self.states,
                "previews": self.previews,
            },
            indent=1,
            sort_keys=True,
        )
        (directory / "observed.json").write_text(text)

    @classmethod
    def load(cls, directory: Path) -> Observed:
        data = json.loads((directory / "observed.json").read_text())
        objects = {side: {tuple(k.split("/", 2)): v for k, v in objs.items()} for side, objs in data["objects"].items()}
        return cls(data["version"], objects, data["refused"], data["states"], data.get("previews") or {})  # type: ignore[arg-type]


def observe(graphs: list[Graph], run_dir: Path) -> Observed:
    """Both stacks started, given ``graphs``, settled and read back; both stopped."""
    log(f"starting the upstream operator's stack in {run_dir / 'operator'}")
    op_cp = start_control_plane(run_dir / "operator", audit=False)
    try:
        operator = start_operator(op_cp)
        log(f"starting the package's stack in {run_dir / 'package'}")
        ours_cp = package_stack(run_dir / "package", operator.config)
        try:
            stacks = {"operator": op_cp, "ours": ours_cp}
            namespaces = sorted({g.namespace for g in graphs})
            refused = {side: apply_graphs(cp, graphs) for side, cp in stacks.items()}
            log(
                f"applied {len(graphs)} graphs; refused: operator {len(refused['operator'])}, "
                f"ours {len(refused['ours'])}; waiting for both to settle"
            )
            objects = {
                side: settle(cp, namespaces, progress=lambda m, s=side: log(f"{s}: {m}")) for side, cp in stacks.items()
            }
            states = {side: graph_states(cp, graphs) for side, cp in stacks.items()}
            log("previewing each graph's move from the operator to the package (migrate release --dry-run)")
            previews = preview_graphs(op_cp, graphs, platform_config(operator.config), progress=log)
        finally:
            ours_cp.stop()
    finally:
        op_cp.stop()
    by_namespace = {
        side: {g.namespace: message for g, message in by_graph.items()} for side, by_graph in refused.items()
    }
    state_text = {side: {g.namespace: state for g, state in by.items()} for side, by in states.items()}
    return Observed(operator.version, objects, by_namespace, state_text, previews)


def report(observed: Observed, graphs: list[Graph]) -> str:
    sources = {g.namespace: f"{g.source} ({g.pathway})" for g in graphs}
    result = compare(observed.objects["operator"], observed.objects["ours"], where=lambda k: f"{sources[k[0]]}: {k[2]}")
    lines = [
        "# The upstream operator beside the package: the same graphs, what each stores",
        "",
        "Written by `scripts/differential.py`; do not edit by hand. The upstream operator at the pinned commit",
        f"(version {observed.version}), run as its Helm chart runs it, and the namespaced package, reading the",
        f"operator's own configuration, were each given the same {len(graphs)} graphs:",
        f"{len({g.source for g in graphs})} DynamoGraphDeployments (upstream's example corpus and its golden DGD",
        "inputs, in both API versions) on the Grove pathway and on the component pathway (`nvidia.com/enable-grove:",
        '"false"`), each in a namespace of its own. A component whose main image has no semantic-version tag (the',
        f"corpus's `:my-tag`) gets `runtimeVersionOverride: {RUNTIME_VERSION}`, which the operator requires and which",
        "changes nothing it renders. Compared after the API server's defaulting, without each controller's",
        "bookkeeping (owner references, managed fields, resource versions, finalizers, status, Crossplane's labels,",
        "annotations and `spec.crossplane`, the operator's last-applied hash and generation annotations and its",
        "conversion records), a Service's allocated cluster IPs or a Secret's generated values, and with each",
        "graph's worker hash masked (`<worker-hash>`): the two compute it differently (a row of",
        "docs/deviations.md), and names, labels and env values carry it.",
        "Differences a user would accept are rows of docs/deviations.md; the allow-list",
        "`tests/differential_allowed.yaml` names them, and `tests/test_operator_differential.py` fails on any other.",
        "",
        table(result),
    ]
    allowed = yaml.safe_load((REPO / "tests" / "differential_allowed.yaml").read_text()) or []
    problems = unexplained(result, allowed, observed.states["operator"])
    lines += [
        "Differences no entry of `tests/differential_allowed.yaml` explains: "
        f"{len(problems)}{':' if problems else '.'}",
        "",
    ]
    lines += [f"- {p}" for p in problems[:60]]
    lines.append("")
    for side, by_namespace in observed.refused.items():
        if by_namespace:
            lines += [f"Refused by {'the operator' if side == 'operator' else 'the package'}:", ""]
            lines += [
                f"- {sources[ns]}: {msg[:300]}"
                for ns, msg in sorted(by_namespace.items(), key=lambda kv: sources[kv[0]])
            ]
            lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=0, help="only the first N graphs (0: all)")
    parser.add_argument("--only", default="", help="only the graphs whose source matches this regular expression")
    parser.add_argument("--run-dir", type=Path, help="keep the stacks' files (logs) here instead of a temporary dir")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "upstream" / "differential.md")
    parser.add_argument("--migration-out", type=Path, default=REPO / "docs" / "upstream" / "migration-preview.md")
    parser.add_argument("--dump", type=Path, help="also write each stack's objects as JSON into this directory")
    parser.add_argument("--from-dump", type=Path, help="compare the objects a run with --dump wrote; start nothing")
    args = parser.parse_args()
    golden = shared_dir() / "upstream" / "golden"
    if not golden.is_dir():
        sys.exit(f"differential.py: {golden} is missing: the graphs come from ../shared (corpus and golden)")
    graphs = all_graphs(golden)
    if args.only:
        graphs = [g for g in graphs if re.search(args.only, g.source)]
    if args.limit:
        graphs = graphs[: args.limit]
    started = time.monotonic()
    if args.from_dump:
        observed = Observed.load(args.from_dump)
    else:
        if args.run_dir:
            args.run_dir.mkdir(parents=True, exist_ok=True)
            observed = observe(graphs, args.run_dir)
        else:
            with tempfile.TemporaryDirectory(prefix="differential-") as tmp:
                observed = observe(graphs, Path(tmp))
        if args.dump:
            observed.save(args.dump)
    text = report(observed, graphs)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    if observed.previews:
        args.migration_out.write_text(
            migration_report(observed.previews, graphs, observed.version, observed.states["operator"])
        )
        log(f"wrote {os.path.relpath(args.migration_out)}")
    log(f"wrote {os.path.relpath(args.out)} in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
