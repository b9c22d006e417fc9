"""scripts/bench-cluster.py's bookkeeping of a round: when a graph counts as composed and as Ready.

The seconds it reports are taken when the watch event arrives, not when its main loop next looks (that loop
is busy playing Grove for other graphs). These tests feed the round's state the events a watch delivers.
"""

from __future__ import annotations

import importlib.util
import time
from types import ModuleType
from typing import Any

import pytest

from server import REPO


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
