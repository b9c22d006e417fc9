"""The real kube-apiserver judges our schemas: every CRD Crossplane derives from our XRDs is accepted.

The API server compiles every CEL rule and estimates its cost against the budget; a CRD it refuses
would leave the XRD un-Established in a real Crossplane, and no claim could be applied. Upstream's
own CRDs are accepted by the same server (under another group, as a claim CRD holds their names):
the budget is reachable with bounds on what rules iterate.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fixtures.tooling import require_shared
from harness.apiserver import CRDS, Installed, derived_crds
from harness.controlplane import APIError, ControlPlane

DERIVED = derived_crds()
UPSTREAM_TEST_GROUP = "upstream.dynamo.test"


@pytest.mark.parametrize("name", [c["metadata"]["name"] for c in DERIVED])
def test_the_api_server_accepts_the_derived_crd(
    name: str, installed: dict[str, Installed], control_plane: ControlPlane
) -> None:
    got = installed[name]
    assert got.accepted, f"the API server refused CRD {name}: {got.message} ({control_plane.where()})"


def upstream_crds() -> list[tuple[str, dict[str, Any]]]:
    root = require_shared("upstream", "crds")
    import yaml

    return [(p.name, yaml.safe_load(p.read_text())) for p in sorted(root.glob("*.yaml"))]


def renamed(crd: dict[str, Any], group: str) -> dict[str, Any]:
    out = copy.deepcopy(crd)
    out["spec"]["group"] = group
    out["metadata"] = {"name": f"{crd['spec']['names']['plural']}.{group}"}
    out.pop("status", None)
    return out


def test_the_api_server_accepts_upstreams_crds(control_plane: ControlPlane) -> None:
    """A server-side dry run of each upstream CRD (full validation, CEL cost included, nothing stored)."""
    refused = {}
    for name, crd in upstream_crds():
        try:
            control_plane.client.create(CRDS, renamed(crd, UPSTREAM_TEST_GROUP), dry_run=True)
        except APIError as err:
            refused[name] = err.status.get("message")
    assert not refused, refused
