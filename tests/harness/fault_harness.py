"""Faults on the real stack, with nothing lost: graphs made Ready (Grove played), one part broken and brought back,
then the invariants checked. Shared by tests/test_crossplane_faults.py, tests/test_operator_faults.py and
scripts/faults.py.

The faults (``FAULTS``), each breaking one part for ``down`` seconds while the graphs run:

- ``function-kill``: the function's server SIGKILLed (the container's server process under runc, or the checkout's
  server process), started again the way ``crossplane_core`` starts it;
- ``crossplane-restart``: Crossplane core stopped (SIGTERM) and started again with the same command line;
- ``apiserver-restart``: kube-apiserver stopped (SIGTERM) and started again with the same flags and ports; etcd keeps
  its data;
- ``function-errors`` / ``function-hang``: the Active FunctionRevision's endpoint pointed at a fault proxy
  (``tests/harness/fault_proxy.py``) in front of the function, which closes every connection at once (errors) or holds
  it without answering (hang) for ``down`` seconds, then forwards again; afterwards the endpoint is pointed back.

While a part is down each graph is touched (an annotation: a change the graph sees while the part is down, so
Crossplane reconciles it during the fault; not while the API server itself is down), and a sampler reads every
graph's conditions twice a second. After the part is back: every composed object has the UID it had (none
deleted or recreated), the PodCliqueSet's ``spec.template`` and the Services' ``spec`` are unchanged, every graph
is Ready and Synced again; the time from the part being back to that is the fault's time to recover.

The same faults that apply to it run against the upstream operator (``tests/harness/operator_stack.py``; a stack is a
``Crossplane`` or an ``OperatorStack``), ``OPERATOR_FAULTS``:

- ``operator-restart``: the manager stopped (SIGTERM) and started again with the same command line
  (``operator_stack.rerun_operator``); it is back once it holds its leader-election Lease again;
- ``apiserver-restart``: as above. Should the manager exit meanwhile, it is started again as the kubelet would
  restart its container, and the outcome says so.

The operator's composed objects are those a graph's DGD controls (its controller owner reference: the operator
records no list of them), its graphs are back once Ready (it writes no Synced condition), and the sampler records
each DGD's ``status.state`` and Ready reason too. The annotation the harness writes while the operator is down
goes through the operator's admission webhooks: what they refused is kept (``Outcome.refused``).
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
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from fixtures.tooling import REPO
from harness.apiserver import ensure_namespace, resource_path
from harness.bench_controllers import owner_graph
from harness.bench_controllers import ready as graph_ready
from harness.composites import resource_refs
from harness.container import RUNTIME, delete
from harness.controlplane import APIError, ControlPlane, restart_process, start_process, stop_process, wait_for
from harness.crossplane_core import Crossplane, _active_revision, play_revision, port_open
from harness.fault_proxy import SIGNALS
from harness.operator_stack import PROCESS as OPERATOR_PROCESS
from harness.operator_stack import OperatorStack, rerun_operator, stop_operator
from harness.poll import until

EXAMPLE = REPO / "examples" / "dgd" / "vllm-agg.yaml"
CLIQUES = REPO / "tests" / "scenarios" / "status" / "vllm-agg-ready" / "required.yaml"
FAULTS = ("function-kill", "crossplane-restart", "apiserver-restart", "function-errors", "function-hang")
OPERATOR_FAULTS = ("operator-restart", "apiserver-restart")  # the function's faults have no operator counterpart
PROXY_FAULTS = ("function-errors", "function-hang")
DOWN_SECONDS = {"function-kill": 10.0, "function-errors": 30.0, "function-hang": 30.0}  # the brief's; others: as long
# as the part takes to stop and start
POKE = "faults.function-dynamo.io/touched"
SAMPLE_SECONDS = 0.5
# What the operator creates for examples/dgd/vllm-agg.yaml, by kind: where to list it (``{ns}``: the namespace).
OWNED = {
    "PodCliqueSet": "/apis/grove.io/v1alpha1/namespaces/{ns}/podcliquesets",
    "Service": "/api/v1/namespaces/{ns}/services",
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
}
Obj = dict[str, Any]
Stack = Crossplane | OperatorStack


def dgd_collection(namespace: str) -> str:
    return resource_path("nvidia.com", "v1beta1", "dynamographdeployments", namespace)


def conditions(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c.get("type", ""): c for c in (obj.get("status") or {}).get("conditions") or []}


def ready_and_synced(obj: dict[str, Any]) -> bool:
    got = conditions(obj)
    return all((got.get(t) or {}).get("status") == "True" for t in ("Ready", "Synced"))


def settled(stack: Stack) -> Callable[[Obj], bool]:
    """When a graph counts as back: Ready and Synced for the package, Ready for the operator (no Synced)."""
    return graph_ready if isinstance(stack, OperatorStack) else ready_and_synced


def faults_of(stack: Stack) -> tuple[str, ...]:
    return OPERATOR_FAULTS if isinstance(stack, OperatorStack) else FAULTS


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


def make_ready(
    cp: ControlPlane, namespace: str, names: list[str], seconds: float, done: Callable[[Obj], bool] = ready_and_synced
) -> None:
    """Grove played for each graph once its PodCliqueSet exists, until ``done`` (Ready and Synced) for every graph."""
    cliques = [d for d in yaml.safe_load_all(CLIQUES.read_text()) if d]
    played: set[str] = set()
    late: list[str] = []

    def all_done() -> bool:
        graphs = {g["metadata"]["name"]: g for g in cp.client.get(dgd_collection(namespace))["items"]}
        late[:] = sorted(n for n in names if not done(graphs.get(n) or {}))
        if not late:
            return True
        pcs = cp.client.get(resource_path("grove.io", "v1alpha1", "podcliquesets", namespace))["items"]
        for name in sorted({p["metadata"]["name"] for p in pcs} & set(names) - played):
            play_grove(cp, namespace, name, cliques)
            played.add(name)
        return False

    until(f"every graph {done.__name__}", all_done, seconds, where=lambda: f"{len(late)} not: {late[:5]}; {cp.where()}")


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


def referenced(cp: ControlPlane, namespace: str, names: list[str]) -> list[tuple[str, str, Obj]]:
    """Each graph and what its XR says it composed (``resourceRefs``): (kind, API path, object)."""
    out = []
    for name in names:
        path = f"{dgd_collection(namespace)}/{name}"
        xr = cp.client.get(path)
        out.append(("DynamoGraphDeployment", path, xr))
        out += [(ref["kind"], _ref_path(ref), cp.client.get(_ref_path(ref))) for ref in resource_refs(xr)]
    return out


def owned(cp: ControlPlane, namespace: str, names: list[str]) -> list[tuple[str, str, Obj]]:
    """Each graph and the objects of ``OWNED``'s kinds it controls (by owner reference, as the operator marks what
    it creates): (kind, API path, object)."""
    graphs = [f"{dgd_collection(namespace)}/{n}" for n in names]
    out = [("DynamoGraphDeployment", path, cp.client.get(path)) for path in graphs]
    for kind, collection in OWNED.items():
        path = collection.format(ns=namespace)
        out += [(kind, f"{path}/{o['metadata']['name']}", o)
                for o in cp.client.get(path)["items"] if owner_graph(o) in names]  # fmt: skip
    return out


def snapshot(cp: ControlPlane, namespace: str, names: list[str], by_owner: bool = False) -> Snapshot:
    """The UIDs of each graph and what it composed (``owned`` with ``by_owner``, else ``referenced``), and the
    PodCliqueSets' ``spec.template`` and Services' ``spec``."""
    shot = Snapshot({}, {})
    for kind, path, obj in (owned if by_owner else referenced)(cp, namespace, names):
        shot.uids[path] = obj["metadata"]["uid"]
        if kind == "PodCliqueSet":
            shot.specs[path] = obj["spec"]["template"]
        elif kind == "Service":
            shot.specs[path] = obj["spec"]
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
    ready_reason: str = ""
    state: str = ""  # the DGD's status.state (the operator's: pending, successful, failed)


class Sampler(threading.Thread):
    """Every graph's Synced and Ready conditions and ``status.state``, read twice a second until ``stop()``; reads
    the API server does not answer (it is down) are counted, not sighted."""

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
                                                   ready.get("status", ""), ready.get("reason", ""),
                                                   str((item.get("status") or {}).get("state", ""))))  # fmt: skip
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

    def pointed() -> bool:
        revision = _active_revision(cp)
        return revision is not None and play_revision(cp, revision, address)

    until(f"the FunctionRevision's endpoint {address}", pointed, 30, every=0.3, where=cp.where)


def start_proxy(crossplane: Crossplane) -> str:
    """The fault proxy in front of the function (pass-through), started once per control plane; its address."""
    cp = crossplane.cp
    if "fault-proxy" not in cp.pids:
        port_file = cp.run_dir / "fault-proxy.port"
        argv = [sys.executable, str(REPO / "tests" / "harness" / "fault_proxy.py"),
                "--upstream", crossplane.function_address, "--port-file", str(port_file)]  # fmt: skip
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


def lease_holder(stack: OperatorStack) -> tuple[str, float]:
    """Who holds the operator's leader-election Lease (its config's ``leaderElection``) and when they last renewed
    it (seconds since the epoch); ("", 0) while there is none."""
    election = stack.config.get("leaderElection") or {}
    path = f"/apis/coordination.k8s.io/v1/namespaces/{election['namespace']}/leases/{election['id']}"
    try:
        spec = stack.cp.client.get(path, timeout=5)["spec"]
    except APIError as err:
        if err.code == 404:
            return "", 0.0
        raise
    renewed = datetime.fromisoformat(spec["renewTime"].replace("Z", "+00:00")).timestamp()
    return spec.get("holderIdentity") or "", renewed


def wait_leading(stack: OperatorStack, after: float, other_than: str = "", seconds: float = 120) -> None:
    """Until a manager other than ``other_than`` holds the Lease, renewed after ``after`` (epoch seconds): only the
    leader reconciles, and a SIGTERMed manager does not give its Lease up, so its successor waits for it to
    expire (the chart's 15 s)."""

    def leading() -> bool:
        holder, renewed = lease_holder(stack)
        return holder not in ("", other_than) and renewed >= after

    wait_for(stack.cp, OPERATOR_PROCESS, leading, seconds=seconds)


def _manager_exited(stack: OperatorStack) -> str:
    """How the manager ended, from its exit code and its log's last error line; "" while it runs."""
    cp = stack.cp
    proc = next(p for p in cp.procs if p.pid == cp.pids[OPERATOR_PROCESS])
    if proc.poll() is None:
        return ""
    lines = cp.logs[OPERATOR_PROCESS].read_text(errors="replace").splitlines()
    last = next((line for line in reversed(lines) if "error" in line.lower()), lines[-1] if lines else "")
    return f"the manager exited with {proc.returncode}: {last.strip()[:300]}"


def revive_operator(stack: OperatorStack) -> list[str]:
    """The manager started again if it exited, as the kubelet restarts its container; what happened, if it did."""
    exited = _manager_exited(stack)
    if not exited:
        return []
    stop_operator(stack)  # nothing left to stop; conversion named by its Service again, as it checks on start
    rerun_operator(stack)
    return [f"{exited}; started again, as the kubelet would"]


# --- a fault, from break to recovery ------------------------------------------------------------------------------


@dataclass
class Outcome:
    fault: str
    graphs: int
    down_seconds: float  # from the part broken to the part back (serving again)
    recover_seconds: float  # from the part back to every graph Ready and Synced again
    sampler: Sampler
    problems: list[str] = field(default_factory=list)  # what was lost; empty when nothing was
    refused: list[str] = field(default_factory=list)  # the annotations the API server refused meanwhile, and why
    notes: list[str] = field(default_factory=list)  # what else happened: the operator's manager exiting

    def synced_false(self) -> list[Sighting]:
        return [s for s in self.sampler.not_synced() if s.synced == "False"]


def poke(cp: ControlPlane, namespace: str, names: list[str]) -> list[str]:
    """An annotation on each graph: a change Crossplane reconciles while the part is down. What the API server
    refused (the operator's admission webhooks are down with it), one message per graph."""
    stamp = f"{time.time():.3f}"
    refused = []
    for name in names:
        try:
            cp.client.merge_patch(f"{dgd_collection(namespace)}/{name}", {"metadata": {"annotations": {POKE: stamp}}})
        except (OSError, APIError) as err:
            refused.append(str(err).replace(name, "<graph>"))
    return refused


def run_fault(
    stack: Stack,
    fault: str,
    namespace: str,
    names: list[str],
    recover: float = 600,
    down: float | None = None,
) -> Outcome:
    """Break ``fault``'s part while the graphs run, bring it back, wait for every graph Ready (and Synced) again,
    and compare what they composed with before."""
    if fault not in faults_of(stack):
        raise ValueError(f"{fault!r} does not apply to this stack (choose from {', '.join(faults_of(stack))})")
    cp, operator = stack.cp, isinstance(stack, OperatorStack)
    if isinstance(stack, Crossplane) and fault in PROXY_FAULTS:
        point_function_at(cp, start_proxy(stack))
        time.sleep(1)
    before = snapshot(cp, namespace, names, by_owner=operator)
    sampler = Sampler(cp, namespace)
    sampler.start()
    time.sleep(1)
    broken = time.monotonic()
    if isinstance(stack, OperatorStack):
        refused, notes = _break_operator(stack, fault, namespace, names)
    else:
        refused, notes = _break_package(stack, fault, namespace, names, down), []
    back = time.monotonic()
    recovered = _wait_recovered(cp, namespace, names, recover, settled(stack))
    sampler.stop()
    if isinstance(stack, OperatorStack) and (exited := _manager_exited(stack)):
        notes.append(f"after recovery, {exited}")
    elif isinstance(stack, Crossplane) and fault in PROXY_FAULTS:
        point_function_at(cp, stack.function_address)
    after = snapshot(cp, namespace, names, by_owner=operator)
    return Outcome(fault, len(names), round(back - broken, 1), round(recovered - back, 1), sampler,
                   lost(before, after), refused, notes)  # fmt: skip


def fault_on_graphs(stack: Stack, fault: str, graphs: int, seconds: float = 90) -> Outcome:
    """``graphs`` graphs in a namespace named after ``fault``, made Ready, then ``fault`` run on them, each step
    within ``seconds``; AssertionError if it lost or changed anything."""
    names = apply_graphs(stack.cp, fault, graphs)
    make_ready(stack.cp, fault, names, seconds=seconds, done=settled(stack))
    outcome = run_fault(stack, fault, fault, names, recover=seconds)
    assert outcome.problems == [], f"{fault} lost or changed: {outcome.problems}; {stack.where()}"
    return outcome


def _break_package(
    crossplane: Crossplane, fault: str, namespace: str, names: list[str], down: float | None
) -> list[str]:
    """Break the package's part ``fault`` for ``down`` seconds (or as long as it takes) and bring it back; the
    annotations refused meanwhile."""
    cp = crossplane.cp
    down = DOWN_SECONDS.get(fault, 0.0) if down is None else down
    broken = time.monotonic()
    if fault == "function-kill":
        kill_function(cp)
        refused = poke(cp, namespace, names)
        time.sleep(max(0.0, down - (time.monotonic() - broken)))
        start_function_again(crossplane)
    elif fault in PROXY_FAULTS:
        proxy_mode(cp, fault.removeprefix("function-").replace("errors", "error"))
        refused = poke(cp, namespace, names)
        time.sleep(max(0.0, down - (time.monotonic() - broken)))
        proxy_mode(cp, "pass")
    elif fault == "crossplane-restart":
        stop_process(cp, "crossplane", signal.SIGTERM)
        refused = poke(cp, namespace, names)
        restart_process(cp, "crossplane")
        wait_for(cp, "crossplane", lambda: crossplane_healthy(cp), seconds=120)
    else:  # apiserver-restart
        _restart(cp, "kube-apiserver", lambda: apiserver_ready(cp))
        refused = poke(cp, namespace, names)
    return refused


def _break_operator(stack: OperatorStack, fault: str, namespace: str, names: list[str]) -> tuple[list[str], list[str]]:
    """Break the operator's part ``fault`` and bring it back, until its manager leads again; the annotations refused
    meanwhile and what else happened (the manager ending with the API server, the API server's own time down)."""
    cp = stack.cp
    holder, _ = lease_holder(stack)
    broken = time.monotonic()
    if fault == "operator-restart":
        stop_operator(stack)
        stopped = time.monotonic() - broken
        refused = poke(cp, namespace, names)
        rerun_operator(stack)
        serving = time.monotonic() - broken
        wait_leading(stack, after=0.0, other_than=holder)
        return refused, [f"the manager exited {stopped:.1f} s after its SIGTERM; the new one was ready {serving:.1f} s "
                         "after it, and leading (so reconciling) once its predecessor's Lease expired"]  # fmt: skip
    _restart(cp, "kube-apiserver", lambda: apiserver_ready(cp))  # apiserver-restart
    notes = [f"the API server served again {time.monotonic() - broken:.1f} s after its SIGTERM"]
    serving = time.time()
    refused = poke(cp, namespace, names)
    revived = revive_operator(stack)
    wait_leading(stack, after=serving, other_than=holder if revived else "")
    return refused, notes + revived


def _wait_recovered(
    cp: ControlPlane, namespace: str, names: list[str], seconds: float, done: Callable[[Obj], bool] = ready_and_synced
) -> float:
    """When every graph was read ``done`` (Ready and Synced) again; ``poll.Timeout`` after ``seconds``."""

    def all_done() -> bool:
        graphs = {g["metadata"]["name"]: g for g in cp.client.get(dgd_collection(namespace))["items"]}
        return all(done(graphs.get(n) or {}) for n in names)

    until(
        f"every graph {done.__name__} again",
        all_done,
        seconds,
        every=0.25,
        tolerate=(OSError, APIError),
        where=cp.where,
    )
    return time.monotonic()
