"""A mapping key given twice in a manifest is an error naming the file, the line and the key, for every command
that reads manifests (``functions.tooling.manifests.load_documents``), as kubectl refuses it; PyYAML alone keeps
the last value silently."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from fixtures.tooling import REPO
from functions.tooling.main import cli
from functions.tooling.manifests import ManifestError, load_documents

DUPLICATE_NAME = """\
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata:
  name: a
  name: b
  namespace: ns
spec:
  components:
  - name: Frontend
    type: frontend
"""
# the duplicate deep in a component, in the second document
DUPLICATE_DEEP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: other}
---
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata: {name: a, namespace: ns}
spec:
  components:
  - name: Frontend
    type: frontend
    replicas: 1
    replicas: 2
"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (DUPLICATE_NAME, 'line 5: mapping key "name" already defined at line 4'),
        (DUPLICATE_DEEP, 'line 13: mapping key "replicas" already defined at line 12'),
        ("a: 1\n'a': 2\n", 'line 2: mapping key "a" already defined at line 1'),  # the same key, quoted or not
        ("data: {x: 1, x: 1}\n", 'line 1: mapping key "x" already defined at line 1'),  # even with the same value
    ],
)
def test_a_key_given_twice_is_an_error_naming_file_line_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    with pytest.raises(ManifestError) as err:
        load_documents(path)
    assert str(err.value) == f"{path}: not valid YAML: {message}"


@pytest.mark.parametrize(
    "text",
    [
        "base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  x: 3\n",  # a merge key's values may be overridden
        "a: {x: 1}\nb: {x: 1}\n",  # the same key in two mappings
        "a: 1\n---\na: 2\n",  # the same key in two documents
    ],
)
def test_what_is_not_a_duplicate_loads(tmp_path: Path, text: str) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    assert load_documents(path)


# each command with the file holding the duplicate key in the place of "M"
COMMANDS = {
    "validate": ["validate", "M"],
    "validate --old": ["validate", "examples/dgd/vllm-agg.yaml", "--old", "M"],
    "validate --operator-config": ["validate", "examples/dgd/vllm-agg.yaml", "--operator-config", "M"],
    "render": ["render", "M"],
    "render -e": ["render", "examples/dgd/vllm-agg.yaml", "-e", "M"],
    "render --observed-resources": ["render", "examples/dgd/vllm-agg.yaml", "--observed-resources", "M"],
    "export": ["export", "M"],
    "export --operator-config": ["export", "examples/v1alpha1/dgdr-vllm.yaml", "--operator-config", "M"],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_that_reads_manifests_refuses_it(
    tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    path = tmp_path / "m.yaml"
    path.write_text(DUPLICATE_NAME)
    result = CliRunner().invoke(cli, [str(path) if arg == "M" else arg for arg in COMMANDS[command]])
    assert result.exit_code != 0, result.output
    assert str(path) in result.output
    assert 'line 5: mapping key "name" already defined at line 4' in result.output
