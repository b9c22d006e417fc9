"""examples/README.md stays true: it lists every example a user applies, and every preview command it gives runs."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from functions.tooling.main import cli
from server import REPO

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
        text = path.read_text()
        if "apiVersion: nvidia.com/v1alpha1" in text and path.parent.name != "v1alpha1":
            # kinds upstream serves in v1alpha1 only
            assert re.search(r"^kind: (DynamoCheckpoint|DynamoModel|DynamoPlatform)$", text, re.M), path


@pytest.mark.parametrize("args", commands(), ids=[" ".join(a[1:2]) for a in commands()])
def test_each_preview_command_runs(args: list[str]) -> None:
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.output
    assert "kind: X" in result.output or "kind: Dynamo" in result.output
    assert Path(args[1]).exists()
