"""The DynamoGraphDeploymentRequest phases of ``tests/scenarios/dgdr-states``, rendered in-process and by
``crank render``, and ``function-dynamo export`` of the graph a request generated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from fixtures.tooling import crank_render, regenerated
from functions.tooling.export import export
from functions.tooling.main import cli
from functions.tooling.manifests import dump_documents, find_composition, load_documents
from functions.tooling.pipeline import RenderOutput, render

REPO = Path(__file__).resolve().parents[1]
STATES = REPO / "tests" / "scenarios" / "dgdr-states"
COMPOSITIONS = load_documents(REPO / "compositions")
Obj = dict[str, Any]

# state: (phase, the condition that says why, its reason, what is composed beside the Job's RBAC)
EXPECTED = {
    "pending": ("Pending", "Profiling", "DiscoveringHardware", {"Job"}),
    "initializing": ("Profiling", "Profiling", "Initializing", {"Job"}),
    "sweeping": ("Profiling", "Profiling", "SweepingDecode", {"Job"}),
    "failed-job": ("Failed", "Profiling", "SweepingPrefillFailed", {"Job"}),
    "failed-profiler": ("Failed", "Profiling", "SelectingConfigFailed", {"Job"}),
    "ready": ("Ready", "SpecGenerated", "SpecGenerated", {"Job", "ConfigMap"}),
    "deploying": ("Deploying", "DeploymentReady", "DeploymentCreated", {"Job", "ConfigMap", "DynamoGraphDeployment"}),
    "deployed": ("Deployed", "DeploymentReady", "DeploymentReady", {"Job", "ConfigMap", "DynamoGraphDeployment"}),
    "degraded": ("Deploying", "DeploymentReady", "DeploymentDegraded", {"Job", "ConfigMap", "DynamoGraphDeployment"}),
    "deleted": ("Failed", "DeploymentReady", "DeploymentDeleted", {"Job"}),
}
RBAC = {"ServiceAccount", "Role", "RoleBinding"}


def state_file(state: str, name: str) -> list[Obj]:
    path = STATES / state / name
    return load_documents(path) if path.is_file() else []


def state_render(state: str) -> RenderOutput:
    (xr,) = state_file(state, "xr.yaml")
    observed, required = state_file(state, "observed.yaml"), state_file(state, "required.yaml")
    return render(xr, find_composition(xr, COMPOSITIONS), observed, required, converge=False)


def test_every_state_is_an_example() -> None:
    assert sorted(p.name for p in STATES.iterdir() if p.is_dir()) == sorted(EXPECTED)


@pytest.mark.parametrize("state", sorted(EXPECTED))
def test_each_state_renders_its_phase(state: str) -> None:
    phase, condition, reason, kinds = EXPECTED[state]
    out = state_render(state)
    status = out.composite["status"]
    assert status["phase"] == phase
    (cond,) = [c for c in status["conditions"] if c["type"] == condition]
    assert cond["reason"] == reason
    assert {o["kind"] for o in out.composed} - RBAC == kinds
    succeeded = next(c for c in status["conditions"] if c["type"] == "Succeeded")
    assert succeeded["status"] == ("True" if phase in ("Ready", "Deployed") else "False")
    if phase == "Failed":
        assert succeeded["reason"] == reason


@pytest.mark.parametrize("state", sorted(EXPECTED))
def test_crank_renders_each_state_as_in_process(state: str, functions_file: Path) -> None:
    folder = STATES / state
    (xr,) = load_documents(folder / "xr.yaml")
    composition = find_composition(xr, COMPOSITIONS)
    path = REPO / "compositions" / "dynamographdeploymentrequest.yaml"
    extra = [arg for flag, name in (("-o", "observed.yaml"), ("-e", "required.yaml")) if (folder / name).is_file()
             for arg in (flag, str(folder / name))]  # fmt: skip
    theirs = crank_render(str(folder / "xr.yaml"), str(path), str(functions_file), *extra)
    ours = state_render(state)
    assert composition == load_documents(path)[0]
    assert dump_documents([ours.composite, *ours.composed]) == theirs


def test_the_states_are_what_the_step_renders_today() -> None:
    """regenerate.py's output is committed: a step change that alters it must be reviewed and regenerated."""
    before, after = regenerated(STATES)
    stale = [str(p.relative_to(REPO)) for p in before if before[p] != after.get(p)]
    assert not stale and set(before) == set(after), f"stale: {stale} (run {STATES / 'regenerate.py'})"


