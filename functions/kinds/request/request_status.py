"""A DynamoGraphDeploymentRequest's phase and conditions, from what is observed
(docs/upstream/checkpoint-gms-dgdr-model.md §4.2, docs/upstream/operator.md §4.1).

Upstream's controller walks Pending → Profiling → Ready (``autoApply: false``) or Deploying → Deployed, with
Failed as the terminal state. Here every reconcile derives the phase again from the previous status (the phase
and the conditions the last reconcile wrote), the profiling Job and its pod, the output ConfigMap
``dgdr-output-<dgdr>`` and the composed DynamoGraphDeployment. The conditions have upstream's types (Validation,
Profiling, SpecGenerated, DeploymentReady and the summary Succeeded), reasons and messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from functions.contract import Condition
from functions.kinds.request.request_api import PROFILING_PHASES

VALIDATION, PROFILING, SPEC_GENERATED, DEPLOYMENT_READY, SUCCEEDED = (
    "Validation",
    "Profiling",
    "SpecGenerated",
    "DeploymentReady",
    "Succeeded",
)
MSG_VALIDATION_PASSED = "DGDR spec validation passed"
MSG_DISCOVERING = "Discovering GPU hardware and preparing profiling job"
MSG_RUNNING = "Profiling is in progress"
MSG_COMPLETED = "Profiling job completed successfully"
MSG_GENERATED = "DynamoGraphDeployment spec generated successfully"
# Upstream points at its annotation nvidia.com/generated-dgd-spec; a function cannot write the claim's metadata.
MSG_SPEC_AVAILABLE = "Generated spec is available in status.profilingResults.selectedConfig"
MSG_DELETED = "Deployment was deleted by user. Create a new DGDR to redeploy."
FAILED_PREFIXES = {
    VALIDATION: "Validation failed: ",
    PROFILING: "Profiling failed: ",
    SPEC_GENERATED: "Spec generation failed: ",
    DEPLOYMENT_READY: "Deployment failed: ",
}
# DeploymentReady reasons written once the graph has been observed: its absence afterwards is a deletion.
SEEN_DEPLOYMENT = ("DeploymentInProgress", "DeploymentReady", "DeploymentDegraded")
SUCCEEDED_BY_PHASE = {
    "Pending": ("False", "Pending"),
    "Profiling": ("False", "Profiling"),
    "Ready": ("True", "SpecGenerated"),
    "Deploying": ("False", "Deploying"),
    "Deployed": ("True", "Deployed"),
}


@dataclass(frozen=True)
class Observed:
    job: dict[str, Any] | None = None
    job_pod: dict[str, Any] | None = None
    output: dict[str, Any] | None = None  # the output ConfigMap's data
    dgd: dict[str, Any] | None = None


@dataclass(frozen=True)
class Inputs:
    previous: dict[str, Any]  # the XR's status as the last reconcile left it
    observed: Observed
    validation_problem: str | None = None
    generation_problem: str | None = None
    auto_apply: bool = True
    dgd_name: str | None = None


@dataclass
class Decision:
    phase: str
    conditions: dict[str, Condition] = field(default_factory=dict)
    profiling_phase: str | None = None
    compose_job: bool = False
    compose_dgd: bool = False
    warnings: list[str] = field(default_factory=list)

    def condition(self, type_: str, status: str, reason: str, message: str) -> None:
        self.conditions[type_] = Condition(type_, status, reason, message)  # type: ignore[arg-type]

    def ordered_conditions(self) -> list[Condition]:
        order = (VALIDATION, PROFILING, SPEC_GENERATED, DEPLOYMENT_READY, SUCCEEDED)
        return [self.conditions[t] for t in order if t in self.conditions]


def previous_condition(previous: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in previous.get("conditions") or [] if c.get("type") == type_), None)


def _job_condition(job: dict[str, Any], type_: str) -> dict[str, Any] | None:
    for cond in (job.get("status") or {}).get("conditions") or []:
        if cond.get("type") == type_ and cond.get("status") == "True":
            return cond
    return None


def _profiler_termination(pod: dict[str, Any] | None) -> str:
    if pod is None:
        return ""
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status.get("name") == "profiler":
            done = (status.get("state") or {}).get("terminated") or (status.get("lastState") or {}).get("terminated")
            if done:
                return (
                    f". Details: Pod: {pod['metadata'].get('name')}, Container: profiler, "
                    f"ExitCode: {done.get('exitCode')}, Reason: {done.get('reason', '')}"
                )
    return ""


def _failure(decision: Decision, previous_phase: str | None, message: str) -> Decision:
    decision.phase = "Failed"
    reason = f"{previous_phase}Failed" if previous_phase else "ProfilingFailed"
    decision.condition(PROFILING, "False", reason, message)
    return decision


def _profiling(inputs: Inputs, decision: Decision) -> Decision | None:
    """The Profiling part: a Decision while profiling runs or when it failed, None once the output is in."""
    job, output = inputs.observed.job, inputs.observed.output
    if job is None:
        return None
    previous_phase = inputs.previous.get("profilingPhase")
    phase = (output or {}).get("phase")
    if phase and phase not in PROFILING_PHASES:
        decision.warnings.append(f"the output ConfigMap's phase {phase!r} is not one of {', '.join(PROFILING_PHASES)}")
        phase = None
    profiling_phase = phase or previous_phase or "Initializing"
    failed, complete = _job_condition(job, "Failed"), _job_condition(job, "Complete")
    if (output or {}).get("profiler_status") == "failed" and (failed or complete):
        return _failure(decision, profiling_phase, f"profiling failed: {output.get('profiler_error', '')}")
    if failed:
        detail = _profiler_termination(inputs.observed.job_pod)
        return _failure(decision, profiling_phase, f"profiling job failed: {failed.get('message', '')}{detail}")
    if complete and output is not None and output.get("profiler_status") == "success" and "final_config.yaml" in output:
        return None
    decision.phase = "Profiling"
    decision.profiling_phase = profiling_phase
    active = (job.get("status") or {}).get("active") or 0
    if phase:
        decision.condition(PROFILING, "False", phase, output.get("message") or MSG_RUNNING)
    elif active or complete:
        decision.condition(PROFILING, "False", "ProfilingRunning", MSG_RUNNING)
    else:
        decision.condition(PROFILING, "False", "Initializing", MSG_DISCOVERING)
    return decision


def _deployment(inputs: Inputs, decision: Decision) -> Decision:
    name, dgd = inputs.dgd_name, inputs.observed.dgd
    before = inputs.previous.get("phase")
    seen = (previous_condition(inputs.previous, DEPLOYMENT_READY) or {}).get("reason") in SEEN_DEPLOYMENT
    if dgd is None:
        if seen:
            decision.phase = "Failed"
            decision.condition(DEPLOYMENT_READY, "False", "DeploymentDeleted", MSG_DELETED)
            return decision
        decision.phase, decision.compose_dgd = "Deploying", True
        decision.condition(
            DEPLOYMENT_READY, "False", "DeploymentCreated", f"DynamoGraphDeployment {name} created successfully"
        )
        return decision
    decision.compose_dgd = True
    state = (dgd.get("status") or {}).get("state") or "pending"
    if state == "successful":
        decision.phase = "Deployed"
        decision.condition(DEPLOYMENT_READY, "True", "DeploymentReady", f"DynamoGraphDeployment {name} is ready")
        return decision
    decision.phase = "Deploying"
    previous_reason = (previous_condition(inputs.previous, DEPLOYMENT_READY) or {}).get("reason")
    if before == "Deployed" or previous_reason == "DeploymentDegraded":
        decision.condition(DEPLOYMENT_READY, "False", "DeploymentDegraded", f"Deployment degraded to {state}")
    else:
        decision.condition(DEPLOYMENT_READY, "False", "DeploymentInProgress", f"DGD {name} is in {state} state")
    return decision


def _succeeded(decision: Decision) -> None:
    if decision.phase == "Failed":
        for type_ in (VALIDATION, PROFILING, SPEC_GENERATED, DEPLOYMENT_READY):
            cond = decision.conditions.get(type_)
            if cond is not None and cond.status == "False":
                decision.condition(SUCCEEDED, "False", cond.reason, FAILED_PREFIXES[type_] + cond.message)
                return
        decision.condition(SUCCEEDED, "False", "Failed", "")
        return
    status, reason = SUCCEEDED_BY_PHASE[decision.phase]
    driver = {"Pending": PROFILING, "Profiling": PROFILING, "Ready": SPEC_GENERATED}.get(
        decision.phase, DEPLOYMENT_READY
    )
    message = MSG_SPEC_AVAILABLE if decision.phase == "Ready" else decision.conditions[driver].message
    decision.condition(SUCCEEDED, status, reason, message)


def _terminal(inputs: Inputs) -> Decision:
    """Failed stays Failed: the conditions as they were (Succeeded re-derived), the Job kept for its logs."""
    decision = Decision("Failed", compose_job=inputs.observed.job is not None)
    for cond in inputs.previous.get("conditions") or []:
        if cond.get("type") in (VALIDATION, PROFILING, SPEC_GENERATED, DEPLOYMENT_READY):
            decision.condition(
                cond["type"], cond.get("status", "False"), cond.get("reason", ""), cond.get("message", "")
            )
    _succeeded(decision)
    return decision


def decide(inputs: Inputs) -> Decision:
    if inputs.previous.get("phase") == "Failed":
        return _terminal(inputs)
    decision = Decision("Pending")
    if inputs.validation_problem is not None:
        decision.phase = "Failed"
        decision.condition(VALIDATION, "False", "ValidationFailed", inputs.validation_problem)
        _succeeded(decision)
        return decision
    decision.condition(VALIDATION, "True", "ValidationPassed", MSG_VALIDATION_PASSED)
    # Once the graph was generated the Job is no longer needed: kept while it exists, never created again.
    profiled = inputs.previous.get("phase") in ("Ready", "Deploying", "Deployed")
    decision.compose_job = inputs.observed.job is not None or not profiled
    if not profiled:
        if inputs.observed.job is None:
            if inputs.previous.get("phase") in (None, "Pending"):
                decision.condition(PROFILING, "False", "DiscoveringHardware", MSG_DISCOVERING)
            else:  # the Job went away while profiling: composed again, it runs again
                decision.phase, decision.profiling_phase = "Profiling", "Initializing"
                decision.condition(PROFILING, "False", "Initializing", MSG_DISCOVERING)
            _succeeded(decision)
            return decision
        if _profiling(inputs, decision) is not None:
            _succeeded(decision)
            return decision
    decision.condition(PROFILING, "True", "ProfilingCompleted", MSG_COMPLETED)
    if inputs.generation_problem is not None:
        decision.phase = "Failed"
        decision.condition(SPEC_GENERATED, "False", "GenerationFailed", inputs.generation_problem)
    else:
        decision.condition(SPEC_GENERATED, "True", "SpecGenerated", MSG_GENERATED)
        if inputs.auto_apply:
            _deployment(inputs, decision)
        else:
            decision.phase = "Ready"
    _succeeded(decision)
    return decision
