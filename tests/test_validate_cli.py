"""`function-dynamo validate`: the cluster's checks (schema, CEL) and the function's, offline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fixtures.corpus import EXAMPLE_CLAIMS, as_upstream_admits, corpus_dgds, examples_of_kind, has_main_images
from fixtures.tooling import REPO, require_shared
from functions.tooling.manifests import load_documents


def validate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "functions.tooling.main", "validate", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def write(path: Path, *docs: dict) -> Path:
    path.write_text(yaml.safe_dump_all(docs))
    return path


def dgd(spec: dict, **meta: object) -> dict:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "x", "namespace": "ns", **meta},
        "spec": spec,
    }


def test_examples_are_valid() -> None:
    proc = validate("examples", "tests/scenarios", "--operator-config", "examples/operator-config.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("other documents skipped (-v lists them)")
    # The scaling adapters: claims, and XRs as observed.
    adapters = [d for p in examples_of_kind("DynamoGraphDeploymentScalingAdapter") for d in load_documents(p)]
    adapters += load_documents(REPO / "tests" / "scenarios" / "scaling")
    assert {d["kind"].removeprefix("X") for d in adapters} == {"DynamoGraphDeploymentScalingAdapter"}
    # The DynamoComponentDeployment claims.
    dcds = [d for p in examples_of_kind("DynamoComponentDeployment") for d in load_documents(p)]
    assert {d["kind"] for d in dcds} == {"DynamoComponentDeployment"}
    # The nested DynamoComponentDeployments in the component-pathway status examples (XRs as observed).
    nested = [
        d
        for path in sorted((REPO / "tests" / "scenarios" / "status").glob("*/observed.yaml"))
        for d in load_documents(path)
        if d["kind"] == "XDynamoComponentDeployment"
    ]
    assert len(nested) == 14  # ready 3, rolling 5, lagging 3, stalled 3
    # The DynamoCheckpoint claim and the DGDs that start from a checkpoint (examples/checkpoint, and the v1alpha1 one).
    checkpoints = [d for p in sorted((REPO / "examples" / "checkpoint").glob("*.yaml")) for d in load_documents(p)]
    checkpoints += load_documents(REPO / "examples" / "v1alpha1" / "vllm-disagg-checkpoint-ref.yaml")
    assert {d["kind"] for d in checkpoints} == {"DynamoCheckpoint", "DynamoGraphDeployment"}
    # The DynamoCheckpoints the DGDs of the checkpoint-graph states compose or name (as observed), and the Ready one
    # the checkpoint-ref examples' previews read.
    observed_checkpoints = [
        d
        for path in [
            *sorted((REPO / "tests" / "scenarios" / "checkpoint-graph").glob("*/*.yaml")),
            REPO / "examples" / "checkpoint" / "cluster" / "required.yaml",
        ]
        for d in load_documents(path)
        if d["kind"] == "DynamoCheckpoint"
    ]
    assert len(observed_checkpoints) == 5
    # The DynamoModel claims and the DGD whose Service they read, in examples/model.
    models = [d for p in sorted((REPO / "examples" / "model").glob("*.yaml")) for d in load_documents(p)]
    assert sorted(d["kind"] for d in models) == ["DynamoGraphDeployment", "DynamoModel", "DynamoModel"]
    valid = len(EXAMPLE_CLAIMS) + len(adapters) + len(dcds) + len(nested) + len(checkpoints) + len(observed_checkpoints)
    valid += len(models)
    # The DynamoGraphDeploymentRequest claims (both versions), the XRs of their states and the graphs they deployed.
    requests = [d for p in examples_of_kind("DynamoGraphDeploymentRequest") for d in load_documents(p)]
    states = [
        d
        for path in sorted((REPO / "tests" / "scenarios" / "dgdr-states").glob("*/*.yaml"))
        for d in load_documents(path)
        if d["kind"] in ("DynamoGraphDeploymentRequest", "DynamoGraphDeployment")
    ]
    assert len(requests) == 4 and {d["kind"] for d in states} == {
        "DynamoGraphDeploymentRequest",  # namespaced XRs, as the default package stores them
        "DynamoGraphDeployment",
    }
    valid += len(requests) + len(states)
    # The DynamoPlatforms of examples/platform (one per cloud) and the DGD placed on one.
    platforms = load_documents(REPO / "examples" / "platform")
    assert sorted(d["kind"] for d in platforms) == ["DynamoGraphDeployment", *["DynamoPlatform"] * 4]
    valid += len(platforms)
    assert f"{valid} valid, 0 invalid" in proc.stdout


def test_checkpoint_examples_need_the_gate() -> None:
    proc = validate("examples/checkpoint")
    assert proc.returncode == 1
    # the DGDs that start from a checkpoint, the DynamoCheckpoint itself, and the Ready one their previews read
    # (upstream's webhook refuses them all)
    assert proc.stdout.count("checkpoint functionality is disabled in the operator configuration") == 4


def test_corpus_is_valid_apart_from_what_upstream_refuses(tmp_path: Path) -> None:
    require_shared("corpus")
    docs = [doc for _, doc in corpus_dgds() if doc.get("spec")]  # matcher directives already dropped
    operator_config = str(REPO / "examples" / "operator-config.yaml")  # the checkpoint gate on
    # As they are, upstream's webhook refuses those whose main images name no runtime version (placeholder tags such
    # as :my-tag) and have no runtimeVersionOverride, and those without an image; so does validate, naming the field.
    no_image = [doc for doc in docs if not has_main_images(doc)]
    no_version = [doc for doc in docs if has_main_images(doc) and as_upstream_admits(doc) != doc]
    assert no_image and no_version
    proc = validate(str(write(tmp_path / "corpus.yaml", *docs)), "--platform", operator_config)
    assert proc.returncode == 1
    valid = len(docs) - len(no_image) - len(no_version)
    assert f"{valid} valid, {len(no_image) + len(no_version)} invalid" in proc.stdout
    assert proc.stdout.count(".runtimeVersionOverride: is required when the specified main container image") == len(
        no_version
    )
    assert proc.stdout.count("the main container needs an image") == len(no_image)
    # With the runtime version set as upstream asks, every one with images is valid.
    admitted = [as_upstream_admits(doc) for doc in docs if has_main_images(doc)]
    proc = validate(str(write(tmp_path / "admitted.yaml", *admitted)), "--platform", operator_config)
    assert proc.returncode == 0, proc.stdout
    assert f"{len(admitted)} valid" in proc.stdout
    empty = [doc for _, doc in corpus_dgds() if not doc.get("spec")]
    proc = validate(str(write(tmp_path / "empty.yaml", *empty)))
    assert proc.returncode == 1
    assert "spec: Required value (required)" in proc.stdout  # upstream's webhook rejects it too


def test_every_violation_is_printed_with_field_path_and_rule(tmp_path: Path) -> None:
    bad = write(
        tmp_path / "bad.yaml",
        dgd({"services": {"a": {"replicas": -1}}}),
        dgd({"services": {"a": {"volumeMounts": [{"name": "p"}]}}}),
        dgd({"services": {"a": {}}}, annotations={"nvidia.com/dynamo-kube-discovery-mode": "node"}),
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other"}},
    )
    proc = validate(str(bad))
    assert proc.returncode == 1
    assert "spec.services.a.replicas: should be greater than or equal to 0 (minimum)" in proc.stdout
    assert (
        "spec.services.a.volumeMounts[0].mountPoint: mountPoint is required unless useAsCompilationCache is set (cel:"
        in proc.stdout
    )
    assert "metadata.annotations[nvidia.com/dynamo-kube-discovery-mode]: must be pod or container" in proc.stdout
    assert "0 valid, 3 invalid, 1 other document skipped" in proc.stdout


def test_old_checks_an_update(tmp_path: Path) -> None:
    service = {"a": {"extraPodSpec": {"mainContainer": {"image": "r/runtime:1.0.0"}}}}
    old = write(tmp_path / "old.yaml", dgd({"backendFramework": "sglang", "services": service}))
    new = write(tmp_path / "new.yaml", dgd({"backendFramework": "vllm", "services": service}))
    proc = validate(str(new), "--old", str(old))
    assert proc.returncode == 1
    assert "spec: spec.backendFramework is immutable" in proc.stdout
    assert validate(str(new)).returncode == 0  # as a create it is fine


def test_old_lets_an_update_keep_an_image_without_a_version_as_upstream_does(tmp_path: Path) -> None:
    """Upstream's webhook wants runtimeVersionOverride beside an image whose tag names no version on create, but
    on update only when the image or the override changes: a graph stored before the rule keeps working."""

    def service(image: str, **fields: object) -> dict:
        return {"services": {"w": {"extraPodSpec": {"mainContainer": {"image": image}}, **fields}}}

    old = write(tmp_path / "old.yaml", dgd(service("r/runtime:my-tag")))
    same = write(tmp_path / "same.yaml", dgd(service("r/runtime:my-tag", replicas=2)))
    proc = validate(str(same))
    assert proc.returncode == 1
    assert "spec.services.w.runtimeVersionOverride: is required when the specified main container image" in proc.stdout
    assert validate(str(same), "--old", str(old)).returncode == 0
    retagged = write(tmp_path / "retagged.yaml", dgd(service("r/runtime:other-tag")))
    proc = validate(str(retagged), "--old", str(old))
    assert proc.returncode == 1
    assert "spec.services.w.runtimeVersionOverride: is required" in proc.stdout
    versioned = write(tmp_path / "versioned.yaml", dgd(service("r/runtime:my-tag", runtimeVersionOverride="1.4.0")))
    assert validate(str(same), "--old", str(versioned)).returncode == 1  # the override was dropped
    assert validate(str(versioned), "--old", str(old)).returncode == 0


def test_nothing_to_validate_is_an_error(tmp_path: Path) -> None:
    proc = validate(str(write(tmp_path / "cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap"})))
    assert proc.returncode == 1
    assert "0 valid" in proc.stdout


def _variant(name: str, namespace: str, **spec_changes: object) -> dict:
    doc = load_documents(REPO / "examples" / "dgd" / "vllm-agg.yaml")[0]
    doc["metadata"] = {**doc["metadata"], "name": name, "namespace": namespace}
    doc["spec"] = {**doc["spec"], **spec_changes}
    return doc


# Manifests at the edges of the admission rules the API server and the function apply to a claim's identity
# and spec: each is refused by both commands or by neither. The example's longest composed names are its
# Service "{name}-vllmworker" and its Dynamo namespace label "{namespace}-{name}", at most 63 characters each.
AGREEMENT = {
    "ok": _variant("agg", "ns"),
    "namespace-59": _variant("agg", "n" * 59),
    "namespace-60": _variant("agg", "n" * 60),
    "namespace-64": _variant("agg", "n" * 64),
    "namespace-upper": _variant("agg", "Team-A"),
    "name-52": _variant("a" * 52, "ns"),
    "name-53": _variant("a" * 53, "ns"),
    "name-63": _variant("a" * 63, "ns"),
    "name-with-dot": _variant("agg.v2", "ns"),
    "name-starting-with-a-digit": _variant("1agg", "ns"),
    "unknown-field": _variant("agg", "ns", notAField=True),
    "bad-backend": _variant("agg", "ns", backendFramework="tgi"),
    "v1alpha1-with-components": {**_variant("agg", "ns"), "apiVersion": "nvidia.com/v1alpha1"},
}


def test_validate_and_render_refuse_the_same_manifests(tmp_path: Path) -> None:
    files = {case: write(tmp_path / f"{case}.yaml", doc) for case, doc in AGREEMENT.items()}
    proc = validate(*map(str, files.values()))
    refused_by_validate = {case for case, path in files.items() if f"FAIL {path}#" in proc.stdout}
    refused_by_render = set()
    for case, path in files.items():
        rendered = subprocess.run(
            [sys.executable, "-m", "functions.tooling.main", "render", str(path)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if rendered.returncode != 0:
            refused_by_render.add(case)
    assert refused_by_validate == refused_by_render, (proc.stdout, refused_by_render)
    assert refused_by_validate == {
        "namespace-60",
        "namespace-64",
        "namespace-upper",
        "name-53",
        "name-63",
        "name-starting-with-a-digit",
        "unknown-field",
        "bad-backend",
        "v1alpha1-with-components",
    }


def test_a_file_that_is_not_yaml_is_reported_and_the_others_checked(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: v1\nkind: [unclosed\n")
    bad = write(tmp_path / "bad.yaml", dgd({"services": {"a": {"replicas": -1}}}))
    proc = validate(str(broken), "examples/dgd/vllm-agg.yaml", str(bad))
    assert proc.returncode == 1
    assert f"FAIL {broken}\n  not valid YAML: while parsing a flow sequence" in proc.stdout
    assert f"FAIL {bad}#0 DynamoGraphDeployment/x" in proc.stdout  # the files after it are checked
    assert "1 valid, 2 invalid, 0 other documents skipped" in proc.stdout


def test_output_json_is_the_report_as_data(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: [\n")
    bad = write(tmp_path / "bad.yaml", dgd({"services": {"a": {"replicas": -1}}}), {"apiVersion": "v1", "kind": "X"})
    proc = validate(str(broken), "examples/dgd/vllm-agg.yaml", str(bad), "-o", "json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert {k: report[k] for k in ("valid", "invalid", "skipped")} == {"valid": 1, "invalid": 2, "skipped": 1}
    by_file = {(d["file"], d["index"]): d for d in report["documents"]}
    assert by_file[(str(broken), None)]["valid"] is False
    assert by_file[("examples/dgd/vllm-agg.yaml", 0)] | {"violations": []} == {
        "file": "examples/dgd/vllm-agg.yaml",
        "index": 0,
        "kind": "DynamoGraphDeployment",
        "name": "vllm-agg",
        "valid": True,
        "violations": [],
        "warnings": [],
        "notes": by_file[("examples/dgd/vllm-agg.yaml", 0)]["notes"],
        "hints": [],
    }
    assert by_file[(str(bad), 0)]["violations"] == [
        "spec.services.a.replicas: should be greater than or equal to 0 (minimum)"
    ]


def test_a_violation_names_the_flag_that_fixes_it() -> None:
    proc = validate("examples/checkpoint/vllm-agg-auto-checkpoint.yaml")
    assert proc.returncode == 1
    assert "checkpoint functionality is disabled in the operator configuration (function)" in proc.stdout
    assert "hint: give an operator configuration that enables it" in proc.stdout
    assert "with --operator-config FILE" in proc.stdout


# As without the tooling extra: cel_expr_python cannot be imported.
WITHOUT_CEL = "import sys; sys.modules['cel_expr_python'] = None\n"
CEL_MISSING = (
    "the CEL engine (cel-expr-python) is not installed, so the CRDs' CEL rules cannot be checked: install the "
    "tooling extra (pip install 'function-dynamo[tooling]', or pipx inject function-dynamo cel-expr-python)"
)


def without_cel(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_CEL + script, *args], cwd=REPO, capture_output=True, text=True, timeout=120
    )


def cli_without_cel(*args: str) -> subprocess.CompletedProcess[str]:
    return without_cel("from functions.tooling.main import cli\ncli(sys.argv[1:], prog_name='function-dynamo')", *args)


# (arguments, exit code, stderr) without the CEL engine: validate refuses to give a verdict, render warns
WITHOUT_THE_ENGINE = {
    "validate": (("validate", "examples/dgd/vllm-agg.yaml"), 2, f"function-dynamo validate: {CEL_MISSING}\n"),
    "validate -o json": (("validate", "examples/dgd", "-o", "json"), 2, f"function-dynamo validate: {CEL_MISSING}\n"),
    "render": (("render", "examples/dgd/vllm-agg.yaml"), 0, f"Warning: {CEL_MISSING}\n"),
}


@pytest.mark.parametrize(("args", "code", "stderr"), WITHOUT_THE_ENGINE.values(), ids=WITHOUT_THE_ENGINE.keys())
def test_without_the_cel_engine_nothing_is_reported_valid(args: tuple[str, ...], code: int, stderr: str) -> None:
    proc = cli_without_cel(*args)
    assert (proc.returncode, proc.stderr) == (code, stderr), proc.stdout
    if args[0] == "validate":
        assert proc.stdout == ""  # no "1 valid"
    else:
        assert (
            proc.stdout
            == subprocess.run(
                [sys.executable, "-m", "functions.tooling.main", *args], cwd=REPO, capture_output=True, text=True
            ).stdout
        )


def test_a_rule_not_evaluated_makes_the_document_invalid() -> None:
    """The library too: a document whose CEL rules went unevaluated is not valid, each rule named."""
    script = """
import json
from pathlib import Path
from functions.tooling.offline_validation import validate_files
(report,), _ = validate_files([Path("examples/dgd/vllm-agg.yaml")])
print(json.dumps({"ok": report.ok, "violations": report.violations}))
"""
    proc = without_cel(script)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] is False
    assert len(report["violations"]) > 10  # every rule of the graph's CRD, each named
    reasons = {v.split(": ", 1)[1].split(" (cel: ")[0] for v in report["violations"]}
    assert reasons == {"not evaluated offline: cel-expr-python is not installed"}
