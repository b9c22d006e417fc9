"""``scripts/release.sh`` without a registry, crank or Debian: what it refuses, and the release directory it writes.

Each test runs the script in a copy of the checkout's sources (not a git checkout, so there is no earlier tag to
check the XRDs against). The wheel and sdist are built for real (``scripts/build-dist.sh``); the copy's
``scripts/build-packages.sh`` is a stand-in writing one line per package, image and SBOM file, and crank a
stand-in recording what it is asked to push. ``tests/test_image_release.py`` runs the whole build and push.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from fixtures.tooling import _missing, _tools_env, project_version

REPO = Path(__file__).resolve().parents[1]
SOURCES = ("functions", "xrds", "compositions", "package", "pyproject.toml", "MANIFEST.in", "README.md", "LICENSE")
SCRIPTS = ("release.sh", "build-dist.sh", "wheel_data.py")
BUILT = ("function-dynamo.xpkg", "function-dynamo-configuration.xpkg", "function-dynamo-claims.xpkg",
         "function-dynamo-image.tar", "image.json", "function-dynamo-image.spdx.json")  # fmt: skip
STAND_IN_PACKAGES = f"""#!/usr/bin/env bash
# stands in for scripts/build-packages.sh CRANK OUT_DIR: no crank, no runtime image
set -euo pipefail
echo "FUNCTION_PACKAGE=${{FUNCTION_PACKAGE:-}} FUNCTION_PACKAGE_VERSION=${{FUNCTION_PACKAGE_VERSION:-}}" \\
    >"$2/packages.env"
for file in {" ".join(BUILT)}; do echo "$file of this build" >"$2/$file"; done
"""
VERSION = "v" + project_version()
WITH_SECTION = f"# Changelog\n\n## Unreleased\n\n## [{project_version()}] - 2026-01-01\n\n- The first release.\n"


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the sources a release is built from, with stand-ins for crank and mmdebstrap on its tools."""
    root = tmp_path / "checkout"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "_data")
    for name in SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=ignore)
        else:
            shutil.copy(source, root / name)
    (root / "scripts").mkdir()
    for name in SCRIPTS:
        shutil.copy(REPO / "scripts" / name, root / "scripts" / name)
    executable(root / "scripts" / "build-packages.sh", STAND_IN_PACKAGES)
    (root / "CHANGELOG.md").write_text(WITH_SECTION)
    tools = tmp_path / "tools"
    (tools / "bin").mkdir(parents=True)
    crank = executable(tools / "bin" / "crank", f'#!/bin/sh\necho "$*" >>{tools / "crank.log"}\n')
    executable(tools / "bin" / "mmdebstrap", "#!/bin/sh\nexit 1\n")
    cosign = _tools_env().get("COSIGN", "")
    (tools / "tools.env").write_text(f"CRANK={crank}\n" + (f"COSIGN={cosign}\n" if cosign else ""))
    return root


