"""Pipeline step ``GraphDeploymentRequest``: a DynamoGraphDeploymentRequest XR becomes its profiling Job, then the
DynamoGraphDeployment the profiler chose, and reports upstream's phases and conditions
(docs/upstream/checkpoint-gms-dgdr-model.md §4).

- Composed: the profiling ServiceAccount and its binding (to the platform's ClusterRole, or a Role of ours), the
  Job ``profile-<dgdr>``; once profiling succeeded, the ConfigMaps of the profiler's output and, with
  ``autoApply``, the graph as a ``DynamoGraphDeployment`` claim in the DGDR's namespace (so ``kubectl get dgd``
  lists it and it renders like any other).
- Read as required resources: the output ConfigMap ``dgdr-output-<dgdr>`` the Job's sidecar writes, the Job's
  pod (failure details), the model cache PVC, and the GPU nodes while hardware is discovered.
- The generated graph is in ``status.profilingResults.selectedConfig`` whatever ``autoApply`` says
  (``function-dynamo export`` turns it into a manifest to commit).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from functions.api.graph import SpecError
from functions.api.normalise import claimed_object
from functions.api.operator_config import (
    OPERATOR_CONFIG_REQUIREMENT,
    OPERATOR_VERSION,
    OperatorConfig,
    OperatorConfigError,
    read_operator_config,
)
from functions.api.pod_defaults import with_pod_spec_defaults
from functions.api.schema_check import check_xr_spec, load_schema, spec_schema_file
from functions.contract import (
    DesiredResource,
    ResourceSelector,
    Result,
    StepRequest,
    StepResponse,
    fatal,
)
from functions.kinds.request.generated_graph import Generated, GenerationError, generate
from functions.kinds.request.profiling_job import (
    ProfilingSettings,
    job_name,
    output_configmap_name,
    render_profiling_job,
    render_profiling_rbac,
    service_account_name,
)
from functions.kinds.request.request_conversion import hub_spec, v1alpha1_status
from functions.kinds.request.request_rules import (
    GPU_NODE_LABEL,
    PROCESSED_SPEC,
    accepted_spec,
    check_webhook_rules,
    discovered_hardware,
    needs_discovery,
    with_hardware,
)
from functions.kinds.request.request_status import Inputs, Observed, decide
from functions.kube.runtime_version import image_tag_version
from functions.readiness.job import job_pod

JOB_RESOURCE, DGD_RESOURCE = "profiling-job", "graph"
OUTPUT_REQUIREMENT, POD_REQUIREMENT = "profiling-output", "profiling-job-pod"
PVC_REQUIREMENT, NODES_REQUIREMENT = "model-cache", "gpu-nodes"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
SPEC_SCHEMA = spec_schema_file(Path(__file__).parent)  # the XRD's spec schema, checked first
DEFAULT_IMAGE = f"nvcr.io/nvidia/ai-dynamo/dynamo-planner:{OPERATOR_VERSION}"
TTL_PROFILING, TTL_DEPLOYING = 15, 30


def profiling_output(data: dict[str, Any]) -> dict[str, Any]:
    """The output ConfigMap's data, with ``phase``, ``message`` and ``profiler_error`` taken from the copied
    ``profiler_status.yaml`` when it parses: the sidecar's own keys are a shell's line-wise reading of it."""
    try:
        parsed = yaml.safe_load(data.get("profiler_status.yaml") or "")
    except yaml.YAMLError:
        parsed = None
    if not isinstance(parsed, dict):
        return data
    out = dict(data)
    for ours, theirs in (("phase", "phase"), ("message", "message"), ("profiler_error", "error")):
        if isinstance(parsed.get(theirs), str) and parsed[theirs]:
            out[ours] = parsed[theirs].strip()
    return out


def _stale(output: dict[str, Any], uid: str | None) -> bool:
    """An output ConfigMap another composite controls: left by an earlier request of the same name (upstream
    deletes it before creating the Job; here it goes with its owner, and until then it is not read)."""
    owners = [r for r in (output.get("metadata") or {}).get("ownerReferences") or [] if r.get("controller")]
    return bool(uid) and any(r.get("uid") != uid for r in owners)


# The events upstream records on a phase change (previous phase, new phase) -> (reason, message).
TRANSITION_EVENTS = {
    (None, "Pending"): [
        ("Initialized", "DGDR initialized successfully"),
        ("ProfilingJobCreated", "Profiling job created"),
    ],
    **{
        (before, after): [("SpecGenerated", "DynamoGraphDeployment spec generated successfully")]
        for before in ("Pending", "Profiling")
        for after in ("Ready", "Deploying")
    },
}


def _transition_events(before: str | None, after: str, failed: str | None) -> list[Result]:
    if after == "Failed" and before != "Failed" and failed:
        return [Result("warning", failed, "ValidationFailed", claim=True)] if before in (None, "Pending") else []
    return [
        Result("normal", message, reason, claim=True) for reason, message in TRANSITION_EVENTS.get((before, after), [])
    ]


def _configmap_resource(name: str) -> str:
    return f"configmap-{name}"


def _dgd_name(spec: dict[str, Any], dgdr: str, previous: dict[str, Any]) -> str:
    named = (((spec.get("overrides") or {}).get("dgd") or {}).get("metadata") or {}).get("name")
    return previous.get("dgdName") or named or f"{dgdr}-dgd"


def _generated(
    output: dict[str, Any] | None, previous: dict[str, Any], dgdr: str, namespace: str, name: str, version: str | None
) -> tuple[Generated | None, str | None]:
    """The graph from the output's final_config.yaml, else the one the last reconcile generated."""
    text = (output or {}).get("final_config.yaml")
    if (output or {}).get("profiler_status") == "success" and text is not None:
        try:
            return generate(text, dgdr, namespace, name, version), None
        except GenerationError as err:
            return None, str(err)
    selected = (previous.get("profilingResults") or {}).get("selectedConfig")
    if isinstance(selected, dict) and selected.get("kind") == "DynamoGraphDeployment":
        return Generated(copy.deepcopy(selected)), None
    return None, None


