"""A real Kubernetes control plane for the tests: etcd, kube-apiserver and kube-controller-manager.

The binaries are built from the Go module proxy by ``scripts/install-control-plane.sh`` into the
cache (``control-plane.env`` names them). ``start_control_plane`` runs them on 127.0.0.1 with free
ports, a fresh PKI (openssl) and data directory, waits for ``/readyz``, and returns a ``ControlPlane``
with a small HTTPS client; ``stop`` ends every process it started by PID, also after a failure.
Server logs go to files in the run's directory, which failures point at.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fixtures.tooling import _missing, cache_dir
from harness.pki import issue, make_ca, openssl
from harness.poll import NotYet, until

INSTALL = "scripts/install-control-plane.sh"
READY_SECONDS = 60.0
TOKEN = "function-dynamo-test-admin-token"


class APIError(RuntimeError):
    """A non-2xx answer of the API server: its HTTP code and Status object."""

    def __init__(self, code: int, status: dict[str, Any], what: str) -> None:
        self.code = code
        self.status = status
        super().__init__(f"{what}: HTTP {code}: {status.get('message', status)}")

    @property
    def causes(self) -> list[dict[str, Any]]:
        return list(((self.status.get("details") or {}).get("causes")) or [])


class NotFound(APIError, NotYet):
    """A 404: for ``poll.until``, an object not there yet."""


def control_plane_env() -> dict[str, str]:
    path = cache_dir() / "control-plane.env"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    return dict(line.split("=", 1) for line in lines if "=" in line)


def require_binaries() -> dict[str, Path]:
    """etcd, kube-apiserver, kube-controller-manager, or skip (fail under CI) naming the install script."""
    env = control_plane_env()
    found = {k: Path(env[k]) for k in ("ETCD", "KUBE_APISERVER", "KUBE_CONTROLLER_MANAGER") if k in env}
    if len(found) < 3 or not all(p.is_file() and os.access(p, os.X_OK) for p in found.values()):
        _missing(
            f"the control-plane binaries are not built ({cache_dir() / 'control-plane.env'} missing or stale): "
            f"run {INSTALL} (it needs go on the PATH)"
        )
    return found


def require_kubectl() -> Path:
    """kubectl of the control plane's Kubernetes version, or skip (fail under CI) naming the install script."""
    kubectl = control_plane_env().get("KUBECTL")
    if not kubectl or not os.access(kubectl, os.X_OK):
        _missing(f"kubectl is not built ({cache_dir() / 'control-plane.env'} has no KUBECTL): run {INSTALL}")
    return Path(kubectl)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_pki(pki: Path) -> None:
    """A CA, the API server's serving certificate for 127.0.0.1, an admin client certificate, an SA key."""
    make_ca(pki, "function-dynamo-test-ca")
    openssl(pki, "genrsa", "-out", "sa.key", "2048")
    openssl(pki, "rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub")
    issue(
        pki, "apiserver", "/CN=kube-apiserver", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth"
    )
    issue(pki, "admin", "/O=system:masters/CN=admin", "extendedKeyUsage=clientAuth")
    (pki / "tokens.csv").write_text(f'{TOKEN},admin,admin,"system:masters"\n')


@dataclass
class Client:
    """Plain HTTPS to the API server with the admin client certificate; one keep-alive connection per thread."""

    base: str
    pki: Path
    _ctx: ssl.SSLContext = field(init=False)
    _local: threading.local = field(init=False, default_factory=threading.local)

    def __post_init__(self) -> None:
        self._ctx = ssl.create_default_context(cafile=str(self.pki / "ca.crt"))
        self._ctx.load_cert_chain(str(self.pki / "admin.crt"), str(self.pki / "admin.key"))

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: dict[str, str] | None = None,
        content_type: str = "application/json",
        timeout: float = 60,
        raw: bool = False,
        headers: dict[str, str] | None = None,
    ) -> Any:
        target = path + ("?" + urllib.parse.urlencode(params) if params else "")
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": content_type, "Accept": "application/json", **(headers or {})}
        for attempt in (1, 2):  # one keep-alive connection; a dropped one is opened again once
            conn = self._connection(timeout)
            try:
                conn.request(method, target, body=data, headers=headers)
                rsp = conn.getresponse()
                body_bytes = rsp.read()
                break
            except (http.client.HTTPException, OSError):
                conn.close()
                self._local.conn = None
                if attempt == 2:
                    raise
        if rsp.status >= 300:
            try:
                status = json.loads(body_bytes)
            except ValueError:
                status = {"message": body_bytes.decode(errors="replace")}
            raise (NotFound if rsp.status == 404 else APIError)(rsp.status, status, f"{method} {path}")
        if raw:
            return body_bytes.decode(errors="replace")
        return json.loads(body_bytes) if body_bytes else None

    def _connection(self, timeout: float) -> http.client.HTTPSConnection:
        conn: http.client.HTTPSConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            parsed = urllib.parse.urlsplit(self.base)
            conn = http.client.HTTPSConnection(parsed.hostname, parsed.port, context=self._ctx, timeout=timeout)
            self._local.conn = conn
        conn.timeout = timeout
        return conn

    def get(self, path: str, **kw: Any) -> Any:
        return self.request("GET", path, **kw)

    def create(self, path: str, obj: dict[str, Any], *, dry_run: bool = False) -> Any:
        return self.request("POST", path, obj, params={"dryRun": "All"} if dry_run else None)

    def replace(self, path: str, obj: dict[str, Any], *, dry_run: bool = False) -> Any:
        return self.request("PUT", path, obj, params={"dryRun": "All"} if dry_run else None)

    def merge_patch(self, path: str, patch: dict[str, Any]) -> Any:
        return self.request("PATCH", path, patch, content_type="application/merge-patch+json")

    def server_side_apply(self, path: str, obj: dict[str, Any], field_manager: str) -> Any:
        """Apply ``obj`` as Crossplane applies a composed resource: server-side, forcing ownership."""
        return self.request(
            "PATCH",
            path,
            obj,
            params={"fieldManager": field_manager, "force": "true"},
            content_type="application/apply-patch+yaml",
        )

    def delete(self, path: str) -> Any:
        return self.request("DELETE", path)


