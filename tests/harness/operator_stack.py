"""The upstream Dynamo operator on a test control plane, run the way its Helm chart runs it.

``scripts/install-tools.sh`` builds the operator's ``manager`` from the source archives in
``../shared/upstream/operator`` and keeps its chart and CRDs beside it in the cache. ``start_operator``:

1. renders the chart with ``helm template`` and its default values, plus what the parent ``platform`` chart
   supplies (``discoveryBackend=kubernetes``, ``global.grove.enabled=true``) and the chart's own setting for
   certificates provisioned outside the operator (``webhook.certificateSecret.external``, with the harness's
   CA as ``webhook.caBundle``): its ``auto`` mode issues DNS names only and waits for a kubelet to copy the
   Secret into the pod, neither of which exists on loopback;
2. applies what the chart renders except the Deployment (ServiceAccounts, RBAC, the config ConfigMap, the
   webhook Service, the validating and mutating webhook configurations with each Service reference replaced
   by a ``https://127.0.0.1`` URL), the operator's CRDs as its ``crd-apply`` init container would (conversion
   pointed at the chart's webhook Service, the operator-version annotation), the snapshot CRDs, the CRDs of
   the APIs it composes into (Volcano's too: it renders LeaderWorkerSets only where it finds both), and the
   ``webhook-server-cert`` Secret;
3. runs ``manager`` with the Deployment's arguments and environment, as its ServiceAccount (a bound token),
   with the chart's operator configuration except that its listeners (metrics, health, webhook) move to
   127.0.0.1 on free ports. It reads its namespace from the ServiceAccount mount path, which a private mount
   namespace supplies (``unshare -m`` with a tmpfs on ``/run``: needs root, as CI is);
4. once its webhook server listens, points the convertible CRDs' conversion webhook at it: the operator
   refuses to start unless conversion names a Service, which the API server cannot reach here.

Grove is played, as in the package's stack (``controller_play``). The process is recorded by PID in the
``ControlPlane`` and stopped with it; ``stop_operator``, ``uninstall_operator``, ``install_operator`` and
``run_operator`` take it down and bring it back as a migration does.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import os
import shutil
import subprocess
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fixtures.tooling import CRD_SETS, _missing, _tools_env, shared_dir
from harness.apiserver import collection_of, ensure_namespace, install_crd, resource_path
from harness.controlplane import (
    APIError,
    ControlPlane,
    free_port,
    restart_process,
    start_process,
    stop_process,
    wait_for,
)
from harness.crossplane_core import apply, install_target_crds, port_open
from harness.crossplane_rbac import service_account_kubeconfig
from harness.pki import issue, make_ca
from harness.poll import until

RELEASE = "dynamo"
NAMESPACE = "dynamo-system"
KUBE_VERSION = "1.35.1"  # the test control plane's (scripts/install-control-plane.sh); the chart checks it
# What the parent `platform` chart gives this subchart, and the chart's setting for certificates provisioned
# outside the operator.
CHART_SETTINGS = ("discoveryBackend=kubernetes", "global.grove.enabled=true", "webhook.certificateSecret.external=true")
CERT_SECRET = "webhook-server-cert"  # the chart's default webhook.certificateSecret.name
SA_MOUNT = "/run/secrets/kubernetes.io/serviceaccount"  # /var/run is /run
CRD_VERSION_ANNOTATION = "dynamo.nvidia.com/operator-version"
CONVERTIBLE = (
    "dynamographdeployments.nvidia.com",
    "dynamocomponentdeployments.nvidia.com",
    "dynamographdeploymentrequests.nvidia.com",
    "dynamographdeploymentscalingadapters.nvidia.com",
)
WEBHOOK_CONFIGURATIONS = {
    "ValidatingWebhookConfiguration": "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
    "MutatingWebhookConfiguration": "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
}
START_SECONDS = 120.0
PROCESS = "dynamo-operator"  # its name among the control plane's processes (and its log file's)
# The APIs installed beside it: the package's (Grove, LWS, Istio, Inference Extension) and Volcano's, without which
# it does not render LeaderWorkerSets (the package is told what is installed by its config instead).
TARGET_CRDS = (*CRD_SETS, "volcano")
Obj = dict[str, Any]


@dataclass
class OperatorStack:
    """The operator running on ``cp``: its webhook base URL, the configuration it runs with, its version."""

    cp: ControlPlane
    webhook_url: str
    config: Obj
    version: str
    chart: list[Obj] = field(default_factory=list)  # what helm template rendered
    directory: Path = Path()  # the built operator's chart/ and crds/
    secret: dict[str, bytes] = field(default_factory=dict)  # the webhook-server-cert Secret's data
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    health_port: int = 0

    @property
    def webhook_service(self) -> dict[str, str]:
        """The chart's webhook Service, as a webhook client config names it."""
        (service,) = [s for s in _kind(self.chart, "Service") if "webhook" in s["metadata"]["name"]]
        return {"name": service["metadata"]["name"], "namespace": NAMESPACE}

    def where(self) -> str:
        return self.cp.where()


