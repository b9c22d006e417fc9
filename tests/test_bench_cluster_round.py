"""scripts/bench-cluster.py's bookkeeping of a round: when a graph counts as composed and as Ready, for the
packages and for the upstream operator (``tests/harness/bench_controllers.py``), and which processes are the controller.

The seconds it reports are taken when the watch event arrives, not when its main loop next looks (that loop
is busy playing Grove for other graphs). These tests feed the round's state the events a watch delivers.
"""

from __future__ import annotations

import importlib.util
import time
from types import ModuleType
from typing import Any

import pytest

from fixtures.tooling import REPO
from harness.bench_controllers import controller_processes, crd_writes, owner_graph, ready


@pytest.fixture(scope="module")
def bench_cluster() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_cluster", REPO / "scripts" / "bench-cluster.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def composed_object(name: str, graph: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"crossplane.io/composite": graph}}}


def graph_object(name: str, ready: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "status": {"conditions": [{"type": "Ready", "status": ready}]}}


def six_objects(bench_cluster: ModuleType) -> list[tuple[str, str]]:
    """(watched collection, name) of vllm-agg's six objects, in the order the watches may deliver them."""
    pcs, services, sa, role, binding = bench_cluster.KINDS
    return [(pcs, "pcs"), (services, "frontend"), (services, "worker"), (sa, "sa"), (role, "role"), (binding, "rb")]


def deliver(state: Any, objects: list[tuple[str, str]], graph: str) -> None:
    for kind, name in objects:
        state.composed_event(kind)("ADDED", composed_object(name, graph))


def test_a_graph_is_composed_when_the_event_of_its_sixth_object_arrives(bench_cluster: ModuleType) -> None:
    state = bench_cluster.RoundState()
    objects = six_objects(bench_cluster)
    services = state.composed_event(bench_cluster.KINDS[1])
    services("ADDED", composed_object("frontend", "g"))
    services("MODIFIED", composed_object("frontend", "g"))  # a second version of one object is not a second object
    deliver(state, objects[:5], "g")
    assert state.composed_at == {}

    before = time.monotonic()
    deliver(state, objects[5:], "g")
    after = time.monotonic()
    assert set(state.composed_at) == {"g"}
    assert before <= state.composed_at["g"] <= after

    first = state.composed_at["g"]
    services("MODIFIED", composed_object("frontend", "g"))
    assert state.composed_at["g"] == first  # later versions do not move it


def test_objects_of_another_graph_or_without_its_label_do_not_count(bench_cluster: ModuleType) -> None:
    state = bench_cluster.RoundState()
    deliver(state, six_objects(bench_cluster), "other")
    on_event = state.composed_event(bench_cluster.KINDS[0])
    on_event("ADDED", {"metadata": {"name": "unlabelled"}})
    on_event("DELETED", composed_object("gone", "g"))
    assert set(state.composed_at) == {"other"}


def test_a_graph_is_ready_at_the_first_event_that_shows_ready_true(bench_cluster: ModuleType) -> None:
    state = bench_cluster.RoundState()
    state.graph_event("ADDED", graph_object("g", "False"))
    assert state.ready_at == {}

    state.graph_event("MODIFIED", graph_object("g", "True"))
    first = state.ready_at["g"]
    state.graph_event("MODIFIED", graph_object("g", "True"))
    assert state.ready_at == {"g": first}
    assert state.versions["dynamographdeployments"] == 3


# --- the upstream operator's graphs (--package operator) and the controller's processes -------------------------


def owned(
    name: str, graph: str, kind: str = "DynamoGraphDeployment", api: str = "nvidia.com/v1beta1", **more: Any
) -> dict[str, Any]:
    """An object as the operator writes it: no graph label, its DGD as controller owner reference."""
    ref = {"apiVersion": api, "kind": kind, "name": graph, "uid": "u", "controller": True, **more}
    return {"metadata": {"name": name, "ownerReferences": [ref]}}


@pytest.mark.parametrize(
    ("obj", "graph"),
    [
        (owned("g-frontend", "g"), "g"),
        (owned("g-frontend", "g", api="nvidia.com/v1alpha1"), "g"),
        (owned("g-frontend", "g", controller=False), None),  # an owner, not the controller
        (owned("g-0-frontend", "g", kind="PodCliqueSet", api="grove.io/v1alpha1"), None),  # a PodClique's owner
        (owned("g-frontend", "g", kind="XDynamoGraphDeployment", api="nvidia.com/v1alpha1"), None),
        ({"metadata": {"name": "planner-serviceaccount"}}, None),  # one per namespace, no owner
        ({"metadata": {"name": "x", "ownerReferences": None}}, None),
    ],
)
def test_the_graph_of_an_operators_object_is_its_controlling_dgd(obj: dict[str, Any], graph: str | None) -> None:
    assert owner_graph(obj) == graph


