"""The real `crossplane render` (crank, Development runtime) equals `function-dynamo render` on every example.

One reconcile each (``converge=False``); that the converged preview is what crank's second reconcile
adds, fed its own first output as observed, is checked below too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fixtures.corpus import EXAMPLE_CLAIMS, load_claim
from fixtures.tooling import REPO, crank_render
from functions.tooling.manifests import claim_to_xr, dump_documents, find_composition, load_documents
from functions.tooling.pipeline import render

COMPOSITIONS = REPO / "compositions"


PLATFORM = REPO / "examples" / "operator-config.yaml"


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
    out = render(xr, composition, required=load_documents(PLATFORM) if with_platform else None, converge=False)
    ours = dump_documents([out.composite, *out.composed])

    assert list(yaml.safe_load_all(ours)) == list(yaml.safe_load_all(theirs))
    assert ours == theirs  # byte for byte, quoting included
    assert len(out.composed) >= 2


def test_every_example_kind_is_covered() -> None:
    shapes = {load_claim(p)["apiVersion"] for p in EXAMPLE_CLAIMS}
    assert shapes == {"nvidia.com/v1alpha1", "nvidia.com/v1beta1"}
    assert len(EXAMPLE_CLAIMS) >= 4


@pytest.mark.parametrize("claim_path", EXAMPLE_CLAIMS, ids=[p.stem for p in EXAMPLE_CLAIMS])
def test_the_converged_preview_is_what_a_second_crank_reconcile_adds(
    claim_path: Path, functions_file: Path, tmp_path: Path
) -> None:
    xr = claim_to_xr(load_claim(claim_path))
    composition = find_composition(xr, load_documents(COMPOSITIONS))
    (tmp_path / "xr.yaml").write_text(yaml.safe_dump(xr))
    (tmp_path / "composition.yaml").write_text(yaml.safe_dump(composition))
    args = [str(tmp_path / "xr.yaml"), str(tmp_path / "composition.yaml"), str(functions_file)]
    _, *first = yaml.safe_load_all(crank_render(*args))
    (tmp_path / "observed.yaml").write_text(yaml.safe_dump_all(first))
    _, *second = yaml.safe_load_all(crank_render(*args, "-o", str(tmp_path / "observed.yaml")))

    def by_name(docs: list[dict]) -> dict[str, dict]:
        return {d["metadata"]["annotations"]["crossplane.io/composition-resource-name"]: d for d in docs}

    added = {name: doc for name, doc in by_name(second).items() if name not in by_name(first)}
    converged = by_name(render(xr, composition).composed)
    assert set(converged) == set(by_name(first)) | set(added)
    for name, doc in added.items():
        assert converged[name] == doc
    kinds = {d["kind"] for d in first}
    if "Role" in kinds:  # Crossplane may bind Roles (package/rbac), so the binding comes with its Role
        assert "RoleBinding" in kinds and "RoleBinding" not in {d["kind"] for d in added.values()}


# Strings Go's YAML reads as numbers or booleans: crank double-quotes them, and so must our render, or kubectl
# would read a worker hash like 791904e4 (an exponent) as a number and refuse the label.
GO_NON_STRINGS = ["791904e4", "1e5", "-1E-3", "12", "1.5", "true", "y", "N", "null", "0x1F"]


def with_env_value(value: str, tmp_path: Path) -> tuple[dict, dict, list[str]]:
    """The vllm-agg example's XR with an env var of ``value``, its Composition, and crank's file arguments
    (without the functions file)."""
    claim = load_claim(REPO / "examples" / "dgd" / "vllm-agg.yaml")
    main = claim["spec"]["components"][-1]["podTemplate"]["spec"]["containers"][0]
    main.setdefault("env", []).append({"name": "EXAMPLE_VALUE", "value": value})
    xr = claim_to_xr(claim)
    composition = find_composition(xr, load_documents(COMPOSITIONS))
    (tmp_path / "xr.yaml").write_text(dump_documents([xr]))  # as Go reads it
    (tmp_path / "composition.yaml").write_text(yaml.safe_dump(composition))
    return xr, composition, [str(tmp_path / "xr.yaml"), str(tmp_path / "composition.yaml")]


@pytest.mark.parametrize("value", GO_NON_STRINGS)
def test_render_quotes_strings_go_reads_as_other_types(value: str, functions_file: Path, tmp_path: Path) -> None:
    xr, composition, files = with_env_value(value, tmp_path)
    ours = dump_documents(render(xr, composition, converge=False).composed)
    theirs = crank_render(*files, str(functions_file))
    for out in (ours, theirs):
        assert f'value: "{value}"' in out, out


# Strings whose YAML text PyYAML's own emitter wrote otherwise than Go's encoder does: a character beyond the
# Basic Multilingual Plane (escaped), a multi-line string ending in a space (double-quoted, not folded), a long
# string that needs double quotes (wrapped as Go wraps it).
GO_SPELLINGS = ["model 😀 ready", "line one\nline two ", "tab\tthen " + "word " * 20]


@pytest.mark.parametrize("value", GO_SPELLINGS, ids=["astral", "multi-line-trailing-space", "long-double-quoted"])
def test_render_spells_strings_as_go_does(value: str, functions_file: Path, tmp_path: Path) -> None:
    xr, composition, files = with_env_value(value, tmp_path)
    out = render(xr, composition, converge=False)
    assert dump_documents([out.composite, *out.composed]) == crank_render(*files, str(functions_file))