# --- pure: from the chart's objects to what runs on loopback ------------------------------------------------


def _kind(objs: list[Obj], kind: str) -> list[Obj]:
    return [o for o in objs if o.get("kind") == kind]


def operator_config(chart: list[Obj]) -> Obj:
    """The operator configuration the chart's ConfigMap holds (``config.yaml``)."""
    (config_map,) = [o for o in _kind(chart, "ConfigMap") if "config.yaml" in (o.get("data") or {})]
    return yaml.safe_load(config_map["data"]["config.yaml"])


def loopback_config(config: Obj, *, metrics: int, health: int, webhook: int, cert_dir: Path) -> Obj:
    """``config`` with the metrics, health and webhook listeners on 127.0.0.1 at the given ports and the webhook's
    certificates read from ``cert_dir``; nothing else changed."""
    out = copy.deepcopy(config)
    server = out.setdefault("server", {})
    server["metrics"] = {**(server.get("metrics") or {}), "bindAddress": "127.0.0.1", "port": metrics}
    server["healthProbe"] = {**(server.get("healthProbe") or {}), "bindAddress": "127.0.0.1", "port": health}
    server["webhook"] = {
        **(server.get("webhook") or {}),
        "host": "127.0.0.1",
        "port": webhook,
        "certDir": str(cert_dir),
    }
    return out


def as_crd_apply_writes(crd: Obj, service: str, namespace: str, version: str) -> Obj:
    """An operator CRD as the chart's ``crd-apply`` init container installs it: conversion webhook pointed at the
    chart's webhook Service (no CA yet: the operator injects it), stamped with the operator's version."""
    out = copy.deepcopy(crd)
    out["metadata"].setdefault("annotations", {})[CRD_VERSION_ANNOTATION] = version
    webhook = ((out["spec"].get("conversion") or {}).get("webhook") or {}).get("clientConfig")
    if webhook is not None and "service" in webhook:
        webhook["service"] = {**webhook["service"], "name": service, "namespace": namespace}
        webhook.pop("caBundle", None)
    return out


def with_url(configuration: Obj, base_url: str) -> Obj:
    """A webhook configuration whose every Service reference is replaced by ``base_url`` + the same path."""
    out = copy.deepcopy(configuration)
    for hook in out.get("webhooks") or []:
        service = hook["clientConfig"].pop("service", None)
        if service is not None:
            hook["clientConfig"]["url"] = base_url + service.get("path", "")
    return out


def manager_command(chart: list[Obj], binary: Path, config_path: Path) -> tuple[list[str], dict[str, str]]:
    """The manager container's arguments (its ``--config`` replaced by ``config_path``) and environment
    (``fieldRef``s resolved as the kubelet would) from the chart's Deployment."""
    (deployment,) = _kind(chart, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    (container,) = [c for c in pod["containers"] if c["name"] == "manager"]
    args = [f"--config={config_path}" if a.startswith("--config=") else a for a in container.get("args") or []]
    fields = {"spec.serviceAccountName": pod["serviceAccountName"], "metadata.namespace": NAMESPACE}
    env = {}
    for var in container.get("env") or []:
        if "value" in var:
            env[var["name"]] = str(var["value"])
        elif "fieldRef" in (var.get("valueFrom") or {}):
            env[var["name"]] = fields[var["valueFrom"]["fieldRef"]["fieldPath"]]
    return [str(binary), *args], env


def chart_version(chart: list[Obj]) -> str:
    """The version the chart passes to the operator (``--operator-version``, its appVersion)."""
    (deployment,) = _kind(chart, "Deployment")
    (container,) = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "manager"]
    return next(a.split("=", 1)[1] for a in container["args"] if a.startswith("--operator-version="))


# --- I/O: tools, rendering, starting ----------------------------------------------------------------------


