"""Every upstream validation rule for the DGD and DynamoCheckpoint, fed its bad example where the catalogue says
it is enforced."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fixtures.catalogue import CATALOGUE, claim
from functions.api.operator_config import OPERATOR_CONFIG_REQUIREMENT
from functions.contract import StepRequest
from functions.kinds.checkpoint.checkpoint_step import dynamo_checkpoint
from functions.kinds.graph.graph_render_step import render_graph_deployment
from functions.kinds.model.model_step import dynamo_model
from functions.kinds.request.request_step import dynamo_graph_deployment_request
from functions.tooling.manifests import claim_to_xr, load_documents
from functions.tooling.validation import derive_crds, validate_object
from functions.xrd.rules import RULES

REPO = Path(__file__).resolve().parents[1]
ENFORCED_BY = {"xrd-schema", "xrd-cel", "function", "not-enforced"}


# The kinds a row can be about (``resource``, default DynamoGraphDeployment): XRD file and pipeline step.
KINDS = {
    "DynamoGraphDeployment": ("dynamographdeployments.yaml", render_graph_deployment),
    "DynamoCheckpoint": ("dynamocheckpoints.yaml", dynamo_checkpoint),
    "DynamoModel": ("dynamomodels.yaml", dynamo_model),
    "DynamoGraphDeploymentRequest": ("dynamographdeploymentrequests.yaml", dynamo_graph_deployment_request),
}


def platform_of(row: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The operator config a function row is checked under (``platform``: its data; none: upstream defaults)."""
    if row.get("platform") is None:
        return {}
    config = {"apiVersion": "apiextensions.crossplane.io/v1beta1", "kind": "EnvironmentConfig",
              "metadata": {"name": "dynamo-platform"}, "data": row["platform"]}  # fmt: skip
    return {OPERATOR_CONFIG_REQUIREMENT: [config]}


@pytest.fixture(scope="module")
def claim_crds() -> dict[str, dict[str, Any]]:
    crds = {}
    for kind, (xrd_file, _) in KINDS.items():
        (xrd,) = load_documents(REPO / "xrds" / xrd_file)
        crds[kind] = next(c for c in derive_crds(xrd) if c["spec"]["names"]["kind"] == kind)
    return crds


def test_catalogue_rows_are_well_formed() -> None:
    ids = [row["id"] for row in CATALOGUE]
    assert len(ids) == len(set(ids))
    for row in CATALOGUE:
        assert row["enforced_by"] in ENFORCED_BY, row["id"]
        assert row["rule"] and row["source"], row["id"]
        assert row.get("resource", "DynamoGraphDeployment") in KINDS, row["id"]
        if row["enforced_by"] == "not-enforced":
            assert row["why"], row["id"]
        else:
            assert row["example"] is not None and row["expect"]["path"] and row["expect"]["message"], row["id"]


def test_every_xrd_rule_has_a_catalogue_row() -> None:
    cel_rows = {row["id"] for row in CATALOGUE if row["enforced_by"] == "xrd-cel"}
    assert {rule.id for rule in RULES} <= cel_rows


ROWS = [row for row in CATALOGUE if row["enforced_by"] in ("xrd-schema", "xrd-cel")]


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_the_api_server_rejects_the_bad_example(row: dict[str, Any], claim_crds: dict[str, dict[str, Any]]) -> None:
    old = claim(row, row["old"]) if row.get("old") is not None else None
    crd = claim_crds[row.get("resource", "DynamoGraphDeployment")]
    violations = validate_object(claim(row, row["example"]), crd, old=old)
    expected = row["expect"]
    matching = [v for v in violations if v.path == expected["path"] and expected["message"] in v.message]
    assert matching, f"expected {expected} in {[str(v) for v in violations]}"
    if row["enforced_by"] == "xrd-cel":
        assert all(v.rule.startswith("cel") for v in matching)


FUNCTION_ROWS = [row for row in CATALOGUE if row["enforced_by"] == "function"]


@pytest.mark.parametrize("row", FUNCTION_ROWS, ids=[r["id"] for r in FUNCTION_ROWS])
def test_the_function_rejects_the_bad_example(row: dict[str, Any]) -> None:
    step = KINDS[row.get("resource", "DynamoGraphDeployment")][1]
    response = step(
        StepRequest(input={}, observed_composite=claim_to_xr(claim(row, row["example"])), required=platform_of(row))
    )
    expected = row["expect"]
    if row.get("kind") == "validation":  # the request fails (phase Failed), nothing is refused
        (condition,) = [c for c in response.conditions if c.type == "Validation"]
        assert [(r.severity, r.message) for r in response.results] == [("warning", condition.message)]  # an event
        assert (condition.status, condition.reason) == ("False", "ValidationFailed")
        assert condition.message.startswith(expected["path"]) and expected["message"] in condition.message
        return
    if row.get("kind") == "condition":
        assert not response.results
        (condition,) = [c for c in response.conditions if c.type == "DeprecatedFields"]
        assert condition.status == "True"
        assert expected["path"] in condition.message and expected["message"] in condition.message
        return
    (result,) = response.results
    assert result.severity == "fatal"
    assert result.message.startswith(expected["path"]), result.message
    assert expected["message"] in result.message


def test_good_examples_pass_the_function_rules() -> None:
    good = {"services": {"a": {"componentType": "frontend", "extraPodSpec": {"mainContainer": {"image": "r/f:1.0.0"}}}}}
    response = render_graph_deployment(StepRequest(input={}, observed_composite=claim_to_xr(claim({}, good))))
    assert not response.results
    assert [(c.type, c.status) for c in response.conditions] == [("DeprecatedFields", "False")]


def test_catalogue_figures() -> None:
    """The share of rules enforced (by the API server or the function) out of all catalogued."""
    enforced = [row for row in CATALOGUE if row["enforced_by"] != "not-enforced"]
    assert len(CATALOGUE) >= 60
    assert len(enforced) / len(CATALOGUE) > 0.9


UPDATE_ROWS = [row for row in ROWS if row.get("old") is not None]


@pytest.mark.parametrize("row", UPDATE_ROWS, ids=[r["id"] for r in UPDATE_ROWS])
def test_an_unchanged_update_passes(row: dict[str, Any], claim_crds: dict[str, dict[str, Any]]) -> None:
    """Transition rules must not reject an update that changes nothing."""
    unchanged = claim(row, row["old"])
    crd = claim_crds[row.get("resource", "DynamoGraphDeployment")]
    assert validate_object(unchanged, crd, old=unchanged) == []
