"""The DynamoGraphDeployment a profiling run generated, from the ``final_config.yaml`` of its output ConfigMap
(docs/upstream/checkpoint-gms-dgdr-model.md §4.2 step 4).

The document of kind DynamoGraphDeployment is the graph (a v1alpha1 one is converted to v1beta1); the other
documents are additional resources, of which ConfigMaps (e.g. the planner's profile data) are composed beside
the graph. The graph is named ``overrides.dgd.metadata.name`` or ``<dgdr>-dgd``, and every component without a
``runtimeVersionOverride`` gets the DGDR's.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import yaml

from functions.api.conversion import v1alpha1_to_v1beta1

DGD_API_VERSIONS = ("nvidia.com/v1alpha1", "nvidia.com/v1beta1")
ADDITIONAL_RESOURCES_LIMIT = 250_000  # bytes: upstream keeps them in an annotation, under the 256 KiB limit
NAME_LABEL, NAMESPACE_LABEL = "dgdr.nvidia.com/name", "dgdr.nvidia.com/namespace"
MANAGED_BY = {"nvidia.com/managed-by": "dynamo-operator"}


class GenerationError(ValueError):
    """The profiler's output is not a graph this package can deploy; ``str()`` says why."""


@dataclass(frozen=True)
class Generated:
    dgd: dict[str, Any]  # the v1beta1 DynamoGraphDeployment to deploy
    configmaps: list[dict[str, Any]] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # additional documents that are not ConfigMaps


def dgdr_labels(dgdr: str, namespace: str) -> dict[str, str]:
    return {NAME_LABEL: dgdr, NAMESPACE_LABEL: namespace, **MANAGED_BY}


def _documents(text: str) -> list[dict[str, Any]]:
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as err:
        raise GenerationError(f"final_config.yaml is not YAML: {err}") from None
    for i, doc in enumerate(docs):
        if not isinstance(doc, dict):
            raise GenerationError(f"final_config.yaml document {i} is not an object")
    return docs


def generate(final_config: str, dgdr: str, namespace: str, name: str | None, runtime_version: str | None) -> Generated:
    docs = _documents(final_config)
    graphs = [d for d in docs if d.get("kind") == "DynamoGraphDeployment"]
    if len(graphs) != 1:
        raise GenerationError(f"final_config.yaml holds {len(graphs)} DynamoGraphDeployment documents, not 1")
    graph = graphs[0]
    api_version = graph.get("apiVersion")
    if api_version not in DGD_API_VERSIONS:
        raise GenerationError(
            f"the generated DynamoGraphDeployment has apiVersion {api_version!r}, "
            f"not one of {', '.join(DGD_API_VERSIONS)}"
        )
    if api_version == "nvidia.com/v1alpha1":
        graph = v1alpha1_to_v1beta1(graph).dgd
    others = [d for d in docs if d is not graphs[0]]
    size = len("\n---\n".join(yaml.safe_dump(d, sort_keys=True) for d in others).encode())
    if size > ADDITIONAL_RESOURCES_LIMIT:
        raise GenerationError(
            f"the additional resources of final_config.yaml take {size} bytes, more than {ADDITIONAL_RESOURCES_LIMIT}"
        )
    spec = copy.deepcopy(graph.get("spec") or {})
    if runtime_version:
        for component in spec.get("components") or []:
            component.setdefault("runtimeVersionOverride", runtime_version)
    meta = graph.get("metadata") or {}
    dgd = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {
            "name": name or f"{dgdr}-dgd",
            "namespace": namespace,
            "labels": {**(meta.get("labels") or {}), **dgdr_labels(dgdr, namespace)},
        },
        "spec": spec,
    }
    if meta.get("annotations"):
        dgd["metadata"]["annotations"] = dict(meta["annotations"])
    configmaps, ignored = [], []
    for doc in others:
        if doc.get("apiVersion") == "v1" and doc.get("kind") == "ConfigMap" and (doc.get("metadata") or {}).get("name"):
            configmaps.append(_configmap(doc, dgdr, namespace))
        else:
            ignored.append(f"{doc.get('kind')}/{(doc.get('metadata') or {}).get('name')}")
    return Generated(dgd, configmaps, ignored)


def _configmap(doc: dict[str, Any], dgdr: str, namespace: str) -> dict[str, Any]:
    meta = doc.get("metadata") or {}
    out = {k: copy.deepcopy(v) for k, v in doc.items() if k in ("apiVersion", "kind", "data", "binaryData")}
    out["metadata"] = {
        "name": meta["name"],
        "namespace": namespace,
        "labels": {**(meta.get("labels") or {}), **dgdr_labels(dgdr, namespace)},
    }
    if meta.get("annotations"):
        out["metadata"]["annotations"] = dict(meta["annotations"])
    return out


def exported_manifest(dgd: dict[str, Any]) -> dict[str, Any]:
    """The generated graph as a manifest to commit: apiVersion, kind, name, namespace, labels, annotations, spec."""
    meta = dgd.get("metadata") or {}
    out_meta = {k: copy.deepcopy(meta[k]) for k in ("name", "namespace", "labels", "annotations") if meta.get(k)}
    return {
        "apiVersion": dgd.get("apiVersion"),
        "kind": dgd.get("kind"),
        "metadata": out_meta,
        "spec": dgd.get("spec") or {},
    }
