"""Which inference backend a worker runs (docs/upstream/operator.md §1.3, upstream ``graph.go`` detection helpers).

Upstream facts used here (``deploy/operator/internal/dynamo/graph.go``):

* detection joins the main container's command and args with spaces and looks for ``python… -m …dynamo.<backend>``
  with no shell operator (``|``, ``&``, ``;``) in between, so a ``/bin/sh -c "…"`` string is searched too;
* only worker, prefill and decode components get a backend; every other type is ``noop``;
* a detected backend wins over the DGD's ``spec.backendFramework``; both set and different is an error;
* several different detections are an error **unless** ``spec.backendFramework`` is set, in which case the declared
  value is used (the detection error is only reported when there is nothing to fall back on);
* neither detected nor declared gives ``noop``.
"""

from __future__ import annotations

import re
from typing import Any

from functions.kube.backends.errors import BackendError

BACKENDS = ("vllm", "sglang", "trtllm")
NOOP = "noop"
WORKER_TYPES = frozenset({"worker", "prefill", "decode"})

# python, python3, python3.11 … then, without crossing a shell operator, "-m" and the dynamo.<backend> module.
_DETECTORS = {name: re.compile(r"python[0-9.]*\s+[^|&;]*?-m\s+[^|&;]*?dynamo\." + name) for name in BACKENDS}


def command_line(container: dict[str, Any]) -> str:
    """The container's command and args as one space-separated string."""
    return " ".join([*(container.get("command") or []), *(container.get("args") or [])])


def detect_backend(container: dict[str, Any]) -> str | None:
    """The backend named by the container's ``python -m dynamo.<backend>`` launch, or None when there is none."""
    line = command_line(container)
    found = [name for name, pattern in _DETECTORS.items() if pattern.search(line)]
    if len(found) > 1:
        raise BackendError(f"multiple backend frameworks detected from command ({', '.join(found)}) in {line!r}")
    return found[0] if found else None


def resolve_backend(component_type: str | None, container: dict[str, Any], declared: str | None) -> str:
    """The backend used to render a component: detected, else declared, else ``noop``."""
    if component_type not in WORKER_TYPES:
        return NOOP
    detected: str | None = None
    detection_error: BackendError | None = None
    try:
        detected = detect_backend(container)
    except BackendError as err:
        detection_error = err
    if declared and declared not in (*BACKENDS, NOOP):
        raise BackendError(f"unsupported backend framework {declared!r} (valid values: {', '.join(BACKENDS)})")
    if detected and declared and detected != declared:
        raise BackendError(
            f"backend framework mismatch: detected {detected!r} from the command but spec.backendFramework is "
            f"{declared!r}"
        )
    if detected:
        return detected
    if declared:
        return declared
    if detection_error is not None:
        raise BackendError(f"could not determine backend framework: {detection_error}") from detection_error
    return NOOP
