"""The ``GraphStatus`` step's Input: how often to re-run while pending and once ready."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

DEFAULT_PENDING_TTL = "15s"
DEFAULT_READY_TTL = "10m"  # contract.READY_TTL_SECONDS

# Go's time.ParseDuration without a sign: "0", or number+unit pairs ("1m30s", "1.5h", "500ms").
DURATION_PATTERN = r"^(0|([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+)$"
_DURATION = re.compile(DURATION_PATTERN)
_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ns|us|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


class InputError(ValueError):
    """A bad Input field; ``str()`` names it, e.g. ``input.pendingTTL: ...``."""


@dataclass(frozen=True)
class StatusInput:
    pending_ttl_seconds: int
    ready_ttl_seconds: int


def duration_seconds(text: str) -> float | None:
    """Seconds in a Go duration string (no sign), or None when it is not one."""
    if not _DURATION.match(text):
        return None
    return sum(float(number) * _UNIT_SECONDS[unit] for number, unit in _PART.findall(text))


def _ttl(input_obj: dict[str, Any], field: str, default: str) -> int:
    value = input_obj.get(field, default)
    seconds = duration_seconds(value) if isinstance(value, str) else None
    if seconds is None:
        raise InputError(
            f"input.{field}: {value!r} is not a duration; write a number with a unit (ns, us, ms, s, m, h), "
            "e.g. 15s or 1m30s"
        )
    return math.ceil(seconds)  # whole seconds, rounded up so that a sub-second TTL stays non-zero


def parse_status_input(input_obj: dict[str, Any]) -> StatusInput:
    return StatusInput(
        pending_ttl_seconds=_ttl(input_obj, "pendingTTL", DEFAULT_PENDING_TTL),
        ready_ttl_seconds=_ttl(input_obj, "readyTTL", DEFAULT_READY_TTL),
    )