@dataclass
class ControlPlane:
    run_dir: Path
    client: Client
    logs: dict[str, Path]
    pids: dict[str, int] = field(default_factory=dict)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    kubeconfig: Path | None = None
    audit_log: Path | None = None  # JSON lines: every request of a ServiceAccount in AUDITED_NAMESPACE
    cleanups: list[Callable[[], None]] = field(default_factory=list)  # run after the processes stop
    # Each process's command line and environment, as start_process got them: what restart_process runs again.
    commands: dict[str, tuple[list[str], dict[str, str] | None]] = field(default_factory=dict)

    def where(self) -> str:
        """The server logs, for an assertion message."""
        return "control-plane logs: " + ", ".join(f"{k}={v}" for k, v in sorted(self.logs.items()))

    def stop(self) -> None:
        """SIGTERM each process by PID, newest first, each before the next (the API server needs etcd
        to shut down cleanly); SIGKILL what does not exit within 10 s."""
        for proc in reversed(self.procs):
            stop_by_pid(proc)
        for cleanup in reversed(self.cleanups):
            cleanup()


def start_process(cp: ControlPlane, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
    """Start ``argv`` in its own session, output to ``<run dir>/<name>.log``, recorded by PID in ``cp``."""
    log = cp.run_dir / f"{name}.log"
    cp.logs[name] = log
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    cp.procs.append(proc)
    cp.pids[name] = proc.pid
    cp.commands[name] = (list(argv), env)


def stop_by_pid(proc: subprocess.Popen[Any], sig: int = signal.SIGTERM, seconds: float = 10.0) -> None:
    """Send ``sig`` to ``proc`` by its PID (if it still runs) and wait for it to exit; SIGKILL after ``seconds``."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, sig)
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def stop_process(cp: ControlPlane, name: str, sig: int = signal.SIGTERM, seconds: float = 10.0) -> None:
    """Send ``sig`` to the process ``name`` by its PID and wait for it to exit (SIGKILL after ``seconds``)."""
    stop_by_pid(next(p for p in cp.procs if p.pid == cp.pids[name]), sig, seconds)


def restart_process(cp: ControlPlane, name: str) -> None:
    """Start the stopped process ``name`` again with the command line, environment (so the same flags and
    ports: an API server's etcd keeps its data) and log file (appended to) it had; recorded by its new PID."""
    argv, env = cp.commands[name]
    old = next(p for p in cp.procs if p.pid == cp.pids[name])
    if old.poll() is None:
        raise RuntimeError(f"{name} (PID {old.pid}) is still running")
    with cp.logs[name].open("ab") as out:
        out.write(f"\n--- restarted at {time.strftime('%H:%M:%S')} ---\n".encode())
        out.flush()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    cp.procs.append(proc)
    cp.pids[name] = proc.pid


def wait_for(cp: ControlPlane, name: str, ready: Callable[[], Any], seconds: float = READY_SECONDS) -> None:
    """Until ``ready()`` is true (an error counts as not yet); ``poll.Timeout`` naming the log if the process
    ``name`` exits or ``seconds`` pass."""
    proc = next(p for p in cp.procs if p.pid == cp.pids[name])

    def exited() -> str | None:
        return None if proc.poll() is None else f"{name} exited with {proc.returncode}"

    until(
        f"{name} ready",
        ready,
        seconds,
        every=0.2,
        tolerate=(Exception,),
        stop=exited,
        where=lambda: f"see {cp.logs[name]}",
    )


def _kubeconfig(path: Path, server: str, pki: Path) -> None:
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {"name": "test", "cluster": {"server": server, "certificate-authority": str(pki / "ca.crt")}}
                ],
                "users": [
                    {
                        "name": "admin",
                        "user": {"client-certificate": str(pki / "admin.crt"), "client-key": str(pki / "admin.key")},
                    }
                ],
                "contexts": [{"name": "test", "context": {"cluster": "test", "user": "admin"}}],
                "current-context": "test",
            }
        )
    )


