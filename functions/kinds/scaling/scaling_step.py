"""Pipeline step ``ScalingAdapter``: the status of a DynamoGraphDeploymentScalingAdapter XR.

The adapter composes nothing. The DGD that composed it reads its ``spec.replicas`` (see
``functions.kinds.scaling.scaling_adapters``); this step only writes the XR status as upstream's adapter
controller does, and marks the XR ready:

- ``replicas``: ``spec.replicas``;
- ``selector``: ``nvidia.com/dynamo-graph-deployment-name=<dgd>,nvidia.com/dynamo-component=<component>``,
  the label selector of the component's pods;
- ``lastScaleTime``: when the replicas last changed.

Upstream stamps ``lastScaleTime`` with the controller's clock. A function must be deterministic
(same request, same response), so it takes the time from Crossplane instead: when ``spec.replicas``
differs from the observed ``status.replicas`` the step returns the condition ``Scaled`` with the
message ``scaled to <n> replicas``, and Crossplane stamps its ``lastTransitionTime`` because the
message changed (it keeps the time while type, status, reason and message stay the same). The
next run copies that time into ``lastScaleTime``; until then the previous value is kept. The
step asks to be run again soon while the stamp is pending. A Normal result (an event on the XR,
as upstream's ``Scaled`` event) reports each change once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from functions.api import v1alpha1, v1beta1
from functions.api.graph import SpecError
from functions.api.normalise import CROSSPLANE_SPEC_KEYS
from functions.api.schema_check import check_xr_spec, spec_schema_file
from functions.contract import Condition, Result, StepRequest, StepResponse, fatal
from functions.kinds.scaling.scaling_adapters import adapter_selector

SCALED = "Scaled"
SPEC_SCHEMA = spec_schema_file(Path(__file__).parent)  # the XRD's spec schema, checked first
STAMP_TTL_SECONDS = 5  # how soon to run again while Crossplane's time stamp of a scale is pending


@dataclass(frozen=True)
class AdapterSpec:
    dgd: str
    component: str
    replicas: int


def adapter_spec(xr: dict[str, Any]) -> AdapterSpec:
    """The adapter's spec in either version's shape (``dgdRef.serviceName`` or ``dgdRef.componentName``)."""
    raw = xr.get("spec")
    if not isinstance(raw, dict):
        raise SpecError("spec: required")
    spec = {k: v for k, v in raw.items() if k not in CROSSPLANE_SPEC_KEYS}
    ref = spec.get("dgdRef")
    alpha = isinstance(ref, dict) and "serviceName" in ref and "componentName" not in ref
    try:
        if alpha:
            parsed_a = v1alpha1.DynamoGraphDeploymentScalingAdapterSpec.model_validate(spec)
            return AdapterSpec(parsed_a.dgdRef.name, parsed_a.dgdRef.serviceName, parsed_a.replicas)
        parsed_b = v1beta1.DynamoGraphDeploymentScalingAdapterSpec.model_validate(spec)
        return AdapterSpec(parsed_b.dgdRef.name, parsed_b.dgdRef.componentName, parsed_b.replicas)
    except ValidationError as exc:
        lines = []
        for err in exc.errors(include_url=False):
            path = "spec" + "".join(f"[{loc}]" if isinstance(loc, int) else f".{loc}" for loc in err["loc"])
            lines.append(f"{path}: {err['msg']}")
        raise SpecError("; ".join(lines)) from None


def scaled_message(replicas: int) -> str:
    return f"scaled to {replicas} replicas"


def _observed_replicas(status: dict[str, Any]) -> int | None:
    value = status.get("replicas")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _observed_condition(status: dict[str, Any]) -> dict[str, Any] | None:
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return None
    return next((c for c in conditions if isinstance(c, dict) and c.get("type") == SCALED), None)


@dataclass(frozen=True)
class AdapterStatus:
    status: dict[str, Any]
    condition: Condition | None  # Scaled, to (re-)emit
    scaled_from: int | None  # the previous replicas when this run saw them change
    stamp_pending: bool  # the returned Scaled condition is new: Crossplane stamps it after this run


def adapter_status(spec: AdapterSpec, observed_status: dict[str, Any]) -> AdapterStatus:
    previous = _observed_replicas(observed_status)
    observed = _observed_condition(observed_status)
    message = scaled_message(spec.replicas)
    scaled_now = previous is not None and previous != spec.replicas
    condition: Condition | None = None
    if scaled_now:
        condition = Condition(SCALED, "True", SCALED, message)
    elif observed is not None:
        condition = Condition(
            SCALED,
            str(observed.get("status") or "Unknown"),  # type: ignore[arg-type]
            str(observed.get("reason") or SCALED),
            str(observed.get("message") or ""),
        )
    status: dict[str, Any] = {"replicas": spec.replicas, "selector": adapter_selector(spec.dgd, spec.component)}
    stamped = (
        observed is not None
        and observed.get("reason") == SCALED
        and observed.get("message") == message
        and isinstance(observed.get("lastTransitionTime"), str)
    )
    if stamped:
        status["lastScaleTime"] = observed["lastTransitionTime"]  # type: ignore[index]
    elif isinstance(observed_status.get("lastScaleTime"), str):
        status["lastScaleTime"] = observed_status["lastScaleTime"]
    return AdapterStatus(
        status=dict(sorted(status.items())),
        condition=condition,
        scaled_from=previous if scaled_now else None,
        stamp_pending=scaled_now and not stamped,
    )


def scaling_adapter(req: StepRequest) -> StepResponse:
    try:
        check_xr_spec(req.observed_composite, SPEC_SCHEMA)
        spec = adapter_spec(req.observed_composite)
    except SpecError as err:
        return fatal(str(err), reason="InvalidSpec")
    observed_status = req.observed_composite.get("status")
    result = adapter_status(spec, observed_status if isinstance(observed_status, dict) else {})
    results = []
    if result.scaled_from is not None:
        results.append(
            Result(
                "normal",
                f"scaled component {spec.component} of DynamoGraphDeployment {spec.dgd} "
                f"from {result.scaled_from} to {spec.replicas} replicas",
                reason=SCALED,
            )
        )
    response = StepResponse(
        desired_resources={},
        composite_status=result.status,
        composite_ready=True,
        results=results,
        conditions=[result.condition] if result.condition else [],
    )
    if result.stamp_pending:
        response.ttl_seconds = STAMP_TTL_SECONDS
    return response
