"""Where the tooling and the tests keep what they build once: ``$FUNCTION_DYNAMO_CACHE`` or
``~/.cache/function-dynamo``."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    env = os.environ.get("FUNCTION_DYNAMO_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "function-dynamo"


def keep(path: Path, data: bytes) -> None:
    """Write a cache entry whole or not at all (another process may read it meanwhile). Where the cache
    directory cannot be written, nothing is kept and the next process derives the entry again."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(data)
        partial.replace(path)
    except OSError:
        pass
