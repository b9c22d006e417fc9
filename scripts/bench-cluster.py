#!/usr/bin/env python3
"""Graphs reconciled on the real stack: the benchmark command for a real Crossplane (not a timed test).

    .venv/bin/python scripts/bench-cluster.py [--claims 1,20,100] [--package operator,namespaced,claims,upstream]
                                               [--profile SECONDS] [--heap] [--idle SECONDS] [--crossplane-arg FLAG ...]
                                               [--json]

It starts what the test suite starts (etcd, kube-apiserver, kube-controller-manager and Crossplane on
127.0.0.1, function-dynamo installed from its packages; built by scripts/install-control-plane.sh and
scripts/install-tools.sh), without the API server's audit log the RBAC tests read (it writes every request
of Crossplane's in blocking mode, a cost a production cluster does not pay this way). Then, for each N, it
applies N copies of examples/dgd/vllm-agg.yaml in a namespace of their own and reports, per graph, the
seconds from its apply to all six composed objects present, and from the moment the benchmark plays Grove
for it (its two PodCliques ready) to the graph's Ready=True; p50 and p95 of both, and the wall time.
Each package gets a control plane of its own, started the same way (the packages define the same CRDs):

- ``namespaced``: the default package, DGDs as namespaced XRs;
- ``claims``: the claims package, DGDs as claims of cluster-scoped XRs;
- ``upstream``: upstream's own CRDs (../shared/upstream/crds) and no controller at all: what the API server
  costs to store the same DGDs, the floor the packages are measured against;
- ``operator``: the upstream Dynamo operator, built from source and run as its Helm chart runs it
  (tests/harness/operator_stack.py: root and ``unshare -m``), with its CRDs, webhooks and the composed APIs' CRDs its
  stack installs (``--target-crds`` does not apply). For this example it creates the same six objects the package
  composes (the PodCliqueSet, the Services ``<graph>-frontend`` and ``<graph>-vllmworker``, the ServiceAccount,
  Role and RoleBinding ``<graph>-k8s-service-discovery``), found by their controller owner reference, the DGD,
  since it labels them with no graph name; its Ready is the DGD's ``Ready`` condition, which it sets once the
  played PodCliques are ready. Its start-up tail (CRD writes) is waited out before the first round.

All rows go in one table, a row per package per N.

The benchmark follows each round through watches (one per collection), so that it adds next to nothing to the load
it measures, and takes each graph's seconds when the watch event arrives that completes its objects or shows it
Ready (not when its main loop, busy playing Grove for other graphs, next looks). Per round it also reports what the
API server spent: CPU seconds (its process's user + system time), requests served (``apiserver_request_total``) per
graph, in all and by verb and resource, and its resident memory after the round; the controller side's CPU seconds
and peak RSS over the round (Crossplane plus the function's server, or the operator's ``manager``: /proc's user +
system time and ``VmHWM``, reset as the round starts; tests/harness/bench_controllers.py), and Crossplane's
reconciles per graph, by controller (``controller_runtime_reconcile_total``). ``--crossplane-arg FLAG``
(repeatable) passes a flag to ``crossplane core start``, to measure its poll and rate settings;
``FUNCTION_DYNAMO_PACKAGES`` names prebuilt packages (of another commit, for a before/after). ``--profile SECONDS``
takes a CPU profile of kube-apiserver and of Crossplane (both serve pprof, on 127.0.0.1 only) during the last round
and prints the top functions of each, by ``go tool pprof -top``. ``--target-crds SETS`` chooses the composed APIs'
CRDs installed beside the packages (all four the test suite installs by default; the README's install has only
Grove's) and beside upstream's (none by default). ``--heap`` takes a heap profile of kube-apiserver after the last
round (after a forced garbage collection, so it shows what is live) and prints what holds the memory, by the
function that allocated it and by the one that called it. ``--idle SECONDS`` then waits SECONDS with the last
round's graphs Ready and nothing changing, and reports what they cost meanwhile (the API server's and the controller
side's CPU, requests and reconciles per graph per minute): what running graphs cost, not only new ones.
Everything it starts is stopped by PID at the end.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import copy
import http.client
import json
import math
import re
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, NamedTuple

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from fixtures.tooling import CRD_SETS  # noqa: E402
from harness.apiserver import ensure_namespace, install_crd, resource_path  # noqa: E402
from harness.bench_controllers import (  # noqa: E402
    OPERATOR,
    controllers_of,
    cpu_seconds,
    crd_writes,
    owner_graph,
    ready,
    reset_peak,
    start_operator_stack,
    status_mib,
    wait_settled,
)
from harness.controlplane import ControlPlane, free_port, start_control_plane  # noqa: E402
from harness.crossplane_core import CLAIMS_CONFIGURATION, CONFIGURATION, install_target_crds, start_crossplane  # noqa: E402

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
TIMEOUT_SECONDS = 900.0  # per round, plus SECONDS_PER_GRAPH for each graph
SECONDS_PER_GRAPH = 5.0
PACKAGES = (OPERATOR, "namespaced", "claims", "upstream")
SAMPLE_GRAPH = "bench-000"  # the graph whose every stored version the report walks through
UPSTREAM_CRDS = REPO.parent / "shared" / "upstream" / "crds"
LABEL = re.compile(r'(\w+)="([^"]*)"')


def requests_served(cp: ControlPlane) -> collections.Counter[str]:
    """The API server's ``apiserver_request_total`` so far, by verb and resource (``APPLY podcliquesets``,
    ``PUT dynamographdeployments/status``), and the response code when it is not a success (``... 409``)."""
    text = cp.client.request("GET", "/metrics", raw=True)
    counts: collections.Counter[str] = collections.Counter()
    for line in text.splitlines():
        if line.startswith("apiserver_request_total{"):
            labels = dict(LABEL.findall(line))
            resource = labels.get("resource", "") + (f"/{labels['subresource']}" if labels.get("subresource") else "")
            code = labels.get("code", "200")
            key = f"{labels.get('verb', '?')} {resource}" + (f" {code}" if not code.startswith("2") else "")
            counts[key] += int(float(line.rsplit(" ", 1)[1]))
    return counts


def reconciles(metrics_port: int) -> collections.Counter[str]:
    """Crossplane's reconciles so far (``controller_runtime_reconcile_total``), by controller and result
    (``success``, ``error``, ``requeue``, ``requeue_after``); none without Crossplane."""
    if not metrics_port:
        return collections.Counter()
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=30) as response:
        text = response.read().decode()
    counts: collections.Counter[str] = collections.Counter()
    for line in text.splitlines():
        if line.startswith("controller_runtime_reconcile_total{"):
            labels = dict(LABEL.findall(line))
            counts[f"{labels.get('controller', '?')} {labels.get('result', '?')}"] += int(float(line.rsplit(" ", 1)[1]))
    return counts


def _admin_context(cp: ControlPlane) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(cp.client.pki / "ca.crt"))
    context.load_cert_chain(str(cp.client.pki / "admin.crt"), str(cp.client.pki / "admin.key"))
    return context


def take_profile(url: str, seconds: int, out: Path, context: ssl.SSLContext | None = None) -> None:
    """A pprof CPU profile of ``seconds`` from ``url`` (loopback only), written to ``out``."""
    with urllib.request.urlopen(f"{url}?seconds={seconds}", timeout=seconds + 60, context=context) as response:
        out.write_bytes(response.read())


def take_heap_profile(url: str, out: Path, context: ssl.SSLContext | None = None) -> None:
    """A pprof heap profile from ``url`` after a garbage collection (``gc=1``): the live heap, written to ``out``."""
    with urllib.request.urlopen(f"{url}?gc=1", timeout=120, context=context) as response:
        out.write_bytes(response.read())


def profile_top(profile: Path, lines: int = 12, order: str = "-flat") -> list[str]:
    """``go tool pprof -top``'s header and first ``lines`` functions, by flat (own) or cumulative CPU time (or, for a
    heap profile, live bytes)."""
    done = subprocess.run(["go", "tool", "pprof", "-top", order, f"-nodecount={lines}", str(profile)],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    if done.returncode != 0:
        return [f"(go tool pprof failed: {done.stderr.strip()[:200]})"]
    text = done.stdout.splitlines()
    start = next((i for i, line in enumerate(text) if line.lstrip().startswith("flat")), 0)
    header = [line for line in text if line.startswith(("Duration", "Showing nodes"))]
    return header[:1] + text[start : start + lines + 1]


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(pct / 100 * len(ordered))) - 1]


class Watch(threading.Thread):
    """A watch on one collection (``?watch=1``, over a connection of its own), calling ``on_event(type, object)``
    for each event until ``stop()``. The benchmark follows the round this way rather than listing every
    collection over and over, which would load the API server it measures. A stream the API server ends (its
    timeout, or a watcher too slow for its buffer while the machine is busy) is resumed from the last
    resourceVersion seen; one too old to resume from (410) is listed again, each item as ``ADDED``."""

    def __init__(self, cp: ControlPlane, path: str, on_event: Any) -> None:
        super().__init__(daemon=True)
        self.cp, self.path, self.on_event = cp, path, on_event
        self.ready = threading.Event()
        self.resumed = 0  # streams resumed after the API server ended one
        self._stopped = threading.Event()
        self._conn: http.client.HTTPSConnection | None = None

    def run(self) -> None:
        resource_version = self._list()
        self.ready.set()
        while not self._stopped.is_set():
            with contextlib.suppress(OSError, ValueError, http.client.HTTPException):  # an ended stream
                resource_version = self._stream(resource_version)
            if self._stopped.is_set():
                return
            if resource_version is None:
                resource_version = self._list()
            self.resumed += 1

    def _list(self) -> str:
        listed = self.cp.client.get(self.path)
        for item in listed["items"]:
            self.on_event("ADDED", item)
        return listed["metadata"]["resourceVersion"]

    def _stream(self, resource_version: str) -> str | None:
        """Events from ``resource_version`` until the stream ends; the last version seen, None after a 410."""
        parsed = urllib.parse.urlsplit(self.cp.client.base)
        self._conn = http.client.HTTPSConnection(parsed.hostname, parsed.port, context=_admin_context(self.cp))
        query = f"watch=1&allowWatchBookmarks=true&resourceVersion={resource_version}"
        self._conn.request("GET", f"{self.path}?{query}&timeoutSeconds={int(TIMEOUT_SECONDS)}")
        response = self._conn.getresponse()
        while line := response.readline():
            event = json.loads(line)
            if event["type"] == "ERROR":
                return None if event["object"].get("code") == 410 else resource_version
            resource_version = event["object"]["metadata"]["resourceVersion"]
            if event["type"] != "BOOKMARK":
                self.on_event(event["type"], event["object"])
        return resource_version

    def stop(self) -> None:
        self._stopped.set()
        if self._conn is not None and self._conn.sock is not None:
            self._conn.sock.shutdown(socket.SHUT_RDWR)
        self.join(timeout=10)


class RoundState:
    """What the watches saw of one round: each graph's composed objects and its Ready condition."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.objects: dict[str, set[str]] = {}
        # Object versions the API server stored during the round, by resource: each one is a write to etcd and
        # an event every watcher decodes and the watch cache keeps for a while.
        self.versions: collections.Counter[str] = collections.Counter()
        self.sample: list[dict[str, Any]] = []  # every version of the first graph, in order
        # When the event arrived that completed each graph's objects, and the one that first showed it Ready:
        # taken in the watches' threads, so the main loop's own work (playing Grove) does not delay them.
        self.composed_at: dict[str, float] = {}
        self.ready_at: dict[str, float] = {}

    def composed_event(self, kind: str) -> Any:
        resource = kind.rsplit("/", 1)[1]

        def on_event(event: str, obj: dict[str, Any]) -> None:
            labels = obj["metadata"].get("labels") or {}
            graph = labels.get(CLAIM_LABEL) or labels.get(COMPOSITE_LABEL) or owner_graph(obj)
            if graph and event in ("ADDED", "MODIFIED"):
                with self.lock:
                    objects = self.objects.setdefault(graph, set())
                    objects.add(f"{kind}/{obj['metadata']['name']}")
                    self.versions[resource] += 1
                    if len(objects) >= COMPOSED:
                        self.composed_at.setdefault(graph, time.monotonic())

        return on_event

    def graph_event(self, event: str, obj: dict[str, Any]) -> None:
        with self.lock:
            if event in ("ADDED", "MODIFIED"):
                self.versions["dynamographdeployments"] += 1
                if obj["metadata"]["name"] == SAMPLE_GRAPH:
                    self.sample.append(obj)
            if event in ("ADDED", "MODIFIED") and ready(obj):
                self.ready_at.setdefault(obj["metadata"]["name"], time.monotonic())


