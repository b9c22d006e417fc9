"""Where the tooling and the tests keep what they build once: ``$FUNCTION_DYNAMO_CACHE`` or
``~/.cache/function-dynamo``."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    env = os.environ.get("FUNCTION_DYNAMO_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "function-dynamo"
