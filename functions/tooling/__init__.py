"""What a person or CI runs and the runtime image leaves out: the ``function-dynamo`` command line (``main``,
one module per command), the in-process pipeline runner (``pipeline``), manifests and claims (``manifests``,
``admit_manifest``), the offline validator (``offline_validation`` over ``validation/``), XRD generation
(``xrds``) and the server benchmark (``bench/``)."""