def changed_fields(before: Any, after: Any, depth: int = 3) -> list[str]:
    """The dotted paths (to ``depth``) whose values differ between two versions of an object; conditions by type."""
    if isinstance(before, dict) and isinstance(after, dict) and depth > 0:
        out = []
        for key in sorted(set(before) | set(after)):
            if key in ("resourceVersion", "lastTransitionTime", "time"):
                continue
            out += [
                f"{key}{'.' + sub if sub else ''}" for sub in changed_fields(before.get(key), after.get(key), depth - 1)
            ]
        return out
    if (
        isinstance(before, list)
        and isinstance(after, list)
        and all(isinstance(c, dict) and "type" in c for c in before + after)
    ):
        by_type = ({c["type"]: c for c in before}, {c["type"]: c for c in after})
        return [f"[{t}]" for t in sorted(set(by_type[0]) | set(by_type[1]))
                if changed_fields(by_type[0].get(t), by_type[1].get(t), depth)]  # fmt: skip
    return [] if before == after else [""]


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


def run_round(cp: ControlPlane, n: int, upstream: bool = False) -> dict[str, Any]:
    """One round of ``n`` graphs; with ``upstream`` (no controller) only their creation is timed."""
    namespace = f"bench-{n}"
    ensure_namespace(cp.client, namespace)
    template = yaml.safe_load((REPO / "examples" / "dgd" / "vllm-agg.yaml").read_text())
    cliques = [
        d for d in yaml.safe_load_all((REPO / "tests/scenarios/status/vllm-agg-ready/required.yaml").read_text()) if d
    ]
    collection = resource_path("nvidia.com", "v1beta1", "dynamographdeployments", namespace)
    state = RoundState()
    watches = [] if upstream else [Watch(cp, kind.format(ns=namespace), state.composed_event(kind)) for kind in KINDS]
    watches += [] if upstream else [Watch(cp, collection, state.graph_event)]
    for watch in watches:
        watch.start()
        watch.ready.wait(30)
    applied: dict[str, float] = {}
    start = time.monotonic()
    for i in range(n):
        claim = copy.deepcopy(template)
        claim["metadata"] = {"name": f"bench-{i:03d}", "namespace": namespace}
        cp.client.create(collection, claim)
        applied[claim["metadata"]["name"]] = time.monotonic()
    if upstream:
        assert len(cp.client.get(collection)["items"]) == n
        return {"claims": n, "wall_seconds": round(time.monotonic() - start, 1)}
    # Grove is played for each graph in the order the graphs composed. The seconds are taken from the watch events'
    # arrival (RoundState), not from this loop, which is busy playing Grove while other graphs compose.
    played: dict[str, float] = {}
    timeout = TIMEOUT_SECONDS + SECONDS_PER_GRAPH * n
    deadline = start + timeout
    while True:
        with state.lock:
            composed, ready = dict(state.composed_at), dict(state.ready_at)
        if len(ready) == n:
            break
        if time.monotonic() > deadline:
            raise SystemExit(f"bench-cluster: {n} graphs: only {len(ready)} Ready after {timeout:.0f}s")
        for graph in sorted(set(composed) - set(played), key=composed.__getitem__):
            play_grove(cp, namespace, graph, cliques)
            played[graph] = time.monotonic()
        time.sleep(0.05)
    for watch in watches:
        watch.stop()
    resumed = sum(watch.resumed for watch in watches)
    if resumed:
        print(f"bench-cluster: {n} graphs: the API server ended {resumed} watch stream(s); resumed", file=sys.stderr)
    to_composed = [composed[c] - applied[c] for c in applied]
    # The Ready event can reach its watch a moment before this loop has read the reply to the status write
    # that caused it: such a graph counts as Ready at once.
    to_ready = [max(0.0, ready[c] - played[c]) for c in applied]
    return {
        "claims": n,
        "wall_seconds": round(time.monotonic() - start, 1),
        "apply_to_composed_s": {
            "p50": round(percentile(to_composed, 50), 2),
            "p95": round(percentile(to_composed, 95), 2),
        },
        "status_to_ready_s": {"p50": round(percentile(to_ready, 50), 2), "p95": round(percentile(to_ready, 95), 2)},
        "versions_per_graph": {k: round(v / n, 1) for k, v in state.versions.most_common()},
        "sample_versions": [
            ", ".join(changed_fields(before, after)) or "(nothing but its resourceVersion)"
            for before, after in zip(state.sample, state.sample[1:], strict=False)
        ],
    }


