"""An in-process Composition pipeline runner, for ``function-dynamo render``.

It follows what ``crossplane render`` (v2.2) does: empty desired state to start, bootstrap
requirements from the step, the requirement loop (at most 5 extra calls, until two responses
ask for the same resources), context threading, a stop at the first Fatal result, composed
resource metadata derived from the XR, and the XR's Ready condition computed from the
readiness of the composed resources. Each step is called with the same protobuf messages
Crossplane sends, through the function's own ``run``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import json_format, struct_pb2

from functions.contract import PREVIEW_CONTEXT_KEY
from functions.fn import run, struct_to_dict
from functions.tooling.manifests import serves_kind

MAX_REQUIREMENT_ITERATIONS = 5
CONDITION_TIME = "2024-01-01T00:00:00Z"  # crossplane render's fixed lastTransitionTime
RESOURCE_NAME_ANNOTATION = "crossplane.io/composition-resource-name"
COMPOSITE_LABEL = "crossplane.io/composite"
CLAIM_NAME_LABEL = "crossplane.io/claim-name"
CLAIM_NAMESPACE_LABEL = "crossplane.io/claim-namespace"
SYSTEM_CONDITIONS = frozenset({"Ready", "Synced", "Healthy", "Responsive"})
CAPABILITIES = [
    fnv1.CAPABILITY_CAPABILITIES,
    fnv1.CAPABILITY_REQUIRED_RESOURCES,
    fnv1.CAPABILITY_CREDENTIALS,
    fnv1.CAPABILITY_CONDITIONS,
    fnv1.CAPABILITY_REQUIRED_SCHEMAS,
]

Runner = Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse]


class RenderError(RuntimeError):
    """The pipeline could not be rendered (a Fatal result, or a malformed input)."""


@dataclass
class RenderOutput:
    composite: dict[str, Any]
    composed: list[dict[str, Any]]
    results: list[dict[str, Any]] = field(default_factory=list)


def _struct(obj: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(obj)
    return s


def _matches(selector: fnv1.ResourceSelector, obj: dict[str, Any]) -> bool:
    if selector.api_version != obj.get("apiVersion") or selector.kind != obj.get("kind"):
        return False
    # crossplane render's FilteringFetcher ignores the selector's namespace: every supplied resource
    # of the kind is a candidate (c/c v2.2 cmd/crank/render/render.go). Do the same, so that both
    # renders give the same result; a step that cares filters by namespace itself.
    meta = obj.get("metadata") or {}
    if selector.WhichOneof("match") == "match_name":
        return selector.match_name == meta.get("name")
    labels = meta.get("labels") or {}
    return all(labels.get(k) == v for k, v in selector.match_labels.labels.items())


def fetch(selector: fnv1.ResourceSelector, available: list[dict[str, Any]]) -> fnv1.Resources:
    """Like crossplane render's filtering fetcher: sorted by name, one item for a name match."""
    out = fnv1.Resources()
    for obj in sorted(available, key=lambda o: (o.get("metadata") or {}).get("name", "")):
        if _matches(selector, obj):
            out.items.append(fnv1.Resource(resource=_struct(obj)))
            if selector.WhichOneof("match") == "match_name":
                break
    return out


def _selector_from_step(req: dict[str, Any]) -> fnv1.ResourceSelector:
    selector = fnv1.ResourceSelector(api_version=req["apiVersion"], kind=req["kind"])
    if "name" in req:
        selector.match_name = req["name"]
    else:
        selector.match_labels.labels.update(req.get("matchLabels") or {})
    if req.get("namespace"):
        selector.namespace = req["namespace"]
    return selector


def _requirements(rsp: fnv1.RunFunctionResponse) -> bytes | None:
    return rsp.requirements.SerializeToString(deterministic=True) if rsp.HasField("requirements") else None


def _run_with_requirements(
    runner: Runner, req: fnv1.RunFunctionRequest, available: list[dict[str, Any]]
) -> fnv1.RunFunctionResponse:
    bootstrap = {k: copy.deepcopy(v) for k, v in req.required_resources.items()}
    previous: bytes | None = None
    for _ in range(MAX_REQUIREMENT_ITERATIONS + 1):
        rsp = runner(req)
        if any(r.severity == fnv1.SEVERITY_FATAL for r in rsp.results):
            return rsp
        current = _requirements(rsp)
        if current == previous:
            return rsp
        previous = current
        req.ClearField("extra_resources")
        req.ClearField("required_resources")
        for name, resources in bootstrap.items():
            req.required_resources[name].CopyFrom(resources)
        for name, selector in rsp.requirements.extra_resources.items():
            req.extra_resources[name].CopyFrom(fetch(selector, available))
        for name, selector in rsp.requirements.resources.items():
            req.required_resources[name].CopyFrom(fetch(selector, available))
        req.context.CopyFrom(rsp.context)
    raise RenderError(
        f"requirements didn't stabilize after the maximum number of iterations ({MAX_REQUIREMENT_ITERATIONS})"
    )


