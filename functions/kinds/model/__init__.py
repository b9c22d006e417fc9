"""DynamoModel: a base model or a LoRA, the endpoints that serve it, and the Job that loads a LoRA.

- ``model_api``: the v1alpha1 model; ``model_xrd``: its XRD (tooling only).
- ``model_step``: the ``Model`` step; ``lora_job``: the load Job and its script; ``model_status``: conditions.
"""
