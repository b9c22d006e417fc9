"""Build function-dynamo's runtime image without a container engine or a base image from a registry.

    .venv/bin/python scripts/image/build.py OUT_DIR     (scripts/build-image.sh wraps it)

Writes ``OUT_DIR/function-dynamo-image.tar`` (the ``docker save`` form, for ``crossplane xpkg build
--embed-runtime-image-tarball``), ``OUT_DIR/image-oci/`` (an OCI image layout), ``OUT_DIR/image.json``
(digest, sizes, the Debian packages and wheels inside) and ``OUT_DIR/function-dynamo-image.spdx.json`` (its
SBOM, scripts/image/sbom.py). The same commit gives the same image digest:
file times are the commit time (or ``SOURCE_DATE_EPOCH``), entries are sorted, owners fixed, ``.pyc``
files hash-checked, and the wheels pinned by hash (``requirements.lock``). The Debian packages are the
mirror's current ``bookworm`` ones, extracted once and kept under the cache (``FUNCTION_DYNAMO_CACHE``,
default ``~/.cache/function-dynamo``): delete ``image/debian-*`` there to take Debian's updates.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import rootfs
import sbom
from layer import write_layer
from oci import canonical, image_config, manifest, sha256, write_docker_archive, write_oci_layout

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "requirements.lock"
IMAGE = "ghcr.io/function-dynamo/function-dynamo"
SBOM = "function-dynamo-image.spdx.json"  # the image's SPDX document (scripts/image/sbom.py)
SOURCE = "https://github.com/function-dynamo/function-dynamo"
PORT = 9443
ENV = [
    "PATH=/usr/local/bin:/usr/bin:/bin",
    "PYTHONDONTWRITEBYTECODE=1",  # the root file system may be read-only
    "PYTHONUNBUFFERED=1",
    "TLS_SERVER_CERTS_DIR=/tls/server",  # where Crossplane mounts the function's server certificates
]
STARTED = time.monotonic()


def step(message: str) -> None:
    print(f"==> build-image [{time.monotonic() - STARTED:5.1f}s] {message}", flush=True)


def cache_dir() -> Path:
    return Path(os.environ.get("FUNCTION_DYNAMO_CACHE") or Path.home() / ".cache" / "function-dynamo") / "image"


def build_epoch() -> int:
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return int(os.environ["SOURCE_DATE_EPOCH"])
    out = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%ct"], capture_output=True, text=True)
    return int(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else 0


def revision() -> str:
    out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else "unknown"


def version() -> str:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def debian_root(cache: Path, epoch: int) -> tuple[Path, list[str]]:
    """The extracted Debian tree, from the cache when this package set was extracted before."""
    key = hashlib.sha256(canonical([rootfs.SUITE, rootfs.MIRROR, *rootfs.PACKAGES])).hexdigest()[:12]
    cached, listing = cache / f"debian-{key}.tar", cache / f"debian-{key}.packages"
    if not cached.exists():
        step(f"extracting Debian {rootfs.SUITE}: {', '.join(rootfs.PACKAGES)} (mmdebstrap)")
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            tree = Path(tmp) / "root"
            packages = rootfs.extract_debian(tree, epoch)
            subprocess.run(["tar", "-C", str(tree), "-cf", f"{cached}.tmp", "."], check=True)
        os.replace(f"{cached}.tmp", cached)
        listing.write_text("\n".join(packages) + "\n")
    else:
        step(f"Debian tree from the cache: {cached}")
    return cached, listing.read_text().split()


def wheels(cache: Path) -> Path:
    """The pinned wheels, downloaded once (pip checks every hash of requirements.lock)."""
    target = cache / "wheels"
    step(f"pinned wheels ({LOCK.name}) into {target}")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
         "--only-binary=:all:", "--python-version=3.11", "--implementation=cp", "--platform=manylinux2014_x86_64",
         "--platform=manylinux_2_28_x86_64", "--require-hashes", "-r", str(LOCK), "-d", str(target)],
        check=True,
    )  # fmt: skip
    return target


def project_wheel(stage: Path) -> Path:
    step("the project's wheel (pip wheel --no-deps)")
    out = stage / "wheel"
    env = {**os.environ, "SOURCE_DATE_EPOCH": str(build_epoch())}
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
         "-w", str(out), str(REPO)],
        check=True, env=env,
    )  # fmt: skip
    (wheel,) = out.glob("function_dynamo-*.whl")
    return wheel


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        raise SystemExit("usage: build.py OUT_DIR")
    out = Path(argv[0]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    epoch = build_epoch()
    labels = {
        "org.opencontainers.image.source": SOURCE,
        "org.opencontainers.image.version": version(),
        "org.opencontainers.image.revision": revision(),
        "org.opencontainers.image.licenses": "Apache-2.0",
        "org.opencontainers.image.title": "function-dynamo",
        "org.opencontainers.image.description": "Crossplane composition functions for NVIDIA Dynamo composites",
    }
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        stage = Path(tmp)
        debian, packages = debian_root(cache, epoch)
        root = stage / "root"
        root.mkdir()
        subprocess.run(["tar", "-C", str(root), "-xf", str(debian)], check=True)
        step("trimming the tree, adding the non-root user")
        rootfs.trim(root)
        rootfs.add_user(root)
        step(f"installing the pinned wheels (not {', '.join(sorted(rootfs.NOT_IN_IMAGE))}) and the project")
        requirements = stage / "requirements.txt"
        pins = rootfs.image_requirements(LOCK, requirements)
        rootfs.install_python_packages(root, wheels(cache), requirements, project_wheel(stage))
        distributions = sbom.python_distributions(root / rootfs.SITE)
        step("byte-compiling (hash-checked .pyc)")
        rootfs.byte_compile(root)
        step("writing the layer")
        layer = write_layer(root, stage / "layer.tar", epoch)
        config = canonical(
            image_config(
                layer,
                epoch=epoch,
                entrypoint=[f"/{rootfs.LAUNCHER}", "serve"],
                env=ENV,
                user=f"{rootfs.USER_ID}:{rootfs.USER_ID}",
                labels=labels,
                ports=[PORT],
            )
        )
        manifest_bytes = manifest(config, layer, labels)
        ref = f"{IMAGE}:v{version()}"
        digest = write_oci_layout(out / "image-oci", config, layer, manifest_bytes, ref)
        write_docker_archive(out / "function-dynamo-image.tar", config, layer, ref, epoch)
        summary = {
            "image": ref,
            "digest": digest,
            "config": sha256(config),
            "layer": layer.digest,
            "uncompressedBytes": layer.size,
            "contentBytes": layer.content_size,
            "epoch": epoch,
            "revision": labels["org.opencontainers.image.revision"],
            "debianPackages": packages,
            "wheels": pins,
        }
    (out / "image.json").write_text(json.dumps(summary, indent=2) + "\n")
    document = sbom.image_sbom(summary, distributions, sbom.lock_hashes(LOCK), project="function-dynamo")
    sbom.write_sbom(document, out / SBOM)
    shutil.rmtree(out / "root", ignore_errors=True)
    step(f"image {ref} digest {digest}, {layer.size / 1e6:.1f} MB uncompressed -> {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
