"""Status for real: the tests/scenarios/status scenarios played on a real Crossplane.

The test plays the controllers this package does not run, from each scenario's files: Grove (the
PodCliques and PodCliqueScalingGroups of ``required.yaml``, created owned by the real PodCliqueSet, and
the PodCliqueSet's status from ``observed.yaml``) or, on the component pathway, the Deployment
controller (every Deployment the nested component deployments composed reports its replicas ready).
The claim's status and conditions must then equal what the in-process render derives from the same
files, and a ready scenario must reach ``Ready=True`` and ``state: successful``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fixtures.corpus import example_claim
from functions.tooling.manifests import claim_to_xr, find_composition, load_documents
from functions.tooling.pipeline import render
from harness.apiserver import ensure_namespace, resource_path
from harness.controller_play import (
    STATUS,
    play_deployments,
    play_grove,
    played_statuses,
)
from harness.crossplane_core import Crossplane
from harness.poll import SETTLE_SECONDS, until

REPO = Path(__file__).resolve().parents[1]
# Scenarios whose state a test can reach by playing controllers (no xr-overlay: the others need an XR
# status written by an earlier reconcile, which only their history gives).
SCENARIOS = sorted(d.name for d in STATUS.iterdir() if d.is_dir() and not (d / "xr-overlay.json").exists())


def _claim(scenario: str, namespace: str) -> dict[str, Any]:
    claim = yaml.safe_load((example_claim(scenario.rsplit("-", 1)[0])).read_text())
    claim["metadata"]["namespace"] = namespace
    return claim


def expected_status(scenario: str) -> dict[str, Any]:
    """What the in-process render derives from the scenario's files (namespace as they were written)."""
    directory = STATUS / scenario
    xr = claim_to_xr(_claim(scenario, "dynamo-demo"))
    observed = load_documents(directory / "observed.yaml")
    required = load_documents(directory / "required.yaml") if (directory / "required.yaml").exists() else []
    return render(xr, find_composition(xr, load_documents(REPO / "compositions")), observed, required).composite[
        "status"
    ]


def comparable(status: dict[str, Any]) -> dict[str, Any]:
    """The status fields and conditions the function writes (not Crossplane's bookkeeping or times)."""
    fields = {k: v for k, v in status.items() if k in ("state", "services", "components", "rollingUpdate", "restart")}
    conditions = {
        # A claim's Ready has Crossplane's own reason and message ("Claim is waiting for composite resource
        # to become Ready"); its status is the XR's.
        c["type"]: (c.get("status"),)
        if c["type"] == "Ready"
        else (c.get("status"), c.get("reason"), c.get("message", ""))
        for c in status.get("conditions") or []
        if c["type"] not in ("Synced", "Responsive")
    }
    return {**fields, "conditions": conditions}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_status_scenario_on_a_real_crossplane_reports_what_the_preview_derives(
    scenario: str, crossplane: Crossplane
) -> None:
    cp = crossplane.cp
    namespace = f"status-{scenario}"
    ensure_namespace(cp.client, namespace)
    claim = _claim(scenario, namespace)
    version = claim["apiVersion"].split("/")[1]
    claim_path = resource_path("nvidia.com", version, "dynamographdeployments", namespace, claim["metadata"]["name"])
    cp.client.create(resource_path("nvidia.com", version, "dynamographdeployments", namespace), claim)
    if (STATUS / scenario / "required.yaml").exists():
        play_grove(cp, scenario, namespace)
    else:
        want = sum(
            1
            for o in load_documents(STATUS / scenario / "observed.yaml")
            if o["kind"].removeprefix("X") == "DynamoComponentDeployment"
        )
        until(
            f"{want} Deployments",
            lambda: len(cp.client.get(f"/apis/apps/v1/namespaces/{namespace}/deployments")["items"]) >= want,
        )
        play_deployments(cp, namespace, statuses=played_statuses(scenario))
    want = comparable(expected_status(scenario))
    got: dict[str, Any] = {}

    def settled() -> bool:
        nonlocal got
        got = comparable(cp.client.get(claim_path).get("status") or {})
        return got == want

    until("the claim's status as rendered in-process", settled, SETTLE_SECONDS, every=1,
          where=lambda: f"claim status:\n{yaml.safe_dump(got)}\nin-process:\n{yaml.safe_dump(want)}")  # fmt: skip
    if scenario.endswith("-ready"):
        assert got["state"] == "successful" and got["conditions"]["Ready"][0] == "True"
