"""The DynamoGraphDeployment XRD: the union of upstream's v1alpha1 (``spec.services``) and v1beta1
(``spec.components``) schemas, with the CEL rules that keep each shape exact and upstream's webhook rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from functions.api import v1alpha1, v1beta1
from functions.api.fields import cel
from functions.kinds.graph.adopted_worker_hash import STATUS_FIELD as ADOPTED_HASH_FIELD
from functions.xrd.builder import GROUP, legacy_xrd
from functions.xrd.kube_catalog import kube_catalog
from functions.xrd.rules import add_webhook_rules
from functions.xrd.schema import UnionReport, openapi_for_model, union_schemas

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


def version_shape_rules() -> list[dict[str, Any]]:
    """Root rules that keep each version to its own shape, as upstream serves it.

    Upstream's CRD has only ``spec.services`` in v1alpha1 and only ``spec.components`` in v1beta1: the API
    server refuses the other version's field (``unknown field``, with ``kubectl apply``'s strict field
    validation) or prunes it and the operator's webhook refuses the graph for having no components. One union
    schema serves both versions here (nothing a user wrote may be pruned), so a rule at the root, where CEL sees
    ``apiVersion``, refuses it. Only the kind users apply: a claims package's XR (``X<Kind>``) is created by
    Crossplane at the referenceable version whatever shape its claim has. Only where the field is new: an object
    read at the other version shows its shape as stored (no conversion webhook), and Crossplane and ``kubectl
    edit`` write it back at that version.
    """
    rules = []
    for version, own in DGD_SHAPES.items():
        other_version, other = next((v, f) for v, f in DGD_SHAPES.items() if v != version)
        rules.append(
            cel(
                f"self.kind != 'DynamoGraphDeployment' || self.apiVersion != '{GROUP}/{version}'"
                f" || !has(self.spec) || !has(self.spec.{other})"
                f" || (oldSelf.hasValue() && has(oldSelf.value().spec) && has(oldSelf.value().spec.{other}))",
                f"{GROUP}/{version} has no spec.{other} (the {other_version} shape): "
                f"set apiVersion {GROUP}/{other_version}, or give the graph as spec.{own}",
                fieldPath=f".spec.{other}",
                optionalOldSelf=True,
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


# Ours, not upstream's: where the package keeps what upstream's webhook stamps as an annotation
# (functions/kinds/graph/origin.py).
# The XRDs carry no descriptions (their size counts against the API server's limits); docs/kinds/dgd.md,
# "Origin version".
ORIGIN_VERSION_STATUS = {"type": "string"}
# The worker hash kept from the upstream operator for a graph that moved over (adopted_worker_hash.py): the hash,
# and our own hash of the spec it is kept for. docs/migrate.md.
ADOPTED_WORKER_HASH_STATUS = {
    "type": "object",
    "properties": {"hash": {"type": "string"}, "for": {"type": "string"}},
}


def dgd_xrd(upstream_dir: Path | None = None) -> dict[str, Any]:
    spec, _ = dgd_spec_schema(upstream_dir)
    status = dgd_status_schema(upstream_dir)
    status["properties"]["operatorOriginVersion"] = ORIGIN_VERSION_STATUS
    status["properties"][ADOPTED_HASH_FIELD] = ADOPTED_WORKER_HASH_STATUS
    schema = {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {"spec": spec, "status": status},
            "x-kubernetes-validations": version_shape_rules(),
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