def _install(
    cp: ControlPlane, package: str, profile_port: int, crossplane_args: list[str], target_crds: tuple[str, ...]
) -> tuple[float, int, float]:
    """The package (or upstream's CRDs, or the operator) on ``cp``; the seconds it took, Crossplane's metrics port
    (0: none) and the seconds waited after it for the operator's start-up tail (bench_controllers.wait_settled)."""
    t0 = time.monotonic()
    if package == OPERATOR:
        start_operator_stack(cp)  # beside operator_stack.TARGET_CRDS, whatever --target-crds says
        started = time.monotonic() - t0
        return started, 0, wait_settled(lambda: crd_writes(requests_served(cp)))
    if package == "upstream":
        install_target_crds(cp, target_crds)
        if not UPSTREAM_CRDS.is_dir():
            raise SystemExit(f"bench-cluster: --package upstream needs upstream's CRDs in {UPSTREAM_CRDS}")
        for path in sorted(UPSTREAM_CRDS.glob("nvidia.com_*.yaml")):
            got = install_crd(cp.client, yaml.safe_load(path.read_text()))
            if not got.accepted:
                raise SystemExit(f"bench-cluster: {path.name} refused: {got.message}")
        return time.monotonic() - t0, 0, 0.0
    configuration = CLAIMS_CONFIGURATION if package == "claims" else CONFIGURATION
    args = (f"--profile=127.0.0.1:{profile_port}", *crossplane_args)
    crossplane = start_crossplane(cp, configuration, core_args=args, target_crds=target_crds)
    return time.monotonic() - t0, crossplane.metrics_port, 0.0


