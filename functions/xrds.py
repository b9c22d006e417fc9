"""The CompositeResourceDefinitions of the package, assembled from the API models.

Each Dynamo kind becomes a LegacyCluster XRD (cluster-scoped XR ``X<Kind>``, namespaced claim
``<Kind>``). Upstream serves several versions through a conversion webhook; an XRD has none,
so every served version shares one union schema and the function normalises the shapes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from functions.api import v1alpha1, v1beta1
from functions.api.fields import cel
from functions.api.kube_catalog import kube_catalog
from functions.schema import UnionReport, openapi_for_model, union_schemas
from functions.xrd_builder import GROUP, legacy_xrd
from functions.xrd_rules import add_dcd_webhook_rules, add_webhook_rules

DGD_XRD_NAME = f"xdynamographdeployments.{GROUP}"
DGD_COMPOSITION_NAME = f"dynamographdeployments.{GROUP}"

# The field that tells the two DynamoGraphDeployment shapes apart, per version.
DGD_SHAPES = {"v1alpha1": "services", "v1beta1": "components"}


def dgd_spec_schema(upstream_dir: Path | None = None) -> tuple[dict[str, Any], UnionReport]:
    """The union of the v1alpha1 and v1beta1 DGD spec schemas, plus the rules that keep each shape exact."""
    catalog = kube_catalog(upstream_dir)
    per_version = {
        "v1alpha1": openapi_for_model(v1alpha1.DynamoGraphDeploymentSpec, catalog["v1alpha1"]),
        "v1beta1": openapi_for_model(v1beta1.DynamoGraphDeploymentSpec, catalog["v1beta1"]),
    }
    report = UnionReport()
    spec = union_schemas(per_version["v1alpha1"], per_version["v1beta1"], report, "spec")
    spec["x-kubernetes-validations"] = [*spec.get("x-kubernetes-validations", []), *_shape_rules(per_version)]
    add_webhook_rules(spec)
    return spec, report


def _shape_rules(per_version: dict[str, dict[str, Any]]) -> list[dict[str, str]]:
    alpha, beta = DGD_SHAPES["v1alpha1"], DGD_SHAPES["v1beta1"]
    rules = [
        cel(
            f"has(self.{alpha}) != has(self.{beta})",
            f"exactly one of spec.{alpha} (v1alpha1 shape) or spec.{beta} (v1beta1 shape) must be set",
        )
    ]
    # A top-level field that only one version has is only accepted with that version's shape.
    for version, schema in per_version.items():
        other = "v1beta1" if version == "v1alpha1" else "v1alpha1"
        shape = DGD_SHAPES[version]
        for name in sorted(set(schema["properties"]) - set(per_version[other]["properties"])):
            if name == shape:
                continue
            rules.append(
                cel(
                    f"!has(self.{name}) || has(self.{shape})",
                    f"spec.{name} is a {version} field: it goes with spec.{shape}, not spec.{DGD_SHAPES[other]}",
                )
            )
    # An object both versions have but with different required fields keeps each version's rule.
    for name in sorted(set(per_version["v1alpha1"]["properties"]) & set(per_version["v1beta1"]["properties"])):
        req_a = per_version["v1alpha1"]["properties"][name].get("required", [])
        req_b = per_version["v1beta1"]["properties"][name].get("required", [])
        if sorted(req_a) == sorted(req_b):
            continue
        has_a = " && ".join(f"has(self.{name}.{f})" for f in req_a) or "true"
        has_b = " && ".join(f"has(self.{name}.{f})" for f in req_b) or "true"
        rules.append(
            cel(
                f"!has(self.{name}) || (has(self.{beta}) ? ({has_b}) : ({has_a}))",
                f"spec.{name} requires {', '.join(req_b) or 'nothing'} with spec.{beta} "
                f"and {', '.join(req_a) or 'nothing'} with spec.{alpha}",
            )
        )
    return rules


def dgd_status_schema(upstream_dir: Path | None = None) -> dict[str, Any]:
    catalog = kube_catalog(upstream_dir)
    report = UnionReport()
    return union_schemas(
        openapi_for_model(v1alpha1.DynamoGraphDeploymentStatus, catalog["v1alpha1"]),
        openapi_for_model(v1beta1.DynamoGraphDeploymentStatus, catalog["v1beta1"]),
        report,
        "status",
    )


def dgd_xrd(upstream_dir: Path | None = None) -> dict[str, Any]:
    spec, _ = dgd_spec_schema(upstream_dir)
    schema = {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {"spec": spec, "status": dgd_status_schema(upstream_dir)},
        }
    }
    # Crossplane appends SYNCED, READY (the Ready condition, as upstream's Ready column) and AGE.
    columns = [{"name": "Backend", "type": "string", "jsonPath": ".spec.backendFramework"}]
    return legacy_xrd(
        "DynamoGraphDeployment",
        "dgd",
        schema,
        {"v1beta1": columns, "v1alpha1": columns},
        "nvidia.com/v1alpha1 DynamoGraphDeployment is deprecated; use nvidia.com/v1beta1 (spec.components)",
    )


# --- DynamoGraphDeploymentScalingAdapter -------------------------------------------------

DGDSA_XRD_NAME = f"xdynamographdeploymentscalingadapters.{GROUP}"
DGDSA_COMPOSITION_NAME = f"dynamographdeploymentscalingadapters.{GROUP}"
# The field of spec.dgdRef that names the scaled component, per version.
DGDSA_TARGET_FIELDS = {"v1alpha1": "serviceName", "v1beta1": "componentName"}
# Upstream's columns without AGE, which Crossplane appends (after SYNCED, READY and, for XRs, COMPOSITION).
DGDSA_COLUMNS = {
    "v1beta1": [
        {"name": "DGD", "type": "string", "description": "DynamoGraphDeployment name", "jsonPath": ".spec.dgdRef.name"},
        {
            "name": "COMPONENT",
            "type": "string",
            "description": "Component name",
            "jsonPath": ".spec.dgdRef.componentName",
        },
        {"name": "REPLICAS", "type": "integer", "description": "Current replicas", "jsonPath": ".status.replicas"},
    ],
    "v1alpha1": [
        {"name": "DGD", "type": "string", "description": "DynamoGraphDeployment name", "jsonPath": ".spec.dgdRef.name"},
        {"name": "SERVICE", "type": "string", "description": "Service name", "jsonPath": ".spec.dgdRef.serviceName"},
        {"name": "REPLICAS", "type": "integer", "description": "Current replicas", "jsonPath": ".status.replicas"},
    ],
}


def dgdsa_schema() -> tuple[dict[str, Any], UnionReport]:
    """The union of the v1alpha1 and v1beta1 DGDSA schemas (spec and status), and where they differ.

    The versions differ only in how ``spec.dgdRef`` names the component (``serviceName`` or
    ``componentName``); the union keeps both and a CEL rule that exactly one is set. No Kubernetes
    types are embedded, so no catalog is needed.
    """
    report = UnionReport()
    parts = {}
    for part in ("spec", "status"):
        alpha = getattr(v1alpha1, f"DynamoGraphDeploymentScalingAdapter{part.title()}")
        beta = getattr(v1beta1, f"DynamoGraphDeploymentScalingAdapter{part.title()}")
        parts[part] = union_schemas(openapi_for_model(alpha, {}), openapi_for_model(beta, {}), report, part)
    alpha_field, beta_field = DGDSA_TARGET_FIELDS["v1alpha1"], DGDSA_TARGET_FIELDS["v1beta1"]
    parts["spec"]["properties"]["dgdRef"]["x-kubernetes-validations"] = [
        cel(
            f"has(self.{alpha_field}) != has(self.{beta_field})",
            f"exactly one of spec.dgdRef.{alpha_field} (v1alpha1) or spec.dgdRef.{beta_field} (v1beta1) must be set",
        )
    ]
    return {"type": "object", "properties": parts}, report


def dgdsa_xrd() -> dict[str, Any]:
    return legacy_xrd(
        "DynamoGraphDeploymentScalingAdapter",
        "dgdsa",
        {"openAPIV3Schema": dgdsa_schema()[0]},
        DGDSA_COLUMNS,
        "nvidia.com/v1alpha1 DynamoGraphDeploymentScalingAdapter is deprecated; "
        "use nvidia.com/v1beta1 DynamoGraphDeploymentScalingAdapter",
    )


# --- DynamoComponentDeployment ---------------------------------------------------------------

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


def all_xrds(upstream_dir: Path | None = None) -> dict[str, dict[str, Any]]:
    """File name -> XRD, for everything ``xrds/`` holds."""
    return {
        "dynamocomponentdeployments.yaml": dcd_xrd(upstream_dir),
        "dynamographdeployments.yaml": dgd_xrd(upstream_dir),
        "dynamographdeploymentscalingadapters.yaml": dgdsa_xrd(),
    }


def dump_yaml(obj: dict[str, Any]) -> str:
    return yaml.safe_dump(obj, sort_keys=False, width=120)


def write_xrds(out_dir: Path, upstream_dir: Path | None = None) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, xrd in all_xrds(upstream_dir).items():
        path = out_dir / name
        path.write_text("# Generated by `function-dynamo xrds`; do not edit.\n" + dump_yaml(xrd))
        written.append(path)
    return written
