"""``migrate release --dry-run`` with the real upstream operator running: before anything moves, which graphs
would restart pods if moved to the package, and why.

The operator (``tests/harness/operator_stack.py``) composes an aggregated graph and a multinode one on the Grove
pathway. The dry run renders each as the package will (reading the operator's own configuration as its
``dynamo-platform`` EnvironmentConfig) and applies every composed workload as a server-side dry run over the
operator's: the aggregated graph's PodCliqueSet keeps its pod templates; the multinode one's would change where the
package writes its own launch scripts, and the dry run says so, naming the deviation (docs/deviations.md). Nothing
is written: the operator's objects keep their resource versions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from functions.tooling.migration import portable_manifest
from harness.apiserver import ensure_namespace, resource_path
from harness.cli import migrate
from harness.controlplane import require_kubectl
from harness.differential import platform_config
from harness.operator_stack import OperatorStack
from harness.poll import until

REPO = Path(__file__).resolve().parents[1]
NAMESPACE = "previewing"
GRAPHS = ("vllm-agg", "trtllm-multinode")
SECONDS = 180.0
Obj = dict[str, Any]


def _pcs_versions(stack: OperatorStack) -> dict[str, str]:
    items = stack.cp.client.get(resource_path("grove.io", "v1alpha1", "podcliquesets", NAMESPACE))["items"]
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in items}


def test_the_dry_run_names_the_graphs_that_would_restart(upstream_operator: OperatorStack, tmp_path: Path) -> None:
    stack = upstream_operator
    binary = require_kubectl()
    ensure_namespace(stack.cp.client, NAMESPACE)
    for name in GRAPHS:
        graph = yaml.safe_load((REPO / "examples" / "dgd" / f"{name}.yaml").read_text())
        graph["metadata"]["namespace"] = NAMESPACE
        stack.cp.client.create(resource_path("nvidia.com", "v1beta1", "dynamographdeployments", NAMESPACE), graph)
    until("the operator's PodCliqueSets", lambda: set(_pcs_versions(stack)) >= set(GRAPHS), SECONDS)
    before = _pcs_versions(stack)
    config = tmp_path / "platform.yaml"
    config.write_text(yaml.safe_dump(platform_config(stack.config)))

    proc = migrate(stack.cp, binary, "release", "--dry-run", "-n", NAMESPACE, "-e", str(config))

    out = proc.stdout + proc.stderr
    print(out)  # -rP shows what a person reads
    assert proc.returncode == 1, out  # one graph would restart
    lines = proc.stdout.splitlines()
    assert f"DynamoGraphDeployment/{NAMESPACE}/vllm-agg: moves without a restart" in proc.stdout, out
    assert any("1 workload(s) keep their pod templates" in line for line in lines if "vllm-agg" in line), out
    assert f"DynamoGraphDeployment/{NAMESPACE}/trtllm-multinode: would restart" in proc.stdout, out
    assert "PodCliqueSet/trtllm-multinode:" in proc.stdout, out
    assert ".containers[main].args" in proc.stdout and "The multinode helper scripts" in proc.stdout, out
    assert "1 of 2 graph(s) would restart pods" in proc.stderr, out
    assert _pcs_versions(stack) == before  # a dry run writes nothing
    for name in GRAPHS:
        stack.cp.client.delete(resource_path("nvidia.com", "v1beta1", "dynamographdeployments", NAMESPACE, name))


CONVERSION_RECORD = "nvidia.com/dgd-spec"


def test_a_v1alpha1_graphs_own_fields_ride_along_in_the_conversion_record(upstream_operator: OperatorStack) -> None:
    """What the v1beta1 shape cannot say of a v1alpha1 graph (a service's own annotations) the operator keeps in its
    conversion record, the annotation ``nvidia.com/dgd-spec``; ``release`` reads graphs as stored (v1beta1) and
    carries the record in the manifest's annotations, and the operator, given that manifest, restores the fields
    when the graph is read as v1alpha1 again. (Neither side renders them at the pinned commit.)"""
    client = upstream_operator.cp.client
    ensure_namespace(client, NAMESPACE)
    graph = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "alpha-annotated", "namespace": NAMESPACE},
        "spec": {
            "services": {
                "Frontend": {
                    "componentType": "frontend",
                    "replicas": 1,
                    "annotations": {"team.example.com/owner": "serving"},
                    "extraPodSpec": {"mainContainer": {"image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"}},
                }
            }
        },
    }
    client.create(resource_path("nvidia.com", "v1alpha1", "dynamographdeployments", NAMESPACE), graph)
    stored = client.get(resource_path("nvidia.com", "v1beta1", "dynamographdeployments", NAMESPACE, "alpha-annotated"))
    manifest = portable_manifest(stored)
    assert manifest["apiVersion"] == "nvidia.com/v1beta1"
    assert "team.example.com/owner" in manifest["metadata"]["annotations"][CONVERSION_RECORD]

    # back on the operator: the released manifest, applied, reads as the v1alpha1 graph it was
    client.delete(resource_path("nvidia.com", "v1beta1", "dynamographdeployments", NAMESPACE, "alpha-annotated"))
    graphs = resource_path("nvidia.com", "v1beta1", "dynamographdeployments", NAMESPACE)
    until(
        "the graph gone", lambda: "alpha-annotated" not in {g["metadata"]["name"] for g in client.get(graphs)["items"]}
    )
    client.create(resource_path("nvidia.com", "v1beta1", "dynamographdeployments", NAMESPACE), manifest)
    alpha = client.get(resource_path("nvidia.com", "v1alpha1", "dynamographdeployments", NAMESPACE, "alpha-annotated"))
    assert alpha["spec"]["services"]["Frontend"]["annotations"] == {"team.example.com/owner": "serving"}, alpha["spec"]
    client.delete(resource_path("nvidia.com", "v1beta1", "dynamographdeployments", NAMESPACE, "alpha-annotated"))
