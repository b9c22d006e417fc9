"""The names a DynamoPlatform gives what it provisions, which the placement step refers to.

Placement wraps the render step of every kind, so it reads these here rather than from the platform's models and
renderers, which a graph's render never needs.
"""

from __future__ import annotations

from functions.api.operator_config import OPERATOR_CONFIG_NAME

PLATFORM_LABEL = "nvidia.com/dynamo-platform"
KUBERNETES = "kubernetes.m.crossplane.io/v1alpha1"  # provider-kubernetes' namespaced API


def kubernetes_provider_config_name(platform_name: str) -> str:
    return f"{OPERATOR_CONFIG_NAME}-{platform_name}"


def environment_config_name(platform_name: str) -> str:
    return f"{OPERATOR_CONFIG_NAME}-{platform_name}"
