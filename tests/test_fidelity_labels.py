"""Labels and annotations as upstream HEAD renders them where no golden scenario checks them: the worker class
of graphs with an EPP (docs/upstream/at-head.md §9), component Services (§12) and Deployments (§13)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fixtures.rendering import render_xr, rendered
from fixtures.tooling import REPO
from functions.kube.defaults import WORKER_TYPES
from functions.tooling.manifests import claim_to_xr, load_documents

CLASS = "nvidia.com/dynamo-component-class"
GAIE = load_documents(REPO / "examples" / "v1alpha1" / "vllm-gaie.yaml")[0]
AGG = load_documents(REPO / "examples" / "dgd" / "vllm-agg.yaml")[0]


def of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def without_grove(claim: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(claim)
    out["metadata"].setdefault("annotations", {})["nvidia.com/enable-grove"] = "false"
    return out


def test_worker_pods_of_a_graph_with_an_epp_carry_the_worker_class_the_pool_selects() -> None:
    objects = rendered(GAIE)
    (pcs,) = of_kind(objects, "PodCliqueSet")
    for clique in pcs["spec"]["template"]["cliques"]:
        is_worker = clique["labels"]["nvidia.com/dynamo-component-type"] in WORKER_TYPES
        assert (clique["labels"].get(CLASS) == "worker") is is_worker, clique["name"]
    (pool,) = of_kind(objects, "InferencePool")
    assert pool["spec"]["selector"]["matchLabels"][CLASS] == "worker"
    assert "nvidia.com/dynamo-component-type" not in pool["spec"]["selector"]["matchLabels"]


def test_on_the_grove_pathway_no_component_service_carries_the_worker_class() -> None:
    """Upstream labels a Grove-pathway component Service from the pod template, where it writes the worker hash
    but not the class: the class stays on the pods the InferencePool selects."""
    services = of_kind(rendered(GAIE), "Service")
    workers = [s for s in services if "nvidia.com/dynamo-worker-hash" in s["metadata"]["labels"]]
    assert workers, "the graph's worker Services"
    assert all(CLASS not in s["metadata"]["labels"] for s in services)


def test_without_an_epp_no_pod_carries_the_worker_class() -> None:
    (pcs,) = of_kind(rendered(AGG), "PodCliqueSet")
    assert all(CLASS not in clique["labels"] for clique in pcs["spec"]["template"]["cliques"])


def test_on_the_component_pathway_the_class_and_the_epps_sidecar_opt_out_reach_the_pods() -> None:
    objects = rendered(without_grove(GAIE))
    # a v1alpha1 graph's DCDs are in the v1beta1 shape, as the operator's read at v1beta1 (the frontend, with an
    # ingress of its own, keeps the v1alpha1 shape)
    dcds = {
        d["spec"].get("name") or d["spec"]["serviceName"]: d for d in of_kind(objects, "XDynamoComponentDeployment")
    }
    assert dcds["VllmWorker"]["metadata"]["labels"][CLASS] == "worker"
    assert dcds["Epp"]["spec"]["podTemplate"]["metadata"]["annotations"]["sidecar.istio.io/inject"] == "false"
    worker_pods = of_kind(render_xr(dcds["VllmWorker"]), "Deployment")[0]["spec"]["template"]
    assert worker_pods["metadata"]["labels"][CLASS] == "worker"
    epp_pods = of_kind(render_xr(dcds["Epp"]), "Deployment")[0]["spec"]["template"]
    assert epp_pods["metadata"]["annotations"]["sidecar.istio.io/inject"] == "false"
    assert CLASS not in epp_pods["metadata"]["labels"]


def test_component_services_carry_the_users_labels_and_pod_annotations_not_the_system_labels() -> None:
    claim = copy.deepcopy(AGG)
    claim["spec"]["labels"] = {"team": "llm"}
    worker = next(c for c in claim["spec"]["components"] if c["type"] == "worker")
    worker["podTemplate"]["metadata"] = {"labels": {"tier": "gold"}, "annotations": {"prometheus.io/scrape": "true"}}
    services = {s["metadata"]["name"]: s for s in of_kind(rendered(claim), "Service")}
    service = next(s for name, s in services.items() if name.endswith("vllmworker"))
    labels = service["metadata"]["labels"]
    assert labels["team"] == "llm" and labels["tier"] == "gold"
    assert labels["nvidia.com/dynamo-discovery-backend"] == "kubernetes"
    assert "nvidia.com/dynamo-worker-hash" in labels
    for system in (
        "nvidia.com/dynamo-component",
        "nvidia.com/dynamo-graph-deployment-name",
        "nvidia.com/dynamo-namespace",
        "nvidia.com/dynamo-component-type",
        "nvidia.com/metrics-enabled",
        "nvidia.com/selector",
    ):
        assert system not in labels, system
    own = {k: v for k, v in service["metadata"]["annotations"].items() if not k.startswith("crossplane.io/")}
    assert own == {"prometheus.io/scrape": "true"}
    assert set(service["spec"]["selector"]) == {
        "nvidia.com/dynamo-component",
        "nvidia.com/dynamo-component-type",
        "nvidia.com/dynamo-namespace",
    }


@pytest.mark.parametrize(
    ("component", "sub_type"),
    [("VllmPrefillWorker", "prefill"), ("VllmDecodeWorker", "decode"), ("Frontend", None)],
)
def test_a_v1beta1_graphs_prefill_and_decode_deployments_and_services_carry_their_sub_component_type(
    component: str, sub_type: str | None
) -> None:
    """Upstream labels a DCD's Deployment and Service with the sub-component type of the DCD's v1alpha1 form,
    where a v1beta1 prefill or decode component is a worker of that sub-type, whatever the DGD's API version."""
    claim = load_documents(REPO / "examples" / "dgd" / "vllm-disagg-no-grove.yaml")[0]
    dcds = of_kind(rendered(claim), "XDynamoComponentDeployment")
    (dcd,) = [d for d in dcds if d["spec"]["name"] == component]
    objects = render_xr(dcd)
    for kind in ("Deployment", "Service"):
        (obj,) = of_kind(objects, kind)
        assert obj["metadata"]["labels"].get("nvidia.com/dynamo-sub-component-type") == sub_type, kind