def release(checkout: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    tools = checkout.parent / "tools"
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("COSIGN", "RELEASE_"))}
    environ |= {"PATH": f"{tools / 'bin'}:{os.environ['PATH']}", "FUNCTION_DYNAMO_CACHE": str(tools),
                "PYTHON": sys.executable, **env}  # fmt: skip
    return subprocess.run(["bash", str(checkout / "scripts" / "release.sh"), *args], cwd=checkout, env=environ,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def pushed(checkout: Path) -> list[str]:
    log = checkout.parent / "tools" / "crank.log"
    return log.read_text().splitlines() if log.is_file() else []


# what is wrong -> (the CHANGELOG, the arguments, what the refusal says)
REFUSALS = {
    "no changelog section": ("# Changelog\n\n## Unreleased\n\n## 0.0.9\n", [VERSION], "CHANGELOG.md has no section"),
    "only a pre-release's section": (
        f"# Changelog\n\n## {project_version()}-rc.1\n",
        [],
        "CHANGELOG.md has no section",
    ),
    "not pyproject's version": (WITH_SECTION, ["v99.0.0"], "differs from pyproject.toml's version"),
    "not a version": (WITH_SECTION, ["registry.example.com", "1.0"], "is not vMAJOR.MINOR.PATCH"),
    "an unknown option": (WITH_SECTION, ["--registry", "registry.example.com"], "unknown option --registry"),
    "two registries": (WITH_SECTION, ["--push", "a.example.com", "b.example.com", VERSION], "both --push and"),
}


@pytest.mark.parametrize(("changelog", "args", "message"), REFUSALS.values(), ids=REFUSALS.keys())
def test_release_refuses_before_building_anything(
    checkout: Path, changelog: str, args: list[str], message: str
) -> None:
    (checkout / "CHANGELOG.md").write_text(changelog)
    done = release(checkout, *args)
    assert done.returncode == 1, done.stdout + done.stderr
    assert message in done.stderr
    assert not (checkout / "dist").exists() and pushed(checkout) == []


def _sums(out: Path) -> dict[str, str]:
    lines = (out / "SHA256SUMS").read_text().splitlines()
    return {name: digest for digest, name in (line.split("  ", 1) for line in lines)}


def test_a_release_is_every_file_in_dist_with_their_checksums(checkout: Path) -> None:
    done = release(checkout)
    assert done.returncode == 0, done.stdout + done.stderr
    out = checkout / "dist" / VERSION
    wheel, sdist = (
        f"function_dynamo-{project_version()}-py3-none-any.whl",
        f"function_dynamo-{project_version()}.tar.gz",
    )
    sums = _sums(out)
    assert sorted(sums) == sorted([wheel, sdist, *BUILT])
    for name, digest in sums.items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest, name
    checked = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=out, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    with zipfile.ZipFile(out / wheel) as whl:
        names = set(whl.namelist())
    assert {"functions/tooling/_data/xrds/dynamographdeployments.yaml",
            "functions/tooling/_data/compositions/claims/dynamographdeployment.yaml",
            "functions/tooling/_data/package/claims/xrds/dynamographdeployments.yaml"} <= names  # fmt: skip
    with tarfile.open(out / sdist) as tar:
        assert f"function_dynamo-{project_version()}/xrds/dynamographdeployments.yaml" in tar.getnames()
    # not pushed: the Configurations keep depending on the Function by its ghcr.io name, at this version
    assert (out / "packages.env").read_text() == f"FUNCTION_PACKAGE= FUNCTION_PACKAGE_VERSION={VERSION}\n"
    assert pushed(checkout) == [] and "not signed" in done.stderr
    assert not (out / "SHA256SUMS.sigstore.json").exists()


PACKAGES = ("function-dynamo", "function-dynamo-configuration", "function-dynamo-claims")
PUSHES = {
    "--push": ["--push", "127.0.0.1:5000", VERSION],
    "the older form": ["127.0.0.1:5000", VERSION],
    "the older form, default version": ["127.0.0.1:5000"],
}


@pytest.mark.parametrize("args", PUSHES.values(), ids=PUSHES.keys())
def test_a_pushed_release_pushes_the_three_packages_it_built(checkout: Path, args: list[str]) -> None:
    out = checkout / "out"
    done = release(checkout, *args, RELEASE_OUT=str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    prefix = "127.0.0.1:5000/function-dynamo"
    assert pushed(checkout) == [f"xpkg push -f {out}/{name}.xpkg {prefix}/{name}:{VERSION}" for name in PACKAGES]
    assert (out / "packages.env").read_text().startswith(f"FUNCTION_PACKAGE={prefix}/function-dynamo ")
    assert (out / "SHA256SUMS").is_file()
    assert f"package: {prefix}/function-dynamo-configuration:{VERSION}" in done.stdout


def test_a_signed_release_signs_its_checksums(checkout: Path, tmp_path: Path) -> None:
    cosign = _tools_env().get("COSIGN", "")
    if not cosign or not Path(cosign).is_file():
        _missing("cosign is not installed: run scripts/install-tools.sh")
    keys = {"COSIGN_PASSWORD": "release-test"}
    made = subprocess.run([cosign, "generate-key-pair"], cwd=tmp_path, env={**os.environ, **keys},
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert made.returncode == 0, made.stderr
    done = release(checkout, COSIGN_KEY=str(tmp_path / "cosign.key"), COSIGN_SIGN_FLAGS="--tlog-upload=false", **keys)
    assert done.returncode == 0, done.stdout + done.stderr
    out = checkout / "dist" / VERSION

    def verify() -> subprocess.CompletedProcess[str]:
        return subprocess.run([cosign, "verify-blob", "--key", str(tmp_path / "cosign.pub"), "--insecure-ignore-tlog",
                               "--bundle", str(out / "SHA256SUMS.sigstore.json"), str(out / "SHA256SUMS")],
                              capture_output=True, text=True, timeout=60)  # fmt: skip

    assert verify().returncode == 0, verify().stderr
    (out / "SHA256SUMS").write_text((out / "SHA256SUMS").read_text().replace("a", "b", 1))
    assert verify().returncode != 0