def test_an_operators_graph_is_composed_when_its_sixth_owned_object_arrives(bench_cluster: ModuleType) -> None:
    state = bench_cluster.RoundState()
    pcs, services, sa, role, binding = bench_cluster.KINDS
    objects = [
        (pcs, "g"),
        (services, "g-frontend"),
        (services, "g-vllmworker"),
        (sa, "g-k8s-service-discovery"),
        (role, "g-k8s-service-discovery-role"),
    ]
    for kind, name in objects:
        state.composed_event(kind)("ADDED", owned(name, "g"))
    state.composed_event(sa)("ADDED", {"metadata": {"name": "planner-serviceaccount"}})  # no graph's
    state.composed_event(binding)("ADDED", owned("planner-serviceaccount-binding", "g", controller=False))
    assert state.composed_at == {}

    state.composed_event(binding)("ADDED", owned("g-k8s-service-discovery-binding", "g"))
    assert set(state.composed_at) == {"g"}


NOT_READY = {"type": "Ready", "status": "False", "reason": "some_resources_are_not_ready"}
READY = {"type": "Ready", "status": "True", "reason": "all_resources_are_ready"}


@pytest.mark.parametrize(
    ("status", "is_ready"),
    [
        ({"conditions": [NOT_READY], "state": "pending"}, False),  # the operator's, before the played Grove status
        ({"conditions": [READY], "state": "successful"}, True),  # and after it
        ({"state": "successful"}, False),  # its state alone is not the condition
        ({"conditions": [{"type": "Synced", "status": "True"}, READY]}, True),  # the package's
        ({"conditions": [{"type": "Available", "status": "True"}]}, False),
        ({}, False),
        (None, False),
    ],
)
def test_a_graph_is_ready_by_its_ready_condition(status: dict[str, Any] | None, is_ready: bool) -> None:
    assert ready({"metadata": {"name": "g"}, "status": status}) is is_ready


RUNC = {"kube-apiserver": 1, "crossplane": 2, "function-dynamo": 3}


@pytest.mark.parametrize(
    ("pids", "names", "parents", "want"),
    [
        # Ours, the function as a container: its server and what it starts are below `runc run`.
        (RUNC, {3: "runc"}, {4: 3, 5: 4, 6: 1, 3: 0}, {"crossplane": [2], "function": [4, 5]}),
        # Ours, the function as the checkout's process (not root).
        (RUNC, {3: "python3"}, {4: 3}, {"crossplane": [2], "function": [3]}),
        ({"kube-apiserver": 1, "dynamo-operator": 7}, {7: "dynamo-operator"}, {}, {"manager": [7]}),
        ({"kube-apiserver": 1, "etcd": 2}, {}, {}, {}),  # upstream's CRDs alone: no controller
    ],
)
def test_the_controller_side_is_crossplane_and_the_function_or_the_operators_manager(
    pids: dict[str, int], names: dict[int, str], parents: dict[int, int], want: dict[str, list[int]]
) -> None:
    assert controller_processes(pids, names, parents) == want


@pytest.mark.parametrize(
    ("requests", "writes"),
    [
        # The operator's start-up tail: its CA injection (PUT) and storage-version migrator (PATCH .../status).
        (
            {
                "PATCH customresourcedefinitions": 3,
                "PUT customresourcedefinitions": 4,
                "GET customresourcedefinitions": 9,
            },
            7,
        ),
        ({"PATCH customresourcedefinitions/status": 2, "PUT customresourcedefinitions 409": 1}, 3),
        ({"WATCH customresourcedefinitions": 5, "LIST customresourcedefinitions": 1}, 0),
        ({"PUT leases": 40, "POST events": 19, "PATCH customresourcedefinitionsx": 1}, 0),  # what goes on: not CRDs
        ({}, 0),
    ],
)
def test_the_operators_start_up_tail_is_counted_by_its_crd_writes(requests: dict[str, int], writes: int) -> None:
    assert crd_writes(requests) == writes