class Costs(NamedTuple):
    """What the API server and the controller side have spent so far: CPU seconds, requests and reconciles."""

    apiserver_cpu: float
    controller_cpu: dict[str, float]
    requests: collections.Counter[str]
    reconciles: collections.Counter[str]


def costs_so_far(cp: ControlPlane, controllers: dict[str, list[int]], metrics_port: int) -> Costs:
    return Costs(
        apiserver_cpu=cpu_seconds(cp.pids["kube-apiserver"]),
        controller_cpu={role: sum(map(cpu_seconds, pids)) for role, pids in controllers.items()},
        requests=requests_served(cp),
        reconciles=reconciles(metrics_port),
    )


def costs_since(before: Costs, after: Costs) -> Costs:
    return Costs(
        apiserver_cpu=round(after.apiserver_cpu - before.apiserver_cpu, 1),
        controller_cpu={
            role: round(cpu - before.controller_cpu[role], 1) for role, cpu in after.controller_cpu.items()
        },
        requests=after.requests - before.requests,
        reconciles=after.reconciles - before.reconciles,
    )


def _measured_round(
    cp: ControlPlane, package: str, n: int, profile: int, profile_port: int, metrics_port: int
) -> dict[str, Any]:
    """A round with the API server's and the controller's costs over it; profiles taken during it if asked."""
    apiserver, crossplane = cp.pids["kube-apiserver"], cp.pids.get("crossplane")
    controllers = controllers_of(cp)
    peaks_reset = all(reset_peak(pid) for pids in controllers.values() for pid in pids)
    crossplane_cpu0 = cpu_seconds(crossplane)
    before = costs_so_far(cp, controllers, metrics_port)
    threads = []
    if profile:
        out = cp.run_dir / f"profile-{package}-{n}"
        out.mkdir(exist_ok=True)
        targets = [(f"{cp.client.base}/debug/pprof/profile", out / "kube-apiserver.pprof", _admin_context(cp))]
        if crossplane is not None:
            targets.append((f"http://127.0.0.1:{profile_port}/debug/pprof/profile", out / "crossplane.pprof", None))
        for url, path, context in targets:
            threads.append(threading.Thread(target=take_profile, args=(url, profile, path, context), daemon=True))
            threads[-1].start()
    result = run_round(cp, n, upstream=package == "upstream")
    for thread in threads:
        thread.join()
    spent = costs_since(before, costs_so_far(cp, controllers, metrics_port))
    requests = spent.requests
    result["requests_by_kind"] = dict(requests.most_common(12))
    result["reconciles_per_graph"] = {
        controller: round(count / n, 1) for controller, count in spent.reconciles.most_common() if count >= n / 10
    }
    result["apiserver_cpu_s"] = spent.apiserver_cpu
    result["crossplane_cpu_s"] = round(cpu_seconds(crossplane) - crossplane_cpu0, 1)
    # The controller side: Crossplane and the function's server, or the operator's manager (bench_controllers).
    result["controller_cpu_s"] = spent.controller_cpu
    result["controller_peak_rss_mib"] = {
        role: round(sum(status_mib(pid) or 0 for pid in pids)) for role, pids in controllers.items()
    }
    result["controller_peak_is_the_rounds"] = peaks_reset  # else the peak since the process started
    result["requests_per_graph"] = round(requests.total() / n, 1)
    result["apiserver_rss_mib"] = round(status_mib(apiserver, "VmRSS") or 0)
    if profile:
        result["profiles"] = {
            f"{path.stem} ({order.lstrip('-')})": profile_top(path, order=order)
            for path in sorted(out.glob("*.pprof"))
            for order in ("-flat", "-cum")
        }
    return result


