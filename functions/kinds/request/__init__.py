"""DynamoGraphDeploymentRequest (DGDR): profile a model against an SLA, then deploy the graph it picks.

- ``request_api``: both versions' models; ``request_conversion``: v1alpha1 to v1beta1; ``request_xrd``: its XRD
  (tooling only).
- ``request_step``: the ``GraphDeploymentRequest`` step and its phases; ``request_rules``: upstream's admission
  rules; ``request_status``: the status.
- ``profiling_job``: the profiling Job, with ``profiling_overrides`` (what a request may override) and
  ``profiling_copier`` (the sidecar that copies the profiler's output); ``generated_graph``: the
  DynamoGraphDeployment the profiler chose.
"""
