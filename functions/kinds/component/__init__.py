"""DynamoComponentDeployment: one component on its own, and the component pathway of a graph without Grove.

- ``component_step``: the ``ComponentDeployment`` step: a Deployment or LeaderWorkerSets, Services, mesh, RBAC,
  and the component's status.
- ``component_checkpoints``: a component that checkpoints or restores.
- ``webhook_rules``: upstream's webhook rules the XRD's CEL cannot express, for components and their graph.
- ``component_xrd``: its XRD (tooling only).
"""