def test_a_deployment_keeps_the_pod_template_labels_and_leaves_the_selector_label_to_its_pods() -> None:
    dcd = load_documents(REPO / "examples" / "dcd" / "vllm-worker.yaml")[0]
    dcd = copy.deepcopy(dcd)
    template = dcd["spec"].setdefault("podTemplate", {})
    template.setdefault("metadata", {})["labels"] = {"tier": "gold"}
    (deployment,) = of_kind(render_xr(claim_to_xr(dcd)), "Deployment")
    labels = deployment["metadata"]["labels"]
    assert labels["tier"] == "gold"
    assert "nvidia.com/selector" not in labels
    assert (
        labels["nvidia.com/dynamo-component"]
        == deployment["spec"]["template"]["metadata"]["labels"]["nvidia.com/dynamo-component"]
    )
    assert deployment["spec"]["template"]["metadata"]["labels"]["nvidia.com/selector"] == dcd["metadata"]["name"]


def test_on_the_component_pathway_a_service_carries_its_workloads_labels_and_the_discovery_labels() -> None:
    """Upstream HEAD labels a DCD's Service with ``GetDCDKubeLabels`` (as its Deployment) plus the discovery
    labels: dashboards and PodMonitors select component Services by the graph, component and namespace."""
    claim = load_documents(REPO / "examples" / "v1alpha1" / "vllm-disagg-no-grove.yaml")[0]
    dcds = of_kind(rendered(claim), "XDynamoComponentDeployment")
    assert len(dcds) == 3
    for dcd in dcds:
        objects = render_xr(dcd)
        (deployment,) = of_kind(objects, "Deployment")
        (service,) = of_kind(objects, "Service")
        labels = service["metadata"]["labels"]
        discovery = {"nvidia.com/dynamo-discovery-backend": "kubernetes", "nvidia.com/dynamo-discovery-enabled": "true"}
        assert labels == {**deployment["metadata"]["labels"], **discovery}
        assert labels["nvidia.com/dynamo-graph-deployment-name"] == "vllm-disagg-ng"
        assert labels["nvidia.com/dynamo-component"] == dcd["spec"]["name"]
        assert labels["nvidia.com/dynamo-namespace"] == "dynamo-demo-vllm-disagg-ng"
        assert "nvidia.com/dynamo-component-type" not in labels  # a selector and pod label only
        # a v1alpha1 prefill or decode worker's DCD is that type (v1beta1 shape), its sub-component type
        sub = dcd["spec"]["type"] if dcd["spec"].get("type") in ("prefill", "decode") else None
        assert labels.get("nvidia.com/dynamo-sub-component-type") == sub
        assert deployment["metadata"]["labels"].get("nvidia.com/dynamo-sub-component-type") == sub
