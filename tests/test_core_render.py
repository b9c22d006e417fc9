"""Crossplane core's own render engine (``crossplane internal render`` of the tested version, its real composite
reconciler) composes what ``function-dynamo render`` composes, for every example graph and status scenario.

The engine is stricter than ``crank render`` v2.2: observed resources must be controlled by the XR (by UID) and,
for a namespaced XR, sit in its namespace. The scenarios' observed resources are given the XR's UID for it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fixtures.core_render import comparable, core_render, require_core
from fixtures.corpus import EXAMPLE_CLAIMS, load_claim, status_example_xr
from fixtures.rendering import existing_pvcs
from fixtures.tooling import REPO
from functions.tooling.manifests import claim_to_xr, find_composition, load_documents
from functions.tooling.pipeline import render
from harness.server import serving

EXAMPLES = REPO / "examples"
COMPOSITIONS = load_documents(REPO / "compositions")
OPERATOR_CONFIG = load_documents(REPO / "examples" / "operator-config.yaml")
STATUS = REPO / "tests" / "scenarios" / "status"
XR_UID = "00000000-0000-4000-8000-00000000d9d0"
Obj = dict[str, Any]


@pytest.fixture(scope="module")
def address() -> Iterator[str]:
    require_core()
    with serving("--insecure") as where:
        yield where


def owned_by(objects: list[Obj], uid: str) -> list[Obj]:
    out = copy.deepcopy(objects)
    for obj in out:
        for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
            if ref.get("controller"):
                ref["uid"] = uid
    return out


def both(xr: Obj, address: str, observed: list[Obj], required: list[Obj]) -> tuple[Obj, Obj]:
    composition = find_composition(xr, COMPOSITIONS)
    ours = render(xr, composition, observed, required, converge=False)
    theirs = core_render(xr, composition, address, observed, required)
    return comparable(ours.composite, ours.composed), comparable(theirs["composite"], theirs["composed"])


@pytest.mark.parametrize("with_config", [False, True], ids=["defaults", "operator-config"])
@pytest.mark.parametrize(
    "claim_path", EXAMPLE_CLAIMS, ids=[p.relative_to(REPO / "examples").as_posix() for p in EXAMPLE_CLAIMS]
)
def test_core_render_composes_what_function_dynamo_render_composes(
    claim_path: Path, with_config: bool, address: str
) -> None:
    claim = load_claim(claim_path)
    required = existing_pvcs(claim) + (OPERATOR_CONFIG if with_config else [])
    ours, theirs = both(claim_to_xr(claim), address, [], required)
    assert theirs == ours


SCENARIOS = sorted(d for d in STATUS.iterdir() if d.is_dir())


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[d.name for d in SCENARIOS])
def test_core_render_derives_the_status_of_each_scenario_as_function_dynamo_render(
    scenario: Path, address: str
) -> None:
    xr = status_example_xr(scenario)
    xr["metadata"]["uid"] = XR_UID
    observed = owned_by(load_documents(scenario / "observed.yaml"), XR_UID)
    required = load_documents(scenario / "required.yaml") if (scenario / "required.yaml").exists() else []
    ours, theirs = both(xr, address, observed, required)
    assert theirs == ours
