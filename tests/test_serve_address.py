"""``function-dynamo serve`` says where and how it listens, once, and refuses an address already in use.

gRPC binds with SO_REUSEPORT by default: a second server on a port in use would start beside the first, the kernel
would share connections between the two, and neither would say so. The real server runs as a subprocess on a free
loopback port; each is stopped by its PID.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc

from fixtures.tooling import REPO
from harness.controlplane import stop_by_pid
from harness.pki import issue, make_ca
from harness.server import free_port

START_SECONDS = 20


@contextmanager
def server(address: str, *args: str) -> Iterator[tuple[subprocess.Popen[str], dict[str, Any]]]:
    """The server on ``address`` until the block ends, and the log line saying where it listens; SIGTERM by PID."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "functions.tooling.main", "serve", "--address", address, *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield proc, listening_line(proc)
    finally:
        stop_by_pid(proc, seconds=15)


def listening_line(proc: subprocess.Popen[str]) -> dict[str, Any]:
    """The first JSON log line of ``proc`` whose message says it listens."""
    assert proc.stdout is not None
    deadline = time.monotonic() + START_SECONDS
    seen = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if not ready:
            continue
        line = proc.stdout.readline()
        if not line:
            break  # the server exited
        seen.append(line)
        if line.startswith("{") and json.loads(line).get("msg", "").startswith("listening on"):
            return json.loads(line)
    raise AssertionError(f"no 'listening on' log line within {START_SECONDS}s: {''.join(seen)}")


def test_a_second_server_on_an_address_in_use_exits_naming_it() -> None:
    address = f"127.0.0.1:{free_port()}"
    with server(address, "--insecure") as (first, _):
        second = subprocess.run(
            [sys.executable, "-m", "functions.tooling.main", "serve", "--insecure", "--address", address],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 1, second.stdout + second.stderr
        assert f"cannot serve on {address}: the address is in use" in second.stderr
        assert "listening on" not in second.stdout  # it never said it listens
        assert first.poll() is None  # the first one serves on
        with grpc.insecure_channel(address) as channel:
            grpc.channel_ready_future(channel).result(timeout=10)


def test_serve_logs_its_address_and_plaintext_once() -> None:
    address = f"127.0.0.1:{free_port()}"
    with server(address, "--insecure") as (proc, line):
        assert line["address"] == address
        assert line["tls"] == "insecure plaintext (no TLS)"
        assert line["msg"] == f"listening on {address} with insecure plaintext (no TLS)"
        os.kill(proc.pid, signal.SIGTERM)
        rest, _ = proc.communicate(timeout=15)
    assert "listening on" not in rest  # once


def test_serve_logs_mtls_and_its_certificate_directory(tmp_path: Path) -> None:
    make_ca(tmp_path, "test-ca")
    issue(tmp_path, "tls", "/CN=tls", "subjectAltName=IP:127.0.0.1")
    address = f"127.0.0.1:{free_port()}"
    with server(address, "--tls-certs-dir", str(tmp_path)) as (_, line):
        assert line["address"] == address
        assert line["tls"] == f"mTLS (certificates and CA from {tmp_path})"
