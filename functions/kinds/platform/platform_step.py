"""Pipeline step ``Platform``: a DynamoPlatform XR becomes a cluster ready for Dynamo, one stage after another.

1. The cloud's control plane (``functions.kube.platform_{aws,gcp,azure}``); nothing for ``existing``.
2. Once it is Ready: the node pools and, on EKS, the ClusterAuth that writes the kubeconfig.
3. Once the kubeconfig Secret holds its key (a required resource; a provider writes it): the provider-helm and
   provider-kubernetes configurations for the cluster.
4. Once every node pool is Ready: the Helm Releases, each after the one before it is Ready.
5. Once every Release is Ready: the EnvironmentConfig ``dynamo-platform-<name>`` says ``data.cluster.ready``; the
   platform is then Ready. (That EnvironmentConfig is composed from the first reconcile: it holds the platform's
   cluster-wide name, so a second platform of the name is refused before it composes anything, and it
   publishes which namespaces may place graphs on the platform: ``functions.kinds.platform.tenancy``.)

A render (``function-dynamo render``) previews every stage at once. What is composed stays composed: a stage
that stops being Ready holds the next ones back but deletes nothing.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from functions.api.graph import SpecError
from functions.api.normalise import claimed_object, parse_xr_spec
from functions.api.operator_config import ENVIRONMENT_CONFIG_API_VERSION, OperatorConfig
from functions.api.schema_check import check_xr_spec, spec_schema_file
from functions.contract import DesiredResource, ResourceSelector, StepRequest, StepResponse, fatal, is_preview
from functions.kinds.platform.addons import (
    release_plans,
    render_environment_config,
    render_provider_configs,
    render_release,
)
from functions.kinds.platform.aws import render_aws
from functions.kinds.platform.azure import render_azure
from functions.kinds.platform.cloud import CloudPlan, Platform
from functions.kinds.platform.gcp import render_gcp
from functions.kinds.platform.platform_api import DynamoPlatformSpec, platform_problems
from functions.kinds.platform.platform_names import environment_config_name, kubernetes_provider_config_name
from functions.kinds.platform.platform_status import PlatformStatus, is_ready, kubeconfig_server, resource_state
from functions.kinds.platform.tenancy import holder

KUBECONFIG_REQUIREMENT = "kubeconfig"
RECORD_REQUIREMENT = "platform-record"  # the platform's own EnvironmentConfig, if it exists: who holds the name
ENVIRONMENT_CONFIG_RESOURCE = "environmentconfig"
PENDING_TTL_SECONDS = 15
READY_TTL_SECONDS = 60
NODE_POOL_STATE = {"aws": "status"}  # the atProvider field holding the provider's own state of a pool
CLUSTER_VERSION = {"aws": "version", "azure": "currentKubernetesVersion", "gcp": "masterVersion"}
CLUSTER_ENDPOINT = {"aws": "endpoint", "azure": "fqdn", "gcp": "endpoint"}
SPEC_SCHEMA = spec_schema_file(Path(__file__).parent)  # the XRD's spec schema, checked first


def cloud_plan(platform: Platform) -> CloudPlan:
    cloud = platform.spec.cloud
    if cloud == "aws":
        return render_aws(platform)
    if cloud == "gcp":
        return render_gcp(platform)
    if cloud == "azure":
        return render_azure(platform)
    assert platform.spec.existing is not None
    ref = platform.spec.existing.kubeconfigSecretRef
    return CloudPlan(kubeconfig=(ref.name, ref.key))


def _check(spec: DynamoPlatformSpec) -> None:
    problems = platform_problems(spec)
    if problems:
        raise SpecError("; ".join(problems))
    try:
        OperatorConfig.model_validate(spec.config)
    except ValueError as err:
        raise SpecError(f"spec.config: not a platform configuration: {err}") from None


def _observed_endpoint(platform: Platform, cluster: dict[str, Any] | None) -> tuple[str | None, str | None]:
    at_provider = ((cluster or {}).get("status") or {}).get("atProvider") or {}
    cloud = platform.spec.cloud
    endpoint = at_provider.get(CLUSTER_ENDPOINT.get(cloud, ""))
    if endpoint and not str(endpoint).startswith("https://"):
        endpoint = f"https://{endpoint}"
    version = at_provider.get(CLUSTER_VERSION.get(cloud, ""))
    return (str(endpoint) if endpoint else None), (str(version) if version else None)


def dynamo_platform(req: StepRequest) -> StepResponse:
    xr = req.observed_composite
    try:
        check_xr_spec(xr, SPEC_SCHEMA)
        claim = claimed_object(xr, "DynamoPlatform")
        spec = parse_xr_spec(xr, DynamoPlatformSpec)
        _check(spec)
    except SpecError as err:
        return fatal(str(err), reason="InvalidSpec")
    platform = Platform(claim.name, claim.namespace, spec)
    preview = is_preview(req.context)
    record_name = environment_config_name(platform.name)
    requirements = {
        RECORD_REQUIREMENT: ResourceSelector(ENVIRONMENT_CONFIG_API_VERSION, "EnvironmentConfig", record_name)
    }
    if RECORD_REQUIREMENT not in req.required:
        return StepResponse(requirements=requirements)  # nothing composed before the name is known to be free
    for record in req.required.get(RECORD_REQUIREMENT) or []:
        other = holder(record, (xr.get("metadata") or {}).get("uid"), platform.namespace)
        if other is not None:
            message = (
                f"metadata.name: a DynamoPlatform named {platform.name!r} exists in namespace {other} already "
                f"(its EnvironmentConfig {record_name} holds the name): a platform's name is cluster-wide; "
                "choose another"
            )
            return replace(fatal(message, reason="NameTaken"), requirements=requirements)
    observed = req.observed_resources
    plan = cloud_plan(platform)
    status = PlatformStatus()
    desired: dict[str, DesiredResource] = {}

    def kept(stage: dict[str, Any]) -> bool:
        return any(key in observed for key in stage)

    def compose(key: str, obj: dict[str, Any], ready: bool | None = None) -> bool:
        ready = is_ready(observed.get(key)) if ready is None else ready
        desired[key] = DesiredResource(obj, ready=ready)
        return ready

    for key, obj in plan.control_plane.items():
        compose(key, obj)
    cluster = observed.get(plan.cluster_key) if plan.cluster_key else None
    status.cluster_ready = plan.cluster_key is None or is_ready(cluster)
    status.endpoint, status.kubernetes_version = _observed_endpoint(platform, cluster)
    # A stage's gate opens it; once composed it stays composed (kept) when the gate closes again, e.g. while the
    # cluster upgrades or EKS refreshes the kubeconfig: it holds the next stages back and deletes nothing.
    if status.cluster_ready or preview or kept(plan.after_cluster):
        for key, obj in plan.after_cluster.items():
            compose(key, obj)
    for pool, key in plan.node_pools.items():
        obj = observed.get(key)
        ready = is_ready(obj) if key in desired else False
        state = resource_state(obj, NODE_POOL_STATE.get(spec.cloud)) if key in desired else "Pending"
        status.node_pools.append({"name": pool, "ready": ready, "state": state})

    secret_name, secret_key = plan.kubeconfig
    secrets = req.required.get(KUBECONFIG_REQUIREMENT, [])
    status.kubeconfig_ready, server = kubeconfig_server(secrets, secret_key)
    status.endpoint = server or status.endpoint
    if not status.kubeconfig_ready:
        status.waiting_for = f"waiting for Secret {secret_name} to hold key {secret_key}"
    provider_configs = render_provider_configs(platform, plan)
    connected = status.kubeconfig_ready or preview
    if connected or kept(provider_configs):
        for key, obj in provider_configs.items():
            # a ProviderConfig has no Ready condition: it is ready once it exists
            connected = compose(key, obj, ready=key in observed or preview) and connected
        status.provider_config = kubernetes_provider_config_name(platform.name)

    installing = connected and (status.pools_ready or preview)
    for release in release_plans(spec.prerequisites):
        key = f"release-{release.key}"
        ready, state = False, "Pending"
        if installing or key in observed:
            ready = compose(key, render_release(platform, release))
            state = resource_state(observed.get(key), "state")
        installing = installing and (ready or preview)
        status.prerequisites.append(
            {
                "name": release.key,
                "chart": release.chart.name,
                "version": release.chart.version,
                "ready": ready,
                "state": state,
            }
        )
    # Composed from the start: it holds the platform's name and publishes its tenancy; placed graphs wait for
    # data.cluster.ready.
    exists = ENVIRONMENT_CONFIG_RESOURCE in observed or preview
    record = render_environment_config(platform, status.endpoint, ready=installing and exists)
    compose(ENVIRONMENT_CONFIG_RESOURCE, record, ready=exists)
    if installing and exists:
        status.environment_config = record_name
    return StepResponse(
        desired_resources=desired,
        composite_status=status.as_status(),
        composite_ready=status.ready,
        conditions=status.conditions(),
        requirements={
            **requirements,
            KUBECONFIG_REQUIREMENT: ResourceSelector(
                "v1", "Secret", match_name=secret_name, namespace=platform.namespace
            ),
        },
        ttl_seconds=READY_TTL_SECONDS if status.ready else PENDING_TTL_SECONDS,
    )
