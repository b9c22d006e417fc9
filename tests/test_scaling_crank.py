"""Scaling adapters through the real `crossplane render` (crank) and the in-process render.

- the adapter's own Composition on a claim of either version, a just-scaled adapter and a stamped
  one (examples/scaling/adapter*.yaml);
- the DGD with scaling adapters, without and with observed adapters (-o): the PodCliqueSet takes
  the adapters' replicas, and the desired adapters repeat them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fixtures.corpus import examples_of_kind, load_claim
from fixtures.tooling import REPO, crank_render
from functions.tooling.manifests import as_xr, claim_to_xr, dump_documents, find_composition, load_documents
from functions.tooling.pipeline import render

SCALING = REPO / "tests" / "scenarios" / "scaling"
# The adapter claims (examples/dgdsa, examples/v1alpha1) and the adapter XRs before and after a scale.
ADAPTERS = sorted([*examples_of_kind("DynamoGraphDeploymentScalingAdapter"), *SCALING.glob("adapter*.yaml")])
AUTOSCALED = REPO / "examples" / "dgd" / "vllm-autoscaled.yaml"
OBSERVED = SCALING / "vllm-autoscaled-observed.yaml"
SELECTOR = "nvidia.com/dynamo-graph-deployment-name={},nvidia.com/dynamo-component={}"


def write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(doc))
    return path


def both_renders(
    xr: dict[str, Any], functions_file: Path, tmp_path: Path, observed: Path | None = None
) -> list[dict[str, Any]]:
    """The in-process render, asserted byte-equal to crank's; as documents."""
    composition = find_composition(xr, load_documents(REPO / "compositions"))
    extra = ["-o", str(observed)] if observed else []
    theirs = crank_render(
        str(write(tmp_path / "xr.yaml", xr)),
        str(write(tmp_path / "composition.yaml", composition)),
        str(functions_file),
        *extra,
    )
    out = render(xr, composition, load_documents(observed) if observed else None, converge=False)
    ours = dump_documents([out.composite, *out.composed])
    assert list(yaml.safe_load_all(ours)) == list(yaml.safe_load_all(theirs))
    assert ours == theirs
    return list(yaml.safe_load_all(ours))


@pytest.mark.parametrize("path", ADAPTERS, ids=[p.stem for p in ADAPTERS])
def test_crank_renders_the_adapter_composition_like_the_in_process_render(
    path: Path, functions_file: Path, tmp_path: Path
) -> None:
    doc = load_claim(path)
    (xr, *composed) = both_renders(as_xr(doc), functions_file, tmp_path)
    assert composed == []  # the adapter composes nothing
    status = xr["status"]
    ref = doc["spec"]["dgdRef"]
    assert status["replicas"] == doc["spec"]["replicas"]
    assert status["selector"] == SELECTOR.format(ref["name"], ref.get("componentName") or ref.get("serviceName"))
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["Ready"]["status"] == "True"
    if path.stem == "adapter-scaled":
        assert conditions["Scaled"]["message"] == "scaled to 3 replicas"
        assert "lastScaleTime" not in status  # Crossplane stamps the condition after this run
    elif path.stem == "adapter-stamped":
        assert status["lastScaleTime"] == "2026-01-15T10:42:17Z"
        assert conditions["Scaled"]["message"] == "scaled to 3 replicas"
    else:
        assert "Scaled" not in conditions and "lastScaleTime" not in status


def _replicas(composed: list[dict[str, Any]]) -> tuple[dict[str, int], dict[str, int]]:
    """(clique name -> replicas of the PodCliqueSet, adapter component -> adapter spec.replicas)."""
    (pcs,) = [o for o in composed if o["kind"] == "PodCliqueSet"]
    cliques = {c["name"]: c["spec"]["replicas"] for c in pcs["spec"]["template"]["cliques"]}
    adapters = {
        o["spec"]["dgdRef"]["componentName"]: o["spec"]["replicas"]
        for o in composed
        if o["kind"] == "XDynamoGraphDeploymentScalingAdapter"
    }
    return cliques, adapters


def test_a_new_adapter_starts_from_the_component_replicas(functions_file: Path, tmp_path: Path) -> None:
    _, *composed = both_renders(claim_to_xr(load_claim(AUTOSCALED)), functions_file, tmp_path)
    cliques, adapters = _replicas(composed)
    assert adapters == {"VllmDecodeWorker": 2, "VllmPrefillWorker": 1}
    assert cliques == {"frontend": 1, "vllmdecodeworker": 2, "vllmprefillworker": 1}
    for adapter in (o for o in composed if o["kind"] == "XDynamoGraphDeploymentScalingAdapter"):
        assert "namespace" not in adapter["metadata"]  # a cluster-scoped XR: crank sets no namespace
        assert adapter["metadata"]["name"].startswith("dynamo-demo.vllm-autoscaled-")


def test_observed_adapters_are_the_source_of_truth(functions_file: Path, tmp_path: Path) -> None:
    _, *composed = both_renders(claim_to_xr(load_claim(AUTOSCALED)), functions_file, tmp_path, OBSERVED)
    cliques, adapters = _replicas(composed)
    # Autoscalers set the decode adapter to 4 and the prefill adapter to 3; the DGD still says 2 and 1.
    assert adapters == {"VllmDecodeWorker": 4, "VllmPrefillWorker": 3}
    assert cliques == {"frontend": 1, "vllmdecodeworker": 4, "vllmprefillworker": 3}
