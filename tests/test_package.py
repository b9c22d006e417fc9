"""The Configuration and Function packages build with the real Crossplane CLI (xpkg lint included)."""

from __future__ import annotations

import tarfile
from pathlib import Path

import yaml

from fixtures.tooling import REPO, require_tools_file
from functions.tooling.validation import load_crds, validate_object
from harness.packages import built_packages


def test_packages_build_with_crank(tmp_path: Path) -> None:
    built = built_packages()  # scripts/build-packages.sh, with crank's xpkg lint
    config = built / "function-dynamo-configuration.xpkg"
    assert config.stat().st_size > 0
    assert (built / "function-dynamo.xpkg").stat().st_size > 0
    # An xpkg is an OCI image tarball; its package layer holds package.yaml with every object.
    for name in ("function-dynamo-configuration", "function-dynamo-claims"):
        objects = _package_objects(built / f"{name}.xpkg", tmp_path / name)
        kinds = [o["kind"] for o in objects]
        assert kinds.count("Configuration") == 1 and kinds.count("CompositeResourceDefinition") == 7
        assert kinds.count("Composition") == 7
        (meta,) = (o for o in objects if o["kind"] == "Configuration")
        assert meta["metadata"]["name"] == name
        assert meta["spec"]["crossplane"]["version"] == ">=v2.4.0-0"
        xrds = [o for o in objects if o["kind"] == "CompositeResourceDefinition"]
        scopes = sorted(x["spec"]["scope"] for x in xrds)
        # the default package: six namespaced XRs and the platform's claim; the claims package: seven claims
        assert scopes == (
            ["LegacyCluster"] + ["Namespaced"] * 6 if name.endswith("configuration") else ["LegacyCluster"] * 7
        )
        types = {c["spec"]["compositeTypeRef"]["kind"] for c in objects if c["kind"] == "Composition"}
        assert types == {x["spec"]["names"]["kind"] for x in xrds}  # every XR kind has its Composition


def _package_objects(xpkg: Path, into: Path) -> list[dict]:
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
                    return [d for d in yaml.safe_load_all(data) if d]
    raise AssertionError("no package.yaml in the xpkg")


def test_composition_references_the_function_by_its_package_name() -> None:
    """Crossplane installs a dependency as ToDNSLabel(repository path); functionRef must use that name."""
    meta = yaml.safe_load((REPO / "package" / "crossplane.yaml").read_text())
    package = meta["spec"]["dependsOn"][0]["package"]
    repository = package.split("/", 1)[1]
    expected = repository.replace("/", "-").replace(".", "-")
    for path in (REPO / "compositions").rglob("*.yaml"):  # the claims package's twins too
        comp = yaml.safe_load(path.read_text())
        assert {s["functionRef"]["name"] for s in comp["spec"]["pipeline"]} == {expected}


def test_the_deployment_runtime_config_example_is_valid_and_fits_the_image() -> None:
    (drc,) = yaml.safe_load_all((REPO / "package" / "runtime" / "deploymentruntimeconfig.yaml").read_text())
    crds = load_crds([require_tools_file("CROSSPLANE_CRDS") / "pkg.crossplane.io_deploymentruntimeconfigs.yaml"])
    assert validate_object(drc, crds[("pkg.crossplane.io", "DeploymentRuntimeConfig")]) == []
    pod = drc["spec"]["deploymentTemplate"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["name"] == "package-runtime"  # the container Crossplane runs the package image in
    assert pod["securityContext"]["runAsUser"] == 65532  # the image's user (scripts/image/rootfs.py)
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
