"""spec.restart over successive reconciles (docs/upstream/operator.md §3.4): restartAt per component and status.restart.

A small simulated cluster runs the whole Composition in-process: each reconcile's XR status and
composed resources are fed back as the next one's observed state, and a stand-in for Grove
processes the PodCliqueSet (``sync``: generations catch up, a clique whose template changed starts
rolling) and finishes rollouts (``roll``) when a test says so.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from fixtures.tooling import REPO
from functions.api.normalise import graph_from_xr
from functions.contract import StepRequest
from functions.kinds.graph.graph_render_step import render_graph_deployment
from functions.kinds.graph.graph_status import ComponentStatus
from functions.kinds.graph.graph_status_step import graph_status
from functions.kinds.graph.restart import restart_targets
from functions.kinds.graph.restart_status import (
    RestartRequest,
    RestartStatus,
    grove_progress,
    next_restart_status,
    observed_restart_status,
    restart_request,
)
from functions.readiness.verdicts import READY, ReplicaStatus, not_ready
from functions.tooling.manifests import claim_to_xr, find_composition, load_documents
from functions.tooling.pipeline import RESOURCE_NAME_ANNOTATION, RenderOutput, render

RESTART_AT = "nvidia.com/restartAt"
GROVE = "grove.io/v1alpha1"


def pod_template(**metadata: Any) -> dict[str, Any]:
    main = {"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"}
    return {**({"metadata": metadata} if metadata else {}), "spec": {"containers": [main]}}


def claim(**restart: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "backendFramework": "vllm",
        "components": [
            {"name": "Frontend", "type": "frontend", "podTemplate": pod_template()},
            {"name": "Decode", "type": "decode", "replicas": 2, "podTemplate": pod_template()},
            {"name": "Prefill", "type": "prefill", "podTemplate": pod_template()},
        ],
    }
    if restart:
        spec["restart"] = restart
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "demo", "namespace": "team-a"},
        "spec": spec,
    }


XR = claim_to_xr(claim())
COMPOSITION = find_composition(XR, load_documents(REPO / "compositions"))


class Cluster:
    """The API server and Grove, as far as a restart needs them."""

    def __init__(self) -> None:
        self.xr = copy.deepcopy(XR)
        self.observed: dict[str, dict[str, Any]] = {}  # composition resource name -> object
        self.cliques: dict[str, dict[str, Any]] = {}  # clique name -> PodClique state
        self.last: RenderOutput | None = None

    # --- what the user does
    def request(self, id_: str, **strategy: Any) -> None:
        self.xr["spec"]["restart"] = {"id": id_, **({"strategy": strategy} if strategy else {})}

    def remove_restart(self) -> None:
        self.xr["spec"].pop("restart", None)

    # --- Crossplane
    def reconcile(self, apply: bool = True) -> RenderOutput:
        out = render(self.xr, COMPOSITION, list(self.observed.values()), self.grove_objects())
        self.xr["status"] = copy.deepcopy(out.composite["status"])
        if apply:
            for obj in out.composed:
                self._apply(obj)
        self.last = out
        return out

    def _apply(self, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["annotations"][RESOURCE_NAME_ANNOTATION]
        old = self.observed.get(name)
        new = copy.deepcopy(obj)
        generation = (old or {}).get("metadata", {}).get("generation", 0)
        changed = old is None or old.get("spec") != new.get("spec")
        new["metadata"]["generation"] = generation + 1 if changed else generation
        new["status"] = copy.deepcopy((old or {}).get("status", {}))
        self.observed[name] = new

    # --- Grove
    @property
    def pcs(self) -> dict[str, Any]:
        return self.observed["podcliqueset"]

    def sync(self) -> None:
        """Grove processes the PodCliqueSet; a clique whose restartAt changed starts rolling its pods."""
        self.pcs["status"]["observedGeneration"] = self.pcs["metadata"]["generation"]
        for clique in self.pcs["spec"]["template"]["cliques"]:
            template = clique.get("annotations", {}).get(RESTART_AT)
            state = self.cliques.setdefault(
                clique["name"], {"generation": 0, "template": object(), "updated": 0, "ready": 0}
            )
            state["replicas"] = clique["spec"]["replicas"]
            if state["template"] != template:
                state.update(generation=state["generation"] + 1, template=template, updated=0, ready=0)
            state["observedGeneration"] = state["generation"]

    def roll(self, *cliques: str) -> None:
        """The new pods of these cliques are up and ready."""
        for name in cliques:
            state = self.cliques[name]
            state.update(updated=state["replicas"], ready=state["replicas"])

    def grove_objects(self) -> list[dict[str, Any]]:
        return [
            {
                "apiVersion": GROVE,
                "kind": "PodClique",
                "metadata": {
                    "name": f"demo-0-{name}",
                    "namespace": "team-a",
                    "generation": s["generation"],
                    "labels": {"app.kubernetes.io/part-of": "demo"},
                },
                "spec": {"replicas": s["replicas"]},
                "status": {
                    "observedGeneration": s["observedGeneration"],
                    "replicas": s["replicas"],
                    "readyReplicas": s["ready"],
                    "updatedReplicas": s["updated"],
                },
            }
            for name, s in sorted(self.cliques.items())
        ]

    # --- what the tests look at
    def restart_status(self) -> dict[str, Any] | None:
        assert self.last is not None
        return self.last.composite["status"].get("restart")

    def restart_at(self) -> dict[str, str]:
        """restartAt per component on the desired PodCliqueSet of the last reconcile."""
        assert self.last is not None
        pcs = next(o for o in self.last.composed if o["kind"] == "PodCliqueSet")
        by_clique = {c["name"]: c.get("annotations", {}).get(RESTART_AT) for c in pcs["spec"]["template"]["cliques"]}
        names = {"frontend": "Frontend", "decode": "Decode", "prefill": "Prefill"}
        return {names[c]: v for c, v in by_clique.items() if v is not None}


@pytest.fixture
def cluster() -> Cluster:
    """Deployed and running, no restart asked for yet."""
    c = Cluster()
    c.reconcile()
    c.sync()
    c.roll("frontend", "decode", "prefill")
    out = c.reconcile()
    assert out.composite["status"]["state"] == "successful"
    assert c.restart_status() is None and c.restart_at() == {}
    return c


Step = tuple[str, Callable[[Cluster], Any], dict[str, Any] | None, dict[str, str]]


def restarting(id_: str, *in_progress: str) -> dict[str, Any]:
    return {"inProgress": list(in_progress), "observedID": id_, "phase": "Restarting"}


def completed(id_: str) -> dict[str, Any]:
    return {"observedID": id_, "phase": "Completed"}


def nothing(_: Cluster) -> None:
    pass


def sync_and_roll(*cliques: str) -> Callable[[Cluster], None]:
    def act(c: Cluster) -> None:
        c.sync()
        c.roll(*cliques)

    return act


R1 = {"Decode": "r1", "Frontend": "r1", "Prefill": "r1"}

SEQUENTIAL: list[Step] = [
    # (what happens before the reconcile, status.restart after it, restartAt per component it renders)
    (
        "a new id starts the first in alphabetical order",
        lambda c: c.request("r1"),
        restarting("r1", "Decode"),
        {"Decode": "r1"},
    ),
    (
        "applied, Grove has not processed it: the PCS generation is ahead",
        nothing,
        restarting("r1", "Decode"),
        {"Decode": "r1"},
    ),
    ("Grove processed it, the new pods are not up", Cluster.sync, restarting("r1", "Decode"), {"Decode": "r1"}),
    (
        "decode rolled: frontend's turn, in the same reconcile",
        lambda c: c.roll("decode"),
        restarting("r1", "Frontend"),
        {"Decode": "r1", "Frontend": "r1"},
    ),
    (
        "frontend's old pods are ready, but its new template is not processed yet",
        nothing,
        restarting("r1", "Frontend"),
        {"Decode": "r1", "Frontend": "r1"},
    ),
    ("frontend rolled", sync_and_roll("frontend"), restarting("r1", "Prefill"), R1),
    ("prefill rolled: the last one", sync_and_roll("prefill"), completed("r1"), R1),
    ("completed stays completed", nothing, completed("r1"), R1),
    (
        "a new id: only the first restarts, the others keep their value",
        lambda c: c.request("r2"),
        restarting("r2", "Decode"),
        {"Decode": "r2", "Frontend": "r1", "Prefill": "r1"},
    ),
    (
        "a newer id mid-way starts over (no Superseded on Grove)",
        lambda c: c.request("r3"),
        restarting("r3", "Decode"),
        {"Decode": "r3", "Frontend": "r1", "Prefill": "r1"},
    ),
    (
        "spec.restart removed mid-way: no status, annotations as they are",
        Cluster.remove_restart,
        None,
        {"Decode": "r3", "Frontend": "r1", "Prefill": "r1"},
    ),
]

PARALLEL: list[Step] = [
    (
        "a new id restarts every component, sorted",
        lambda c: c.request("r1", type="Parallel"),
        restarting("r1", "Decode", "Frontend", "Prefill"),
        R1,
    ),
    (
        "Grove has not processed it: nothing counts as done",
        nothing,
        restarting("r1", "Decode", "Frontend", "Prefill"),
        R1,
    ),
    ("frontend rolled first", sync_and_roll("frontend"), restarting("r1", "Decode", "Prefill"), R1),
    ("the rest rolled", sync_and_roll("decode", "prefill"), completed("r1"), R1),
    ("spec.restart removed after completion: the terminal status stays", Cluster.remove_restart, completed("r1"), R1),
    ("and stays on later reconciles", nothing, completed("r1"), R1),
    (
        "a restart with the same id again is already processed",
        lambda c: c.request("r1", type="Parallel"),
        completed("r1"),
        R1,
    ),
]

ORDERED: list[Step] = [
    (
        "strategy.order decides who goes first",
        lambda c: c.request("r1", order=["Prefill", "Frontend", "Decode"]),
        restarting("r1", "Prefill"),
        {"Prefill": "r1"},
    ),
    (
        "then the next in that order",
        sync_and_roll("prefill"),
        restarting("r1", "Frontend"),
        {"Prefill": "r1", "Frontend": "r1"},
    ),
    ("and the last", sync_and_roll("frontend"), restarting("r1", "Decode"), R1),
    ("done", sync_and_roll("decode"), completed("r1"), R1),
]


@pytest.mark.parametrize(
    "steps", [SEQUENTIAL, PARALLEL, ORDERED], ids=["sequential", "parallel", "sequential-with-order"]
)
def test_restart_progression(cluster: Cluster, steps: list[Step]) -> None:
    for what, act, status, restart_at in steps:
        act(cluster)
        cluster.reconcile()
        assert (cluster.restart_status(), cluster.restart_at()) == (status, restart_at), what


def test_a_pcs_not_updated_yet_does_not_pass_for_a_restarted_one(cluster: Cluster) -> None:
    """The decode -> frontend step is decided but not applied (a stale read, a failed apply): frontend's old
    pods are ready and up to date, and Grove is in sync, yet frontend has not restarted."""
    cluster.request("r1")
    cluster.reconcile()
    cluster.sync()
    cluster.roll("decode")
    cluster.reconcile(apply=False)
    assert cluster.restart_status() == restarting("r1", "Frontend")
    cluster.sync()
    cluster.reconcile(apply=False)
    assert cluster.restart_status() == restarting("r1", "Frontend")  # not prefill: frontend never got r1
    cluster.reconcile()
    assert cluster.restart_at() == {"Decode": "r1", "Frontend": "r1"}
    cluster.sync()
    cluster.reconcile()
    assert cluster.restart_status() == restarting("r1", "Frontend")  # now rolling
    cluster.roll("frontend")
    cluster.reconcile()
    assert cluster.restart_status() == restarting("r1", "Prefill")


def test_removing_spec_restart_after_completion_triggers_no_rollout(cluster: Cluster) -> None:
    cluster.request("r1", type="Parallel")
    cluster.reconcile()
    cluster.sync()
    cluster.roll("frontend", "decode", "prefill")
    cluster.reconcile()
    generation = cluster.pcs["metadata"]["generation"]
    cluster.remove_restart()
    cluster.reconcile()
    cluster.reconcile()
    assert cluster.restart_status() == completed("r1")
    assert cluster.pcs["metadata"]["generation"] == generation  # the desired PodCliqueSet did not change


def test_status_and_ttl_while_restarting(cluster: Cluster) -> None:
    """The DGD state follows readiness (§3.1); a restart under way asks to be called again soon."""
    cluster.request("r1")
    out = cluster.reconcile()
    assert out.composite["status"]["state"] == "successful"  # the old pods still serve
    xr = copy.deepcopy(cluster.xr)
    pcs = next(o for o in out.composed if o["kind"] == "PodCliqueSet")
    rsp = graph_status(
        StepRequest(
            input={},
            observed_composite=xr,
            observed_resources=cluster.observed,
            desired_resources={"podcliqueset": pcs},
            required={"grove-podcliques": cluster.grove_objects()},
        )
    )
    assert rsp.composite_status and rsp.composite_status["restart"]["phase"] == "Restarting"
    # Beyond upstream: the PodCliqueSet stamped with the restart id and not processed by Grove yet is a rollout
    # that has not happened, so not ready (docs/kinds/dgd.md "Honest readiness").
    assert rsp.composite_ready is None and rsp.ttl_seconds == 15
    progressing = next(c for c in rsp.conditions if c.type == "Progressing")
    assert (progressing.status, progressing.reason) == ("True", "RolloutInProgress")
    assert "PodCliqueSet demo: spec not yet processed" in progressing.message


def render_step(cluster: Cluster) -> Any:
    return render_graph_deployment(
        StepRequest(input={}, observed_composite=cluster.xr, observed_resources=cluster.observed)
    )


def test_the_render_step_reads_grove_objects_only_while_a_restart_is_under_way(cluster: Cluster) -> None:
    assert render_step(cluster).requirements == {}
    cluster.request("r1")
    assert render_step(cluster).requirements == {}  # a new id: no readiness needed
    cluster.reconcile()
    wants = render_step(cluster).requirements
    assert sorted(wants) == ["grove-podcliques", "grove-podcliquescalinggroups"]
    assert wants["grove-podcliques"].match_labels == {"app.kubernetes.io/part-of": "demo"}
    for _ in range(3):
        cluster.sync()
        cluster.roll("frontend", "decode", "prefill")
        cluster.reconcile()
    assert cluster.restart_status() == completed("r1")
    assert render_step(cluster).requirements == {}


def test_user_restart_at_annotation_is_overridden_only_when_stamped() -> None:
    spec = claim()
    spec["spec"]["components"][0]["podTemplate"] = pod_template(annotations={RESTART_AT: "mine"})
    xr = claim_to_xr(spec)
    out = render(xr, COMPOSITION)
    pcs = next(o for o in out.composed if o["kind"] == "PodCliqueSet")
    frontend = next(c for c in pcs["spec"]["template"]["cliques"] if c["name"] == "frontend")
    assert frontend["annotations"][RESTART_AT] == "mine"
    xr["spec"]["restart"] = {"id": "r1", "strategy": {"type": "Parallel"}}
    out = render(xr, COMPOSITION)
    pcs = next(o for o in out.composed if o["kind"] == "PodCliqueSet")
    assert {c["name"]: c["annotations"][RESTART_AT] for c in pcs["spec"]["template"]["cliques"]} == {
        "decode": "r1",
        "frontend": "r1",
        "prefill": "r1",
    }


# --- the pure pieces


def test_parse_spec_and_status() -> None:
    xr = {"spec": {"restart": {"id": "a", "strategy": {"type": "Parallel"}}}, "status": {"restart": {}}}
    assert restart_request(xr) == RestartRequest("a", "Parallel")
    assert restart_request({"spec": {"restart": {"id": ""}}}) is None  # upstream: an empty id is no restart
    assert restart_request({"spec": {"restart": {"id": "b", "strategy": {"order": ["Y", "X"]}}}}).sequence(
        ["X", "Y"]
    ) == ("Y", "X")
    assert RestartRequest("b").sequence(["b", "B", "a"]) == ("B", "a", "b")  # byte order, as Go sorts
    assert observed_restart_status(xr) == RestartStatus()
    assert observed_restart_status({"status": {"restart": {"inProgress": "x"}}}) == RestartStatus()
    assert RestartStatus("a", "Completed").as_status() == {"observedID": "a", "phase": "Completed"}


def never_done(names: Any) -> list[str]:
    return list(names)


def always_done(_: Any) -> list[str]:
    return []


@pytest.mark.parametrize(
    ("request_", "previous", "progress", "want"),
    [
        (None, None, never_done, None),
        (None, RestartStatus("a", "Restarting", ("X",)), never_done, None),
        (None, RestartStatus("a", "Failed"), never_done, RestartStatus("a", "Failed")),
        (None, RestartStatus("a", "Superseded"), never_done, RestartStatus("a", "Superseded")),
        (RestartRequest("a"), RestartStatus("a", "Superseded"), always_done, RestartStatus("a", "Superseded")),
        (RestartRequest("b"), RestartStatus("a", "Completed"), always_done, RestartStatus("b", "Restarting", ("X",))),
        # same id, nothing in progress recorded (e.g. Pending written by hand): start with the first
        (RestartRequest("a"), RestartStatus("a", "Pending"), always_done, RestartStatus("a", "Restarting", ("X",))),
        # the one in progress left the order: the sequence starts over (newer upstream)
        (
            RestartRequest("a"),
            RestartStatus("a", "Restarting", ("Gone",)),
            always_done,
            RestartStatus("a", "Restarting", ("X",)),
        ),
        (
            RestartRequest("a", "Parallel"),
            RestartStatus("a", "Restarting"),
            never_done,
            RestartStatus("a", "Restarting", ("X", "Y")),
        ),
    ],
)
def test_next_restart_status(
    request_: RestartRequest | None, previous: RestartStatus | None, progress: Any, want: RestartStatus | None
) -> None:
    assert next_restart_status(request_, previous, ["Y", "X"], progress) == want


def test_no_components() -> None:
    for strategy in ("Sequential", "Parallel"):
        assert next_restart_status(RestartRequest("a", strategy), None, [], never_done) == RestartStatus(
            "a", "Completed"
        )


@pytest.mark.parametrize(
    ("request_", "status", "want"),
    [
        (None, None, set()),
        (None, RestartStatus("a", "Completed"), {"X", "Y", "Z"}),  # spec.restart removed: keep the id on all
        (RestartRequest("a"), RestartStatus("a", "Superseded"), set()),
        (RestartRequest("a"), RestartStatus("a", "Completed"), {"X", "Y", "Z"}),
        (RestartRequest("a", "Parallel"), RestartStatus("a", "Restarting", ("Y",)), {"X", "Y", "Z"}),
        (RestartRequest("a"), RestartStatus("a", "Restarting", ("Y",)), {"X", "Y"}),
        (RestartRequest("a"), RestartStatus("a", "Pending", ("Y",)), {"X"}),
        (RestartRequest("a", order=("Z", "Y", "X")), RestartStatus("a", "Restarting", ("Y",)), {"Z", "Y"}),
    ],
)
def test_restart_targets(request_: RestartRequest | None, status: RestartStatus | None, want: set[str]) -> None:
    restart_id, targets = restart_targets(request_, status, ["X", "Y", "Z"])
    assert targets == want
    assert restart_id == (status.observed_id if targets else "")


def multinode_graph() -> Any:
    return graph_from_xr(
        claim_to_xr(
            {
                "apiVersion": "nvidia.com/v1alpha1",
                "kind": "DynamoGraphDeployment",
                "metadata": {"name": "mn", "namespace": "ns"},
                "spec": {"services": {"Worker": {"componentType": "worker", "multinode": {"nodeCount": 2}}}},
            }
        )
    )


def pcs(generation: int, observed: int | None, **restart_at: str) -> dict[str, Any]:
    cliques = [{"name": n, "annotations": {RESTART_AT: v}} for n, v in restart_at.items()]
    return {
        "metadata": {"generation": generation},
        "spec": {"template": {"cliques": cliques}},
        "status": {} if observed is None else {"observedGeneration": observed},
    }


def pcsg_status(ready: bool) -> ComponentStatus:
    return ComponentStatus(
        "Worker", "mn-0-worker", True, READY if ready else not_ready("x"), ReplicaStatus("PodCliqueScalingGroup", ())
    )


@pytest.mark.parametrize(
    ("podcliqueset", "ready", "still"),
    [
        (pcs(2, 2, **{"worker-ldr": "r1", "worker-wkr": "r1"}), True, []),
        (pcs(2, 2, **{"worker-ldr": "r1", "worker-wkr": "r1"}), False, ["Worker"]),
        (pcs(2, 1, **{"worker-ldr": "r1", "worker-wkr": "r1"}), True, ["Worker"]),  # Grove behind
        (pcs(2, None, **{"worker-ldr": "r1", "worker-wkr": "r1"}), True, ["Worker"]),  # observedGeneration nil
        (pcs(2, 2, **{"worker-ldr": "r1", "worker-wkr": "r0"}), True, ["Worker"]),  # both cliques need it
        (None, True, ["Worker"]),
    ],
)
def test_grove_progress_for_a_multinode_component(
    podcliqueset: dict[str, Any] | None, ready: bool, still: list[str]
) -> None:
    assert grove_progress(multinode_graph(), "r1", podcliqueset, [pcsg_status(ready)])(["Worker"]) == still


def test_a_component_no_longer_in_the_graph_has_nothing_left_to_restart() -> None:
    progress = grove_progress(multinode_graph(), "r1", pcs(2, 2), [])
    assert progress(["Gone", "Worker"]) == ["Worker"]
    assert grove_progress(multinode_graph(), "r1", pcs(2, 1), [])(["Gone"]) == ["Gone"]  # unless Grove is behind
