"""The gRPC FunctionRunnerService: protobuf in, plain dicts to the step, protobuf out.

This is the only module that touches protobuf messages.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import grpc
from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from google.protobuf import json_format, struct_pb2

from functions.step import StepRequest, StepResponse
from functions.steps import INPUT_API_VERSION, STEPS, step_for_input

_SEVERITY = {
    "fatal": fnv1.SEVERITY_FATAL,
    "warning": fnv1.SEVERITY_WARNING,
    "normal": fnv1.SEVERITY_NORMAL,
}
_STATUS = {
    "True": fnv1.STATUS_CONDITION_TRUE,
    "False": fnv1.STATUS_CONDITION_FALSE,
    "Unknown": fnv1.STATUS_CONDITION_UNKNOWN,
}


def _integral(value: Any) -> Any:
    """protobuf Structs carry every number as a double; give integral ones back their int type."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


def struct_to_dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    return _integral(json_format.MessageToDict(struct))


def step_request(req: fnv1.RunFunctionRequest) -> StepRequest:
    required: dict[str, list[dict[str, Any]]] = {}
    for name, resources in req.extra_resources.items():
        required[name] = [struct_to_dict(r.resource) for r in resources.items]
    for name, resources in req.required_resources.items():
        required[name] = [struct_to_dict(r.resource) for r in resources.items]
    return StepRequest(
        input=struct_to_dict(req.input),
        observed_composite=struct_to_dict(req.observed.composite.resource),
        observed_resources={n: struct_to_dict(r.resource) for n, r in req.observed.resources.items()},
        desired_composite=struct_to_dict(req.desired.composite.resource),
        desired_resources={n: struct_to_dict(r.resource) for n, r in req.desired.resources.items()},
        required=required,
        context=struct_to_dict(req.context),
    )


def apply_step_response(rsp: fnv1.RunFunctionResponse, result: StepResponse) -> None:
    for item in result.results:
        result_msg = fnv1.Result(severity=_SEVERITY[item.severity], message=item.message)
        if item.reason:
            result_msg.reason = item.reason
        rsp.results.append(result_msg)
    if result.fatal:
        # Crossplane stops the pipeline and keeps what exists; the desired state we were given
        # passes through untouched.
        return
    for name, desired in sorted(result.desired_resources.items()):
        target = rsp.desired.resources[name]
        target.resource.Clear()
        target.resource.update(desired.resource)
        if desired.ready is not None:
            target.ready = fnv1.READY_TRUE if desired.ready else fnv1.READY_FALSE
    if result.composite_status is not None:
        status = rsp.desired.composite.resource.get_or_create_struct("status")
        status.Clear()
        status.update(result.composite_status)
    if result.composite_ready is not None:
        rsp.desired.composite.ready = fnv1.READY_TRUE if result.composite_ready else fnv1.READY_FALSE
    for cond in result.conditions:
        condition = fnv1.Condition(
            type=cond.type, status=_STATUS[cond.status], reason=cond.reason, target=fnv1.TARGET_COMPOSITE_AND_CLAIM
        )
        if cond.message:
            condition.message = cond.message
        rsp.conditions.append(condition)
    for name, sel in sorted(result.requirements.items()):
        selector = fnv1.ResourceSelector(api_version=sel.api_version, kind=sel.kind)
        if sel.match_name is not None:
            selector.match_name = sel.match_name
        else:
            selector.match_labels.labels.update(sel.match_labels or {})
        if sel.namespace:
            selector.namespace = sel.namespace
        rsp.requirements.resources[name].CopyFrom(selector)


def run(req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
    """Run the step the request's Input selects. Pure apart from protobuf conversion."""
    input_obj = struct_to_dict(req.input)
    step = step_for_input(input_obj)
    if step is None:
        rsp = response.to(req)
        response.fatal(
            rsp,
            f"input: unknown step {input_obj.get('apiVersion')}/{input_obj.get('kind')}; expected apiVersion "
            f"{INPUT_API_VERSION} with kind one of {', '.join(sorted(STEPS))}",
        )
        return rsp
    result = step(step_request(req))
    rsp = response.to(req, ttl=timedelta(seconds=result.ttl_seconds))
    apply_step_response(rsp, result)
    return rsp


class FunctionRunner(grpcv1.FunctionRunnerServiceServicer):
    """The servicer registered by ``crossplane.function.runtime.serve``."""

    async def RunFunction(
        self, req: fnv1.RunFunctionRequest, _: grpc.aio.ServicerContext | None = None
    ) -> fnv1.RunFunctionResponse:
        try:
            return run(req)
        except Exception as exc:  # a bug must become a Fatal result, never a dropped connection
            rsp = response.to(req)
            response.fatal(rsp, f"internal error in function-dynamo: {type(exc).__name__}: {exc}")
            return rsp
