"""derive_crds: the XR and claim CRDs Crossplane v2.2 derives from a CompositeResourceDefinition."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from functions.tooling.validation import XRDError, crd_json_size, derive_crds, load_crds, validate, validate_object

XRD: dict[str, Any] = {
    "apiVersion": "apiextensions.crossplane.io/v1",
    "kind": "CompositeResourceDefinition",
    "metadata": {"name": "xwidgets.example.org", "uid": "u-1", "labels": {"team": "a", "shared": "xrd"}},
    "spec": {
        "group": "example.org",
        "names": {"kind": "XWidget", "plural": "xwidgets", "categories": ["widgets"]},
        "claimNames": {"kind": "Widget", "plural": "widgets"},
        "metadata": {"labels": {"shared": "spec"}, "annotations": {"note": "hi"}},
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "referenceable": False,
                "deprecated": True,
                "deprecationWarning": "use v1",
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}}}},
            },
            {
                "name": "v1",
                "served": True,
                "referenceable": True,
                "additionalPrinterColumns": [{"name": "SIZE", "type": "integer", "jsonPath": ".spec.size"}],
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "description": "A widget.",
                        "x-kubernetes-validations": [
                            {"rule": "self.metadata.name.size() <= 10", "message": "name too long for widget"}
                        ],
                        "properties": {
                            "metadata": {"type": "object", "properties": {"name": {"maxLength": 40}}},
                            "spec": {
                                "type": "object",
                                "required": ["size"],
                                "x-kubernetes-validations": [
                                    {
                                        "rule": "self.size <= self.limit",
                                        "message": "size must not exceed limit",
                                    }
                                ],
                                "properties": {
                                    "size": {"type": "integer", "minimum": 1},
                                    "limit": {"type": "integer", "default": 10},
                                    "mode": {"type": "string", "enum": ["a", "b"]},
                                    # Crossplane's own definition wins over this one.
                                    "compositionRef": {"type": "string"},
                                },
                            },
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                                "properties": {"phase": {"type": "string"}},
                            },
                            "ignored": {"type": "string"},
                        },
                    }
                },
            },
        ],
    },
}


@pytest.fixture(scope="module")
def crds() -> tuple[dict[str, Any], dict[str, Any]]:
    xr, claim = derive_crds(copy.deepcopy(XRD))
    return xr, claim


def version(crd: dict[str, Any], name: str) -> dict[str, Any]:
    return next(v for v in crd["spec"]["versions"] if v["name"] == name)


def schema(crd: dict[str, Any], name: str = "v1") -> dict[str, Any]:
    return version(crd, name)["schema"]["openAPIV3Schema"]


def test_names_scope_and_metadata(crds: tuple[dict[str, Any], dict[str, Any]]) -> None:
    xr, claim = crds
    assert (xr["apiVersion"], xr["kind"]) == ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    assert xr["metadata"]["name"] == "xwidgets.example.org"
    assert claim["metadata"]["name"] == "widgets.example.org"
    assert xr["spec"]["scope"] == "Cluster"
    assert claim["spec"]["scope"] == "Namespaced"
    assert xr["spec"]["group"] == claim["spec"]["group"] == "example.org"
    assert xr["spec"]["names"] == {
        "kind": "XWidget",
        "plural": "xwidgets",
        "categories": ["widgets", "composite"],
    }
    assert claim["spec"]["names"] == {"kind": "Widget", "plural": "widgets", "categories": ["claim"]}
    for crd in crds:
        assert crd["metadata"]["labels"] == {"team": "a", "shared": "spec"}
        assert crd["metadata"]["annotations"] == {"note": "hi"}
        assert crd["metadata"]["ownerReferences"] == [
            {
                "apiVersion": "apiextensions.crossplane.io/v1",
                "kind": "CompositeResourceDefinition",
                "name": "xwidgets.example.org",
                "uid": "u-1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]


def test_versions_served_storage_deprecated(crds: tuple[dict[str, Any], dict[str, Any]]) -> None:
    for crd in crds:
        flags = [(v["name"], v["served"], v["storage"], v.get("deprecated", False)) for v in crd["spec"]["versions"]]
        assert flags == [("v1alpha1", True, False, True), ("v1", True, True, False)]
        assert version(crd, "v1alpha1")["deprecationWarning"] == "use v1"
        assert all(v["subresources"] == {"status": {}} for v in crd["spec"]["versions"])


def test_injected_spec_props(crds: tuple[dict[str, Any], dict[str, Any]]) -> None:
    xr, claim = crds
    xr_spec = schema(xr)["properties"]["spec"]["properties"]
    claim_spec = schema(claim)["properties"]["spec"]["properties"]
    for name in (
        "compositionRef",
        "compositionSelector",
        "compositionRevisionRef",
        "compositionRevisionSelector",
    ):
        assert name in xr_spec and name in claim_spec
    assert xr_spec["compositionRef"] == {
        "type": "object",
        "required": ["name"],
        "properties": {"name": {"type": "string"}},
    }
    assert set(xr_spec["claimRef"]["required"]) == {"apiVersion", "kind", "namespace", "name"}
    assert xr_spec["resourceRefs"]["x-kubernetes-list-type"] == "atomic"
    assert "namespace" in xr_spec["resourceRefs"]["items"]["properties"]
    assert xr_spec["writeConnectionSecretToRef"]["required"] == ["name", "namespace"]
    assert xr_spec["compositionUpdatePolicy"] == {
        "type": "string",
        "enum": ["Automatic", "Manual"],
        "default": "Automatic",
    }
    assert "claimRef" not in claim_spec and "resourceRefs" not in claim_spec
    assert claim_spec["compositeDeletePolicy"] == {
        "type": "string",
        "enum": ["Background", "Foreground"],
        "default": "Background",
    }
    assert claim_spec["resourceRef"]["required"] == ["apiVersion", "kind", "name"]
    assert "default" not in claim_spec["compositionUpdatePolicy"]
    assert claim_spec["writeConnectionSecretToRef"]["required"] == ["name"]
    # The XRD's own spec fields are kept, its required list too.
    assert xr_spec["size"] == {"type": "integer", "minimum": 1}
    assert schema(claim)["properties"]["spec"]["required"] == ["size"]


def test_injected_status_props(crds: tuple[dict[str, Any], dict[str, Any]]) -> None:
    for crd in crds:
        status = schema(crd)["properties"]["status"]
        conditions = status["properties"]["conditions"]
        assert conditions["x-kubernetes-list-type"] == "map"
        assert conditions["x-kubernetes-list-map-keys"] == ["type"]
        assert conditions["items"]["required"] == ["lastTransitionTime", "reason", "status", "type"]
        assert status["properties"]["connectionDetails"]["properties"]["lastPublishedTime"]["format"] == "date-time"
        assert status["properties"]["claimConditionTypes"]["x-kubernetes-list-type"] == "set"
        assert status["properties"]["phase"] == {"type": "string"}
        # genCrdVersion copies required/validations/description/oneOf of status, not preserve-unknown-fields.
        assert "x-kubernetes-preserve-unknown-fields" not in status


def test_root_and_metadata_schema(crds: tuple[dict[str, Any], dict[str, Any]]) -> None:
    for crd in crds:
        root = schema(crd)
        assert root["required"] == ["spec"]
        assert root["description"] == "A widget."
        assert root["x-kubernetes-validations"] == [
            {"rule": "self.metadata.name.size() <= 10", "message": "name too long for widget"}
        ]
        assert set(root["properties"]) == {"apiVersion", "kind", "metadata", "spec", "status"}
        assert root["properties"]["metadata"] == {
            "type": "object",
            "properties": {"name": {"type": "string", "maxLength": 40}},
        }
        assert schema(crd, "v1alpha1")["properties"]["metadata"]["properties"]["name"]["maxLength"] == 63
        spec = root["properties"]["spec"]
        assert spec["x-kubernetes-validations"] == [
            {"rule": "self.size <= self.limit", "message": "size must not exceed limit"}
        ]
        assert spec["properties"]["compositionRef"]["type"] == "object"


def test_printer_columns(crds: tuple[dict[str, Any], dict[str, Any]]) -> None:
    xr, claim = crds
    xr_cols = version(xr, "v1")["additionalPrinterColumns"]
    assert [c["name"] for c in xr_cols] == [
        "SIZE",
        "SYNCED",
        "READY",
        "COMPOSITION",
        "COMPOSITIONREVISION",
        "AGE",
    ]
    by_name = {c["name"]: c for c in xr_cols}
    assert by_name["COMPOSITION"]["jsonPath"] == ".spec.compositionRef.name"
    assert by_name["COMPOSITIONREVISION"]["priority"] == 1
    assert by_name["READY"]["jsonPath"] == ".status.conditions[?(@.type=='Ready')].status"
    assert by_name["AGE"] == {"name": "AGE", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
    claim_cols = version(claim, "v1alpha1")["additionalPrinterColumns"]
    assert [c["name"] for c in claim_cols] == ["SYNCED", "READY", "CONNECTION-SECRET", "AGE"]
    assert claim_cols[2]["jsonPath"] == ".spec.writeConnectionSecretToRef.name"


def test_no_claim_crd_without_claim_names() -> None:
    xrd = copy.deepcopy(XRD)
    del xrd["spec"]["claimNames"]
    assert len(derive_crds(xrd)) == 1


@pytest.mark.parametrize("field", ["kind", "plural"])
def test_conflicting_claim_names_are_rejected(field: str) -> None:
    xrd = copy.deepcopy(XRD)
    xrd["spec"]["claimNames"][field] = xrd["spec"]["names"][field]
    with pytest.raises(XRDError, match="conflicts with composite resource name"):
        derive_crds(xrd)


def test_missing_schema_is_rejected() -> None:
    xrd = copy.deepcopy(XRD)
    del xrd["spec"]["versions"][0]["schema"]
    with pytest.raises(XRDError, match="custom resource validation cannot be nil"):
        derive_crds(xrd)


def test_modern_namespaced_xrd_nests_machinery_under_spec_crossplane() -> None:
    xrd = copy.deepcopy(XRD)
    xrd["apiVersion"] = "apiextensions.crossplane.io/v2"
    del xrd["spec"]["claimNames"]  # v2 defaults scope to Namespaced
    (xr,) = derive_crds(xrd)
    assert xr["spec"]["scope"] == "Namespaced"
    spec = schema(xr)["properties"]["spec"]["properties"]
    assert "claimRef" not in spec and "compositionRef" in spec  # the XRD's own compositionRef stays
    machinery = spec["crossplane"]["properties"]
    assert "namespace" not in machinery["resourceRefs"]["items"]["properties"]
    assert set(machinery) >= {
        "compositionRef",
        "compositionSelector",
        "compositionUpdatePolicy",
        "resourceRefs",
    }
    status = schema(xr)["properties"]["status"]["properties"]
    assert "conditions" in status and "connectionDetails" not in status
    cols = {c["name"]: c["jsonPath"] for c in version(xr, "v1")["additionalPrinterColumns"]}
    assert cols["COMPOSITION"] == ".spec.crossplane.compositionRef.name"


def test_without_xrd_defaults_policies_have_no_default() -> None:
    xr, claim = derive_crds(copy.deepcopy(XRD), apply_xrd_defaults=False)
    assert "default" not in schema(xr)["properties"]["spec"]["properties"]["compositionUpdatePolicy"]
    assert "default" not in schema(claim)["properties"]["spec"]["properties"]["compositeDeletePolicy"]
    assert xr["spec"]["scope"] == "Cluster"  # nil scope is treated as LegacyCluster


def test_schema_is_normalised_like_a_go_round_trip() -> None:
    xrd = copy.deepcopy(XRD)
    spec = xrd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["mode"].update({"nullable": False, "description": "", "x-unknown": 1, "maxLength": 0})
    xr, _ = derive_crds(xrd)
    assert schema(xr)["properties"]["spec"]["properties"]["mode"] == {
        "type": "string",
        "enum": ["a", "b"],
        "maxLength": 0,
    }


def test_crd_json_size() -> None:
    xr, _ = derive_crds(copy.deepcopy(XRD))
    compact = json.dumps(xr, separators=(",", ":"))
    # Go escapes the "<" of the two "<=" CEL rules as \u003c (5 extra bytes each).
    assert compact.count("<") == 2
    assert crd_json_size(xr) == len(compact.encode()) + 10
    assert crd_json_size({"a": "<&>"}) == len('{"a":"\\u003c\\u0026\\u003e"}')
    assert crd_json_size({"a": "é"}) == len('{"a":""}') + 2  # UTF-8, not \u escapes
    assert crd_json_size({"a": 10.0}) == len('{"a":10}')


def claim(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.org/v1",
        "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "default"},
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (claim(size=5), []),
        (claim(size=5, limit=6, compositeDeletePolicy="Foreground", compositionRef={"name": "c"}), []),
        # The default limit (10) is applied before the spec-level CEL rule runs.
        (claim(size=11), [("spec", "cel: self.size <= self.limit", "size must not exceed limit")]),
        (claim(size=5, limit=4), [("spec", "cel: self.size <= self.limit", "size must not exceed limit")]),
        (
            {**claim(size=5), "metadata": {"name": "much-too-long-name"}},
            [("<root>", "cel: self.metadata.name.size() <= 10", "name too long for widget")],
        ),
        (claim(size=5, compositeDeletePolicy="Never"), None),
        (claim(size=5, resourceRef={"kind": "XWidget"}), None),
        (claim(size=5, claimRef={"name": "x"}), None),
    ],
)
def test_claim_instances_validate_against_derived_crd(obj: dict[str, Any], expected: Any) -> None:
    _, claim_crd = derive_crds(copy.deepcopy(XRD))
    violations = [(v.path, v.rule, v.message) for v in validate_object(obj, claim_crd)]
    if expected is not None:
        assert violations == expected
    else:
        assert violations, "expected a structural violation"


def test_claim_structural_errors_are_precise() -> None:
    _, claim_crd = derive_crds(copy.deepcopy(XRD))
    cases = {
        "compositeDeletePolicy": ("spec.compositeDeletePolicy", "enum"),
        "resourceRef": ("spec.resourceRef.apiVersion", "required"),
        "claimRef": ("spec.claimRef", "unknown field"),
    }
    values = {
        "compositeDeletePolicy": "Never",
        "resourceRef": {"kind": "XWidget", "name": "x"},
        "claimRef": {},
    }
    for field, (path, rule) in cases.items():
        found = [(v.path, v.rule) for v in validate_object(claim(size=5, **{field: values[field]}), claim_crd)]
        assert (path, rule) in found, (field, found)


def test_xr_instance_validates_against_derived_crd() -> None:
    xr_crd, _ = derive_crds(copy.deepcopy(XRD))
    xr = {
        "apiVersion": "example.org/v1",
        "kind": "XWidget",
        "metadata": {"name": "x1"},
        "spec": {
            "size": 3,
            "claimRef": {"apiVersion": "example.org/v1", "kind": "Widget", "namespace": "d", "name": "w"},
            "resourceRefs": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "c"}],
        },
        "status": {
            "conditions": [{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "x"}]
        },
    }
    assert [(v.path, v.rule) for v in validate_object(xr, xr_crd)] == [
        ("status.conditions[0].lastTransitionTime", "format")
    ]
    xr["status"]["conditions"][0]["lastTransitionTime"] = "2024-01-01T00:00:00Z"
    assert validate(xr, xr_crd).ok


def test_load_crds_reads_crds_and_derives_xrds(tmp_path: Path) -> None:
    other = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.other.org"},
        "spec": {"group": "other.org", "names": {"kind": "Thing", "plural": "things"}, "versions": []},
    }
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "defs.yaml").write_text(yaml.safe_dump_all([XRD, {"kind": "ConfigMap"}, other]))
    (tmp_path / "notes.txt").write_text("not yaml: [")
    crds = load_crds([tmp_path])
    assert sorted(crds) == [("example.org", "Widget"), ("example.org", "XWidget"), ("other.org", "Thing")]
    assert crds[("example.org", "Widget")]["metadata"]["name"] == "widgets.example.org"