def _idle(cp: ControlPlane, seconds: int, graphs: int, metrics_port: int) -> dict[str, Any]:
    """What ``graphs`` Ready graphs cost while nothing changes, over ``seconds`` after the last round: the API
    server's and the controller side's CPU, and the requests and reconciles per graph per minute."""
    controllers = controllers_of(cp)
    before = costs_so_far(cp, controllers, metrics_port)
    time.sleep(seconds)
    spent = costs_since(before, costs_so_far(cp, controllers, metrics_port))
    per_graph_minute = 60.0 / seconds / graphs
    return {
        "seconds": seconds,
        "graphs": graphs,
        "apiserver_cpu_s": spent.apiserver_cpu,
        "controller_cpu_s": spent.controller_cpu,
        "requests_per_graph_minute": round(spent.requests.total() * per_graph_minute, 2),
        "requests_by_kind_per_graph_minute": {
            k: round(v * per_graph_minute, 2) for k, v in spent.requests.most_common(8)
        },
        "reconciles_per_graph_minute": {k: round(v * per_graph_minute, 2) for k, v in spent.reconciles.most_common(4)},
    }


def _apiserver_heap(cp: ControlPlane, package: str) -> dict[str, list[str]]:
    """The API server's live heap, top allocators by own bytes (flat) and by the bytes below them (cum)."""
    path = cp.run_dir / f"heap-{package}.pprof"
    take_heap_profile(f"{cp.client.base}/debug/pprof/heap", path, _admin_context(cp))
    return {order.lstrip("-"): profile_top(path, lines=20, order=order) for order in ("-flat", "-cum")}


