#!/usr/bin/env bash
# Set up everything the tests need, then run pytest with the given arguments.
#
#   scripts/test.sh [pytest args...]
#
# Runs scripts/setup.sh (Python env), scripts/install-tools.sh (crank + CRDs),
# scripts/install-control-plane.sh (etcd, kube-apiserver, kube-controller-manager
# for the real-API-server tests), scripts/build-packages.sh (the runtime image and both packages, into
# dist/, which the image and Crossplane tests use), then .venv/bin/python -m pytest "$@". pytest's exit
# code 5 (no tests collected) is turned into a failure.
set -euo pipefail

die() { echo "test.sh: error: $*" >&2; exit 1; }

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

bash scripts/setup.sh || die "scripts/setup.sh failed"
bash scripts/install-tools.sh || die "scripts/install-tools.sh failed"
bash scripts/install-control-plane.sh || die "scripts/install-control-plane.sh failed"
# shellcheck disable=SC1091
crank=$(. "${FUNCTION_DYNAMO_CACHE:-$HOME/.cache/function-dynamo}/tools.env" && echo "$CRANK")
if command -v mmdebstrap >/dev/null 2>&1; then
    bash scripts/build-packages.sh "$crank" dist || die "scripts/build-packages.sh failed"
    export FUNCTION_DYNAMO_PACKAGES="$repo_root/dist"
else
    echo "==> test: mmdebstrap missing: the runtime image and packages are not built (their tests skip)"
fi

echo "==> test: .venv/bin/python -m pytest $*"
rc=0
.venv/bin/python -m pytest "$@" || rc=$?
if [[ $rc -eq 5 ]]; then
    die "pytest collected no tests (exit code 5); counting that as a failure"
fi
exit "$rc"
