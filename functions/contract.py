"""The plain-data contract between the protobuf conversion (``fn.py``) and the steps.

Steps are pure functions of a ``StepRequest`` returning a ``StepResponse``; neither type
knows about protobuf.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["fatal", "warning", "normal"]
DEFAULT_TTL_SECONDS = 60
# How soon a ready XR asks to be reconciled again. Crossplane v2.4 watches what a pipeline composes and requires,
# so a change reaches it at once; a timed look only re-applies everything unchanged. Crossplane takes the shortest
# TTL of a pipeline's steps, so a step with nothing pending answers this rather than the default (100 Ready graphs
# idle: 1.5 reconciles per graph per minute at 60 s, 1.0 at this, the rest Crossplane's own; docs/performance.md).
READY_TTL_SECONDS = 600


@dataclass(frozen=True)
class StepRequest:
    input: dict[str, Any]
    observed_composite: dict[str, Any]
    observed_resources: dict[str, dict[str, Any]] = field(default_factory=dict)
    desired_composite: dict[str, Any] = field(default_factory=dict)
    desired_resources: dict[str, dict[str, Any]] = field(default_factory=dict)
    required: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Result:
    severity: Severity
    message: str
    reason: str | None = None
    claim: bool = False  # an event on the claim too, not only on the composite


# Context key ``function-dynamo render`` sets (Crossplane never does): the request renders a preview
# of what the composition converges to, so a step desires at once what it holds back in a cluster
# until another object exists (a DynamoPlatform's later stages until the earlier ones are observed).
PREVIEW_CONTEXT_KEY = "function-dynamo.crossplane.io/preview"


# Context key ``function-dynamo validate --old`` sets (Crossplane never does): the composite as it was before the
# update being validated, for the rules upstream's webhook checks differently on update (a step in a cluster
# compares with what it composes instead).
PREVIOUS_COMPOSITE_CONTEXT_KEY = "function-dynamo.crossplane.io/previous-composite"


def is_preview(context: dict[str, Any]) -> bool:
    return context.get(PREVIEW_CONTEXT_KEY) is True


@dataclass(frozen=True)
class Condition:
    type: str
    status: Literal["True", "False", "Unknown"]
    reason: str
    message: str = ""


@dataclass(frozen=True)
class DesiredResource:
    resource: dict[str, Any]
    ready: bool | None = None  # None: no opinion (Crossplane then treats it as not ready)


@dataclass(frozen=True)
class ResourceSelector:
    api_version: str
    kind: str
    match_name: str | None = None
    match_labels: dict[str, str] | None = None
    namespace: str | None = None


@dataclass
class StepResponse:
    desired_resources: dict[str, DesiredResource] = field(default_factory=dict)
    composite_status: dict[str, Any] | None = None
    composite_ready: bool | None = None
    results: list[Result] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=list)
    requirements: dict[str, ResourceSelector] = field(default_factory=dict)
    ttl_seconds: int = DEFAULT_TTL_SECONDS

    @property
    def fatal(self) -> bool:
        return any(r.severity == "fatal" for r in self.results)


def fatal(message: str, reason: str | None = None) -> StepResponse:
    return StepResponse(results=[Result("fatal", message, reason)])