def profiler_image(spec: dict[str, Any], operator_config: OperatorConfig) -> str:
    return spec.get("image") or operator_config.dgdr.defaultImage or DEFAULT_IMAGE


def generated_graph(
    xr: dict[str, Any], output: dict[str, Any] | None, operator_config: OperatorConfig
) -> tuple[Generated | None, str | None]:
    """The graph a DGDR deploys (or would), from its profiling ``output`` (the output ConfigMap's data) or its
    status; and the problem when the output holds none. Raises ``SpecError``."""
    claim = claimed_object(xr, "DynamoGraphDeploymentRequest")
    previous = xr.get("status") or {}
    spec = accepted_spec(hub_spec(xr).spec, previous, (xr.get("metadata") or {}).get("generation")).spec
    version = spec.get("runtimeVersionOverride") or image_tag_version(profiler_image(spec, operator_config))
    dgd_name = _dgd_name(spec, claim.name, previous)
    return _generated(output, previous, claim.name, claim.namespace, dgd_name, version)


def _deployment_info(dgd: dict[str, Any] | None) -> dict[str, int] | None:
    if dgd is None:
        return None
    components = ((dgd.get("status") or {}).get("components") or {}).values()
    return {
        "replicas": sum(int(c.get("replicas") or 0) for c in components),
        "availableReplicas": sum(int(c.get("availableReplicas") or 0) for c in components),
    }


