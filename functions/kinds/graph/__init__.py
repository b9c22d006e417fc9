"""The DynamoGraphDeployment's two pipeline steps and what only they use.

``render`` (Input ``GraphDeployment``) composes the Grove pathway or, without Grove, one nested
``XDynamoComponentDeployment`` per component (``components``); ``status`` (Input ``GraphStatus``)
derives readiness and the XR status from what runs. ``admission`` holds the webhook rules the XRD's
CEL cannot see, ``restart`` the restart stamping both steps agree on.
"""