def composed_metadata(obj: dict[str, Any], xr: dict[str, Any], resource_name: str) -> dict[str, Any]:
    """The metadata Crossplane adds to a composed resource (render.go SetComposedResourceMetadata)."""
    out = copy.deepcopy(obj)
    meta = out.setdefault("metadata", {})
    xr_meta = xr.get("metadata") or {}
    xr_labels = xr_meta.get("labels") or {}
    prefix = xr_labels.get(COMPOSITE_LABEL) or xr_meta.get("name", "")
    if not meta.get("name") and not meta.get("generateName"):
        meta["generateName"] = prefix + "-"
    if xr_meta.get("namespace"):
        meta["namespace"] = xr_meta["namespace"]
    meta.setdefault("annotations", {})[RESOURCE_NAME_ANNOTATION] = resource_name
    labels = meta.setdefault("labels", {})
    labels[COMPOSITE_LABEL] = prefix
    claim_ref = (xr.get("spec") or {}).get("claimRef")
    if xr_labels.get(CLAIM_NAME_LABEL) and xr_labels.get(CLAIM_NAMESPACE_LABEL):
        labels[CLAIM_NAMESPACE_LABEL] = xr_labels[CLAIM_NAMESPACE_LABEL]
        labels[CLAIM_NAME_LABEL] = xr_labels[CLAIM_NAME_LABEL]
    elif claim_ref:
        labels[CLAIM_NAMESPACE_LABEL] = claim_ref.get("namespace", "")
        labels[CLAIM_NAME_LABEL] = claim_ref.get("name", "")
    owner = {
        "apiVersion": xr["apiVersion"],
        "kind": xr["kind"],
        "name": xr_meta.get("name", ""),
        "uid": xr_meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }
    refs = [r for r in meta.get("ownerReferences", []) if not r.get("controller")]
    meta["ownerReferences"] = [*refs, owner]
    return out


def _first_n_and_more(names: list[str], n: int = 3) -> str:
    names = sorted(names)
    if len(names) > n:
        return f"{', '.join(names[:n])}, and {len(names) - n} more"
    if len(names) == n:
        return f"{', '.join(names[: n - 1])}, and {names[n - 1]}"
    return ", ".join(names)


def _condition(type_: str, status: str, reason: str, message: str = "") -> dict[str, Any]:
    cond = {"lastTransitionTime": CONDITION_TIME, "reason": reason, "status": status, "type": type_}
    if message:
        cond["message"] = message
    return cond


def _set_condition(conditions: list[dict[str, Any]], cond: dict[str, Any]) -> None:
    for i, existing in enumerate(conditions):
        if existing["type"] == cond["type"]:
            conditions[i] = cond
            return
    conditions.append(cond)


