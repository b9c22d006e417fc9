"""The Kubernetes building blocks the kinds share: pure functions from the normalised graph
(``functions.api.graph``) and the operator configuration to objects as plain dicts.

Names and labels (``naming``, ``labels``), pod defaults (``defaults``, ``podspec``), engine backends
(``backends/``), the workload writers (``grove``, ``lws``, ``deployment``, ``roles``), ``services``, ``mesh``,
``storage``, ``rbac``, ``mpi_secret``, the GPU Memory Service (``gms``, ``gms_graph``, ``gms_interpod``),
``failover``, restoring from a checkpoint (``checkpoint_ids``, ``checkpoint_job``, ``checkpoint_restore``),
``quantity`` parsing and the runtime version an image's tag names (``runtime_version``).
"""
