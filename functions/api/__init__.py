"""The Dynamo API that several kinds share: the DGD/DCD component models per version (``v1alpha1``, ``v1beta1``,
``common``), the normalised graph model every renderer takes (``graph``), the normalisers, and the operator
configuration every step reads."""

GROUP = "nvidia.com"  # the API group of every Dynamo kind
