"""A bad update never deletes what exists: the step answers Fatal and passes the desired state through.

Crossplane stops the pipeline on a Fatal result, applies nothing and garbage-collects nothing, and
writes the message into the XR's Synced condition (reconciler.go); the composed resources of the
last good render stay as they are.
"""

from __future__ import annotations

import copy

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from google.protobuf import json_format

from fixtures.tooling import REPO
from functions.contract import DEFAULT_TTL_SECONDS
from functions.tooling.manifests import claim_to_xr, find_composition, load_documents
from functions.tooling.pipeline import RESOURCE_NAME_ANNOTATION, RenderError, render
from harness.server import serving

RENDER_INPUT = {"apiVersion": "dynamo.fn.crossplane.io/v1beta1", "kind": "GraphDeployment"}
CLAIM = load_documents(REPO / "examples" / "v1alpha1" / "vllm-disagg.yaml")[0]

BAD_UPDATES = {
    "annotation": (
        lambda c: c["metadata"].setdefault("annotations", {}).update({"nvidia.com/dynamo-kube-discovery-mode": "x"}),
        "metadata.annotations[nvidia.com/dynamo-kube-discovery-mode]: must be pod or container",
    ),
    "backend mismatch": (
        lambda c: c["spec"].update({"backendFramework": "sglang"}),
        "spec.backendFramework: VllmDecodeWorker:",
    ),
    "unknown field": (
        lambda c: c["spec"]["services"]["Frontend"].update({"replica": 2}),
        "spec.services.Frontend.replica: Extra inputs are not permitted",
    ),
}


def previous_render() -> list[dict]:
    xr = claim_to_xr(CLAIM)
    return render(xr, find_composition(xr, load_documents(REPO / "compositions"))).composed


@pytest.fixture(scope="module")
def address() -> str:
    with serving("--insecure") as addr:
        yield addr


@pytest.mark.parametrize("case", list(BAD_UPDATES))
def test_bad_update_is_fatal_and_leaves_desired_state_untouched(case: str, address: str) -> None:
    mutate, message = BAD_UPDATES[case]
    bad = copy.deepcopy(CLAIM)
    mutate(bad)
    existing = previous_render()
    req = fnv1.RunFunctionRequest()
    req.input.update(RENDER_INPUT)
    req.observed.composite.resource.update(claim_to_xr(bad))
    for obj in existing:
        req.observed.resources[obj["metadata"]["annotations"][RESOURCE_NAME_ANNOTATION]].resource.update(obj)
    # What earlier steps already desired must come back unchanged.
    req.desired.resources["from-an-earlier-step"].resource.update({"apiVersion": "v1", "kind": "ConfigMap"})
    with grpc.insecure_channel(address) as channel:
        rsp = grpcv1.FunctionRunnerServiceStub(channel).RunFunction(req, timeout=10)
    # The Fatal, after the same message as a Warning for the claim (Crossplane reports a Fatal on the XR only).
    assert [r.severity for r in rsp.results] == [fnv1.SEVERITY_WARNING, fnv1.SEVERITY_FATAL]
    fatal = rsp.results[1]
    assert fatal.message.startswith(message.split(":")[0])
    assert message in fatal.message
    assert rsp.results[0].message == fatal.message
    assert json_format.MessageToDict(rsp.desired) == json_format.MessageToDict(req.desired)
    assert rsp.meta.ttl.seconds == DEFAULT_TTL_SECONDS


@pytest.mark.parametrize("case", list(BAD_UPDATES))
def test_the_pipeline_stops_with_the_message_crossplane_puts_in_synced(case: str) -> None:
    mutate, message = BAD_UPDATES[case]
    bad = copy.deepcopy(CLAIM)
    mutate(bad)
    xr = claim_to_xr(bad)
    with pytest.raises(RenderError) as err:
        render(xr, find_composition(xr, load_documents(REPO / "compositions")), observed=previous_render())
    assert str(err.value).startswith("pipeline step 'render' returned a fatal result: ")
    assert message in str(err.value)
