"""The image config and the two forms the image is written in: an OCI image layout directory and a
``docker save`` tarball (what ``crossplane xpkg build --embed-runtime-image-tarball`` reads).

Both are written from the same config and layer blobs, so the image digest (the sha256 of the manifest)
is the same in either form, and the JSON is serialised canonically (sorted keys, no spaces).
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from layer import Layer

MEDIA_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MEDIA_CONFIG = "application/vnd.oci.image.config.v1+json"
MEDIA_LAYER = "application/vnd.oci.image.layer.v1.tar"


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def sha256(data: bytes) -> str:
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


def image_config(layer: Layer, *, epoch: int, entrypoint: list[str], env: list[str], user: str,
                 labels: dict[str, str], ports: list[int]) -> dict[str, Any]:  # fmt: skip
    created = datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "architecture": "amd64",
        "os": "linux",
        "created": created,
        "config": {
            "User": user,
            "Entrypoint": entrypoint,
            "Env": env,
            "WorkingDir": "/",
            "Labels": labels,
            "ExposedPorts": {f"{port}/tcp": {} for port in ports},
        },
        "rootfs": {"type": "layers", "diff_ids": [layer.digest]},
        "history": [{"created": created, "created_by": "scripts/build-image.sh"}],
    }


def manifest(config: bytes, layer: Layer, labels: dict[str, str]) -> bytes:
    return canonical(
        {
            "schemaVersion": 2,
            "mediaType": MEDIA_MANIFEST,
            "config": {"mediaType": MEDIA_CONFIG, "digest": sha256(config), "size": len(config)},
            "layers": [{"mediaType": MEDIA_LAYER, "digest": layer.digest, "size": layer.size}],
            "annotations": labels,
        }
    )


def _blob(blobs: Path, digest: str) -> Path:
    return blobs / digest.replace(":", "/")


def write_oci_layout(out: Path, config: bytes, layer: Layer, manifest_bytes: bytes, ref: str) -> str:
    """An OCI image layout at ``out`` (one image, tagged ``ref``); returns the image (manifest) digest."""
    if out.exists():
        shutil.rmtree(out)
    blobs = out / "blobs"
    (blobs / "sha256").mkdir(parents=True)
    _blob(blobs, sha256(config)).write_bytes(config)
    _blob(blobs, sha256(manifest_bytes)).write_bytes(manifest_bytes)
    shutil.copyfile(layer.path, _blob(blobs, layer.digest))
    digest = sha256(manifest_bytes)
    index = {
        "schemaVersion": 2,
        "manifests": [
            {
                "mediaType": MEDIA_MANIFEST,
                "digest": digest,
                "size": len(manifest_bytes),
                "annotations": {"org.opencontainers.image.ref.name": ref},
            }
        ],
    }
    (out / "index.json").write_bytes(canonical(index))
    (out / "oci-layout").write_bytes(canonical({"imageLayoutVersion": "1.0.0"}))
    return digest


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes, epoch: int) -> None:
    info = tarfile.TarInfo(name)
    info.mtime, info.mode, info.size = epoch, 0o644, len(data)
    tar.addfile(info, io.BytesIO(data))


def _add_file(tar: tarfile.TarFile, name: str, source: Path, epoch: int) -> None:
    info = tarfile.TarInfo(name)
    info.mtime, info.mode, info.size = epoch, 0o644, source.stat().st_size
    with source.open("rb") as stream:
        tar.addfile(info, stream)


def write_docker_archive(out: Path, config: bytes, layer: Layer, repo_tag: str, epoch: int) -> None:
    """The image as ``docker save`` writes it: manifest.json, the config and the layer tar."""
    config_name = f"{sha256(config).removeprefix('sha256:')}.json"
    layer_name = f"{layer.digest.removeprefix('sha256:')}/layer.tar"
    entries = canonical([{"Config": config_name, "RepoTags": [repo_tag], "Layers": [layer_name]}])
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        _add_bytes(tar, config_name, config, epoch)
        _add_file(tar, layer_name, layer.path, epoch)
        _add_bytes(tar, "manifest.json", entries, epoch)
