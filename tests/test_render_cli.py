"""`function-dynamo render` as a user runs it, and the pipeline runner's requirement loop."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from fixtures.tooling import REPO
from functions.tooling.pipeline import RenderError, fetch, render
from functions.tooling.render import observed_for


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
    # nothing is observed yet; the rest is ready once applied (graph_status_step), the PodCliqueSet is what waits
    assert xr["status"]["conditions"][0]["message"] == "Unready resources: podcliqueset"
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
    assert f"skipped {path}#0 ConfigMap/x: not a Dynamo kind" in proc.stderr


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


# --- The habits of kubectl and crossplane render (issue #28): -o is the output format, a multi-document file
# renders every claim or XR it holds, warnings and hints on stderr.

AGG, DISAGG = "examples/dgd/vllm-agg.yaml", "examples/v1alpha1/vllm-disagg.yaml"
PLACED = "examples/platform/vllm-agg-placed.yaml"


# render's args -> the JSON's kind: several objects in kubectl's List, one object as itself
JSON_CASES = {
    "-o json": ((AGG, "-o", "json"), "List"),
    "--output json": ((AGG, "--output", "json"), "List"),
    "--print-xr -o json": ((AGG, "--print-xr", "-o", "json"), "DynamoGraphDeployment"),
}


@pytest.mark.parametrize(("args", "kind"), JSON_CASES.values(), ids=JSON_CASES.keys())
def test_output_json_prints_what_kubectl_prints(args: tuple[str, ...], kind: str) -> None:
    proc = run_cli(*args)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["kind"] == kind
    as_yaml = list(yaml.safe_load_all(run_cli(*args[:-2]).stdout))  # the same objects as the YAML
    assert (doc["items"] if kind == "List" else [doc]) == as_yaml
    if kind == "List":
        assert doc["apiVersion"] == "v1" and doc["metadata"] == {"resourceVersion": ""}
        assert [d["kind"] for d in doc["items"]][:2] == ["DynamoGraphDeployment", "Role"]


def test_output_yaml_is_the_default() -> None:
    assert run_cli(AGG, "-o", "yaml").stdout == run_cli(AGG).stdout


# command line -> what the error says: -o takes a format now, and the flag that takes the file is named
OUTPUT_FILE_CASES = {
    "render -o observed.yaml": (
        ["render", AGG, "-o", "observed.yaml"],
        "-o is the output format now, as kubectl's; observed resources are given with --observed-resources FILE",
    ),
    "export -o out.yaml": (
        ["export", "examples/dgdr/trtllm-review.yaml", "-o", "out.yaml"],
        "-o is the output format now, as kubectl's; write to a file with --output-file FILE",
    ),
}


@pytest.mark.parametrize(("args", "hint"), OUTPUT_FILE_CASES.values(), ids=OUTPUT_FILE_CASES.keys())
def test_a_file_given_to_o_names_the_flag_for_it(args: list[str], hint: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "functions.tooling.main", *args], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert "Invalid value for '-o' / '--output'" in proc.stderr
    assert hint in " ".join(proc.stderr.split())  # click may wrap the line


def test_observed_resources_keep_their_long_flag() -> None:
    observed = "tests/scenarios/scaling/vllm-autoscaled-observed.yaml"
    docs = list(
        yaml.safe_load_all(run_cli("examples/dgd/vllm-autoscaled.yaml", "--observed-resources", observed).stdout)
    )
    pcs = next(d for d in docs if d["kind"] == "PodCliqueSet")
    assert sorted(c["spec"]["replicas"] for c in pcs["spec"]["template"]["cliques"]) == [1, 3, 4]


CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}


def multi_document_file(tmp_path: Path) -> Path:
    """vllm-agg, a ConfigMap, vllm-disagg: as an upstream recipe mixes them."""
    docs = [*yaml.safe_load_all((REPO / AGG).read_text()), CONFIG_MAP, *yaml.safe_load_all((REPO / DISAGG).read_text())]
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


# extra args -> the XRs printed, in order (each followed by what it composes)
MULTI_CASES = {
    "every claim": ([], ["vllm-agg", "vllm-disagg"]),
    "--name": (["--name", "vllm-disagg"], ["vllm-disagg"]),
    "--print-xr": (["--print-xr"], ["vllm-agg", "vllm-disagg"]),
}


@pytest.mark.parametrize(("extra", "names"), MULTI_CASES.values(), ids=MULTI_CASES.keys())
def test_a_multi_document_file_renders_every_claim_it_holds(tmp_path: Path, extra: list[str], names: list[str]) -> None:
    path = multi_document_file(tmp_path)
    proc = run_cli(str(path), *extra)
    assert proc.returncode == 0, proc.stderr
    docs = list(yaml.safe_load_all(proc.stdout))
    assert [d["metadata"]["name"] for d in docs if d["kind"] == "DynamoGraphDeployment"] == names
    for name in names:  # each renders as it does alone
        alone = list(yaml.safe_load_all(run_cli(str(REPO / (AGG if name == "vllm-agg" else DISAGG)), *extra).stdout))
        start = next(
            i for i, d in enumerate(docs) if d["kind"] == "DynamoGraphDeployment" and d["metadata"]["name"] == name
        )
        assert docs[start : start + len(alone)] == alone
    assert f"skipped {path}#1 ConfigMap/cm: not a Dynamo kind" in proc.stderr
    json_out = json.loads(run_cli(str(path), *extra, "-o", "json").stdout)
    assert json_out["items"] == docs


def test_a_name_no_document_has_is_an_error(tmp_path: Path) -> None:
    proc = run_cli(str(multi_document_file(tmp_path)), "--name", "nope")
    assert proc.returncode == 1
    assert "no claim or XR named 'nope' (the file holds vllm-agg, vllm-disagg)" in proc.stderr
    assert proc.stdout == ""


def test_an_error_in_one_document_names_it(tmp_path: Path) -> None:
    path = multi_document_file(tmp_path)
    docs = list(yaml.safe_load_all(path.read_text()))
    docs[2]["spec"]["pvcs"] = [{"name": "vllm-model-cache", "create": False}]  # vllm-disagg's cache must exist
    path.write_text(yaml.safe_dump_all(docs))
    proc = run_cli(str(path))
    assert proc.returncode == 1
    assert f"function-dynamo render: {path}#2: pipeline step 'render' returned a fatal result" in proc.stderr
    assert proc.stdout == ""


def placed_platform_config(tmp_path: Path) -> Path:
    config = yaml.safe_load((REPO / "examples" / "operator-config.yaml").read_text())
    config["metadata"]["name"] = "dynamo-platform-gpu-east"
    config["data"]["tenants"] = {"namespaces": ["dynamo-demo"]}  # as a DynamoPlatform admitting the graph publishes
    path = tmp_path / "gpu-east.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


PLATFORM_WARNING = "Warning: metadata.annotations[nvidia.com/dynamo-platform]: DynamoPlatform 'gpu-east' is not ready"
PLATFORM_HINT = (
    "hint: the DynamoPlatform gpu-east's EnvironmentConfig dynamo-platform-gpu-east can be given with "
    "-e/--required-resources FILE"
)


# extra args -> (a warning on stderr, "Result" documents on stdout)
WARNING_CASES = {
    "without -r": ([], True, False),
    "with -r": (["-r"], True, True),
    "with the platform's config": (["-e", "PLATFORM"], False, False),
}


@pytest.mark.parametrize(("extra", "warned", "results"), WARNING_CASES.values(), ids=WARNING_CASES.keys())
def test_warnings_go_to_stderr_with_the_flag_that_fixes_them(
    tmp_path: Path, extra: list[str], warned: bool, results: bool
) -> None:
    args = [str(placed_platform_config(tmp_path)) if a == "PLATFORM" else a for a in extra]
    proc = run_cli(PLACED, *args)
    assert proc.returncode == 0, proc.stderr
    assert (PLATFORM_WARNING in proc.stderr) is warned
    assert (PLATFORM_HINT in proc.stderr) is warned
    assert proc.stderr.count(PLATFORM_WARNING) == int(warned)  # once, though two steps return it
    assert ("kind: Result" in proc.stdout) is results


def test_a_missing_existing_pvc_names_the_flag_to_pass_it(tmp_path: Path) -> None:
    claim = yaml.safe_load((REPO / DISAGG).read_text())
    claim["spec"]["pvcs"] = [{"name": "vllm-model-cache", "create": False}]
    path = tmp_path / "pvc.yaml"
    path.write_text(yaml.safe_dump(claim))
    proc = run_cli(str(path))
    assert proc.returncode == 1
    # the function's own message, unchanged, then the command line's hint
    assert "PersistentVolumeClaim dynamo-demo/vllm-model-cache does not exist and create is false; create it" in (
        proc.stderr
    )
    assert (
        "hint: pass the PersistentVolumeClaim dynamo-demo/vllm-model-cache with -e/--required-resources FILE "
        "(e.g. kubectl get pvc vllm-model-cache -n dynamo-demo -o yaml)"
    ) in proc.stderr
    existing = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "vllm-model-cache", "namespace": "dynamo-demo"},
    }
    (tmp_path / "required.yaml").write_text(yaml.safe_dump(existing))
    assert run_cli(str(path), "-e", str(tmp_path / "required.yaml")).returncode == 0


def _labelled(name: str, composite: str | None) -> dict:
    labels = {"crossplane.io/composite": composite} if composite else {}
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "labels": labels}}


# whose observed object -> whether rendering XR "a" of a file that also holds XR "b" sees it
OBSERVED_CASES = {"a's own": ("a", True), "b's": ("b", False), "unlabelled": (None, True), "another XR's": ("c", True)}


@pytest.mark.parametrize(("composite", "seen"), OBSERVED_CASES.values(), ids=OBSERVED_CASES.keys())
def test_each_xr_of_a_file_observes_all_but_another_ones_resources(composite: str | None, seen: bool) -> None:
    xrs = [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]
    obj = _labelled("svc", composite)
    assert observed_for(xrs[0], [obj], xrs) == ([obj] if seen else [])
