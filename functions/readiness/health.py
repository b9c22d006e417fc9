"""Health checks per composed kind: is an observed composed resource ready?

Kinds without a rule of their own (Service, ServiceAccount, Role, RoleBinding, ConfigMap, and any
kind not listed) are ready once they are observed, i.e. once Crossplane has created them: upstream
counts such children as always ready once synced. A desired resource not observed yet is not
ready, with upstream's reason "resource not found". The PodCliqueSet is judged elsewhere
(``functions.kinds.graph.graph_status``), from the Grove objects it spawns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from functions.readiness.deployment import deployment_readiness
from functions.readiness.verdicts import MISSING, READY, Readiness

Check = Callable[[dict[str, Any]], Readiness]


def ready_once_observed(_: dict[str, Any]) -> Readiness:
    return READY


RBAC_GROUP = "rbac.authorization.k8s.io"

# (API group, kind) -> the check of an observed object of that kind.
HEALTH_CHECKS: dict[tuple[str, str], Check] = {
    ("", "Service"): ready_once_observed,
    ("", "ServiceAccount"): ready_once_observed,
    ("", "ConfigMap"): ready_once_observed,
    (RBAC_GROUP, "Role"): ready_once_observed,
    (RBAC_GROUP, "RoleBinding"): ready_once_observed,
    ("apps", "Deployment"): deployment_readiness,
}


def group_kind(obj: dict[str, Any]) -> tuple[str, str]:
    api_version = str(obj.get("apiVersion", ""))
    group = api_version.split("/", 1)[0] if "/" in api_version else ""
    return group, str(obj.get("kind", ""))


def ready_once_applied(desired: dict[str, Any]) -> bool:
    """Whether ``desired`` is of a kind ready once it exists, which it does once the reconcile that applies it
    succeeded (an apply that fails makes the XR ``Synced=False``)."""
    return HEALTH_CHECKS.get(group_kind(desired), ready_once_observed) is ready_once_observed


def composed_readiness(desired: dict[str, Any], observed: dict[str, Any] | None) -> Readiness:
    """Readiness of one composed resource: its kind's check on the observed object."""
    if observed is None:
        return MISSING
    return HEALTH_CHECKS.get(group_kind(desired), ready_once_observed)(observed)
