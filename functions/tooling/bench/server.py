"""The server under test: ``function-dynamo serve --insecure`` as a subprocess on loopback, and its memory."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import grpc

from functions.tooling.bench.model import REPO_ROOT, SERVER_START_SECONDS, BenchError


@dataclass(frozen=True)
class Server:
    address: str
    pid: int


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(proc: subprocess.Popen[bytes], address: str, log: IO[bytes]) -> None:
    deadline = time.monotonic() + SERVER_START_SECONDS
    while True:
        if proc.poll() is not None:
            log.seek(0)
            raise BenchError(f"the server exited with {proc.returncode}: {log.read().decode(errors='replace')}")
        with grpc.insecure_channel(address) as channel:
            try:
                grpc.channel_ready_future(channel).result(timeout=0.5)
                return
            except grpc.FutureTimeoutError:
                if time.monotonic() > deadline:
                    raise BenchError(
                        f"the server on {address} was not ready after {SERVER_START_SECONDS:.0f}s"
                    ) from None


@contextlib.contextmanager
def running_server() -> Iterator[Server]:
    """``function-dynamo serve --insecure`` on a free loopback port, for the duration of the block."""
    address = f"127.0.0.1:{free_port()}"
    command = [sys.executable, "-m", "functions.tooling.main", "serve", "--insecure", "--address", address]
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(command, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_ready(proc, address, log)
            yield Server(address=address, pid=proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def proc_status_mb(pid: int, field: str) -> float | None:
    """A ``kB`` field of /proc/<pid>/status (VmHWM: peak RSS, VmRSS: current RSS) in MiB."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return None


def reset_peak_rss(pid: int) -> bool:
    """Reset the process' VmHWM to its current RSS (Linux >= 4.0); False where not allowed."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True
