#!/usr/bin/env bash
# Build the binaries of a real Kubernetes control plane from the Go module proxy, into the cache:
#
#   ${FUNCTION_DYNAMO_CACHE:-$HOME/.cache/function-dynamo}/
#     bin/etcd-<ETCD_VERSION>
#     bin/kube-apiserver-<KUBERNETES_VERSION>
#     bin/kube-controller-manager-<KUBERNETES_VERSION>
#     bin/kubectl-<KUBERNETES_VERSION>
#     control-plane.env     ETCD=..., KUBE_APISERVER=..., KUBE_CONTROLLER_MANAGER=..., KUBECTL=... (KEY=VALUE)
#
# The tests start them on 127.0.0.1 (tests/harness/controlplane.py); kubectl runs the commands the docs give a
# person (the migration procedure, function-dynamo migrate). Idempotent: a binary that exists and
# reports its pinned version is not rebuilt. Cold: ~4-6 minutes on two cores; warm: nothing to do.
# Needs: go.
set -euo pipefail

# --- pinned versions (one constant each) -------------------------------------

KUBERNETES_VERSION=v1.35.1
# The staging modules kubernetes' go.mod replaces with ./staging/src/k8s.io/<x> are published
# as k8s.io/<x> at v0.<minor>.<patch>; the module zip does not contain ./staging.
KUBERNETES_STAGING_VERSION=v0.35.1
ETCD_VERSION=v3.6.5

# -----------------------------------------------------------------------------

CACHE="${FUNCTION_DYNAMO_CACHE:-$HOME/.cache/function-dynamo}"
BIN_DIR="$CACHE/bin"
ETCD="$BIN_DIR/etcd-$ETCD_VERSION"
KUBE_APISERVER="$BIN_DIR/kube-apiserver-$KUBERNETES_VERSION"
KUBE_CONTROLLER_MANAGER="$BIN_DIR/kube-controller-manager-$KUBERNETES_VERSION"
KUBECTL="$BIN_DIR/kubectl-$KUBERNETES_VERSION"

die() { echo "install-control-plane.sh: error: $*" >&2; exit 1; }
step() { echo "==> install-control-plane: $*"; }

command -v go >/dev/null 2>&1 || die "go not found on PATH (it builds etcd and the Kubernetes binaries)"

mkdir -p "$BIN_DIR"
work="$(mktemp -d)"
partial=()
cleanup() { chmod -R u+w "$work" 2>/dev/null || true; rm -rf "$work" ${partial[@]+"${partial[@]}"}; }
trap cleanup EXIT
trap "exit 130" INT
trap "exit 143" TERM
export GOWORK=off CGO_ENABLED=0
start=$SECONDS

# version_ok BINARY VERSION: the binary exists and prints VERSION in its --version output.
# The output is read whole before it is searched: with pipefail, "cmd | grep -q" fails whenever grep stops
# reading early and cmd dies of SIGPIPE, which on a loaded machine made a good binary look wrong.
version_ok() {
    local out
    [[ -x "$1" ]] && out="$("$1" --version 2>/dev/null)" && [[ "$out" == *"${2#v}"* ]]
}
# kubectl has no --version flag: `kubectl version --client` prints it.
kubectl_ok() {
    local out
    [[ -x "$1" ]] && out="$("$1" version --client 2>/dev/null)" && [[ "$out" == *"$2"* ]]
}
# binary_ok CMD DEST: DEST is a built CMD of KUBERNETES_VERSION.
binary_ok() {
    if [[ "$1" == kubectl ]]; then kubectl_ok "$2" "$KUBERNETES_VERSION"; else version_ok "$2" "$KUBERNETES_VERSION"; fi
}

# build_logged LOG DIR ARGS...: go build in DIR; on failure show the log without download lines.
build_logged() {
    local log="$1" dir="$2"
    shift 2
    if ! (cd "$dir" && go build -trimpath "$@") >"$log" 2>&1; then
        grep -v '^go: downloading ' "$log" | tail -n 60 >&2 || true
        return 1
    fi
}

# --- etcd ---------------------------------------------------------------------

if version_ok "$ETCD" "$ETCD_VERSION"; then
    step "etcd $ETCD_VERSION: present: $ETCD"
