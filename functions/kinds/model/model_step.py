"""Pipeline step ``Model``: a DynamoModel XR becomes its endpoints' status and, for a LoRA adapter, the Job that
loads it (docs/upstream/checkpoint-gms-dgdr-model.md §5; docs/upstream/operator.md §4.4).

- The endpoints are the EndpointSlices labelled ``nvidia.com/dynamo-base-model-hash=<sha256(baseModelName)[:8]>``
  (the headless ``dynamo-model-<hash>`` Services a DGD composes for components with that ``modelRef``), read as
  required resources with the pods behind them: every pod-backed endpoint, once per pod, at ``:9090``.
- A base model (or ``adapter``) lists them, ``ready: false``, ``EndpointsReady=True/EndpointsDiscovered``.
- A LoRA adapter composes a load Job per endpoint set and attempt (``functions.kinds.model.lora_job``) and reads each
  endpoint's result from the Job's pod; an attempt that ended with some endpoint not serving is followed by the
  next, and while not every endpoint serves the step asks to run again in 30 s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from functions.api.graph import SpecError
from functions.api.normalise import claimed_object, parse_xr_spec
from functions.api.operator_config import OPERATOR_CONFIG_REQUIREMENT, OperatorConfigError, read_operator_config
from functions.api.schema_check import check_xr_spec, spec_schema_file
from functions.contract import (
    DEFAULT_TTL_SECONDS,
    DesiredResource,
    ResourceSelector,
    Result,
    StepRequest,
    StepResponse,
    fatal,
)
from functions.kinds.model.lora_job import (
    ATTEMPT_LABEL,
    JOB_NAME_LABEL,
    JOB_RESOURCE,
    SET_LABEL,
    load_set,
    render_lora_job,
)
from functions.kinds.model.model_api import DynamoModelSpec
from functions.kinds.model.model_status import base_status, candidates, load_results, lora_status, service_count
from functions.kube.labels import BASE_MODEL_HASH, model_hash
from functions.readiness.job import job_pod

SLICES_REQUIREMENT = "model-endpoint-slices"
PODS_REQUIREMENT = "model-pods"
JOB_POD_REQUIREMENT = "lora-load-job-pod"
LORA_REQUEUE_SECONDS = 30
SPEC_SCHEMA = spec_schema_file(Path(__file__).parent)  # the XRD's spec schema, checked first


def dynamo_model(req: StepRequest) -> StepResponse:
    xr = req.observed_composite
    try:
        check_xr_spec(xr, SPEC_SCHEMA)
        operator_config = read_operator_config(req.required.get(OPERATOR_CONFIG_REQUIREMENT, []))
        claim = claimed_object(xr, "DynamoModel")
        spec = parse_xr_spec(xr, DynamoModelSpec)
    except (SpecError, OperatorConfigError) as err:
        return fatal(str(err), reason="InvalidSpec")
    selector = {BASE_MODEL_HASH: model_hash(spec.baseModelName)}
    requirements = {
        SLICES_REQUIREMENT: ResourceSelector(
            "discovery.k8s.io/v1", "EndpointSlice", match_labels=selector, namespace=claim.namespace
        ),
        PODS_REQUIREMENT: ResourceSelector("v1", "Pod", match_labels=selector, namespace=claim.namespace),
    }
    slices = req.required.get(SLICES_REQUIREMENT, [])
    found = candidates(slices)
    desired: dict[str, dict[str, Any]] = {}
    lora = spec.modelType.lower() == "lora"
    if not lora:
        status = base_status(spec.baseModelName, found, service_count(slices))
    else:
        uri = spec.source.uri if spec.source else ""
        addresses = [c.address for c in found]
        pods = {str((p.get("metadata") or {}).get("name")): p for p in req.required.get(PODS_REQUIREMENT, [])}
        results = None
        if found:
            digest = load_set(spec.modelName, uri, addresses)
            job = req.observed_resources.get(JOB_RESOURCE)
            labels = ((job or {}).get("metadata") or {}).get("labels") or {}
            attempt = 1
            if job is not None and labels.get(SET_LABEL) == digest:
                attempt = int(labels.get(ATTEMPT_LABEL) or 1)
                name = str(job["metadata"]["name"])
                requirements[JOB_POD_REQUIREMENT] = ResourceSelector(
                    "v1", "Pod", match_labels={JOB_NAME_LABEL: name}, namespace=claim.namespace
                )
                results = load_results(job_pod(req.required.get(JOB_POD_REQUIREMENT, []), job))
            # An endpoint that served the adapter keeps serving it while a retry runs.
            previous = {
                str(e.get("address")): {"code": 200}
                for e in (xr.get("status") or {}).get("endpoints") or []
                if e.get("ready")
            }
            known = {**previous, **(results or {})} if previous or results is not None else None
            status = lora_status(spec.baseModelName, found, service_count(slices), known, pods)
            if results is not None and not status.serving:
                attempt += 1  # that attempt finished without every endpoint serving: try again
            desired[JOB_RESOURCE] = render_lora_job(
                claim.name, claim.namespace, spec.modelName, uri, addresses, operator_config.model.loraJobImage, attempt
            )
        else:
            status = lora_status(spec.baseModelName, found, service_count(slices), results, pods)
    return StepResponse(
        desired_resources={key: DesiredResource(obj, ready=True) for key, obj in desired.items()},
        composite_status=status.as_status(),
        composite_ready=status.serving,
        conditions=status.conditions,
        results=[Result("warning", message, reason) for reason, message in status.warnings],
        requirements=requirements,
        ttl_seconds=LORA_REQUEUE_SECONDS if lora and not status.serving else DEFAULT_TTL_SECONDS,
    )
