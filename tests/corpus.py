"""The upstream example manifests in ../shared/corpus, as test parameters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from functions.kinds.component.webhook_rules import graph_main_images, with_runtime_version_overrides
from functions.tooling.manifests import claim_to_xr
from tooling import shared_dir

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
V1ALPHA1 = EXAMPLES / "v1alpha1"


def first_kind(path: Path) -> str:
    with path.open() as f:
        return (next(yaml.safe_load_all(f), None) or {}).get("kind", "")


def examples_of_kind(*kinds: str) -> list[Path]:
    """Every example manifest of these kinds, the v1beta1 ones and those in examples/v1alpha1/."""
    return sorted(p for p in EXAMPLES.rglob("*.yaml") if "cluster" not in p.parts and first_kind(p) in kinds)


def example_claim(stem: str) -> Path:
    """The example graph named ``stem`` the scenarios were built from: ``examples/v1alpha1/<stem>.yaml`` where it
    exists (the scenarios predate the v1beta1 forms), else ``examples/dgd/<stem>.yaml``."""
    for folder in (V1ALPHA1, EXAMPLES / "dgd"):
        if (folder / f"{stem}.yaml").exists():
            return folder / f"{stem}.yaml"
    raise FileNotFoundError(f"no example graph named {stem}")


# The example DynamoGraphDeployments that need nothing beside them (no checkpoint, no DynamoPlatform).
EXAMPLE_CLAIMS = sorted([*(EXAMPLES / "dgd").glob("*.yaml"), *(p for p in V1ALPHA1.glob("*.yaml")
                         if first_kind(p) == "DynamoGraphDeployment" and "checkpoint" not in p.name)])  # fmt: skip


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


# What a corpus graph whose main images carry placeholder tags (``:my-tag``) gets as runtimeVersionOverride: upstream
# refuses such a graph without one, and a version below 1.5.0 changes nothing upstream renders (it leaves such
# versions out of its worker hash) and nothing we render.
RUNTIME_VERSION = "1.0.0"


def as_upstream_admits(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of the DynamoGraphDeployment ``doc`` as a user feeds it after following upstream's rule: each
    component whose main image names no runtime version (and has none) gets ``runtimeVersionOverride`` 1.0.0. A
    component without an image stays as it is: no version makes upstream admit it."""
    return with_runtime_version_overrides(doc, RUNTIME_VERSION)


def has_main_images(doc: dict[str, Any]) -> bool:
    """Whether every component of the DynamoGraphDeployment ``doc`` has a main image (upstream refuses it else)."""
    return all(main.image for main in graph_main_images(doc.get("spec") or {}))


def load_claim(path: Path) -> dict[str, Any]:
    with path.open() as f:
        return yaml.safe_load(f)


def merged(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """``overlay`` merged into a copy of ``base`` (mappings merge, anything else replaces)."""
    out = dict(base)
    for key, value in overlay.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def status_example_xr(example: Path) -> dict[str, Any]:
    """The XR of ``tests/scenarios/status/<claim>-<state>/``: the XR of ``examples/<claim>.yaml``, with the directory's
    ``xr-overlay.json`` (e.g. ``spec.restart`` and the ``status.restart`` of the previous reconcile) merged in."""
    xr = claim_to_xr(load_claim(example_claim(example.name.rsplit("-", 1)[0])))
    overlay = example / "xr-overlay.json"
    return merged(xr, json.loads(overlay.read_text())) if overlay.exists() else xr
