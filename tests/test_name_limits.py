"""A graph whose name (with its namespace and component names) makes composed names the cluster refuses is refused
with a Fatal naming metadata.name, on both pathways, in both packages, at both API versions
(functions/kube/admissible.py; upstream's webhook admits it and its reconcile fails on the objects)."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from fixtures.corpus import load_claim
from fixtures.tooling import REPO
from functions.contract import StepRequest, StepResponse
from functions.kinds.component.component_step import component_deployment
from functions.kinds.graph.graph_render_step import render_graph_deployment
from functions.kube.admissible import MAX_LABEL, refused_names
from functions.tooling.manifests import as_xr, xr_name_for_claim

EXAMPLES = {
    "v1beta1": REPO / "examples" / "dgd" / "vllm-agg.yaml",
    "v1alpha1": REPO / "examples" / "v1alpha1" / "vllm-disagg.yaml",
}
FITS = re.compile(r"a name of at most (\d+) characters fits")


def graph(version: str, name: str, *, namespace: str = "ns", grove: bool = True) -> dict[str, Any]:
    doc = copy.deepcopy(load_claim(EXAMPLES[version]))
    doc["metadata"] = {"name": name, "namespace": namespace}
    if not grove:
        doc["metadata"]["annotations"] = {"nvidia.com/enable-grove": "false"}
    return doc


def render(doc: dict[str, Any], claims: bool) -> StepResponse:
    return render_graph_deployment(StepRequest(input={}, observed_composite=as_xr(doc, claims=claims)))


def fatal(response: StepResponse) -> str | None:
    return next((r.message for r in response.results if r.severity == "fatal"), None)


def composed(response: StepResponse) -> list[dict[str, Any]]:
    return [d.resource for d in response.desired_resources.values()]


CASES = [
    pytest.param(version, grove, claims, id=f"{version}-{'grove' if grove else 'components'}-{pkg}")
    for version in EXAMPLES
    for grove in (True, False)
    for claims, pkg in ((False, "namespaced"), (True, "claims"))
]


@pytest.mark.parametrize(("version", "grove", "claims"), CASES)
def test_a_name_too_long_for_the_composed_objects_is_refused_naming_metadata_name(
    version: str, grove: bool, claims: bool
) -> None:
    message = fatal(render(graph(version, "a" * 60, grove=grove), claims))
    assert message is not None and message.startswith("metadata.name: 'aaaa"), message
    assert f"at most {MAX_LABEL}" in message
    # the longest name that fits, as the message says, renders; one more character does not
    fits = int(FITS.search(message).group(1))  # type: ignore[union-attr]
    ok = render(graph(version, "a" * fits, grove=grove), claims)
    assert fatal(ok) is None, fatal(ok)
    assert not refused_names("a" * fits, composed(ok))
    assert fatal(render(graph(version, "a" * (fits + 1), grove=grove), claims)) is not None


@pytest.mark.parametrize(("version", "grove", "claims"), CASES)
def test_what_is_refused_is_what_upstream_names_after_the_graph(version: str, grove: bool, claims: bool) -> None:
    """Upstream cuts only the PodCliqueSet name; its component Services (a DCD's after the DCD), the selector
    label and the Dynamo namespace label carry the whole graph name."""
    message = fatal(render(graph(version, "a" * 60, grove=grove), claims))
    assert message is not None
    assert re.search(r'Service name "a{60}-\w+(-[0-9a-f]{8})?" is \d+ characters', message), message
    assert "PodCliqueSet" not in message  # cut to fit, as upstream's
    long_namespace = fatal(render(graph(version, "agg", namespace="n" * 60, grove=grove), claims))
    assert long_namespace is not None
    assert f'label nvidia.com/dynamo-namespace "{"n" * 60}-agg" is 64 characters, at most 63' in long_namespace


@pytest.mark.parametrize("claims", [False, True], ids=["namespaced", "claims"])
def test_a_service_name_must_start_with_a_letter(claims: bool) -> None:
    message = fatal(render(graph("v1beta1", "1agg"), claims))
    assert message is not None and message.startswith("metadata.name: '1agg'"), message
    assert 'Service name "1agg-frontend" must start with a letter' in message


def test_nothing_is_composed_when_refused() -> None:
    response = render(graph("v1beta1", "a" * 60), claims=False)
    assert fatal(response) is not None and not response.desired_resources


def test_a_long_component_deployment_name_keeps_upstreams_name_for_its_objects() -> None:
    """A namespaced DCD whose name is cut to fit Crossplane's 63 characters carries upstream's name, so its
    Service is upstream's (and refused when too long)."""
    doc = graph("v1beta1", "a" * 40, grove=False)
    doc["spec"]["components"][1]["name"] = "W" * 14  # "{40}-{14}-{hash8}" is 64: the DCD's XR name is cut
    response = render(doc, claims=False)
    message = fatal(response)
    assert message is not None and f'Service name "{"a" * 40}-{"w" * 14}-' in message, message
    doc["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0].pop("command")
    doc["spec"]["components"][1]["type"] = "planner"  # not a worker: no hash, "{40}-{14}" fits
    assert fatal(render(doc, claims=False)) is None


def test_a_standalone_component_deployment_is_checked_by_its_own_step() -> None:
    dcd = load_claim(REPO / "examples" / "v1alpha1" / "dcd-frontend.yaml")
    dcd["metadata"] = {"name": "a" * 60, "namespace": "dynamo-demo"}
    response = component_deployment(StepRequest(input={}, observed_composite=as_xr(dcd)))
    message = fatal(response)
    assert message is not None and message.startswith("metadata.name: 'aaaa"), message
    assert 'label nvidia.com/dynamo-namespace "dynamo-demo-' in message


def test_refused_names_reads_labels_selectors_and_dns1035_names_only() -> None:
    owner = "g" * 62
    objects = [
        {"kind": "Service", "metadata": {"name": f"{owner}-x"}, "spec": {"selector": {"s": f"{owner}-sel"}}},
        {"kind": "Deployment", "metadata": {"name": f"{owner}-deployment-names-may-be-long"}},
        {"kind": "PodCliqueSet", "spec": {"template": {"cliques": [{"labels": {"l": f"ns-{owner}"}}]}}},
        {"kind": "ConfigMap", "metadata": {"name": "c", "labels": {"other": "x" * 70}}},  # not from the name
        {"kind": "LeaderWorkerSet", "metadata": {"name": f"{owner}.v2"}},  # dots replaced, still too long
    ]
    assert [r.what for r in refused_names(owner, objects)] == [
        f'LeaderWorkerSet name "{owner}.v2"',
        f'Service name "{owner}-x"',
        f'label l "ns-{owner}"',
        f'label s "{owner}-sel"',
    ]


def test_a_claims_xr_name_is_cut_as_the_api_servers_name_generator_cuts_it() -> None:
    """Crossplane names a claim's XR with generateName "<claim>-": the base is cut to 58 characters."""
    assert xr_name_for_claim("agg", "ns").startswith("agg-") and len(xr_name_for_claim("agg", "ns")) == 9
    long = xr_name_for_claim("a" * 60, "ns")
    assert len(long) == 63 and long.startswith("a" * 58) and long[58] != "-"
