"""``scripts/release.sh`` against a real OCI registry (``tools/oci-registry`` on loopback, stopped by PID):
every file of the release built and in its SHA256SUMS, all three packages pushed under the version, and both
Configurations depend on the Function it pushed; a release signed with a cosign key verifies with that key only,
and carries the runtime image's SBOM (valid SPDX, naming every Debian package and Python distribution in the
image's layer) as a signed attestation. ``tests/test_release.py`` checks what it refuses."""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import shutil
import signal
import subprocess
import tarfile
import urllib.parse
import urllib.request
from collections.abc import Iterator
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

import pytest
import yaml

from fixtures.tooling import _missing, _tools_env, project_version, require_crank
from harness.poll import until

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("function-dynamo", "function-dynamo-configuration", "function-dynamo-claims")
MANIFEST_TYPES = "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json"


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

    def port() -> str:
        return port_file.read_text().strip() if port_file.is_file() else ""

    def exited() -> str | None:
        return None if proc.poll() is None else f"the registry exited with {proc.returncode}"

    try:
        until("the registry's port file", port, 30, every=0.1, stop=exited, where=(run / "registry.log").read_text)
        yield f"127.0.0.1:{port()}"
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
    version = "v" + project_version()
    target = f"{registry}{path}"
    out = tmp_path / "out"
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "release.sh"), "--push", target, version],
        cwd=REPO, capture_output=True, text=True, timeout=1200, env={**os.environ, "RELEASE_OUT": str(out)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # what was pushed is what the release directory holds, every file of it in SHA256SUMS
    checked = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=out, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    listed = {line.split("  ", 1)[1] for line in (out / "SHA256SUMS").read_text().splitlines()}
    assert {f"{name}.xpkg" for name in PACKAGES} | {f"function_dynamo-{project_version()}-py3-none-any.whl",
                                                   "function-dynamo-image.spdx.json"} <= listed  # fmt: skip
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


SITE = "usr/local/lib/python3.11/dist-packages/"


def _cosign(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    binary = _tools_env().get("COSIGN", "")
    if not binary or not Path(binary).is_file():
        _missing("cosign is not installed: run scripts/install-tools.sh")
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=300, cwd=cwd,
                          env={**os.environ, **(env or {})})  # fmt: skip


@pytest.fixture(scope="module")
def signed_release(registry: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A release pushed by ``scripts/release.sh`` with ``COSIGN_KEY``: (its output directory, the public key).
    No transparency log is reachable here, so it signs with ``--tlog-upload=false``."""
    keys = tmp_path_factory.mktemp("cosign-keys")
    made = _cosign("generate-key-pair", env={"COSIGN_PASSWORD": "release-test"}, cwd=keys)
    assert made.returncode == 0, made.stderr
    out = tmp_path_factory.mktemp("signed-release") / "out"
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "release.sh"), registry, "v" + project_version()],
        cwd=REPO, capture_output=True, text=True, timeout=1200,
        env={**os.environ, "RELEASE_OUT": str(out), "COSIGN_KEY": str(keys / "cosign.key"),
             "COSIGN_PASSWORD": "release-test", "COSIGN_SIGN_FLAGS": "--tlog-upload=false"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.count("==> release: signing ") == len(PACKAGES)
    assert (out / "SHA256SUMS.sigstore.json").is_file(), "the release's checksums are signed too"
    return out, keys / "cosign.pub"


def _manifest_digest(registry: str, repo: str, tag: str) -> str:
    request = urllib.request.Request(f"http://{registry}/v2/{repo}/manifests/{tag}", method="HEAD",
                                     headers={"Accept": MANIFEST_TYPES})  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as response:  # loopback only
        return response.headers["Docker-Content-Digest"]


def test_a_signed_release_verifies_with_its_key_only_and_attests_the_image_sbom(
    registry: str, signed_release: tuple[Path, Path], tmp_path: Path
) -> None:
    out, public_key = signed_release
    version = "v" + project_version()
    for name in PACKAGES:
        ref = f"{registry}/function-dynamo/{name}:{version}"
        verified = _cosign("verify", "--key", str(public_key), "--insecure-ignore-tlog=true", ref)
        assert verified.returncode == 0, verified.stderr
        (claim,) = json.loads(verified.stdout)
        digest = _manifest_digest(registry, f"function-dynamo/{name}", version)
        assert claim["critical"]["image"]["docker-manifest-digest"] == digest
    made = _cosign("generate-key-pair", env={"COSIGN_PASSWORD": "other"}, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    other = _cosign("verify", "--key", str(tmp_path / "cosign.pub"), "--insecure-ignore-tlog=true",
                    f"{registry}/function-dynamo/function-dynamo:{version}")  # fmt: skip
    assert other.returncode != 0 and "no matching signatures" in other.stderr
    function = f"{registry}/function-dynamo/function-dynamo:{version}"
    attested = _cosign(
        "verify-attestation", "--key", str(public_key), "--type", "spdxjson", "--insecure-ignore-tlog=true", function
    )
    assert attested.returncode == 0, attested.stderr
    statement = json.loads(base64.b64decode(json.loads(attested.stdout.splitlines()[0])["payload"]))
    assert statement["predicateType"] == "https://spdx.dev/Document"
    assert statement["predicate"] == json.loads((out / "function-dynamo-image.spdx.json").read_text())


def _layer_distributions(image_oci: Path) -> dict[str, str]:
    """Name -> version of every Python distribution in the image's layer, from its METADATA files."""
    index = json.loads((image_oci / "index.json").read_text())
    blob = image_oci / "blobs" / "sha256"
    manifest = json.loads((blob / index["manifests"][0]["digest"].split(":")[1]).read_bytes())
    found = {}
    for layer in manifest["layers"]:
        with tarfile.open(blob / layer["digest"].split(":")[1]) as tar:
            for member in tar.getmembers():
                name = member.name.lstrip("./")
                if name.startswith(SITE) and name.endswith(".dist-info/METADATA"):
                    stream = tar.extractfile(member)
                    assert stream is not None
                    headers = HeaderParser().parsestr(stream.read().decode())
                    found[headers["Name"]] = headers["Version"]
    return found


def test_the_release_sbom_is_valid_spdx_naming_everything_the_image_holds(signed_release: tuple[Path, Path]) -> None:
    from spdx_tools.spdx.parser.parse_anything import parse_file
    from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document

    out, _ = signed_release
    document = parse_file(str(out / "function-dynamo-image.spdx.json"))
    assert validate_full_spdx_document(document) == []
    image = json.loads((out / "image.json").read_text())
    relationships = document.relationships
    (described,) = [r.related_spdx_element_id for r in relationships if r.spdx_element_id == "SPDXRef-DOCUMENT"]
    root = next(p for p in document.packages if p.spdx_id == described)
    assert root.checksums[0].value == image["digest"].removeprefix("sha256:")
    contained = {r.related_spdx_element_id for r in document.relationships if r.spdx_element_id == described}
    packages = {p.spdx_id: p for p in document.packages if p.spdx_id in contained}
    assert len(contained) == len(document.packages) - 1, "every package is in the image"

    def purls(kind: str) -> dict[str, str]:
        return {p.name: p.version for p in packages.values()
                if any(r.locator.startswith(f"pkg:{kind}/") for r in p.external_references)}  # fmt: skip

    assert purls("pypi") == _layer_distributions(out / "image-oci")
    assert "function-dynamo" in purls("pypi") and "grpcio" in purls("pypi")
    debian = {name: urllib.parse.unquote(v) for name, _, v in (p.partition("=") for p in image["debianPackages"])}
    assert purls("deb") == debian
    assert "python3.11-minimal" in debian
    pinned = {p.name for p in packages.values() if p.checksums}
    assert "grpcio" in pinned, "wheels carry the sha256 requirements.lock checked"
