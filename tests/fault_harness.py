"""Faults on the real stack, with nothing lost: graphs made Ready (Grove played), one part broken and brought back,
then the invariants checked. Shared by tests/test_crossplane_faults.py and scripts/faults.py.

The faults (``FAULTS``), each breaking one part for ``down`` seconds while the graphs run:

- ``function-kill``: the function's server SIGKILLed (the container's server process under runc, or the checkout's
  server process), started again the way ``crossplane_core`` starts it;
- ``crossplane-restart``: Crossplane core stopped (SIGTERM) and started again with the same command line;
- ``apiserver-restart``: kube-apiserver stopped (SIGTERM) and started again with the same flags and ports; etcd keeps
  its data;
- ``function-errors`` / ``function-hang``: the Active FunctionRevision's endpoint pointed at a fault proxy
  (``tests/fault_proxy.py``) in front of the function, which closes every connection at once (errors) or holds it
  without answering (hang) for ``down`` seconds, then forwards again; afterwards the endpoint is pointed back.

While a part is down each graph is touched (an annotation: a change the graph sees while the part is down, so
Crossplane reconciles it during the fault; not while the API server itself is down), and a sampler reads every
graph's conditions twice a second. After the part is back: every composed object has the UID it had (none
deleted or recreated), the PodCliqueSet's ``spec.template`` and the Services' ``spec`` are unchanged, every graph
is Ready and Synced again; the time from the part being back to that is the fault's time to recover.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from composites import resource_refs
from container import RUNTIME, delete
from fault_proxy import SIGNALS

from apiserver import ensure_namespace, resource_path
from controlplane import APIError, ControlPlane, restart_process, start_process, stop_process, wait_for
from crossplane_core import Crossplane, _active_revision, play_revision, port_open

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "dgd" / "vllm-agg.yaml"
CLIQUES = REPO / "tests" / "scenarios" / "status" / "vllm-agg-ready" / "required.yaml"
FAULTS = ("function-kill", "crossplane-restart", "apiserver-restart", "function-errors", "function-hang")
DOWN_SECONDS = {"function-kill": 10.0, "function-errors": 30.0, "function-hang": 30.0}  # the brief's; others: as long
# as the part takes to stop and start
POKE = "faults.function-dynamo.io/touched"
SAMPLE_SECONDS = 0.5


def dgd_collection(namespace: str) -> str:
    return resource_path("nvidia.com", "v1beta1", "dynamographdeployments", namespace)


def conditions(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c.get("type", ""): c for c in (obj.get("status") or {}).get("conditions") or []}


def ready_and_synced(obj: dict[str, Any]) -> bool:
    got = conditions(obj)
    return all((got.get(t) or {}).get("status") == "True" for t in ("Ready", "Synced"))


# --- graphs -------------------------------------------------------------------------------------------------------


def apply_graphs(cp: ControlPlane, namespace: str, n: int) -> list[str]:
    """``n`` copies of examples/dgd/vllm-agg.yaml in ``namespace``, named ``<namespace>-000`` ...; their names."""
    ensure_namespace(cp.client, namespace)
    template = yaml.safe_load(EXAMPLE.read_text())
    names = []
    for i in range(n):
        graph = copy.deepcopy(template)
        graph["metadata"] = {"name": f"{namespace}-{i:03d}", "namespace": namespace}
        cp.client.create(dgd_collection(namespace), graph)
        names.append(graph["metadata"]["name"])
    return names


def play_grove(cp: ControlPlane, namespace: str, name: str, cliques: list[dict[str, Any]]) -> None:
    """What Grove does for graph ``name``'s PodCliqueSet: its PodCliques (the ``vllm-agg-ready`` scenario's, renamed)
    created and reported ready, then the PodCliqueSet's status."""
    pcs_path = resource_path("grove.io", "v1alpha1", "podcliquesets", namespace, name)
    pcs = cp.client.get(pcs_path)
    collection = resource_path("grove.io", "v1alpha1", "podcliques", namespace)
    for template in cliques:
        obj = json.loads(json.dumps(template).replace("vllm-agg", name))
        status = obj.pop("status")
        meta = obj["metadata"]
        for key in ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"):
            meta.pop(key, None)
        meta["namespace"] = namespace
        meta["ownerReferences"] = [{**r, "uid": pcs["metadata"]["uid"]} for r in meta.get("ownerReferences") or []]
        created = cp.client.create(collection, obj)
        created["status"] = {**status, "observedGeneration": created["metadata"].get("generation", 1)}
        cp.client.replace(f"{collection}/{meta['name']}/status", created)
    pcs["status"] = {"replicas": 1, "availableReplicas": 1, "updatedReplicas": 1,
                     "observedGeneration": pcs["metadata"].get("generation", 1)}  # fmt: skip
    cp.client.replace(f"{pcs_path}/status", pcs)


