"""``scripts/release.sh`` against a real OCI registry (``tools/oci-registry`` on loopback, stopped by PID):
all three packages pushed under the version, and both Configurations depend on the Function it pushed."""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import signal
import subprocess
import tarfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tooling import _missing, cache_dir, require_crank

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("function-dynamo", "function-dynamo-configuration", "function-dynamo-claims")
MANIFEST_TYPES = "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json"


def _project_version() -> str:
    for line in (REPO / "pyproject.toml").read_text().splitlines():
        if line.startswith("version = "):
            return "v" + line.split('"')[1]
    raise AssertionError("pyproject.toml has no version")


def _tools_env() -> dict[str, str]:
    env = cache_dir() / "tools.env"
    pairs = (line.split("=", 1) for line in env.read_text().splitlines() if "=" in line) if env.is_file() else ()
    return {k: v for k, v in pairs}


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A loopback OCI registry, stopped by PID when the module is done."""
    require_crank()
    if shutil.which("mmdebstrap") is None:
        _missing("mmdebstrap is missing, so the runtime image cannot be built: run scripts/install-tools.sh")
    binary = _tools_env().get("OCI_REGISTRY", "")
    if not binary or not Path(binary).is_file():
        _missing("the OCI registry (tools/oci-registry) is not installed: run scripts/install-tools.sh")
    run = tmp_path_factory.mktemp("registry")
    port_file = run / "port"
    with (run / "registry.log").open("wb") as log:
        proc = subprocess.Popen([binary, "--address", "127.0.0.1:0", "--port-file", str(port_file)],
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not (port_file.is_file() and port_file.read_text().strip()):
            assert proc.poll() is None and time.monotonic() < deadline, (run / "registry.log").read_text()
            time.sleep(0.1)
        yield f"127.0.0.1:{port_file.read_text().strip()}"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


def _get(url: str, accept: str = "") -> bytes:
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(request, timeout=30) as response:  # loopback only
        return response.read()


def _package_yaml(registry: str, repo: str, tag: str) -> dict[str, Any]:
    """The package.yaml a pushed package carries, read back from the registry's layers."""
    manifest = json.loads(_get(f"http://{registry}/v2/{repo}/manifests/{tag}", MANIFEST_TYPES))
    for layer in manifest["layers"]:
        blob = _get(f"http://{registry}/v2/{repo}/blobs/{layer['digest']}")
        with tarfile.open(fileobj=io.BytesIO(gzip.decompress(blob) if blob[:2] == b"\x1f\x8b" else blob)) as tar:
            member = next((m for m in tar.getmembers() if m.name.lstrip("./") == "package.yaml"), None)
            if member is not None:
                stream = tar.extractfile(member)
                assert stream is not None
                return next(d for d in yaml.safe_load_all(stream.read()) if d and d.get("kind") in
                            ("Configuration", "Function"))  # fmt: skip
    raise AssertionError(f"{repo}:{tag} has no package.yaml layer")


@pytest.mark.parametrize("path", ["", "/acme"], ids=["bare-host", "host-and-path"])
def test_release_image_pushes_every_package_pointed_at_its_function(registry: str, path: str, tmp_path: Path) -> None:
    """A bare host: the Configurations depend on the Function pushed there (Crossplane names it
    function-dynamo-function-dynamo, as the Compositions reference it). Under a path the dependency keeps its
    ghcr.io name, which the printed ImageConfig redirects."""
    version = _project_version()
    target = f"{registry}{path}"
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "release.sh"), target, version],
        cwd=REPO, capture_output=True, text=True, timeout=1200,
        env={**os.environ, "RELEASE_OUT": str(tmp_path / "out")},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    repo = f"{path.lstrip('/')}/function-dynamo".lstrip("/")
    for name in PACKAGES:
        tags = json.loads(_get(f"http://{registry}/v2/{repo}/{name}/tags/list"))["tags"]
        assert version in tags, (name, tags)
    function = f"{registry}/function-dynamo/function-dynamo" if not path else "ghcr.io/function-dynamo/function-dynamo"
    for configuration in PACKAGES[1:]:
        meta = _package_yaml(registry, f"{repo}/{configuration}", version)
        (dependency,) = meta["spec"]["dependsOn"]
        assert (dependency["package"], dependency["version"]) == (function, version)
    assert _package_yaml(registry, f"{repo}/function-dynamo", version)["kind"] == "Function"
    printed = list(yaml.safe_load_all(done.stdout[done.stdout.index("apiVersion: pkg.crossplane.io") :]))
    assert printed[-1]["spec"]["package"] == f"{target}/function-dynamo/function-dynamo-configuration:{version}"
    if path:
        (image_config,) = printed[:-1]
        assert image_config["spec"]["rewriteImage"]["prefix"] == f"{target}/function-dynamo/"
    else:
        assert len(printed) == 1


def test_release_refuses_a_version_pyproject_does_not_carry(tmp_path: Path) -> None:
    done = subprocess.run(["bash", str(REPO / "scripts" / "release.sh"), "127.0.0.1:1/acme", "v99.0.0"],
                          cwd=REPO, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 1
    assert "differs from pyproject.toml's version" in done.stderr
    bad = subprocess.run(["bash", str(REPO / "scripts" / "release.sh"), "127.0.0.1:1/acme", "1.0"],
                         cwd=REPO, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert bad.returncode == 1 and "is not vMAJOR.MINOR.PATCH" in bad.stderr
