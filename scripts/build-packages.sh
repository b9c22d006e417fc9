#!/usr/bin/env bash
# Builds the packages into OUT_DIR with the Crossplane CLI: the runtime image (scripts/build-image.sh),
# the Function package carrying it (function-dynamo.xpkg, --embed-runtime-image-tarball) and the two
# Configuration packages: the default one (package/crossplane.yaml + xrds/ + compositions/ + examples/,
# namespaced XRs) and the claims one (package/claims/crossplane.yaml + package/claims/xrds/ +
# compositions/claims/ + examples/).
# Usage: scripts/build-packages.sh CRANK OUT_DIR
# FUNCTION_PACKAGE / FUNCTION_PACKAGE_VERSION (optional): the Function package the Configurations depend on.
set -euo pipefail
crank=${1:?usage: build-packages.sh CRANK OUT_DIR}
out=${2:?usage: build-packages.sh CRANK OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/configuration/xrds" "$stage/configuration/compositions" "$stage/function"
cp "$root/package/crossplane.yaml" "$stage/configuration/"
cp "$root"/xrds/*.yaml "$stage/configuration/xrds/"
cp "$root"/compositions/*.yaml "$stage/configuration/compositions/"
mkdir -p "$stage/claims/xrds" "$stage/claims/compositions"
cp "$root/package/claims/crossplane.yaml" "$stage/claims/"
cp "$root"/package/claims/xrds/*.yaml "$stage/claims/xrds/"
cp "$root"/compositions/claims/*.yaml "$stage/claims/compositions/"
cp -r "$root/package/function/." "$stage/function/"
# A release (scripts/release.sh) points both Configurations at the Function package it pushes.
if [[ -n "${FUNCTION_PACKAGE:-}${FUNCTION_PACKAGE_VERSION:-}" ]]; then
    for meta in "$stage/configuration/crossplane.yaml" "$stage/claims/crossplane.yaml"; do
        [[ -z "${FUNCTION_PACKAGE:-}" ]] ||
            sed -i "s#^\( *package: \)ghcr.io/function-dynamo/function-dynamo\$#\1$FUNCTION_PACKAGE#" "$meta"
        [[ -z "${FUNCTION_PACKAGE_VERSION:-}" ]] ||
            sed -i "s#^\( *version: \)\"v[^\"]*\"\(  \# the Function package.*\)\$#\1\"$FUNCTION_PACKAGE_VERSION\"\2#" "$meta"
        grep -q "package: ${FUNCTION_PACKAGE:-ghcr.io/function-dynamo/function-dynamo}\$" "$meta" ||
            { echo "build-packages: could not point $meta at ${FUNCTION_PACKAGE}" >&2; exit 1; }
    done
fi
echo "==> build-packages: the runtime image"
bash "$root/scripts/build-image.sh" "$out"
echo "==> build-packages: the Function package, with the runtime image embedded"
# (--examples-root defaults to ./examples; a directory that does not exist adds no examples layer:
# the DGD examples belong to the Configuration)
"$crank" xpkg build --package-root="$stage/function" --examples-root="$stage/no-examples" \
  --embed-runtime-image-tarball="$out/function-dynamo-image.tar" --package-file="$out/function-dynamo.xpkg"
echo "==> build-packages: the Configuration package"
"$crank" xpkg build --package-root="$stage/configuration" --examples-root="$root/examples" \
  --package-file="$out/function-dynamo-configuration.xpkg"
echo "==> build-packages: the claims Configuration package"
"$crank" xpkg build --package-root="$stage/claims" --examples-root="$root/examples" \
  --package-file="$out/function-dynamo-claims.xpkg"
ls -l "$out"
