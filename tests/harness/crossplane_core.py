"""A real Crossplane core on the test control plane, with function-dynamo installed as a platform team does.

``start_crossplane`` runs, all on 127.0.0.1:

0. the ServiceAccounts, ClusterRoles and bindings of Crossplane's Helm chart (``crossplane_rbac``):
   Crossplane core and its RBAC manager (``crossplane rbac start``) run as those ServiceAccounts,
   with tokens from the TokenRequest API, not as the test's admin;
1. ``crossplane core init`` (Crossplane's CRDs, its root CA and client certificate Secrets), then
   ``crossplane core start`` with ``--package-runtime=Function=External``: Crossplane runs no
   function pods, it dials the endpoint the Active FunctionRevision's status names;
2. the function itself: the runtime image embedded in the Function package, run as a container by
   ``runc`` (``tests/harness/container.py``: what ships is what is tested), or, where runc cannot run (not root),
   ``function-dynamo serve`` from the checkout; either with ``--tls-certs-dir`` and a server certificate
   issued by Crossplane's own root CA, so Crossplane dials the project's mTLS path;
3. a loopback OCI registry (``tools/oci-registry``) holding both packages (``tests/harness/packages.py``: built
   by ``scripts/build-packages.sh``) pushed with ``crossplane xpkg push``;
4. an ``ImageConfig`` rewriting ``ghcr.io/function-dynamo/`` to the registry, the Configuration
   package applied as a ``pkg.crossplane.io/v1 Configuration`` (Crossplane resolves and installs the
   Function it depends on), the package runtime's part played on the FunctionRevision (endpoint, TLS
   server Secret, RuntimeHealthy), ``package/rbac/clusterrole.yaml`` and the CRDs of the APIs the
   package composes (Grove, LWS, Istio, Inference Extension).

Every process is recorded by PID in the ``ControlPlane`` and stopped with it; each has a log file.
"""

from __future__ import annotations

import base64
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fixtures.tooling import CRD_SETS, REPO, _missing, _tools_env, crds_dir, in_ci
from harness.apiserver import ensure_namespace, install_crd
from harness.container import RUNTIME, delete, prepare, readable_by_image, runtime_spec, unpack_xpkg
from harness.controlplane import APIError, ControlPlane, free_port, start_process, wait_for
from harness.crossplane_rbac import CROSSPLANE_SA, RBAC_MANAGER_SA, install_chart_rbac, service_account_kubeconfig
from harness.packages import built_packages
from harness.pki import issue
from harness.poll import until

NAMESPACE = "crossplane-system"
PACKAGE_PREFIX = "ghcr.io/function-dynamo/"
PACKAGE_VERSION = "v0.1.0"
CONFIGURATION = "function-dynamo-configuration"  # the default package: namespaced XRs
CLAIMS_CONFIGURATION = "function-dynamo-claims"  # the claims package (package/claims/)
CONFIGURATIONS = (CONFIGURATION, CLAIMS_CONFIGURATION)
# The Crossplane flags the README's install sets (its chart's `args`): 8 reconciles at a time per XR kind rather
# than Crossplane's 100, which on a small control plane multiplied the reconciles per graph by 3-6 (each one
# working from a stale read) and the API server's CPU by 3-4 (docs/performance.md).
RECOMMENDED_CORE_ARGS = ("--max-concurrent-reconciles=8",)
FUNCTION = "function-dynamo-function-dynamo"  # the name Crossplane gives the dependency, as Compositions use
SERVER_SECRET = "function-dynamo-tls-server"
INSTALL_SECONDS = 180.0
PKG = "/apis/pkg.crossplane.io/v1"
ENVIRONMENT_CONFIGS = "/apis/apiextensions.crossplane.io/v1beta1/environmentconfigs"


@dataclass
class Crossplane:
    cp: ControlPlane
    registry: str  # host:port
    function_address: str
    crossplane_log: Path
    function_runtime: str  # "container" (the packaged image under runc) or "process" (the checkout's server)
    configuration: str = CONFIGURATION  # the Configuration package installed
    metrics_port: int = 0  # Crossplane's Prometheus metrics, on 127.0.0.1

    @property
    def claims(self) -> bool:
        return self.configuration == CLAIMS_CONFIGURATION

    def where(self) -> str:
        return self.cp.where()


