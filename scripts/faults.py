#!/usr/bin/env python3
"""Faults on the real stack, with nothing lost: each fault's time to recover, at N graphs.

    .venv/bin/python scripts/faults.py [--graphs 100] [--fault NAME ...] [--json]

It starts what the test suite starts (etcd, kube-apiserver, kube-controller-manager and Crossplane on 127.0.0.1,
the namespaced package installed, the function as the packaged image under runc when root, else the checkout's
server; no audit log), applies N copies of examples/dgd/vllm-agg.yaml per fault in a namespace named after it,
plays Grove until they are Ready, then breaks one part while they run and brings it back
(tests/fault_harness.py): ``function-kill`` (SIGKILL, back after 10 s), ``crossplane-restart``,
``apiserver-restart`` (etcd keeps its data), ``function-errors`` and ``function-hang`` (a fault proxy in front of
the function closes or holds every connection for 30 s; ``--down`` sets another time, e.g. past Crossplane's
2-minute reconcile timeout). Per fault it prints: seconds down (from the part broken to it serving again), seconds
to recover (from the part back to every graph Ready and Synced again), how many graphs were seen Synced=False
meanwhile and why, how many left Ready, and what was lost (composed objects deleted or recreated, pod templates or
Service specs changed): nothing, or the run fails. Everything it starts is stopped by PID at the end.
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

from fault_harness import FAULTS, Outcome, apply_graphs, make_ready, run_fault  # noqa: E402

from controlplane import start_control_plane  # noqa: E402
from crossplane_core import start_crossplane  # noqa: E402


def summary(outcome: Outcome, ready_seconds: float) -> dict[str, Any]:
    false = outcome.synced_false()
    reasons = collections.Counter(f"{s.reason}: {s.message[:160]}" for s in false)
    left_ready = sorted({s.graph for s in outcome.sampler.sightings if s.ready != "True"})
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
        "lost": outcome.problems,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graphs", type=int, default=100, help="graphs per fault (default 100)")
    parser.add_argument("--fault", action="append", choices=FAULTS, help="a fault to run (repeatable; default all)")
    parser.add_argument(
        "--down",
        type=float,
        help="seconds the function is down or failing (default 10 for a kill, 30 for the proxy's faults)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    faults = args.fault or list(FAULTS)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # still stop what was started
    run_dir = Path(tempfile.mkdtemp(prefix="faults-"))
    print(f"faults: starting a control plane and Crossplane in {run_dir} ...", file=sys.stderr)
    cp = start_control_plane(run_dir, audit=False)
    rows = []
    try:
        crossplane = start_crossplane(cp)
        print(f"faults: the function runs as a {crossplane.function_runtime}", file=sys.stderr)
        for fault in faults:
            print(f"faults: {fault}: {args.graphs} graphs ...", file=sys.stderr)
            t0 = time.monotonic()
            names = apply_graphs(cp, fault, args.graphs)
            make_ready(cp, fault, names, seconds=300 + 5 * args.graphs)
            ready_seconds = time.monotonic() - t0
            outcome = run_fault(crossplane, fault, fault, names, recover=300 + 5 * args.graphs, down=args.down)
            rows.append(summary(outcome, ready_seconds))
            print(f"faults: {fault}: {json.dumps(rows[-1])}", file=sys.stderr)
            if outcome.problems:
                raise SystemExit(f"faults: {fault} lost or changed {outcome.problems}")
    finally:
        cp.stop()
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"\n{'fault':<19} {'graphs':>6} {'down s':>7} {'recover s':>10} {'Synced=False graphs':>20}"
          f" {'left Ready':>11} {'lost':>5}")  # fmt: skip
    for r in rows:
        print(f"{r['fault']:<19} {r['graphs']:>6} {r['down_s']:>7} {r['recover_s']:>10} {r['synced_false_graphs']:>20}"
              f" {len(r['left_ready']):>11} {len(r['lost']):>5}")  # fmt: skip
    for r in rows:
        print(f"\n{r['fault']}: Synced=False reasons seen: {r['reasons'] or 'none'}")
        print(f"{r['fault']}: graphs seen not Ready: {r['left_ready'] or 'none'}; reads unanswered: "
              f"{r['unanswered_reads']}")  # fmt: skip
    print("\ndown: from the part broken to it serving again; recover: from the part back to every graph read Ready and")
    print("Synced again (0 when none left them); Synced=False graphs: graphs seen Synced=False meanwhile; left Ready:")
    print("graphs seen not Ready; lost: composed objects deleted or recreated, pod templates or Services changed")


if __name__ == "__main__":
    main()
