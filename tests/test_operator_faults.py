"""The upstream operator under the faults that apply to it, for comparison with the package's
(tests/test_crossplane_faults.py; the harness is tests/harness/fault_harness.py): three graphs of
examples/dgd/vllm-agg.yaml, Grove played so they are Ready, then the operator's manager or the API server restarted
while they run. Afterwards every object each graph's DGD controls has the UID it had, no pod template or Service
spec changed, and every graph is Ready again; meanwhile every graph stayed Ready and ``successful``.

One stack for the module (a control plane of its own: the API server is restarted, and the operator's CRDs have the
package's names), the operator run as its chart runs it (tests/harness/operator_stack.py: root and ``unshare -m``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.controlplane import start_control_plane
from harness.fault_harness import Outcome, fault_on_graphs, run_fault
from harness.operator_stack import OperatorStack, require_operator, start_operator

GRAPHS = 3


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorStack]:
    require_operator()  # skip (fail under CI) naming what is missing, before a control plane is started
    cp = start_control_plane(tmp_path_factory.mktemp("operator-faults"), audit=False)
    try:
        yield start_operator(cp)
    finally:
        cp.stop()


def _stayed_ready(outcome: Outcome) -> None:
    """Every graph read Ready and ``successful`` whenever the API server answered: the operator writes nothing to a
    graph while it is away, and once back finds nothing to change."""
    assert outcome.sampler.sightings, "the sampler read no graph"
    assert all(s.ready == "True" for s in outcome.sampler.sightings), "a graph left Ready during the fault"
    assert {s.state for s in outcome.sampler.sightings} == {"successful"}


def _edits_refused_by_its_webhook(outcome: Outcome) -> None:
    """The annotation written while the manager was down was refused: the DGD's admission webhooks are served by the
    manager, and the chart's failurePolicy is Fail."""
    assert len(outcome.refused) == GRAPHS, outcome.refused
    assert all("failed calling webhook" in r for r in outcome.refused), outcome.refused


def test_the_operator_restarted_loses_nothing(stack: OperatorStack) -> None:
    outcome = fault_on_graphs(stack, "operator-restart", GRAPHS)
    _stayed_ready(outcome)
    _edits_refused_by_its_webhook(outcome)


def test_the_apiserver_restarted_loses_nothing(stack: OperatorStack) -> None:
    outcome = fault_on_graphs(stack, "apiserver-restart", GRAPHS)
    assert outcome.sampler.failed_reads > 0, "the API server answered throughout: was it restarted?"
    _stayed_ready(outcome)


def test_a_function_fault_is_refused_for_the_operator(stack: OperatorStack) -> None:
    with pytest.raises(ValueError, match="does not apply"):
        run_fault(stack, "function-kill", "function-kill", [])
