"""The Configuration and Function packages build with the real Crossplane CLI (xpkg lint included)."""

from __future__ import annotations

import subprocess
import tarfile
from pathlib import Path

import yaml

from server import REPO
from tooling import require_crank


def test_packages_build_with_crank(tmp_path: Path) -> None:
    crank = require_crank()
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "build-packages.sh"), str(crank), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    config = tmp_path / "function-dynamo-configuration.xpkg"
    assert config.stat().st_size > 0
    assert (tmp_path / "function-dynamo.xpkg").stat().st_size > 0
    # An xpkg is an OCI image tarball; its package layer holds package.yaml with every object.
    kinds = _package_kinds(config, tmp_path / "unpacked")
    assert kinds.count("Configuration") == 1
    assert "CompositeResourceDefinition" in kinds
    assert "Composition" in kinds


def _package_kinds(xpkg: Path, into: Path) -> list[str]:
    into.mkdir()
    with tarfile.open(xpkg) as outer:
        outer.extractall(into, filter="data")
    for layer in into.rglob("*"):
        if not layer.is_file() or not tarfile.is_tarfile(layer):
            continue
        with tarfile.open(layer) as tar:
            for member in tar.getmembers():
                if member.name.endswith("package.yaml"):
                    data = tar.extractfile(member)
                    assert data is not None
                    return [d["kind"] for d in yaml.safe_load_all(data) if d]
    raise AssertionError("no package.yaml in the xpkg")


def test_composition_references_the_function_by_its_package_name() -> None:
    """Crossplane installs a dependency as ToDNSLabel(repository path); functionRef must use that name."""
    meta = yaml.safe_load((REPO / "package" / "crossplane.yaml").read_text())
    package = meta["spec"]["dependsOn"][0]["package"]
    repository = package.split("/", 1)[1]
    expected = repository.replace("/", "-").replace(".", "-")
    for path in (REPO / "compositions").glob("*.yaml"):
        comp = yaml.safe_load(path.read_text())
        assert {s["functionRef"]["name"] for s in comp["spec"]["pipeline"]} == {expected}
