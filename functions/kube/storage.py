"""PersistentVolumeClaims of ``spec.pvcs`` (docs/upstream/operator.md §1.6, upstream ``reconcilePVC``).

``create: true`` composes the claim once; after that the claim Kubernetes holds is left as it is
(upstream never modifies an existing PVC), so the desired object repeats the observed spec.
``create: false`` names a claim that must already exist: the step asks for it as a required
resource and reports it when missing, creating nothing.
"""

from __future__ import annotations

from typing import Any

from functions.api.graph import SpecError
from functions.api.v1alpha1 import PVC

PVC_REQUIREMENT_PREFIX = "pvc-"
GRAPH_NAME_LABEL = "nvidia.com/dynamo-graph-deployment-name"


def graph_pvcs(xr: dict[str, Any]) -> list[PVC]:
    return [PVC.model_validate(p) for p in (xr.get("spec") or {}).get("pvcs") or []]


def pvc_resource_name(pvc_name: str) -> str:
    return f"pvc-{pvc_name}"


def render_pvc(pvc: PVC, graph_name: str, namespace: str, observed: dict[str, Any] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "accessModes": [pvc.volumeAccessMode],
        "resources": {"requests": {"storage": str(pvc.size)}},
        "storageClassName": pvc.storageClass,
    }
    if observed is not None:
        # Never modified after creation: keep what the claim was created with.
        current = observed.get("spec") or {}
        spec = {key: current[key] for key in ("accessModes", "resources", "storageClassName") if key in current}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": pvc.name, "namespace": namespace, "labels": {GRAPH_NAME_LABEL: graph_name}},
        "spec": spec,
    }


def required_pvc_names(pvcs: list[PVC]) -> list[str]:
    """The claims that must already exist (``create`` not true)."""
    return sorted(p.name for p in pvcs if not p.create)


def check_existing(pvcs: list[PVC], found: dict[str, list[dict[str, Any]]], namespace: str) -> None:
    """Raise a SpecError naming the first ``create: false`` claim that does not exist."""
    for index, pvc in enumerate(pvcs):
        if pvc.create:
            continue
        requirement = PVC_REQUIREMENT_PREFIX + pvc.name
        if requirement in found and not found[requirement]:
            raise SpecError(
                f"spec.pvcs[{index}]: PersistentVolumeClaim {namespace}/{pvc.name} does not exist and create is "
                "false; create it, or set create: true with size, storageClass and volumeAccessMode"
            )