def require_operator() -> tuple[Path, Path, Path]:
    """The operator binary, its directory (``chart/``, ``crds/``) and helm, or skip (fail under CI) naming what is
    missing."""
    archives = shared_dir() / "upstream" / "operator"
    if not archives.is_dir():
        _missing(f"{archives} is missing: the upstream operator is built from ../shared/upstream/operator")
    env = _tools_env()
    paths = [Path(env[k]) if env.get(k) else None for k in ("DYNAMO_OPERATOR", "DYNAMO_OPERATOR_DIR", "HELM")]
    if not all(p is not None and p.exists() for p in paths):
        _missing("the upstream operator or helm is not built: run scripts/install-tools.sh")
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        # In CI (root) this always runs: the operator reads its namespace where only a mount namespace can put it.
        _missing("the upstream operator needs root and unshare(1): it reads its namespace from " + SA_MOUNT)
    binary, directory, helm = paths
    assert binary and directory and helm
    return binary, directory, helm


def render_chart(helm: Path, chart: Path, ca_bundle: bytes, *extra: str) -> list[Obj]:
    """``helm template`` of the operator's chart with ``CHART_SETTINGS`` (and ``extra`` ``--set`` values)."""
    sets = [*CHART_SETTINGS, f"webhook.caBundle={base64.b64encode(ca_bundle).decode()}", *extra]
    argv = [str(helm), "template", RELEASE, str(chart), "--namespace", NAMESPACE, "--kube-version", KUBE_VERSION]
    for value in sets:
        argv += ["--set", value]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"helm template of the operator's chart failed: {proc.stderr.strip()}")
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


def _collection(cp: ControlPlane, obj: Obj) -> str | None:
    """The collection path of ``obj``'s kind, or None when the API server does not serve it."""
    return collection_of(cp.client, obj, NAMESPACE)


def conversion_to(cp: ControlPlane, *, url: str | None, service: Obj | None = None) -> None:
    """Point each convertible CRD's conversion webhook at ``url`` (the running operator) or back at ``service``
    (what the operator checks for when it starts), keeping its CA bundle."""
    for name in CONVERTIBLE:
        path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
        for _ in range(5):
            crd = cp.client.get(path)
            client_config = crd["spec"]["conversion"]["webhook"]["clientConfig"]
            client_config.pop("url", None)
            client_config.pop("service", None)
            if url is not None:
                client_config["url"] = url + "/convert"
            else:
                client_config["service"] = service
            try:
                cp.client.replace(path, crd)
                break
            except APIError as err:
                if err.code != 409:
                    raise


def _webhook_certs(run_dir: Path) -> tuple[Path, dict[str, bytes]]:
    """A CA of the harness and a serving certificate for 127.0.0.1; the cert directory and the Secret's data."""
    pki = run_dir / "operator-pki"
    make_ca(pki, "dynamo-operator-webhook-ca")
    issue(pki, "tls", "/CN=dynamo-operator-webhook", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth")
    cert_dir = run_dir / "operator-certs"
    cert_dir.mkdir(parents=True, exist_ok=True)
    for name in ("tls.crt", "tls.key"):
        (cert_dir / name).write_bytes((pki / name).read_bytes())
    data = {
        "tls.crt": (pki / "tls.crt").read_bytes(),
        "tls.key": (pki / "tls.key").read_bytes(),
        "ca.crt": (pki / "ca.crt").read_bytes(),
    }
    return cert_dir, data


def _in_mount_namespace(argv: list[str], namespace: str) -> list[str]:
    """``argv`` run in a private mount namespace whose ``/run`` is a tmpfs holding the ServiceAccount namespace
    file, as the kubelet mounts it; ``unshare`` and ``sh`` exec, so the PID is the manager's."""
    script = f'mount -t tmpfs tmpfs /run && mkdir -p {SA_MOUNT} && printf %s "$0" > {SA_MOUNT}/namespace && exec "$@"'
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, namespace, *argv]


def install_operator_crds(cp: ControlPlane, directory: Path, service: str, version: str) -> None:
    for path in sorted((directory / "crds").glob("*.yaml")):
        for crd in yaml.safe_load_all(path.read_text()):
            if crd and crd.get("kind") == "CustomResourceDefinition":
                got = install_crd(cp.client, as_crd_apply_writes(crd, service, NAMESPACE, version))
                if not got.accepted:
                    raise RuntimeError(f"the operator's CRD {got.name} was refused: {got.message}")


