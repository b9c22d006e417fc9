#!/usr/bin/env python3
"""Seconds from a required object changing to the XR reflecting it, on the real stack: the benchmark command
for Crossplane v2.4's watched requirements (not a timed test).

    .venv/bin/python scripts/bench-watch.py [--runs 3] [--json]

It starts what the test suite starts (etcd, kube-apiserver, kube-controller-manager, Crossplane v2.4 and
function-dynamo's default package, all on 127.0.0.1) twice: as installed (realtime compositions on, so
Crossplane watches what each pipeline step requires) and with ``--enable-realtime-compositions=false`` (the
behaviour before v2.4: an XR is reconciled again only on its poll interval or its function's TTL). In each it
measures, ``--runs`` times:

- operator config: the EnvironmentConfig ``dynamo-platform`` every DGD requires gets a new
  ``infrastructure.natsAddress``; until the DGD's PodCliqueSet carries it as ``NATS_SERVER``;
- PVC: the PersistentVolumeClaim a DGD mounts (``create: false``) is created; until the DGD's PodCliqueSet is
  composed (before, the DGD reports the missing PVC and composes nothing).

Everything it starts is stopped by PID at the end.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from harness.apiserver import ensure_namespace, resource_path  # noqa: E402
from harness.controlplane import ControlPlane, start_control_plane  # noqa: E402
from harness.crossplane_core import apply, start_crossplane  # noqa: E402
from harness.poll import Timeout, until  # noqa: E402

ENVIRONMENT_CONFIGS = "/apis/apiextensions.crossplane.io/v1beta1/environmentconfigs"
LIMIT_SECONDS = 180.0
MODES = {"watched (v2.4 default)": (), "polled (realtime off)": ("--enable-realtime-compositions=false",)}


def seconds_until(what: str, probe: Callable[[], Any], seconds: float = LIMIT_SECONDS) -> float:
    """Seconds until ``probe()`` is true (``poll.until``, every 0.1 s); exits after ``seconds``."""
    start = time.monotonic()
    try:
        until(what, probe, seconds, every=0.1)
    except Timeout as err:
        raise SystemExit(f"bench-watch: {err}") from None
    return time.monotonic() - start


def operator_config(nats: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.crossplane.io/v1beta1",
        "kind": "EnvironmentConfig",
        "metadata": {"name": "dynamo-platform"},
        "data": {"infrastructure": {"natsAddress": nats}},
    }


def nats_server(cp: ControlPlane, namespace: str, name: str) -> set[str]:
    pcs = cp.client.get(resource_path("grove.io", "v1alpha1", "podcliquesets", namespace, name))
    return {
        e.get("value", "")
        for clique in pcs["spec"]["template"]["cliques"]
        for c in clique["spec"]["podSpec"]["containers"]
        for e in c.get("env") or []
        if e["name"] == "NATS_SERVER"
    }


def bench_operator_config(cp: ControlPlane, runs: int) -> list[float]:
    namespace = "watch-config"
    ensure_namespace(cp.client, namespace)
    apply(cp, operator_config("nats://nats-0:4222"), ENVIRONMENT_CONFIGS)
    dgd = yaml.safe_load((REPO / "examples" / "dgd" / "vllm-agg.yaml").read_text())
    dgd["metadata"]["namespace"] = namespace
    cp.client.create(resource_path("nvidia.com", "v1beta1", "dynamographdeployments", namespace), dgd)
    seconds_until("the PodCliqueSet", lambda: nats_server(cp, namespace, "vllm-agg") == {"nats://nats-0:4222"})
    out = []
    for i in range(1, runs + 1):
        time.sleep(2)  # past the reconcile the previous change caused
        address = f"nats://nats-{i}:4222"
        apply(cp, operator_config(address), ENVIRONMENT_CONFIGS)
        out.append(
            seconds_until(f"NATS_SERVER {address}", lambda a=address: nats_server(cp, namespace, "vllm-agg") == {a})
        )
    return out


def pvc_graph(namespace: str) -> dict[str, Any]:
    """A DGD whose worker mounts an existing PVC (``create: false``): until it exists, nothing is composed."""
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "cached", "namespace": namespace},
        "spec": {
            "pvcs": [{"name": "model-cache", "create": False}],
            "services": {
                "Worker": {
                    "componentType": "worker",
                    "volumeMounts": [{"name": "model-cache", "mountPoint": "/models"}],
                    "extraPodSpec": {"mainContainer": {"image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"}},
                }
            },
        },
    }


def not_synced(cp: ControlPlane, path: str) -> bool:
    conditions = (cp.client.get(path).get("status") or {}).get("conditions") or []
    return any(c["type"] == "Synced" and c["status"] == "False" for c in conditions)


def bench_pvc(cp: ControlPlane, runs: int) -> list[float]:
    """Each run: a DGD waiting for its PVC, then the PVC is created; until the PodCliqueSet is composed."""
    out = []
    for i in range(runs):
        namespace = f"watch-pvc-{i}"
        ensure_namespace(cp.client, namespace)
        dgd = pvc_graph(namespace)
        cp.client.create(resource_path("nvidia.com", "v1alpha1", "dynamographdeployments", namespace), dgd)
        path = resource_path("nvidia.com", "v1beta1", "dynamographdeployments", namespace, "cached")
        seconds_until("the DGD refusing to compose without its PVC", lambda p=path: not_synced(cp, p))
        time.sleep(2)
        pvc = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "model-cache", "namespace": namespace},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        }
        cp.client.create(f"/api/v1/namespaces/{namespace}/persistentvolumeclaims", pvc)
        pcs = resource_path("grove.io", "v1alpha1", "podcliquesets", namespace, "cached")
        out.append(seconds_until("the PodCliqueSet after the PVC", lambda p=pcs: cp.client.get(p)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, dict[str, list[float]]] = {}
    for mode, core_args in MODES.items():
        print(f"bench-watch: {mode}: starting the stack", file=sys.stderr, flush=True)
        cp = start_control_plane(Path(tempfile.mkdtemp(prefix="bench-watch-")))
        try:
            start_crossplane(cp, core_args=core_args)
            results[mode] = {
                "operator config": bench_operator_config(cp, args.runs),
                "PVC created": bench_pvc(cp, args.runs),
            }
            print(f"bench-watch: {mode}: {results[mode]}", file=sys.stderr, flush=True)
        finally:
            cp.stop()
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"seconds from the required object's change to the DGD reflecting it ({args.runs} runs: min / median / max)")
    print(f"{'change':<18} " + "  ".join(f"{m:>28}" for m in results))
    for scenario in next(iter(results.values())):
        cells = []
        for mode in results:
            v = results[mode][scenario]
            cells.append(f"{min(v):>8.1f} / {statistics.median(v):>6.1f} / {max(v):>6.1f}")
        print(f"{scenario:<18} " + "  ".join(f"{c:>28}" for c in cells))


if __name__ == "__main__":
    main()
