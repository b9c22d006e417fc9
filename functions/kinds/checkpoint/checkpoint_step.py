"""Pipeline step ``Checkpoint``: a DynamoCheckpoint XR becomes its checkpoint Job, then the PodSnapshot of the
Job's pod, and reports the phase (docs/upstream/checkpoint-gms-dgdr-model.md §1.9, §2).

- The checkpoint ID is upstream's CheckpointID(CR): ``status.checkpointID`` once written, else the legacy
  16-hex hash of ``spec.identity``; the Job is ``checkpoint-job-<id>-<artifact version>``.
- The Job's pod is read as a required resource (label ``batch.kubernetes.io/job-name``, controlled by the
  observed Job); the PodSnapshot names it. The snapshot project's operator binds a PodSnapshotContent
  and its node agent captures; this step only reads their result on the PodSnapshot.
- Ready when the PodSnapshot is bound and Ready and the Job Complete; then the Job is no longer composed.
- While ``checkpoint.enabled`` is off in the operator config the step is a Fatal naming ``spec`` (upstream's
  webhook refuses the object then), and nothing composed changes.
- With ``gpuMemoryService`` the pod template must come prepared for the intra-pod GMS (else ``Failed``,
  ``GMSPodTemplateNotPrepared``); the GPUs the target holds through DRA claims (the claim templates read as
  required resources) count for the cuda-checkpoint wrapper.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from functions.api.graph import SpecError
from functions.api.normalise import claimed_object, parse_xr_spec
from functions.api.operator_config import OPERATOR_CONFIG_REQUIREMENT, OperatorConfigError, read_operator_config
from functions.api.pod_defaults import spec_with_pod_spec_defaults
from functions.api.schema_check import check_xr_spec, spec_schema_file
from functions.contract import DesiredResource, ResourceSelector, StepRequest, StepResponse, fatal
from functions.kinds.checkpoint.checkpoint_api import DynamoCheckpointSpec
from functions.kinds.checkpoint.checkpoint_gms import check_gms_spec, claim_template_requirements, dra_gpus, unprepared
from functions.kinds.checkpoint.checkpoint_refs import GATE_OFF
from functions.kinds.checkpoint.checkpoint_status import decide
from functions.kube.checkpoint_ids import artifact_version, checkpoint_id
from functions.kube.checkpoint_job import (
    JOB_NAME_LABEL,
    JOB_RESOURCE,
    PODSNAPSHOT_RESOURCE,
    JobSettings,
    job_name,
    render_checkpoint_job,
    render_podsnapshot,
)
from functions.kube.gms import DEFAULT_DEVICE_CLASS
from functions.readiness.job import job_pod

POD_REQUIREMENT = "checkpoint-job-pod"
SPEC_SCHEMA = spec_schema_file(Path(__file__).parent)  # the XRD's spec schema, checked first


def checkpoint_spec(xr: dict[str, Any]) -> dict[str, Any]:
    """The XR's spec as upstream's DynamoCheckpoint, defaults applied; raises ``SpecError`` naming the field."""
    spec = parse_xr_spec(xr, DynamoCheckpointSpec).model_dump(mode="json", exclude_none=True)
    check_gms_spec(spec)
    return spec


def dynamo_checkpoint(req: StepRequest) -> StepResponse:
    xr = req.observed_composite
    try:
        check_xr_spec(xr, SPEC_SCHEMA)
        xr = spec_with_pod_spec_defaults(xr, SPEC_SCHEMA)
        operator_config = read_operator_config(req.required.get(OPERATOR_CONFIG_REQUIREMENT, []))
        if not operator_config.checkpoint.enabled:
            raise SpecError(f"spec: {GATE_OFF}")
        claim = claimed_object(xr, "DynamoCheckpoint")
        spec = checkpoint_spec(xr)
        storage = operator_config.checkpoint.pvc_storage()
    except (SpecError, OperatorConfigError) as err:
        return fatal(str(err), reason="InvalidSpec")
    except ValueError as err:
        return fatal(f"EnvironmentConfig/dynamo-platform data.{err}", reason="InvalidSpec")
    ckpt_id = checkpoint_id(xr)
    pod_spec = (spec["job"].get("podTemplateSpec") or {}).get("spec") or {}
    target = next(
        (
            c
            for c in pod_spec.get("containers") or []
            if c.get("name") == spec["job"].get("targetContainerName", "main")
        ),
        {},
    )
    device_class = (spec.get("gpuMemoryService") or {}).get("deviceClassName") or DEFAULT_DEVICE_CLASS
    settings = JobSettings(
        name=claim.name,
        namespace=claim.namespace,
        checkpoint_id=ckpt_id,
        artifact_version=artifact_version(xr),
        spec=spec,
        seccomp_profile=operator_config.checkpoint.seccomp_profile,
        storage=storage,
        dra_gpus=dra_gpus(target, pod_spec, req.required, device_class),
    )
    name = job_name(ckpt_id, settings.artifact_version)
    observed = req.observed_resources
    job, snapshot = observed.get(JOB_RESOURCE), observed.get(PODSNAPSHOT_RESOURCE)
    pod = job_pod(req.required.get(POD_REQUIREMENT, []), job)
    decision = decide(
        previous=xr.get("status") or {},
        job_name=name,
        job=job,
        snapshot=snapshot,
        pod_observed=pod is not None,
        unprepared=unprepared(spec),
    )
    desired: dict[str, dict[str, Any]] = {}
    try:
        if decision.compose_job:
            desired[JOB_RESOURCE] = render_checkpoint_job(settings)
    except SpecError as err:
        return fatal(str(err), reason="InvalidSpec")
    # A PodSnapshot is created only while the Job runs (Creating); one that exists is kept whatever the phase.
    if decision.compose_snapshot and (snapshot is not None or (pod is not None and decision.phase == "Creating")):
        podsnapshot = render_podsnapshot(settings, pod or {})
        if snapshot is not None:
            # Its spec is immutable, and the Job's pod may be gone: the observed spec is repeated as it is.
            podsnapshot["spec"] = snapshot.get("spec") or {}
        desired[PODSNAPSHOT_RESOURCE] = podsnapshot
    status: dict[str, Any] = {
        "phase": decision.phase,
        "checkpointID": ckpt_id,
        "identityHash": ckpt_id,  # deprecated upstream, mirrors checkpointID
        "jobName": name,
    }
    if decision.message:
        status["message"] = decision.message
    if PODSNAPSHOT_RESOURCE in desired:
        status["podSnapshotName"] = desired[PODSNAPSHOT_RESOURCE]["metadata"]["name"]
    if decision.created_at:
        status["createdAt"] = decision.created_at
    requirements = claim_template_requirements(pod_spec, claim.namespace)
    if job is not None:
        requirements[POD_REQUIREMENT] = ResourceSelector(
            "v1", "Pod", match_labels={JOB_NAME_LABEL: name}, namespace=claim.namespace
        )
    return StepResponse(
        desired_resources={key: DesiredResource(obj, ready=True) for key, obj in sorted(desired.items())},
        composite_status=status,
        composite_ready=decision.phase == "Ready",
        conditions=decision.conditions,
        requirements=requirements,
    )
