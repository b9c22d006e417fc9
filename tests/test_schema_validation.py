"""Rendered resources validate against the real CRDs of their kinds; claims against our derived CRDs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fixtures.corpus import (
    EXAMPLE_CLAIMS,
    as_upstream_admits,
    corpus_dgds,
    examples_of_kind,
    has_main_images,
    load_claim,
)
from fixtures.rendering import CHECKPOINT_PLATFORM, check_resource, existing_pvcs, package_crds, render_xr, rendered
from fixtures.tooling import REPO, require_crds, require_shared
from functions.tooling.admit_manifest import crd_for
from functions.tooling.manifests import claim_to_xr, load_documents
from functions.tooling.pipeline import RenderError
from functions.tooling.validation import derive_crds, load_crds, validate_object

CORPUS = corpus_dgds()


@pytest.fixture(scope="module")
def derived_crds() -> dict[str, dict[str, Any]]:
    """kind -> CRD, as Crossplane derives them from the claims package's XRD (XR and claim)."""
    (xrd,) = load_documents(REPO / "package" / "claims" / "xrds" / "dynamographdeployments.yaml")
    return {crd["spec"]["names"]["kind"]: crd for crd in derive_crds(xrd)}


@pytest.fixture(scope="module")
def grove_crds() -> dict:
    return load_crds(sorted(require_crds("grove").glob("*.yaml")))


def test_each_derived_crd_stays_under_one_mebibyte(derived_crds: dict[str, dict[str, Any]]) -> None:
    assert set(derived_crds) == {"XDynamoGraphDeployment", "DynamoGraphDeployment"}
    for kind, crd in derived_crds.items():
        size = len(json.dumps(crd, separators=(",", ":")))
        assert size < 1024 * 1024, f"{kind} CRD is {size} bytes of JSON"


def test_claim_crd_has_upstream_columns(derived_crds: dict[str, dict[str, Any]]) -> None:
    for version in derived_crds["DynamoGraphDeployment"]["spec"]["versions"]:
        names = [c["name"].lower() for c in version["additionalPrinterColumns"]]
        assert {"ready", "backend", "age"} <= set(names)


@pytest.mark.parametrize("claim_path", EXAMPLE_CLAIMS, ids=[p.stem for p in EXAMPLE_CLAIMS])
def test_example_claims_and_their_xrs_validate(claim_path: Path, derived_crds: dict[str, dict[str, Any]]) -> None:
    claim = load_claim(claim_path)
    assert validate_object(claim, derived_crds["DynamoGraphDeployment"]) == []
    xr = claim_to_xr(claim)
    assert validate_object(xr, derived_crds["XDynamoGraphDeployment"]) == []


@pytest.mark.parametrize(("doc_id", "doc"), CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus_dgds_validate_against_the_derived_claim_crd(
    doc_id: str, doc: dict[str, Any], derived_crds: dict[str, dict[str, Any]]
) -> None:
    violations = validate_object(doc, derived_crds["DynamoGraphDeployment"])
    if not doc.get("spec"):
        # Upstream's webhook rejects an empty spec (services must be non-empty); Crossplane's claim
        # CRD requires spec, so here the API server rejects it already.
        assert "spec: Required value (required)" in map(str, violations)
        return
    assert violations == [], "\n".join(map(str, violations))


def test_the_corpus_is_there() -> None:
    require_shared("corpus")
    versions = {doc["apiVersion"] for _, doc in CORPUS}
    assert versions == {"nvidia.com/v1alpha1", "nvidia.com/v1beta1"}
    assert len(CORPUS) > 100


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ({}, "exactly one of spec.services"),
        ({"services": {"a": {}}, "components": [{"name": "a"}]}, "exactly one of spec.services"),
        ({"components": [{"name": "a"}], "pvcs": [{"name": "p"}]}, "spec.pvcs is a v1alpha1 field"),
        ({"services": {"a": {"replicas": -1}}}, "minimum"),
        ({"components": [{"name": "a"}, {"name": "A"}]}, "unique case-insensitively"),
        ({"services": {"a": {}}, "topologyConstraint": {"clusterTopologyName": "t"}}, "topologyProfile"),
    ],
)
def test_bad_claims_are_rejected_by_the_derived_crd(
    spec: dict[str, Any], fragment: str, derived_crds: dict[str, dict[str, Any]]
) -> None:
    claim = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "bad", "namespace": "ns"},
        "spec": spec,
    }
    violations = validate_object(claim, derived_crds["DynamoGraphDeployment"])
    assert any(fragment in str(v) for v in violations), violations


