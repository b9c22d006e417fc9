"""Write package/function/requirements.lock: the runtime dependency closure of function-dynamo, pinned with the
sha256 of the CPython 3.11 / linux x86_64 wheel of each, for the runtime image (and the test venv's constraints).

    .venv/bin/python scripts/image/lock.py

pip resolves the project's dependencies as a fresh install would (binary wheels only); review the diff.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "requirements.lock"
HEADER = """\
# The runtime dependencies of function-dynamo, pinned: the image installs exactly these wheels
# (pip --require-hashes; CPython 3.11, manylinux x86_64), and scripts/setup.sh uses the versions as
# constraints, so the tests run what ships. Regenerate with: .venv/bin/python scripts/image/lock.py
"""


def resolve() -> list[tuple[str, str, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
             "--only-binary=:all:", "--python-version=3.11", "--platform=manylinux2014_x86_64",
             "--platform=manylinux_2_28_x86_64", "--implementation=cp", "--target", tmp,
             "--report", str(report), str(REPO)],
            check=True,
        )  # fmt: skip
        install = json.loads(report.read_text())["install"]
    pins = []
    for item in install:
        name, version = item["metadata"]["name"], item["metadata"]["version"]
        if name == "function-dynamo":
            continue
        digest = item["download_info"]["archive_info"]["hash"].removeprefix("sha256=")
        pins.append((name.lower(), version, digest))
    return sorted(pins)


def main() -> None:
    lines = [f"{name}=={version} --hash=sha256:{digest}" for name, version, digest in resolve()]
    LOCK.write_text(HEADER + "\n".join(lines) + "\n")
    print(f"wrote {LOCK.relative_to(REPO)} ({len(lines)} packages)")


if __name__ == "__main__":
    main()
