#!/usr/bin/env python3
"""Faults on the real stack, with nothing lost: each fault's time to recover, at N graphs.

    .venv/bin/python scripts/faults.py [--package namespaced|operator] [--graphs 100] [--fault NAME ...] [--json]

It starts what the test suite starts (etcd, kube-apiserver, kube-controller-manager and Crossplane on 127.0.0.1,
the namespaced package installed, the function as the packaged image under runc when root, else the checkout's
server; no audit log), applies N copies of examples/dgd/vllm-agg.yaml per fault in a namespace named after it,
plays Grove until they are Ready, then breaks one part while they run and brings it back
(tests/harness/fault_harness.py): ``function-kill`` (SIGKILL, back after 10 s), ``crossplane-restart``,
``apiserver-restart`` (etcd keeps its data), ``function-errors`` and ``function-hang`` (a fault proxy in front of
the function closes or holds every connection for 30 s; ``--down`` sets another time, e.g. past Crossplane's
2-minute reconcile timeout). Per fault it prints: seconds down (from the part broken to it serving again), seconds
to recover (from the part back to every graph Ready and Synced again), how many graphs were seen Synced=False
meanwhile and why, how many left Ready, and what was lost (composed objects deleted or recreated, pod templates or
Service specs changed): nothing, or the run fails. Everything it starts is stopped by PID at the end.

``--package operator`` runs, for comparison, the faults that apply to the upstream operator on a control plane of
its own with the operator as its chart runs it (tests/harness/operator_stack.py, as ``scripts/bench-cluster.py --package
operator`` starts it: needs root): ``operator-restart`` (the manager SIGTERMed and started again with the same
command line; back once it holds its leader-election Lease again) and ``apiserver-restart``. The function's faults
do not apply: the operator has no function. Its composed objects are those each DGD controls by owner reference; a
graph is back once Ready (the operator writes no Synced); instead of Synced=False it reports the DGDs' ``state``
and Ready reasons seen meanwhile, the edits its admission webhooks refused while it was down (the harness
annotates each graph), and whether its manager exited (then started again, as the kubelet would).
"""

from __future__ import annotations

import argparse
import collections
import json
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import pytest  # noqa: E402

from harness.bench_controllers import OPERATOR  # noqa: E402
from harness.controlplane import ControlPlane, start_control_plane  # noqa: E402
from harness.crossplane_core import start_crossplane  # noqa: E402
from harness.fault_harness import (  # noqa: E402
    FAULTS,
    OPERATOR_FAULTS,
    Outcome,
    Stack,
    apply_graphs,
    faults_of,
    make_ready,
    run_fault,
    settled,
)
from harness.operator_stack import start_operator  # noqa: E402

PACKAGES = ("namespaced", OPERATOR)
ALL_FAULTS = (*FAULTS, *(f for f in OPERATOR_FAULTS if f not in FAULTS))


def summary(outcome: Outcome, ready_seconds: float) -> dict[str, Any]:
    false = outcome.synced_false()
    reasons = collections.Counter(f"{s.reason}: {s.message[:160]}" for s in false)
    not_ready = [s for s in outcome.sampler.sightings if s.ready != "True"]
    left_ready = sorted({s.graph for s in not_ready})
    return {
        "fault": outcome.fault,
        "graphs": outcome.graphs,
        "ready_before_s": round(ready_seconds, 1),
        "down_s": outcome.down_seconds,
        "recover_s": outcome.recover_seconds,
        "synced_false_graphs": len({s.graph for s in false}),
        "synced_false_sightings": len(false),
        "unanswered_reads": outcome.sampler.failed_reads,
        "left_ready": left_ready,
        "reasons": dict(reasons.most_common(3)),
        "states": dict(collections.Counter(s.state or "(none)" for s in outcome.sampler.sightings)),
        "not_ready_reasons": dict(collections.Counter(f"Ready={s.ready} {s.ready_reason}" for s in not_ready)),
        "refused": len(outcome.refused),
        "refused_why": dict(collections.Counter(r.split(": ", 1)[-1][:300] for r in outcome.refused).most_common(2)),
        "notes": outcome.notes,
        "lost": outcome.problems,
    }


