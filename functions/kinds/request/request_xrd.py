"""The DynamoGraphDeploymentRequest XRD: the union of upstream's v1alpha1 and v1beta1 schemas (a v1alpha1 request
is told apart by ``spec.profilingConfig``, which that version requires), upstream's printer columns per version,
and the webhook rules a schema can hold.

- Top-level defaults are left out: the versions disagree (``autoApply`` is false in v1alpha1, true in v1beta1)
  and a default of one version's field would put it on the other's requests. The function applies each
  version's defaults (``functions.kinds.request.request_conversion``).
- The status holds both versions' fields except v1alpha1's ``profilingResults`` (a string there, an object in
  v1beta1), plus this package's ``processedSpec``.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from functions.api.fields import cel
from functions.kinds.request.request_api import (
    DynamoGraphDeploymentRequestSpec,
    DynamoGraphDeploymentRequestSpecV1alpha1,
    DynamoGraphDeploymentRequestStatus,
    DynamoGraphDeploymentRequestStatusV1alpha1,
)
from functions.kinds.request.request_conversion import V1ALPHA1_ONLY, V1BETA1_ONLY
from functions.xrd.builder import GROUP, legacy_xrd
from functions.xrd.kube_catalog import request_kube_catalog
from functions.xrd.schema import UnionReport, openapi_for_model, union_schemas

DGDR_XRD_NAME = f"xdynamographdeploymentrequests.{GROUP}"
DGDR_COMPOSITION_NAME = f"dynamographdeploymentrequests.{GROUP}"
SHAPE_FIELD = "profilingConfig"
# Upstream's columns without Age, which Crossplane appends (after SYNCED and READY).
DGDR_COLUMNS = {
    "v1beta1": [
        {"name": "Model", "type": "string", "jsonPath": ".spec.model"},
        {"name": "Backend", "type": "string", "jsonPath": ".spec.backend"},
        {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
        {"name": "Profiling", "type": "string", "jsonPath": ".status.profilingPhase"},
        {"name": "Reason", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Succeeded")].reason'},
        {"name": "Message", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Succeeded")].message'},
        {"name": "DGD", "type": "string", "jsonPath": ".status.dgdName"},
    ],
    "v1alpha1": [
        {"name": "Model", "type": "string", "jsonPath": ".spec.model"},
        {"name": "Backend", "type": "string", "jsonPath": ".status.backend"},
        {"name": "State", "type": "string", "jsonPath": ".status.state"},
        {"name": "DGD-State", "type": "string", "jsonPath": ".status.deployment.state"},
    ],
}
# Upstream's webhook rules that need only the spec.
WEBHOOK_RULES = [
    cel(
        "!(has(self.searchStrategy) && self.searchStrategy == 'thorough'"
        " && (!has(self.backend) || self.backend == 'auto'))",
        "spec.searchStrategy thorough needs an explicit spec.backend (vllm, sglang or trtllm), not auto",
    ),
]
WORKLOAD_RULE = cel(
    "!(has(self.concurrency) && has(self.requestRate))",
    "workload.concurrency and workload.requestRate are mutually exclusive",
)
PROCESSED_SPEC_SCHEMA = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def _without_defaults(node: dict[str, Any], report: UnionReport, path: str) -> dict[str, Any]:
    out = copy.deepcopy(node)
    for name, prop in out["properties"].items():
        if "default" in prop:
            report.note(f"{path}.{name}", f"default {prop.pop('default')!r} left to the function")
    return out


def _shape_rules() -> list[dict[str, str]]:
    rules = [
        cel(
            f"!has(self.{SHAPE_FIELD}) || has(self.backend)",
            f"spec.backend is required with spec.{SHAPE_FIELD} (v1alpha1)",
        )
    ]
    rules += [
        cel(
            f"!has(self.{name}) || has(self.{SHAPE_FIELD})",
            f"spec.{name} is a v1alpha1 field: it goes with spec.{SHAPE_FIELD}",
        )
        for name in V1ALPHA1_ONLY
        if name != SHAPE_FIELD
    ]
    rules += [
        cel(
            f"!has(self.{name}) || !has(self.{SHAPE_FIELD})",
            f"spec.{name} is a v1beta1 field: a v1alpha1 request (spec.{SHAPE_FIELD}) cannot have it",
        )
        for name in V1BETA1_ONLY
    ]
    return rules


def dgdr_spec_schema(upstream_dir: Path | None = None) -> tuple[dict[str, Any], UnionReport]:
    catalog = request_kube_catalog(upstream_dir)
    report = UnionReport()
    alpha = _without_defaults(
        openapi_for_model(DynamoGraphDeploymentRequestSpecV1alpha1, catalog["v1alpha1"]), report, "spec"
    )
    beta = _without_defaults(openapi_for_model(DynamoGraphDeploymentRequestSpec, catalog["v1beta1"]), report, "spec")
    spec = union_schemas(alpha, beta, report, "spec")
    spec["x-kubernetes-validations"] = [*_shape_rules(), *WEBHOOK_RULES]
    workload = spec["properties"]["workload"]
    workload["x-kubernetes-validations"] = [*workload.get("x-kubernetes-validations", []), WORKLOAD_RULE]
    return spec, report


def dgdr_status_schema() -> dict[str, Any]:
    report = UnionReport()
    alpha = openapi_for_model(DynamoGraphDeploymentRequestStatusV1alpha1, {})
    alpha["properties"].pop("profilingResults")
    alpha = _without_defaults(alpha, report, "status")
    alpha["properties"]["deployment"] = _without_defaults(
        alpha["properties"]["deployment"], report, "status.deployment"
    )
    beta = openapi_for_model(DynamoGraphDeploymentRequestStatus, {})
    status = union_schemas(alpha, beta, report, "status")
    status["properties"]["processedSpec"] = PROCESSED_SPEC_SCHEMA
    return status


def dgdr_xrd(upstream_dir: Path | None = None) -> dict[str, Any]:
    spec, _ = dgdr_spec_schema(upstream_dir)
    schema = {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec, "status": dgdr_status_schema()}}}
    return legacy_xrd(
        "DynamoGraphDeploymentRequest",
        "dgdr",
        schema,
        DGDR_COLUMNS,
        "nvidia.com/v1alpha1 DynamoGraphDeploymentRequest is deprecated; use nvidia.com/v1beta1",
    )
