"""`function-dynamo` itself: --version, shell completion, and export's output flags, as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fixtures.tooling import REPO


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "functions.tooling.main", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_version_prints_the_package_version() -> None:
    proc = cli("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"function-dynamo {_pyproject_version()}\n"


def _pyproject_version() -> str:
    import tomllib

    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


# shell -> what its completion script holds
COMPLETION_SOURCES = {
    "bash": "complete -o nosort -F _function_dynamo_completion function-dynamo",
    "zsh": "#compdef function-dynamo",
    "fish": "complete --no-files --command function-dynamo",
}


@pytest.mark.parametrize(("shell", "expected"), COMPLETION_SOURCES.items(), ids=COMPLETION_SOURCES.keys())
def test_completion_scripts_are_generated(shell: str, expected: str) -> None:
    proc = cli(env={"_FUNCTION_DYNAMO_COMPLETE": f"{shell}_source"})
    assert proc.returncode == 0, proc.stderr
    assert expected in proc.stdout
    assert "_FUNCTION_DYNAMO_COMPLETE" in proc.stdout


# the words typed -> the completions offered (what the bash script asks the command for)
COMPLETIONS = {
    "commands": ("function-dynamo ", ["bench", "export", "migrate", "render", "serve", "validate", "xrds"]),
    "a command": ("function-dynamo re", ["render"]),
    "an option": ("function-dynamo render --obs", ["--observed-resources"]),
    "-o's formats": ("function-dynamo render x.yaml -o ", ["yaml", "json"]),
    "validate's formats": ("function-dynamo validate x.yaml --output ", ["text", "json"]),
}


@pytest.mark.parametrize(("words", "offered"), COMPLETIONS.values(), ids=COMPLETIONS.keys())
def test_completion_offers_commands_options_and_formats(words: str, offered: list[str]) -> None:
    cword = len(words.split(" ")) - 1
    env = {"_FUNCTION_DYNAMO_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    proc = cli(env=env)
    assert proc.returncode == 0, proc.stderr
    assert [line.split(",", 1)[1] for line in proc.stdout.splitlines()] == offered


REVIEW = "examples/dgdr/trtllm-review.yaml"


@pytest.fixture
def output_configmap(tmp_path: Path) -> Path:
    """The profiling output of examples/dgdr/trtllm-review.yaml, as `kubectl get configmap -o yaml` gives it."""
    docs = yaml.safe_load_all((REPO / "tests" / "scenarios" / "dgdr-states" / "ready" / "required.yaml").read_text())
    path = tmp_path / "output.yaml"
    path.write_text(yaml.safe_dump(next(d for d in docs if d["kind"] == "ConfigMap")))
    return path


# export's args -> the format its stdout is in
EXPORT_CASES = {"default": ([], "yaml"), "-o yaml": (["-o", "yaml"], "yaml"), "-o json": (["-o", "json"], "json")}


@pytest.mark.parametrize(("args", "output_format"), EXPORT_CASES.values(), ids=EXPORT_CASES.keys())
def test_export_prints_the_graph_as_yaml_or_json(output_configmap: Path, args: list[str], output_format: str) -> None:
    proc = cli("export", REVIEW, "--output-configmap", str(output_configmap), *args)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads(proc.stdout) if output_format == "json" else yaml.safe_load(proc.stdout)
    assert (manifest["kind"], manifest["metadata"]["name"]) == ("DynamoGraphDeployment", "qwen3-32b-trtllm")
    assert proc.stdout.startswith("# The DynamoGraphDeployment that") is (output_format == "yaml")


def test_export_writes_a_file_with_output_file(output_configmap: Path, tmp_path: Path) -> None:
    target = tmp_path / "dgd.json"
    proc = cli(
        "export", REVIEW, "--output-configmap", str(output_configmap), "-o", "json", "--output-file", str(target)
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and f"wrote {target}" in proc.stderr
    assert json.loads(target.read_text())["kind"] == "DynamoGraphDeployment"
