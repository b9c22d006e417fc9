"""The API models cover every field of the upstream CRDs, and the XRD is generated from them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from fixtures.tooling import require_shared, shared_dir
from functions.api import v1alpha1, v1beta1
from functions.kinds.component.component_xrd import dcd_spec_schema
from functions.kinds.graph.graph_xrd import dgd_spec_schema
from functions.kinds.scaling.scaling_xrd import DGDSA_COLUMNS, dgdsa_schema
from functions.tooling.xrds import HEADER, all_xrds, claims_composition, claims_xrds, dump_yaml
from functions.xrd.kube_catalog import (
    DGD_CRD_FILE,
    kube_catalog,
    load_upstream_crd,
    strip_descriptions,
    version_schemas,
)
from functions.xrd.schema import UnionReport, openapi_for_model, union_schemas

REPO = Path(__file__).resolve().parents[1]
DGDSA_CRD_FILE = "nvidia.com_dynamographdeploymentscalingadapters.yaml"
MODELS = {"v1alpha1": v1alpha1, "v1beta1": v1beta1}


def upstream_dir() -> Path:
    require_shared()
    return shared_dir() / "upstream" / "crds"


UPSTREAM_SHARED_MEMORY_RULE = (
    "(has(self.disabled) && self.disabled) || (has(self.size) && quantity(self.size).isGreaterThan(quantity('0')))"
)


def as_the_operator_admits(node: Any) -> Any:
    """Upstream's CRD schema with the changes our models make so that admission gives the operator's verdicts,
    where its webhooks act before its schema does:

    - the shared memory rule reads an integer size too (the operator's webhook re-encodes it as a string);
    - a v1alpha1 DGDR's ``profilingConfig.profilerImage`` is not required (its defaulting webhook fills it);
    - an EPP scheduling profile's plugin requires its ``weight`` (its webhooks write an absent one as null)."""
    if isinstance(node, list):
        return [as_the_operator_admits(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: as_the_operator_admits(v) for k, v in node.items()}
    rules = out.get("x-kubernetes-validations")
    if rules:
        shm = v1alpha1.SHARED_MEMORY_RULE
        out["x-kubernetes-validations"] = [shm if r.get("rule") == UPSTREAM_SHARED_MEMORY_RULE else r for r in rules]
    if set(out.get("properties", {})) == {"pluginRef", "weight"}:
        out["required"] = sorted({*out.get("required", []), "weight"})
    if "profilerImage" in out.get("properties", {}) and "profilerImage" in out.get("required", []):
        out["required"] = [r for r in out["required"] if r != "profilerImage"]
        if not out["required"]:
            del out["required"]
    return out


def _sorted_required(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: sorted(v) if k == "required" else _sorted_required(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_sorted_required(v) for v in node]
    return node


@pytest.mark.parametrize("version", ["v1alpha1", "v1beta1"])
@pytest.mark.parametrize("part", ["spec", "status"])
def test_model_schema_equals_upstream_crd(version: str, part: str) -> None:
    """Every upstream field, type, enum, pattern, bound, default, required and CEL rule is in our model."""
    upstream = strip_descriptions(version_schemas(load_upstream_crd(upstream_dir(), DGD_CRD_FILE))[version])
    theirs = upstream["properties"][part]
    if part == "status":
        theirs["properties"].pop("conditions")  # Crossplane owns status.conditions of every XR
    model = MODELS[version].DynamoGraphDeploymentSpec if part == "spec" else MODELS[version].DynamoGraphDeploymentStatus
    ours = openapi_for_model(model, kube_catalog(upstream_dir())[version])
    assert _sorted_required(ours) == _sorted_required(as_the_operator_admits(theirs))


def test_union_lists_every_field_where_the_versions_disagree() -> None:
    _, report = dgd_spec_schema(upstream_dir())
    assert report.differences == [
        "spec.topologyConstraint: required differs (['topologyProfile'] vs ['clusterTopologyName']), union requires []"
    ]


def test_union_keeps_each_versions_required_fields_as_shape_rules() -> None:
    spec, _ = dgd_spec_schema(upstream_dir())
    rules = {r["rule"] for r in spec["x-kubernetes-validations"]}
    assert "has(self.services) != has(self.components)" in rules
    assert (
        "!has(self.topologyConstraint) || (has(self.components) ? (has(self.topologyConstraint.clusterTopologyName))"
        " : (has(self.topologyConstraint.topologyProfile)))" in rules
    )
    assert "!has(self.pvcs) || has(self.services)" in rules
    assert "!has(self.env) || has(self.components)" in rules


def test_committed_xrds_are_up_to_date() -> None:
    for directory, xrds in (("xrds", all_xrds(upstream_dir())), ("package/claims/xrds", claims_xrds(upstream_dir()))):
        for name, xrd in xrds.items():
            committed = (REPO / directory / name).read_text()
            assert committed == HEADER + dump_yaml(xrd), f"{directory}/{name} is stale: run `function-dynamo xrds`"


def test_the_claims_compositions_are_the_default_ones_for_the_claims_xrs() -> None:
    for path in sorted((REPO / "compositions").glob("*.yaml")):
        default = yaml.safe_load(path.read_text())
        twin = yaml.safe_load((REPO / "compositions" / "claims" / path.name).read_text())
        assert twin == claims_composition(default), (
            f"compositions/claims/{path.name} is stale: run `function-dynamo xrds`"
        )
        assert twin["spec"]["pipeline"] == default["spec"]["pipeline"]
        assert twin["spec"]["compositeTypeRef"]["kind"].startswith("XDynamo")


def test_the_default_package_serves_the_upstream_kinds_as_namespaced_xrs() -> None:
    """Every kind but DynamoPlatform is an apiextensions v2 Namespaced XR of the upstream kind: no claim, the
    claim's names (short names too), the same versions and schemas as the claims package's."""
    claims = claims_xrds(upstream_dir())
    for name, xrd in all_xrds(upstream_dir()).items():
        legacy = claims[name]
        if xrd["spec"]["names"]["kind"] == "XDynamoPlatform":
            assert xrd == legacy  # a platform keeps its claim (see functions/kinds/__init__.py)
            continue
        assert xrd["apiVersion"] == "apiextensions.crossplane.io/v2"
        assert xrd["spec"]["scope"] == "Namespaced"
        assert "claimNames" not in xrd["spec"]
        assert xrd["spec"]["names"] == legacy["spec"]["claimNames"]
        assert xrd["metadata"]["name"] == f"{legacy['spec']['claimNames']['plural']}.nvidia.com"
        assert xrd["spec"]["versions"] == legacy["spec"]["versions"]
        assert xrd["spec"]["defaultCompositionRef"] == legacy["spec"]["defaultCompositionRef"]


def test_the_scaling_adapter_has_upstreams_scale_subresource_in_both_packages() -> None:
    upstream = {v["name"]: v for v in load_upstream_crd(upstream_dir(), DGDSA_CRD_FILE)["spec"]["versions"]}
    for xrds in (all_xrds(upstream_dir()), claims_xrds(upstream_dir())):
        for version in xrds["dynamographdeploymentscalingadapters.yaml"]["spec"]["versions"]:
            assert version["subresources"]["scale"] == upstream[version["name"]]["subresources"]["scale"]
        others = [x for n, x in xrds.items() if n != "dynamographdeploymentscalingadapters.yaml"]
        assert all("subresources" not in v for x in others for v in x["spec"]["versions"])


@pytest.mark.parametrize(
    ("a", "b", "expected", "difference"),
    [
        (
            {"type": "string", "enum": ["a"]},
            {"type": "string", "enum": ["b"]},
            {"type": "string", "enum": ["a", "b"]},
            "x: enum differs (['a'] vs ['b']), union accepts both",
        ),
        (
            {"type": "object", "properties": {"p": {"type": "string"}}, "required": ["p"]},
            {"type": "object", "properties": {"q": {"type": "string"}}},
            {"type": "object", "properties": {"p": {"type": "string"}, "q": {"type": "string"}}},
            "x: required only in one version, dropped from the union",
        ),
    ],
)
def test_union_schemas(a: dict, b: dict, expected: dict, difference: str) -> None:
    report = UnionReport()
    assert union_schemas(a, b, report, "x") == expected
    assert report.differences == [difference]


def test_union_refuses_conflicting_types() -> None:
    with pytest.raises(ValueError, match="type string vs integer"):
        union_schemas({"type": "string"}, {"type": "integer"}, UnionReport(), "x")


def test_xrd_versions_share_one_schema_and_only_v1beta1_is_referenceable() -> None:
    xrd = claims_xrds(upstream_dir())["dynamographdeployments.yaml"]
    versions = {v["name"]: v for v in xrd["spec"]["versions"]}
    assert versions["v1beta1"]["referenceable"] is True
    assert versions["v1alpha1"]["referenceable"] is False
    assert versions["v1alpha1"]["deprecated"] is True
    assert versions["v1alpha1"]["schema"] == versions["v1beta1"]["schema"]
    assert xrd["spec"]["claimNames"]["shortNames"] == ["dgd"]
    assert xrd["spec"]["scope"] == "LegacyCluster"
    # No descriptions anywhere: the embedded PodSpec descriptions alone would blow the size budget.
    assert '"description"' not in json.dumps(xrd)


# --- DynamoGraphDeploymentScalingAdapter ---------------------------------------------------


@pytest.mark.parametrize("version", ["v1alpha1", "v1beta1"])
@pytest.mark.parametrize("part", ["spec", "status"])
def test_scaling_adapter_model_schema_equals_upstream_crd(version: str, part: str) -> None:
    upstream = strip_descriptions(version_schemas(load_upstream_crd(upstream_dir(), DGDSA_CRD_FILE))[version])
    model = getattr(MODELS[version], f"DynamoGraphDeploymentScalingAdapter{part.title()}")
    assert _sorted_required(openapi_for_model(model, {})) == _sorted_required(upstream["properties"][part])


def test_scaling_adapter_union_lists_where_the_versions_disagree() -> None:
    schema, report = dgdsa_schema()
    assert report.differences == [
        "spec.dgdRef: required differs (['name', 'serviceName'] vs ['componentName', 'name']), union requires ['name']",
        "status: required only in one version, dropped from the union",
    ]
    (rule,) = schema["properties"]["spec"]["properties"]["dgdRef"]["x-kubernetes-validations"]
    assert rule["rule"] == "has(self.serviceName) != has(self.componentName)"


def test_scaling_adapter_xrd_names_versions_and_columns() -> None:
    xrd = claims_xrds(upstream_dir())["dynamographdeploymentscalingadapters.yaml"]
    spec = xrd["spec"]
    assert spec["scope"] == "LegacyCluster"
    assert spec["names"]["kind"] == "XDynamoGraphDeploymentScalingAdapter"
    assert spec["claimNames"]["kind"] == "DynamoGraphDeploymentScalingAdapter"
    assert spec["claimNames"]["shortNames"] == ["dgdsa"]
    versions = {v["name"]: v for v in spec["versions"]}
    assert (versions["v1beta1"]["referenceable"], versions["v1alpha1"]["referenceable"]) == (True, False)
    assert versions["v1alpha1"]["deprecated"] is True
    assert versions["v1alpha1"]["schema"] == versions["v1beta1"]["schema"]
    upstream = {v["name"]: v for v in load_upstream_crd(upstream_dir(), DGDSA_CRD_FILE)["spec"]["versions"]}
    assert upstream["v1alpha1"]["deprecationWarning"] == versions["v1alpha1"]["deprecationWarning"]
    for name, version in versions.items():
        # Upstream's columns, less AGE: Crossplane appends SYNCED, READY (COMPOSITION for XRs) and AGE.
        theirs = [c for c in upstream[name]["additionalPrinterColumns"] if c["name"] != "AGE"]
        ours = version["additionalPrinterColumns"]
        assert ours == DGDSA_COLUMNS[name]
        assert [dict(sorted(c.items())) for c in ours] == [dict(sorted(c.items())) for c in theirs]


# --- DynamoComponentDeployment ---------------------------------------------------------------

DCD_CRD_FILE = "nvidia.com_dynamocomponentdeployments.yaml"


@pytest.mark.parametrize("version", ["v1alpha1", "v1beta1"])
@pytest.mark.parametrize("part", ["spec", "status"])
def test_component_deployment_model_schema_equals_upstream_crd(version: str, part: str) -> None:
    upstream = strip_descriptions(version_schemas(load_upstream_crd(upstream_dir(), DCD_CRD_FILE))[version])
    theirs = upstream["properties"][part]
    if part == "status":
        theirs["properties"].pop("conditions")  # Crossplane owns status.conditions of every XR
        theirs["required"] = [r for r in theirs.get("required", []) if r != "conditions"]  # v1alpha1 requires it
    if theirs.get("required") == []:
        del theirs["required"]  # v1beta1 spec says `required: []`: the same as saying nothing
    model = getattr(MODELS[version], f"DynamoComponentDeployment{part.title()}")
    ours = openapi_for_model(model, kube_catalog(upstream_dir())[version])
    assert _sorted_required(ours) == _sorted_required(as_the_operator_admits(theirs))


def test_component_deployment_union_lists_where_the_versions_disagree() -> None:
    spec, report = dcd_spec_schema(upstream_dir())
    assert report.differences == [
        "spec.frontendSidecar: type differs (object vs string), union keeps it untyped",
        "spec.eppConfig: x-kubernetes-validations only in one version, dropped from the union",
        "spec.modelRef.name: minLength only in one version, kept",
        "spec.multinode: required only in one version, dropped from the union",
        "spec: CEL rules differ, union keeps the common ones",
    ]
    messages = [r["message"] for r in spec["x-kubernetes-validations"]]
    assert messages[-3].startswith("spec mixes v1alpha1 fields (annotations, ")
    # v1beta1's dropped rules come back, for the v1beta1 shape only.
    assert messages[-2:] == [
        "eppConfig may only be set when type is epp",
        "exactly one of configMapRef or config must be specified",
    ]
    assert spec["properties"]["frontendSidecar"] == {"x-kubernetes-preserve-unknown-fields": True}


def test_component_deployment_xrd_names_and_versions() -> None:
    spec = claims_xrds(upstream_dir())["dynamocomponentdeployments.yaml"]["spec"]
    assert spec["scope"] == "LegacyCluster"
    assert (spec["names"]["kind"], spec["claimNames"]["kind"]) == (
        "XDynamoComponentDeployment",
        "DynamoComponentDeployment",
    )
    assert spec["claimNames"]["shortNames"] == ["dcd"]
    versions = {v["name"]: v for v in spec["versions"]}
    assert (versions["v1beta1"]["referenceable"], versions["v1alpha1"]["referenceable"]) == (True, False)
    assert versions["v1alpha1"]["deprecated"] is True
    assert versions["v1alpha1"]["schema"] == versions["v1beta1"]["schema"]


# --- DynamoCheckpoint ----------------------------------------------------------------------------------------

DCKPT_CRD_FILE = "nvidia.com_dynamocheckpoints.yaml"


@pytest.mark.parametrize("part", ["spec", "status"])
def test_checkpoint_model_schema_equals_upstream_crd(part: str) -> None:
    from functions.kinds.checkpoint.checkpoint_api import DynamoCheckpointSpec, DynamoCheckpointStatus
    from functions.xrd.kube_catalog import checkpoint_kube_catalog

    upstream = strip_descriptions(version_schemas(load_upstream_crd(upstream_dir(), DCKPT_CRD_FILE))["v1alpha1"])
    theirs = upstream["properties"][part]
    if part == "status":
        theirs["properties"].pop("conditions")  # Crossplane owns status.conditions of every XR
    model = DynamoCheckpointSpec if part == "spec" else DynamoCheckpointStatus
    ours = openapi_for_model(model, checkpoint_kube_catalog(upstream_dir()))
    assert _sorted_required(ours) == _sorted_required(as_the_operator_admits(theirs))


def test_checkpoint_xrd_names_version_columns_and_the_identity_rule() -> None:
    from functions.kinds.checkpoint.checkpoint_xrd import DCKPT_COLUMNS, IDENTITY_IMMUTABLE

    spec = claims_xrds(upstream_dir())["dynamocheckpoints.yaml"]["spec"]
    assert (spec["names"]["kind"], spec["claimNames"]["kind"]) == ("XDynamoCheckpoint", "DynamoCheckpoint")
    assert spec["claimNames"]["shortNames"] == ["dckpt"]
    (version,) = spec["versions"]
    assert (version["name"], version["referenceable"], version["served"]) == ("v1alpha1", True, True)
    (upstream,) = load_upstream_crd(upstream_dir(), DCKPT_CRD_FILE)["spec"]["versions"]
    theirs = [c for c in upstream["additionalPrinterColumns"] if c["name"] != "Age"]
    assert [dict(sorted(c.items())) for c in DCKPT_COLUMNS] == [dict(sorted(c.items())) for c in theirs]
    rules = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"]
    assert IDENTITY_IMMUTABLE in rules
    root = [v["x-kubernetes-validations"] for v in [upstream["schema"]["openAPIV3Schema"]]]
    assert root[0][0]["message"] == IDENTITY_IMMUTABLE["message"]  # upstream's root rule, moved onto spec


# --- DynamoModel ----------------------------------------------------------------------------------------------

DM_CRD_FILE = "nvidia.com_dynamomodels.yaml"


@pytest.mark.parametrize("part", ["spec", "status"])
def test_dynamomodel_schema_equals_upstream_crd(part: str) -> None:
    from functions.kinds.model.model_api import DynamoModelSpec, DynamoModelStatus

    upstream = strip_descriptions(version_schemas(load_upstream_crd(upstream_dir(), DM_CRD_FILE))["v1alpha1"])
    theirs = upstream["properties"][part]
    if part == "status":
        theirs["properties"].pop("conditions")  # Crossplane owns status.conditions of every XR
    ours = openapi_for_model(DynamoModelSpec if part == "spec" else DynamoModelStatus, {})
    assert _sorted_required(ours) == _sorted_required(theirs)


def test_dynamomodel_xrd_names_version_columns_and_the_webhook_rules() -> None:
    from functions.kinds.model.model_xrd import DM_COLUMNS, SPEC_BOUNDS, WEBHOOK_RULES

    spec = claims_xrds(upstream_dir())["dynamomodels.yaml"]["spec"]
    assert (spec["names"]["kind"], spec["claimNames"]["kind"]) == ("XDynamoModel", "DynamoModel")
    assert spec["claimNames"]["shortNames"] == ["dm"]
    (version,) = spec["versions"]
    assert (version["name"], version["referenceable"], version["served"]) == ("v1alpha1", True, True)
    (upstream,) = load_upstream_crd(upstream_dir(), DM_CRD_FILE)["spec"]["versions"]
    theirs = [c for c in upstream["additionalPrinterColumns"] if c["name"] != "Age"]
    assert [dict(sorted(c.items())) for c in DM_COLUMNS] == [dict(sorted(c.items())) for c in theirs]
    schema = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert schema["x-kubernetes-validations"] == WEBHOOK_RULES
    # The only additions to upstream's schema: bounds the CEL cost budget needs.
    assert {f: schema["properties"][f]["maxLength"] for f in SPEC_BOUNDS} == SPEC_BOUNDS


# --- DynamoGraphDeploymentRequest -----------------------------------------------------------------------------


def _single_enums(node: Any) -> Any:
    """Upstream's CRD repeats a Go enum type's enum as ``allOf: [{enum: X}, {enum: X}]``; the same as ``enum: X``."""
    if isinstance(node, list):
        return [_single_enums(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _single_enums(v) for k, v in node.items()}
    all_of = out.get("allOf")
    if all_of and all(set(a) == {"enum"} for a in all_of) and len({tuple(a["enum"]) for a in all_of}) == 1:
        out["enum"] = out.pop("allOf")[0]["enum"]
    return out


@pytest.mark.parametrize("version", ["v1alpha1", "v1beta1"])
@pytest.mark.parametrize("part", ["spec", "status"])
def test_request_model_schema_equals_upstream_crd(version: str, part: str) -> None:
    from functions.kinds.request import request_api as request
    from functions.xrd.kube_catalog import DGDR_CRD_FILE, request_kube_catalog

    upstream = strip_descriptions(version_schemas(load_upstream_crd(upstream_dir(), DGDR_CRD_FILE))[version])
    theirs = upstream["properties"][part]
    if part == "status":
        theirs["properties"].pop("conditions")  # Crossplane owns status.conditions of every XR
    suffix = "" if version == "v1beta1" else "V1alpha1"
    model = getattr(request, f"DynamoGraphDeploymentRequest{part.title()}{suffix}")
    ours = openapi_for_model(model, request_kube_catalog(upstream_dir())[version])
    assert _sorted_required(ours) == _sorted_required(as_the_operator_admits(_single_enums(theirs)))


def test_request_union_leaves_the_top_level_defaults_to_the_function() -> None:
    from functions.kinds.request.request_xrd import dgdr_spec_schema

    spec, report = dgdr_spec_schema(upstream_dir())
    assert not any("default" in prop for prop in spec["properties"].values())
    left = sorted(d for d in report.differences if "left to the function" in d)
    assert left == [
        "spec.autoApply: default False left to the function",
        "spec.autoApply: default True left to the function",
        "spec.backend: default 'auto' left to the function",
        "spec.enableGpuDiscovery: default True left to the function",
        "spec.searchStrategy: default 'rapid' left to the function",
        "spec.useMocker: default False left to the function",
    ]
    assert spec["required"] == ["model"]
    assert spec["properties"]["workload"]["properties"]["isl"]["default"] == 4000  # nested defaults stay


def test_request_xrd_names_versions_and_upstreams_columns() -> None:
    from functions.kinds.request.request_xrd import DGDR_COLUMNS
    from functions.xrd.kube_catalog import DGDR_CRD_FILE

    spec = claims_xrds(upstream_dir())["dynamographdeploymentrequests.yaml"]["spec"]
    assert (spec["names"]["kind"], spec["claimNames"]["kind"]) == (
        "XDynamoGraphDeploymentRequest",
        "DynamoGraphDeploymentRequest",
    )
    assert spec["claimNames"]["shortNames"] == ["dgdr"]
    assert [(v["name"], v["referenceable"], v.get("deprecated", False)) for v in spec["versions"]] == [
        ("v1beta1", True, False),
        ("v1alpha1", False, True),
    ]
    for version in load_upstream_crd(upstream_dir(), DGDR_CRD_FILE)["spec"]["versions"]:
        theirs = [
            {k: v for k, v in c.items() if k != "description"}
            for c in version["additionalPrinterColumns"]
            if c["name"] != "Age"
        ]
        ours = next(v for v in spec["versions"] if v["name"] == version["name"])["additionalPrinterColumns"]
        assert [dict(sorted(c.items())) for c in ours] == [dict(sorted(c.items())) for c in theirs]
        assert DGDR_COLUMNS[version["name"]] == ours
    status = spec["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
    assert status["profilingResults"]["type"] == "object"  # the hub's; v1alpha1's is a string
    assert {"state", "deployment", "generatedDeployment", "phase", "processedSpec"} <= set(status)
