"""A v1alpha1 DGD and its v1beta1 conversion (docs/upstream/operator.md §8) render the same resources."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from fixtures.corpus import corpus_dgds
from functions.api.conversion import v1alpha1_to_v1beta1
from functions.api.graph import SpecError
from functions.api.normalise import graph_from_xr
from functions.api.operator_config import OperatorConfig
from functions.kinds.graph.graph_render_step import render_graph
from functions.tooling.manifests import claim_to_xr

ALPHA = [(i, d) for i, d in corpus_dgds() if d["apiVersion"] == "nvidia.com/v1alpha1" and d.get("spec")]


def render(doc: dict[str, Any]) -> dict[str, dict[str, Any]] | str:
    doc = yaml.safe_load(yaml.safe_dump(doc))
    doc.setdefault("metadata", {})["namespace"] = "conv"
    try:
        return render_graph(graph_from_xr(claim_to_xr(doc)), OperatorConfig())
    except SpecError as err:
        return str(err).replace("spec.services.", "").replace("spec.components", "")


def test_there_are_v1alpha1_dgds_to_convert() -> None:
    assert len(ALPHA) > 50


@pytest.mark.parametrize(("doc_id", "doc"), ALPHA, ids=[a[0] for a in ALPHA])
def test_conversion_renders_the_same_resources(doc_id: str, doc: dict[str, Any]) -> None:
    conversion = v1alpha1_to_v1beta1(doc)
    assert conversion.dgd["apiVersion"] == "nvidia.com/v1beta1"
    if conversion.dropped:
        # Upstream keeps these in an annotation; a plain v1beta1 manifest cannot say them, so the
        # renders may differ. The conversion must name them rather than lose them silently.
        for path in conversion.dropped:
            assert path.split(".")[-1] in yaml.safe_dump(doc)
        return
    alpha, beta = render(doc), render(conversion.dgd)
    if isinstance(alpha, str) or isinstance(beta, str):
        # Both shapes refuse it alike (the field paths differ in spelling only).
        assert isinstance(alpha, str) and isinstance(beta, str), (alpha, beta)
        assert alpha.split(": ", 1)[-1].split(": ")[-1] == beta.split(": ", 1)[-1].split(": ")[-1], (alpha, beta)
        return
    assert alpha == beta


def test_conversion_reports_fields_v1beta1_cannot_hold() -> None:
    doc = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "x"},
        "spec": {
            "pvcs": [{"name": "p"}],
            "services": {"F": {"componentType": "frontend", "ingress": {"enabled": True}}},
        },
    }
    assert v1alpha1_to_v1beta1(doc).dropped == ["spec.pvcs", "spec.services.F.ingress"]


def test_worker_sub_types_become_prefill_and_decode_types() -> None:
    doc = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "x"},
        "spec": {"services": {"P": {"componentType": "worker", "subComponentType": "prefill"}}},
    }
    (component,) = v1alpha1_to_v1beta1(doc).dgd["spec"]["components"]
    assert component["type"] == "prefill"
    # the pods' sub-component-type label comes from the type itself, not from a label the user never wrote
    assert "labels" not in (component.get("podTemplate") or {}).get("metadata", {})
