#!/usr/bin/env bash
# Install the non-Python tools the tests use, into a cache outside the repo:
#
#   ${FUNCTION_DYNAMO_CACHE:-$HOME/.cache/function-dynamo}/
#     bin/crank-<CRANK_VERSION>        the Crossplane CLI, built from its Go module
#     bin/crossplane-<CROSSPLANE_VERSION>-loopback   Crossplane core and RBAC manager, listeners patched to
#                                      127.0.0.1 or off (.patches beside it says which)
#     crds/crossplane-<CROSSPLANE_VERSION>/          Crossplane's own CRDs (`crossplane core init` installs them)
#     bin/oci-registry-<source hash>   tools/oci-registry: a loopback OCI registry the packages are pushed to
#     bin/helm-<HELM_VERSION>          Helm, built from its Go module (renders Crossplane's chart)
#     bin/cosign-<COSIGN_VERSION>      cosign, built from its Go module (signs a release)
#     crds/crossplane-<CROSSPLANE_VERSION>-rbac/rbac.yaml  the ServiceAccounts, ClusterRoles and bindings of
#                                      Crossplane's Helm chart, as `helm install` would create them
#     crds/crossplane-<CROSSPLANE_VERSION>-chart/    the chart itself (the quickstart test installs it)
#     crds/<name>/*.yaml               CRDs of the APIs we render into (copies)
#     bin/dynamo-operator-<commit>-<hash>  the upstream Dynamo operator's manager, built from ../shared/upstream/operator
#                                      (cold: ~3 minutes on 2 cores), and crds/dynamo-operator-<commit>-<hash>/ its Helm
#                                      chart and CRDs: tests/harness/operator_stack.py runs it beside the package
#     tools.env                        CRANK=..., CROSSPLANE=..., CROSSPLANE_CRDS=..., CROSSPLANE_RBAC=...,
#                                      CROSSPLANE_CHART=..., CRDS_DIR=..., DYNAMO_OPERATOR=..., DYNAMO_OPERATOR_DIR=...
#                                      (KEY=VALUE)
#
# Idempotent: a crank binary that is present and reports the pinned version is
# not rebuilt; a CRD directory whose .source stamp matches the pinned module is
# not re-copied. Needs: go, python3 (and apt-get, as root, when mmdebstrap or runc is missing).
set -euo pipefail

# --- pinned versions (one constant each) -------------------------------------

# Crossplane core (and its RBAC manager, CRDs and chart RBAC): the version the end-to-end tests run. Its
# go.mod replaces github.com/crossplane/crossplane/apis/v2 with ./apis, a nested module the module zip leaves
# out, so it is built in a copy of the module directory without that replace, against the served apis/v2 module
# of the same version.
CROSSPLANE_VERSION=v2.4.0
CROSSPLANE_MODULE=github.com/crossplane/crossplane/v2
CROSSPLANE_APIS_MODULE=github.com/crossplane/crossplane/apis/v2
# The Crossplane CLI (crank: xpkg build and push, render). From v2.3 on the module has no cmd/crank, so the CLI
# stays the newest v2.2 the Go module proxy serves: v2.2.1 (it refuses v2.2.2 to v2.2.4, and the @v/list that
# `go install` needs, so the module is downloaded and built from its directory).
CRANK_VERSION=v2.2.1

# Helm renders the RBAC of Crossplane's own chart (cluster/charts/crossplane in
# the module above), so the tests run Crossplane under the roles a Helm install gives it.
HELM_MODULE=helm.sh/helm/v3
HELM_VERSION=v3.22.0
# cosign signs a release (scripts/release.sh with COSIGN_KEY): the version Crossplane v2.4.0 itself verifies
# signatures with (its go.mod), so what it signs is what Crossplane's verifier reads.
COSIGN_MODULE=github.com/sigstore/cosign/v3
COSIGN_VERSION=v3.0.6
CROSSPLANE_NAMESPACE=crossplane-system

# Grove. This version is not in the Go checksum database, so it is fetched with
# GONOSUMDB for github.com/ai-dynamo/grove and its hash is checked against
# GROVE_SUM instead.
GROVE_MODULE=github.com/ai-dynamo/grove/operator/api
GROVE_VERSION=v0.1.0-alpha.12-rc1
GROVE_SUM="h1:rhi1HzLU68RO573k0bQHkTc+o293Ij2sVYmNPoc1d2s="

LWS_MODULE=sigs.k8s.io/lws
LWS_VERSION=v0.9.0

ISTIO_MODULE=istio.io/api
ISTIO_VERSION=v1.23.1

