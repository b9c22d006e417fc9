"""The wheel's build step that adds the manifests the CLI reads: setuptools' ``build_py``, named in pyproject.toml.

``function-dynamo render`` and ``validate`` read the package's XRDs and Compositions. They stay at the checkout's
root (``xrds/``, ``compositions/``, ``package/claims/``), where Crossplane's packaging reads them; a wheel carries
a copy of them in ``functions/tooling/_data/``, laid out as in the checkout (``functions/tooling/data_dirs.py``
finds either). The sdist carries the originals (MANIFEST.in), so a wheel built from it gets them too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parents[1]
# what the CLI reads: a directory of the checkout and the files of it the wheel carries
CARRIED = (("xrds", "*.yaml"), ("compositions", "**/*.yaml"), ("package/claims", "**/*.yaml"))
TARGET = Path("functions", "tooling", "_data")  # the tooling's, left out of the runtime image with it


class BuildPy(build_py):
    """``build_py``, then the manifests copied into the build's ``functions/tooling/_data/``."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return  # an editable install reads the checkout itself
        target = Path(self.build_lib) / TARGET
        shutil.rmtree(target, ignore_errors=True)  # no file left over from an earlier build
        for directory, pattern in CARRIED:
            sources = sorted((ROOT / directory).glob(pattern))
            if not sources:
                raise FileNotFoundError(
                    f"{ROOT / directory} holds no {pattern}: the wheel would lack what the CLI reads"
                )
            for source in sources:
                copied = target / source.relative_to(ROOT)
                self.mkpath(str(copied.parent))
                self.copy_file(str(source), str(copied))
