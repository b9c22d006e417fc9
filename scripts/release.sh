#!/usr/bin/env bash
# Builds a release: every file of it into one directory, with their checksums; optionally pushes its packages.
#
#   scripts/release.sh [VERSION]                   build into dist/VERSION/
#   scripts/release.sh --push REGISTRY [VERSION]   build, then push the three packages to REGISTRY
#   scripts/release.sh REGISTRY [VERSION]          the same as --push REGISTRY [VERSION] (the older form)
#
# VERSION   vX.Y.Z[-pre]; default v<pyproject.toml's version>. It must equal pyproject.toml's version and have
#           its section in CHANGELOG.md (## X.Y.Z): bump the one and write the other before releasing.
# REGISTRY  where --push puts the packages: a host (registry.example.com, 127.0.0.1:5000) or a host and path
#           (ghcr.io/acme). They are pushed as REGISTRY/function-dynamo/function-dynamo,
#           .../function-dynamo-configuration and .../function-dynamo-claims, each tagged VERSION.
#           Crossplane names a dependency after its repository path, and the Compositions reference the
#           Function as function-dynamo-function-dynamo: with a bare host the Configurations depend on
#           REGISTRY/function-dynamo/function-dynamo directly; otherwise (under a path, or not pushed) they
#           depend on ghcr.io/function-dynamo/function-dynamo and an ImageConfig makes Crossplane pull it from
#           where it is (printed after a push). Log in first as crossplane xpkg push expects (docker login).
#
# The directory (RELEASE_OUT, default dist/VERSION) then holds (docs/release.md):
#   function_dynamo-X.Y.Z-py3-none-any.whl, function_dynamo-X.Y.Z.tar.gz   the CLI's wheel and sdist
#   function-dynamo.xpkg                    the Function package, the runtime image embedded
#   function-dynamo-configuration.xpkg      the Configuration package (namespaced XRs)
#   function-dynamo-claims.xpkg             the claims Configuration package
#   function-dynamo-image.tar, image.json   the runtime image (docker save form; image-oci/ is its OCI layout)
#                                           and what it holds
#   function-dynamo-image.spdx.json         the runtime image's SBOM (SPDX)
#   SHA256SUMS                              the sha256 of each file above (sha256sum -c SHA256SUMS)
#   SHA256SUMS.sigstore.json                with COSIGN_KEY: cosign's signature over SHA256SUMS
#
# COSIGN_KEY     sign with this cosign key (docs/signing.md): SHA256SUMS, and with --push each package pushed
#                (by digest) and the runtime image's SBOM as an attestation on the Function package.
#                COSIGN_PASSWORD unlocks it, COSIGN_SIGN_FLAGS adds cosign flags.
# Needs what scripts/setup.sh and scripts/install-tools.sh install: the venv (or PYTHON, with the pinned
# setuptools), crank and mmdebstrap. RELEASE_PREVIOUS (default: the newest v* tag) is the previous release,
# whose stored objects the new XRDs must not strand (docs/upgrading.md).
set -euo pipefail

die() { echo "release.sh: error: $*" >&2; exit 1; }
usage="usage: scripts/release.sh [--push REGISTRY] [VERSION] (e.g. scripts/release.sh --push ghcr.io/acme v0.2.0)"

registry=""
args=()
while (($#)); do
    case $1 in
    --push) [[ $# -ge 2 && -n "$2" ]] || die "--push needs a REGISTRY; $usage"; registry=$2; shift 2 ;;
    --push=*) registry=${1#--push=}; [[ -n "$registry" ]] || die "--push needs a REGISTRY; $usage"; shift ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) die "unknown option $1; $usage" ;;
    *) args+=("$1"); shift ;;
    esac
done
version=""
case ${#args[@]} in
0) ;;
1) if [[ "${args[0]}" =~ ^v?[0-9][^/:]*$ ]]; then  # a version (a registry has a port, a path or a name)
       version=${args[0]}
   else
       [[ -z "$registry" ]] || die "both --push and a REGISTRY argument; $usage"
       registry=${args[0]}
   fi ;;
2) [[ -z "$registry" ]] || die "both --push and a REGISTRY argument; $usage"
   registry=${args[0]} version=${args[1]} ;;
*) die "$usage" ;;
esac
registry=${registry%/}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

