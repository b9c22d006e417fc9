"""Which namespaces may place graphs on a DynamoPlatform, and whose a platform's name is.

A platform publishes its tenancy in its EnvironmentConfig ``dynamo-platform-<name>`` (``data.tenants``: its own
namespace first, then those ``spec.tenants.namespaces`` lists, and ``spec.tenants.namespaceSelector``), composed
from the platform's first reconcile with ``data.cluster.ready`` false until every prerequisite is installed. The
placement step reads only that object, never the tenant's manifest, to decide: a graph of a namespace the platform
does not admit is refused. A platform's name is cluster-wide (its EnvironmentConfig and ClusterProviderConfig carry
it), so the EnvironmentConfig is also the record of which platform holds a name: a second platform of the same
name, in another namespace, finds it held and is refused.

Pure functions over the EnvironmentConfig as Crossplane observes it. Placement wraps every kind's step, so this
module does not import the platform's models (``functions.kinds.platform.addons`` writes ``data.tenants``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TENANTS_KEY = "tenants"
CLUSTER_KEY = "cluster"


def _data(record: Mapping[str, Any]) -> Mapping[str, Any]:
    data = record.get("data")
    return data if isinstance(data, Mapping) else {}


def _cluster(record: Mapping[str, Any]) -> Mapping[str, Any]:
    cluster = _data(record).get(CLUSTER_KEY)
    return cluster if isinstance(cluster, Mapping) else {}


def platform_namespace(record: Mapping[str, Any]) -> str | None:
    namespace = _cluster(record).get("namespace")
    return namespace if isinstance(namespace, str) and namespace else None


def record_ready(record: Mapping[str, Any]) -> bool:
    """Every prerequisite installed. A record without the flag was written, before it existed, only once ready."""
    return _cluster(record).get("ready", True) is not False


def admitted_namespaces(record: Mapping[str, Any]) -> list[str]:
    tenants = _data(record).get(TENANTS_KEY)
    listed = tenants.get("namespaces") if isinstance(tenants, Mapping) else None
    names = [n for n in listed if isinstance(n, str)] if isinstance(listed, list) else []
    own = platform_namespace(record)
    return names if names else ([own] if own else [])


def namespace_selector(record: Mapping[str, Any]) -> Mapping[str, Any] | None:
    tenants = _data(record).get(TENANTS_KEY)
    selector = tenants.get("namespaceSelector") if isinstance(tenants, Mapping) else None
    return selector if isinstance(selector, Mapping) else None


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A Kubernetes label selector's verdict on ``labels``: every matchLabels pair and every expression holds (an
    operator it does not know matches nothing)."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for term in selector.get("matchExpressions") or []:
        key, operator, values = term.get("key"), term.get("operator"), term.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True


def admits(record: Mapping[str, Any], namespace: str, labels: Mapping[str, str] | None) -> bool | None:
    """Whether the platform admits graphs of ``namespace``; None while the namespace's labels are needed to say."""
    if namespace in admitted_namespaces(record):
        return True
    selector = namespace_selector(record)
    if selector is None:
        return False
    if labels is None:
        return None
    return selector_matches(selector, labels)


def holder(record: Mapping[str, Any], xr_uid: str | None, namespace: str) -> str | None:
    """The namespace of another platform holding this name through ``record`` (its EnvironmentConfig), or None
    when the record is this platform's own. The controller reference decides when both are known (the API
    server lets one object have one controller, so the first platform to compose it keeps it); else the
    namespace the record names."""
    meta = record.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, Mapping) else None
    controller = next((r for r in refs or [] if isinstance(r, Mapping) and r.get("controller")), None)
    other = platform_namespace(record)
    if controller is not None and xr_uid:
        return None if controller.get("uid") == xr_uid else (other or "another namespace")
    return other if other is not None and other != namespace else None
