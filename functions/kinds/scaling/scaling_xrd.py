"""The DynamoGraphDeploymentScalingAdapter XRD: both versions in one schema, upstream's printer columns."""

from __future__ import annotations

from typing import Any

from functions.api import v1alpha1, v1beta1
from functions.api.fields import cel
from functions.xrd.builder import GROUP, legacy_xrd
from functions.xrd.schema import UnionReport, openapi_for_model, union_schemas

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
