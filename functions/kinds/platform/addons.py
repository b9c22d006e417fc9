"""What a DynamoPlatform composes on top of a cluster: the provider-helm and provider-kubernetes configurations that
reach it, one Helm Release per prerequisite, and the EnvironmentConfig that describes the cluster to the DGD steps
(docs/upstream/target-apis.md §4.5, §4.6).

- Helm: a namespaced ``ProviderConfig`` named after the platform, beside its Releases.
- Kubernetes: a ``ClusterProviderConfig`` ``dynamo-platform-<name>``, so that the Objects of DGDs placed on the
  platform, in any namespace, reach the cluster (a namespaced ProviderConfig serves its own namespace only).
- The EnvironmentConfig ``dynamo-platform-<name>``: the PlatformConfig (``functions.api.operator_config``) the installed
  prerequisites imply, with ``spec.config`` written over it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from functions.api.operator_config import ENVIRONMENT_CONFIG_API_VERSION, deep_merge
from functions.kinds.platform.cloud import EXTERNAL_NAME, CloudPlan, Platform
from functions.kinds.platform.platform_api import Chart, Prerequisites, Tenants
from functions.kinds.platform.platform_names import (
    KUBERNETES,
    PLATFORM_LABEL,
    environment_config_name,
    kubernetes_provider_config_name,
)
from functions.kinds.platform.tenancy import TENANTS_KEY

HELM = "helm.m.crossplane.io/v1beta1"
ISTIO_NAMESPACE = "istio-system"
# The chart each prerequisite installs unless the platform names another: the newest releases found on
# 2026-12-01 (Dynamo's platform chart moved KAI to v0.17.0); NATS stays on the 1.x line Dynamo's platform chart
# pins, whose values layout NATS_VALUES follows. Grove is the release whose API the Dynamo operator this package
# follows is built against, and whose CRDs our PodCliqueSets are validated against (scripts/install-tools.sh).
PINNED_CHARTS: dict[str, Chart] = {
    "kai": Chart(repository="oci://ghcr.io/kai-scheduler/kai-scheduler", name="kai-scheduler", version="v0.17.0"),
    "volcano": Chart(repository="https://volcano-sh.github.io/helm-charts", name="volcano", version="1.15.1"),
    "grove": Chart(repository="oci://ghcr.io/ai-dynamo/grove", name="grove-charts", version="v0.1.0-alpha.12-rc1"),
    "lws": Chart(repository="oci://registry.k8s.io/lws/charts", name="lws", version="0.11.1"),
    "nginx": Chart(repository="https://kubernetes.github.io/ingress-nginx", name="ingress-nginx", version="4.15.1"),
    "istio-base": Chart(
        repository="https://istio-release.storage.googleapis.com/charts", name="base", version="1.31.1"
    ),
    "istiod": Chart(repository="https://istio-release.storage.googleapis.com/charts", name="istiod", version="1.31.1"),
    "snapshot": Chart(repository="oci://ghcr.io/ai-dynamo/snapshot", name="snapshot", version="0.1.0"),
    "nats": Chart(repository="https://nats-io.github.io/k8s/helm/charts", name="nats", version="1.3.2"),
}
# JetStream with a file store, as Dynamo's platform chart enables it.
NATS_VALUES: dict[str, Any] = {
    "config": {
        "jetstream": {"enabled": True, "fileStore": {"enabled": True, "pvc": {"enabled": True, "size": "10Gi"}}},
    },
}


@dataclass(frozen=True)
class ReleasePlan:
    key: str  # the composition resource name: release-<key>
    release: str  # the Helm release name on the cluster
    chart: Chart
    namespace: str
    values: dict[str, Any]


def release_plans(prerequisites: Prerequisites) -> list[ReleasePlan]:
    """The Releases in the order they are installed: the scheduler first (Grove's pods are gang-scheduled by it),
    then Grove, LWS, the ingress or Istio, the snapshot chart, NATS."""
    ns = prerequisites.namespace
    plans: list[ReleasePlan] = []

    def add(key: str, release: str, chart: Chart | None, namespace: str, values: dict[str, Any]) -> None:
        plans.append(ReleasePlan(key, release, chart or PINNED_CHARTS[key], namespace, values))

    scheduler = prerequisites.scheduler
    if scheduler.kind != "none":
        add(scheduler.kind, scheduler.kind, scheduler.chart, ns, scheduler.values)
    for key in ("grove", "lws"):
        item = getattr(prerequisites, key)
        if item.enabled:
            add(key, key, item.chart, ns, item.values)
    ingress = prerequisites.ingress
    if ingress.kind == "nginx":
        add("nginx", "ingress-nginx", ingress.chart, ns, ingress.values)
    elif ingress.kind == "istio":
        add("istio-base", "istio-base", None, ISTIO_NAMESPACE, {})
        add("istiod", "istiod", ingress.chart, ISTIO_NAMESPACE, ingress.values)
    if prerequisites.snapshot.enabled:
        add("snapshot", "snapshot", prerequisites.snapshot.chart, ns, prerequisites.snapshot.values)
    if prerequisites.nats.enabled:
        add("nats", "nats", prerequisites.nats.chart, ns, deep_merge(NATS_VALUES, prerequisites.nats.values))
    return plans


def render_release(platform: Platform, plan: ReleasePlan) -> dict[str, Any]:
    chart = {"repository": plan.chart.repository, "name": plan.chart.name, "version": plan.chart.version}
    for_provider: dict[str, Any] = {"chart": chart, "namespace": plan.namespace, "wait": True}
    if plan.values:
        for_provider["values"] = copy.deepcopy(plan.values)
    return {
        "apiVersion": HELM,
        "kind": "Release",
        "metadata": {
            "name": f"{platform.name}-{plan.key}",
            "namespace": platform.namespace,
            "labels": {PLATFORM_LABEL: platform.name},
            "annotations": {EXTERNAL_NAME: plan.release},  # the Helm release's name on the cluster
        },
        "spec": {"forProvider": for_provider, "providerConfigRef": {"kind": "ProviderConfig", "name": platform.name}},
    }


def _credentials(platform: Platform, cloud: CloudPlan) -> dict[str, Any]:
    secret, key = cloud.kubeconfig
    spec: dict[str, Any] = {
        "credentials": {"source": "Secret", "secretRef": {"name": secret, "namespace": platform.namespace, "key": key}}
    }
    if cloud.identity is not None:
        spec["identity"] = copy.deepcopy(cloud.identity)
    return spec


def render_provider_configs(platform: Platform, cloud: CloudPlan) -> dict[str, dict[str, Any]]:
    labels = {PLATFORM_LABEL: platform.name}
    return {
        "providerconfig-helm": {
            "apiVersion": HELM,
            "kind": "ProviderConfig",
            "metadata": {"name": platform.name, "namespace": platform.namespace, "labels": labels},
            "spec": _credentials(platform, cloud),
        },
        "providerconfig-kubernetes": {
            "apiVersion": KUBERNETES,
            "kind": "ClusterProviderConfig",
            "metadata": {"name": kubernetes_provider_config_name(platform.name), "labels": labels},
            "spec": _credentials(platform, cloud),
        },
    }


def platform_data(platform: Platform, endpoint: str | None, ready: bool = True) -> dict[str, Any]:
    """The EnvironmentConfig's data: what the prerequisites imply, then ``spec.config`` over it."""
    pre = platform.spec.prerequisites
    data: dict[str, Any] = {
        "orchestrators": {
            "grove": {"enabled": pre.grove.enabled},
            "lws": {"enabled": pre.lws.enabled},
            "kaiScheduler": {"enabled": pre.scheduler.kind == "kai"},
            "volcanoScheduler": {"enabled": pre.scheduler.kind == "volcano"},
        },
        "checkpoint": {"enabled": pre.snapshot.enabled},
    }
    if pre.nats.enabled:
        data["infrastructure"] = {"natsAddress": f"nats://nats.{pre.namespace}.svc.cluster.local:4222"}
    if pre.ingress.kind == "nginx":
        data["ingress"] = {"controllerClassName": "nginx"}
    data = deep_merge(data, platform.spec.config)
    # Read by people and by DGDs placed on the platform; PlatformConfig ignores it.
    data["cluster"] = {
        "platform": platform.name,
        "namespace": platform.namespace,
        "cloud": platform.spec.cloud,
        "ready": ready,
    }
    if platform.spec.region:
        data["cluster"]["region"] = platform.spec.region
    if endpoint:
        data["cluster"]["endpoint"] = endpoint
    # Who may place graphs on the platform: read by the placement step (functions/kinds/platform/tenancy.py).
    data[TENANTS_KEY] = tenancy_data(platform.namespace, platform.spec.tenants)
    return data


def tenancy_data(namespace: str, tenants: Tenants) -> dict[str, Any]:
    """What the EnvironmentConfig publishes of who may place graphs on the platform."""
    data: dict[str, Any] = {"namespaces": [namespace, *(n for n in tenants.namespaces if n != namespace)]}
    if tenants.namespaceSelector is not None:
        data["namespaceSelector"] = tenants.namespaceSelector.model_dump(exclude_defaults=True)
    return data


def render_environment_config(platform: Platform, endpoint: str | None, ready: bool = True) -> dict[str, Any]:
    """The platform's record: composed from its first reconcile (it holds the platform's name and publishes its
    tenancy), ``data.cluster.ready`` once every prerequisite is installed."""
    return {
        "apiVersion": ENVIRONMENT_CONFIG_API_VERSION,
        "kind": "EnvironmentConfig",
        "metadata": {"name": environment_config_name(platform.name), "labels": {PLATFORM_LABEL: platform.name}},
        "data": platform_data(platform, endpoint, ready),
    }
