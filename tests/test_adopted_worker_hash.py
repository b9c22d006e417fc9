"""A graph that moved over from the upstream operator keeps the operator's worker hash until its workers change."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from fixtures.corpus import example_claim, load_claim
from functions.contract import StepRequest
from functions.kinds.graph.adopted_worker_hash import STATUS_FIELD, operator_worker_hash, resolve_worker_hash
from functions.kinds.graph.graph_render_step import render_graph_deployment
from functions.tooling.manifests import claim_to_xr

V2 = "nvidia.com/current-worker-hash-v2"
V1 = "nvidia.com/current-worker-hash"


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        ({V2: "5e78e1c0"}, "5e78e1c0"),
        ({V1: "0123abcd"}, "0123abcd"),
        ({V2: "5e78e1c0", V1: "0123abcd"}, "5e78e1c0"),  # the v2 record is the one the operator runs
        ({V1: "legacy"}, None),  # the operator's sentinel for graphs from before rolling updates
        ({V2: "5E78E1C0"}, None),
        ({}, None),
    ],
)
def test_the_operators_record_of_its_worker_generation(annotations: dict[str, str], expected: str | None) -> None:
    assert operator_worker_hash(annotations) == expected


@pytest.mark.parametrize(
    ("ours", "annotations", "status", "expected"),
    [
        # a graph of our own: our hash, nothing kept
        ("aaaaaaaa", {}, {}, ("aaaaaaaa", None)),
        # first sight of a graph from the operator: its hash, kept for the spec as it came
        ("aaaaaaaa", {V2: "5e78e1c0"}, {}, ("5e78e1c0", {"hash": "5e78e1c0", "for": "aaaaaaaa"})),
        # later reconciles of the same spec keep it
        ("aaaaaaaa", {V2: "5e78e1c0"}, {STATUS_FIELD: {"hash": "5e78e1c0", "for": "aaaaaaaa"}},
         ("5e78e1c0", {"hash": "5e78e1c0", "for": "aaaaaaaa"})),
        # the workers changed: ours from now on, and the record stays so the stale annotation is never taken again
        ("bbbbbbbb", {V2: "5e78e1c0"}, {STATUS_FIELD: {"hash": "5e78e1c0", "for": "aaaaaaaa"}},
         ("bbbbbbbb", {"hash": "5e78e1c0", "for": "aaaaaaaa"})),
        # changed back to the spec it came with: named as it was then
        ("aaaaaaaa", {}, {STATUS_FIELD: {"hash": "5e78e1c0", "for": "aaaaaaaa"}},
         ("5e78e1c0", {"hash": "5e78e1c0", "for": "aaaaaaaa"})),
        # the operator's record equals ours: nothing to keep
        ("5e78e1c0", {V2: "5e78e1c0"}, {}, ("5e78e1c0", None)),
        # a malformed record in the status is ignored
        ("aaaaaaaa", {}, {STATUS_FIELD: "5e78e1c0"}, ("aaaaaaaa", None)),
    ],
)  # fmt: skip
def test_the_hash_a_graph_renders_with(
    ours: str, annotations: dict[str, str], status: dict[str, Any], expected: tuple[str, Any]
) -> None:
    assert resolve_worker_hash(ours, annotations, status) == expected


# --- the render step ------------------------------------------------------------------------------------------


def _render(claim: dict[str, Any], status: dict[str, Any] | None = None) -> Any:
    xr = claim_to_xr(claim)
    if status:
        xr["status"] = status
    rsp = render_graph_deployment(StepRequest(input={}, observed_composite=xr))
    assert not rsp.fatal, rsp.results
    return rsp


def _hashes(rsp: Any) -> set[str]:
    """Every worker hash the rendered objects carry (labels and the worker suffix env)."""
    text = json.dumps({k: v.resource for k, v in rsp.desired_resources.items()})
    return set(re.findall(r'"nvidia.com/dynamo-worker-hash": "([0-9a-f]{8})"', text)) | set(
        re.findall(r'"DYN_NAMESPACE_WORKER_SUFFIX", "value": "([0-9a-f]{8})"', text)
    )


@pytest.mark.parametrize("pathway", ["grove", "components"])
def test_a_graph_from_the_operator_renders_with_its_hash_until_its_workers_change(pathway: str) -> None:
    claim = load_claim(example_claim("vllm-disagg"))
    if pathway == "components":
        claim["metadata"].setdefault("annotations", {})["nvidia.com/enable-grove"] = "false"
    ours = _hashes(_render(claim))
    assert len(ours) == 1
    claim["metadata"].setdefault("annotations", {})[V2] = "5e78e1c0"
    moved = _render(claim)
    assert _hashes(moved) == {"5e78e1c0"}
    record = moved.composite_status[STATUS_FIELD]
    assert record == {"hash": "5e78e1c0", "for": ours.pop()}
    # the next reconcile reads the record from the status; a change to a worker moves it to our hash
    assert _hashes(_render(claim, {STATUS_FIELD: record})) == {"5e78e1c0"}
    changed = copy.deepcopy(claim)
    workers = changed["spec"].get("services") or {}
    next(s for s in workers.values() if s.get("componentType") == "worker" or s.get("subComponentType"))["envs"] = [
        {"name": "CHANGED", "value": "1"}
    ]
    again = _render(changed, {STATUS_FIELD: record})
    assert _hashes(again) and "5e78e1c0" not in _hashes(again)
    assert again.composite_status[STATUS_FIELD] == record