GAIE_MODULE=sigs.k8s.io/gateway-api-inference-extension
GAIE_VERSION=v1.2.0

# Volcano (its CRDs; volcano.sh/apis ships none): the newest the module proxy serves.
VOLCANO_MODULE=volcano.sh/volcano
VOLCANO_VERSION=v1.10.0

# The providers a DynamoPlatform composes for (their CRDs only; no provider runs in the tests). The
# namespaced (.m.) families of Crossplane v2. GCP: the module proxy refuses every
# github.com/upbound/provider-gcp/v2 and /v3 version (403); v1.14.0 of the old path is served, with
# the cluster-scoped container.gcp.upbound.io kinds only.
PROVIDER_AWS_MODULE=github.com/upbound/provider-aws/v2
PROVIDER_AWS_VERSION=v2.5.0
PROVIDER_AZURE_MODULE=github.com/upbound/provider-azure/v2
PROVIDER_AZURE_VERSION=v2.6.0
PROVIDER_GCP_MODULE=github.com/upbound/provider-gcp
PROVIDER_GCP_VERSION=v1.14.0
PROVIDER_HELM_MODULE=github.com/crossplane-contrib/provider-helm
PROVIDER_HELM_VERSION=v1.3.0
PROVIDER_KUBERNETES_MODULE=github.com/crossplane-contrib/provider-kubernetes
PROVIDER_KUBERNETES_VERSION=v1.2.1

# -----------------------------------------------------------------------------

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${FUNCTION_DYNAMO_CACHE:-$HOME/.cache/function-dynamo}"
BIN_DIR="$CACHE/bin"
CRDS_DIR="$CACHE/crds"
CRANK="$BIN_DIR/crank-$CRANK_VERSION"
CROSSPLANE="$BIN_DIR/crossplane-$CROSSPLANE_VERSION-loopback"
CROSSPLANE_CRDS="$CRDS_DIR/crossplane-$CROSSPLANE_VERSION"
HELM="$BIN_DIR/helm-$HELM_VERSION"
COSIGN="$BIN_DIR/cosign-$COSIGN_VERSION"
CROSSPLANE_RBAC="$CRDS_DIR/crossplane-$CROSSPLANE_VERSION-rbac/rbac.yaml"
CROSSPLANE_CHART="$CRDS_DIR/crossplane-$CROSSPLANE_VERSION-chart"
CROSSPLANE_RENDER_PROTO="$CRDS_DIR/crossplane-$CROSSPLANE_VERSION-proto/render/v1alpha1/render.proto"

die() { echo "install-tools.sh: error: $*" >&2; exit 1; }
step() { echo "==> install-tools: $*"; }

command -v go >/dev/null 2>&1 || die "go not found on PATH (Go >= 1.25, as required by crossplane $CROSSPLANE_VERSION's go.mod, builds Crossplane)"
command -v python3 >/dev/null 2>&1 || die "python3 not found on PATH"

mkdir -p "$BIN_DIR" "$CRDS_DIR"
work="$(mktemp -d)"
# Half-written outputs (staging dirs, temp binaries) to remove if we stop early.
partial=()
cleanup() { rm -rf "$work" ${partial[@]+"${partial[@]}"}; }
trap cleanup EXIT
trap "exit 130" INT
trap "exit 143" TERM
# Run go outside any module or workspace so a go.mod nearby cannot interfere.
export GOWORK=off

start=$SECONDS
step "cache: $CACHE ($(go version))"

