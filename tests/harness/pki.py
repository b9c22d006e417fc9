"""Test certificates with openssl: a CA, and certificates it signs (the API server's, clients', the function's)."""

from __future__ import annotations

import subprocess
from pathlib import Path

DAYS = "2"


def openssl(cwd: Path, *args: str) -> None:
    proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed: {proc.stderr.strip()}")


def make_ca(directory: Path, common_name: str) -> None:
    """``ca.crt`` and ``ca.key`` in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    openssl(directory, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
            "-days", DAYS, "-subj", f"/CN={common_name}")  # fmt: skip


def issue(directory: Path, name: str, subject: str, extensions: str) -> None:
    """``<name>.crt`` and ``<name>.key`` in ``directory``, signed by its ``ca.crt``/``ca.key``; ``extensions``
    are openssl extension lines (``subjectAltName=IP:127.0.0.1``, ``extendedKeyUsage=clientAuth``)."""
    (directory / f"{name}.ext").write_text(extensions.strip() + "\n")
    openssl(directory, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
            "-subj", subject)  # fmt: skip
    openssl(directory, "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", f"{name}.crt", "-days", DAYS, "-extfile", f"{name}.ext")  # fmt: skip
