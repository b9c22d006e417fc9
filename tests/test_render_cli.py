"""`function-dynamo render` as a user runs it, and the pipeline runner's requirement loop."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from functions.tooling.pipeline import RenderError, fetch, render
from server import REPO


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "functions.tooling.main", "render", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_render_prints_xr_then_composed_resources_sorted_by_resource_name() -> None:
    proc = run_cli("examples/v1alpha1/vllm-disagg.yaml")
    assert proc.returncode == 0, proc.stderr
    docs = list(yaml.safe_load_all(proc.stdout))
    names = [d["metadata"].get("annotations", {}).get("crossplane.io/composition-resource-name") for d in docs[1:]]
    assert names == sorted(names)
    assert [d["kind"] for d in docs] == [
        "DynamoGraphDeployment",
        "Role",
        "RoleBinding",
        "ServiceAccount",
        "PodCliqueSet",
        "PersistentVolumeClaim",
        "Service",
        "Service",
        "Service",
    ]
    xr = docs[0]
    pcs = next(d for d in docs if d["kind"] == "PodCliqueSet")
    svc = next(d for d in docs if d["kind"] == "Service")
    assert xr["status"]["conditions"][0]["message"] == (
        "Unready resources: discovery-role, discovery-rolebinding, discovery-serviceaccount, and 5 more"
    )
    assert xr["metadata"] == {"name": "vllm-disagg", "namespace": "dynamo-demo"}  # the manifest is the XR
    assert pcs["metadata"]["name"] == "vllm-disagg"
    assert pcs["metadata"]["namespace"] == "dynamo-demo"
    assert "crossplane.io/claim-name" not in pcs["metadata"]["labels"]
    assert pcs["metadata"]["labels"]["crossplane.io/composite"] == "vllm-disagg"
    assert pcs["metadata"]["ownerReferences"][0]["kind"] == "DynamoGraphDeployment"
    assert [c["name"] for c in pcs["spec"]["template"]["cliques"]] == [
        "frontend",
        "vllmdecodeworker",
        "vllmprefillworker",
    ]
    assert svc["metadata"]["name"] == "vllm-disagg-frontend"


def test_render_claims_renders_the_claims_xr_through_the_claims_composition() -> None:
    proc = run_cli("examples/v1alpha1/vllm-disagg.yaml", "--claims")
    assert proc.returncode == 0, proc.stderr
    docs = list(yaml.safe_load_all(proc.stdout))
    assert docs[0]["kind"] == "XDynamoGraphDeployment"
    assert docs[0]["metadata"]["name"].startswith("vllm-disagg-")
    pcs = next(d for d in docs if d["kind"] == "PodCliqueSet")
    assert pcs["metadata"]["labels"]["crossplane.io/claim-name"] == "vllm-disagg"
    assert pcs["metadata"]["ownerReferences"][0]["kind"] == "XDynamoGraphDeployment"
    # the composed objects are the same but for Crossplane's claim and owner bookkeeping
    default = list(yaml.safe_load_all(run_cli("examples/v1alpha1/vllm-disagg.yaml").stdout))

    def body(doc: dict) -> dict:
        return {k: v for k, v in doc.items() if k != "metadata"}

    assert [body(d) for d in docs[1:]] == [body(d) for d in default[1:]]


def test_render_with_results_and_full_xr() -> None:
    proc = run_cli("examples/dgd/vllm-agg.yaml", "--claims", "-x", "-r")
    assert proc.returncode == 0, proc.stderr
    xr = next(yaml.safe_load_all(proc.stdout))
    assert xr["spec"]["claimRef"] == {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "name": "vllm-agg",
        "namespace": "dynamo-demo",
    }


def test_render_reports_a_bad_claim_with_the_field_and_exits_1(tmp_path: Path) -> None:
    claim = yaml.safe_load((REPO / "examples" / "dgd" / "vllm-agg.yaml").read_text())
    claim["spec"]["components"][1]["replicas"] = "two"
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(claim))
    proc = run_cli(str(path))
    assert proc.returncode == 1
    assert "spec.components[1].replicas" in proc.stderr
    assert proc.stdout == ""


def test_render_rejects_a_kind_it_does_not_serve(tmp_path: Path) -> None:
    path = tmp_path / "cm.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    proc = run_cli(str(path))
    assert proc.returncode == 1
    assert "kind: 'ConfigMap' is not a kind this package serves" in proc.stderr


def _fake_runner(calls: list[fnv1.RunFunctionRequest]):
    def runner(req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
        calls.append(fnv1.RunFunctionRequest.FromString(req.SerializeToString()))
        rsp = fnv1.RunFunctionResponse()
        rsp.requirements.resources["cfg"].CopyFrom(
            fnv1.ResourceSelector(api_version="v1", kind="ConfigMap", match_name="wanted")
        )
        return rsp

    return runner


def test_requirement_loop_feeds_requested_resources_back_until_stable() -> None:
    calls: list[fnv1.RunFunctionRequest] = []
    xr = {"apiVersion": "example.org/v1", "kind": "XThing", "metadata": {"name": "t"}}
    comp = {
        "spec": {
            "compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XThing"},
            "mode": "Pipeline",
            "pipeline": [{"step": "one", "functionRef": {"name": "f"}}],
        }
    }
    required = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "wanted"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other"}},
    ]
    render(xr, comp, required=required, runner=_fake_runner(calls))
    assert len(calls) == 2  # first call asks, second call gets it and asks the same: stable
    assert "cfg" not in calls[0].required_resources
    (item,) = calls[1].required_resources["cfg"].items
    assert item.resource["metadata"]["name"] == "wanted"


def test_fetch_by_labels_sorted_by_name() -> None:
    sel = fnv1.ResourceSelector(api_version="v1", kind="Pod")
    sel.match_labels.labels["app"] = "x"
    pods = [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": n, "labels": {"app": a}}}
        for n, a in (("b", "x"), ("a", "x"), ("c", "y"))
    ]
    assert [r.resource["metadata"]["name"] for r in fetch(sel, pods).items] == ["a", "b"]


def test_composition_for_another_kind_is_refused() -> None:
    comp = {"spec": {"compositeTypeRef": {"apiVersion": "v1", "kind": "Other"}, "mode": "Pipeline"}}
    with pytest.raises(RenderError, match="does not match XR's kind"):
        render({"apiVersion": "v1", "kind": "XThing", "metadata": {"name": "t"}}, comp)


def test_render_nested_renders_the_component_deployments_too() -> None:
    plain = list(yaml.safe_load_all(run_cli("examples/v1alpha1/vllm-disagg-no-grove.yaml").stdout))
    proc = run_cli("examples/v1alpha1/vllm-disagg-no-grove.yaml", "--nested")
    assert proc.returncode == 0, proc.stderr
    docs = list(yaml.safe_load_all(proc.stdout))
    assert docs[: len(plain)] == plain  # the graph's own render comes first, unchanged
    nested = docs[len(plain) :]
    dcds = [d for d in plain if d["kind"] == "DynamoComponentDeployment"]
    deployments = [d for d in nested if d["kind"] == "Deployment"]
    assert len(deployments) == len(dcds) == 3
    assert all(d["metadata"]["namespace"] == "dynamo-demo" for d in dcds)  # upstream's names, in the DGD's namespace
    assert {d["metadata"]["name"] for d in deployments} == {d["metadata"]["name"] for d in dcds}
    # Under a claim the nested XRs are cluster-scoped: their names carry the namespace, their upstream names
    # ride in annotations
    claims = list(yaml.safe_load_all(run_cli("examples/v1alpha1/vllm-disagg-no-grove.yaml", "--claims").stdout))
    cluster_dcds = [d for d in claims if d["kind"] == "XDynamoComponentDeployment"]
    assert {d["metadata"]["name"] for d in cluster_dcds} == {f"dynamo-demo.{d['metadata']['name']}" for d in dcds}
    assert {d["metadata"]["annotations"]["dynamo.fn.crossplane.io/claim-name"] for d in cluster_dcds} == {
        d["metadata"]["name"] for d in dcds
    }
    assert "Deployment" not in {d["kind"] for d in plain}