def make_ready(cp: ControlPlane, namespace: str, names: list[str], seconds: float) -> None:
    """Grove played for each graph once its PodCliqueSet exists, until every graph is Ready and Synced."""
    cliques = [d for d in yaml.safe_load_all(CLIQUES.read_text()) if d]
    played: set[str] = set()
    deadline = time.monotonic() + seconds
    while True:
        graphs = {g["metadata"]["name"]: g for g in cp.client.get(dgd_collection(namespace))["items"]}
        if all(ready_and_synced(graphs.get(n) or {}) for n in names):
            return
        pcs = cp.client.get(resource_path("grove.io", "v1alpha1", "podcliquesets", namespace))["items"]
        for name in sorted({p["metadata"]["name"] for p in pcs} & set(names) - played):
            play_grove(cp, namespace, name, cliques)
            played.add(name)
        if time.monotonic() > deadline:
            late = sorted(n for n in names if not ready_and_synced(graphs.get(n) or {}))
            raise AssertionError(
                f"{len(late)} graph(s) not Ready+Synced after {seconds:.0f}s: {late[:5]}; {cp.where()}"
            )
        time.sleep(0.5)


# --- what must not change -----------------------------------------------------------------------------------------


@dataclass
class Snapshot:
    uids: dict[str, str]  # API path -> UID: each graph and every object it composed
    specs: dict[str, Any]  # API path -> the PodCliqueSet's spec.template, a Service's spec


def _ref_path(ref: dict[str, Any]) -> str:
    """Where a composed object lives (the kinds a graph composes have regular plurals: ``<kind>s``)."""
    group, _, version = ref["apiVersion"].rpartition("/")
    plural = f"{ref['kind'].lower()}s"
    if not group:  # the core API
        return f"/api/{version}/namespaces/{ref['namespace']}/{plural}/{ref['name']}"
    return resource_path(group, version, plural, ref.get("namespace"), ref["name"])


def snapshot(cp: ControlPlane, namespace: str, names: list[str]) -> Snapshot:
    shot = Snapshot({}, {})
    for name in names:
        path = f"{dgd_collection(namespace)}/{name}"
        xr = cp.client.get(path)
        shot.uids[path] = xr["metadata"]["uid"]
        for ref in resource_refs(xr):
            ref_path = _ref_path(ref)
            obj = cp.client.get(ref_path)
            shot.uids[ref_path] = obj["metadata"]["uid"]
            if ref["kind"] == "PodCliqueSet":
                shot.specs[ref_path] = obj["spec"]["template"]
            elif ref["kind"] == "Service":
                shot.specs[ref_path] = obj["spec"]
    return shot


def lost(before: Snapshot, after: Snapshot) -> list[str]:
    """What the fault lost or changed: objects gone, recreated (another UID) or new, templates and specs changed."""
    problems = [f"{p}: gone" for p in before.uids if p not in after.uids]
    problems += [f"{p}: new" for p in after.uids if p not in before.uids]
    problems += [
        f"{p}: recreated ({before.uids[p]} -> {after.uids[p]})"
        for p in before.uids
        if p in after.uids and before.uids[p] != after.uids[p]
    ]
    problems += [f"{p}: spec changed" for p in before.specs if before.specs[p] != after.specs.get(p)]
    return problems