def dynamo_graph_deployment_request(req: StepRequest) -> StepResponse:
    xr = req.observed_composite
    previous = xr.get("status") or {}
    metadata = xr.get("metadata") or {}
    try:
        check_xr_spec(xr, SPEC_SCHEMA)
        operator_config = read_operator_config(req.required.get(OPERATOR_CONFIG_REQUIREMENT, []))
        claim = claimed_object(xr, "DynamoGraphDeploymentRequest")
        hub = hub_spec(xr)
    except (SpecError, OperatorConfigError) as err:
        return fatal(str(err), reason="InvalidSpec")
    name, namespace = claim.name, claim.namespace
    accepted = accepted_spec(hub.spec, previous, metadata.get("generation"))
    spec = accepted.spec
    image = profiler_image(spec, operator_config)
    discovery = (
        operator_config.gpu.discoveryEnabled and not operator_config.namespace.restricted and hub.alpha.gpu_discovery
    )
    results: list[Result] = []
    if accepted.rejected:
        results.append(Result("warning", accepted.rejected, "SpecChangeRejected", claim=True))
    requirements: dict[str, ResourceSelector] = {}
    validation_problem = None
    profiler_spec = {**spec, "image": image}
    pending = previous.get("phase") in (None, "Pending")
    try:
        check_webhook_rules(spec, image, discovery)
    except SpecError as err:
        if pending:
            return fatal(str(err), reason="InvalidSpec")
    if pending:
        if needs_discovery(spec) and discovery:
            requirements[NODES_REQUIREMENT] = ResourceSelector("v1", "Node", match_labels={GPU_NODE_LABEL: "true"})
            profiler_spec, validation_problem = with_hardware(
                profiler_spec, discovered_hardware(req.required.get(NODES_REQUIREMENT, []))
            )
        pvc = (spec.get("modelCache") or {}).get("pvcName")
        if pvc:
            requirements[PVC_REQUIREMENT] = ResourceSelector(
                "v1", "PersistentVolumeClaim", match_name=pvc, namespace=namespace
            )
            if not req.required.get(PVC_REQUIREMENT):
                validation_problem = validation_problem or (
                    f"spec.modelCache.pvcName: model cache PVC {pvc} not found in namespace {namespace}"
                )

    observed = req.observed_resources
    job = observed.get(JOB_RESOURCE)
    the_job = job_name(name)
    requirements[OUTPUT_REQUIREMENT] = ResourceSelector(
        "v1", "ConfigMap", match_name=output_configmap_name(name), namespace=namespace
    )
    own = [o for o in req.required.get(OUTPUT_REQUIREMENT, []) if not _stale(o, metadata.get("uid"))]
    output = profiling_output(own[0].get("data") or {}) if own else None
    if job is not None:
        requirements[POD_REQUIREMENT] = ResourceSelector(
            "v1", "Pod", match_labels={JOB_NAME_LABEL: the_job}, namespace=namespace
        )
    dgd_name = _dgd_name(spec, name, previous)
    version = spec.get("runtimeVersionOverride") or image_tag_version(image)
    generated, generation_problem = _generated(output, previous, name, namespace, dgd_name, version)
    dgd = observed.get(DGD_RESOURCE)
    decision = decide(
        Inputs(
            previous=previous,
            observed=Observed(
                job=job,
                job_pod=job_pod(req.required.get(POD_REQUIREMENT, []), job),
                output=output,
                dgd=dgd,
            ),
            validation_problem=validation_problem,
            generation_problem=generation_problem,
            auto_apply=spec.get("autoApply", True),
            dgd_name=dgd_name,
        )
    )
    results += [Result("warning", w, "ProfilingOutputInvalid") for w in decision.warnings]
    results += _transition_events(previous.get("phase"), decision.phase, validation_problem)

    desired: dict[str, dict[str, Any]] = {}
    if decision.compose_job:
        owner = {
            "apiVersion": xr.get("apiVersion", ""),
            "kind": xr.get("kind", ""),
            "name": metadata.get("name", ""),
            "uid": metadata.get("uid", ""),
        }
        desired.update(render_profiling_rbac(name, namespace, operator_config.dgdr.profilingClusterRoleName))
        settings = ProfilingSettings(
            name=name,
            namespace=namespace,
            uid=metadata.get("uid", ""),
            # with the job template's pod spec defaults, as upstream's API server stores them
            spec=with_pod_spec_defaults(profiler_spec, load_schema(SPEC_SCHEMA)),
            service_account=service_account_name(name),
            owner=owner,
            infrastructure=operator_config.infrastructure,
            alpha=hub.alpha,
            operator_image=operator_config.dgdr.operatorImage,
            operator_image_pull_policy=operator_config.dgdr.operatorImagePullPolicy,
        )
        try:
            rendered, ignored = render_profiling_job(settings)
        except ValueError as err:
            return fatal(f"EnvironmentConfig/dynamo-platform data.{err}", reason="InvalidSpec")
        if job is not None:
            rendered["spec"] = job.get("spec") or rendered["spec"]  # a Job's template is immutable: kept as created
        elif ignored:
            results.append(
                Result("warning", "ignored (not in upstream's allow-list): " + ", ".join(ignored), "OverrideIgnored")
            )
        desired[JOB_RESOURCE] = rendered
    phase = decision.phase
    if generated is not None and phase != "Failed":
        for cm in generated.configmaps:
            desired[_configmap_resource(cm["metadata"]["name"])] = cm
        if generated.ignored:
            results.append(
                Result(
                    "warning", "not composed (only ConfigMaps are): " + ", ".join(generated.ignored), "ResourceIgnored"
                )
            )
    if decision.compose_dgd and generated is not None:
        desired[DGD_RESOURCE] = generated.dgd

    status: dict[str, Any] = {"phase": phase, PROCESSED_SPEC: spec}
    if accepted.observed_generation is not None:
        status["observedGeneration"] = accepted.observed_generation
    if JOB_RESOURCE in desired or job is not None:
        status["profilingJobName"] = the_job
    if decision.profiling_phase:
        status["profilingPhase"] = decision.profiling_phase
    deleted = phase == "Failed" and any(c.reason == "DeploymentDeleted" for c in decision.conditions.values())
    if generated is not None:
        status["profilingResults"] = {"selectedConfig": generated.dgd}
        if not deleted:
            status["dgdName"] = dgd_name
    info = _deployment_info(dgd)
    if info is not None and not deleted:
        status["deploymentInfo"] = info
    if hub.shape == "v1alpha1":
        dgd_state = ((dgd or {}).get("status") or {}).get("state")
        status.update(v1alpha1_status(status, spec.get("backend", "auto"), namespace, dgd_state, dgd is not None))

    dgd_ready = ((dgd or {}).get("status") or {}).get("state") == "successful"
    ttl = TTL_PROFILING if phase in ("Pending", "Profiling") else TTL_DEPLOYING if phase == "Deploying" else 60
    return StepResponse(
        desired_resources={
            key: DesiredResource(obj, ready=dgd_ready if key == DGD_RESOURCE else True)
            for key, obj in sorted(desired.items())
        },
        composite_status=status,
        composite_ready=phase in ("Ready", "Deployed"),
        results=results,
        conditions=decision.ordered_conditions(),
        requirements=requirements,
        ttl_seconds=ttl,
    )
