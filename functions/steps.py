"""The step registry: the ``kind`` of a pipeline step's Input selects the step."""

from __future__ import annotations

from collections.abc import Callable

from functions.component_step import component_deployment
from functions.graph_step import render_graph_deployment
from functions.scaling_step import scaling_adapter
from functions.status_step import graph_status
from functions.step import StepRequest, StepResponse, passthrough

INPUT_API_VERSION = "dynamo.fn.crossplane.io/v1beta1"

Step = Callable[[StepRequest], StepResponse]

STEPS: dict[str, Step] = {
    "ComponentDeployment": component_deployment,
    "GraphDeployment": render_graph_deployment,
    "GraphStatus": graph_status,
    "Noop": passthrough,
    "ScalingAdapter": scaling_adapter,
}


def step_for_input(input_obj: dict) -> Step | None:
    if input_obj.get("apiVersion") != INPUT_API_VERSION:
        return None
    return STEPS.get(input_obj.get("kind", ""))