else
    step "etcd $ETCD_VERSION: building go.etcd.io/etcd/server/v3 (about 30 s)"
    t0=$SECONDS
    mod="$work/etcd"
    mkdir -p "$mod"
    (cd "$mod" && go mod init function-dynamo.local/etcd >/dev/null 2>&1 \
        && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >"$work/etcd-get.log" 2>&1) \
        || { tail -n 40 "$work/etcd-get.log" >&2; die "go get go.etcd.io/etcd/server/v3@$ETCD_VERSION failed"; }
    tmp="$BIN_DIR/.etcd.tmp.$$"
    partial+=("$tmp")
    build_logged "$work/etcd-build.log" "$mod" -o "$tmp" go.etcd.io/etcd/server/v3 \
        || die "building etcd $ETCD_VERSION failed (go output above)"
    mv -f "$tmp" "$ETCD"
    version_ok "$ETCD" "$ETCD_VERSION" || die "built $ETCD but it does not report $ETCD_VERSION"
    step "etcd $ETCD_VERSION: built in $((SECONDS - t0))s: $ETCD"
fi

# --- kube-apiserver, kube-controller-manager ----------------------------------

if version_ok "$KUBE_APISERVER" "$KUBERNETES_VERSION" && version_ok "$KUBE_CONTROLLER_MANAGER" "$KUBERNETES_VERSION" \
    && kubectl_ok "$KUBECTL" "$KUBERNETES_VERSION"; then
    step "kubernetes $KUBERNETES_VERSION: present: $KUBE_APISERVER, $KUBE_CONTROLLER_MANAGER, $KUBECTL"
else
    step "kubernetes $KUBERNETES_VERSION: downloading k8s.io/kubernetes (a 19 MB module)"
    json="$(cd "$work" && go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" 2>"$work/k8s-dl.err")" \
        || die "go mod download k8s.io/kubernetes@$KUBERNETES_VERSION failed: $(cat "$work/k8s-dl.err") $json"
    mod_dir="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["Dir"])' "$json")"
    src="$work/kubernetes"
    cp -r "$mod_dir" "$src"
    chmod -R u+w "$src"
    rm -rf "$src/vendor" "$src/go.work" "$src/go.work.sum"
    # ./staging/src/k8s.io/<x> is not in the module zip: use the published staging modules instead.
    sed -i -E "s#^(\s*)(k8s\.io/[A-Za-z0-9._/-]+) => \./staging/src/k8s\.io/[A-Za-z0-9._/-]+#\1\2 => \2 $KUBERNETES_STAGING_VERSION#" "$src/go.mod"
    ! grep -q '=> ./staging' "$src/go.mod" || die "go.mod of k8s.io/kubernetes still replaces modules with ./staging"
    pkg=k8s.io/component-base/version
    stamp="-X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
    minor="${KUBERNETES_VERSION#v}"
    stamp+=" -X $pkg.gitMajor=${minor%%.*}"
    minor="${minor#*.}"
    stamp+=" -X $pkg.gitMinor=${minor%%.*}"
    # kubectl reports client-go's copy of the version
    ldflags="-s -w $stamp ${stamp//$pkg/k8s.io/client-go/pkg/version}"
    for cmd in kube-apiserver kube-controller-manager kubectl; do
        dest="$BIN_DIR/$cmd-$KUBERNETES_VERSION"
        if binary_ok "$cmd" "$dest"; then
            step "$cmd $KUBERNETES_VERSION: present: $dest"
            continue
        fi
        step "$cmd $KUBERNETES_VERSION: building (the first one takes ~3-4 minutes on two cores)"
        t0=$SECONDS
        tmp="$BIN_DIR/.$cmd.tmp.$$"
        partial+=("$tmp")
        GOFLAGS=-mod=mod build_logged "$work/$cmd-build.log" "$src" -ldflags "$ldflags" -o "$tmp" "./cmd/$cmd" \
            || die "building $cmd $KUBERNETES_VERSION failed (go output above)"
        mv -f "$tmp" "$dest"
        binary_ok "$cmd" "$dest" || die "built $dest but it does not report $KUBERNETES_VERSION"
        step "$cmd $KUBERNETES_VERSION: built in $((SECONDS - t0))s: $dest"
    done
fi

{
    echo "ETCD=$ETCD"
    echo "KUBE_APISERVER=$KUBE_APISERVER"
    echo "KUBE_CONTROLLER_MANAGER=$KUBE_CONTROLLER_MANAGER"
    echo "KUBECTL=$KUBECTL"
    echo "KUBERNETES_VERSION=$KUBERNETES_VERSION"
} >"$CACHE/control-plane.env.tmp.$$"
mv -f "$CACHE/control-plane.env.tmp.$$" "$CACHE/control-plane.env"
step "wrote $CACHE/control-plane.env; done in $((SECONDS - start))s"
