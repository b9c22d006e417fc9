"""DynamoGraphDeploymentScalingAdapter: what an autoscaler scales, one per component of a graph.

- ``scaling_adapters``: the adapters a graph composes and the replicas it reads back from them.
- ``scaling_step``: the ``ScalingAdapter`` step (status only); ``scaling_xrd``: its XRD (tooling only).
"""
