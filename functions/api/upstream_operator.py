"""An XR the upstream Dynamo operator still reconciles is left to it.

Crossplane's XRD controller takes over a CRD of the same name that nobody controls, so a package installed beside
a running operator serves the operator's graphs as XRs. Composing them would fight the operator over the same
PodCliqueSets and Deployments; the function refuses instead, naming the way out (docs/migrate.md). The operator
marks every object it reconciles with its finalizer, which nothing of Crossplane's sets.
"""

from __future__ import annotations

from typing import Any

OPERATOR_FINALIZER = "nvidia.com/finalizer"


def operator_managed(xr: dict[str, Any]) -> str | None:
    """Why the function must not compose ``xr`` (None when it may)."""
    meta = xr.get("metadata")
    finalizers = meta.get("finalizers") if isinstance(meta, dict) else None
    if not isinstance(finalizers, list) or OPERATOR_FINALIZER not in finalizers:
        return None  # a malformed metadata is the steps' to name
    where = f"{meta.get('namespace')}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
    return (
        f"{xr.get('kind')} {where} carries the upstream Dynamo operator's finalizer {OPERATOR_FINALIZER}: the "
        "operator manages it, and composing it here would fight the operator over its pods. Stop the operator and "
        "move the graph over with `function-dynamo migrate release` (docs/migrate.md), or uninstall this package"
    )
