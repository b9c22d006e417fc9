"""The external metrics API (``external.metrics.k8s.io/v1beta1``), played: what KEDA or a Prometheus adapter
serves to the HorizontalPodAutoscaler controller, here from a JSON file the test writes (metric name -> value).

Run as its own process (stopped by PID with the control plane), HTTPS on 127.0.0.1 only::

    python tests/harness/metrics_play.py --cert tls.crt --key tls.key --values values.json --port-file port

The kube-apiserver reaches it through an APIService whose Service is ``ExternalName: localhost``.
"""

from __future__ import annotations

import argparse
import json
import ssl
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

GROUP_VERSION = "external.metrics.k8s.io/v1beta1"
PREFIX = f"/apis/{GROUP_VERSION}"


def _handler(values: Path) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, code: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0].rstrip("/")
            if path == PREFIX:
                resource = {"name": "externalmetrics", "singularName": "", "namespaced": True,
                            "kind": "ExternalMetricValueList", "verbs": ["get"]}  # fmt: skip
                self._send(200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": GROUP_VERSION,
                                 "resources": [resource]})  # fmt: skip
                return
            parts = path.removeprefix(PREFIX + "/").split("/")
            if path.startswith(PREFIX + "/namespaces/") and len(parts) == 3:
                metric = parts[2]
                current = json.loads(values.read_text()) if values.exists() else {}
                if metric not in current:
                    self._send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
                                     "reason": "NotFound", "message": f"no metric {metric}"})  # fmt: skip
                    return
                now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                item = {"metricName": metric, "metricLabels": {}, "timestamp": now, "value": str(current[metric])}
                self._send(200, {"kind": "ExternalMetricValueList", "apiVersion": GROUP_VERSION,
                                 "metadata": {}, "items": [item]})  # fmt: skip
                return
            self._send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
                             "reason": "NotFound", "message": path})  # fmt: skip

        def log_message(self, format: str, *args: object) -> None:
            print(format % args, flush=True)

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--values", required=True, type=Path)
    parser.add_argument("--port-file", required=True, type=Path)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(args.values))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    args.port_file.write_text(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
