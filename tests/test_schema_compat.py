"""Which XRD changes strand stored objects (functions.tooling.schema_compat), and the release gate over them."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from functions.tooling.schema_compat import stranding_changes
from functions.tooling.xrds import PACKAGE_XRD_DIRS, xrds

REPO = Path(__file__).resolve().parents[1]


def _xrd(spec: dict[str, Any], *, served: bool = True, version: str = "v1") -> dict[str, Any]:
    schema = {"type": "object", "properties": {"spec": spec}}
    return {
        "metadata": {"name": "things.example.com"},
        "spec": {"versions": [{"name": version, "served": served, "schema": {"openAPIV3Schema": schema}}]},
    }


BASE = {
    "type": "object",
    "required": ["size"],
    "properties": {
        "size": {"type": "integer", "minimum": 0, "maximum": 10},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "name": {"type": "string", "maxLength": 20},
        "tags": {"type": "array", "maxItems": 5, "items": {"type": "string"}},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}


def _with(change: Any) -> dict[str, Any]:
    spec = copy.deepcopy(BASE)
    change(spec)
    return spec


@pytest.mark.parametrize(
    ("change", "want"),
    [
        (lambda s: s["properties"].update(note={"type": "string"}), []),  # an optional field added
        (lambda s: s["properties"]["mode"]["enum"].append("c"), []),  # an enum value added
        (lambda s: s["properties"]["size"].update(maximum=20), []),  # a bound loosened
        (lambda s: s["properties"].pop("name"), ["spec.name: removed (stored values are pruned on the next write)"]),
        (lambda s: s["properties"]["size"].update(type="string"), ["spec.size: type integer -> string"]),
        (lambda s: s["required"].append("mode"), ["spec.mode: now required"]),
        (lambda s: s["properties"]["mode"]["enum"].remove("b"), ["spec.mode: enum no longer allows b"]),
        (lambda s: s["properties"]["size"].update(minimum=1), ["spec.size: minimum 0 -> 1"]),
        (lambda s: s["properties"]["name"].update(maxLength=10), ["spec.name: maxLength 20 -> 10"]),
        (lambda s: s["properties"]["tags"].update(maxItems=3), ["spec.tags: maxItems 5 -> 3"]),
        (lambda s: s["properties"]["tags"]["items"].update(pattern="^a"), ["spec.tags[*]: pattern 'unset' -> '^a'"]),
        (
            lambda s: s.update({"x-kubernetes-validations": [{"rule": "self.size > 1"}]}),
            ["spec: new validation rule 'self.size > 1'"],
        ),
        (
            lambda s: s["properties"]["extra"].pop("x-kubernetes-preserve-unknown-fields"),
            ["spec.extra: no longer keeps unknown fields (stored ones are pruned on the next write)"],
        ),
    ],
)
def test_a_change_strands_stored_objects_exactly_when_it_can_refuse_or_prune_them(change: Any, want: list[str]) -> None:
    got = stranding_changes(_xrd(BASE), _xrd(_with(change)))
    assert got == [f"things.example.com v1: {w}" for w in want]


def test_versions_and_xrds_that_go_strand_everything_stored_under_them() -> None:
    assert stranding_changes(_xrd(BASE), _xrd(BASE, version="v2")) == ["things.example.com v1: no longer served"]
    assert stranding_changes(_xrd(BASE), _xrd(BASE, served=False)) == ["things.example.com v1: no longer served"]
    assert stranding_changes(_xrd(BASE, served=False), _xrd(BASE, version="v2")) == []  # nothing was served there
    assert stranding_changes(_xrd(BASE), None) == ["things.example.com: the XRD is removed"]


@pytest.fixture
def previous_release(tmp_path: Path) -> Path:
    """A checkout of a 'previous release': today's XRDs of both packages."""
    for sub in PACKAGE_XRD_DIRS:
        shutil.copytree(REPO / sub, tmp_path / sub)
    return tmp_path


def test_the_gate_passes_todays_xrds_and_names_a_field_a_release_would_drop(previous_release: Path) -> None:
    same = CliRunner().invoke(xrds, ["--check-against", str(previous_release)])
    assert same.exit_code == 0, same.output
    assert "ok: nothing stored" in same.output
    # the previous release had a field today's DGD no longer has: its stored values would be pruned
    path = previous_release / "xrds" / "dynamographdeployments.yaml"
    old = yaml.safe_load(path.read_text())
    spec = old["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["retiredField"] = {"type": "string"}
    path.write_text(yaml.safe_dump(old))
    dropped = CliRunner().invoke(xrds, ["--check-against", str(previous_release)])
    assert dropped.exit_code == 1
    version = old["spec"]["versions"][0]["name"]
    assert (
        f"xrds: dynamographdeployments.nvidia.com {version}: spec.retiredField: removed (stored values are pruned "
        "on the next write)" in dropped.output
    )
    assert "change(s) would strand objects" in dropped.output
