"""The runtime image: reproducible, small, non-root, embedded in the Function package, and really serving:
the container runs the image out of the .xpkg under runc and answers a RunFunction request over mTLS with
exactly what the in-process render answers (issue 13)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from google.protobuf import json_format

from fixtures.tooling import REPO, _missing
from functions.serve import FunctionRunner
from functions.tooling.manifests import claim_to_xr, load_documents
from harness.container import IMAGE_USER, RUNTIME, readable_by_image, running, runtime_spec, unpack_xpkg
from harness.packages import built_packages
from harness.pki import issue, make_ca
from harness.server import free_port

MAX_UNCOMPRESSED = 150_000_000


def image_rootfs() -> Any:
    """scripts/image/rootfs.py: what the image leaves out is declared there once."""
    sys.path.insert(0, str(REPO / "scripts" / "image"))
    try:
        import rootfs

        return rootfs
    finally:
        sys.path.pop(0)


@pytest.fixture(scope="module")
def packages() -> Path:
    return built_packages()


@pytest.fixture(scope="module")
def summary(packages: Path) -> dict[str, Any]:
    return json.loads((packages / "image.json").read_text())


def xpkg_config(xpkg: Path) -> tuple[dict[str, Any], list[str]]:
    with tarfile.open(xpkg) as tar:
        (entry,) = json.load(tar.extractfile("manifest.json"))  # type: ignore[arg-type]
        return json.load(tar.extractfile(entry["Config"])), entry["Layers"]  # type: ignore[arg-type]


def test_the_same_commit_builds_the_same_image(packages: Path, summary: dict[str, Any], tmp_path: Path) -> None:
    again = tmp_path / "again"
    subprocess.run(["bash", str(REPO / "scripts" / "build-image.sh"), str(again)], check=True, capture_output=True)
    second = json.loads((again / "image.json").read_text())
    assert second["digest"] == summary["digest"], "a second build of this commit gave another image digest"
    assert (again / "function-dynamo-image.tar").read_bytes() == (packages / "function-dynamo-image.tar").read_bytes()
    sbom = "function-dynamo-image.spdx.json"
    assert (again / sbom).read_bytes() == (packages / sbom).read_bytes(), "the SBOM differs between two builds"


def test_the_image_is_small_and_names_what_it_holds(summary: dict[str, Any]) -> None:
    assert summary["uncompressedBytes"] < MAX_UNCOMPRESSED, summary["uncompressedBytes"]
    assert any(p.startswith("python3.11-minimal=") for p in summary["debianPackages"])
    lock = {line.split()[0] for line in (REPO / "requirements.lock").read_text().splitlines() if line[:1].isalpha()}
    left_out = image_rootfs().NOT_IN_IMAGE
    assert set(summary["wheels"]) == {p for p in lock if p.split("==")[0] not in left_out}
    assert "cel-expr-python" in left_out


def test_the_image_holds_the_runtime_and_none_of_the_tooling(packages: Path, summary: dict[str, Any]) -> None:
    oci = packages / "image-oci"
    manifest = json.loads((oci / "blobs" / summary["digest"].replace(":", "/")).read_bytes())
    (layer,) = manifest["layers"]
    with tarfile.open(oci / "blobs" / layer["digest"].replace(":", "/")) as tar:
        names = tar.getnames()
    site = str(image_rootfs().SITE)
    ours = {n.removeprefix("./").removeprefix(f"{site}/") for n in names if f"{site}/functions/" in n}
    assert "functions/serve.py" in ours and "functions/kinds/graph/graph_render_step.py" in ours
    tooling = sorted(n for n in ours if n.startswith(("functions/tooling", "functions/xrd")) or "_xrd." in n)
    assert tooling == [], tooling
    record = next(n for n in names if n.endswith(".dist-info/RECORD") and "function_dynamo" in n)
    with tarfile.open(oci / "blobs" / layer["digest"].replace(":", "/")) as tar:
        listed = tar.extractfile(record).read().decode()  # type: ignore[union-attr]
    assert "functions/tooling/" not in listed, "the wheel's RECORD still lists the tooling it left out"


def test_the_image_config_follows_the_function_contract(packages: Path, summary: dict[str, Any]) -> None:
    oci = packages / "image-oci"
    index = json.loads((oci / "index.json").read_text())
    assert index["manifests"][0]["digest"] == summary["digest"]
    manifest = json.loads((oci / "blobs" / summary["digest"].replace(":", "/")).read_bytes())
    config = json.loads((oci / "blobs" / manifest["config"]["digest"].replace(":", "/")).read_bytes())["config"]
    assert config["Entrypoint"] == ["/usr/local/bin/function-dynamo", "serve"]
    assert config["User"] == f"{IMAGE_USER}:{IMAGE_USER}"
    assert "TLS_SERVER_CERTS_DIR=/tls/server" in config["Env"]
    assert config["ExposedPorts"] == {"9443/tcp": {}}
    labels = config["Labels"]
    version = yaml.safe_load((REPO / "package" / "crossplane.yaml").read_text())["spec"]["dependsOn"][0]["version"]
    assert f"v{labels['org.opencontainers.image.version']}" == version
    assert labels["org.opencontainers.image.licenses"] == "Apache-2.0"
    assert labels["org.opencontainers.image.source"].startswith("https://")


def test_the_function_package_embeds_the_image(packages: Path, summary: dict[str, Any]) -> None:
    config, layers = xpkg_config(packages / "function-dynamo.xpkg")
    assert config["rootfs"]["diff_ids"][0] == summary["layer"]  # the runtime image's own layer, first
    assert len(layers) == 2  # and the package layer (package.yaml) Crossplane reads
    assert config["config"]["Entrypoint"] == ["/usr/local/bin/function-dynamo", "serve"]
    assert "base" in config["config"]["Labels"].values()


def test_serve_never_imports_the_offline_cel_engine_the_image_leaves_out() -> None:
    """Every example through every step of its Composition, in a fresh interpreter, without cel_expr_python."""
    script = """
