#!/usr/bin/env bash
# Builds function-dynamo's runtime image without Docker: a Debian CPython root file system
# (mmdebstrap, no base image pulled), the pinned wheels and the project, one reproducible layer.
# Usage: scripts/build-image.sh OUT_DIR   (see scripts/image/build.py for what it writes)
set -euo pipefail
out=${1:?usage: build-image.sh OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
command -v mmdebstrap >/dev/null || {
    echo "build-image.sh: mmdebstrap is missing (Debian: apt-get install mmdebstrap; scripts/install-tools.sh installs it)" >&2
    exit 1
}
exec "$root/.venv/bin/python" "$root/scripts/image/build.py" "$out"
