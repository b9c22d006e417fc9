"""A component's main image and the runtime version it names (docs/upstream/operator.md §5.6 rule 7).

Upstream's webhook wants an image on every component's main container and, unless the component sets
``runtimeVersionOverride``, a semantic-version tag on it; on update only when the image or the override changes.
The render step refuses what it would refuse on create; in a cluster it has no old object, so what the graph
composes now stands for it (``function-dynamo validate --old`` compares with the old manifest instead).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fixtures.corpus import (
    EXAMPLE_CLAIMS,
    RUNTIME_VERSION,
    as_upstream_admits,
    corpus_dgds,
    has_main_images,
    load_claim,
)
from fixtures.gms import failover_graph
from fixtures.tooling import REPO
from functions.api.operator_config import OPERATOR_CONFIG_REQUIREMENT
from functions.contract import StepRequest, StepResponse
from functions.kinds.component.component_step import component_deployment
from functions.kinds.component.webhook_rules import graph_main_images
from functions.kinds.graph.graph_render_step import composed_main_images, render_graph_deployment
from functions.kube.runtime_version import image_tag, image_tag_version
from functions.tooling.manifests import claim_to_xr, load_documents

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime"
PLATFORM = load_documents(REPO / "examples" / "operator-config.yaml")


@pytest.mark.parametrize(
    ("image", "tag", "version"),
    [
        (f"{IMAGE}:1.4.0", "1.4.0", "1.4.0"),
        (f"{IMAGE}:v1.4.0", "v1.4.0", "1.4.0"),
        (f"{IMAGE}:V1.4.0-rc.1+build.5", "V1.4.0-rc.1+build.5", "1.4.0"),
        (f"{IMAGE}:1.4.0@sha256:0a1b", "1.4.0", "1.4.0"),  # the digest is not the tag
        (" runtime:1.4.0 ", "1.4.0", "1.4.0"),
        ("registry:5000/runtime:1.4.0", "1.4.0", "1.4.0"),
        ("registry:5000/runtime", "", None),  # a port is no tag
        (f"{IMAGE}@sha256:0a1b", "", None),
        (f"{IMAGE}:my-tag", "my-tag", None),
        (f"{IMAGE}:latest", "latest", None),
        (f"{IMAGE}:1.4", "1.4", None),
        (f"{IMAGE}:01.4.0", "01.4.0", None),  # leading zeros
        (f"{IMAGE}:1.4.0-01", "1.4.0-01", None),  # a numeric pre-release with a leading zero
        (f"{IMAGE}:1.4.0-", "1.4.0-", None),
        ("", "", None),
    ],
)
def test_the_tag_and_the_version_it_names(image: str, tag: str, version: str | None) -> None:
    assert image_tag(image) == tag
    assert image_tag_version(image) == version


def v1alpha1(image: str | None, **service: Any) -> dict[str, Any]:
    main = {"image": image} if image is not None else {}
    frontend = {**service, "componentType": "frontend", "extraPodSpec": {"mainContainer": main}}
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {"services": {"Frontend": frontend}},
    }


def v1beta1(*containers: dict[str, Any], **component: Any) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {
            "components": [
                {"name": "Frontend", "type": "frontend", **component},
                {"name": "Worker", "type": "worker", "podTemplate": {"spec": {"containers": list(containers)}}},
            ]
        },
    }


def step(claim: dict[str, Any], observed: dict[str, dict[str, Any]] | None = None, **required: Any) -> StepResponse:
    return render_graph_deployment(
        StepRequest(
            input={}, observed_composite=claim_to_xr(claim), observed_resources=observed or {}, required=required
        )
    )


def fatal(rsp: StepResponse) -> str | None:
    return next((r.message for r in rsp.results if r.severity == "fatal"), None)


FRONTEND = {"podTemplate": {"spec": {"containers": [{"name": "main", "image": f"{IMAGE}:1.0.0"}]}}}


@pytest.mark.parametrize(
    ("claim", "refusal"),
    [
        (v1alpha1(f"{IMAGE}:1.0.0"), None),
        (v1alpha1(f"{IMAGE}:my-tag", runtimeVersionOverride="1.4.0"), None),
        (v1alpha1(f"{IMAGE}:my-tag"), "spec.services.Frontend.runtimeVersionOverride: is required when"),
        (v1alpha1(None), "spec.services.Frontend.extraPodSpec.mainContainer.image: is required"),
        (v1beta1({"name": "main", "image": f"{IMAGE}:v1.0.0"}, **FRONTEND), None),
        (
            v1beta1({"name": "sidecar", "image": "s:1"}, {"name": "main", "image": f"{IMAGE}:latest"}, **FRONTEND),
            "spec.components[1].runtimeVersionOverride: is required when",
        ),
        (
            v1beta1({"name": "sidecar", "image": "s:1"}, {"name": "main"}, **FRONTEND),
            "spec.components[1].podTemplate.spec.containers[1].image: is required",
        ),
        (v1beta1({"name": "main", "image": f"{IMAGE}:1.0.0"}), "spec.components[0].podTemplate.spec.containers: is"),
    ],
    ids=["semver", "override", "placeholder", "no-image", "v-semver", "latest", "main-without-image", "no-main"],
)
def test_the_render_step_refuses_what_upstreams_webhook_refuses(claim: dict[str, Any], refusal: str | None) -> None:
    rsp = step(claim)
    if refusal is None:
        assert fatal(rsp) is None and rsp.desired_resources
    else:
        assert (fatal(rsp) or "").startswith(refusal), rsp.results
        assert not rsp.desired_resources  # nothing is composed


def test_a_graph_keeps_an_image_it_already_runs_without_a_version() -> None:
    """A graph composed before the rule (an earlier package) keeps reconciling while its images and overrides stay:
    upstream admits such an update. A new image without a version is refused; what exists stays composed."""
    legacy = v1alpha1(f"{IMAGE}:my-tag")
    composed = step(as_upstream_admits(legacy))  # what an earlier package composed: the override changes nothing
    assert fatal(composed) is None
    observed = {name: r.resource for name, r in composed.desired_resources.items()}
    assert fatal(step(legacy)) is not None  # as a new graph
    edited = copy.deepcopy(legacy)
    edited["spec"]["services"]["Frontend"]["replicas"] = 2
    assert fatal(step(edited, observed)) is None
    retagged = v1alpha1(f"{IMAGE}:other-tag")
    assert (fatal(step(retagged, observed)) or "").startswith("spec.services.Frontend.runtimeVersionOverride")


def test_the_component_pathway_ratchets_on_its_component_deployments() -> None:
    legacy = v1beta1({"name": "main", "image": f"{IMAGE}:my-tag"}, **FRONTEND)
    legacy["metadata"]["annotations"] = {"nvidia.com/enable-grove": "false"}
    composed = step(as_upstream_admits(legacy))
    observed = {name: r.resource for name, r in composed.desired_resources.items()}
    assert any(o["kind"].endswith("DynamoComponentDeployment") for o in observed.values())
    assert fatal(step(legacy, observed)) is None
    legacy["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["image"] = f"{IMAGE}:other-tag"
    assert (fatal(step(legacy, observed)) or "").startswith("spec.components[1].runtimeVersionOverride")


def test_what_a_graph_composes_shows_each_components_main_image() -> None:
    """The ratchet reads a component's image back from what is composed: on both pathways, for every example and
    corpus graph (an intra-pod failover engine, a v1alpha1 component deployment, a multinode leader and worker)."""
    graphs = [load_claim(p) for p in EXAMPLE_CLAIMS]
    graphs += [as_upstream_admits(d) for _, d in corpus_dgds() if d.get("spec") and has_main_images(d)]
    failover = failover_graph()
    failover["metadata"]["name"] = "intra-pod-failover"
    graphs.append(failover)
    checked: set[str] = set()
    for i, graph in enumerate(graphs):
        for grove in ("true", "false"):
            claim = copy.deepcopy(graph)
            claim["metadata"].setdefault("namespace", "ns")
            claim["metadata"].setdefault("annotations", {})["nvidia.com/enable-grove"] = grove
            rsp = step(claim, **{OPERATOR_CONFIG_REQUIREMENT: PLATFORM})  # the checkpoint gate on
            if fatal(rsp) is not None:  # what one pathway refuses (Grove-only fields)
                continue
            composed = composed_main_images({k: r.resource for k, r in rsp.desired_resources.items()})
            for main in graph_main_images(claim["spec"]):
                assert main.image in composed[main.component].images, (claim["metadata"]["name"], grove, main)
            checked.add(f"{i} {claim['metadata']['name']}")
    assert len(checked) == len(graphs)  # each on one pathway at least
    cliques = step(failover).desired_resources["podcliqueset"].resource["spec"]["template"]["cliques"]
    assert any(c["name"] == "engine-0" for clique in cliques for c in clique["spec"]["podSpec"]["containers"])


def test_as_upstream_admits_sets_the_override_only_where_upstream_wants_it() -> None:
    claim = v1beta1(
        {"name": "main", "image": f"{IMAGE}:my-tag"}, podTemplate={"spec": {"containers": [{"name": "main"}]}}
    )
    admitted = as_upstream_admits(claim)
    assert admitted["spec"]["components"][1]["runtimeVersionOverride"] == RUNTIME_VERSION
    assert "runtimeVersionOverride" not in admitted["spec"]["components"][0]  # no image: no version helps
    assert "runtimeVersionOverride" not in claim["spec"]["components"][1]  # a copy
    assert as_upstream_admits(v1alpha1(f"{IMAGE}:1.0.0")) == v1alpha1(f"{IMAGE}:1.0.0")


def dcd(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
            "metadata": {"name": "d", "namespace": "ns"}, "spec": {"backendFramework": "vllm", **spec}}  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "refusal"),
    [
        ({"extraPodSpec": {"mainContainer": {"image": f"{IMAGE}:my-tag"}}}, None),  # a DCD needs no version
        ({}, "spec.extraPodSpec.mainContainer.image: is required"),
        (
            {"name": "d", "type": "worker", "podTemplate": {"spec": {"containers": [{"name": "main"}]}}},
            "spec.podTemplate.spec.containers[0].image: is required",
        ),
    ],
    ids=["placeholder-tag", "v1alpha1-no-image", "v1beta1-no-image"],
)
def test_a_component_deployment_needs_an_image_but_no_version(spec: dict[str, Any], refusal: str | None) -> None:
    rsp = component_deployment(StepRequest(input={}, observed_composite=claim_to_xr(dcd(spec))))
    if refusal is None:
        assert fatal(rsp) is None and rsp.desired_resources
    else:
        assert (fatal(rsp) or "").startswith(refusal), rsp.results