def start_stack(cp: ControlPlane, package: str) -> Stack:
    if package == OPERATOR:
        try:
            operator = start_operator(cp)
        except (pytest.skip.Exception, pytest.fail.Exception) as err:  # a missing prerequisite: its build, helm, root
            raise SystemExit(f"faults: --package {OPERATOR}: {err}") from None
        print(f"faults: the operator {operator.version} runs as its chart runs it", file=sys.stderr)
        return operator
    crossplane = start_crossplane(cp)
    print(f"faults: the function runs as a {crossplane.function_runtime}", file=sys.stderr)
    return crossplane


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--package",
        choices=PACKAGES,
        default="namespaced",
        help="the namespaced package (default) or, for comparison, the upstream operator; the function's faults "
        f"do not apply to the operator (it has none): for it, {' and '.join(OPERATOR_FAULTS)}",
    )
    parser.add_argument("--graphs", type=int, default=100, help="graphs per fault (default 100)")
    parser.add_argument(
        "--fault",
        action="append",
        choices=ALL_FAULTS,
        help="a fault to run (repeatable; default all that apply to the --package: "
        f"{', '.join(FAULTS)} for the package, {', '.join(OPERATOR_FAULTS)} for the operator)",
    )
    parser.add_argument(
        "--down",
        type=float,
        help="seconds the function is down or failing (default 10 for a kill, 30 for the proxy's faults)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    applies = OPERATOR_FAULTS if args.package == OPERATOR else FAULTS
    wrong = [f for f in args.fault or () if f not in applies]
    if wrong:
        why = "the operator has no function" if args.package == OPERATOR else "the package runs no operator"
        parser.error(f"{', '.join(wrong)} does not apply to --package {args.package} ({why}): "
                     f"choose from {', '.join(applies)}")  # fmt: skip
    if args.down is not None and args.package == OPERATOR:
        parser.error("--down sets how long the function is down: the operator has no function")
    return args


def main() -> None:
    args = parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # still stop what was started
    run_dir = Path(tempfile.mkdtemp(prefix="faults-"))
    controller = "the operator" if args.package == OPERATOR else "Crossplane"
    print(f"faults: starting a control plane and {controller} in {run_dir} ...", file=sys.stderr)
    cp = start_control_plane(run_dir, audit=False)
    rows = []
    try:
        stack = start_stack(cp, args.package)
        for fault in args.fault or faults_of(stack):
            print(f"faults: {fault}: {args.graphs} graphs ...", file=sys.stderr)
            t0 = time.monotonic()
            names = apply_graphs(cp, fault, args.graphs)
            make_ready(cp, fault, names, seconds=300 + 5 * args.graphs, done=settled(stack))
            ready_seconds = time.monotonic() - t0
            outcome = run_fault(stack, fault, fault, names, recover=300 + 5 * args.graphs, down=args.down)
            rows.append(summary(outcome, ready_seconds))
            print(f"faults: {fault}: {json.dumps(rows[-1])}", file=sys.stderr)
            if outcome.problems:
                raise SystemExit(f"faults: {fault} lost or changed {outcome.problems}")
    finally:
        cp.stop()
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print_table(rows, args.package)


def print_table(rows: list[dict[str, Any]], package: str) -> None:
    operator = package == OPERATOR
    print(f"\n{package}:\n{'fault':<19} {'graphs':>6} {'down s':>7} {'recover s':>10} {'Synced=False graphs':>20}"
          f" {'left Ready':>11} {'edits refused':>14} {'lost':>5}")  # fmt: skip
    for r in rows:
        synced = "-" if operator else r["synced_false_graphs"]
        print(f"{r['fault']:<19} {r['graphs']:>6} {r['down_s']:>7} {r['recover_s']:>10} {synced:>20}"
              f" {len(r['left_ready']):>11} {r['refused']:>14} {len(r['lost']):>5}")  # fmt: skip
    for r in rows:
        if not operator:
            print(f"\n{r['fault']}: Synced=False reasons seen: {r['reasons'] or 'none'}")
        else:
            print(f"\n{r['fault']}: DGD states seen: {r['states']}; Ready seen: {r['not_ready_reasons'] or 'True'}")
        print(f"{r['fault']}: graphs seen not Ready: {r['left_ready'] or 'none'}; reads unanswered: "
              f"{r['unanswered_reads']}")  # fmt: skip
        print(f"{r['fault']}: edits refused meanwhile: {r['refused_why'] or 'none'}")
        for note in r["notes"]:
            print(f"{r['fault']}: {note}")
    print("\ndown: from the part broken to it serving again (the operator: its manager leading again); recover: from")
    print("the part back to every graph read Ready and Synced again (the operator: Ready; 0 when none left it);")
    print("Synced=False graphs: graphs seen Synced=False meanwhile (the operator writes no Synced); left Ready: graphs")
    print("seen not Ready; edits refused: the harness's annotation of each graph while the part was down, refused;")
    print("lost: composed objects deleted or recreated, pod templates or Services changed")


if __name__ == "__main__":
    main()
