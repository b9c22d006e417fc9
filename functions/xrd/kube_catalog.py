"""Schemas of the Kubernetes types the Dynamo API embeds (PodSpec, EnvVar, Probe, ...).

They are taken from upstream's DynamoGraphDeployment CRD, so our XRDs accept exactly what the
upstream operator accepts for the Kubernetes version it was built against. Descriptions are
dropped: they are most of the CRD's size and nothing validates against them.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

import yaml

UPSTREAM_CRDS_ENV = "FUNCTION_DYNAMO_UPSTREAM_CRDS"
DGD_CRD_FILE = "nvidia.com_dynamographdeployments.yaml"

# version -> catalog name -> path of the node inside the version's openAPIV3Schema.
# "*" steps into additionalProperties, "[]" into items.
KUBE_TYPE_PATHS: dict[str, dict[str, tuple[str, ...]]] = {
    "v1alpha1": {
        "EnvVar": ("spec", "envs", "[]"),
        "Probe": ("spec", "services", "*", "livenessProbe"),
        "ExtraPodSpec": ("spec", "services", "*", "extraPodSpec"),
        "HorizontalPodAutoscalerBehavior": ("spec", "services", "*", "autoscaling", "behavior"),
        "MetricSpec": ("spec", "services", "*", "autoscaling", "metrics", "[]"),
    },
    "v1beta1": {
        "EnvVar": ("spec", "env", "[]"),
        "PodTemplateSpec": ("spec", "components", "[]", "podTemplate"),
    },
}


class UpstreamCRDsMissing(FileNotFoundError):
    """The upstream Dynamo CRDs (``deploy/operator/config/crd/bases`` of ai-dynamo/dynamo; docs/upstream/README.md)
    are not in the directory looked at."""


def default_upstream_dir() -> Path:
    configured = os.environ.get(UPSTREAM_CRDS_ENV)
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[2].parent / "shared" / "upstream" / "crds"


def strip_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: strip_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [strip_descriptions(v) for v in node]
    return node


def node_at(schema: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    node = schema
    for step in path:
        if step == "*":
            node = node["additionalProperties"]
        elif step == "[]":
            node = node["items"]
        else:
            node = node["properties"][step]
    return node


def load_upstream_crd(upstream_dir: Path, file_name: str) -> dict[str, Any]:
    path = upstream_dir / file_name
    if not path.is_file():
        raise UpstreamCRDsMissing(
            f"{path} not found: the upstream Dynamo CRDs (shared/upstream/crds beside the checkout, "
            f"or ${UPSTREAM_CRDS_ENV}) are needed to generate the XRDs"
        )
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the CRD is 1.6 MB: the C loader is 10x faster
    with path.open() as f:
        return yaml.load(f, Loader=loader)


def version_schemas(crd: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v["schema"]["openAPIV3Schema"] for v in crd["spec"]["versions"]}


@cache
def kube_catalog(upstream_dir: Path | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """version -> type name -> schema (without descriptions)."""
    crd = load_upstream_crd(upstream_dir or default_upstream_dir(), DGD_CRD_FILE)
    schemas = version_schemas(crd)
    return {
        version: {name: strip_descriptions(node_at(schemas[version], path)) for name, path in paths.items()}
        for version, paths in KUBE_TYPE_PATHS.items()
    }


CHECKPOINT_CRD_FILE = "nvidia.com_dynamocheckpoints.yaml"


@cache
def checkpoint_kube_catalog(upstream_dir: Path | None = None) -> dict[str, dict[str, Any]]:
    """The Kubernetes types the DynamoCheckpoint embeds, from its own CRD: its pod template is the plain
    PodTemplateSpec, without the DGD's rules on containers and annotations."""
    crd = load_upstream_crd(upstream_dir or default_upstream_dir(), CHECKPOINT_CRD_FILE)
    schema = version_schemas(crd)["v1alpha1"]
    return {"PodTemplateSpec": strip_descriptions(node_at(schema, ("spec", "job", "podTemplateSpec")))}


DGDR_CRD_FILE = "nvidia.com_dynamographdeploymentrequests.yaml"
DGDR_KUBE_TYPE_PATHS: dict[str, dict[str, tuple[str, ...]]] = {
    "v1alpha1": {
        "ResourceRequirements": ("spec", "profilingConfig", "resources"),
        "Toleration": ("spec", "profilingConfig", "tolerations", "[]"),
    },
    "v1beta1": {"JobSpec": ("spec", "overrides", "profilingJob")},
}


@cache
def request_kube_catalog(upstream_dir: Path | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """version -> the Kubernetes types the DynamoGraphDeploymentRequest embeds, from its own CRD."""
    schemas = version_schemas(load_upstream_crd(upstream_dir or default_upstream_dir(), DGDR_CRD_FILE))
    return {
        version: {name: strip_descriptions(node_at(schemas[version], path)) for name, path in paths.items()}
        for version, paths in DGDR_KUBE_TYPE_PATHS.items()
    }
