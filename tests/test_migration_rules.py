"""The migration's rules (functions.tooling.migration) and the function's refusal of operator-managed XRs."""

from __future__ import annotations

from typing import Any

import pytest

from functions.api.upstream_operator import operator_managed
from functions.tooling.migration import (
    Held,
    applied_by_a_person,
    conflicts,
    detach_patch,
    dynamo_controller,
    held,
    is_crossplane_xr,
    portable_manifest,
    verdict,
)

DGD_REF = {
    "apiVersion": "nvidia.com/v1beta1",
    "kind": "DynamoGraphDeployment",
    "name": "g",
    "uid": "u-dgd",
    "controller": True,
    "blockOwnerDeletion": True,
}
XR_REF = {**DGD_REF, "kind": "XDynamoGraphDeployment", "uid": "u-xr"}
OTHER_REF = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u-rs"}
LOOKALIKE = {
    "apiVersion": "example.com/v1",
    "kind": "DynamoGraphDeployment",
    "name": "g",
    "uid": "u-x",
    "controller": True,
}


def _obj(*refs: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "d",
            "namespace": "ns",
            "uid": "u-d",
            "resourceVersion": "7",
            "generation": 3,
            "ownerReferences": list(refs),
            **meta,
        },
        "spec": {"replicas": 1},
    }


@pytest.mark.parametrize(
    ("refs", "want"),
    [
        ((DGD_REF,), [{"op": "remove", "path": "/metadata/ownerReferences"}]),
        ((XR_REF,), [{"op": "remove", "path": "/metadata/ownerReferences"}]),
        ((DGD_REF, OTHER_REF), [{"op": "replace", "path": "/metadata/ownerReferences", "value": [OTHER_REF]}]),
        ((OTHER_REF,), None),
        ((LOOKALIKE,), None),  # the same kind name in another group is not ours to detach
        ((), None),
    ],
)
def test_detaching_removes_only_references_to_dynamo_objects(refs: tuple[dict[str, Any], ...], want: Any) -> None:
    patch = detach_patch(_obj(*refs))
    if want is None:
        assert patch is None
        return
    assert patch == [{"op": "test", "path": "/metadata/resourceVersion", "value": "7"}, *want]


def test_the_inventory_names_the_controller_and_the_verdicts_follow_uid_and_spec() -> None:
    before = held(_obj(DGD_REF))
    assert before == Held("apps/v1", "Deployment", "ns", "d", "u-d", 3, "DynamoGraphDeployment/g", {"replicas": 1})
    assert Held.from_dict(before.as_dict()) == before
    adopted = _obj(XR_REF)
    assert verdict(before, adopted).kept and verdict(before, adopted).owner == "XDynamoGraphDeployment/g"
    assert verdict(before, _obj()).kept and verdict(before, _obj()).owner == ""
    assert verdict(before, None).problem == "deleted"
    recreated = _obj(XR_REF)
    recreated["metadata"]["uid"] = "u-new"
    assert verdict(before, recreated).problem == "recreated (uid u-d -> u-new)"
    rolled = _obj(XR_REF)
    rolled["spec"] = {"replicas": 2}
    assert verdict(before, rolled).problem == "spec changed, its pods may roll: spec.replicas: 1 -> 2"
    annotated = _obj(XR_REF)  # what adopting a Deployment does: an annotation more, its generation moves
    annotated["metadata"]["generation"] = 4
    assert verdict(before, annotated).kept


def test_a_manifest_keeps_the_users_intent_and_drops_bookkeeping() -> None:
    xr = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {
            "name": "g",
            "namespace": "ns",
            "uid": "u",
            "resourceVersion": "9",
            "generation": 2,
            "finalizers": ["nvidia.com/finalizer"],
            "managedFields": [{}],
            "labels": {"team": "a", "crossplane.io/composite": "g"},
            "annotations": {
                "note": "x",
                "crossplane.io/paused": "true",
                "kubectl.kubernetes.io/last-applied-configuration": "{}",
            },
        },
        "spec": {"backendFramework": "vllm", "crossplane": {"compositionRef": {"name": "c"}}},
        "status": {"state": "successful"},
    }
    assert portable_manifest(xr) == {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns", "labels": {"team": "a"}, "annotations": {"note": "x"}},
        "spec": {"backendFramework": "vllm"},
    }
    # a graph applied as v1alpha1 is read at v1beta1 with its spec.services: written back at v1alpha1
    alpha = portable_manifest({**xr, "spec": {"services": {"a": {}}}})
    assert (alpha["apiVersion"], alpha["spec"]) == ("nvidia.com/v1alpha1", {"services": {"a": {}}})
    assert is_crossplane_xr(xr) and not is_crossplane_xr({"spec": {"backendFramework": "vllm"}})
    assert applied_by_a_person(xr)
    dcd = {**xr, "metadata": {**xr["metadata"], "ownerReferences": [DGD_REF]}}
    assert not applied_by_a_person(dcd)  # composed by its DGD on either side: composed again there
    assert dynamo_controller(dcd) == DGD_REF


def test_conflicts_are_the_dynamo_crds_no_xrd_controls() -> None:
    operator_crd = {"metadata": {"name": "dynamographdeployments.nvidia.com"}}
    package_crd = {
        "metadata": {
            "name": "dynamomodels.nvidia.com",
            "ownerReferences": [{"kind": "CompositeResourceDefinition", "controller": True}],
        }
    }
    unrelated = {"metadata": {"name": "podcliquesets.grove.io"}}
    graphs = [{"metadata": {"finalizers": ["nvidia.com/finalizer"]}}, {"metadata": {}}]
    found = conflicts([unrelated, package_crd, operator_crd], {"dynamographdeployments.nvidia.com": graphs})
    assert [(c.crd, c.objects, c.operator_managed) for c in found] == [("dynamographdeployments.nvidia.com", 2, 1)]


def test_the_function_refuses_an_xr_the_operator_manages_naming_the_way_out() -> None:
    xr = {
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns", "finalizers": ["nvidia.com/finalizer"]},
    }
    message = operator_managed(xr)
    assert message is not None
    assert "ns/g" in message and "nvidia.com/finalizer" in message and "function-dynamo migrate release" in message
    assert operator_managed({"metadata": {"finalizers": ["composite.apiextensions.crossplane.io"]}}) is None
    assert operator_managed({}) is None


def test_every_step_runs_behind_the_guard() -> None:
    from functions.contract import StepRequest
    from functions.kinds import STEPS, run_step

    xr = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns", "finalizers": ["nvidia.com/finalizer"]},
        "spec": {"components": []},
    }
    for name, step in sorted(STEPS.items()):
        rsp = run_step(step, StepRequest(input={}, observed_composite=xr, observed_resources={}))
        assert rsp.fatal, name
        assert [r.reason for r in rsp.results] == ["ManagedByUpstreamOperator"], name
        assert not rsp.desired_resources, name


def test_the_guard_leaves_malformed_metadata_to_the_steps() -> None:
    assert operator_managed({"metadata": ["x"]}) is None
    assert operator_managed({"metadata": {"finalizers": "nvidia.com/finalizer"}}) is None