def require_tools() -> dict[str, Path]:
    env = _tools_env()
    keys = ("CRANK", "CROSSPLANE", "CROSSPLANE_CRDS", "CROSSPLANE_RBAC", "OCI_REGISTRY")
    found = {k: Path(env[k]) for k in keys if env.get(k)}
    if len(found) < len(keys) or not all(p.exists() for p in found.values()):
        _missing(
            "Crossplane core, crank, the OCI registry or the RBAC of Crossplane's chart are not installed: "
            "run scripts/install-tools.sh"
        )
    return found


def secret_data(cp: ControlPlane, name: str) -> dict[str, bytes]:
    secret = cp.client.get(f"/api/v1/namespaces/{NAMESPACE}/secrets/{name}")
    return {k: base64.b64decode(v) for k, v in (secret.get("data") or {}).items()}


def write_certs(directory: Path, files: dict[str, bytes]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (directory / name).write_bytes(content)
        os.chmod(directory / name, 0o600)
    return directory


def issue_server_cert(directory: Path, ca_crt: bytes, ca_key: bytes) -> dict[str, bytes]:
    """A serving certificate for 127.0.0.1 signed by Crossplane's root CA."""
    work = directory / "issue"
    work.mkdir(parents=True)
    (work / "ca.crt").write_bytes(ca_crt)
    (work / "ca.key").write_bytes(ca_key)
    issue(work, "tls", "/CN=function-dynamo", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth")
    return {"tls.crt": (work / "tls.crt").read_bytes(), "tls.key": (work / "tls.key").read_bytes(), "ca.crt": ca_crt}


def port_open(address: str) -> bool:
    host, port = address.rsplit(":", 1)
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, int(port))) == 0


def _core_init(cp: ControlPlane, crossplane: Path, env: dict[str, str]) -> None:
    """``crossplane core init``; its first run may fail while its own CRDs are not served yet."""
    log = cp.run_dir / "crossplane-init.log"
    cp.logs["crossplane-init"] = log
    for attempt in range(1, 6):
        with log.open("ab") as out:
            proc = subprocess.run(
                [str(crossplane), "core", "init", f"--namespace={NAMESPACE}", "--enable-webhooks=false"],
                env=env, stdout=out, stderr=subprocess.STDOUT, timeout=180,
            )  # fmt: skip
        if proc.returncode == 0:
            return
        time.sleep(attempt)
    raise RuntimeError(f"crossplane core init failed 5 times; see {log}")


def _push(cp: ControlPlane, crank: Path, registry: str, out: Path) -> None:
    log = cp.run_dir / "packages.log"
    cp.logs["packages"] = log
    with log.open("ab") as f:
        pushed = [("function-dynamo.xpkg", "function-dynamo"), *((f"{c}.xpkg", c) for c in CONFIGURATIONS)]
        for file, name in pushed:
            ref = f"{registry}/function-dynamo/{name}:{PACKAGE_VERSION}"
            subprocess.run([str(crank), "xpkg", "push", "-f", str(out / file), ref],
                           check=True, stdout=f, stderr=subprocess.STDOUT, timeout=120)  # fmt: skip


def function_server_certs(cp: ControlPlane) -> Path:
    """The function's serving certificate, issued by Crossplane's root CA: written to a directory for the server
    (returned) and to the Secret the FunctionRevision names, as the package runtime does."""
    root = secret_data(cp, "crossplane-root-ca")
    server_certs = issue_server_cert(cp.run_dir / "function-certs", root["tls.crt"], root["tls.key"])
    apply(cp, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": SERVER_SECRET, "namespace": NAMESPACE},
               "type": "kubernetes.io/tls", "data": {k: base64.b64encode(v).decode() for k, v in server_certs.items()}},
          f"/api/v1/namespaces/{NAMESPACE}/secrets")  # fmt: skip
    return write_certs(cp.run_dir / "function-certs" / "serve", server_certs)


