"""Wait until the multinode leader accepts connections on its master port.

Runs as the ``wait-for-leader-mp`` init container of vLLM multiprocessing worker pods. Reads ``LEADER_HOST`` and
``LEADER_PORT`` from the environment, resolves the host, and, when the pod's service account can list pods, makes
sure the address belongs to a running pod that is not being deleted (so a stale leader is not mistaken for the new
one). It exits 0 once a TCP connection to the port succeeds. Standard library only.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import sys
import time
import urllib.parse
import urllib.request

SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
API_SERVER = "https://kubernetes.default.svc"
POLL_SECONDS = 5.0
REPORT_SECONDS = 30.0


def resolve(host: str) -> str | None:
    try:
        return socket.gethostbyname(host)
    except OSError:
        return None


def _read(name: str) -> str:
    with open(os.path.join(SERVICE_ACCOUNT, name), encoding="utf-8") as handle:
        return handle.read().strip()


def pod_problem(pods: list[dict], address: str) -> str | None:
    """Why the pod list for ``address`` does not show a usable leader (None when it does)."""
    if not pods:
        return f"no pod has address {address} yet"
    metadata = pods[0].get("metadata") or {}
    name = metadata.get("name", "?")
    if metadata.get("deletionTimestamp"):
        return f"pod {name} at {address} is terminating"
    phase = (pods[0].get("status") or {}).get("phase")
    if phase != "Running":
        return f"pod {name} at {address} is {phase}"
    return None


def leader_pod_problem(address: str) -> str | None:
    """Ask the API server about the pod at ``address``; None when it looks fine or the API cannot be asked."""
    try:
        token = _read("token")
        namespace = _read("namespace")
        selector = urllib.parse.quote(f"status.podIP={address}")
        request = urllib.request.Request(
            f"{API_SERVER}/api/v1/namespaces/{namespace}/pods?fieldSelector={selector}",
            headers={"Authorization": f"Bearer {token}"},
        )
        context = ssl.create_default_context(cafile=os.path.join(SERVICE_ACCOUNT, "ca.crt"))
        with urllib.request.urlopen(request, context=context, timeout=5) as response:
            pods = json.load(response).get("items") or []
    except Exception:  # no token, no RBAC, API down: rely on the TCP check alone
        return None
    return pod_problem(pods, address)


def port_open(address: str, port: int) -> bool:
    try:
        with socket.create_connection((address, port), timeout=2):
            return True
    except OSError:
        return False


def main() -> int:
    host = os.environ["LEADER_HOST"]
    port = int(os.environ["LEADER_PORT"])
    print(f"waiting for the leader at {host}:{port}", flush=True)
    started = last_report = time.monotonic()
    while True:
        address = resolve(host)
        if address is None:
            reason = f"{host} does not resolve yet"
        else:
            reason = leader_pod_problem(address)
            if reason is None:
                if port_open(address, port):
                    print(f"leader {host}:{port} ({address}) is up after {time.monotonic() - started:.1f}s", flush=True)
                    return 0
                reason = f"{address}:{port} refuses connections"
        now = time.monotonic()
        if now - last_report >= REPORT_SECONDS:
            print(f"still waiting after {now - started:.0f}s: {reason}", flush=True)
            last_report = now
        time.sleep(POLL_SECONDS)


if __name__ == "__main__":
    sys.exit(main())
