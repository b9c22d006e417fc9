"""The step registry: the ``kind`` of a pipeline step's Input selects the step.

One subpackage per composite kind holds its steps (``graph``: ``GraphDeployment`` and
``GraphStatus``; ``component``; ``scaling``; ``checkpoint``; ``model``; ``request``; ``platform``). A new kind adds
its subpackage and one line here. The DGD and DCD steps are ``placed``: a claim annotated with a DynamoPlatform
has its objects composed on that platform's cluster (``functions.steps.placement``).
"""

from __future__ import annotations

from collections.abc import Callable

from functions.contract import StepRequest, StepResponse
from functions.steps.checkpoint.step import dynamo_checkpoint
from functions.steps.component.step import component_deployment
from functions.steps.graph.render import render_graph_deployment
from functions.steps.graph.status import graph_status
from functions.steps.model.step import dynamo_model
from functions.steps.placement import placed
from functions.steps.platform.step import dynamo_platform
from functions.steps.request.step import dynamo_graph_deployment_request
from functions.steps.scaling.step import scaling_adapter

INPUT_API_VERSION = "dynamo.fn.crossplane.io/v1beta1"

Step = Callable[[StepRequest], StepResponse]


def passthrough(request: StepRequest) -> StepResponse:
    """Step ``Noop``: changes nothing (the desired state passes through). The benchmark's floor."""
    return StepResponse()


STEPS: dict[str, Step] = {
    "Checkpoint": dynamo_checkpoint,
    "ComponentDeployment": placed(component_deployment),
    "GraphDeployment": placed(render_graph_deployment),
    "GraphDeploymentRequest": dynamo_graph_deployment_request,
    "GraphStatus": placed(graph_status),
    "Model": dynamo_model,
    "Noop": passthrough,
    "Platform": dynamo_platform,
    "ScalingAdapter": scaling_adapter,
}


def step_for_input(input_obj: dict) -> Step | None:
    if input_obj.get("apiVersion") != INPUT_API_VERSION:
        return None
    return STEPS.get(input_obj.get("kind", ""))
