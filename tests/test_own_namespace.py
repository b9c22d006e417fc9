"""A tenant's composite reads and composes in its own namespace only (docs/security.md, "The threat model").

Crossplane pins what a namespaced XR composes to the XR's namespace, but not the required resources a step asks
for: a selector naming namespace B is answered from B with Crossplane's rights. Every step takes the namespace it
reads from from ``claimed_object``, so a namespaced XR whose labels or annotations name another namespace (a tenant
writes both) is refused with a Fatal naming the field, before anything is asked for. Each case runs the real step
on the XR the default package's API server stores for an example manifest.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from fixtures.tooling import REPO
from functions.api.normalise import CLAIM_NAMESPACE_LABEL, COMPOSED_NAMESPACE_ANNOTATION
from functions.api.operator_config import OPERATOR_CONFIG_REQUIREMENT
from functions.contract import StepRequest, StepResponse
from functions.kinds import STEPS
from functions.tooling.manifests import claim_to_xr, load_documents
from functions.tooling.render import admitted_xr

Obj = dict[str, Any]
OWN, OTHER = "team-a", "team-b"
EXAMPLES = REPO / "examples"
PLATFORM = load_documents(EXAMPLES / "operator-config.yaml")[0]

# (step input kind, example manifest, required resources that make the step ask for its lookups)
CASES: dict[str, tuple[str, Path, dict[str, list[Obj]]]] = {
    "dgd render": ("GraphDeployment", EXAMPLES / "dgd" / "vllm-agg.yaml", {}),
    "dgd render, checkpointRef": ("GraphDeployment", EXAMPLES / "checkpoint" / "vllm-disagg-checkpoint-ref.yaml", {}),
    "dgd render, TRT-LLM multinode": ("GraphDeployment", EXAMPLES / "dgd" / "trtllm-multinode.yaml", {}),
    "dgd status": ("GraphStatus", EXAMPLES / "dgd" / "vllm-agg.yaml", {}),
    "dcd": ("ComponentDeployment", EXAMPLES / "dcd" / "vllm-worker.yaml", {}),
    "dgdr": ("GraphDeploymentRequest", EXAMPLES / "dgdr" / "vllm-sla.yaml", {}),
    "dgdr, model cache PVC": ("GraphDeploymentRequest", EXAMPLES / "dgdr" / "sglang-throughput.yaml", {}),
    "model": ("Model", EXAMPLES / "model" / "qwen3-base.yaml", {}),
    "checkpoint": ("Checkpoint", EXAMPLES / "checkpoint" / "vllm-checkpoint.yaml", {}),
}
# Where a tenant could write another namespace into a namespaced XR.
SPOOFS = {
    "annotation": ("annotations", COMPOSED_NAMESPACE_ANNOTATION),
    "claim label": ("labels", CLAIM_NAMESPACE_LABEL),
}


def xr_for(example: Path) -> Obj:
    doc = copy.deepcopy(load_documents(example)[0])
    doc["metadata"]["namespace"] = OWN
    return admitted_xr(doc, OWN, "Strict")


def run(kind: str, xr: Obj, required: dict[str, list[Obj]]) -> StepResponse:
    """The step of ``kind`` on ``xr``; the status step after the render step, whose PodCliqueSet it reads."""
    desired: dict[str, Obj] = {}
    if kind == "GraphStatus":
        rendered = run("GraphDeployment", xr, required)
        desired = {key: d.resource for key, d in rendered.desired_resources.items()}
    req = StepRequest(
        input={"apiVersion": "dynamo.fn.crossplane.io/v1beta1", "kind": kind},
        observed_composite=xr,
        desired_resources=desired,
        required={OPERATOR_CONFIG_REQUIREMENT: [copy.deepcopy(PLATFORM)], **required},
    )
    return STEPS[kind](req)


def outside(rsp: StepResponse) -> dict[str, str | None]:
    """The requirements read from anywhere but the tenant's namespace, but the platform's own configuration."""
    return {
        key: sel.namespace
        for key, sel in rsp.requirements.items()
        if sel.namespace != OWN and sel.kind != "EnvironmentConfig" and not (sel.kind == "Node" and not sel.namespace)
    }


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_lookup_stays_in_the_composites_namespace(case: str) -> None:
    kind, example, required = CASES[case]
    xr = xr_for(example)
    assert xr["metadata"]["namespace"] == OWN
    rsp = run(kind, xr, required)
    assert not rsp.fatal, [r.message for r in rsp.results]
    assert outside(rsp) == {}


def test_the_cases_ask_for_what_a_tenant_could_aim_elsewhere() -> None:
    """The table reaches the lookups a spoofed namespace would redirect, so the next test means something."""
    asked = {
        (sel.kind, sel.match_name is not None)
        for kind, example, required in CASES.values()
        for sel in run(kind, xr_for(example), required).requirements.values()
    }
    for wanted in (
        ("DynamoCheckpoint", True),
        ("Secret", True),
        ("ConfigMap", True),
        ("EndpointSlice", False),
        ("Pod", False),
        ("PodClique", False),
        ("PodCliqueScalingGroup", False),
        ("PersistentVolumeClaim", True),
    ):
        assert wanted in asked, wanted


@pytest.mark.parametrize("spoof", sorted(SPOOFS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_another_namespace_in_the_metadata_is_fatal_naming_the_field(case: str, spoof: str) -> None:
    kind, example, required = CASES[case]
    where, key = SPOOFS[spoof]
    xr = xr_for(example)
    xr["metadata"].setdefault(where, {})[key] = OTHER
    rsp = run(kind, xr, required)
    kind_name = load_documents(example)[0]["kind"]
    assert [(r.severity, r.message) for r in rsp.results if r.severity == "fatal"] == [
        ("fatal", f"metadata.{where}[{key}]: {OTHER!r} must be the {kind_name}'s own namespace ({OWN})")
    ]
    assert outside(rsp) == {}
    assert not rsp.desired_resources


@pytest.mark.parametrize("spoof", sorted(SPOOFS))
def test_the_own_namespace_written_again_is_accepted(spoof: str) -> None:
    """Crossplane or a migration may write the claim labels of the same namespace: nothing to refuse."""
    kind, example, required = CASES["dgd render"]
    where, key = SPOOFS[spoof]
    xr = xr_for(example)
    xr["metadata"].setdefault(where, {})[key] = OWN
    rsp = run(kind, xr, required)
    assert not rsp.fatal, [r.message for r in rsp.results]
    assert outside(rsp) == {}


def test_a_claims_xr_keeps_its_claims_namespace() -> None:
    """The claims package's XR is cluster-scoped: Crossplane's spec.claimRef names the claim's namespace, and a
    label the claim carries over does not move it."""
    claim = copy.deepcopy(load_documents(EXAMPLES / "model" / "qwen3-base.yaml")[0])
    claim["metadata"]["namespace"] = OWN
    claim["metadata"].setdefault("annotations", {})[COMPOSED_NAMESPACE_ANNOTATION] = OTHER
    xr = claim_to_xr(claim)
    assert "namespace" not in xr["metadata"]
    rsp = run("Model", xr, {})
    assert not rsp.fatal, [r.message for r in rsp.results]
    assert outside(rsp) == {}
    assert {sel.namespace for sel in rsp.requirements.values()} == {OWN}
