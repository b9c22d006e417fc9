#!/usr/bin/env bash
# Builds, versions and pushes a release: the Function package (with its runtime image) and both
# Configuration packages, pointed at that Function, to any OCI registry.
#
#   scripts/release.sh REGISTRY [VERSION]
#
# REGISTRY  where the packages go: a host (registry.example.com, 127.0.0.1:5000) or a host and path
#           (ghcr.io/acme). They are pushed as REGISTRY/function-dynamo/function-dynamo,
#           .../function-dynamo-configuration and .../function-dynamo-claims, each tagged VERSION.
#           Crossplane names a dependency after its repository path, and the Compositions reference the
#           Function as function-dynamo-function-dynamo: with a bare host the Configurations depend on
#           REGISTRY/function-dynamo/function-dynamo directly; under a path they keep depending on
#           ghcr.io/function-dynamo/function-dynamo and the script prints the ImageConfig that makes
#           Crossplane pull it from REGISTRY.
# VERSION   vX.Y.Z[-pre]; default v<pyproject.toml's version>. It must equal pyproject.toml's version
#           (bump it there, and add the CHANGELOG.md section, before releasing).
#
# COSIGN_KEY     sign every package and attest the image's SBOM with this cosign key (docs/signing.md);
#                COSIGN_PASSWORD unlocks it, COSIGN_SIGN_FLAGS adds cosign flags.
# Log in to the registry first as crossplane xpkg push expects (docker login, or ~/.docker/config.json).
# Needs what scripts/test.sh installs: the venv, crank (scripts/install-tools.sh) and mmdebstrap.
# RELEASE_OUT (default dist/release-VERSION) keeps the built packages. RELEASE_PREVIOUS (default: the newest
# v* tag) is the previous release, whose stored objects the new XRDs must not strand (docs/upgrading.md).
set -euo pipefail

die() { echo "release.sh: error: $*" >&2; exit 1; }

registry=${1:-}
[[ -n "$registry" ]] || die "usage: scripts/release.sh REGISTRY [VERSION] (e.g. scripts/release.sh ghcr.io/acme v0.2.0)"
registry=${registry%/}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

