"""The GraphStatus step as a pure function, at the protobuf edge, and its place in the Composition."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from fixtures.tooling import REPO
from functions.contract import READY_TTL_SECONDS, DesiredResource, StepRequest
from functions.fn import run, struct_to_dict
from functions.kinds import step_for_input
from functions.kinds.graph.graph_render_step import render_graph_deployment
from functions.kinds.graph.graph_status_step import graph_status
from functions.kinds.graph.status_input import DURATION_PATTERN, duration_seconds, parse_status_input
from functions.tooling.manifests import claim_to_xr, load_documents

INPUT = {"apiVersion": "dynamo.fn.crossplane.io/v1beta1", "kind": "GraphStatus"}
CLAIM = {
    "apiVersion": "nvidia.com/v1beta1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "demo", "namespace": "team-a"},
    "spec": {
        "components": [{"name": "Frontend", "type": "frontend"}, {"name": "Worker", "type": "worker", "replicas": 2}]
    },
}
XR = claim_to_xr(CLAIM)
PCS = {
    "apiVersion": "grove.io/v1alpha1",
    "kind": "PodCliqueSet",
    "metadata": {"name": "demo", "namespace": "team-a"},
    "spec": {"replicas": 1},
}
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "demo-frontend", "namespace": "team-a"}}
DESIRED = {"podcliqueset": PCS, "service-frontend": SERVICE}


def pclq(name: str, desired: int, ready: int) -> dict[str, Any]:
    return {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodClique",
        "metadata": {
            "name": name,
            "namespace": "team-a",
            "generation": 1,
            "labels": {"app.kubernetes.io/part-of": "demo"},
        },
        "spec": {"replicas": desired},
        "status": {"observedGeneration": 1, "replicas": desired, "readyReplicas": ready, "updatedReplicas": desired},
    }


READY_CLIQUES = [pclq("demo-0-frontend", 1, 1), pclq("demo-0-worker", 2, 2)]


def step(
    input_obj: dict[str, Any] | None = None,
    xr: dict[str, Any] | None = None,
    desired: dict[str, dict[str, Any]] | None = None,
    observed: dict[str, dict[str, Any]] | None = None,
    podcliques: list[dict[str, Any]] | None = None,
):
    return graph_status(
        StepRequest(
            input=input_obj or INPUT,
            observed_composite=xr or XR,
            observed_resources=DESIRED if observed is None else observed,
            desired_resources=DESIRED if desired is None else desired,
            required={"grove-podcliques": READY_CLIQUES if podcliques is None else podcliques},
        )
    )


def test_the_registry_serves_the_step() -> None:
    assert step_for_input(INPUT).__wrapped__ is graph_status  # placed: functions.kinds.platform.placement
    assert step_for_input({**INPUT, "apiVersion": "dynamo.fn.crossplane.io/v1"}) is None


def test_ready_graph() -> None:
    rsp = step()
    assert not rsp.fatal
    assert rsp.desired_resources == {n: DesiredResource(o, ready=True) for n, o in DESIRED.items()}
    assert rsp.composite_ready is True
    assert rsp.composite_status is not None
    assert rsp.composite_status["state"] == "successful"
    assert set(rsp.composite_status["components"]) == {"Frontend", "Worker"}
    assert [(c.type, c.status, c.reason) for c in rsp.conditions] == [
        ("DynamoGraphReady", "True", "all_resources_are_ready"),
        ("Progressing", "True", "RolloutComplete"),
    ]
    assert rsp.ttl_seconds == READY_TTL_SECONDS
    assert sorted(rsp.requirements) == ["grove-podcliques", "grove-podcliquescalinggroups"]


def test_pending_graph_names_what_is_missing() -> None:
    rsp = step(observed={"podcliqueset": PCS}, podcliques=[pclq("demo-0-frontend", 1, 1), pclq("demo-0-worker", 2, 0)])
    assert rsp.desired_resources["podcliqueset"].ready is False
    # not observed yet, but a Service is ready once applied, and the PodCliqueSet keeps the XR unready anyway:
    # Crossplane records no "not yet ready" event for it
    assert rsp.desired_resources["service-frontend"].ready is True
    assert rsp.composite_ready is None  # Crossplane derives Ready=False and lists the unready resources
    assert rsp.composite_status is not None
    assert rsp.composite_status["state"] == "pending"
    cond, progressing = rsp.conditions
    assert (progressing.type, progressing.reason) == ("Progressing", "RolloutComplete")  # not ready, nothing lags
    assert (cond.status, cond.reason, cond.message) == (
        "False",
        "some_resources_are_not_ready",
        "Resources not ready: demo: podclique/demo-0-worker: desired=2, ready=0; demo-frontend: resource not found",
    )
    assert rsp.ttl_seconds == 15


def test_ttls_come_from_the_input() -> None:
    assert step({**INPUT, "readyTTL": "2m"}).ttl_seconds == 120
    assert step({**INPUT, "pendingTTL": "5s"}, observed={}).ttl_seconds == 5


def test_bad_input_is_fatal_and_names_the_field() -> None:
    rsp = step({**INPUT, "pendingTTL": "soon"})
    assert rsp.fatal
    (result,) = rsp.results
    assert result.message.startswith("input.pendingTTL: 'soon' is not a duration")
    assert result.reason == "InvalidInput"


def test_bad_spec_is_fatal_and_names_the_field() -> None:
    bad = claim_to_xr({**CLAIM, "spec": {"components": [{"name": "Frontend", "replicas": "two"}]}})
    rsp = step(xr=bad)
    assert rsp.fatal
    (result,) = rsp.results
    assert result.message.startswith("spec.components[0].replicas")
    assert result.reason == "InvalidSpec"
    assert rsp.desired_resources == {}


def test_requirements_are_the_same_on_every_call() -> None:
    first = step(podcliques=[])
    second = step()
    assert first.requirements == second.requirements
    selector = first.requirements["grove-podcliques"]
    assert (selector.kind, selector.namespace, selector.match_labels) == (
        "PodClique",
        "team-a",
        {"app.kubernetes.io/part-of": "demo"},
    )


def test_the_podcliqueset_name_comes_from_the_desired_object() -> None:
    renamed = {**PCS, "metadata": {**PCS["metadata"], "name": "demo-1a2b"}}
    desired = {"podcliqueset": renamed}
    rsp = step(desired=desired, observed=desired, podcliques=[])
    assert rsp.requirements["grove-podcliques"].match_labels == {"app.kubernetes.io/part-of": "demo-1a2b"}
    assert rsp.composite_status is not None
    assert rsp.composite_status["components"]["Worker"]["componentNames"] == ["demo-1a2b-0-worker"]


def test_without_a_podcliqueset_there_is_nothing_grove_to_ask_for() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "demo-cfg", "namespace": "team-a"}}
    rsp = step(desired={"cfg": cm}, observed={"cfg": cm})
    assert rsp.requirements == {}
    assert rsp.composite_status == {"state": "successful"}
    assert rsp.desired_resources == {"cfg": DesiredResource(cm, ready=True)}


def test_observed_generation() -> None:
    xr = {**XR, "metadata": {**XR["metadata"], "generation": 3}}
    status = step(xr=xr).composite_status
    assert status is not None
    assert status["observedGeneration"] == 3


def run_proto(xr: dict[str, Any], desired: dict[str, dict[str, Any]], observed: dict[str, dict[str, Any]]):
    req = fnv1.RunFunctionRequest()
    req.meta.tag = "t"
    req.input.update(INPUT)
    req.observed.composite.resource.update(xr)
    for name, obj in desired.items():
        req.desired.resources[name].resource.update(obj)
    for name, obj in observed.items():
        req.observed.resources[name].resource.update(obj)
    for obj in READY_CLIQUES:
        req.required_resources["grove-podcliques"].items.add().resource.update(obj)
    return run(req)


def test_at_the_protobuf_edge() -> None:
    rsp = run_proto(XR, DESIRED, {"podcliqueset": PCS})
    assert rsp.meta.tag == "t"
    assert rsp.meta.ttl.seconds == 15
    assert {n: r.ready for n, r in rsp.desired.resources.items()} == {
        "podcliqueset": fnv1.READY_TRUE,
        "service-frontend": fnv1.READY_FALSE,  # every workload ready: the missing Service is what Crossplane names
    }
    assert struct_to_dict(rsp.desired.resources["service-frontend"].resource) == SERVICE  # passed through
    assert rsp.desired.composite.ready == fnv1.READY_UNSPECIFIED
    status = struct_to_dict(rsp.desired.composite.resource)["status"]
    assert status["state"] == "pending"
    assert status["components"]["Worker"]["readyReplicas"] == 2
    cond, progressing = rsp.conditions
    assert progressing.type == "Progressing"
    assert cond.type == "DynamoGraphReady"
    assert cond.target == fnv1.TARGET_COMPOSITE_AND_CLAIM
    assert cond.message == "Resources not ready: demo-frontend: resource not found"
    selector = rsp.requirements.resources["grove-podcliquescalinggroups"]
    assert (selector.api_version, selector.kind, selector.namespace) == (
        "grove.io/v1alpha1",
        "PodCliqueScalingGroup",
        "team-a",
    )
    assert dict(selector.match_labels.labels) == {"app.kubernetes.io/part-of": "demo"}

    ready = run_proto(XR, DESIRED, DESIRED)
    assert ready.meta.ttl.seconds == READY_TTL_SECONDS
    assert ready.desired.composite.ready == fnv1.READY_TRUE


def test_responses_are_deterministic() -> None:
    one = run_proto(XR, DESIRED, {"podcliqueset": PCS}).SerializeToString(deterministic=True)
    two = run_proto(XR, DESIRED, {"podcliqueset": PCS}).SerializeToString(deterministic=True)
    assert one == two


def test_the_compositions_look_again_soon_only_while_pending() -> None:
    """Crossplane requeues an XR after the shortest TTL of its pipeline's steps: the render step leaves the timing to
    the status step, and the Compositions' readyTTL is the default's, so a ready graph is not re-applied each minute."""
    xr = claim_to_xr(load_documents(REPO / "examples" / "dgd" / "vllm-agg.yaml")[0])
    render_rsp = render_graph_deployment(StepRequest(input={}, observed_composite=xr))
    assert not render_rsp.fatal and render_rsp.ttl_seconds == READY_TTL_SECONDS
    for path in ("dynamographdeployment.yaml", "claims/dynamographdeployment.yaml"):
        comp = yaml.safe_load((REPO / "compositions" / path).read_text())
        (status,) = [s for s in comp["spec"]["pipeline"] if s["step"] == "status"]
        settings = parse_status_input(status["input"])
        assert (settings.pending_ttl_seconds, settings.ready_ttl_seconds) == (15, READY_TTL_SECONDS), path


def test_the_composition_runs_status_after_render() -> None:
    comp = yaml.safe_load((REPO / "compositions" / "dynamographdeployment.yaml").read_text())
    steps = comp["spec"]["pipeline"]
    names = [s["step"] for s in steps]
    assert names.index("status") == names.index("render") + 1
    render, status = steps[names.index("render")], steps[names.index("status")]
    assert status["functionRef"] == render["functionRef"]
    assert status["input"]["apiVersion"] == INPUT["apiVersion"]
    assert status["input"]["kind"] == "GraphStatus"
    assert step_for_input(status["input"]).__wrapped__ is graph_status


INPUT_CRD = REPO / "package" / "function" / "input" / "graphstatuses.dynamo.fn.crossplane.io.yaml"


def test_input_crd() -> None:
    crd = yaml.safe_load(INPUT_CRD.read_text())
    assert crd["spec"]["group"] == "dynamo.fn.crossplane.io"
    assert crd["spec"]["names"]["kind"] == "GraphStatus"
    (version,) = crd["spec"]["versions"]
    assert version["name"] == INPUT["apiVersion"].split("/")[1]
    props = version["schema"]["openAPIV3Schema"]["properties"]
    assert "required" not in version["schema"]["openAPIV3Schema"]
    for field in ("pendingTTL", "readyTTL"):
        assert props[field]["type"] == "string"
        assert props[field]["pattern"] == DURATION_PATTERN


@pytest.mark.parametrize("text", ["15s", "0", "1m30s", "1.5h", "500ms", "", "15", "-1s", "1d", "1.s", "soon"])
def test_the_crd_pattern_and_the_parser_agree(text: str) -> None:
    assert (re.match(DURATION_PATTERN, text) is not None) == (duration_seconds(text) is not None)


def test_a_graph_with_nothing_running_is_never_ready() -> None:
    """Every workload ready by upstream's rules (all scaled to zero) but no replica running: not successful, and
    Crossplane is told so (its own rule would find every composed resource ready)."""
    idle = [pclq("demo-0-frontend", 0, 0), pclq("demo-0-worker", 0, 0)]
    rsp = step(podcliques=idle)
    assert rsp.desired_resources["podcliqueset"].ready is True  # each workload is as asked
    assert rsp.composite_ready is False
    assert rsp.composite_status is not None and rsp.composite_status["state"] == "pending"
    ready = next(c for c in rsp.conditions if c.type == "DynamoGraphReady")
    assert (ready.status, ready.reason) == ("False", "some_resources_are_not_ready")
    assert ready.message.startswith("no component is running")


def test_one_component_scaled_to_zero_leaves_the_graph_ready() -> None:
    rsp = step(podcliques=[pclq("demo-0-frontend", 1, 1), pclq("demo-0-worker", 0, 0)])
    assert rsp.composite_ready is True
    assert rsp.composite_status is not None and rsp.composite_status["state"] == "successful"