def start_registry(cp: ControlPlane, binary: Path) -> str:
    """The loopback OCI registry; its ``host:port``."""
    port_file = cp.run_dir / "registry.port"
    start_process(cp, "oci-registry", [str(binary), "--address", "127.0.0.1:0", "--port-file", str(port_file)])
    wait_for(cp, "oci-registry", lambda: port_file.is_file() and port_file.read_text().strip() != "")
    return f"127.0.0.1:{port_file.read_text().strip()}"


def _container_can_run() -> bool:
    return shutil.which(RUNTIME) is not None and os.geteuid() == 0


def start_function(cp: ControlPlane, packages: Path, certs: Path, address: str) -> str:
    """The Function package's runtime image under runc, or (where it cannot run) the checkout's server."""
    if not _container_can_run():
        if in_ci():
            _missing(f"{RUNTIME} as root runs the function's image in CI: run scripts/install-tools.sh as root")
        start_process(cp, "function-dynamo",
                      [sys.executable, "-m", "functions.tooling.main", "serve", "--tls-certs-dir", str(certs),
                       "--address", address], env={**os.environ, "PYTHONPATH": str(REPO)})  # fmt: skip
        return "process"
    bundle = cp.run_dir / "function-bundle"
    image = unpack_xpkg(packages / "function-dynamo.xpkg", bundle / "rootfs")
    readable_by_image(certs)
    name = f"function-dynamo-{os.getpid()}"
    start_process(cp, "function-dynamo", prepare(bundle, runtime_spec(image, ["--address", address], certs), name))
    cp.cleanups.append(lambda: delete(bundle, name))
    return "container"


def _conditions(obj: dict[str, Any]) -> dict[str, str]:
    return {c.get("type"): c.get("status") for c in (obj.get("status") or {}).get("conditions") or []}


def _active_revision(cp: ControlPlane) -> dict[str, Any] | None:
    revisions = cp.client.get(
        f"{PKG}/functionrevisions", params={"labelSelector": f"pkg.crossplane.io/package={FUNCTION}"}
    )
    active = [r for r in revisions.get("items", []) if (r.get("spec") or {}).get("desiredState") == "Active"]
    return active[0] if active else None


def _play_runtime(cp: ControlPlane, address: str) -> bool:
    """What the Deployment runtime would do for the Active FunctionRevision: endpoint, TLS secret, health."""
    revision = _active_revision(cp)
    return revision is not None and play_revision(cp, revision, address)


