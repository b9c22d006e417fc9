"""DGDs placed on a DynamoPlatform (``nvidia.com/dynamo-platform``): every object as a provider-kubernetes Object
on the platform's cluster, rendered with the platform's EnvironmentConfig, and the status read back from the
Objects' observed manifests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from fixtures.placement import (
    COMPOSITIONS,
    LOCAL,
    PLACED,
    by_key,
    observed_manifests,
    read_operator_config,
    render_manifest,
)
from fixtures.tooling import REPO, crank_render_objects
from functions.kinds.platform.placement import object_name, placement_of
from functions.tooling.manifests import dump_documents, find_composition, load_documents
from functions.tooling.pipeline import RenderError, render
from functions.tooling.render import admitted_xr
from harness.composites import without_crossplane_metadata

Obj = dict[str, Any]


def test_a_placed_graph_composes_what_a_local_one_does_each_inside_an_object() -> None:
    local = by_key(render_manifest(LOCAL, required=[read_operator_config("dynamo-platform")]))
    placed = by_key(render_manifest(PLACED, required=[read_operator_config()]))
    assert set(local) <= set(placed)
    for key, obj in local.items():
        wrapper = placed[key]
        assert (wrapper["apiVersion"], wrapper["kind"]) == ("kubernetes.m.crossplane.io/v1alpha1", "Object"), key
        assert wrapper["spec"]["providerConfigRef"] == {
            "kind": "ClusterProviderConfig",
            "name": "dynamo-platform-gpu-east",
        }
        assert wrapper["spec"]["forProvider"]["manifest"] == without_crossplane_metadata(obj), key
        assert wrapper["metadata"]["name"] == object_name(obj)
    extra = sorted(set(placed) - set(local))
    assert extra == ["observe-vllm-agg-0-frontend-podclique", "observe-vllm-agg-0-vllmworker-podclique",
                     "placement-namespace"]  # fmt: skip
    namespace = placed["placement-namespace"]["spec"]
    assert namespace["forProvider"]["manifest"] == {"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": "dynamo-demo"}}  # fmt: skip
    assert "Delete" not in namespace["managementPolicies"], "the namespace outlives the graph"
    assert placed["observe-vllm-agg-0-frontend-podclique"]["spec"]["managementPolicies"] == ["Observe"]


def test_a_placed_graph_is_rendered_with_its_platforms_configuration() -> None:
    placed = by_key(render_manifest(PLACED, required=[read_operator_config()]))
    pcs = placed["podcliqueset"]["spec"]["forProvider"]["manifest"]
    env = {e["name"]: e.get("value") for c in pcs["spec"]["template"]["cliques"]
           for e in c["spec"]["podSpec"]["containers"][0].get("env") or []}  # fmt: skip
    assert env["NATS_SERVER"] == "nats://nats.dynamo-system.svc.cluster.local:4222"
    local = by_key(render_manifest(LOCAL))["podcliqueset"]
    assert "nats://nats.dynamo-system" not in str(local), "the local default platform names no NATS"


def test_a_placed_graph_waits_for_its_platform_naming_the_annotation() -> None:
    expected = (
        r"metadata.annotations\[nvidia.com/dynamo-platform\]: DynamoPlatform 'gpu-east' is not ready: its "
        r"EnvironmentConfig dynamo-platform-gpu-east does not exist"
    )
    with pytest.raises(RenderError, match=expected):
        render_manifest(PLACED, converge=False)


def test_a_preview_without_the_platform_warns_and_uses_the_defaults() -> None:
    out = render_manifest(PLACED)
    assert any("previewed with the default platform configuration" in r.get("message", "") for r in out.results)
    assert all(o["kind"] == "Object" for o in out.composed)


def _played(out: Any, ready_cliques: bool) -> list[Obj]:
    """The Objects as provider-kubernetes reports them."""
    manifests = observed_manifests(out.composed, ready_cliques)
    return [
        {**copy.deepcopy(obj), "status": {"atProvider": {"manifest": manifests[obj["metadata"]["name"]]},
                                          "conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]}}
        for obj in out.composed
    ]  # fmt: skip


@pytest.mark.parametrize("ready_cliques", [True, False])
def test_the_status_is_read_from_the_objects_observed_manifests(ready_cliques: bool) -> None:
    required = [read_operator_config()]
    out = render_manifest(PLACED, required=required, converge=False)
    out = render_manifest(PLACED, _played(out, ready_cliques), required, converge=False)
    status = out.composite["status"]
    assert status["state"] == ("successful" if ready_cliques else "pending")
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert ready["status"] == ("True" if ready_cliques else "False")
    workers = status["components"]["VllmWorker"]
    assert workers["readyReplicas"] == (2 if ready_cliques else 0)


def test_an_unannotated_graph_is_not_placed() -> None:
    assert placement_of({"metadata": {"annotations": {"other": "x"}}}) is None
    assert all(o["kind"] != "Object" for o in render_manifest(LOCAL).composed)


def test_on_the_component_pathway_the_component_deployments_stay_here_and_place_their_own_objects() -> None:
    doc = load_documents(REPO / "examples" / "v1alpha1" / "vllm-disagg-no-grove.yaml")[0]
    doc["metadata"]["annotations"]["nvidia.com/dynamo-platform"] = "gpu-east"
    required = [read_operator_config()]
    dcds = [o for o in render_manifest(doc, required=required).composed if o["kind"] == "DynamoComponentDeployment"]
    assert len(dcds) == 3
    assert all(d["metadata"]["annotations"]["nvidia.com/dynamo-platform"] == "gpu-east" for d in dcds)
    frontend = next(d for d in dcds if d["metadata"]["name"].endswith("-frontend"))
    frontend.setdefault("metadata", {}).pop("ownerReferences", None)
    out = render(frontend, find_composition(frontend, COMPOSITIONS), [], required)
    manifests = {o["spec"]["forProvider"]["manifest"]["kind"] for o in out.composed if o["kind"] == "Object"}
    assert {"Deployment", "Service", "Namespace"} <= manifests
    assert all(o["kind"] == "Object" for o in out.composed)


def test_crank_renders_a_placed_graph_as_the_in_process_pipeline_does(functions_file: Path, tmp_path: Path) -> None:
    xr = admitted_xr(load_documents(PLACED)[0], "dynamo-demo", "Strict")
    composition = find_composition(xr, COMPOSITIONS)
    required = [read_operator_config()]
    theirs = crank_render_objects(tmp_path, functions_file, xr, composition, required)
    out = render(xr, composition, required=required, converge=False)
    assert dump_documents([out.composite, *out.composed]) == theirs
    assert {o["kind"] for o in out.composed} == {"Object"}


@pytest.mark.parametrize("example", ["vllm-agg-auto-checkpoint.yaml", "vllm-disagg-checkpoint-ref.yaml"])
def test_a_placed_graph_with_checkpoints_is_refused_naming_the_annotation(example: str) -> None:
    doc = load_documents(REPO / "examples" / "checkpoint" / example)[0]
    doc["metadata"].setdefault("annotations", {})["nvidia.com/dynamo-platform"] = "gpu-east"
    config = read_operator_config()
    config["data"]["checkpoint"] = {"enabled": True, "storage": {"pvc": {"pvcName": "snap", "basePath": "/ckpt"}}}
    with pytest.raises(RenderError, match=r"metadata.annotations\[nvidia.com/dynamo-platform\]: a graph placed on a "
                       r"DynamoPlatform cannot use DynamoCheckpoints yet"):  # fmt: skip
        render_manifest(doc, required=[config])
