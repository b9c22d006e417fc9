"""DynamoGraphDeployment: the graph of components, its two steps and what only they use.

- ``graph_render_step``: the ``GraphDeployment`` step: the Grove pathway (one PodCliqueSet) or, without Grove, one
  nested DynamoComponentDeployment per component (``component_pathway``, ``dcds``, ``rolling_update``), with
  Services, mesh, RBAC, scaling adapters and checkpoints (``graph_checkpoints``), and the origin version
  (``origin``).
- ``graph_status_step``: the ``GraphStatus`` step: readiness and the XR status from what runs (``graph_status``
  for Grove, ``dcd_status`` for the component pathway, ``restart``/``restart_status``/``dcd_restart`` for
  ordered restarts, ``status_input`` for the step's Input).
- ``graph_xrd``: its XRD, the union of upstream's v1alpha1 and v1beta1 schemas (tooling only).
"""