def play_revision(cp: ControlPlane, revision: dict[str, Any], address: str) -> bool:
    """The package runtime's part on one FunctionRevision (Active or not: a cluster's runtime serves every revision
    of a package behind the one Service); True once it stands."""
    status = revision.setdefault("status", {})
    if status.get("endpoint") == address and _conditions(revision).get("RuntimeHealthy") == "True":
        return True
    status["endpoint"] = address
    status["tlsServerSecretName"] = SERVER_SECRET
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "RuntimeHealthy"]
    conditions.append({"type": "RuntimeHealthy", "status": "True", "reason": "HealthyPackageRuntime",
                       "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})  # fmt: skip
    status["conditions"] = conditions
    name = revision["metadata"]["name"]
    try:
        cp.client.replace(f"{PKG}/functionrevisions/{name}/status", revision)
    except APIError as err:
        if err.code != 409:  # a conflict: Crossplane wrote it meanwhile; the next poll tries again
            raise
    return False


def _wait_installed(cp: ControlPlane, address: str, configuration_name: str) -> None:
    """Until the Configuration and the Function are Healthy and every XRD established, the package runtime played
    at each look."""
    seen: dict[str, Any] = {}

    def installed() -> bool:
        runtime_ready = _play_runtime(cp, address)
        seen["configuration"] = configuration = cp.client.get(f"{PKG}/configurations/{configuration_name}")
        seen["function"] = function = _function(cp)
        seen["xrds"] = xrds = cp.client.get("/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions").get(
            "items", []
        )
        return (
            runtime_ready
            and _conditions(configuration).get("Healthy") == "True"
            and _conditions(configuration).get("Installed") == "True"
            and function is not None
            and _conditions(function).get("Healthy") == "True"
            and len(xrds) >= 3
            and all(_established(x) for x in xrds)
        )

    def where() -> str:
        configuration, function = seen.get("configuration") or {}, seen.get("function")
        xrds = {x["metadata"]["name"]: _conditions(x) for x in seen.get("xrds") or []}
        return (
            f"configuration {_conditions(configuration)}, function {function and _conditions(function)}, XRDs {xrds}; "
            f"{cp.where()}"
        )

    until("the packages installed", installed, INSTALL_SECONDS, where=where)


def _established(xrd: dict[str, Any]) -> bool:
    """Its XR CRD served and, for an XRD with claims, its claim CRD offered (a namespaced XRD has no claim)."""
    conditions = _conditions(xrd)
    offered = conditions.get("Offered") == "True" or not (xrd.get("spec") or {}).get("claimNames")
    return conditions.get("Established") == "True" and offered


def _function(cp: ControlPlane) -> dict[str, Any] | None:
    try:
        return cp.client.get(f"{PKG}/functions/{FUNCTION}")
    except APIError as err:
        if err.code == 404:
            return None
        raise


def apply(cp: ControlPlane, obj: dict[str, Any], path: str) -> dict[str, Any]:
    """Create ``obj`` at collection ``path``, or replace it if it exists."""
    try:
        return cp.client.create(path, obj)
    except APIError as err:
        if err.code != 409:
            raise
    current = cp.client.get(f"{path}/{obj['metadata']['name']}")
    obj = {**obj, "metadata": {**obj["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]}}
    return cp.client.replace(f"{path}/{obj['metadata']['name']}", obj)


def install_target_crds(cp: ControlPlane, sets: tuple[str, ...] = CRD_SETS) -> None:
    """The CRDs of the APIs the package composes (by default all: Grove, LWS, Istio, Inference Extension); existing
    ones are kept."""
    for name in sets:
        directory = crds_dir(name)
        if directory is None:
            _missing(f"CRDs for {name!r} not installed: run scripts/install-tools.sh")
        for path in sorted(directory.glob("*.yaml")):
            for crd in yaml.safe_load_all(path.read_text()):
                if crd and crd.get("kind") == "CustomResourceDefinition":
                    got = install_crd(cp.client, crd)
                    if not got.accepted:
                        raise RuntimeError(f"CRD {got.name} of {name} refused: {got.message}")


def start_crossplane(
    cp: ControlPlane,
    configuration: str = CONFIGURATION,
    core_args: tuple[str, ...] = (),
    target_crds: tuple[str, ...] = CRD_SETS,
) -> Crossplane:
    """Crossplane on ``cp`` with ``configuration`` (the default package, or ``CLAIMS_CONFIGURATION``) installed,
    started with ``RECOMMENDED_CORE_ARGS``; ``core_args`` are more flags for ``crossplane core start`` (a
    benchmark's, e.g. turning realtime off; a flag given twice takes the later value). ``target_crds`` are the
    sets of composed APIs' CRDs installed beside it (``tests/tooling.CRD_SETS``)."""
    tools = require_tools()
    assert cp.kubeconfig is not None
    ensure_namespace(cp.client, NAMESPACE)
    install_chart_rbac(cp, tools["CROSSPLANE_RBAC"], apply)
    env = {
        **os.environ,
        "KUBECONFIG": str(service_account_kubeconfig(cp, CROSSPLANE_SA)),
        "POD_NAMESPACE": NAMESPACE,
        "CRDS_PATH": str(tools["CROSSPLANE_CRDS"]),
        "TLS_CA_SECRET_NAME": "crossplane-root-ca",
        "TLS_CLIENT_SECRET_NAME": "crossplane-tls-client",
    }
    _core_init(cp, tools["CROSSPLANE"], env)
    client_certs = write_certs(cp.run_dir / "crossplane-client-certs", secret_data(cp, "crossplane-tls-client"))
    certs_dir = function_server_certs(cp)

    packages = built_packages()
    function_address = f"127.0.0.1:{free_port()}"
    function_runtime = start_function(cp, packages, certs_dir, function_address)
    wait_for(cp, "function-dynamo", lambda: port_open(function_address))

    registry = start_registry(cp, tools["OCI_REGISTRY"])

    start_process(cp, "crossplane-rbac-manager", [
        str(tools["CROSSPLANE"]), "rbac", "start", "--leader-election=false",
        "--provider-clusterrole=crossplane:allowed-provider-permissions",
    ], env={**env, "KUBECONFIG": str(service_account_kubeconfig(cp, RBAC_MANAGER_SA))})  # fmt: skip

    metrics, health = free_port(), free_port()
    for sub in ("xpkg-cache", "xfn-cache"):
        (cp.run_dir / sub).mkdir(exist_ok=True)  # an absent xpkg cache dir breaks every unpack
    start_process(cp, "crossplane", [
        str(tools["CROSSPLANE"]), "core", "start", f"--namespace={NAMESPACE}", "--enable-webhooks=false",
        "--leader-election=false", "--package-runtime=Function=External",
        f"--tls-client-certs-dir={client_certs}", f"--xpkg-cache-dir={cp.run_dir / 'xpkg-cache'}",
        f"--xfn-cache-dir={cp.run_dir / 'xfn-cache'}", f"--metrics-port={metrics}", f"--health-probe-port={health}",
        *RECOMMENDED_CORE_ARGS, *core_args,
    ], env=env)  # fmt: skip
    wait_for(
        cp, "crossplane", lambda: urllib.request.urlopen(f"http://127.0.0.1:{health}/healthz", timeout=1).status == 200
    )

    _push(cp, tools["CRANK"], registry, packages)
    image_config = {
        "apiVersion": "pkg.crossplane.io/v1beta1",
        "kind": "ImageConfig",
        "metadata": {"name": "function-dynamo"},
        "spec": {
            "matchImages": [{"type": "Prefix", "prefix": PACKAGE_PREFIX}],
            "rewriteImage": {"prefix": f"{registry}/function-dynamo/"},
        },
    }
    apply(cp, image_config, "/apis/pkg.crossplane.io/v1beta1/imageconfigs")
    for path in (REPO / "package" / "rbac").glob("*.yaml"):
        for role in yaml.safe_load_all(path.read_text()):
            apply(cp, role, "/apis/rbac.authorization.k8s.io/v1/clusterroles")
    install_target_crds(cp, target_crds)
    apply(cp, {"apiVersion": "pkg.crossplane.io/v1", "kind": "Configuration", "metadata": {"name": configuration},
               "spec": {"package": f"{PACKAGE_PREFIX}{configuration}:{PACKAGE_VERSION}"}},
          f"{PKG}/configurations")  # fmt: skip
    _wait_installed(cp, function_address, configuration)
    return Crossplane(
        cp=cp,
        registry=registry,
        function_address=function_address,
        crossplane_log=cp.logs["crossplane"],
        function_runtime=function_runtime,
        configuration=configuration,
        metrics_port=metrics,
    )


def checkpoint_gate_on(cp: ControlPlane) -> list[dict[str, Any]]:
    """The operator config with the checkpoint gate on (the gate the operator refuses DynamoCheckpoints without),
    and the snapshot project's PodSnapshot CRD a checkpoint composes into; the config, for a preview's ``required``."""
    from fixtures.rendering import CHECKPOINT_PLATFORM
    from fixtures.tooling import require_shared

    crd = yaml.safe_load(require_shared("upstream", "crds", "nvidia.com_podsnapshots.yaml").read_text())
    got = install_crd(cp.client, crd)
    if not got.accepted:
        raise RuntimeError(f"the PodSnapshot CRD was refused: {got.message}")
    apply(cp, CHECKPOINT_PLATFORM, ENVIRONMENT_CONFIGS)
    return [CHECKPOINT_PLATFORM]