import sys
from pathlib import Path
from functions.tooling.manifests import CLAIM_KINDS, claim_to_xr, find_composition, load_documents
from functions.tooling.pipeline import render
repo = Path(sys.argv[1])
compositions = load_documents(repo / "compositions")
# the operator config with checkpoints on, and a checkpoint
platform = load_documents(repo / "examples" / "checkpoint" / "cluster" / "required.yaml")
for path in sorted((repo / "examples").rglob("*.yaml")):
    for doc in load_documents(path):
        if doc.get("kind") in CLAIM_KINDS:
            out = render(claim_to_xr(doc), find_composition(claim_to_xr(doc), compositions), required=platform)
            for nested in out.composed:
                if nested["kind"].startswith("X"):
                    render(nested, find_composition(nested, compositions), required=platform)
assert "cel_expr_python" not in sys.modules, "serve reached the CEL engine"
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script, str(REPO)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def _require_runtime() -> None:
    if shutil.which(RUNTIME) is None:
        _missing(f"{RUNTIME} is missing, so the image cannot run as a container: run scripts/install-tools.sh")
    if os.geteuid() != 0:
        _missing(f"running the image under {RUNTIME} here needs root (no rootless setup)")


def _certs(directory: Path) -> Path:
    make_ca(directory, "test-ca")
    issue(directory, "tls", "/CN=function-dynamo", "subjectAltName=IP:127.0.0.1")
    issue(directory, "client", "/CN=crossplane", "extendedKeyUsage=clientAuth")
    readable_by_image(directory)  # the server reads them as the image's user
    return directory


def _request() -> fnv1.RunFunctionRequest:
    claim = load_documents(REPO / "examples" / "dgd" / "vllm-agg.yaml")[0]
    req = fnv1.RunFunctionRequest()
    req.meta.tag = "image-test"
    req.observed.composite.resource.update(claim_to_xr(claim))
    req.input.update({"apiVersion": "dynamo.fn.crossplane.io/v1beta1", "kind": "GraphDeployment"})
    return req


def test_the_image_serves_what_the_in_process_render_does(packages: Path, tmp_path: Path) -> None:
    _require_runtime()
    bundle = tmp_path / "bundle"
    image = unpack_xpkg(packages / "function-dynamo.xpkg", bundle / "rootfs")
    certs = _certs(tmp_path / "certs")
    address = f"127.0.0.1:{free_port()}"
    spec = runtime_spec(image, ["--address", address], certs)
    assert spec["root"]["readonly"] is True and spec["process"]["user"]["uid"] == IMAGE_USER
    creds = grpc.ssl_channel_credentials(
        root_certificates=(certs / "ca.crt").read_bytes(),
        private_key=(certs / "client.key").read_bytes(),
        certificate_chain=(certs / "client.crt").read_bytes(),
    )
    with running(bundle, spec, f"function-dynamo-{os.getpid()}") as container:
        with grpc.secure_channel(address, creds) as channel:
            try:
                grpc.channel_ready_future(channel).result(timeout=30)
            except grpc.FutureTimeoutError:
                pytest.fail(f"the container did not serve on {address}: {container.log.read_text()[-2000:]}")
            got = grpcv1.FunctionRunnerServiceStub(channel).RunFunction(_request(), timeout=20)
        status = (Path("/proc") / str(container.pid) / "status").read_text()
        assert f"Uid:\t{IMAGE_USER}" in status  # the server runs as the image's non-root user
        with grpc.insecure_channel(address) as plain, pytest.raises(grpc.RpcError):
            grpcv1.FunctionRunnerServiceStub(plain).RunFunction(_request(), timeout=5)  # mTLS only
    want = asyncio.run(FunctionRunner().RunFunction(_request(), None))
    assert json_format.MessageToDict(got) == json_format.MessageToDict(want)
    assert len(got.desired.resources) >= 5
