"""Pipeline step ``GraphDeployment``: a DynamoGraphDeployment XR becomes Grove and Kubernetes objects."""

from __future__ import annotations

from functions.api.graph import SpecError, graph_from_xr
from functions.render.grove import render_podcliqueset
from functions.render.services import render_component_service
from functions.step import DesiredResource, StepRequest, StepResponse, fatal

PCS_RESOURCE = "podcliqueset"


def service_resource_name(component_key: str) -> str:
    return f"service-{component_key}"


def render_graph_deployment(request: StepRequest) -> StepResponse:
    try:
        graph = graph_from_xr(request.observed_composite)
    except SpecError as err:
        return fatal(str(err), reason="InvalidSpec")
    desired = {PCS_RESOURCE: DesiredResource(render_podcliqueset(graph))}
    for component in graph.components:
        if component.component_type == "frontend":
            desired[service_resource_name(component.key)] = DesiredResource(render_component_service(graph, component))
    return StepResponse(desired_resources=desired)
