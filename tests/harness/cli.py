"""kubectl and ``function-dynamo`` run as a person runs them, against a test control plane (its kubeconfig in
``KUBECONFIG``, the checkout's ``functions`` on the path)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fixtures.tooling import REPO
from harness.controlplane import ControlPlane


def _env(cp: ControlPlane) -> dict[str, str]:
    return {**os.environ, "KUBECONFIG": str(cp.kubeconfig), "PYTHONPATH": str(REPO)}


def kubectl(cp: ControlPlane, binary: Path, *args: str, stdin: str | None = None) -> str:
    """``kubectl ARGS`` (the binary ``binary``) against the control plane; its stdout, asserting it succeeded."""
    proc = subprocess.run([str(binary), *args], input=stdin, capture_output=True, text=True, env=_env(cp), timeout=180)
    assert proc.returncode == 0, f"kubectl {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def migrate(cp: ControlPlane, binary: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``function-dynamo migrate ...`` as a person runs it (the test's kubectl named, as --kubectl does)."""
    argv = [sys.executable, "-m", "functions.tooling.main", "migrate", *args, "--kubectl", str(binary)]
    return subprocess.run(argv, capture_output=True, text=True, env=_env(cp), timeout=600, cwd=REPO)
