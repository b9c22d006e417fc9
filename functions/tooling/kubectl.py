"""kubectl as the CLI's way into a cluster: the user's kubeconfig, context and credentials, nothing of our own."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from typing import Any

import click


class KubectlError(click.ClickException):
    pass


@dataclass(frozen=True)
class Kubectl:
    binary: str = "kubectl"
    context: str | None = None
    kubeconfig: str | None = None  # kubectl's own default (KUBECONFIG, ~/.kube/config) when None

    def _argv(self, args: list[str]) -> list[str]:
        where = [
            *(["--kubeconfig", self.kubeconfig] if self.kubeconfig else []),
            *(["--context", self.context] if self.context else []),
        ]
        return [self.binary, *where, *args]

    def run(self, args: list[str], stdin: str | None = None) -> str:
        argv = self._argv(args)
        try:
            proc = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120)
        except FileNotFoundError:
            raise KubectlError(f"{self.binary} not found: install kubectl or pass --kubectl PATH") from None
        if proc.returncode != 0:
            raise KubectlError(f"`{' '.join(argv)}` failed: {proc.stderr.strip() or proc.stdout.strip()}")
        return proc.stdout

    def json(self, args: list[str]) -> Any:
        out = self.run([*args, "-o", "json"])
        return json.loads(out) if out.strip() else None

    def items(self, resource: str, namespace: str | None = None) -> list[dict[str, Any]] | None:
        """Every object of ``resource`` (in ``namespace``, or in all); None when the cluster does not serve it."""
        where = ["-n", namespace] if namespace else ["-A"]
        try:
            return list((self.json(["get", resource, *where]) or {}).get("items") or [])
        except KubectlError as err:
            if "the server doesn't have a resource type" in err.message:
                return None
            raise

    def get(self, resource: str, name: str, namespace: str) -> dict[str, Any] | None:
        got = self.json(["get", resource, name, "-n", namespace, "--ignore-not-found"])
        return got or None


def resource_of(obj: dict[str, Any]) -> str:
    """kubectl's fully qualified name of an object's type: ``<kind>.<version>.<group>``, or the core kind."""
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    kind = str(obj.get("kind", "")).lower()
    return f"{kind}.{version}.{group}" if group else kind