INSTALLED = {
    "upstream": "upstream's CRDs installed",
    OPERATOR: "the operator started (its chart's objects, CRDs, webhooks serving, conversion through it)",
}
HEADER = (f"{'package':<11} {'graphs':>6} {'wall s':>7} {'composed p50':>13} {'p95':>6} {'Ready p50':>10} {'p95':>6}"
          f" {'apiserver cpu s':>16} {'req/graph':>10} {'apiserver RSS MiB':>18} {'ctrl cpu s':>11}"
          f" {'ctrl peak MiB':>14}")  # fmt: skip


def _row(package: str, r: dict[str, Any]) -> str:
    c = r.get("apply_to_composed_s", {"p50": "-", "p95": "-"})
    s = r.get("status_to_ready_s", {"p50": "-", "p95": "-"})
    cpu, peak = r.get("controller_cpu_s") or {}, r.get("controller_peak_rss_mib") or {}
    ctrl_cpu = f"{sum(cpu.values()):.1f}" if cpu else "-"
    ctrl_peak = f"{sum(peak.values())}" if peak else "-"
    return (f"{package:<11} {r['claims']:>6} {r['wall_seconds']:>7} {c['p50']:>13} {c['p95']:>6} {s['p50']:>10}"
            f" {s['p95']:>6} {r['apiserver_cpu_s']:>16} {r['requests_per_graph']:>10} {r['apiserver_rss_mib']:>18}"
            f" {ctrl_cpu:>11} {ctrl_peak:>14}")  # fmt: skip


