"""Generating CompositeResourceDefinitions from the API models: the XRD shape every kind shares (``builder``),
OpenAPI schemas from pydantic models and the union of two versions' schemas (``schema``), upstream's webhook
rules as CEL (``rules``) and the Kubernetes types read from upstream's CRDs (``kube_catalog``). Each kind's
XRD is defined in its folder (``functions/kinds/<kind>/<kind>_xrd.py``); ``functions.tooling.xrds`` writes them all.
Tooling only: the server never imports this package, and the runtime image leaves it out."""
