"""Readiness rules and status pieces, one table per rule (docs/upstream/operator.md §3.1 and §3.2)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from functions.api.normalise import graph_from_xr
from functions.contract import Condition, ResourceSelector
from functions.kinds.graph.dcd_status import dcd_readiness
from functions.kinds.graph.graph_status import (
    component_statuses,
    grove_requirements,
    has_topology_constraint,
    podcliqueset_readiness,
    podcliqueset_rollout,
    xr_status,
)
from functions.kinds.graph.status_input import InputError, duration_seconds, parse_status_input
from functions.readiness.conditions import (
    graph_ready_condition,
    progressing_condition,
    topology_condition,
    topology_warning,
)
from functions.readiness.deployment import deployment_readiness, deployment_replica_status
from functions.readiness.grove import pcsg_readiness, podclique_readiness
from functions.readiness.health import composed_readiness
from functions.readiness.verdicts import NOT_FOUND, Readiness, ReplicaStatus, stalled, updating
from functions.tooling.manifests import claim_to_xr


def grove(kind: str, desired: int, generation: int | None = 1, **status: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "x", "namespace": "ns"}
    if generation is not None:
        meta["generation"] = generation
    return {
        "apiVersion": "grove.io/v1alpha1",
        "kind": kind,
        "metadata": meta,
        "spec": {"replicas": desired},
        "status": status,
    }


PODCLIQUE_CASES = [
    (
        "all counts equal",
        grove("PodClique", 2, observedGeneration=1, replicas=2, readyReplicas=2, updatedReplicas=2),
        "",
    ),
    ("no replicas wanted", grove("PodClique", 0, observedGeneration=1), ""),
    ("zero wanted, counts ignored", grove("PodClique", 0, observedGeneration=1, replicas=3, readyReplicas=1), ""),
    (
        "observedGeneration nil",
        grove("PodClique", 1, replicas=1, readyReplicas=1, updatedReplicas=1),
        "observedGeneration is nil",
    ),
    (
        "observedGeneration behind",
        grove("PodClique", 1, generation=3, observedGeneration=2, replicas=1, readyReplicas=1, updatedReplicas=1),
        "spec not yet processed: generation=3, observedGeneration=2",
    ),
    (
        "observedGeneration ahead is fine",
        grove("PodClique", 1, generation=2, observedGeneration=3, replicas=1, readyReplicas=1, updatedReplicas=1),
        "",
    ),
    (
        "nil observedGeneration wins over zero desired",
        grove("PodClique", 0),
        "observedGeneration is nil",
    ),
    (
        "not all ready",
        grove("PodClique", 2, observedGeneration=1, replicas=2, readyReplicas=1, updatedReplicas=2),
        "desired=2, ready=1",
    ),
    (
        "not all updated",
        grove("PodClique", 2, observedGeneration=1, replicas=2, readyReplicas=2, updatedReplicas=1),
        "desired=2, updated=1",
    ),
    (
        "surge during a rolling update",
        grove("PodClique", 2, observedGeneration=1, replicas=3, readyReplicas=2, updatedReplicas=2),
        "performing rolling update: desired=2, replicas=3",
    ),
    ("status empty", grove("PodClique", 1, observedGeneration=1), "desired=1, ready=0"),
    (
        "ready is checked before updated and replicas",
        grove("PodClique", 3, observedGeneration=1, replicas=4, readyReplicas=1, updatedReplicas=2),
        "desired=3, ready=1",
    ),
]


@pytest.mark.parametrize(("obj", "reason"), [c[1:] for c in PODCLIQUE_CASES], ids=[c[0] for c in PODCLIQUE_CASES])
def test_podclique_rule(obj: dict[str, Any], reason: str) -> None:
    readiness, _ = podclique_readiness(obj, "g-0-worker")
    assert (readiness.ready, readiness.reason) == (reason == "", reason)


def test_podclique_counts_and_not_found() -> None:
    obj = grove("PodClique", 2, observedGeneration=1, replicas=3, readyReplicas=1, updatedReplicas=2)
    assert podclique_readiness(obj, "g-0-w")[1] == ReplicaStatus("PodClique", ("g-0-w",), 3, 2, ready=1)
    assert podclique_readiness(None, "g-0-w") == (
        Readiness(False, NOT_FOUND),
        ReplicaStatus("PodClique", ("g-0-w",)),
    )
    assert NOT_FOUND == "resource not found"


PCSG_CASES = [
    (
        "all counts equal",
        grove("PodCliqueScalingGroup", 2, observedGeneration=1, replicas=2, availableReplicas=2, updatedReplicas=2),
        "",
    ),
    ("no replicas wanted", grove("PodCliqueScalingGroup", 0, observedGeneration=1), ""),
    ("observedGeneration nil", grove("PodCliqueScalingGroup", 1, availableReplicas=1), "observedGeneration is nil"),
    (
        "observedGeneration behind",
        grove("PodCliqueScalingGroup", 1, generation=5, observedGeneration=4),
        "spec not yet processed: generation=5, observedGeneration=4",
    ),
    (
        "ready replicas do not count",
        grove("PodCliqueScalingGroup", 1, observedGeneration=1, replicas=1, readyReplicas=1, updatedReplicas=1),
        "desired=1, available=0",
    ),
    (
        "not all updated",
        grove("PodCliqueScalingGroup", 2, observedGeneration=1, replicas=2, availableReplicas=2, updatedReplicas=0),
        "desired=2, updated=0",
    ),
    (
        "replicas differ",
        grove("PodCliqueScalingGroup", 1, observedGeneration=1, replicas=2, availableReplicas=1, updatedReplicas=1),
        "performing rolling update: desired=1, replicas=2",
    ),
    (
        "available is checked before updated",
        grove("PodCliqueScalingGroup", 2, observedGeneration=1, replicas=1, availableReplicas=0, updatedReplicas=0),
        "desired=2, available=0",
    ),
]


@pytest.mark.parametrize(("obj", "reason"), [c[1:] for c in PCSG_CASES], ids=[c[0] for c in PCSG_CASES])
def test_pcsg_rule(obj: dict[str, Any], reason: str) -> None:
    readiness, _ = pcsg_readiness(obj, "g-0-worker")
    assert (readiness.ready, readiness.reason) == (reason == "", reason)


def test_pcsg_counts_and_not_found() -> None:
    obj = grove("PodCliqueScalingGroup", 1, observedGeneration=1, replicas=1, availableReplicas=0, updatedReplicas=1)
    counts = pcsg_readiness(obj, "g-0-w")[1]
    assert counts == ReplicaStatus("PodCliqueScalingGroup", ("g-0-w",), 1, 1, available=0)
    assert counts.ready is None
    assert pcsg_readiness(None, "g-0-w")[0] == Readiness(False, "resource not found")


def deployment(desired: int | None = 2, paused: bool = False, generation: int = 1, **status: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"paused": paused} if paused else {}
    if desired is not None:
        spec["replicas"] = desired
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"generation": generation},
        "spec": spec,
        "status": status,
    }


AVAILABLE = [{"type": "Available", "status": "True"}]
HEALTHY = {
    "observedGeneration": 1,
    "replicas": 2,
    "updatedReplicas": 2,
    "availableReplicas": 2,
    "conditions": AVAILABLE,
}
DEPLOYMENT_CASES = [
    ("healthy", deployment(**HEALTHY), ""),
    ("scaled to zero", deployment(0), ""),
    ("paused beats zero", deployment(0, paused=True), "deployment is paused"),
    (
        "generation behind",
        deployment(generation=2, **HEALTHY),
        "spec not yet processed: generation=2, observedGeneration=1",
    ),
    ("not updated", deployment(**{**HEALTHY, "updatedReplicas": 1}), "desired=2, updated=1"),
    (
        "updated is checked before available",
        deployment(**{**HEALTHY, "updatedReplicas": 1, "availableReplicas": 0}),
        "desired=2, updated=1",
    ),
    ("not available", deployment(**{**HEALTHY, "availableReplicas": 1}), "desired=2, available=1"),
    ("more available than desired is fine", deployment(**{**HEALTHY, "availableReplicas": 3}), ""),
    (
        "old pods still there",
        deployment(**{**HEALTHY, "replicas": 3}),
        "performing rolling update: desired=2, replicas=3",
    ),
    ("condition missing", deployment(**{**HEALTHY, "conditions": []}), "condition Available is not True"),
    (
        "condition False",
        deployment(**{**HEALTHY, "conditions": [{"type": "Available", "status": "False"}]}),
        "condition Available is not True",
    ),
    ("replicas default to 1", deployment(None, **{**HEALTHY, "replicas": 1}), ""),
    ("replicas default to 1, none available", deployment(None, observedGeneration=1), "desired=1, updated=0"),
]


@pytest.mark.parametrize(("obj", "reason"), [c[1:] for c in DEPLOYMENT_CASES], ids=[c[0] for c in DEPLOYMENT_CASES])
def test_deployment_rule(obj: dict[str, Any], reason: str) -> None:
    readiness = deployment_readiness(obj)
    assert (readiness.ready, readiness.reason) == (reason == "", reason)


def test_deployment_counts_and_not_found() -> None:
    status = {**HEALTHY, "readyReplicas": 1}
    assert deployment_replica_status(deployment(**status), "d") == ReplicaStatus("Deployment", ("d",), 2, 2, 1, 2)
    assert deployment_readiness(None) == Readiness(False, "resource not found")


SIMPLE = [
    ("v1", "Service"),
    ("v1", "ServiceAccount"),
    ("v1", "ConfigMap"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
]


@pytest.mark.parametrize(("api_version", "kind"), SIMPLE)
def test_simple_kinds_are_ready_once_observed(api_version: str, kind: str) -> None:
    desired = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "a"}}
    assert composed_readiness(desired, None) == Readiness(False, "resource not found")
    assert composed_readiness(desired, {**desired, "status": {}}) == Readiness(True)


def test_composed_deployments_use_the_deployment_rule() -> None:
    desired = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}
    assert composed_readiness(desired, deployment(observedGeneration=1)) == updating("desired=2, updated=0")
    assert composed_readiness(desired, deployment(**HEALTHY)) == Readiness(True)


def test_graph_ready_condition_lists_what_is_not_ready_sorted_by_name() -> None:
    assert graph_ready_condition([]) == Condition(
        "DynamoGraphReady", "True", "all_resources_are_ready", "All resources are ready"
    )
    cond = graph_ready_condition([("b-svc", "resource not found"), ("a", "podclique/a-0-x: desired=2, ready=1")])
    assert cond == Condition(
        "DynamoGraphReady",
        "False",
        "some_resources_are_not_ready",
        "Resources not ready: a: podclique/a-0-x: desired=2, ready=1; b-svc: resource not found",
    )


V1ALPHA1 = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "g", "namespace": "ns"},
    "spec": {
        "services": {
            "Worker": {"componentType": "worker", "replicas": 2, "multinode": {"nodeCount": 2}},
            "Frontend": {"componentType": "frontend"},
        }
    },
}


def test_component_statuses_pick_podclique_or_pcsg_by_name_and_namespace() -> None:
    graph = graph_from_xr(claim_to_xr(V1ALPHA1))
    frontend = grove("PodClique", 1, observedGeneration=1, replicas=1, readyReplicas=1, updatedReplicas=1)
    frontend["metadata"]["name"] = "g-0-frontend"
    elsewhere = {**frontend, "metadata": {**frontend["metadata"], "namespace": "other"}}
    worker = grove("PodCliqueScalingGroup", 2, observedGeneration=1, replicas=2, availableReplicas=1, updatedReplicas=2)
    worker["metadata"]["name"] = "g-0-worker"
    (f, w) = component_statuses(graph, "g", [frontend], [worker])
    assert (f.name, f.resource_name, f.ref, f.readiness) == (
        "Frontend",
        "g-0-frontend",
        "podclique/g-0-frontend",
        Readiness(True),
    )
    assert (w.name, w.ref, w.readiness) == ("Worker", "pcsg/g-0-worker", Readiness(False, "desired=2, available=1"))
    # A PodClique of the same name in another namespace is not this graph's.
    (f2, _) = component_statuses(graph, "g", [elsewhere], [worker])
    assert f2.readiness == Readiness(False, "resource not found")
    # The scaling group is not looked for among PodCliques.
    (_, w2) = component_statuses(graph, "g", [frontend, {**worker, "kind": "PodClique"}], [])
    assert w2.readiness == Readiness(False, "resource not found")

    assert podcliqueset_readiness([f, w]) == Readiness(False, "pcsg/g-0-worker: desired=2, available=1")
    assert podcliqueset_readiness([f]) == Readiness(True)
    assert podcliqueset_readiness([f2, w]) == Readiness(
        False, "podclique/g-0-frontend: resource not found; pcsg/g-0-worker: desired=2, available=1"
    )


def test_xr_status_shapes() -> None:
    graph = graph_from_xr(claim_to_xr(V1ALPHA1))
    statuses = component_statuses(graph, "g", [], [])
    assert xr_status(graph, False, statuses, 4) == {
        "state": "pending",
        "observedGeneration": 4,
        "services": {
            "Frontend": {
                "componentKind": "PodClique",
                "componentName": "g-0-frontend",
                "componentNames": ["g-0-frontend"],
                "replicas": 0,
                "updatedReplicas": 0,
            },
            "Worker": {
                "componentKind": "PodCliqueScalingGroup",
                "componentName": "g-0-worker",
                "componentNames": ["g-0-worker"],
                "replicas": 0,
                "updatedReplicas": 0,
            },
        },
    }
    v1beta1 = {
        **V1ALPHA1,
        "apiVersion": "nvidia.com/v1beta1",
        "spec": {"components": [{"name": "Frontend", "type": "frontend"}]},
    }
    graph_b = graph_from_xr(claim_to_xr(v1beta1))
    pclq = grove("PodClique", 1, observedGeneration=1, replicas=1, readyReplicas=1, updatedReplicas=1)
    pclq["metadata"]["name"] = "g-0-frontend"
    assert xr_status(graph_b, True, component_statuses(graph_b, "g", [pclq], []), None) == {
        "state": "successful",
        "components": {
            "Frontend": {
                "componentKind": "PodClique",
                "componentNames": ["g-0-frontend"],
                "replicas": 1,
                "updatedReplicas": 1,
                "readyReplicas": 1,
            }
        },
    }
    assert xr_status(graph_b, True, (), None) == {"state": "successful"}


def test_grove_requirements_select_by_part_of_in_the_namespace() -> None:
    labels = {"app.kubernetes.io/part-of": "g"}
    assert grove_requirements("g", "ns") == {
        "grove-podcliques": ResourceSelector("grove.io/v1alpha1", "PodClique", match_labels=labels, namespace="ns"),
        "grove-podcliquescalinggroups": ResourceSelector(
            "grove.io/v1alpha1", "PodCliqueScalingGroup", match_labels=labels, namespace="ns"
        ),
    }


def pcs_with(*conditions: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "PodCliqueSet", "status": {"conditions": list(conditions)}}


TOPOLOGY_CASES = [
    (
        "no condition yet",
        pcs_with({"type": "MinAvailableBreached", "status": "False"}),
        ("Unknown", "TopologyConditionPending", "Waiting for topology condition from the scheduling framework"),
    ),
    (
        "levels unavailable",
        pcs_with(
            {
                "type": "TopologyLevelsUnavailable",
                "status": "True",
                "reason": "ClusterTopologyLevelsUnavailable",
                "message": "rack gone",
            }
        ),
        ("False", "TopologyLevelsUnavailable", "rack gone"),
    ),
    (
        "topology not found",
        pcs_with(
            {
                "type": "TopologyLevelsUnavailable",
                "status": "True",
                "reason": "ClusterTopologyNotFound",
                "message": "no ct",
            }
        ),
        ("False", "TopologyDefinitionNotFound", "no ct"),
    ),
    (
        "all available",
        pcs_with(
            {"type": "TopologyLevelsUnavailable", "status": "False", "reason": "AllClusterTopologyLevelsAvailable"}
        ),
        ("True", "AllTopologyLevelsAvailable", "All required topology levels are available in the cluster topology"),
    ),
]


@pytest.mark.parametrize(("pcs", "want"), [c[1:] for c in TOPOLOGY_CASES], ids=[c[0] for c in TOPOLOGY_CASES])
def test_topology_condition(pcs: dict[str, Any], want: tuple[str, str, str]) -> None:
    assert topology_condition(pcs) == Condition("TopologyLevelsAvailable", *want)


def test_topology_warning_once_per_change() -> None:
    cond = Condition("TopologyLevelsAvailable", "False", "TopologyLevelsUnavailable", "rack gone")
    warning = topology_warning(cond, [])
    assert warning is not None
    assert (warning.severity, warning.reason) == ("warning", "TopologyLevelsUnavailable")
    assert warning.message == "Topology constraints no longer enforced: rack gone"
    same = {
        "type": "TopologyLevelsAvailable",
        "status": "False",
        "reason": "TopologyLevelsUnavailable",
        "message": "rack gone",
    }
    assert topology_warning(cond, [same]) is None
    assert topology_warning(cond, [{**same, "message": "zone gone"}]) is not None
    assert topology_warning(Condition("TopologyLevelsAvailable", "True", "AllTopologyLevelsAvailable"), []) is None


def test_has_topology_constraint_at_any_level() -> None:
    plain = claim_to_xr(V1ALPHA1)
    assert not has_topology_constraint(graph_from_xr(plain))
    service_level = claim_to_xr(V1ALPHA1)
    service_level["spec"]["services"]["Frontend"]["topologyConstraint"] = {"packDomain": "rack"}
    assert has_topology_constraint(graph_from_xr(service_level))
    profile_only = claim_to_xr(V1ALPHA1)
    profile_only["spec"]["topologyConstraint"] = {"topologyProfile": "t"}
    assert has_topology_constraint(graph_from_xr(profile_only))


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("15s", 15), ("0", 0), ("1m30s", 90), ("1.5h", 5400), ("500ms", 0.5), ("2h0m1s", 7201), ("100us", 1e-4)],
)
def test_durations(text: str, seconds: float) -> None:
    assert duration_seconds(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "15", "-1s", "1d", "s", "1.s", "15 s", "1m 30s"])
def test_not_durations(text: str) -> None:
    assert duration_seconds(text) is None


def test_input_defaults_and_rounding() -> None:
    assert parse_status_input({}) == parse_status_input({"pendingTTL": "15s", "readyTTL": "10m"})
    settings = parse_status_input({"pendingTTL": "500ms", "readyTTL": "2m"})
    assert (settings.pending_ttl_seconds, settings.ready_ttl_seconds) == (1, 120)


@pytest.mark.parametrize(("field", "value"), [("pendingTTL", "soon"), ("readyTTL", 60), ("readyTTL", None)])
def test_bad_input_names_the_field(field: str, value: Any) -> None:
    with pytest.raises(InputError, match=rf"^input\.{field}: .* is not a duration"):
        parse_status_input({field: value})


# Honest readiness (docs/kinds/dgd.md): beyond upstream's rules.
UPDATING_CLIQUE = dict(observedGeneration=1, replicas=2, readyReplicas=2, updatedReplicas=1)


def test_a_lagging_podclique_is_updating_and_a_late_one_stalled() -> None:
    obj = grove("PodClique", 2, **UPDATING_CLIQUE, updateProgress={"updateStartedAt": "2026-01-15T10:00:00Z"})
    lag = podclique_readiness(obj, "g-0-w")[0]
    assert (lag.ready, lag.rollout, lag.reason) == (False, "updating", "desired=2, updated=1")
    late = podclique_readiness(obj, "g-0-w", now=datetime(2026, 1, 15, 10, 10, 1, tzinfo=UTC))[0]
    assert (late.ready, late.rollout) == (False, "stalled")
    assert (
        late.progress
        == "desired=2, updated=1; update started at 2026-01-15T10:00:00Z not done 601s later (deadline 600s)"
    )
    on_time = podclique_readiness(obj, "g-0-w", now=datetime(2026, 1, 15, 10, 10, tzinfo=UTC))[0]
    assert on_time.rollout == "updating"


def test_grove_reporting_its_own_deadline_is_a_stall() -> None:
    deadline = {"type": "UpdateInProgress", "status": "False", "reason": "ProgressDeadlineExceeded", "message": "m"}
    obj = grove("PodCliqueScalingGroup", 2, observedGeneration=1, replicas=2, availableReplicas=2,
                updatedReplicas=0, conditions=[deadline])  # fmt: skip
    verdict = pcsg_readiness(obj, "g-0-w")[0]
    assert verdict.rollout == "stalled"
    assert verdict.reason == (
        "desired=2, updated=0; rollout stalled: condition UpdateInProgress reports ProgressDeadlineExceeded: m"
    )


def test_an_idle_object_is_ready_only_when_the_template_wants_nothing_too() -> None:
    idle = grove("PodClique", 0, observedGeneration=1)
    assert podclique_readiness(idle, "g-0-w", template_replicas=0)[0] == Readiness(True)  # upstream: scaled to zero
    verdict = podclique_readiness(idle, "g-0-w", template_replicas=2)[0]
    assert (verdict.ready, verdict.reason) == (False, "desired=2 in the PodCliqueSet, PodClique wants 0")


def test_the_podcliqueset_itself_must_have_rolled_out() -> None:
    pcs = {"metadata": {"generation": 3}, "status": {"observedGeneration": 2, "replicas": 1, "updatedReplicas": 1}}
    assert podcliqueset_rollout(pcs).reason == "spec not yet processed: generation=3, observedGeneration=2"
    assert podcliqueset_rollout({"metadata": {"generation": 1}, "status": {}}).ready  # not written yet: cliques decide
    lag = {"metadata": {"generation": 1}, "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 0}}
    assert podcliqueset_rollout(lag).reason == "replicas=1, updatedReplicas=0"


DEADLINE = {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
            "message": 'ReplicaSet "d-1" has timed out progressing.'}  # fmt: skip


def test_a_deployment_past_its_progress_deadline_is_stalled_whatever_its_counts() -> None:
    verdict = deployment_readiness(deployment(**{**HEALTHY, "conditions": [*AVAILABLE, DEADLINE]}))
    assert (verdict.ready, verdict.rollout) == (False, "stalled")
    assert verdict.reason == (
        'desired=2, updated=2, available=2; rollout stalled: ReplicaSet "d-1" has timed out progressing.'
    )


def test_a_deployment_not_scaled_up_yet_is_not_ready() -> None:
    assert deployment_readiness(deployment(0), want=2) == updating("desired=2, spec.replicas=0")
    assert deployment_readiness(deployment(0), want=0) == Readiness(True)


def dcd(**status: Any) -> dict[str, Any]:
    return {"kind": "XDynamoComponentDeployment", "metadata": {"generation": 2}, "spec": {"replicas": 2},
            "status": status}  # fmt: skip


AVAILABLE_TRUE = {"type": "Available", "status": "True"}


@pytest.mark.parametrize(
    ("obj", "ready", "rollout", "reason"),
    [
        (dcd(observedGeneration=2, conditions=[AVAILABLE_TRUE], service={"readyReplicas": 2}), True, "complete", ""),
        (dcd(observedGeneration=1, conditions=[AVAILABLE_TRUE]), False, "updating",
         "spec not yet processed: generation=2, observedGeneration=1"),
        (dcd(conditions=[AVAILABLE_TRUE], service={"replicas": 2, "readyReplicas": 0, "availableReplicas": 0}),
         False, "complete", "desired=2, none ready"),
        (dcd(conditions=[{"type": "Available", "status": "False", "message": "why"},
                         {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                          "message": "stuck"}]), False, "stalled", "why"),
        (dcd(conditions=[AVAILABLE_TRUE, {"type": "Progressing", "status": "True", "reason": "RolloutInProgress",
                                          "message": "lag"}]), False, "updating", "lag"),
        # Crossplane's mid-reconcile status write: the new observedGeneration beside the old conditions
        (dcd(observedGeneration=2, conditions=[AVAILABLE_TRUE, {"type": "Synced", "status": "True",
                                                                "observedGeneration": 1}],
             service={"readyReplicas": 2}), False, "updating",
         "conditions not yet written for generation 2 (Synced at 1)"),
        (dcd(observedGeneration=2, conditions=[AVAILABLE_TRUE, {"type": "Synced", "status": "True",
                                                                "observedGeneration": 2}],
             service={"readyReplicas": 2}), True, "complete", ""),
    ],
    ids=["available", "stale", "nothing-running", "stalled", "updating", "conditions-behind", "conditions-current"],
)  # fmt: skip
def test_dcd_rule(obj: dict[str, Any], ready: bool, rollout: str, reason: str) -> None:
    verdict = dcd_readiness(obj)
    assert (verdict.ready, verdict.rollout, verdict.reason) == (ready, rollout, reason)


def test_progressing_condition() -> None:
    assert progressing_condition([("A", Readiness(True))]) == Condition(
        "Progressing", "True", "RolloutComplete", "Every component's replicas are updated"
    )
    lag = progressing_condition([("B", updating("desired=2, updated=1")), ("A", Readiness(False, "x"))])
    assert lag == Condition(
        "Progressing", "True", "RolloutInProgress", "Updated replicas lag desired: B: desired=2, updated=1"
    )
    stall = progressing_condition([("B", updating("u")), ("A", stalled("desired=2, updated=1", "late"))])
    assert stall == Condition(
        "Progressing", "False", "ProgressDeadlineExceeded", "Rollout stalled: A: desired=2, updated=1; late"
    )


def test_a_component_scaled_to_zero_is_ready_as_upstream() -> None:
    """Explicit replicas: 0: the component is ready, as upstream (the graph as a whole is not when nothing at all
    runs: tests/test_status_step.py)."""
    xr = claim_to_xr(
        {
            "apiVersion": "nvidia.com/v1alpha1",
            "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g", "namespace": "ns"},
            "spec": {"services": {"Frontend": {"componentType": "frontend", "replicas": 0}}},
        }
    )
    graph = graph_from_xr(xr)
    idle = {**grove("PodClique", 0, observedGeneration=1), "metadata": {"name": "g-0-frontend", "namespace": "ns",
                                                                       "generation": 1}}  # fmt: skip
    pcs = {"spec": {"template": {"cliques": [{"name": "frontend", "spec": {"replicas": 0}}]}}}
    (status,) = component_statuses(graph, "g", [idle], [], pcs)
    assert status.readiness == Readiness(True)