def _print_details(package: str, figures: dict[str, Any]) -> None:
    rounds, memory = figures["rounds"], figures["peak_rss_mib"]
    what = INSTALLED.get(package, "packages installed and every XRD Established")
    print(f"\n{package}: {what} in {figures['install_seconds']:.1f} s")
    if "settle_seconds" in figures:
        print(f"its start-up tail (CRD writes) waited out before the first round: {figures['settle_seconds']:.1f} s")
    print("peak RSS over the run (MiB): " + ", ".join(f"{k} {v:.0f}" for k, v in memory.items() if v is not None))
    for r in rounds:
        n = r["claims"]
        if r.get("controller_cpu_s"):
            peak = "the round's peak" if r.get("controller_peak_is_the_rounds") else "peak since start"
            rss = r["controller_peak_rss_mib"]
            each = ", ".join(f"{role} {cpu} s {rss[role]} MiB" for role, cpu in r["controller_cpu_s"].items())
            print(f"controller side during the {n}-graph round (CPU, {peak} RSS): {each}")
        print(f"requests per graph during the {n}-graph round, by verb and resource:")
        print("    " + ", ".join(f"{k} {v / n:.1f}" for k, v in r["requests_by_kind"].items()))
    last = rounds[-1]
    if last.get("versions_per_graph"):
        print(f"object versions stored per graph during the {last['claims']}-graph round, by resource:")
        print("    " + ", ".join(f"{k} {v}" for k, v in last["versions_per_graph"].items()))
        print(f"what changed in {SAMPLE_GRAPH}'s DynamoGraphDeployment, version by version:")
        print("\n".join(f"    {i + 2}: {line}" for i, line in enumerate(last["sample_versions"])))
    if last.get("reconciles_per_graph"):
        print(f"Crossplane reconciles per graph during the {last['claims']}-graph round, by controller and result:")
        print("    " + ", ".join(f"{k} {v}" for k, v in last["reconciles_per_graph"].items()))
    for r in rounds:
        for name, top in (r.get("profiles") or {}).items():
            print(f"CPU profile of {name} during the {r['claims']}-graph round:")
            print("\n".join("    " + line for line in top))
    idle = figures.get("idle")
    if idle:
        cpu = ", ".join(f"{role} {v} s" for role, v in idle["controller_cpu_s"].items()) or "none"
        print(f"idle, {idle['graphs']} Ready graphs over {idle['seconds']} s: API server CPU"
              f" {idle['apiserver_cpu_s']} s, controller side CPU {cpu}; per graph per minute:"
              f" {idle['requests_per_graph_minute']} requests")  # fmt: skip
        print("    " + ", ".join(f"{k} {v}" for k, v in idle["requests_by_kind_per_graph_minute"].items()))
        if idle["reconciles_per_graph_minute"]:
            print("    reconciles: " + ", ".join(f"{k} {v}" for k, v in idle["reconciles_per_graph_minute"].items()))
    for order, top in (last.get("heap") or {}).items():
        print(f"kube-apiserver's live heap after the {last['claims']}-graph round ({order}):")
        print("\n".join("    " + line for line in top))


