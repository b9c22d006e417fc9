#!/usr/bin/env python3
"""Claims reconciled on the real stack: the benchmark command for a real Crossplane (not a timed test).

    .venv/bin/python scripts/bench-cluster.py [--claims 1,50,200] [--json]

It starts what the test suite starts (etcd, kube-apiserver, kube-controller-manager and Crossplane on
127.0.0.1, function-dynamo installed from its packages; built by scripts/install-control-plane.sh and
scripts/install-tools.sh), then for each N applies N copies of examples/dgd/vllm-agg.yaml in a namespace
of their own and reports, per claim, the seconds from its apply to all six composed objects present,
and from the moment the benchmark plays Grove for it (its two PodCliques ready) to the claim's
Ready=True; p50 and p95 of both, the wall time, and the peak memory (VmHWM) of the API server,
Crossplane and the function. Everything it starts is stopped by PID at the end.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from apiserver import ensure_namespace, resource_path  # noqa: E402
from controlplane import ControlPlane, start_control_plane  # noqa: E402
from crossplane_core import start_crossplane  # noqa: E402

COMPOSED = 6  # vllm-agg: PodCliqueSet, 2 Services, ServiceAccount, Role, RoleBinding
KINDS = (
    "/apis/grove.io/v1alpha1/namespaces/{ns}/podcliquesets",
    "/api/v1/namespaces/{ns}/services",
    "/api/v1/namespaces/{ns}/serviceaccounts",
    "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
)
CLAIM_LABEL = "crossplane.io/claim-name"  # under a claim (the claims package)
COMPOSITE_LABEL = "crossplane.io/composite"  # a namespaced DGD's own name (the default package)
TIMEOUT_SECONDS = 900.0


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(pct / 100 * len(ordered))) - 1]


def peak_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def composed_counts(cp: ControlPlane, namespace: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for kind in KINDS:
        for obj in cp.client.get(kind.format(ns=namespace))["items"]:
            labels = obj["metadata"].get("labels") or {}
            claim = labels.get(CLAIM_LABEL) or labels.get(COMPOSITE_LABEL)
            if claim:
                counts[claim] = counts.get(claim, 0) + 1
    return counts


def play_grove(cp: ControlPlane, namespace: str, name: str, cliques: list[dict[str, Any]]) -> None:
    pcs = cp.client.get(resource_path("grove.io", "v1alpha1", "podcliquesets", namespace, name))
    for template in cliques:
        obj = copy.deepcopy(template)
        status = obj.pop("status")
        text = json.dumps(obj).replace("vllm-agg", name)
        obj = json.loads(text)
        meta = obj["metadata"]
        for key in ("uid", "resourceVersion", "creationTimestamp", "generation"):
            meta.pop(key, None)
        meta["namespace"] = namespace
        meta["ownerReferences"] = [{**r, "uid": pcs["metadata"]["uid"]} for r in meta["ownerReferences"]]
        path = resource_path("grove.io", "v1alpha1", "podcliques", namespace)
        created = cp.client.create(path, obj)
        created["status"] = {**status, "observedGeneration": created["metadata"].get("generation", 1)}
        cp.client.replace(f"{path}/{meta['name']}/status", created)
    pcs["status"] = {"replicas": 1, "availableReplicas": 1, "updatedReplicas": 1,
                     "observedGeneration": pcs["metadata"].get("generation", 1)}  # fmt: skip
    cp.client.replace(resource_path("grove.io", "v1alpha1", "podcliquesets", namespace, name) + "/status", pcs)


def run_round(cp: ControlPlane, n: int) -> dict[str, Any]:
    namespace = f"bench-{n}"
    ensure_namespace(cp.client, namespace)
    template = yaml.safe_load((REPO / "examples" / "dgd" / "vllm-agg.yaml").read_text())
    cliques = [
        d for d in yaml.safe_load_all((REPO / "tests/scenarios/status/vllm-agg-ready/required.yaml").read_text()) if d
    ]
    collection = resource_path("nvidia.com", "v1beta1", "dynamographdeployments", namespace)
    applied: dict[str, float] = {}
    start = time.monotonic()
    for i in range(n):
        claim = copy.deepcopy(template)
        claim["metadata"] = {"name": f"bench-{i:03d}", "namespace": namespace}
        cp.client.create(collection, claim)
        applied[claim["metadata"]["name"]] = time.monotonic()
    composed: dict[str, float] = {}
    played: dict[str, float] = {}
    ready: dict[str, float] = {}
    deadline = start + TIMEOUT_SECONDS
    while len(ready) < n:
        if time.monotonic() > deadline:
            raise SystemExit(f"bench-cluster: {n} claims: only {len(ready)} Ready after {TIMEOUT_SECONDS:.0f}s")
        now = time.monotonic()
        for claim, count in composed_counts(cp, namespace).items():
            if count >= COMPOSED and claim not in composed:
                composed[claim] = now
        for claim in sorted(set(composed) - set(played)):
            play_grove(cp, namespace, claim, cliques)
            played[claim] = time.monotonic()
        now = time.monotonic()
        for item in cp.client.get(collection)["items"]:
            name = item["metadata"]["name"]
            conditions = {c["type"]: c["status"] for c in (item.get("status") or {}).get("conditions") or []}
            if name in played and name not in ready and conditions.get("Ready") == "True":
                ready[name] = now
        time.sleep(0.25)
    to_composed = [composed[c] - applied[c] for c in applied]
    to_ready = [ready[c] - played[c] for c in applied]
    return {
        "claims": n,
        "wall_seconds": round(time.monotonic() - start, 1),
        "apply_to_composed_s": {
            "p50": round(percentile(to_composed, 50), 2),
            "p95": round(percentile(to_composed, 95), 2),
        },
        "status_to_ready_s": {"p50": round(percentile(to_ready, 50), 2), "p95": round(percentile(to_ready, 95), 2)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", default="1,50,200", help="comma-separated claim counts, one round each")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    counts = [int(x) for x in args.claims.split(",") if x.strip()]
    # A SIGTERM must still stop what was started: turn it into SystemExit, which runs the finally below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    run_dir = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    print(f"bench-cluster: starting the stack in {run_dir} ...", file=sys.stderr)
    cp = start_control_plane(run_dir)
    try:
        t0 = time.monotonic()
        start_crossplane(cp)
        install = time.monotonic() - t0
        rounds = []
        for n in counts:
            print(f"bench-cluster: {n} claims ...", file=sys.stderr)
            rounds.append(run_round(cp, n))
        memory = {name: peak_mib(cp.pids[name]) for name in ("kube-apiserver", "crossplane", "function-dynamo", "etcd")}
    finally:
        cp.stop()
    if args.json:
        print(json.dumps({"install_seconds": round(install, 1), "rounds": rounds, "peak_rss_mib": memory}, indent=2))
        return
    print(f"packages installed and every XRD Established in {install:.1f} s")
    print(f"{'claims':>6} {'wall s':>7} {'composed p50':>13} {'p95':>6} {'Ready p50':>10} {'p95':>6}")
    for r in rounds:
        c, s = r["apply_to_composed_s"], r["status_to_ready_s"]
        print(f"{r['claims']:>6} {r['wall_seconds']:>7} {c['p50']:>13} {c['p95']:>6} {s['p50']:>10} {s['p95']:>6}")
    print("peak RSS (MiB): " + ", ".join(f"{k} {v:.0f}" for k, v in memory.items() if v is not None))
    print("composed: seconds from a claim's apply to its six objects present; Ready: from the moment its")
    print(
        "PodCliques and PodCliqueSet report ready (played by the benchmark, as Grove would) to the claim's Ready=True"
    )


if __name__ == "__main__":
    main()
