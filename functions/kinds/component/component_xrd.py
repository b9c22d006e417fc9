"""The DynamoComponentDeployment XRD: two flat shapes told apart by their version-only fields."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from functions.api import v1alpha1, v1beta1
from functions.api.fields import cel
from functions.xrd.builder import GROUP, legacy_xrd
from functions.xrd.kube_catalog import kube_catalog
from functions.xrd.rules import add_dcd_webhook_rules
from functions.xrd.schema import UnionReport, openapi_for_model, union_schemas

DCD_XRD_NAME = f"xdynamocomponentdeployments.{GROUP}"
DCD_COMPOSITION_NAME = f"dynamocomponentdeployments.{GROUP}"
# Upstream's columns without Age (Crossplane appends SYNCED, READY and AGE); v1alpha1's
# DynamoComponent column reads a field no version has, so it is left out.
DCD_COLUMNS = [
    {
        "name": "Available",
        "type": "string",
        "description": "Available",
        "jsonPath": ".status.conditions[?(@.type=='Available')].status",
    },
    {
        "name": "Backend",
        "type": "string",
        "description": "Backend framework (sglang, vllm, trtllm)",
        "jsonPath": ".spec.backendFramework",
    },
]


def _has_any(fields: list[str]) -> str:
    return "(" + " || ".join(f"has(self.{f})" for f in fields) + ")"


def dcd_shape_fields(upstream_dir: Path | None = None) -> dict[str, list[str]]:
    """Version -> the top-level spec fields only that version has (they tell the shapes apart)."""
    catalog = kube_catalog(upstream_dir)
    alpha = set(openapi_for_model(v1alpha1.DynamoComponentDeploymentSpec, catalog["v1alpha1"])["properties"])
    beta = set(openapi_for_model(v1beta1.DynamoComponentDeploymentSpec, catalog["v1beta1"])["properties"])
    return {"v1alpha1": sorted(alpha - beta), "v1beta1": sorted(beta - alpha)}


def dcd_spec_schema(upstream_dir: Path | None = None) -> tuple[dict[str, Any], UnionReport]:
    """The union of the v1alpha1 and v1beta1 DCD spec schemas, and where they differ.

    Unlike the DGD, both shapes are flat: the fields only one version has tell them apart, and a
    CEL rule refuses a spec mixing them. ``frontendSidecar`` is an object (v1alpha1) or a string
    (v1beta1): a schema cannot union two types, so the union keeps it untyped
    (``x-kubernetes-preserve-unknown-fields``) and the function checks it against the shape.
    v1beta1's own object rules that the union drops are kept, conditioned on the v1beta1 shape.
    """
    catalog = kube_catalog(upstream_dir)
    per_version = {
        "v1alpha1": openapi_for_model(v1alpha1.DynamoComponentDeploymentSpec, catalog["v1alpha1"]),
        "v1beta1": openapi_for_model(v1beta1.DynamoComponentDeploymentSpec, catalog["v1beta1"]),
    }
    report = UnionReport()
    for name in sorted(set(per_version["v1alpha1"]["properties"]) & set(per_version["v1beta1"]["properties"])):
        types = [per_version[v]["properties"][name].get("type") for v in per_version]
        if types[0] != types[1]:
            for schema in per_version.values():
                schema["properties"][name] = {"x-kubernetes-preserve-unknown-fields": True}
            report.note(f"spec.{name}", f"type differs ({types[0]} vs {types[1]}), union keeps it untyped")
    spec = union_schemas(per_version["v1alpha1"], per_version["v1beta1"], report, "spec")
    shapes = dcd_shape_fields(upstream_dir)
    beta = _has_any(shapes["v1beta1"])
    beta_rules = [
        r
        for r in per_version["v1beta1"].get("x-kubernetes-validations", [])
        if r not in spec["x-kubernetes-validations"]
    ]
    epp_rules = per_version["v1beta1"]["properties"]["eppConfig"].get("x-kubernetes-validations", [])
    spec["x-kubernetes-validations"] = [
        *spec["x-kubernetes-validations"],
        cel(
            f"!{_has_any(shapes['v1alpha1'])} || !{beta}",
            "spec mixes v1alpha1 fields ("
            + ", ".join(shapes["v1alpha1"])
            + ") with v1beta1 fields ("
            + ", ".join(shapes["v1beta1"])
            + ")",
        ),
        *(cel(f"!{beta} || ({r['rule']})", r["message"]) for r in beta_rules),
        *(
            cel(f"!has(self.eppConfig) || !{beta} || ({r['rule'].replace('self.', 'self.eppConfig.')})", r["message"])
            for r in epp_rules
        ),
    ]
    return spec, report


def dcd_status_schema(upstream_dir: Path | None = None) -> dict[str, Any]:
    catalog = kube_catalog(upstream_dir)
    return union_schemas(
        openapi_for_model(v1alpha1.DynamoComponentDeploymentStatus, catalog["v1alpha1"]),
        openapi_for_model(v1beta1.DynamoComponentDeploymentStatus, catalog["v1beta1"]),
        UnionReport(),
        "status",
    )


def dcd_xrd(upstream_dir: Path | None = None) -> dict[str, Any]:
    spec, _ = dcd_spec_schema(upstream_dir)
    add_dcd_webhook_rules(spec)
    schema = {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {"spec": spec, "status": dcd_status_schema(upstream_dir)},
        }
    }
    return legacy_xrd(
        "DynamoComponentDeployment",
        "dcd",
        schema,
        {"v1beta1": DCD_COLUMNS, "v1alpha1": DCD_COLUMNS},
        "nvidia.com/v1alpha1 DynamoComponentDeployment is deprecated; use nvidia.com/v1beta1 DynamoComponentDeployment",
    )