@pytest.mark.parametrize(("size", "admitted"), [(7, True), ("8Gi", True), (0, False), ("0", False), (-1, False)])
def test_an_integer_shared_memory_size_is_a_quantity(
    size: Any, admitted: bool, derived_crds: dict[str, dict[str, Any]]
) -> None:
    """The int-or-string size may be an integer: upstream's webhook re-encodes it as a string ("7") before its
    CRD's rule reads it as a quantity, so an integer above 0 is admitted and 0 or below refused."""
    claim = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {"services": {"a": {"sharedMemory": {"size": size}}}},
    }
    violations = validate_object(claim, derived_crds["DynamoGraphDeployment"])
    assert (violations == []) is admitted, violations
    if not admitted:
        assert [(v.path, v.message) for v in violations] == [
            ("spec.services.a.sharedMemory", "size is required when disabled is false")
        ]


ALPHA, BETA = {"services": {"a": {}}}, {"components": [{"name": "a"}]}


@pytest.mark.parametrize("claims", [False, True], ids=["namespaced", "claims"])
@pytest.mark.parametrize(
    ("kind", "version", "spec", "old", "refused"),
    [
        ("DynamoGraphDeployment", "v1alpha1", BETA, None, "spec.components"),
        ("DynamoGraphDeployment", "v1beta1", ALPHA, None, "spec.services"),
        ("DynamoGraphDeployment", "v1alpha1", ALPHA, None, None),
        ("DynamoGraphDeployment", "v1beta1", BETA, None, None),
        # a graph applied as v1alpha1 is read, and written back (Crossplane, kubectl edit), at v1beta1
        ("DynamoGraphDeployment", "v1beta1", {"services": {"a": {"replicas": 2}}}, ALPHA, None),
        ("DynamoGraphDeployment", "v1alpha1", {"components": [{"name": "a", "replicas": 2}]}, BETA, None),
        # ... but a shape the object did not have is still the other version's
        ("DynamoGraphDeployment", "v1beta1", ALPHA, BETA, "spec.services"),
        ("DynamoGraphDeployment", "v1alpha1", BETA, ALPHA, "spec.components"),
        # a claim's XR is created by Crossplane at v1beta1, whatever the claim's shape
        ("XDynamoGraphDeployment", "v1beta1", ALPHA, None, None),
    ],
)
def test_each_version_admits_only_its_own_shape(
    kind: str, version: str, spec: dict[str, Any], old: dict[str, Any] | None, refused: str | None, claims: bool
) -> None:
    """Upstream's CRD has only spec.services at v1alpha1 and only spec.components at v1beta1."""
    if kind.startswith("X") and not claims:
        pytest.skip("the default package has no claim XR kind")

    def obj(spec: dict[str, Any]) -> dict[str, Any]:
        meta = {"name": "g"} if kind.startswith("X") else {"name": "g", "namespace": "ns"}
        return {"apiVersion": f"nvidia.com/{version}", "kind": kind, "metadata": meta, "spec": spec}

    crd = crd_for(kind, claims=claims)
    violations = validate_object(obj(spec), crd, old=obj(old) if old is not None else None)
    assert [v.path for v in violations] == ([refused] if refused else []), violations
    if refused:
        other = "v1beta1" if version == "v1alpha1" else "v1alpha1"
        assert f"set apiVersion nvidia.com/{other}" in violations[0].message


@pytest.mark.parametrize("claim_path", EXAMPLE_CLAIMS, ids=[p.stem for p in EXAMPLE_CLAIMS])
def test_rendered_example_resources_validate(claim_path: Path, grove_crds: dict) -> None:
    for obj in rendered(load_claim(claim_path)):
        check_resource(obj)