# --- what the graphs said meanwhile -------------------------------------------------------------------------------


@dataclass
class Sighting:
    at: float  # time.monotonic()
    graph: str
    synced: str
    reason: str
    message: str
    ready: str


class Sampler(threading.Thread):
    """Every graph's Synced and Ready conditions, read twice a second until ``stop()``; reads the API server does
    not answer (it is down) are counted, not sighted."""

    def __init__(self, cp: ControlPlane, namespace: str) -> None:
        super().__init__(daemon=True)
        self.cp, self.namespace = cp, namespace
        self.sightings: list[Sighting] = []
        self.failed_reads = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            try:
                items = self.cp.client.get(dgd_collection(self.namespace), timeout=5)["items"]
            except (OSError, APIError, ValueError):
                self.failed_reads += 1
            else:
                now = time.monotonic()
                for item in items:
                    got = conditions(item)
                    synced, ready = got.get("Synced") or {}, got.get("Ready") or {}
                    self.sightings.append(Sighting(now, item["metadata"]["name"], synced.get("status", ""),
                                                   synced.get("reason", ""), synced.get("message", ""),
                                                   ready.get("status", "")))  # fmt: skip
            self._halt.wait(SAMPLE_SECONDS)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=10)

    def not_synced(self) -> list[Sighting]:
        return [s for s in self.sightings if s.synced != "True"]


# --- the parts ----------------------------------------------------------------------------------------------------


def kill_function(cp: ControlPlane) -> None:
    """SIGKILL the function's server: the container's own process (runc's state names it) or the checkout's."""
    argv, _ = cp.commands["function-dynamo"]
    if Path(argv[0]).name == RUNTIME:
        root, name = argv[1].removeprefix("--root="), argv[-1]
        state = subprocess.run([RUNTIME, f"--root={root}", "state", name], capture_output=True, text=True)
        pid = int(json.loads(state.stdout)["pid"]) if state.returncode == 0 else 0
        if pid > 0:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        stop_process(cp, "function-dynamo", signal.SIGKILL)  # runc run, once its container's process is gone
        bundle = next(a.removeprefix("--bundle=") for a in argv if a.startswith("--bundle="))
        delete(Path(bundle), name)  # what is left of the container, so the name can run again
    else:
        stop_process(cp, "function-dynamo", signal.SIGKILL)


def start_function_again(crossplane: Crossplane) -> None:
    restart_process(crossplane.cp, "function-dynamo")
    wait_for(crossplane.cp, "function-dynamo", lambda: port_open(crossplane.function_address))


def point_function_at(cp: ControlPlane, address: str) -> None:
    """The Active FunctionRevision's endpoint set to ``address``, as the package runtime would."""
    deadline = time.monotonic() + 30
    while True:
        revision = _active_revision(cp)
        if revision is not None and play_revision(cp, revision, address):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the FunctionRevision's endpoint is not {address} after 30s; {cp.where()}")
        time.sleep(0.3)


def start_proxy(crossplane: Crossplane) -> str:
    """The fault proxy in front of the function (pass-through), started once per control plane; its address."""
    cp = crossplane.cp
    if "fault-proxy" not in cp.pids:
        port_file = cp.run_dir / "fault-proxy.port"
        argv = [sys.executable, str(REPO / "tests" / "fault_proxy.py"), "--upstream", crossplane.function_address,
                "--port-file", str(port_file)]  # fmt: skip
        start_process(cp, "fault-proxy", argv)
        wait_for(cp, "fault-proxy", lambda: port_file.is_file() and port_file.read_text().strip() != "")
    return f"127.0.0.1:{(cp.run_dir / 'fault-proxy.port').read_text().strip()}"


def proxy_mode(cp: ControlPlane, mode: str) -> None:
    os.kill(cp.pids["fault-proxy"], SIGNALS[mode])


def _restart(cp: ControlPlane, name: str, ready: Callable[[], bool]) -> None:
    stop_process(cp, name, signal.SIGTERM)
    restart_process(cp, name)
    wait_for(cp, name, ready, seconds=120)