def _print_report(report: dict[str, Any]) -> None:
    """One table, a row per package per round, then each package's details."""
    print("\n" + HEADER)
    for package, figures in report.items():
        print("\n".join(_row(package, r) for r in figures["rounds"]))
    for package, figures in report.items():
        _print_details(package, figures)
    print("\ncomposed: seconds from a graph's apply to its six objects present; Ready: from the moment its")
    print("PodCliques and PodCliqueSet report ready (played by the benchmark, as Grove would) to the graph's")
    print("Ready=True; cpu: seconds of CPU the process spent over the round; req/graph: API requests served per graph;")
    print("ctrl: the controller side (Crossplane + the function's server, or the operator's manager): its CPU seconds")
    print("over the round and its peak RSS during the round (VmHWM, reset as the round starts)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", default="1,20,100", help="comma-separated graph counts, one round each")
    parser.add_argument("--package", default="namespaced", help=f"comma-separated, of {', '.join(PACKAGES)}")
    parser.add_argument("--profile", type=int, default=0, metavar="SECONDS",
                        help="CPU-profile kube-apiserver and Crossplane for SECONDS during the last round")  # fmt: skip
    parser.add_argument("--target-crds", metavar="SETS",
                        help=f"comma-separated, of {', '.join(CRD_SETS)}: the composed APIs' CRDs installed beside "
                             "every package (default: all of them beside ours, none beside upstream's)")  # fmt: skip
    parser.add_argument("--heap", action="store_true",
                        help="heap-profile kube-apiserver (its live heap) after the last round")  # fmt: skip
    parser.add_argument("--crossplane-arg", action="append", default=[], metavar="FLAG",
                        help="one more `crossplane core start` flag (repeatable), e.g. --poll-interval=5m")  # fmt: skip
    parser.add_argument("--idle", type=int, default=0, metavar="SECONDS",
                        help="after the last round, measure SECONDS more while its graphs stay Ready and nothing "
                             "changes: what running graphs cost")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    counts = [int(x) for x in args.claims.split(",") if x.strip()]
    packages = [x.strip() for x in args.package.split(",") if x.strip()]
    unknown = sorted(set(packages) - set(PACKAGES))
    if unknown:
        parser.error(f"--package: unknown {', '.join(unknown)} (choose from {', '.join(PACKAGES)})")
    chosen = tuple(x.strip() for x in (args.target_crds or "").split(",") if x.strip())
    if sorted(set(chosen) - set(CRD_SETS)):
        parser.error(f"--target-crds: unknown {', '.join(sorted(set(chosen) - set(CRD_SETS)))}")
    if args.target_crds is not None and "grove" not in chosen and set(packages) - {"upstream", OPERATOR}:
        parser.error("--target-crds: the packages compose PodCliqueSets; include grove")
    default_crds = {p: () if p == "upstream" else CRD_SETS for p in packages}
    target_crds = {p: chosen if args.target_crds is not None else default_crds[p] for p in packages}
    # A SIGTERM must still stop what was started: turn it into SystemExit, which runs the finally below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    report: dict[str, Any] = {}
    for package in packages:
        run_dir = Path(tempfile.mkdtemp(prefix=f"bench-cluster-{package}-"))
        print(f"bench-cluster: {package}: starting a control plane in {run_dir} ...", file=sys.stderr)
        cp = start_control_plane(run_dir, audit=False, profiling=bool(args.profile) or args.heap)
        try:
            profile_port = free_port()
            install, metrics_port, settled = _install(
                cp, package, profile_port, args.crossplane_arg, target_crds[package]
            )
            rounds = []
            for i, n in enumerate(counts):
                print(f"bench-cluster: {package}: {n} graphs ...", file=sys.stderr)
                profile = args.profile if i == len(counts) - 1 else 0
                rounds.append(_measured_round(cp, package, n, profile, profile_port, metrics_port))
            if args.heap:
                rounds[-1]["heap"] = _apiserver_heap(cp, package)
            idle = _idle(cp, args.idle, counts[-1], metrics_port) if args.idle and counts else None
            names = ("kube-apiserver", "etcd", "kube-controller-manager")  # the controllers' are per round
            memory = {name: status_mib(cp.pids[name]) for name in names if name in cp.pids}
        finally:
            cp.stop()
        report[package] = {"install_seconds": round(install, 1), "rounds": rounds, "peak_rss_mib": memory}
        if idle is not None:
            report[package]["idle"] = idle
        if package == OPERATOR:
            report[package]["settle_seconds"] = round(settled, 1)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    _print_report(report)


if __name__ == "__main__":
    main()