# Debian's mmdebstrap (the runtime image's root file system, scripts/build-image.sh) and runc (runs the
# image as a container in the tests, no daemon), from the distribution's archive when missing.
debian_tools=()
command -v mmdebstrap >/dev/null 2>&1 || debian_tools+=(mmdebstrap)
command -v runc >/dev/null 2>&1 || debian_tools+=(runc)
if [[ ${#debian_tools[@]} -gt 0 ]] && { [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; }; then
    # Without them the image is not built and its tests skip; CI must build and run it.
    [[ "${CI:-}" != "true" ]] || die "${debian_tools[*]} missing and not installable here (needs root and apt-get)"
    step "warning: ${debian_tools[*]} missing (as root: apt-get install ${debian_tools[*]}); the image tests will skip"
elif [[ ${#debian_tools[@]} -gt 0 ]]; then
    step "apt-get install ${debian_tools[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${debian_tools[@]}" >"$work/apt.log" 2>&1 \
        || { apt-get update -q >>"$work/apt.log" 2>&1 \
             && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${debian_tools[@]}" >>"$work/apt.log" 2>&1; } \
        || die "apt-get install ${debian_tools[*]} failed: $(tail -5 "$work/apt.log")"
fi

# json_field JSON FIELD: print one top-level string field of a JSON object.
json_field() {
    python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2]) or "")' "$1" "$2"
}

# mod_download MODULE@VERSION: download into the Go module cache and set
# MOD_DIR (the read-only source dir) and MOD_SUM (its h1: hash).
mod_download() {
    local json
    if ! json="$(cd "$work" && go mod download -json "$1" 2>"$work/stderr")"; then
        local err=""
        [[ -n "$json" ]] && err="$(json_field "$json" Error 2>/dev/null || true)"
        [[ -n "$err" ]] || err="$(cat "$work/stderr")"
        die "go mod download $1 failed: $err"
    fi
    MOD_DIR="$(json_field "$json" Dir)"
    MOD_SUM="$(json_field "$json" Sum)"
    [[ -d "$MOD_DIR" ]] || die "go mod download $1 reported no usable Dir (got '$MOD_DIR')"
}

# Where Crossplane keeps its version: internal/version up to v2.2, crossplane-runtime's pkg/version from v2.3 on
# (core refuses every package, "invalid semantic version", without it). -X on a symbol a binary lacks is a no-op.
CROSSPLANE_RUNTIME_VERSION_VAR=github.com/crossplane/crossplane-runtime/v2/pkg/version.version

# crossplane_build DIR PKG DEST VERSION: build a Crossplane command (version stamped) from DIR into DEST.
#   go prints one "go: downloading" line per dependency (~230 on a cold module
#   cache): its output goes to a log, shown only on failure.
crossplane_build() {
    local dir="$1" pkg="$2" dest="$3" version="$4"
    local tmp_bin="$BIN_DIR/.$(basename "$dest").tmp.$$"
    partial+=("$tmp_bin")
    build_log="$work/go-build-$(basename "$pkg").log"
    if ! (cd "$dir" && CGO_ENABLED=0 go build -trimpath \
            -ldflags "-X=$CROSSPLANE_MODULE/internal/version.version=$version -X=$CROSSPLANE_RUNTIME_VERSION_VAR=$version" \
            -o "$tmp_bin" "$pkg") >"$build_log" 2>&1; then
        rm -f "$tmp_bin"
        grep -v '^go: downloading ' "$build_log" | tail -n 60 >&2 || true
        die "building $pkg of crossplane $version failed (go output above)"
    fi
    mv -f "$tmp_bin" "$dest"
}

# --- Crossplane CLI -----------------------------------------------------------

# What the crank build changes; a binary stamped with other patches is rebuilt. `xpkg build` decodes every
# object into its own (v2.2.1) API types and encodes them again, so an XRD version's `subresources` (the scale
# subresource, a field from v2.3 on) would be dropped from the package: the patch adds the field to v2.2.1's XRD
# version types (both API versions), as v2.3 declares it.
CRANK_PATCHES="xrd versions keep subresources"

crank_ok() {
    local out  # read whole, then searched: "cmd | grep -q" under pipefail fails when cmd gets SIGPIPE
    [[ -x "$CRANK" ]] && out="$("$CRANK" version --client 2>/dev/null)" && [[ "$out" == *"$CRANK_VERSION"* ]] \
        && [[ -f "$CRANK.patches" && "$(cat "$CRANK.patches")" == "$CRANK_PATCHES" ]]
}

if crank_ok; then
    step "crank $CRANK_VERSION: present, skipping build: $CRANK"
else
    step "crank $CRANK_VERSION: downloading module $CROSSPLANE_MODULE@$CRANK_VERSION"
    mod_download "$CROSSPLANE_MODULE@$CRANK_VERSION"
    src="$work/crank"
    cp -r "$MOD_DIR" "$src"
    chmod -R u+w "$src"
    for types in "$src"/apis/apiextensions/v1/xrd_types.go "$src"/apis/apiextensions/v2/xrd_types.go; do
        sed -i 's|^\(\s*\)AdditionalPrinterColumns \[\]extv1\.CustomResourceColumnDefinition `json:"additionalPrinterColumns,omitempty"`$|&\n\1Subresources *extv1.CustomResourceSubresources `json:"subresources,omitempty"`|' "$types"
        [[ "$(grep -c 'Subresources \*extv1.CustomResourceSubresources' "$types")" == 1 ]] \
            || die "$types: the subresources patch did not apply (did the version change?)"
    done
    step "crank $CRANK_VERSION: building ./cmd/crank (takes ~2-5 minutes on 2 cores)"
    t0=$SECONDS
    crossplane_build "$src" ./cmd/crank "$CRANK" "$CRANK_VERSION"
    printf '%s\n' "$CRANK_PATCHES" >"$CRANK.patches"
    crank_ok || die "built $CRANK but '$CRANK version --client' does not report $CRANK_VERSION"
    step "crank $CRANK_VERSION: built in $((SECONDS - t0))s ($(grep -c '^go: downloading ' "$build_log" || true) modules downloaded): $CRANK"
fi

# --- Crossplane core -------------------------------------------------------------

# What the loopback build changes; a binary stamped with other patches is rebuilt.
CROSSPLANE_PATCHES="core metrics+health on 127.0.0.1; rbac manager metrics off; apis/v2 from the module proxy; version in crossplane-runtime"
if [[ -x "$CROSSPLANE" ]] && "$CROSSPLANE" --help >/dev/null 2>&1 && [[ -f "$CROSSPLANE_CRDS/.source" ]] \
    && [[ -f "$CROSSPLANE.patches" && "$(cat "$CROSSPLANE.patches")" == "$CROSSPLANE_PATCHES" ]]; then
    step "crossplane core $CROSSPLANE_VERSION: present, skipping build: $CROSSPLANE"
else
    mod_download "$CROSSPLANE_MODULE@$CROSSPLANE_VERSION"
    src="$work/crossplane"
    cp -r "$MOD_DIR" "$src"
    chmod -R u+w "$src"
    # The nested ./apis module is not in the module zip: use the served one of the same version.
    sed -i "\#^replace $CROSSPLANE_APIS_MODULE => ./apis\$#d" "$src/go.mod"
    grep -q "^replace $CROSSPLANE_APIS_MODULE" "$src/go.mod" && die "$src/go.mod: could not drop the ./apis replace"
    (cd "$src" && go get "$CROSSPLANE_APIS_MODULE@$CROSSPLANE_VERSION") >"$work/go-get-apis.log" 2>&1 \
        || { cat "$work/go-get-apis.log" >&2; die "go get $CROSSPLANE_APIS_MODULE@$CROSSPLANE_VERSION failed"; }
    # core.go binds the metrics and health-probe listeners to ":<port>", every interface: loopback only.
    core="$src/cmd/crossplane/core/core.go"
    n="$(grep -c 'fmt.Sprintf(":%d"' "$core" || true)"
    [[ "$n" == 2 ]] || die "$core: expected 2 listeners bound to \":%d\", found $n (did the version change?)"
    sed -i 's/fmt.Sprintf(":%d"/fmt.Sprintf("127.0.0.1:%d"/' "$core"
    # The RBAC manager leaves controller-runtime's metrics default, ":8080" on every interface: off.
    rbac="$src/cmd/crossplane/rbac/rbac.go"
    grep -q '^		PprofBindAddress: c.Profile,$' "$rbac" || die "$rbac: no manager options to patch (did the version change?)"
    sed -i 's|^		PprofBindAddress: c.Profile,$|&\n		Metrics:          metricsserver.Options{BindAddress: "0"},|' "$rbac"
    sed -i 's|^	"sigs.k8s.io/controller-runtime/pkg/cache"$|&\n	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"|' "$rbac"
    step "crossplane core $CROSSPLANE_VERSION: building ./cmd/crossplane, listeners on 127.0.0.1 (~3-5 minutes on 2 cores)"
    t0=$SECONDS
    crossplane_build "$src" ./cmd/crossplane "$CROSSPLANE" "$CROSSPLANE_VERSION"
    stage="$CRDS_DIR/.crossplane.tmp.$$"
    partial+=("$stage")
    rm -rf "$stage" && mkdir -p "$stage"
    install -m 0644 "$MOD_DIR"/cluster/crds/*.yaml "$stage/"
    printf '%s\n' "$CROSSPLANE_MODULE@$CROSSPLANE_VERSION" >"$stage/.source"
    rm -rf "$CROSSPLANE_CRDS" && mv "$stage" "$CROSSPLANE_CRDS"
    printf '%s\n' "$CROSSPLANE_PATCHES" >"$CROSSPLANE.patches"
    step "crossplane core $CROSSPLANE_VERSION: built in $((SECONDS - t0))s: $CROSSPLANE"
fi

# The render protocol of `crossplane internal render` (tests/fixtures/core_render.py generates its Python messages).
if [[ -f "$CROSSPLANE_RENDER_PROTO" ]]; then
    step "crossplane $CROSSPLANE_VERSION render.proto: present: $CROSSPLANE_RENDER_PROTO"
else
    mod_download "$CROSSPLANE_MODULE@$CROSSPLANE_VERSION"
    [[ -f "$MOD_DIR/proto/render/v1alpha1/render.proto" ]] || die "crossplane $CROSSPLANE_VERSION has no proto/render/v1alpha1/render.proto"
    install -D -m 0644 "$MOD_DIR/proto/render/v1alpha1/render.proto" "$CROSSPLANE_RENDER_PROTO"
    step "crossplane $CROSSPLANE_VERSION render.proto: copied to $CROSSPLANE_RENDER_PROTO"
fi

# --- the loopback OCI registry ----------------------------------------------------

registry_hash="$(cat "$repo_root/tools/oci-registry/go.mod" "$repo_root/tools/oci-registry/go.sum" \
    "$repo_root/tools/oci-registry/main.go" | sha256sum | cut -c1-12)"
OCI_REGISTRY="$BIN_DIR/oci-registry-$registry_hash"
if [[ -x "$OCI_REGISTRY" ]]; then
    step "oci-registry: present: $OCI_REGISTRY"
else
    step "oci-registry: building tools/oci-registry"
    tmp_bin="$BIN_DIR/.oci-registry.tmp.$$"
    partial+=("$tmp_bin")
    (cd "$repo_root/tools/oci-registry" && CGO_ENABLED=0 go build -trimpath -o "$tmp_bin" .) >"$work/registry.log" 2>&1 \
        || { grep -v '^go: downloading ' "$work/registry.log" | tail -n 40 >&2; die "building tools/oci-registry failed"; }
    mv -f "$tmp_bin" "$OCI_REGISTRY"
    step "oci-registry: built: $OCI_REGISTRY"
fi

# --- Helm and the RBAC of Crossplane's chart ----------------------------------------

if [[ -x "$HELM" ]] && [[ "$("$HELM" version --short 2>/dev/null)" == *"$HELM_VERSION"* ]]; then
    step "helm $HELM_VERSION: present: $HELM"
else
    step "helm $HELM_VERSION: building $HELM_MODULE/cmd/helm (~3 minutes on a cold module cache)"
    t0=$SECONDS
    gobin="$work/helm-bin"
    (cd "$work" && CGO_ENABLED=0 GOBIN="$gobin" go install -trimpath \
        -ldflags "-X=$HELM_MODULE/internal/version.version=$HELM_VERSION" \
        "$HELM_MODULE/cmd/helm@$HELM_VERSION") >"$work/helm.log" 2>&1 \
        || { grep -v '^go: downloading ' "$work/helm.log" | tail -n 40 >&2; die "building helm $HELM_VERSION failed"; }
    mv -f "$gobin/helm" "$HELM"
    [[ "$("$HELM" version --short)" == *"$HELM_VERSION"* ]] || die "built $HELM but it does not report $HELM_VERSION"
    step "helm $HELM_VERSION: built in $((SECONDS - t0))s: $HELM"
fi

# --- cosign ---------------------------------------------------------------------

if [[ -x "$COSIGN" ]] && "$COSIGN" version 2>/dev/null | grep -q "GitVersion: *$COSIGN_VERSION\$"; then
    step "cosign $COSIGN_VERSION: present: $COSIGN"
else
    step "cosign $COSIGN_VERSION: building $COSIGN_MODULE/cmd/cosign (~4 minutes on 2 cores)"
    t0=$SECONDS
    gobin="$work/cosign-bin"
    (cd "$work" && CGO_ENABLED=0 GOBIN="$gobin" go install -trimpath "$COSIGN_MODULE/cmd/cosign@$COSIGN_VERSION") \
        >"$work/cosign.log" 2>&1 \
        || { grep -v '^go: downloading ' "$work/cosign.log" | tail -n 40 >&2; die "building cosign $COSIGN_VERSION failed"; }
    mv -f "$gobin/cosign" "$COSIGN"
    "$COSIGN" version 2>/dev/null | grep -q "GitVersion: *$COSIGN_VERSION\$" \
        || die "built $COSIGN but 'cosign version' does not report $COSIGN_VERSION"
    step "cosign $COSIGN_VERSION: built in $((SECONDS - t0))s: $COSIGN"
fi

rbac_source="$CROSSPLANE_MODULE@$CROSSPLANE_VERSION helm@$HELM_VERSION namespace=$CROSSPLANE_NAMESPACE"
rbac_stamp="$(dirname "$CROSSPLANE_RBAC")/.source"
if [[ -f "$CROSSPLANE_RBAC" && -f "$rbac_stamp" && "$(cat "$rbac_stamp")" == "$rbac_source" ]]; then
    step "crossplane chart RBAC: up to date: $CROSSPLANE_RBAC"
else
    mod_download "$CROSSPLANE_MODULE@$CROSSPLANE_VERSION"
    stage="$CRDS_DIR/.crossplane-rbac.tmp.$$"
    partial+=("$stage")
    rm -rf "$stage" && mkdir -p "$stage"
    templates=()
    for t in serviceaccount clusterrole clusterrolebinding rbac-manager-serviceaccount rbac-manager-clusterrole \
        rbac-manager-clusterrolebinding rbac-manager-managed-clusterroles rbac-manager-allowed-provider-permissions; do
        [[ -f "$MOD_DIR/cluster/charts/crossplane/templates/$t.yaml" ]] \
            || die "crossplane $CROSSPLANE_VERSION's chart has no templates/$t.yaml (did the version change?)"
        templates+=(--show-only "templates/$t.yaml")
    done
    "$HELM" template crossplane "$MOD_DIR/cluster/charts/crossplane" --namespace "$CROSSPLANE_NAMESPACE" \
        "${templates[@]}" >"$stage/rbac.yaml" 2>"$work/helm-template.log" \
        || { cat "$work/helm-template.log" >&2; die "helm template of crossplane's chart failed"; }
    printf '%s\n' "$rbac_source" >"$stage/.source"
    rm -rf "$(dirname "$CROSSPLANE_RBAC")" && mv "$stage" "$(dirname "$CROSSPLANE_RBAC")"
    step "crossplane chart RBAC: rendered $(grep -c '^kind: ' "$CROSSPLANE_RBAC") objects: $CROSSPLANE_RBAC"
fi

# Crossplane's chart itself: tests/test_quickstart.py packages it with its release version and serves it
# as a Helm repository on loopback, so the README's `helm install` runs as written.
if [[ -f "$CROSSPLANE_CHART/Chart.yaml" && -f "$CROSSPLANE_CHART/.source" \
    && "$(cat "$CROSSPLANE_CHART/.source")" == "$CROSSPLANE_MODULE@$CROSSPLANE_VERSION" ]]; then
    step "crossplane chart: present: $CROSSPLANE_CHART"
else
    mod_download "$CROSSPLANE_MODULE@$CROSSPLANE_VERSION"
    [[ -f "$MOD_DIR/cluster/charts/crossplane/Chart.yaml" ]] || die "crossplane $CROSSPLANE_VERSION has no cluster/charts/crossplane"
    stage="$CRDS_DIR/.crossplane-chart.tmp.$$"
    partial+=("$stage")
    rm -rf "$stage" && cp -r "$MOD_DIR/cluster/charts/crossplane" "$stage" && chmod -R u+w "$stage"
    printf '%s\n' "$CROSSPLANE_MODULE@$CROSSPLANE_VERSION" >"$stage/.source"
    rm -rf "$CROSSPLANE_CHART" && mv "$stage" "$CROSSPLANE_CHART"
    step "crossplane chart: copied to $CROSSPLANE_CHART"
fi

# --- CRDs -----------------------------------------------------------------------

# install_crds NAME MODULE VERSION EXPECTED_SUM GLOB...
#   Copy the files matching GLOB (relative to the module dir) into
#   $CRDS_DIR/NAME/. EXPECTED_SUM may be empty (then the checksum database,
#   which go consults itself, vouches for the module).
install_crds() {
    local name="$1" module="$2" version="$3" want_sum="$4"
    shift 4
    local dest="$CRDS_DIR/$name"
    local source="$module@$version${want_sum:+ $want_sum}"
    if [[ -f "$dest/.source" && "$(cat "$dest/.source")" == "$source" ]]; then
        step "crds/$name: up to date ($module@$version): $dest"
        return
    fi
    step "crds/$name: downloading $module@$version"
    mod_download "$module@$version"
    if [[ -n "$want_sum" && "$MOD_SUM" != "$want_sum" ]]; then
        die "checksum mismatch for $module@$version: got '$MOD_SUM', pinned '$want_sum' -- refusing to use it"
    fi
    local stage="$CRDS_DIR/.$name.tmp.$$"
    partial+=("$stage")
    rm -rf "$stage"
    mkdir -p "$stage"
    local pattern f n=0
    for pattern in "$@"; do
        for f in "$MOD_DIR"/$pattern; do
            [[ -f "$f" ]] || die "$module@$version: no file matches '$pattern' in $MOD_DIR"
            grep -q '^kind: CustomResourceDefinition' "$f" \
                || die "$module@$version: ${f#"$MOD_DIR"/} is not a CustomResourceDefinition"
            install -m 0644 "$f" "$stage/"
            echo "      ${f#"$MOD_DIR"/}"
            n=$((n + 1))
        done
    done
    printf '%s\n' "$source" >"$stage/.source"
    rm -rf "$dest"
    mv "$stage" "$dest"
    step "crds/$name: copied $n file(s) to $dest"
}

GONOSUMDB="${GONOSUMDB:+$GONOSUMDB,}github.com/ai-dynamo/grove" \
    install_crds grove "$GROVE_MODULE" "$GROVE_VERSION" "$GROVE_SUM" 'core/v1alpha1/crds/*.yaml'
install_crds lws "$LWS_MODULE" "$LWS_VERSION" "" 'config/crd/bases/*.yaml'
install_crds istio "$ISTIO_MODULE" "$ISTIO_VERSION" "" 'kubernetes/customresourcedefinitions.gen.yaml'
install_crds gaie "$GAIE_MODULE" "$GAIE_VERSION" "" 'config/crd/bases/*.yaml'
# Volcano's scheduling API: the upstream operator renders LeaderWorkerSets only where it detects both the LWS and
# the Volcano API groups (tests/harness/operator_stack.py installs these beside it; the package is told by its config).
install_crds volcano "$VOLCANO_MODULE" "$VOLCANO_VERSION" "" \
    'config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml' 'config/crd/volcano/bases/scheduling.volcano.sh_queues.yaml'
install_crds provider-aws "$PROVIDER_AWS_MODULE" "$PROVIDER_AWS_VERSION" "" \
    'package/crds/eks.aws.m.upbound.io_clusters.yaml' 'package/crds/eks.aws.m.upbound.io_nodegroups.yaml' \
    'package/crds/eks.aws.m.upbound.io_clusterauths.yaml' 'package/crds/iam.aws.m.upbound.io_roles.yaml' \
    'package/crds/iam.aws.m.upbound.io_rolepolicyattachments.yaml'
install_crds provider-azure "$PROVIDER_AZURE_MODULE" "$PROVIDER_AZURE_VERSION" "" \
    'package/crds/containerservice.azure.m.upbound.io_kubernetesclusters.yaml' \
    'package/crds/containerservice.azure.m.upbound.io_kubernetesclusternodepools.yaml' \
    'package/crds/azure.m.upbound.io_resourcegroups.yaml'
install_crds provider-gcp "$PROVIDER_GCP_MODULE" "$PROVIDER_GCP_VERSION" "" \
    'package/crds/container.gcp.upbound.io_clusters.yaml' 'package/crds/container.gcp.upbound.io_nodepools.yaml'
install_crds provider-helm "$PROVIDER_HELM_MODULE" "$PROVIDER_HELM_VERSION" "" \
    'package/crds/helm.m.crossplane.io_releases.yaml' 'package/crds/helm.m.crossplane.io_providerconfigs.yaml' \
    'package/crds/helm.m.crossplane.io_clusterproviderconfigs.yaml'
install_crds provider-kubernetes "$PROVIDER_KUBERNETES_MODULE" "$PROVIDER_KUBERNETES_VERSION" "" \
    'package/crds/kubernetes.m.crossplane.io_objects.yaml' \
    'package/crds/kubernetes.m.crossplane.io_providerconfigs.yaml' \
    'package/crds/kubernetes.m.crossplane.io_clusterproviderconfigs.yaml'

# --- the upstream Dynamo operator (built beside ours, to compare with) ----------------

# Its source and Helm chart at the commit our CRDs and golden scenarios come from, and the snapshot API module
# it needs (which the module proxy refuses), are archives in ../shared/upstream/operator, beside the checkout
# and not in a user's clone. Built once into the cache; the archives' hash names the build, so new archives
# rebuild it. Without the archives nothing is built and the tests that run the operator skip naming them.
OPERATOR_COMMIT=2a6da14c8
OPERATOR_ARCHIVES="$repo_root/../shared/upstream/operator"
OPERATOR_SOURCE="dynamo-operator-$OPERATOR_COMMIT.tar.gz"
OPERATOR_SNAPSHOT_API="snapshot-api-v0.1.0-alpha.1.tar.gz"
OPERATOR=""
OPERATOR_DIR=""
if [[ -f "$OPERATOR_ARCHIVES/$OPERATOR_SOURCE" && -f "$OPERATOR_ARCHIVES/$OPERATOR_SNAPSHOT_API" ]]; then
    operator_hash="$(cat "$OPERATOR_ARCHIVES/$OPERATOR_SOURCE" "$OPERATOR_ARCHIVES/$OPERATOR_SNAPSHOT_API" | sha256sum | cut -c1-12)"
    OPERATOR="$BIN_DIR/dynamo-operator-$OPERATOR_COMMIT-$operator_hash"
    # The chart, the CRDs (config/crd/bases, with the DynamoWorkerMetadata CRD its Kubernetes discovery
    # needs) and the snapshot CRDs, for the harness that starts it (tests/harness/operator_stack.py).
    OPERATOR_DIR="$CRDS_DIR/dynamo-operator-$OPERATOR_COMMIT-$operator_hash"
    if [[ -x "$OPERATOR" && -f "$OPERATOR_DIR/.source" ]]; then
        step "dynamo operator $OPERATOR_COMMIT: present: $OPERATOR"
    else
        step "dynamo operator $OPERATOR_COMMIT: building ./cmd of deploy/operator (~1 minute with a warm module cache, ~3 cold on 2 cores)"
        t0=$SECONDS
        src="$work/dynamo-operator"
        mkdir -p "$src"
        tar xzf "$OPERATOR_ARCHIVES/$OPERATOR_SOURCE" -C "$src"
        tar xzf "$OPERATOR_ARCHIVES/$OPERATOR_SNAPSHOT_API" -C "$src"
        module="$src/dynamo-$OPERATOR_COMMIT/deploy/operator"
        snapshot_api="$src/${OPERATOR_SNAPSHOT_API%.tar.gz}/api"
        [[ -f "$module/go.mod" && -f "$snapshot_api/go.mod" ]] || die "$OPERATOR_ARCHIVES: the archives do not hold deploy/operator/go.mod and api/go.mod"
        (cd "$module" && go mod edit -replace "github.com/ai-dynamo/snapshot/api=$snapshot_api") \
            || die "go mod edit in $module failed"
        tmp_bin="$BIN_DIR/.dynamo-operator.tmp.$$"
        partial+=("$tmp_bin")
        (cd "$module" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -o "$tmp_bin" ./cmd/) >"$work/operator.log" 2>&1 \
            || { grep -v '^go: downloading ' "$work/operator.log" | tail -n 40 >&2; die "building the dynamo operator failed"; }
        stage="$CRDS_DIR/.dynamo-operator.tmp.$$"
        partial+=("$stage")
        rm -rf "$stage" && mkdir -p "$stage/crds"
        cp -r "$src/dynamo-$OPERATOR_COMMIT/deploy/helm/charts/platform/components/operator" "$stage/chart"
        install -m 0644 "$module"/config/crd/bases/*.yaml "$snapshot_api"/v1alpha1/crds/*.yaml "$stage/crds/"
        printf '%s\n' "$OPERATOR_SOURCE $OPERATOR_SNAPSHOT_API $operator_hash" >"$stage/.source"
        rm -rf "$OPERATOR_DIR" && mv "$stage" "$OPERATOR_DIR"
        mv -f "$tmp_bin" "$OPERATOR"
        "$OPERATOR" --help >/dev/null 2>&1 || [[ $? -eq 2 ]] || die "built $OPERATOR but it does not run"
        step "dynamo operator $OPERATOR_COMMIT: built in $((SECONDS - t0))s ($(grep -c '^go: downloading ' "$work/operator.log" || true) modules downloaded): $OPERATOR"
    fi
else
    [[ "${CI:-}" != "true" ]] || die "$OPERATOR_ARCHIVES/$OPERATOR_SOURCE missing: CI builds the upstream operator to compare with"
    step "dynamo operator: $OPERATOR_ARCHIVES not beside the checkout: not built (the tests that run it will skip)"
fi

# --- tools.env ------------------------------------------------------------------

{
    echo "CRANK=$CRANK"
    echo "CROSSPLANE=$CROSSPLANE"
    echo "CROSSPLANE_CRDS=$CROSSPLANE_CRDS"
    echo "CROSSPLANE_RBAC=$CROSSPLANE_RBAC"
    echo "CROSSPLANE_CHART=$CROSSPLANE_CHART"
    echo "CROSSPLANE_RENDER_PROTO=$CROSSPLANE_RENDER_PROTO"
    echo "HELM=$HELM"
    echo "COSIGN=$COSIGN"
    echo "OCI_REGISTRY=$OCI_REGISTRY"
    echo "CRDS_DIR=$CRDS_DIR"
    echo "DYNAMO_OPERATOR=$OPERATOR"
    echo "DYNAMO_OPERATOR_DIR=$OPERATOR_DIR"
} >"$CACHE/tools.env.tmp.$$"
mv -f "$CACHE/tools.env.tmp.$$" "$CACHE/tools.env"

step "wrote $CACHE/tools.env:"
sed 's/^/      /' "$CACHE/tools.env"
step "done in $((SECONDS - start))s"