# --- export --------------------------------------------------------------------------------------------------------


def observed_request(state: str, tmp_path: Path) -> Path:
    """The request as ``kubectl get dgdr -o yaml`` shows it after the state's reconcile: its status written."""
    (xr,) = load_documents(STATES / state / "xr.yaml")
    xr["status"] = state_render(state).composite["status"]
    path = tmp_path / "request.yaml"
    path.write_text(yaml.safe_dump(xr))
    return path


def test_export_turns_a_ready_requests_graph_into_a_manifest_to_commit(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["export", str(observed_request("ready", tmp_path))])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(
        "# The DynamoGraphDeployment that DynamoGraphDeploymentRequest qwen3-trtllm generated"
    )
    manifest = yaml.safe_load(result.output)
    assert (manifest["apiVersion"], manifest["kind"]) == ("nvidia.com/v1beta1", "DynamoGraphDeployment")
    assert manifest["metadata"] == {
        "name": "qwen3-32b-trtllm",
        "namespace": "dynamo",
        "labels": {"dgdr.nvidia.com/name": "qwen3-trtllm", "dgdr.nvidia.com/namespace": "dynamo",
                   "nvidia.com/managed-by": "dynamo-operator"},
    }  # fmt: skip
    assert [c["name"] for c in manifest["spec"]["components"]] == ["Frontend", "decode", "prefill"]
    assert {c["runtimeVersionOverride"] for c in manifest["spec"]["components"]} == {"1.4.0"}
    # the exported graph is a DGD this package renders
    rendered = tmp_path / "dgd.yaml"
    rendered.write_text(result.output)
    out = CliRunner().invoke(cli, ["render", str(rendered)])
    assert out.exit_code == 0, out.output
    assert "kind: PodCliqueSet" in out.output


def test_export_from_a_request_manifest_and_its_output_configmap(tmp_path: Path) -> None:
    (output,) = [o for o in state_file("ready", "required.yaml") if o["kind"] == "ConfigMap"]
    cm = tmp_path / "output.yaml"
    cm.write_text(yaml.safe_dump(output))
    from_status = CliRunner().invoke(cli, ["export", str(observed_request("ready", tmp_path))]).output
    claim = REPO / "examples" / "dgdr" / "trtllm-review.yaml"
    result = CliRunner().invoke(
        export, [str(claim), "--output-configmap", str(cm), "--output-file", str(tmp_path / "out.yaml")]
    )
    assert result.exit_code == 0, result.output
    written = (tmp_path / "out.yaml").read_text()
    assert yaml.safe_load(written) == yaml.safe_load(from_status)


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ("sweeping", "has no generated graph yet"),
        ("failed-profiler", "profiling failed: no configuration meets ttft 500 ms"),
    ],
)
def test_export_says_why_there_is_no_graph(state: str, message: str, tmp_path: Path) -> None:
    args = ["export", str(REPO / "examples" / "dgdr" / "vllm-sla.yaml")]
    outputs = [o for o in state_file(state, "required.yaml") if o["kind"] == "ConfigMap"]
    if state == "failed-profiler":
        (tmp_path / "cm.yaml").write_text(yaml.safe_dump(outputs[0]))
        args += ["--output-configmap", str(tmp_path / "cm.yaml")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1 and message in result.output
