"""A DynamoGraphDeploymentRequest of either shape as the v1beta1 hub, and the hub status as v1alpha1's, following
upstream's conversion (docs/upstream/checkpoint-gms-dgdr-model.md §4.6).

Upstream converts through a webhook and keeps what the other version cannot hold in two annotations; here the XR
holds what the user wrote (one union schema), so nothing needs keeping: the function reads the v1alpha1 fields
the hub has no place for (``profilingConfig.configMapRef``, ``profilingConfig.outputPVC``,
``enableGpuDiscovery``) from the spec itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from functions.api.graph import SpecError
from functions.api.normalise import CROSSPLANE_SPEC_KEYS, validation_error
from functions.kinds.request.request_api import (
    DynamoGraphDeploymentRequestSpec,
    DynamoGraphDeploymentRequestSpecV1alpha1,
)

# Top-level fields only one version has; v1alpha1 requires profilingConfig, so its presence tells them apart.
V1ALPHA1_ONLY = ("deploymentOverrides", "enableGpuDiscovery", "profilingConfig", "useMocker")
V1BETA1_ONLY = ("features", "hardware", "image", "modelCache", "overrides", "searchStrategy", "sla", "workload")
PROFILER_CONTAINER = "profiler"


@dataclass(frozen=True)
class AlphaExtras:
    """What a v1alpha1 DGDR asks of the profiling Job that the hub has no field for."""

    config_map: tuple[str, str] | None = None  # (name, key) of profilingConfig.configMapRef
    output_pvc: str | None = None
    gpu_discovery: bool = True


@dataclass(frozen=True)
class HubSpec:
    shape: str  # "v1alpha1" or "v1beta1": which version's fields the manifest uses
    spec: dict[str, Any]  # the v1beta1 spec, CRD defaults applied
    alpha: AlphaExtras = AlphaExtras()


def request_shape(spec: dict[str, Any]) -> str:
    return "v1alpha1" if any(k in spec for k in V1ALPHA1_ONLY) else "v1beta1"


def _hub(raw: dict[str, Any], path: str = "spec") -> dict[str, Any]:
    try:
        parsed = DynamoGraphDeploymentRequestSpec.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(exc, path) from None
    return parsed.model_dump(mode="json", exclude_none=True)


def _number(config: dict[str, Any], section: str, key: str) -> float | int | None:
    value = (config.get(section) or {}).get(key) if isinstance(config.get(section), dict) else None
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SpecError(f"spec.profilingConfig.config.{section}.{key}: must be a number, not {value!r}")
    return value


def _from_profiling_config(config: dict[str, Any], hub: dict[str, Any]) -> None:
    """The typed parts of v1alpha1's free-form ``profilingConfig.config`` (sla, workload, model cache, planner)."""
    sla = {k: v for k in ("ttft", "itl") if (v := _number(config, "sla", k)) is not None}
    optimization = (config.get("sla") or {}).get("optimizationType") if isinstance(config.get("sla"), dict) else None
    if optimization is not None:
        sla["optimizationType"] = optimization
    if sla:
        hub["sla"] = sla
    workload = {k: int(v) for k in ("isl", "osl") if (v := _number(config, "sla", k)) is not None}
    if workload:
        hub["workload"] = workload
    cache = (
        ((config.get("deployment") or {}).get("modelCache") or {}) if isinstance(config.get("deployment"), dict) else {}
    )
    renamed = {"pvcName": "pvcName", "modelPathInPvc": "pvcModelPath", "pvcMountPath": "pvcMountPath"}
    model_cache = {ours: cache[theirs] for theirs, ours in renamed.items() if cache.get(theirs)}
    if model_cache:
        hub["modelCache"] = model_cache
    if config.get("planner"):
        hub.setdefault("features", {})["planner"] = config["planner"]


def hub_from_v1alpha1(spec: DynamoGraphDeploymentRequestSpecV1alpha1) -> HubSpec:
    hub: dict[str, Any] = {"model": spec.model, "backend": spec.backend, "autoApply": spec.autoApply}
    if spec.runtimeVersionOverride:
        hub["runtimeVersionOverride"] = spec.runtimeVersionOverride
    if spec.useMocker:
        hub["features"] = {"mocker": {"enabled": True}}
    profiling = spec.profilingConfig
    # deploymentOverrides.workersImage, then profilerImage over it; neither: the default image (request_step)
    hub["image"] = profiling.profilerImage or (
        spec.deploymentOverrides.workersImage if spec.deploymentOverrides else None
    )
    _from_profiling_config(profiling.config or {}, hub)
    pod: dict[str, Any] = {}
    if profiling.resources:
        pod["containers"] = [{"name": PROFILER_CONTAINER, "resources": profiling.resources}]
    if profiling.tolerations:
        pod["tolerations"] = profiling.tolerations
    if profiling.nodeSelector:
        pod["nodeSelector"] = profiling.nodeSelector
    if pod:
        hub["overrides"] = {"profilingJob": {"template": {"spec": pod}}}
    ref = profiling.configMapRef
    extras = AlphaExtras(
        config_map=(ref.name, ref.key) if ref else None,
        output_pvc=profiling.outputPVC or None,
        gpu_discovery=spec.enableGpuDiscovery,
    )
    return HubSpec("v1alpha1", _hub(hub), extras)


def hub_spec(xr: dict[str, Any]) -> HubSpec:
    """The XR's spec (either shape) as the v1beta1 hub; raises ``SpecError`` naming the field."""
    raw = {k: v for k, v in (xr.get("spec") or {}).items() if k not in CROSSPLANE_SPEC_KEYS}
    if request_shape(raw) == "v1beta1":
        return HubSpec("v1beta1", _hub(raw))
    try:
        alpha = DynamoGraphDeploymentRequestSpecV1alpha1.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(exc, "spec") from None
    return hub_from_v1alpha1(alpha)


# --- status, hub -> v1alpha1 ----------------------------------------------------------------------------------------

ALPHA_STATES = {"Pending": "Pending", "Profiling": "Profiling", "Deploying": "Deploying", "Ready": "Ready"}
ALPHA_DGD_STATES = {"successful": "successful", "failed": "failed", "pending": "pending"}


def v1alpha1_status(
    status: dict[str, Any], backend: str, namespace: str, dgd_state: str | None, dgd_observed: bool
) -> dict[str, Any]:
    """v1alpha1's status fields for the hub ``status``, beside it (one object serves both versions).

    Deployed reads as ``Ready`` (lossy, as upstream); ``profilingResults`` (a string in v1alpha1, an object in
    v1beta1) is the hub's only."""
    phase = status.get("phase") or "Pending"
    out: dict[str, Any] = {
        "state": ALPHA_STATES.get(phase, "Ready" if phase == "Deployed" else phase),
        "backend": backend,
    }
    if phase == "Failed":
        out["state"] = "Failed"
    selected = (status.get("profilingResults") or {}).get("selectedConfig")
    if selected:
        out["generatedDeployment"] = selected
    if status.get("dgdName"):
        out["deployment"] = {
            "name": status["dgdName"],
            "namespace": namespace,
            "created": dgd_observed,
            "state": ALPHA_DGD_STATES.get(dgd_state or "", "initializing" if not dgd_observed else "pending"),
        }
    return out
