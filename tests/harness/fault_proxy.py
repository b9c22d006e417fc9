"""A fault-injecting TCP proxy on 127.0.0.1, run as a process of its own (stopped by its PID like every server
the tests start) in front of the function's gRPC server:

    python tests/harness/fault_proxy.py --upstream 127.0.0.1:PORT --port-file FILE

Its mode is switched by signal, so a test needs no control channel:

- ``pass`` (SIGHUP; the start): every connection is forwarded to ``--upstream`` byte for byte (the TLS of
  Crossplane's mTLS session passes through untouched: the proxy holds no key);
- ``error`` (SIGUSR1): a connection is closed as soon as it is accepted, as a server that is down or refuses;
- ``hang`` (SIGUSR2): a connection is accepted and held, nothing read or answered, as a server that hangs.

Each switch closes the connections of the previous mode, so a client's open HTTP/2 connection does not carry it
through a fault. Every switch and connection is logged (stdout) with the time.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from types import FrameType

MODES = {signal.SIGHUP: "pass", signal.SIGUSR1: "error", signal.SIGUSR2: "hang"}
SIGNALS = {mode: sig for sig, mode in MODES.items()}


def _log(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {message}", flush=True)


class Proxy:
    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.mode = "pass"
        self.lock = threading.Lock()
        self.open: list[socket.socket] = []  # the sockets of the current mode's connections
        self.counts = {"pass": 0, "error": 0, "hang": 0}

    def switch(self, mode: str) -> None:
        with self.lock:
            self.mode, stale, self.open = mode, self.open, []
        for sock in stale:
            _close(sock)
        _log(f"mode {mode} ({len(stale)} connection(s) of the previous mode closed; so far {self.counts})")

    def serve(self, listener: socket.socket) -> None:
        while True:
            conn, _ = listener.accept()
            with self.lock:
                mode = self.mode
                self.counts[mode] += 1
            if mode == "error":
                _close(conn)
            elif mode == "hang":
                with self.lock:
                    self.open.append(conn)
            else:
                threading.Thread(target=self._forward, args=(conn,), daemon=True).start()

    def _forward(self, conn: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self.upstream, timeout=5)
        except OSError as err:
            _log(f"upstream {self.upstream} refused a connection: {err}")
            _close(conn)
            return
        upstream.settimeout(None)
        with self.lock:
            self.open += [conn, upstream]
        threading.Thread(target=_pump, args=(upstream, conn), daemon=True).start()
        _pump(conn, upstream)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


def _pump(source: socket.socket, target: socket.socket) -> None:
    """Bytes from ``source`` to ``target`` until either end closes; then both are closed."""
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        _close(source)
        _close(target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", required=True, help="host:port to forward to")
    parser.add_argument("--port-file", required=True, type=Path, help="written with the port listened on")
    args = parser.parse_args()
    host, port = args.upstream.rsplit(":", 1)
    proxy = Proxy((host, int(port)))

    def on_signal(sig: int, _frame: FrameType | None) -> None:
        proxy.switch(MODES[signal.Signals(sig)])

    for sig in MODES:
        signal.signal(sig, on_signal)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    threading.Thread(target=proxy.serve, args=(listener,), daemon=True).start()
    args.port_file.write_text(str(listener.getsockname()[1]))
    _log(f"listening on 127.0.0.1:{listener.getsockname()[1]}, forwarding to {args.upstream}")
    while True:  # signals are handled in this thread
        signal.pause()


if __name__ == "__main__":
    sys.exit(main())
