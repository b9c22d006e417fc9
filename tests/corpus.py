"""The upstream example manifests in ../shared/corpus, as test parameters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tooling import shared_dir

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_CLAIMS = sorted(p for p in (REPO / "examples").glob("*.yaml") if p.name != "functions.yaml")


def without_matcher_directives(node: Any) -> Any:
    """Drop ``$strict``/``$ignore`` keys: upstream's golden-output files carry them for their test matcher."""
    if isinstance(node, dict):
        return {k: without_matcher_directives(v) for k, v in node.items() if not str(k).startswith("$")}
    if isinstance(node, list):
        return [without_matcher_directives(v) for v in node]
    return node


def corpus_dgds() -> list[tuple[str, dict[str, Any]]]:
    """(id, document) for every DynamoGraphDeployment document in the corpus; [] when it is absent."""
    root = shared_dir() / "corpus"
    if not root.is_dir():
        return []
    out = []
    for path in sorted(root.rglob("*.yaml")):
        with path.open() as f:
            for i, doc in enumerate(d for d in yaml.safe_load_all(f) if d):
                if doc.get("kind") == "DynamoGraphDeployment" and str(doc.get("apiVersion", "")).startswith(
                    "nvidia.com/"
                ):
                    out.append((f"{path.relative_to(root)}#{i}", without_matcher_directives(doc)))
    return out


def load_claim(path: Path) -> dict[str, Any]:
    with path.open() as f:
        return yaml.safe_load(f)
