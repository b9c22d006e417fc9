"""The DGD's operator origin version: decided once, kept in the XR status, stamped where upstream stamps it, and
read by the vLLM multiprocessing gate (docs/upstream/at-head.md §3, issue 12 Deliver 2)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fixtures.rendering import render_xr, rendered
from functions.api.normalise import graph_from_xr
from functions.contract import StepRequest
from functions.kinds.graph.graph_render_step import render_graph_deployment
from functions.kinds.graph.origin import (
    NO_ORIGIN,
    RENDERED_OPERATOR_VERSION,
    STATUS_FIELD,
    resolve_origin_version,
    with_origin_version,
)
from functions.tooling.manifests import claim_to_xr

ORIGIN = "nvidia.com/dynamo-operator-origin-version"
NIXL = "VLLM_NIXL_SIDE_CHANNEL_HOST"
CLAIM: dict[str, Any] = {
    "apiVersion": "nvidia.com/v1beta1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "g", "namespace": "ns"},
    "spec": {
        "backendFramework": "vllm",
        "components": [
            {
                "name": "frontend",
                "type": "frontend",
                "podTemplate": {
                    "spec": {"containers": [{"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"}]}
                },
            },
            {
                "name": "decode",
                "type": "decode",
                "multinode": {"nodeCount": 2},
                "podTemplate": {
                    "spec": {"containers": [{"name": "main", "image": "vllm:1.0.0", "args": ["--model", "m"]}]}
                },
            },
        ],
    },
}


def pcs_with(origin: str | None) -> dict[str, Any]:
    annotations = {ORIGIN: origin} if origin else {}
    return {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueSet",
        "metadata": {"name": "g"},
        "spec": {"template": {"cliques": [{"name": "frontend", "annotations": annotations}]}},
    }


def dcd_with(origin: str) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "XDynamoComponentDeployment",
        "spec": {"podTemplate": {"metadata": {"annotations": {ORIGIN: origin}}}},
    }


@pytest.mark.parametrize(
    ("annotations", "status", "carriers", "expected"),
    [
        pytest.param({}, {}, [], RENDERED_OPERATOR_VERSION, id="new-graph-gets-the-rendered-version"),
        pytest.param({ORIGIN: "0.9.1"}, {STATUS_FIELD: "1.4.0"}, [], "0.9.1", id="the-manifest-annotation-wins"),
        pytest.param({}, {STATUS_FIELD: "1.2.0"}, [pcs_with("1.3.0")], "1.2.0", id="kept-in-status"),
        pytest.param({}, {}, [pcs_with("1.1.0")], "1.1.0", id="status-lost-read-back-from-the-cliques"),
        pytest.param({}, {}, [dcd_with("1.0.2")], "1.0.2", id="status-lost-read-back-from-a-dcd"),
        pytest.param({}, {}, [pcs_with(None)], NO_ORIGIN, id="composed-before-tracking"),
        pytest.param({}, {STATUS_FIELD: NO_ORIGIN}, [], NO_ORIGIN, id="none-is-kept-too"),
    ],
)
def test_resolve_origin_version(
    annotations: dict[str, str], status: dict[str, Any], carriers: list[dict[str, Any]], expected: str
) -> None:
    assert resolve_origin_version(annotations, status, carriers) == expected


def render(
    claim: dict[str, Any], *, status: dict[str, Any] | None = None, observed: dict[str, Any] | None = None
) -> Any:
    xr = claim_to_xr(claim)
    if status:
        xr["status"] = status
    rsp = render_graph_deployment(StepRequest(input={}, observed_composite=xr, observed_resources=observed or {}))
    assert not rsp.fatal, rsp.results
    return rsp


def cliques(rsp: Any) -> list[dict[str, Any]]:
    return rsp.desired_resources["podcliqueset"].resource["spec"]["template"]["cliques"]


def env_names(clique: dict[str, Any]) -> set[str]:
    return {e["name"] for e in clique["spec"]["podSpec"]["containers"][0]["env"]}


def test_a_new_graph_is_stamped_and_its_multinode_vllm_uses_multiprocessing() -> None:
    rsp = render(CLAIM)
    # the appVersion of the operator chart at the reference commit, which the chart passes as the operator's version
    assert rsp.composite_status[STATUS_FIELD] == RENDERED_OPERATOR_VERSION == "1.5.0"
    for clique in cliques(rsp):
        assert clique["annotations"][ORIGIN] == "1.5.0"
    decode = [c for c in cliques(rsp) if c["name"].startswith("decode")]
    assert [NIXL in env_names(c) for c in decode] == [True, True]


def test_a_later_reconcile_keeps_the_first_version() -> None:
    first = render(CLAIM).composite_status[STATUS_FIELD]
    later = render(CLAIM, status={STATUS_FIELD: "1.0.0"})
    assert first == "1.5.0"
    assert later.composite_status[STATUS_FIELD] == "1.0.0"  # what an older package stamped stays
    assert {c["annotations"][ORIGIN] for c in cliques(later)} == {"1.0.0"}


def test_a_migrated_manifest_keeps_its_annotation_and_ray_below_1_0_0() -> None:
    claim = copy.deepcopy(CLAIM)
    claim["metadata"]["annotations"] = {ORIGIN: "0.8.0"}
    rsp = render(claim, status={STATUS_FIELD: "1.4.0"})
    assert rsp.composite_status[STATUS_FIELD] == "0.8.0"
    decode = [c for c in cliques(rsp) if c["name"].startswith("decode")]
    assert all(NIXL not in env_names(c) for c in decode)  # Ray, as upstream for an origin below 1.0.0


def test_a_graph_composed_before_tracking_stays_on_ray_and_unstamped() -> None:
    rsp = render(CLAIM, observed={"podcliqueset": pcs_with(None)})
    assert rsp.composite_status[STATUS_FIELD] == NO_ORIGIN
    assert all(ORIGIN not in c["annotations"] for c in cliques(rsp))
    decode = [c for c in cliques(rsp) if c["name"].startswith("decode")]
    assert all(NIXL not in env_names(c) for c in decode)


def test_the_component_pathway_stamps_the_dcd_pod_templates_not_their_pods() -> None:
    claim = copy.deepcopy(CLAIM)
    claim["metadata"]["annotations"] = {"nvidia.com/enable-grove": "false"}
    rsp = render(claim)
    dcds = [r.resource for r in rsp.desired_resources.values() if r.resource["kind"] == "XDynamoComponentDeployment"]
    assert len(dcds) == 2
    for dcd in dcds:
        assert dcd["spec"]["podTemplate"]["metadata"]["annotations"][ORIGIN] == "1.5.0"
    assert rsp.composite_status[STATUS_FIELD] == "1.5.0"


def test_with_origin_version_leaves_a_graph_without_one_alone() -> None:
    graph = graph_from_xr(claim_to_xr(CLAIM))
    assert with_origin_version(graph, NO_ORIGIN) is graph
    assert with_origin_version(graph, "1.4.0").metadata_annotations == {ORIGIN: "1.4.0"}


def test_a_dcd_of_the_graph_reads_the_origin_for_the_vllm_gate() -> None:
    def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
        return [o for o in objects if o["kind"] == kind]

    claim = copy.deepcopy(CLAIM)
    claim["metadata"]["annotations"] = {"nvidia.com/enable-grove": "false"}
    decode = next(d for d in by_kind(rendered(claim), "XDynamoComponentDeployment") if "multinode" in d["spec"])
    # carried in the pod template, as upstream's DCD carries it, not on the DCD's own metadata
    assert ORIGIN not in (decode["metadata"].get("annotations") or {})
    assert decode["spec"]["podTemplate"]["metadata"]["annotations"][ORIGIN] == "1.5.0"
    (lws,) = by_kind(render_xr(decode), "LeaderWorkerSet")
    for role in ("leaderTemplate", "workerTemplate"):
        template = lws["spec"]["leaderWorkerTemplate"][role]
        assert NIXL in {e["name"] for e in template["spec"]["containers"][0]["env"]}  # multiprocessing
        assert ORIGIN not in (template["metadata"].get("annotations") or {})  # upstream drops it from pods
