"""DynamoCheckpoint: a checkpoint of one worker pod, and what DGDs and DCDs compose to use one.

- ``checkpoint_api``: the v1alpha1 model; ``checkpoint_xrd``: its XRD (tooling only).
- ``checkpoint_step``: the ``Checkpoint`` step: the checkpoint Job, the PodSnapshot of its pod, upstream's phases.
- ``checkpoint_gms``: a checkpoint of a GPU Memory Service worker (DRA claims).
- ``checkpoint_status``: the phase and conditions from the Job and PodSnapshot.
- ``auto_checkpoint``: the DynamoCheckpoint a graph composes for a worker that checkpoints itself;
  ``checkpoint_refs``: resolving a ``checkpointRef`` and the identity a restore needs.
"""
