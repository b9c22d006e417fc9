"""examples/README.md stays true: it lists every example a user applies, and every preview command it gives runs."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from fixtures.tooling import REPO
from functions.kinds import KINDS
from functions.tooling.main import cli

EXAMPLES = REPO / "examples"
INDEX = EXAMPLES / "README.md"
ROW = re.compile(r"^\| (?P<case>[^|]+) \| \[(?P<label>[^\]]+)\]\((?P<link>[^)]+)\) \| (?P<preview>[^|]+) \|$")
PROGRAM = ".venv/bin/function-dynamo"


def rows() -> list[dict[str, str]]:
    return [m.groupdict() for line in INDEX.read_text().splitlines() if (m := ROW.match(line))]


def commands() -> list[list[str]]:
    out = []
    for row in rows():
        command = re.fullmatch(r"`([^`]+)`", row["preview"].strip())
        if command:
            words = shlex.split(command.group(1))
            assert words[0] == PROGRAM, row
            out.append(words[1:])
    return out


def test_every_example_is_in_the_index() -> None:
    listed = {(EXAMPLES / row["link"]).resolve() for row in rows()}
    assert all(path.exists() for path in listed), sorted(str(p) for p in listed if not p.exists())
    files = {p.resolve() for p in EXAMPLES.rglob("*.yaml")}
    unlisted = sorted(
        str(p.relative_to(EXAMPLES)) for p in files if p not in listed and not any(d in listed for d in p.parents)
    )
    assert unlisted == [], f"examples/README.md does not list: {unlisted}"


def test_v1beta1_is_the_default_and_v1alpha1_has_its_folder() -> None:
    for path in EXAMPLES.rglob("*.yaml"):
        if path.parent.name == "v1alpha1":
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            if doc.get("apiVersion") == "nvidia.com/v1alpha1":
                # kinds upstream serves in v1alpha1 only
                assert doc["kind"] in ("DynamoCheckpoint", "DynamoModel", "DynamoPlatform"), path


def invoke(args: list[str]) -> Result:
    """The command run as the index says, from the repository's root."""
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        return CliRunner().invoke(cli, args, catch_exceptions=False)
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("args", commands(), ids=[" ".join(a[1:2]) for a in commands()])
def test_each_preview_command_runs(args: list[str]) -> None:
    result = invoke(args)
    assert result.exit_code == 0, result.output
    assert "kind: X" in result.output or "kind: Dynamo" in result.output
    assert Path(args[1]).exists()


def test_validate_passes_on_the_examples_as_the_index_runs_it() -> None:
    """The index's validate command checks every example of this package's kinds and skips the rest quietly."""
    (command,) = re.findall(rf"^{re.escape(PROGRAM)} validate .+$", INDEX.read_text(), re.M)
    ours = {name for k in KINDS for name in (k.claim_kind, k.xr_kind)}
    documents = [doc for path in EXAMPLES.rglob("*.yaml") for doc in yaml.safe_load_all(path.read_text())]
    valid = sum(isinstance(doc, dict) and doc.get("kind") in ours for doc in documents)
    result = invoke(shlex.split(command)[1:])
    skipped = f"{len(documents) - valid} other documents skipped (-v lists them)"
    assert (result.exit_code, result.output) == (0, f"{valid} valid, 0 invalid, {skipped}\n")