def start_operator(cp: ControlPlane) -> OperatorStack:
    """The upstream operator on ``cp`` (a control plane of its own: its CRDs have the package's names)."""
    binary, directory, helm = require_operator()
    cert_dir, secret = _webhook_certs(cp.run_dir)
    chart = render_chart(helm, directory / "chart", secret["ca.crt"])
    metrics, health, webhook = free_port(), free_port(), free_port()
    config = loopback_config(operator_config(chart), metrics=metrics, health=health, webhook=webhook, cert_dir=cert_dir)
    config_path = cp.run_dir / "operator-config.yaml"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    argv, env = manager_command(chart, binary, config_path)
    stack = OperatorStack(
        cp=cp,
        webhook_url=f"https://127.0.0.1:{webhook}",
        config=config,
        version=chart_version(chart),
        chart=chart,
        directory=directory,
        secret=secret,
        argv=argv,
        env=env,
        health_port=health,
    )
    install_operator(stack)
    install_target_crds(cp, TARGET_CRDS)
    run_operator(stack)
    return stack


def install_operator(stack: OperatorStack) -> None:
    """What ``helm install`` of the chart creates (but the Deployment), the webhook Secret and the operator's CRDs."""
    cp = stack.cp
    ensure_namespace(cp.client, NAMESPACE)
    install_operator_crds(cp, stack.directory, stack.webhook_service["name"], stack.version)
    for obj in stack.chart:
        if obj["kind"] == "Deployment":
            continue
        if obj["kind"] in WEBHOOK_CONFIGURATIONS:
            obj = with_url(obj, stack.webhook_url)
        collection = _collection(cp, obj)
        if collection is None:
            raise RuntimeError(f"the chart renders {obj['kind']} {obj['metadata']['name']}, not served here")
        apply(cp, obj, collection)
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": CERT_SECRET, "namespace": NAMESPACE},
        "type": "kubernetes.io/tls",
        "data": {k: base64.b64encode(v).decode() for k, v in stack.secret.items()},
    }
    apply(cp, secret, f"/api/v1/namespaces/{NAMESPACE}/secrets")


def run_operator(stack: OperatorStack) -> None:
    """Start ``manager`` as its ServiceAccount; once it listens, point conversion at it and wait until it is ready."""
    cp = stack.cp
    kubeconfig = service_account_kubeconfig(cp, manager_service_account(stack.chart), namespace=NAMESPACE)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **stack.env, "KUBECONFIG": str(kubeconfig)}
    start_process(cp, PROCESS, _in_mount_namespace(stack.argv, NAMESPACE), env=env)
    _until_serving(stack)


def rerun_operator(stack: OperatorStack) -> None:
    """The stopped manager (``stop_operator``) started again with the same command line and environment, as the
    kubelet restarts its container; conversion pointed at it again once it listens, then until it is ready."""
    restart_process(stack.cp, PROCESS)
    _until_serving(stack)


def _until_serving(stack: OperatorStack) -> None:
    cp = stack.cp
    port = stack.webhook_url.rsplit(":", 1)[1]
    wait_for(cp, PROCESS, lambda: port_open(f"127.0.0.1:{port}"), seconds=START_SECONDS)
    conversion_to(cp, url=stack.webhook_url)
    wait_for(
        cp,
        PROCESS,
        lambda: urllib.request.urlopen(f"http://127.0.0.1:{stack.health_port}/readyz", timeout=1).status == 200,
    )
    # Conversion through the operator: the API server answers a v1alpha1 list only through its webhook.
    until("DGDs listed as v1alpha1 through the operator's conversion webhook", lambda: _lists_v1alpha1(cp))


def _lists_v1alpha1(cp: ControlPlane) -> bool:
    try:
        return cp.client.get(resource_path("nvidia.com", "v1alpha1", "dynamographdeployments")) is not None
    except APIError as err:
        if err.code == 429:  # "storage is (re)initializing": the CRD's conversion just changed, its cache restarts
            return False
        raise


def stop_operator(stack: OperatorStack) -> None:
    """Stop the manager by its PID, as scaling its Deployment to zero would, and point conversion back at the
    chart's Service (what the operator checks for when it starts again)."""
    cp = stack.cp
    stop_process(cp, PROCESS, seconds=30)
    with contextlib.suppress(APIError):  # the CRDs may be gone already
        conversion_to(cp, url=None, service={**stack.webhook_service, "path": "/convert"})


def uninstall_operator(stack: OperatorStack) -> None:
    """What ``helm uninstall`` of the chart removes: every object it rendered (the operator stopped first)."""
    cp = stack.cp
    for obj in stack.chart:
        collection = _collection(cp, obj)
        if obj["kind"] != "Deployment" and collection is not None:
            with contextlib.suppress(APIError):
                cp.client.delete(f"{collection}/{obj['metadata']['name']}")


def manager_service_account(chart: list[Obj]) -> str:
    (deployment,) = _kind(chart, "Deployment")
    return deployment["spec"]["template"]["spec"]["serviceAccountName"]
