#!/usr/bin/env bash
# Builds the Configuration package (package/crossplane.yaml + xrds/ + compositions/) and the
# Function package meta (package/function/) with the Crossplane CLI into OUT_DIR.
# Usage: scripts/build-packages.sh CRANK OUT_DIR
set -euo pipefail
crank=${1:?usage: build-packages.sh CRANK OUT_DIR}
out=${2:?usage: build-packages.sh CRANK OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out" "$stage/configuration/xrds" "$stage/configuration/compositions" "$stage/function"
cp "$root/package/crossplane.yaml" "$stage/configuration/"
cp "$root"/xrds/*.yaml "$stage/configuration/xrds/"
cp "$root"/compositions/*.yaml "$stage/configuration/compositions/"
cp -r "$root/package/function/." "$stage/function/"
echo "building the Configuration package"
"$crank" xpkg build --package-root="$stage/configuration" --examples-root="$root/examples" \
  --package-file="$out/function-dynamo-configuration.xpkg"
echo "building the Function package (metadata and input CRDs; the runtime image is built separately)"
"$crank" xpkg build --package-root="$stage/function" --package-file="$out/function-dynamo.xpkg"
ls -l "$out"