project_version=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml | head -1)
[[ -n "$project_version" ]] || die "pyproject.toml has no version"
version=${version:-v$project_version}
[[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
    die "VERSION '$version' is not vMAJOR.MINOR.PATCH[-PRERELEASE]"
[[ "${version#v}" == "$project_version" ]] ||
    die "VERSION $version differs from pyproject.toml's version $project_version: bump pyproject.toml first"
# A heading of its own: "## 0.2.0", "## v0.2.0" or "## [0.2.0]", with a date or anything after a space.
escaped=${version#v}
escaped=${escaped//./\\.}
grep -Eq "^## \[?v?${escaped}\]?([[:space:]].*)?\$" CHANGELOG.md ||
    die "CHANGELOG.md has no section for $version: add '## ${version#v}' saying what changed for users, then release"
if [[ -n "$(git status --porcelain 2>/dev/null)" ]]; then
    echo "release.sh: warning: the checkout has uncommitted changes; they go into the release" >&2
fi

# What the build needs, checked before anything is built.
python=${PYTHON:-$root/.venv/bin/python}
[[ -x "$python" ]] || die "no Python at $python: run scripts/setup.sh (or set PYTHON)"
tools_env="${FUNCTION_DYNAMO_CACHE:-$HOME/.cache/function-dynamo}/tools.env"
# shellcheck disable=SC1090
crank=$(. "$tools_env" 2>/dev/null && echo "${CRANK:-}")
[[ -x "$crank" ]] || die "crank is not installed: run scripts/install-tools.sh"
command -v mmdebstrap >/dev/null ||
    die "mmdebstrap builds the runtime image and is missing: run scripts/install-tools.sh as root (Debian's mmdebstrap)"
if [[ -n "${COSIGN_KEY:-}" ]]; then
    # shellcheck disable=SC1090
    cosign=${COSIGN:-$(. "$tools_env" 2>/dev/null && echo "${COSIGN:-}")}
    [[ -x "$cosign" ]] || die "COSIGN_KEY is set but cosign is not installed: run scripts/install-tools.sh"
fi
out=${RELEASE_OUT:-dist/$version}

prefix="$registry/function-dynamo"
if [[ -n "$registry" && "$registry" != */* ]]; then
    function_package="$prefix/function-dynamo"
else
    function_package=""  # keeps ghcr.io/function-dynamo/function-dynamo; an ImageConfig redirects it
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
    "$python" -m functions.tooling.main xrds --check-against "$previous_dir" ||
        die "the XRDs would strand objects stored under $previous's (above); see docs/upgrading.md"
else
    echo "release.sh: note: no earlier release tag (v*) to check the XRDs against; RELEASE_PREVIOUS=REV names one" >&2
fi

echo "==> release: building $version into $out"
mkdir -p "$out"
rm -f "$out"/function_dynamo-*.whl "$out"/function_dynamo-*.tar.gz "$out"/SHA256SUMS "$out"/SHA256SUMS.sigstore.json
echo "==> release: the wheel and sdist"
PYTHON="$python" bash scripts/build-dist.sh "$out"
FUNCTION_PACKAGE="$function_package" FUNCTION_PACKAGE_VERSION="$version" \
    bash scripts/build-packages.sh "$crank" "$out"

files=(
    "function_dynamo-$project_version-py3-none-any.whl" "function_dynamo-$project_version.tar.gz"
    function-dynamo.xpkg function-dynamo-configuration.xpkg function-dynamo-claims.xpkg
    function-dynamo-image.tar image.json function-dynamo-image.spdx.json
)
for file in "${files[@]}"; do
    [[ -f "$out/$file" ]] || die "the build wrote no $out/$file"
done
(cd "$out" && sha256sum -- "${files[@]}" >SHA256SUMS)
echo "==> release: $out/SHA256SUMS"

# Signatures (docs/signing.md): with COSIGN_KEY (a cosign key file, or a KMS URI cosign takes; COSIGN_PASSWORD
# unlocks an encrypted key). cosign records each in the Rekor transparency log by default, which Crossplane's
# verifier requires; COSIGN_SIGN_FLAGS passes more flags (e.g. --tlog-upload=false where no log is reachable:
# cosign then verifies with --insecure-ignore-tlog, Crossplane does not).
if [[ -n "${COSIGN_KEY:-}" ]]; then
    # shellcheck disable=SC2206
    blob_flags=(--key "$COSIGN_KEY" --yes --use-signing-config=false ${COSIGN_SIGN_FLAGS:-})
    "$cosign" sign-blob "${blob_flags[@]}" --bundle "$out/SHA256SUMS.sigstore.json" "$out/SHA256SUMS" >/dev/null ||
        die "signing $out/SHA256SUMS failed"
    echo "==> release: signed: $out/SHA256SUMS.sigstore.json"
else
    echo "release.sh: note: not signed (set COSIGN_KEY to sign; docs/signing.md)" >&2
fi

if [[ -z "$registry" ]]; then
    echo "==> release: $version built in $out (check it with: cd $out && sha256sum -c SHA256SUMS)"
    exit 0
fi

for name in function-dynamo function-dynamo-configuration function-dynamo-claims; do
    ref="$prefix/$name:$version"
    echo "==> release: pushing $ref"
    "$crank" xpkg push -f "$out/$name.xpkg" "$ref" || die "pushing $ref failed"
done

# Each package pushed is signed by digest, and the runtime image's SBOM is attached to the Function package as a
# signed SPDX attestation.
sbom="$out/function-dynamo-image.spdx.json"
if [[ -n "${COSIGN_KEY:-}" ]]; then
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
