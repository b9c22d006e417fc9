"""Scaling adapters: what the DGD composes, where replicas come from, and the adapter's own status step."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from functions.api.normalise import graph_from_xr
from functions.api.operator_config import OperatorConfig
from functions.contract import DEFAULT_TTL_SECONDS, StepRequest, StepResponse
from functions.kinds.graph.graph_render_step import render_graph, render_graph_deployment
from functions.kinds.scaling.scaling_adapters import (
    adapter_name,
    adapter_resource_name,
    observed_replicas,
    render_scaling_adapters,
    with_adapter_replicas,
)
from functions.kinds.scaling.scaling_step import STAMP_TTL_SECONDS, scaling_adapter
from functions.tooling.manifests import claim_to_xr

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"


def v1beta1_claim(**worker: Any) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "team-a"},
        "spec": {
            "backendFramework": "vllm",
            "components": [
                {
                    "name": "Frontend",
                    "type": "frontend",
                    "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}},
                },
                {
                    "name": "Worker",
                    "type": "worker",
                    "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}},
                    **worker,
                },
            ],
        },
    }


def v1alpha1_claim(**worker: Any) -> dict[str, Any]:
    main = {"mainContainer": {"image": IMAGE}}
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "team-a"},
        "spec": {
            "backendFramework": "vllm",
            "services": {
                "Frontend": {"componentType": "frontend", "extraPodSpec": main},
                "Worker": {"componentType": "worker", "extraPodSpec": main, **worker},
            },
        },
    }


def render(claim: dict[str, Any], observed: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    rsp = render_graph_deployment(
        StepRequest(input={}, observed_composite=claim_to_xr(claim), observed_resources=observed or {})
    )
    assert not rsp.fatal, rsp.results
    return {name: d.resource for name, d in rsp.desired_resources.items()}


def clique_replicas(desired: dict[str, dict[str, Any]]) -> dict[str, int]:
    cliques = desired["podcliqueset"]["spec"]["template"]["cliques"]
    return {c["name"]: c["spec"]["replicas"] for c in cliques}


def observed_adapter(replicas: Any, component: str = "Worker") -> dict[str, dict[str, Any]]:
    return {
        f"scaling-adapter-{component.lower()}": {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": "XDynamoGraphDeploymentScalingAdapter",
            "metadata": {"name": f"team-a.g-{component.lower()}"},
            "spec": {"dgdRef": {"name": "g", "componentName": component}, "replicas": replicas},
        }
    }


# --- What the DGD composes -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        (v1beta1_claim(), False),
        (v1beta1_claim(scalingAdapter={}), True),  # v1beta1: presence enables it
        (v1alpha1_claim(), False),
        (v1alpha1_claim(scalingAdapter={}), False),  # v1alpha1: enabled defaults to false
        (v1alpha1_claim(scalingAdapter={"enabled": False}), False),
        (v1alpha1_claim(scalingAdapter={"enabled": True}), True),
    ],
    ids=["beta-absent", "beta-present", "alpha-absent", "alpha-empty", "alpha-disabled", "alpha-enabled"],
)
def test_an_adapter_per_component_with_a_scaling_adapter(claim: dict[str, Any], expected: bool) -> None:
    desired = render(claim)
    assert ("scaling-adapter-worker" in desired) is expected
    assert "scaling-adapter-frontend" not in desired


def test_the_adapter_starts_from_the_component_replicas() -> None:
    adapter = render(v1beta1_claim(replicas=3, scalingAdapter={}))["scaling-adapter-worker"]
    assert adapter == {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "XDynamoGraphDeploymentScalingAdapter",
        "metadata": {
            "name": "team-a.g-worker",
            "labels": {"nvidia.com/dynamo-component": "Worker", "nvidia.com/dynamo-graph-deployment-name": "g"},
        },
        "spec": {"dgdRef": {"componentName": "Worker", "name": "g"}, "replicas": 3},
    }


def test_replicas_default_to_one_and_v1alpha1_services_use_component_name() -> None:
    adapter = render(v1alpha1_claim(scalingAdapter={"enabled": True}))["scaling-adapter-worker"]
    assert adapter["spec"] == {"dgdRef": {"componentName": "Worker", "name": "g"}, "replicas": 1}


def test_the_name_is_upstreams_qualified_by_the_namespace() -> None:
    graph = graph_from_xr(claim_to_xr(v1beta1_claim(scalingAdapter={})))
    worker = graph.components[1]
    assert adapter_name(graph, worker) == "team-a.g-worker"  # upstream: g-worker in namespace team-a
    assert adapter_resource_name(worker) == "scaling-adapter-worker"


def test_an_invalid_adapter_name_is_a_fatal_naming_the_field() -> None:
    claim = v1alpha1_claim(scalingAdapter={"enabled": True})
    # a name the component-name check lets through (DNS-1123 characters) but no object name can carry
    claim["spec"]["services"]["Worker..A"] = claim["spec"]["services"].pop("Worker")
    rsp = render_graph_deployment(StepRequest(input={}, observed_composite=claim_to_xr(claim)))
    assert rsp.fatal
    assert rsp.results[0].message.startswith("spec.services.Worker..A.scalingAdapter: the scaling adapter's name")


# --- Where replicas come from ---------------------------------------------------------------


def test_without_an_observed_adapter_the_dgd_replicas_run() -> None:
    assert clique_replicas(render(v1beta1_claim(replicas=2, scalingAdapter={})))["worker"] == 2


def test_an_observed_adapter_is_the_source_of_truth() -> None:
    desired = render(v1beta1_claim(replicas=2, scalingAdapter={}), observed_adapter(5))
    assert clique_replicas(desired) == {"frontend": 1, "worker": 5}
    assert desired["scaling-adapter-worker"]["spec"]["replicas"] == 5  # repeated, never reset to the DGD's 2


def test_an_observed_adapter_scales_a_multinode_components_scaling_group() -> None:
    claim = v1beta1_claim(replicas=1, scalingAdapter={}, multinode={"nodeCount": 2})
    desired = render(claim, observed_adapter(3))
    (group,) = desired["podcliqueset"]["spec"]["template"]["podCliqueScalingGroups"]
    assert group["replicas"] == 3
    assert clique_replicas(desired)["worker-wkr"] == 1  # the nodes per replica do not change


def test_an_adapter_is_ignored_once_the_component_has_no_scaling_adapter() -> None:
    desired = render(v1beta1_claim(replicas=2), observed_adapter(5))
    assert clique_replicas(desired)["worker"] == 2
    assert "scaling-adapter-worker" not in desired  # Crossplane deletes it, as upstream does


@pytest.mark.parametrize("value", [None, -1, "3", True, 2.5])
def test_an_adapter_without_a_replica_count_leaves_the_dgd_replicas(value: Any) -> None:
    obs = observed_adapter(value)
    assert observed_replicas(obs["scaling-adapter-worker"]) is None
    assert clique_replicas(render(v1beta1_claim(replicas=2, scalingAdapter={}), obs))["worker"] == 2


def test_with_adapter_replicas_returns_the_same_graph_when_nothing_changes() -> None:
    graph = graph_from_xr(claim_to_xr(v1beta1_claim(replicas=2, scalingAdapter={})))
    assert with_adapter_replicas(graph, {}) is graph
    assert with_adapter_replicas(graph, observed_adapter(2)) is graph
    scaled = with_adapter_replicas(graph, observed_adapter(4))
    assert [c.replicas for c in scaled.components] == [1, 4]
    assert render_scaling_adapters(scaled)["scaling-adapter-worker"]["spec"]["replicas"] == 4


def test_an_existing_adapter_is_applied_only_over_the_version_it_was_read_at() -> None:
    # the resourceVersion is server-side apply's precondition: a DGD reconcile that read the adapter
    # before an autoscaler's patch is refused instead of putting the old replicas back
    observed = observed_adapter(4)
    observed["scaling-adapter-worker"]["metadata"]["resourceVersion"] = "812"
    adapter = render(v1beta1_claim(replicas=2, scalingAdapter={}), observed)["scaling-adapter-worker"]
    assert adapter["metadata"]["resourceVersion"] == "812"
    assert adapter["spec"]["replicas"] == 4
    new = render(v1beta1_claim(replicas=2, scalingAdapter={}))["scaling-adapter-worker"]
    assert "resourceVersion" not in new["metadata"]  # created, not updated: nothing to be stale against


def test_render_graph_alone_composes_the_adapters_from_the_graph() -> None:
    graph = graph_from_xr(claim_to_xr(v1beta1_claim(replicas=2, scalingAdapter={})))
    assert render_graph(graph, OperatorConfig())["scaling-adapter-worker"]["spec"]["replicas"] == 2


# --- The adapter's status step -------------------------------------------------------------


def adapter_xr(replicas: int, status: dict[str, Any] | None = None, ref: dict[str, str] | None = None) -> dict:
    xr: dict[str, Any] = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "XDynamoGraphDeploymentScalingAdapter",
        "metadata": {"name": "team-a.g-worker"},
        "spec": {
            "dgdRef": ref or {"name": "g", "componentName": "Worker"},
            "replicas": replicas,
            "compositionRef": {"name": "dynamographdeploymentscalingadapters.nvidia.com"},
        },
    }
    if status is not None:
        xr["status"] = status
    return xr


SELECTOR = "nvidia.com/dynamo-graph-deployment-name=g,nvidia.com/dynamo-component=Worker"
T1, T2 = "2026-01-15T10:00:00Z", "2026-01-15T11:00:00Z"


def scaled(replicas: int, when: str, message: str | None = None) -> dict[str, Any]:
    return {
        "type": "Scaled",
        "status": "True",
        "reason": "Scaled",
        "message": message or f"scaled to {replicas} replicas",
        "lastTransitionTime": when,
    }


def step(xr: dict[str, Any]) -> StepResponse:
    return scaling_adapter(StepRequest(input={}, observed_composite=xr))


def test_a_new_adapter_reports_its_replicas_and_selector() -> None:
    rsp = step(adapter_xr(2))
    assert rsp.composite_status == {"replicas": 2, "selector": SELECTOR}
    assert rsp.composite_ready is True
    assert rsp.desired_resources == {}
    assert (rsp.conditions, rsp.results, rsp.ttl_seconds) == ([], [], DEFAULT_TTL_SECONDS)


def test_the_v1alpha1_shape_names_the_component_by_service_name() -> None:
    rsp = step(adapter_xr(1, ref={"name": "g", "serviceName": "Worker"}))
    assert rsp.composite_status == {"replicas": 1, "selector": SELECTOR}


def test_a_replica_change_returns_the_scaled_condition_and_an_event() -> None:
    rsp = step(adapter_xr(3, {"replicas": 2, "selector": SELECTOR, "lastScaleTime": T1}))
    assert rsp.composite_status == {"replicas": 3, "selector": SELECTOR, "lastScaleTime": T1}  # kept until stamped
    (cond,) = rsp.conditions
    assert (cond.type, cond.status, cond.reason, cond.message) == ("Scaled", "True", "Scaled", "scaled to 3 replicas")
    (result,) = rsp.results
    assert (result.severity, result.reason) == ("normal", "Scaled")
    assert result.message == "scaled component Worker of DynamoGraphDeployment g from 2 to 3 replicas"
    assert rsp.ttl_seconds == STAMP_TTL_SECONDS


def test_the_stamped_condition_becomes_last_scale_time() -> None:
    status = {"replicas": 3, "selector": SELECTOR, "lastScaleTime": T1, "conditions": [scaled(3, T2)]}
    rsp = step(adapter_xr(3, status))
    assert rsp.composite_status == {"replicas": 3, "selector": SELECTOR, "lastScaleTime": T2}
    (cond,) = rsp.conditions  # re-emitted unchanged, so Crossplane keeps its time
    assert (cond.reason, cond.message) == ("Scaled", "scaled to 3 replicas")
    assert (rsp.results, rsp.ttl_seconds) == ([], DEFAULT_TTL_SECONDS)


def test_a_condition_for_other_replicas_does_not_move_last_scale_time() -> None:
    status = {"replicas": 3, "selector": SELECTOR, "lastScaleTime": T1, "conditions": [scaled(5, T2)]}
    rsp = step(adapter_xr(3, status))
    assert rsp.composite_status["lastScaleTime"] == T1


def test_the_same_request_gives_the_same_response() -> None:
    xr = adapter_xr(3, {"replicas": 2, "conditions": [scaled(2, T1)]})
    first, second = step(copy.deepcopy(xr)), step(copy.deepcopy(xr))
    assert first == second


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"dgdRef": {"name": "g", "componentName": "W"}, "replicas": -1}, "spec.replicas: Input should be greater"),
        ({"dgdRef": {"name": "g", "componentName": "W"}}, "spec.replicas: Field required"),
        ({"replicas": 1}, "spec.dgdRef: Field required"),
        ({"dgdRef": {"name": "g", "serviceName": "W", "componentName": "W"}, "replicas": 1}, "spec.dgdRef.serviceName"),
        ({"dgdRef": {"name": "", "serviceName": "W"}, "replicas": 1}, "spec.dgdRef.name: String should have at least"),
    ],
)
def test_a_bad_adapter_spec_is_a_fatal_naming_the_field(spec: dict[str, Any], message: str) -> None:
    rsp = scaling_adapter(
        StepRequest(input={}, observed_composite={"kind": "XDynamoGraphDeploymentScalingAdapter", "spec": spec})
    )
    assert rsp.fatal
    assert message in rsp.results[0].message, rsp.results[0].message
