"""The built packages (runtime image, Function and Configuration xpkgs) the image and Crossplane tests use.

``scripts/test.sh`` builds them once into ``dist/`` and names that directory in ``FUNCTION_DYNAMO_PACKAGES``;
a test run started otherwise builds them once per session (``scripts/build-packages.sh``, about 30 s warm).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from fixtures.tooling import REPO, _missing, require_crank

FILES = (
    "function-dynamo.xpkg",
    "function-dynamo-configuration.xpkg",
    "function-dynamo-claims.xpkg",
    "function-dynamo-image.tar",
    "image.json",
    "function-dynamo-image.spdx.json",
)


def _complete(directory: Path) -> bool:
    return all((directory / name).is_file() for name in FILES)


@cache
def _built_here(crank: Path) -> Path:
    out = Path(tempfile.mkdtemp(prefix="function-dynamo-packages-"))
    log = out.with_suffix(".log")
    with log.open("wb") as stream:
        done = subprocess.run(["bash", str(REPO / "scripts" / "build-packages.sh"), str(crank), str(out)],
                              stdout=stream, stderr=subprocess.STDOUT, timeout=900)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"scripts/build-packages.sh failed; see {log}")
    return out


def built_packages() -> Path:
    """The directory holding the packages of this checkout, built if need be (skip/fail without the tools)."""
    given = os.environ.get("FUNCTION_DYNAMO_PACKAGES")
    if given and _complete(Path(given)):
        return Path(given)
    crank = require_crank()
    if shutil.which("mmdebstrap") is None:
        _missing("mmdebstrap is missing, so the runtime image cannot be built: run scripts/install-tools.sh")
    return _built_here(crank)
