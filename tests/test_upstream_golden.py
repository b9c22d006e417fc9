"""Upstream's golden controller scenarios (``../shared/upstream/golden``), rendered by us and matched.

Each scenario's ``input.yaml`` is rendered in-process as ``function-dynamo render --nested`` does (the claim
admitted, its XR through the Composition's pipeline, then every nested composite it composes), in namespace
``clusterenv-golden`` (upstream's objects carry ``clusterenv-*`` namespaces), by ``fixtures/upstream_golden.py``.
Every expected object of ``output.yaml`` is then looked up among ours by (kind, name) and compared with
``golden_match.match``.

- A DynamoComponentDeployment is, here, the cluster-scoped XR ``XDynamoComponentDeployment`` the DGD composes;
  it is compared as the DCD it stands for: its claim kind, the name and namespace of its
  ``dynamo.fn.crossplane.io/claim-*`` annotations, its spec without Crossplane's machinery fields, as the
  API server stores it (admitted with its XRD's CRD).
- Upstream reads its objects back from a real API server; ours are desired state, so
  ``with_api_server_defaults`` adds what the API server would (built-in kinds' defaulting, CRD schema
  defaults), limited to what the expected files show.
- ``$var:<name>`` is any value, the same wherever the name appears in a scenario: values are bound by the
  expected objects that come before in the file, then by this one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fixtures.golden_match import match
from fixtures.tooling import shared_dir
from fixtures.upstream_golden import GOLDEN, expected_objects, golden_root, rendered, scenario_input
from functions.tooling.manifests import load_documents

SCENARIOS = ("dgd/grove", "dgd/components", "dcd/deployment", "dcd/lws", "dgdr/grove", "dgdr/lws", "dgdr/deployment")
MAX_MISMATCH_LINES = 15
OPEN_GAPS = Path(__file__).with_name("golden_open_gaps.yaml")

Obj = dict[str, Any]


def _of_kind(scenario: str, kind: str) -> list[Obj]:
    """Our objects of ``kind`` in the scenario's namespace (none when the render failed)."""
    namespace = scenario_input(scenario)["metadata"]["namespace"]
    objects = rendered(scenario).objects
    return [o for o in objects if o.get("kind") == kind and o["metadata"].get("namespace") == namespace]


def name_of(expected: Obj) -> Any:
    return (expected.get("metadata") or {}).get("name")


def named(expected_name: Any, candidates: list[Obj]) -> list[Obj]:
    """The candidates whose name matches the expected name (which may be a ``$glob:``/``$pattern:``)."""
    return [o for o in candidates if not match(expected_name, o["metadata"].get("name"), {})]


def variables_before(scenario: str, index: int) -> dict[str, Any]:
    """``$var:`` values bound by the scenario's expected objects before ``index`` (those we have)."""
    variables: dict[str, Any] = {}
    for expected in expected_objects(scenario)[:index]:
        found = named(name_of(expected), _of_kind(scenario, expected["kind"]))
        if len(found) == 1:
            match(expected, found[0], variables)
    return variables


def scenario_id(scenario: str) -> str:
    return scenario.replace("/", "-")


def object_id(expected: Obj) -> str:
    name = str(name_of(expected))
    for prefix in ("$glob:", "$pattern:"):
        name = name.removeprefix(prefix)
    return f"{expected.get('kind')}/{name}"


def _object_cases() -> list[Any]:
    root = shared_dir().joinpath(*GOLDEN)
    cases = []
    for scenario in SCENARIOS:
        output = root / scenario / "output.yaml"
        if not output.is_file():
            cases.append(pytest.param(scenario, -1, id=f"{scenario_id(scenario)}/-"))
            continue
        for index, expected in enumerate(load_documents(output)):
            cases.append(pytest.param(scenario, index, id=f"{scenario_id(scenario)}/{object_id(expected)}"))
    return cases


def open_gaps() -> dict[str, list[str]]:
    """``golden_open_gaps.yaml``: per case, the differences from upstream HEAD not closed yet."""
    return yaml.safe_load(OPEN_GAPS.read_text()) or {}


def object_problems(scenario: str, index: int) -> list[str]:
    """Where our counterpart of the scenario's expected object ``index`` differs from it."""
    error = rendered(scenario).error
    if error is not None:
        return [f"our render failed: {error}"]
    expected = expected_objects(scenario)[index]
    candidates = _of_kind(scenario, expected["kind"])
    found = named(name_of(expected), candidates)
    if len(found) != 1:
        names = sorted(o["metadata"].get("name") for o in candidates)
        return [f"{len(found)} {expected['kind']} named {name_of(expected)!r} among ours: {names}"]
    return match(expected, found[0], variables_before(scenario, index))


def kind_set_problems(scenario: str) -> list[str]:
    """Per expected kind, our objects that pair with no expected name, and expected names we lack."""
    error = rendered(scenario).error
    if error is not None:
        return [f"our render failed: {error}"]
    problems: list[str] = []
    by_kind: dict[str, list[Any]] = {}
    for expected in expected_objects(scenario):
        by_kind.setdefault(expected["kind"], []).append(name_of(expected))
    for kind, names in by_kind.items():
        unclaimed = _of_kind(scenario, kind)
        for name in names:
            found = named(name, unclaimed)
            if len(found) != 1:
                problems.append(f"{kind} {name!r}: {len(found)} of ours match")
            unclaimed = [o for o in unclaimed if o not in found[:1]]
        problems += [f"{kind} {o['metadata'].get('name')!r}: not expected" for o in unclaimed]
    return problems


def assert_only_open_gaps(case: str, problems: list[str]) -> None:
    """Every difference is a listed open gap, and every listed gap is still a difference."""
    gaps = open_gaps().get(case, [])
    new = [p for p in problems if p not in gaps]
    closed = [g for g in gaps if g not in problems]
    message = []
    if new:
        message += [f"{len(new)} difference(s) from upstream not in {OPEN_GAPS.name}:", *new[:MAX_MISMATCH_LINES]]
    if closed:
        message += [f"{len(closed)} gap(s) closed: remove them from {OPEN_GAPS.name}:", *closed]
    if message:
        pytest.fail("\n".join(message), pytrace=False)


@pytest.mark.parametrize(("scenario", "index"), _object_cases())
def test_expected_object_matches_ours(scenario: str, index: int) -> None:
    golden_root()
    expected = expected_objects(scenario)[index]
    assert_only_open_gaps(f"{scenario_id(scenario)}/{object_id(expected)}", object_problems(scenario, index))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=scenario_id)
def test_each_expected_kind_holds_exactly_the_expected_objects(scenario: str) -> None:
    golden_root()
    assert_only_open_gaps(f"{scenario_id(scenario)}/kinds", kind_set_problems(scenario))