project_version=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml | head -1)
[[ -n "$project_version" ]] || die "pyproject.toml has no version"
version=${2:-v$project_version}
[[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
    die "VERSION '$version' is not vMAJOR.MINOR.PATCH[-PRERELEASE]"
[[ "${version#v}" == "$project_version" ]] ||
    die "VERSION $version differs from pyproject.toml's version $project_version: bump pyproject.toml first"
grep -q "^## ${version#v}\$\|^## $version\$" CHANGELOG.md ||
    echo "release.sh: warning: CHANGELOG.md has no '## ${version#v}' section" >&2
if [[ -n "$(git status --porcelain 2>/dev/null)" ]]; then
    echo "release.sh: warning: the checkout has uncommitted changes; they go into the packages" >&2
fi

# shellcheck disable=SC1091
crank=$(. "${FUNCTION_DYNAMO_CACHE:-$HOME/.cache/function-dynamo}/tools.env" 2>/dev/null && echo "${CRANK:-}")
[[ -x "$crank" ]] || die "crank is not installed: run scripts/install-tools.sh"
out=${RELEASE_OUT:-dist/release-$version}

prefix="$registry/function-dynamo"
if [[ "$registry" == */* ]]; then
    function_package=""  # keeps ghcr.io/function-dynamo/function-dynamo; the ImageConfig below redirects it
else
    function_package="$prefix/function-dynamo"
fi

# The XRDs must not strand what the previous release stored (docs/upgrading.md): compare with its tag's.
previous=${RELEASE_PREVIOUS:-$(git describe --tags --abbrev=0 --match 'v*' HEAD 2>/dev/null || true)}
if [[ -n "$previous" && "$previous" != "$version" ]]; then
    echo "==> release: checking the XRDs against $previous's"
    previous_dir=$(mktemp -d)
    trap 'rm -rf "$previous_dir"' EXIT
    git archive "$previous" xrds package/claims/xrds 2>/dev/null | tar -x -C "$previous_dir" ||
        git archive "$previous" xrds | tar -x -C "$previous_dir" ||
        die "cannot read the XRDs of $previous (RELEASE_PREVIOUS names the previous release's git revision)"
    .venv/bin/function-dynamo xrds --check-against "$previous_dir" ||
        die "the XRDs would strand objects stored under $previous's (above); see docs/upgrading.md"
else
    echo "release.sh: note: no earlier release tag (v*) to check the XRDs against; RELEASE_PREVIOUS=REV names one" >&2
fi

echo "==> release: building $version into $out"
FUNCTION_PACKAGE="$function_package" FUNCTION_PACKAGE_VERSION="$version" \
    bash scripts/build-packages.sh "$crank" "$out"

for name in function-dynamo function-dynamo-configuration function-dynamo-claims; do
    ref="$prefix/$name:$version"
    echo "==> release: pushing $ref"
    "$crank" xpkg push -f "$out/$name.xpkg" "$ref" || die "pushing $ref failed"
done

# Signatures (docs/signing.md): with COSIGN_KEY (a cosign key file, or a KMS URI cosign takes; COSIGN_PASSWORD
# unlocks an encrypted key), each package pushed is signed by digest, and the runtime image's SBOM is attached to
# the Function package as a signed SPDX attestation. cosign uploads both to the Rekor transparency log by
# default, which Crossplane's verifier requires; COSIGN_SIGN_FLAGS passes more flags (e.g. --tlog-upload=false
# where no log is reachable: cosign then verifies with --insecure-ignore-tlog, Crossplane does not).
sbom="$out/function-dynamo-image.spdx.json"
[[ -f "$sbom" ]] || die "the build wrote no SBOM ($sbom)"
if [[ -n "${COSIGN_KEY:-}" ]]; then
    # shellcheck disable=SC1091
    cosign=${COSIGN:-$(. "${FUNCTION_DYNAMO_CACHE:-$HOME/.cache/function-dynamo}/tools.env" 2>/dev/null && echo "${COSIGN:-}")}
    [[ -x "$cosign" ]] || die "COSIGN_KEY is set but cosign is not installed: run scripts/install-tools.sh"
    # Crossplane's verifier reads signatures stored beside the image (the .sig and .att tags), not bundles
    # stored as OCI referrers, and the signing config is fetched from the network: both off.
    # shellcheck disable=SC2206
    sign_flags=(--key "$COSIGN_KEY" --yes --new-bundle-format=false --use-signing-config=false ${COSIGN_SIGN_FLAGS:-})
    for name in function-dynamo function-dynamo-configuration function-dynamo-claims; do
        ref=$("$cosign" triangulate --type digest "$prefix/$name:$version" 2>/dev/null) ||
            die "cannot resolve the digest of $prefix/$name:$version"
        echo "==> release: signing $ref"
        "$cosign" sign "${sign_flags[@]}" "$ref" || die "signing $ref failed"
        if [[ "$name" == function-dynamo ]]; then
            echo "==> release: attesting the runtime image's SBOM (SPDX) on $ref"
            "$cosign" attest "${sign_flags[@]}" --type spdxjson --predicate "$sbom" "$ref" ||
                die "attesting the SBOM on $ref failed"
        fi
    done
    echo "==> release: signed; verify with: cosign verify --key <public key> $prefix/function-dynamo:$version"
else
    echo "release.sh: note: not signed (set COSIGN_KEY to sign; docs/signing.md)" >&2
fi
echo "==> release: the runtime image's SBOM: $sbom"

echo "==> release: $version pushed. Install it with:"
if [[ -z "$function_package" ]]; then
    cat <<EOF
apiVersion: pkg.crossplane.io/v1beta1
kind: ImageConfig
metadata:
  name: function-dynamo
spec:
  matchImages:
    - type: Prefix
      prefix: ghcr.io/function-dynamo/
  rewriteImage:
    prefix: $prefix/
---
EOF
fi
cat <<EOF
apiVersion: pkg.crossplane.io/v1
kind: Configuration
metadata:
  name: function-dynamo-configuration
spec:
  package: $prefix/function-dynamo-configuration:$version
EOF