AUDITED_NAMESPACE = "crossplane-system"


def _audit_policy(path: Path) -> Path:
    """Metadata-level audit of the ServiceAccounts Crossplane runs as; nothing else (the tests' own
    admin requests would drown them)."""
    path.write_text(
        json.dumps(
            {
                "apiVersion": "audit.k8s.io/v1",
                "kind": "Policy",
                "omitStages": ["RequestReceived"],
                "rules": [
                    {"level": "Metadata", "userGroups": [f"system:serviceaccounts:{AUDITED_NAMESPACE}"]},
                    {"level": "None"},
                ],
            }
        )
    )
    return path


def start_control_plane(run_dir: Path, *, audit: bool = True, profiling: bool = False) -> ControlPlane:
    """etcd + kube-apiserver + kube-controller-manager on loopback; stop it with ``ControlPlane.stop``.
    ``audit`` keeps the audit log the RBAC tests read (blocking: it costs the API server on every audited
    request); ``profiling`` serves the API server's pprof handlers (a benchmark's, admin only)."""
    bins = require_binaries()
    pki = run_dir / "pki"
    make_pki(pki)
    api_port, etcd_port, peer_port, kcm_port = free_port(), free_port(), free_port(), free_port()
    server = f"https://127.0.0.1:{api_port}"
    audit_log = run_dir / "audit.log" if audit else None
    cp = ControlPlane(run_dir=run_dir, client=Client(server, pki), logs={}, audit_log=audit_log)
    try:
        etcd_url = f"http://127.0.0.1:{etcd_port}"
        start_process(
            cp,
            "etcd",
            [
                str(bins["ETCD"]),
                "--data-dir",
                str(run_dir / "etcd"),
                "--name",
                "test",
                "--listen-client-urls",
                etcd_url,
                "--advertise-client-urls",
                etcd_url,
                "--listen-peer-urls",
                f"http://127.0.0.1:{peer_port}",
                "--initial-advertise-peer-urls",
                f"http://127.0.0.1:{peer_port}",
                "--initial-cluster",
                f"test=http://127.0.0.1:{peer_port}",
                "--listen-metrics-urls",
                "",
                "--log-level",
                "warn",
                "--quota-backend-bytes",
                str(4 * 1024**3),
            ],
        )
        wait_for(cp, "etcd", lambda: urllib.request.urlopen(etcd_url + "/health", timeout=1).status == 200)
        start_process(
            cp,
            "kube-apiserver",
            [
                str(bins["KUBE_APISERVER"]),
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={api_port}",
                "--endpoint-reconciler-type=none",
                f"--etcd-servers={etcd_url}",
                f"--tls-cert-file={pki / 'apiserver.crt'}",
                f"--tls-private-key-file={pki / 'apiserver.key'}",
                f"--client-ca-file={pki / 'ca.crt'}",
                f"--token-auth-file={pki / 'tokens.csv'}",
                "--authorization-mode=Node,RBAC",
                "--service-account-issuer=https://127.0.0.1",
                f"--service-account-key-file={pki / 'sa.pub'}",
                f"--service-account-signing-key-file={pki / 'sa.key'}",
                "--service-cluster-ip-range=10.96.0.0/16",
                "--allow-privileged=true",
                f"--profiling={str(profiling).lower()}",
                f"--cert-dir={run_dir / 'apiserver-certs'}",
                *(
                    [
                        f"--audit-policy-file={_audit_policy(run_dir / 'audit-policy.yaml')}",
                        f"--audit-log-path={audit_log}",
                        "--audit-log-format=json",
                        "--audit-log-mode=blocking",
                    ]
                    if audit_log
                    else []
                ),
            ],
        )
        wait_for(cp, "kube-apiserver", lambda: cp.client.request("GET", "/readyz", timeout=2, raw=True) == "ok")
        kubeconfig = run_dir / "kubeconfig.json"
        _kubeconfig(kubeconfig, server, pki)
        cp.kubeconfig = kubeconfig
        start_process(
            cp,
            "kube-controller-manager",
            [
                str(bins["KUBE_CONTROLLER_MANAGER"]),
                f"--kubeconfig={kubeconfig}",
                "--bind-address=127.0.0.1",
                f"--secure-port={kcm_port}",
                "--leader-elect=false",
                "--use-service-account-credentials=false",
                "--controllers=garbage-collector-controller,namespace-controller,serviceaccount-controller,"
                "clusterrole-aggregation-controller,horizontal-pod-autoscaler-controller",
                # the HPA controller drives scale subresources (test_crossplane_autoscaling); 15 s by default
                "--horizontal-pod-autoscaler-sync-period=2s",
                f"--service-account-private-key-file={pki / 'sa.key'}",
                f"--root-ca-file={pki / 'ca.crt'}",
                f"--cert-dir={run_dir / 'kcm-certs'}",
            ],
        )
        wait_for(cp, "kube-controller-manager", lambda: (run_dir / "kube-controller-manager.log").stat().st_size > 0)
    except BaseException:
        cp.stop()
        raise
    return cp
