"""The real `crossplane render` (crank, Development runtime) equals `function-dynamo render` on every example."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from corpus import EXAMPLE_CLAIMS, load_claim
from functions.cli.manifests import claim_to_xr, dump_documents, find_composition, load_documents
from functions.cli.pipeline import render
from server import REPO
from tooling import crank_render

COMPOSITIONS = REPO / "compositions"


PLATFORM = REPO / "examples" / "platform" / "dynamo-platform.yaml"


@pytest.mark.parametrize("with_platform", [False, True], ids=["defaults", "platform-config"])
@pytest.mark.parametrize("claim_path", EXAMPLE_CLAIMS, ids=[p.stem for p in EXAMPLE_CLAIMS])
def test_crank_render_equals_in_process_render(
    claim_path: Path, with_platform: bool, functions_file: Path, tmp_path: Path
) -> None:
    xr = claim_to_xr(load_claim(claim_path))
    xr_file = tmp_path / "xr.yaml"
    xr_file.write_text(yaml.safe_dump(xr))
    composition = find_composition(xr, load_documents(COMPOSITIONS))
    composition_file = tmp_path / "composition.yaml"
    composition_file.write_text(yaml.safe_dump(composition))

    extra = ["-e", str(PLATFORM)] if with_platform else []
    theirs = crank_render(str(xr_file), str(composition_file), str(functions_file), *extra)
    out = render(xr, composition, required=load_documents(PLATFORM) if with_platform else None)
    ours = dump_documents([out.composite, *out.composed])

    assert list(yaml.safe_load_all(ours)) == list(yaml.safe_load_all(theirs))
    assert ours == theirs  # byte for byte, quoting included
    assert len(out.composed) >= 2


def test_every_example_kind_is_covered() -> None:
    shapes = {load_claim(p)["apiVersion"] for p in EXAMPLE_CLAIMS}
    assert shapes == {"nvidia.com/v1alpha1", "nvidia.com/v1beta1"}
    assert len(EXAMPLE_CLAIMS) >= 4
