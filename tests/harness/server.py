"""Start the real ``function-dynamo serve`` process for a test, on a free loopback port."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import Iterator

import grpc

from fixtures.tooling import REPO
from harness.controlplane import stop_by_pid
from harness.poll import until


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serving(
    *args: str,
    env: dict[str, str] | None = None,
    ready_creds: grpc.ChannelCredentials | None = None,
) -> Iterator[str]:
    """Run the server with ``args`` (address added) until the block ends; yields ``host:port``."""
    address = f"127.0.0.1:{free_port()}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "functions.tooling.main", "serve", "--address", address, *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )

    def ready() -> bool:
        channel = grpc.secure_channel(address, ready_creds) if ready_creds else grpc.insecure_channel(address)
        try:
            grpc.channel_ready_future(channel).result(timeout=0.5)  # the wait between two looks
            return True
        finally:
            channel.close()

    def exited() -> str | None:
        if proc.poll() is None:
            return None
        return f"the server exited with {proc.returncode}: {proc.stdout.read().decode() if proc.stdout else ''}"

    try:
        until(f"the server on {address} ready", ready, 20, every=0, tolerate=(grpc.FutureTimeoutError,), stop=exited)
        yield address
    finally:
        stop_by_pid(proc)
