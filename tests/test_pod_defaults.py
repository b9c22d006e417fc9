"""The schema defaults inside the pod specs an XR embeds, filled in by the steps (functions/api/pod_defaults.py):
upstream's API server applies them at admission, ours serves those pod specs open and stores them as written."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from fixtures.rendering import render_xr, rendered
from functions.api.normalise import graph_from_xr
from functions.api.pod_defaults import with_pod_spec_defaults
from functions.api.schema_check import load_schema, spec_schema_file
from functions.kinds.graph.component_pathway import raw_components, worker_hash
from functions.kube.labels import WORKER_HASH
from functions.tooling.manifests import claim_to_xr

GRAPH_SCHEMA = spec_schema_file(Path(__file__).resolve().parents[1] / "functions" / "kinds" / "graph")
PORT = {"name": "extra", "containerPort": 7000}


def v1beta1_spec(main: dict[str, Any] | None = None, **pod: Any) -> dict[str, Any]:
    container = {"name": "main", "image": "runtime:1.0.0", **(main or {})}
    return {
        "components": [{"name": "W", "type": "worker", "podTemplate": {"spec": {"containers": [container], **pod}}}]
    }


def pod_of(spec: dict[str, Any]) -> dict[str, Any]:
    return spec["components"][0]["podTemplate"]["spec"]


@pytest.mark.parametrize(
    ("main", "pod", "expected_main", "expected_pod"),
    [
        pytest.param({"ports": [PORT]}, {}, {"ports": [{**PORT, "protocol": "TCP"}]}, {}, id="port-protocol"),
        pytest.param(
            {"ports": [{**PORT, "protocol": None}]},
            {},
            {"ports": [{**PORT, "protocol": "TCP"}]},
            {},
            id="null-is-absent",
        ),
        pytest.param(
            {"ports": [{**PORT, "protocol": "UDP"}]}, {}, {"ports": [{**PORT, "protocol": "UDP"}]}, {}, id="set-is-kept"
        ),
        pytest.param(
            {"readinessProbe": {"grpc": {"port": 9}}},
            {},
            {"readinessProbe": {"grpc": {"port": 9, "service": ""}}},
            {},
            id="grpc-probe-service",
        ),
        pytest.param(
            {"env": [{"name": "A", "valueFrom": {"secretKeyRef": {"key": "k"}}}]},
            {},
            {"env": [{"name": "A", "valueFrom": {"secretKeyRef": {"key": "k", "name": ""}}}]},
            {},
            id="secret-key-ref-name",
        ),
        pytest.param(
            {"envFrom": [{"configMapRef": {}}]},
            {},
            {"envFrom": [{"configMapRef": {"name": ""}}]},
            {},
            id="env-from-name",
        ),
        pytest.param({}, {"imagePullSecrets": [{}]}, {}, {"imagePullSecrets": [{"name": ""}]}, id="pull-secret-name"),
        pytest.param(
            {},
            {"volumes": [{"name": "v", "rbd": {"image": "i", "monitors": ["m"]}}]},
            {},
            {
                "volumes": [
                    {
                        "name": "v",
                        "rbd": {
                            "image": "i",
                            "monitors": ["m"],
                            "keyring": "/etc/ceph/keyring",
                            "pool": "rbd",
                            "user": "admin",
                        },
                    }
                ]
            },
            id="rbd-volume",
        ),
        pytest.param(
            {},
            {"initContainers": [{"name": "init", "ports": [PORT]}]},
            {},
            {"initContainers": [{"name": "init", "ports": [{**PORT, "protocol": "TCP"}]}]},
            id="init-container-port",
        ),
    ],
)
def test_a_pod_spec_gets_the_schema_defaults_it_lacks(
    main: dict[str, Any], pod: dict[str, Any], expected_main: dict[str, Any], expected_pod: dict[str, Any]
) -> None:
    spec = v1beta1_spec(main, **pod)
    before = copy.deepcopy(spec)
    out = with_pod_spec_defaults(spec, load_schema(GRAPH_SCHEMA))
    assert pod_of(out) == pod_of(v1beta1_spec(expected_main, **expected_pod))
    assert spec == before  # a new value


def test_a_v1alpha1_main_container_gets_them_too() -> None:
    spec = {"services": {"W": {"componentType": "worker", "extraPodSpec": {"mainContainer": {"ports": [PORT]}}}}}
    out = with_pod_spec_defaults(spec, load_schema(GRAPH_SCHEMA))
    assert out["services"]["W"]["extraPodSpec"]["mainContainer"]["ports"] == [{**PORT, "protocol": "TCP"}]


def test_outside_the_pod_specs_nothing_is_defaulted() -> None:
    """The served schema keeps those defaults, and the API server applies them."""
    spec = {
        "env": [{"name": "A", "valueFrom": {"secretKeyRef": {"key": "k"}}}],
        "components": [{"name": "W", "type": "worker", "multinode": {}}],
    }
    assert with_pod_spec_defaults(spec, load_schema(GRAPH_SCHEMA)) == spec


def graph(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns", "annotations": annotations or {}},
        "spec": {"backendFramework": "vllm", **v1beta1_spec({"ports": [PORT]})},
    }


def ports(node: Any) -> list[dict[str, Any]]:
    """Every port of ``node`` (at any depth) that is the declared one."""
    if isinstance(node, list):
        return [p for item in node for p in ports(item)]
    if not isinstance(node, dict):
        return []
    own = [node] if node.get("containerPort") == PORT["containerPort"] else []
    return own + [p for value in node.values() for p in ports(value)]


def test_the_grove_pathway_composes_the_declared_port_with_its_protocol() -> None:
    (pcs,) = [o for o in rendered(graph()) if o["kind"] == "PodCliqueSet"]
    assert ports(pcs) == [{**PORT, "protocol": "TCP"}]


def test_the_component_pathway_gives_the_dcd_and_its_deployment_the_protocol() -> None:
    (dcd,) = [o for o in rendered(graph({"nvidia.com/enable-grove": "false"})) if "ComponentDeployment" in o["kind"]]
    assert ports(dcd["spec"]) == [{**PORT, "protocol": "TCP"}]  # as upstream's DCD, copied from the stored DGD
    (deployment,) = [o for o in render_xr(dcd) if o["kind"] == "Deployment"]
    assert ports(deployment) == [{**PORT, "protocol": "TCP"}]


def test_the_worker_hash_reads_the_spec_as_stored() -> None:
    """The defaults change no pod: a graph stored before the step filled them in keeps its worker hash (no
    rollout on upgrade)."""
    xr = claim_to_xr(graph())
    stored = graph_from_xr(xr)
    (pcs,) = [o for o in rendered(graph()) if o["kind"] == "PodCliqueSet"]
    labels = pcs["spec"]["template"]["cliques"][0]["labels"]
    assert labels[WORKER_HASH] == worker_hash(stored, raw_components(stored, xr["spec"]))
