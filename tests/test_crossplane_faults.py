"""Faults on the real stack, with nothing lost (tests/harness/fault_harness.py): three graphs of
examples/dgd/vllm-agg.yaml, Grove played so they are Ready, then one part broken while they run and brought back.
Afterwards every composed object has the UID it had, no pod template or Service spec changed, and every graph is
Ready and Synced again; while the fault every graph stayed Ready, and any Synced=False named the function.

One stack for the module (a control plane of its own: the API server is restarted), each part restarted in place.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.controlplane import start_control_plane
from harness.crossplane_core import Crossplane, start_crossplane
from harness.fault_harness import Outcome, apply_graphs, make_ready, run_fault

GRAPHS = 3


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Crossplane]:
    cp = start_control_plane(tmp_path_factory.mktemp("faults"), audit=False)
    try:
        yield start_crossplane(cp)
    finally:
        cp.stop()


def _fault(stack: Crossplane, fault: str) -> Outcome:
    namespace = fault
    names = apply_graphs(stack.cp, namespace, GRAPHS)
    make_ready(stack.cp, namespace, names, seconds=90)
    outcome = run_fault(stack, fault, namespace, names, recover=90)
    assert outcome.problems == [], f"{fault} lost or changed: {outcome.problems}; {stack.where()}"
    return outcome


def _told_the_truth(outcome: Outcome) -> None:
    """Every graph Ready the whole time (its pods were not touched), and Synced=False, if seen, naming the function.
    Crossplane calls functions with gRPC's wait-for-ready, so a reconcile waits for a function that is down or
    failing until its 2-minute reconcile timeout: a shorter fault shows as a reconcile that takes longer, not as
    Synced=False (scripts/faults.py --down 140 shows the Synced=False; docs/reliability.md)."""
    assert outcome.sampler.sightings, "the sampler read no graph"
    assert all(s.ready == "True" for s in outcome.sampler.sightings), "a graph left Ready during the fault"
    seen = outcome.synced_false()
    assert all("cannot run function" in s.message.lower() for s in seen), {s.message for s in seen}


def test_the_function_killed_and_back_after_10s_loses_nothing(stack: Crossplane) -> None:
    _told_the_truth(_fault(stack, "function-kill"))


def test_the_function_answering_errors_for_30s_loses_nothing(stack: Crossplane) -> None:
    _told_the_truth(_fault(stack, "function-errors"))


def test_the_function_hanging_for_30s_loses_nothing(stack: Crossplane) -> None:
    _told_the_truth(_fault(stack, "function-hang"))


def test_crossplane_restarted_loses_nothing(stack: Crossplane) -> None:
    _told_the_truth(_fault(stack, "crossplane-restart"))


def test_the_apiserver_restarted_loses_nothing(stack: Crossplane) -> None:
    outcome = _fault(stack, "apiserver-restart")
    assert outcome.sampler.failed_reads > 0, "the API server answered throughout: was it restarted?"
    _told_the_truth(outcome)
