"""Field paths in the ``spec.services.Worker.replicas`` / ``spec.list[0]`` style."""

from __future__ import annotations

import re

ROOT = "<root>"
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def child(path: str, key: str) -> str:
    """Path of property or map key ``key`` below ``path``."""
    if not _PLAIN_KEY.match(key):
        return f"{'' if path == ROOT else path}[{key}]"
    return key if path == ROOT else f"{path}.{key}"


def index(path: str, i: int) -> str:
    return f"{'' if path == ROOT else path}[{i}]"


def from_parts(parts: list[str | int]) -> str:
    path = ROOT
    for part in parts:
        path = index(path, part) if isinstance(part, int) else child(path, str(part))
    return path
