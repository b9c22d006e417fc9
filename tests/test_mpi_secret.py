"""The MPI SSH Secret of TRT-LLM multinode pods: copied from the platform's source Secret, or looked up, and
reported in the ``MPISSHSecretReady`` condition (docs/upstream/at-head.md §15, issue 12 Deliver 3)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fixtures.rendering import render_xr
from fixtures.tooling import REPO
from functions.api.operator_config import OPERATOR_CONFIG_REQUIREMENT
from functions.contract import StepRequest, StepResponse
from functions.kinds.graph.graph_render_step import render_graph_deployment
from functions.kube.mpi_secret import CONDITION, REQUIREMENT, RESOURCE, ssh_secret_name
from functions.tooling.manifests import claim_to_xr, load_documents

CLAIM = load_documents(REPO / "examples" / "v1alpha1" / "trtllm-multinode.yaml")[0]
KEY_DATA = {"private.key": "cHJpdmF0ZQ==", "private.key.pub": "cHVibGlj"}
SOURCE = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "mpi-run-ssh-secret", "namespace": "dynamo-system", "uid": "u", "resourceVersion": "7"},
    "type": "Opaque",
    "data": KEY_DATA,
}


def operator_config(mpi: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.crossplane.io/v1beta1",
        "kind": "EnvironmentConfig",
        "metadata": {"name": "dynamo-platform"},
        "data": {"mpi": mpi},
    }


def step(claim: dict[str, Any], mpi: dict[str, Any], secrets: list[dict[str, Any]]) -> StepResponse:
    required = {OPERATOR_CONFIG_REQUIREMENT: [operator_config(mpi)], REQUIREMENT: secrets}
    rsp = render_graph_deployment(StepRequest(input={}, observed_composite=claim_to_xr(claim), required=required))
    assert not rsp.fatal, rsp.results
    return rsp


def condition(rsp: StepResponse) -> tuple[str, str, str]:
    (found,) = [c for c in rsp.conditions if c.type == CONDITION]
    return found.status, found.reason, found.message


def mounted_secrets(rsp: StepResponse) -> set[str]:
    pcs = rsp.desired_resources["podcliqueset"].resource
    return {
        volume["secret"]["secretName"]
        for clique in pcs["spec"]["template"]["cliques"]
        for volume in clique["spec"]["podSpec"].get("volumes") or []
        if "secret" in volume
    }


COPY = {"sshSecretName": "mpi-run-ssh-secret", "sshSecretNamespace": "dynamo-system"}


def test_the_source_is_copied_into_the_graphs_namespace_under_the_graphs_name() -> None:
    rsp = step(CLAIM, COPY, [SOURCE])
    secret = rsp.desired_resources[RESOURCE].resource
    assert secret == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "trtllm-multinode-mpi-run-ssh-secret",
            "namespace": "dynamo-demo",
            "labels": {"nvidia.com/dynamo-graph-deployment-name": "trtllm-multinode"},
        },
        "type": "Opaque",
        "data": KEY_DATA,
    }
    assert mounted_secrets(rsp) == {"trtllm-multinode-mpi-run-ssh-secret"}
    assert rsp.requirements[REQUIREMENT].namespace == "dynamo-system"
    assert rsp.requirements[REQUIREMENT].match_name == "mpi-run-ssh-secret"
    assert condition(rsp)[:2] == ("True", "Copied")


def test_a_missing_source_composes_nothing_and_says_what_to_create() -> None:
    rsp = step(CLAIM, COPY, [])
    assert RESOURCE not in rsp.desired_resources
    status, reason, message = condition(rsp)
    assert (status, reason) == ("False", "SourceNotFound")
    assert "dynamo-system/mpi-run-ssh-secret" in message and "private.key" in message


def test_without_a_source_the_pods_mount_the_hand_made_secret_which_is_looked_up() -> None:
    missing = step(CLAIM, {}, [])
    assert RESOURCE not in missing.desired_resources
    assert mounted_secrets(missing) == {"mpi-run-ssh-secret"}
    assert missing.requirements[REQUIREMENT].namespace == "dynamo-demo"
    status, reason, message = condition(missing)
    assert (status, reason) == ("False", "NotFound")
    assert "does not create" in message and "sshSecretNamespace" in message
    hand_made = copy.deepcopy(SOURCE)
    hand_made["metadata"]["namespace"] = "dynamo-demo"
    found = step(CLAIM, {}, [hand_made])
    assert RESOURCE not in found.desired_resources
    assert condition(found)[:2] == ("True", "Found")


def test_graphs_without_trtllm_multinode_neither_read_nor_report_it() -> None:
    claim = load_documents(REPO / "examples" / "dgd" / "vllm-agg.yaml")[0]
    rsp = step(claim, COPY, [SOURCE])
    assert REQUIREMENT not in rsp.requirements
    assert RESOURCE not in rsp.desired_resources
    assert all(c.type != CONDITION for c in rsp.conditions)


def test_a_long_graph_name_keeps_the_copy_a_valid_volume_name() -> None:
    from functions.api.operator_config import OperatorConfig

    name = ssh_secret_name("g" * 60, OperatorConfig.model_validate({"mpi": COPY}))
    assert len(name) == 63
    assert name.startswith("g" * 40)


@pytest.mark.parametrize("grove", [True, False], ids=["grove", "component-pathway"])
def test_the_pipeline_copies_it_on_both_pathways(grove: bool) -> None:
    claim = copy.deepcopy(CLAIM)
    if not grove:
        claim["metadata"].setdefault("annotations", {})["nvidia.com/enable-grove"] = "false"
    required = [operator_config(COPY), SOURCE]
    objects = render_xr(claim_to_xr(claim), required=required)
    secrets = [o for o in objects if o["kind"] == "Secret"]
    assert [s["metadata"]["name"] for s in secrets] == ["trtllm-multinode-mpi-run-ssh-secret"]
    if not grove:
        worker = next(o for o in objects if o["kind"] == "XDynamoComponentDeployment" and "multinode" in o["spec"])
        nested = render_xr(worker, required=required)
        (lws,) = [o for o in nested if o["kind"] == "LeaderWorkerSet"]
        volumes = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["volumes"]
        secret_volumes = [v for v in volumes if "secret" in v]
        assert [v["secret"]["secretName"] for v in secret_volumes] == ["trtllm-multinode-mpi-run-ssh-secret"]
        assert not [o for o in nested if o["kind"] == "Secret"]  # the graph composes it, not its DCD
