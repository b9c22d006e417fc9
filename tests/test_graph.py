"""Both API shapes normalise into one graph; bad input names the field."""

from __future__ import annotations

import pytest

from functions.api.graph import SpecError
from functions.api.normalise import graph_from_xr
from functions.tooling.manifests import claim_to_xr


def claim(spec: dict, api_version: str = "nvidia.com/v1alpha1") -> dict:
    return {
        "apiVersion": api_version,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": spec,
    }


def test_v1alpha1_service_becomes_component_with_main_container() -> None:
    graph = graph_from_xr(
        claim_to_xr(
            claim(
                {
                    "envs": [{"name": "B", "value": "graph"}],
                    "services": {
                        "Worker": {
                            "componentType": "worker",
                            "replicas": 3,
                            "envFromSecret": "hf",
                            "envs": [{"name": "A", "value": "1"}],
                            "resources": {"limits": {"gpu": "2", "custom": {"ephemeral-storage": "1Gi"}}},
                            "extraPodSpec": {"nodeSelector": {"x": "y"}, "mainContainer": {"image": "img"}},
                        }
                    },
                }
            )
        )
    )
    (component,) = graph.components
    assert graph.shape == "v1alpha1"
    assert (graph.name, graph.namespace) == ("g", "ns")
    assert component.replicas == 3
    assert component.pod_template["spec"]["nodeSelector"] == {"x": "y"}
    (main,) = component.pod_template["spec"]["containers"]
    assert main["name"] == "main"
    assert main["image"] == "img"
    assert main["envFrom"] == [{"secretRef": {"name": "hf"}}]
    assert main["resources"] == {"limits": {"nvidia.com/gpu": "2", "ephemeral-storage": "1Gi"}}
    assert graph.envs == ({"name": "B", "value": "graph"},)


def test_v1beta1_component_keeps_its_pod_template() -> None:
    graph = graph_from_xr(
        claim_to_xr(
            claim(
                {
                    "components": [
                        {"name": "b", "type": "frontend"},
                        {"name": "a", "type": "worker", "multinode": {"nodeCount": 4}},
                    ]
                },
                "nvidia.com/v1beta1",
            )
        )
    )
    assert graph.shape == "v1beta1"
    assert [c.name for c in graph.components] == ["b", "a"]  # the DGD's order, as upstream keeps it
    assert graph.components[1].node_count == 4
    assert graph.components[0].pod_template["spec"]["containers"] == [{"name": "main"}]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({}, "spec: exactly one of spec.services (v1alpha1 shape) or spec.components (v1beta1 shape) must be set"),
        ({"services": {}}, "spec.services: must not be empty"),
        ({"services": {"W": {"replicas": -1}}}, "spec.services.W.replicas: Input should be greater than or equal to 0"),
        ({"services": {"W": {"multinode": {"nodeCount": 1}}}}, "spec.services.W.multinode.nodeCount: Input should be"),
        ({"services": {"W": {"replica": 1}}}, "spec.services.W.replica: Extra inputs are not permitted"),
        ({"components": [{"name": "a", "type": "gpu"}]}, "spec.components[0].type: Input should be"),
        ({"backendFramework": "onnx", "services": {"W": {}}}, "spec.backendFramework: Input should be"),
    ],
)
def test_bad_spec_names_the_field(spec: dict, message: str) -> None:
    with pytest.raises(SpecError) as err:
        graph_from_xr(claim_to_xr(claim(spec)))
    assert message in str(err.value)


def test_xr_without_claim_namespace_is_rejected() -> None:
    with pytest.raises(SpecError, match="namespace"):
        graph_from_xr(
            {
                "apiVersion": "nvidia.com/v1beta1",
                "kind": "XDynamoGraphDeployment",
                "metadata": {"name": "x"},
                "spec": {"services": {"a": {}}},
            }
        )
