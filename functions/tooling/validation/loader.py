"""Read CRDs (and XRDs, converted with ``derive_crds``) from multi-document YAML files."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml

from .xcrd import derive_crds

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _KubeLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe loader that keeps timestamps as strings, as YAML -> JSON conversion in kubectl does."""


_KubeLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}

PathLike = str | Path


def load_yaml_documents(path: PathLike) -> list[Any]:
    """All non-empty documents of a YAML file; ``kind: List``-style documents are flattened."""
    with open(path, encoding="utf-8") as handle:
        docs = list(yaml.load_all(handle, Loader=_KubeLoader))
    out: list[Any] = []
    for doc in docs:
        if isinstance(doc, dict) and isinstance(doc.get("items"), list) and str(doc.get("kind", "")).endswith("List"):
            out.extend(doc["items"])
        elif doc is not None:
            out.append(doc)
    return out


def _files(paths: PathLike | Iterable[PathLike]) -> Iterator[Path]:
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    for item in items:
        path = Path(item)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
        else:
            yield path


def load_crds(paths: PathLike | Iterable[PathLike]) -> dict[tuple[str, str], dict[str, Any]]:
    """Map (group, kind) -> CRD for every CRD in the files (directories are searched recursively).

    CompositeResourceDefinitions found in the files contribute the CRDs Crossplane derives from them.
    Other documents are ignored. A later definition of the same (group, kind) replaces an earlier one.
    """
    crds: dict[tuple[str, str], dict[str, Any]] = {}
    for path in _files(paths):
        for doc in load_yaml_documents(path):
            if not isinstance(doc, dict):
                continue
            group = str(doc.get("apiVersion", "")).split("/")[0]
            if doc.get("kind") == "CustomResourceDefinition" and group == "apiextensions.k8s.io":
                found = [doc]
            elif doc.get("kind") == "CompositeResourceDefinition" and group == "apiextensions.crossplane.io":
                found = derive_crds(doc)
            else:
                continue
            for crd in found:
                spec = crd.get("spec") or {}
                crds[(spec.get("group", ""), (spec.get("names") or {}).get("kind", ""))] = crd
    return crds