def apiserver_ready(cp: ControlPlane) -> bool:
    return cp.client.request("GET", "/readyz", timeout=2, raw=True) == "ok"


def crossplane_healthy(cp: ControlPlane) -> bool:
    argv, _ = cp.commands["crossplane"]
    port = next(a.split("=", 1)[1] for a in argv if a.startswith("--health-probe-port="))
    return urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).status == 200


# --- a fault, from break to recovery ------------------------------------------------------------------------------


@dataclass
class Outcome:
    fault: str
    graphs: int
    down_seconds: float  # from the part broken to the part back (serving again)
    recover_seconds: float  # from the part back to every graph Ready and Synced again
    sampler: Sampler
    problems: list[str] = field(default_factory=list)  # what was lost; empty when nothing was

    def synced_false(self) -> list[Sighting]:
        return [s for s in self.sampler.not_synced() if s.synced == "False"]


def poke(cp: ControlPlane, namespace: str, names: list[str]) -> None:
    """An annotation on each graph: a change Crossplane reconciles while the part is down."""
    stamp = f"{time.time():.3f}"
    for name in names:
        with contextlib.suppress(OSError, APIError):
            cp.client.merge_patch(f"{dgd_collection(namespace)}/{name}", {"metadata": {"annotations": {POKE: stamp}}})


def run_fault(
    crossplane: Crossplane,
    fault: str,
    namespace: str,
    names: list[str],
    recover: float = 600,
    down: float | None = None,
) -> Outcome:
    """Break ``fault``'s part while the graphs run, bring it back, wait for every graph Ready and Synced again,
    and compare what they composed with before."""
    cp = crossplane.cp
    down = DOWN_SECONDS.get(fault, 0.0) if down is None else down
    if fault in ("function-errors", "function-hang"):
        point_function_at(cp, start_proxy(crossplane))
        time.sleep(1)
    before = snapshot(cp, namespace, names)
    sampler = Sampler(cp, namespace)
    sampler.start()
    time.sleep(1)
    broken = time.monotonic()
    if fault == "function-kill":
        kill_function(cp)
        poke(cp, namespace, names)
        time.sleep(max(0.0, down - (time.monotonic() - broken)))
        start_function_again(crossplane)
    elif fault in ("function-errors", "function-hang"):
        proxy_mode(cp, fault.removeprefix("function-").replace("errors", "error"))
        poke(cp, namespace, names)
        time.sleep(max(0.0, down - (time.monotonic() - broken)))
        proxy_mode(cp, "pass")
    elif fault == "crossplane-restart":
        stop_process(cp, "crossplane", signal.SIGTERM)
        poke(cp, namespace, names)
        restart_process(cp, "crossplane")
        wait_for(cp, "crossplane", lambda: crossplane_healthy(cp), seconds=120)
    elif fault == "apiserver-restart":
        _restart(cp, "kube-apiserver", lambda: apiserver_ready(cp))
        poke(cp, namespace, names)
    else:
        raise ValueError(f"unknown fault {fault!r} (choose from {', '.join(FAULTS)})")
    back = time.monotonic()
    recovered = _wait_recovered(cp, namespace, names, recover)
    sampler.stop()
    if fault in ("function-errors", "function-hang"):
        point_function_at(cp, crossplane.function_address)
    after = snapshot(cp, namespace, names)
    return Outcome(fault, len(names), round(back - broken, 1), round(recovered - back, 1), sampler, lost(before, after))


def _wait_recovered(cp: ControlPlane, namespace: str, names: list[str], seconds: float) -> float:
    """When every graph was read Ready and Synced again; AssertionError after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        with contextlib.suppress(OSError, APIError):
            graphs = {g["metadata"]["name"]: g for g in cp.client.get(dgd_collection(namespace))["items"]}
            if all(ready_and_synced(graphs.get(n) or {}) for n in names):
                return time.monotonic()
        if time.monotonic() > deadline:
            raise AssertionError(f"the graphs were not Ready and Synced {seconds:.0f}s after; {cp.where()}")
        time.sleep(0.25)