def test_rendering_for_grove_validation_catches_a_bad_podcliqueset(grove_crds: dict) -> None:
    pcs = next(o for o in rendered(load_claim(EXAMPLE_CLAIMS[0])) if o["kind"] == "PodCliqueSet")
    pcs["spec"]["template"]["cliqueStartupType"] = "Whenever"
    assert validate_object(pcs, grove_crds[("grove.io", "PodCliqueSet")]) != []


@pytest.mark.parametrize(("doc_id", "doc"), CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus_dgds_render_to_valid_resources(doc_id: str, doc: dict[str, Any], grove_crds: dict) -> None:
    doc = yaml.safe_load(yaml.safe_dump(doc))
    doc.setdefault("metadata", {}).setdefault("namespace", "corpus")
    if not (doc.get("spec") or {}):
        # Upstream's webhook rejects it (services must be non-empty); so does the function.
        with pytest.raises(RenderError, match=re.escape("exactly one of spec.services")):
            rendered(doc)
        return
    # Every corpus graph renders (the checkpoint gate on for those that start from a checkpoint), given the
    # runtime version upstream wants where its image tags name none; one without images is refused, as upstream does.
    doc = as_upstream_admits(doc)
    if not has_main_images(doc):
        with pytest.raises(RenderError, match="the main container needs an image"):
            render_xr(claim_to_xr(doc), required=[*existing_pvcs(doc), CHECKPOINT_PLATFORM])
        return
    objects = render_xr(claim_to_xr(doc), required=[*existing_pvcs(doc), CHECKPOINT_PLATFORM])
    grove = (doc["metadata"].get("annotations") or {}).get("nvidia.com/enable-grove", "").lower() != "false"
    assert any(o["kind"] == ("PodCliqueSet" if grove else "XDynamoComponentDeployment") for o in objects)
    for obj in objects:
        check_resource(obj)


SCALING_ADAPTERS = sorted(
    [
        *examples_of_kind("DynamoGraphDeploymentScalingAdapter"),
        *(REPO / "tests" / "scenarios" / "scaling").glob("adapter*.yaml"),
    ]
)


@pytest.mark.parametrize("path", SCALING_ADAPTERS, ids=[p.stem for p in SCALING_ADAPTERS])
def test_scaling_adapter_examples_validate(path: Path) -> None:
    doc = load_claim(path)
    assert validate_object(doc, package_crds()[doc["kind"]]) == []
    if doc["kind"] == "DynamoGraphDeploymentScalingAdapter":
        xr = claim_to_xr(doc)
        assert validate_object(xr, package_crds()["XDynamoGraphDeploymentScalingAdapter"]) == []


def test_rendered_scaling_adapters_validate_against_the_derived_xr_crd(grove_crds: dict) -> None:
    objects = rendered(load_claim(REPO / "examples" / "dgd" / "vllm-autoscaled.yaml"))
    adapters = [o for o in objects if o["kind"] == "XDynamoGraphDeploymentScalingAdapter"]
    assert len(adapters) == 2
    for obj in adapters:
        check_resource(obj)


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ({"dgdRef": {"name": "g", "componentName": "W"}, "replicas": -1}, "minimum"),
        ({"dgdRef": {"name": "g"}, "replicas": 1}, "exactly one of spec.dgdRef.serviceName"),
        (
            {"dgdRef": {"name": "g", "componentName": "W", "serviceName": "W"}, "replicas": 1},
            "exactly one of spec.dgdRef.serviceName",
        ),
        ({"dgdRef": {"name": "", "componentName": "W"}, "replicas": 1}, "spec.dgdRef.name"),
        ({"dgdRef": {"name": "g", "componentName": "W"}}, "spec.replicas: Required value"),
    ],
)
def test_bad_scaling_adapter_claims_are_rejected_by_the_derived_crd(spec: dict[str, Any], fragment: str) -> None:
    claim = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeploymentScalingAdapter",
        "metadata": {"name": "bad", "namespace": "ns"},
        "spec": spec,
    }
    violations = validate_object(claim, package_crds()["DynamoGraphDeploymentScalingAdapter"])
    assert any(fragment in str(v) for v in violations), violations