def render(
    xr: dict[str, Any],
    composition: dict[str, Any],
    observed: list[dict[str, Any]] | None = None,
    required: list[dict[str, Any]] | None = None,
    runner: Runner = run,
    *,
    converge: bool = True,
) -> RenderOutput:
    """What the composition composes for ``xr``. ``converge`` (the preview): what it converges to, with
    what a step holds back in a cluster until another object exists already there; otherwise exactly
    one reconcile, as ``crossplane render`` shows it."""
    spec = composition.get("spec") or {}
    type_ref = spec.get("compositeTypeRef") or {}
    if type_ref.get("apiVersion") != xr.get("apiVersion") or not serves_kind(type_ref.get("kind"), xr.get("kind")):
        raise RenderError(
            f"composition's compositeTypeRef.kind ({type_ref.get('kind')}) does not match XR's kind ({xr.get('kind')})"
            if not serves_kind(type_ref.get("kind"), xr.get("kind"))
            else f"composition's compositeTypeRef.apiVersion ({type_ref.get('apiVersion')}) does not match "
            f"XR's apiVersion ({xr.get('apiVersion')})"
        )
    if spec.get("mode", "Pipeline") != "Pipeline":
        raise RenderError(f"render only supports composition Function pipelines: got mode {spec.get('mode')}")
    available = list(required or [])
    state = fnv1.State()
    state.composite.resource.update(xr)
    for obj in observed or []:
        name = ((obj.get("metadata") or {}).get("annotations") or {}).get(RESOURCE_NAME_ANNOTATION)
        if name:
            state.resources[name].resource.update(obj)
    desired = fnv1.State()
    context = struct_pb2.Struct()
    if converge:
        context.update({PREVIEW_CONTEXT_KEY: True})
    results: list[dict[str, Any]] = []
    conditions: list[fnv1.Condition] = []
    for step in spec.get("pipeline") or []:
        req = fnv1.RunFunctionRequest(observed=state, desired=desired, context=context)
        if step.get("input") is not None:
            req.input.update(step["input"])
        for sel in (step.get("requirements") or {}).get("requiredResources") or []:
            req.required_resources[sel["requirementName"]].CopyFrom(fetch(_selector_from_step(sel), available))
        req.meta.capabilities.extend(CAPABILITIES)
        rsp = _run_with_requirements(runner, req, available)
        desired = rsp.desired
        context = rsp.context
        conditions.extend(rsp.conditions)
        for result in rsp.results:
            if result.severity == fnv1.SEVERITY_FATAL:
                raise RenderError(f"pipeline step {step.get('step')!r} returned a fatal result: {result.message}")
            results.append(
                {
                    "apiVersion": "render.crossplane.io/v1beta1",
                    "kind": "Result",
                    "step": step.get("step"),
                    "severity": fnv1.Severity.Name(result.severity),
                    "message": result.message,
                }
            )
    composed = []
    unready = []
    observed_by_name = {n: struct_to_dict(r.resource) for n, r in state.resources.items()}
    for name, resource in desired.resources.items():
        if resource.ready != fnv1.READY_TRUE:
            unready.append(name)
        obj = struct_to_dict(resource.resource)
        if name in observed_by_name:
            meta = obj.setdefault("metadata", {})
            existing = observed_by_name[name].get("metadata") or {}
            for key in ("namespace", "name", "generateName"):
                if existing.get(key):
                    meta[key] = existing[key]
                else:
                    meta.pop(key, None)
        composed.append(composed_metadata(obj, xr, name))
    composed.sort(key=lambda o: o["metadata"]["annotations"][RESOURCE_NAME_ANNOTATION])
    composite = struct_to_dict(desired.composite.resource)
    composite["apiVersion"] = xr["apiVersion"]
    composite["kind"] = xr["kind"]
    meta = composite.setdefault("metadata", {})
    meta["name"] = (xr.get("metadata") or {}).get("name", "")
    if (xr.get("metadata") or {}).get("namespace"):
        meta["namespace"] = xr["metadata"]["namespace"]
    if desired.composite.ready == fnv1.READY_FALSE:
        ready = _condition("Ready", "False", "Creating")
    elif desired.composite.ready == fnv1.READY_UNSPECIFIED and unready:
        ready = _condition("Ready", "False", "Creating", f"Unready resources: {_first_n_and_more(unready)}")
    else:
        ready = _condition("Ready", "True", "Available")
    status = composite.setdefault("status", {})
    status_conditions: list[dict[str, Any]] = list(status.get("conditions") or [])
    _set_condition(status_conditions, ready)
    for cond in conditions:
        if cond.type in SYSTEM_CONDITIONS:
            continue
        _set_condition(
            status_conditions,
            _condition(cond.type, _CONDITION_STATUS[cond.status], cond.reason, cond.message),
        )
    status["conditions"] = status_conditions
    return RenderOutput(composite=composite, composed=composed, results=results)


_CONDITION_STATUS = {
    fnv1.STATUS_CONDITION_TRUE: "True",
    fnv1.STATUS_CONDITION_FALSE: "False",
    fnv1.STATUS_CONDITION_UNKNOWN: "Unknown",
    fnv1.STATUS_CONDITION_UNSPECIFIED: "Unknown",
}


def as_dict(message: Any) -> dict[str, Any]:
    """A protobuf message as a dict (for debugging output)."""
    return json_format.MessageToDict(message)


def composes_kind(compositions: list[dict[str, Any]], obj: dict[str, Any]) -> dict[str, Any] | None:
    """The Composition whose composite type ``obj`` is (a nested composite), if any: its own, else the one
    ``serves_kind`` lets serve it."""
    served = [
        comp
        for comp in compositions
        if comp.get("kind") == "Composition"
        and ((comp.get("spec") or {}).get("compositeTypeRef") or {}).get("apiVersion") == obj.get("apiVersion")
        and serves_kind(comp["spec"]["compositeTypeRef"].get("kind"), obj.get("kind"))
    ]
    exact = [c for c in served if c["spec"]["compositeTypeRef"].get("kind") == obj.get("kind")]
    return (exact or served or [None])[0]


def render_nested(
    out: RenderOutput,
    compositions: list[dict[str, Any]],
    required: list[dict[str, Any]] | None = None,
    admit: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> list[RenderOutput]:
    """Render every nested composite ``out`` composed (DCDs, scaling adapters), depth first, as Crossplane
    would once it creates them: with the same required resources and nothing observed yet. ``admit``
    turns each into what the API server stores (or raises, as the API server refuses it)."""
    rendered: list[RenderOutput] = []
    for obj in out.composed:
        comp = composes_kind(compositions, obj)
        if comp is None:
            continue
        child = render(admit(obj) if admit else obj, comp, [], required)
        rendered.append(child)
        rendered.extend(render_nested(child, compositions, required, admit))
    return rendered
