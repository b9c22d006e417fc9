"""A RunFunctionRequest in, plain dicts to the step, a RunFunctionResponse out.

This is the only module that touches protobuf messages. It does not import grpc: the servicer that puts
``run`` on the wire is ``functions.serve.FunctionRunner``, so ``render`` (in-process) never loads grpc.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2

from functions.contract import StepRequest, StepResponse
from functions.kinds import INPUT_API_VERSION, STEPS, run_step, step_for_input

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


def _number(value: float) -> int | float:
    """protobuf Structs carry every number as a double; integral ones get their int type back."""
    if value.is_integer():
        return int(value)
    if math.isinf(value):
        raise ValueError("Fail to serialize Infinity for Value.number_value, which would parse as string_value")
    if math.isnan(value):
        raise ValueError("Fail to serialize NaN for Value.number_value, which would parse as string_value")
    return value


def _from_value(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return value.string_value
    if kind == "struct_value":
        return struct_to_dict(value.struct_value)
    if kind == "list_value":
        return [_from_value(v) for v in value.list_value.values]
    if kind == "number_value":
        return _number(value.number_value)
    if kind == "bool_value":
        return value.bool_value
    return None  # null_value, or no value at all


def struct_to_dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A Struct as plain data, as ``json_format.MessageToDict`` gives it but with integral numbers as ints.

    A direct walk of the message (same key order): MessageToDict's generic machinery cost more than a
    render. Keys are looked up, not ``items()``: the map's items view is a slow Python mixin.
    """
    fields = struct.fields
    return {k: _from_value(fields[k]) for k in fields}


def _to_value(target: struct_pb2.Value, value: Any) -> None:
    """``Struct.update``'s conversion of one value into a new, empty ``target``, exact types first."""
    kind = type(value)
    if kind is str:
        target.string_value = value
    elif kind is dict:
        if not value:
            target.struct_value.Clear()  # marks the empty struct present, as Struct.update does
        fields = target.struct_value.fields
        for key, item in value.items():
            _to_value(fields[key], item)
    elif kind is list:
        if not value:
            target.list_value.Clear()
        add = target.list_value.values.add
        for item in value:
            _to_value(add(), item)
    elif kind is int or kind is float:
        target.number_value = value
    elif kind is bool:
        target.bool_value = value
    elif value is None:
        target.null_value = struct_pb2.NULL_VALUE
    else:  # subclasses, tuples, messages: protobuf's own conversion
        holder = struct_pb2.ListValue()
        holder.append(value)
        target.CopyFrom(holder.values[0])


def dict_to_struct(struct: struct_pb2.Struct, obj: dict[str, Any]) -> None:
    """Replace ``struct``'s content with ``obj``: ``Clear()`` then ``update(obj)``, with fewer protobuf calls."""
    struct.Clear()
    fields = struct.fields
    for key, value in obj.items():
        _to_value(fields[key], value)


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
        if item.severity == "fatal":
            # Crossplane stops at a Fatal result and reports it on the XR only (Synced=False); the same
            # message as a Warning before it becomes an event on the claim too, where the user looks.
            rsp.results.append(
                fnv1.Result(
                    severity=fnv1.SEVERITY_WARNING,
                    message=item.message,
                    reason=item.reason or "ComposeResources",
                    target=fnv1.TARGET_COMPOSITE_AND_CLAIM,
                )
            )
        result_msg = fnv1.Result(severity=_SEVERITY[item.severity], message=item.message)
        if item.reason:
            result_msg.reason = item.reason
        if item.claim:
            result_msg.target = fnv1.TARGET_COMPOSITE_AND_CLAIM
        rsp.results.append(result_msg)
    if result.fatal:
        # Crossplane stops the pipeline and keeps what exists; the desired state we were given
        # passes through untouched.
        return
    for name, desired in sorted(result.desired_resources.items()):
        target = rsp.desired.resources[name]
        dict_to_struct(target.resource, desired.resource)
        if desired.ready is not None:
            target.ready = fnv1.READY_TRUE if desired.ready else fnv1.READY_FALSE
    if result.composite_status is not None:
        # Top-level status fields merge: an earlier step's fields (the render step's rollingUpdate)
        # survive a later step that writes others.
        fields = rsp.desired.composite.resource.get_or_create_struct("status").fields
        for key, value in result.composite_status.items():
            fields[key].Clear()  # _to_value fills an empty value; a field written again is replaced whole
            _to_value(fields[key], value)
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
    result = run_step(step, step_request(req))
    rsp = response.to(req, ttl=timedelta(seconds=result.ttl_seconds))
    apply_step_response(rsp, result)
    return rsp
