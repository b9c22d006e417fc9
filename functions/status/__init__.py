"""Readiness and status: health checks per composed kind, and the DynamoGraphDeployment status.

Everything here is a pure function of plain dicts (observed objects, the normalised ``Graph``);
the pipeline step that calls it lives in ``functions.steps.graph.status``.
"""

from functions.status.conditions import (
    READY_CONDITION,
    TOPOLOGY_CONDITION,
    graph_ready_condition,
    topology_condition,
)
from functions.status.deployment import deployment_readiness, deployment_replica_status
from functions.status.graph import (
    ComponentStatus,
    component_statuses,
    grove_requirements,
    grove_resource_name,
    podcliqueset_readiness,
    xr_status,
)
from functions.status.grove import pcsg_readiness, podclique_readiness
from functions.status.health import composed_readiness
from functions.status.readiness import NOT_FOUND, Readiness, ReplicaStatus

__all__ = [
    "NOT_FOUND",
    "READY_CONDITION",
    "TOPOLOGY_CONDITION",
    "ComponentStatus",
    "Readiness",
    "ReplicaStatus",
    "component_statuses",
    "composed_readiness",
    "deployment_readiness",
    "deployment_replica_status",
    "graph_ready_condition",
    "grove_requirements",
    "grove_resource_name",
    "pcsg_readiness",
    "podclique_readiness",
    "podcliqueset_readiness",
    "topology_condition",
    "xr_status",
]
