"""DynamoPlatform: a cluster for Dynamo, and DynamoGraphDeployments placed on one.

- ``platform_api``: the v1alpha1 model; ``platform_xrd``: its XRD (tooling only).
- ``platform_step``: the ``Platform`` step, stage after stage: the cloud's control plane and node pools
  (``aws``, ``gcp``, ``azure``, over ``cloud``), provider configs and Helm releases (``addons``), and the
  EnvironmentConfig placed graphs read; ``platform_status``: the phase and conditions.
- ``placement``: wraps the graph and component steps so a graph annotated ``nvidia.com/dynamo-platform`` is
  composed as provider-kubernetes Objects on that platform's cluster.
"""
