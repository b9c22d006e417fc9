"""DGDs placed on a DynamoPlatform: a step's composed objects, wrapped in provider-kubernetes Objects.

A claim annotated ``nvidia.com/dynamo-platform: <name>`` is rendered with that platform's EnvironmentConfig
(``dynamo-platform-<name>``, written by the DynamoPlatform once its cluster is ready) instead of the local
``dynamo-platform``, and every object it composes goes to the platform's cluster as the manifest of a
``kubernetes.m.crossplane.io`` Object on the ClusterProviderConfig ``dynamo-platform-<name>``, plus one for the
namespace. Nested composites of this package (component deployments, scaling adapters) stay here, annotated the
same way, and place their own objects.

The wrapped step sees what it would see locally: the Objects' observed manifests (``status.atProvider.manifest``)
as its observed resources, their manifests as the desired ones. What it reads from the cluster (Grove's PodCliques
and scaling groups, a PVC it looks up) is observed through Objects with the ``Observe`` policy only, since a
requirement reaches the control cluster, not the platform's.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

from functions.api.graph import SpecError
from functions.api.normalise import claimed_object
from functions.api.operator_config import ENVIRONMENT_CONFIG_API_VERSION, OPERATOR_CONFIG_REQUIREMENT
from functions.contract import DesiredResource, ResourceSelector, Result, StepRequest, StepResponse, fatal, is_preview
from functions.kinds.platform.platform_names import (
    KUBERNETES,
    PLATFORM_LABEL,
    environment_config_name,
    kubernetes_provider_config_name,
)
from functions.kinds.platform.tenancy import admits, platform_namespace, record_ready
from functions.kube.naming import cut_with_hash
from functions.readiness.grove import PART_OF_LABEL, grove_children

PLACEMENT_ANNOTATION = PLATFORM_LABEL
PLACEMENT_REQUIREMENT = "placement-platform"
NAMESPACE_REQUIREMENT = "placement-tenant-namespace"  # the XR's own namespace, for a platform's namespaceSelector
NAMESPACE_RESOURCE = "placement-namespace"
OBSERVE_PREFIX = "observe-"
PLACED_LABEL = "function-dynamo.crossplane.io/placed"
LOCAL_GROUP = "nvidia.com"
CHECKPOINT_KIND = "DynamoCheckpoint"
OBJECT_NAME_LIMIT = 253
# The remote namespace outlives the DGD: other workloads may share it.
NAMESPACE_POLICIES = ["Observe", "Create", "Update", "LateInitialize"]

Step = Callable[[StepRequest], StepResponse]


def placement_of(xr: dict[str, Any]) -> str | None:
    """The platform the XR's annotation names; None when there is none (malformed metadata is left to the step,
    which names the bad field)."""
    metadata = xr.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    value = annotations.get(PLACEMENT_ANNOTATION) if isinstance(annotations, dict) else None
    return value if isinstance(value, str) and value else None


def is_local(obj: dict[str, Any]) -> bool:
    """This package's own composites stay on the control cluster: the ``nvidia.com`` kinds named ``Dynamo...``
    (namespaced XRs) or ``XDynamo...`` (a claim's cluster XRs); a PodSnapshot is not one of them."""
    group = str(obj.get("apiVersion", "")).split("/")[0]
    return group == LOCAL_GROUP and str(obj.get("kind", "")).removeprefix("X").startswith("Dynamo")


def _uses_checkpoints(result: StepResponse) -> bool:
    """A checkpoint the step composes (an auto checkpoint) or reads (``checkpointRef``)."""
    return any(s.kind == CHECKPOINT_KIND for s in result.requirements.values()) or any(
        d.resource.get("kind") == CHECKPOINT_KIND for d in result.desired_resources.values()
    )


def is_placed_object(obj: dict[str, Any]) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return obj.get("apiVersion") == KUBERNETES and obj.get("kind") == "Object" and labels.get(PLACED_LABEL) == "true"


def object_name(manifest: dict[str, Any]) -> str:
    name = str((manifest.get("metadata") or {}).get("name", ""))
    return cut_with_hash(f"{name}-{str(manifest.get('kind', '')).lower()}", OBJECT_NAME_LIMIT, "-.")


def wrap(manifest: dict[str, Any], platform: str, namespace: str, policies: list[str] | None = None) -> dict[str, Any]:
    """``manifest`` as an Object on the platform's cluster; owner references and status stay behind."""
    meta = {k: v for k, v in (manifest.get("metadata") or {}).items() if k != "ownerReferences"}
    body = {**{k: v for k, v in manifest.items() if k != "status"}, "metadata": meta}
    spec: dict[str, Any] = {
        "forProvider": {"manifest": body},
        "providerConfigRef": {"kind": "ClusterProviderConfig", "name": kubernetes_provider_config_name(platform)},
    }
    if policies is not None:
        spec["managementPolicies"] = policies
    return {
        "apiVersion": KUBERNETES,
        "kind": "Object",
        "metadata": {
            "name": object_name(manifest),
            "namespace": namespace,
            "labels": {PLATFORM_LABEL: platform, PLACED_LABEL: "true"},
        },
        "spec": spec,
    }


def observed_manifest(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The object on the platform's cluster as the provider last saw it; None before it has."""
    manifest = (((obj.get("status") or {}).get("atProvider")) or {}).get("manifest")
    return manifest if isinstance(manifest, dict) else None


def _unwrap_observed(observed: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for key, obj in observed.items():
        if key.startswith(OBSERVE_PREFIX) or key == NAMESPACE_RESOURCE:
            continue
        if not is_placed_object(obj):
            out[key] = obj
        elif (manifest := observed_manifest(obj)) is not None:
            out[key] = manifest
    return out


def _unwrap_desired(desired: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        key: obj["spec"]["forProvider"]["manifest"] if is_placed_object(obj) else obj
        for key, obj in desired.items()
        if not key.startswith(OBSERVE_PREFIX) and key != NAMESPACE_RESOURCE
    }


def _remote_lookups(
    selector: ResourceSelector, desired: dict[str, dict[str, Any]], namespace: str
) -> list[dict[str, Any]] | None:
    """The objects a requirement names on the platform's cluster (manifests of Observe Objects), or None for a
    requirement that stays local (an EnvironmentConfig, this package's composites)."""
    if selector.kind == "EnvironmentConfig" or selector.api_version.split("/")[0] == LOCAL_GROUP:
        return None
    ref = {"apiVersion": selector.api_version, "kind": selector.kind}
    ns = selector.namespace or namespace
    if selector.match_name is not None:
        return [{**ref, "metadata": {"name": selector.match_name, "namespace": ns}}]
    found = []
    for obj in desired.values():
        for kind, name in grove_children(obj):
            labels_match = (selector.match_labels or {}).get(PART_OF_LABEL) == obj["metadata"]["name"]
            if kind == selector.kind and labels_match:
                found.append({**ref, "metadata": {"name": name, "namespace": ns}})
    return found


def placed(step: Step) -> Step:
    """``step``, placing what it composes on the platform its XR's annotation names."""

    @functools.wraps(step)
    def run(req: StepRequest) -> StepResponse:
        platform = placement_of(req.observed_composite)
        if platform is None:
            return step(req)
        return _run_placed(step, req, platform)

    return run


def _run_placed(step: Step, req: StepRequest, platform: str) -> StepResponse:
    config_name = environment_config_name(platform)
    ask = {PLACEMENT_REQUIREMENT: ResourceSelector(ENVIRONMENT_CONFIG_API_VERSION, "EnvironmentConfig", config_name)}
    if PLACEMENT_REQUIREMENT not in req.required:
        return StepResponse(requirements=ask)  # Crossplane calls again with it
    try:
        claim = claimed_object(req.observed_composite, "placed composite")
    except SpecError as err:
        return fatal(str(err), reason="InvalidSpec")
    namespace = claim.namespace
    found = req.required.get(PLACEMENT_REQUIREMENT) or []
    results: list[Result] = []
    where = f"metadata.annotations[{PLACEMENT_ANNOTATION}]"
    unready = (
        f"{where}: DynamoPlatform {platform!r} is not ready: its EnvironmentConfig {config_name} does not exist"
        if not found
        else f"{where}: DynamoPlatform {platform!r} is not ready: its prerequisites are being installed"
        if not record_ready(found[0])
        else ""
    )
    if found:
        refused, ask = _admission(req, found[0], platform, namespace, ask)
        if refused is not None:
            return refused
    if unready:
        if not is_preview(req.context):
            return dataclasses.replace(fatal(unready, reason="PlatformNotReady"), requirements=ask)
        what = "its configuration as it stands" if found else "the default platform configuration"
        results.append(Result("warning", f"{unready}; previewed with {what}"))
    inner = dataclasses.replace(
        req,
        observed_resources=_unwrap_observed(req.observed_resources),
        desired_resources=_unwrap_desired(req.desired_resources),
        required={**req.required, OPERATOR_CONFIG_REQUIREMENT: found},
    )
    first = step(inner)
    if _uses_checkpoints(first):
        message = (
            f"metadata.annotations[{PLACEMENT_ANNOTATION}]: a graph placed on a DynamoPlatform cannot use "
            "DynamoCheckpoints yet (a checkpoint's Job and PodSnapshot run on the control cluster); remove the "
            "annotation, or the components' checkpoint settings"
        )
        return fatal(message, reason="PlacementUnsupported")
    # What the step reads from the cluster, seen through Observe Objects; asked again with what they saw.
    lookups: dict[str, list[dict[str, Any]]] = {}
    requirements = dict(first.requirements)
    composed = {k: d.resource for k, d in first.desired_resources.items()} or inner.desired_resources
    for key, selector in first.requirements.items():
        remote = _remote_lookups(selector, composed, namespace)
        if remote is not None:
            lookups[key] = remote
            del requirements[key]
    result = first
    if lookups:
        seen = {key: _seen(req.observed_resources, refs) for key, refs in lookups.items()}
        answered = {k: v for k, v in seen.items() if v is not None}
        result = step(dataclasses.replace(inner, required={**inner.required, **answered}))
    if result.fatal:
        return dataclasses.replace(result, requirements={**requirements, **ask})
    return _wrap_response(result, platform, claim.name, namespace, lookups, {**requirements, **ask}, results)


def _admission(
    req: StepRequest, record: dict[str, Any], platform: str, namespace: str, ask: dict[str, ResourceSelector]
) -> tuple[StepResponse | None, dict[str, ResourceSelector]]:
    """A Fatal (and what to ask Crossplane for) when the platform does not admit graphs of ``namespace``, as its
    EnvironmentConfig publishes; None when it does. A label selector needs the namespace's labels: the namespace
    is asked for (it is the XR's own, never one a manifest names)."""
    labels: dict[str, str] | None = None
    verdict = admits(record, namespace, None)
    if verdict is None:
        ask = {**ask, NAMESPACE_REQUIREMENT: ResourceSelector("v1", "Namespace", match_name=namespace)}
        if NAMESPACE_REQUIREMENT not in req.required:
            return StepResponse(requirements=ask), ask
        seen = req.required.get(NAMESPACE_REQUIREMENT) or []
        labels = ((seen[0].get("metadata") or {}).get("labels") or {}) if seen else {}
        verdict = admits(record, namespace, labels)
    if verdict:
        return None, ask
    owner = platform_namespace(record)
    where = f"metadata.annotations[{PLACEMENT_ANNOTATION}]: DynamoPlatform {platform!r}"
    message = (
        f"{where} (namespace {owner}) does not admit graphs of namespace {namespace}: its platform team lists the "
        "namespaces it admits in its spec.tenants (namespaces, namespaceSelector)"
        if owner
        else f"{where} admits no namespace: its EnvironmentConfig {environment_config_name(platform)} publishes no "
        "data.tenants (written by a DynamoPlatform, or by hand as data.tenants.namespaces)"
    )
    return dataclasses.replace(fatal(message, reason="NamespaceNotAdmitted"), requirements=ask), ask


def _observe_key(ref: dict[str, Any]) -> str:
    return OBSERVE_PREFIX + object_name(ref)


def _seen(observed: dict[str, dict[str, Any]], refs: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The manifests the Observe Objects saw; None (the requirement not answered) while none was observed yet."""
    objects = [observed.get(_observe_key(ref)) for ref in refs]
    if refs and all(o is None for o in objects):
        return None
    return [m for o in objects if o is not None and (m := observed_manifest(o)) is not None]


def _wrap_response(
    result: StepResponse,
    platform: str,
    owner: str,
    namespace: str,
    lookups: dict[str, list[dict[str, Any]]],
    requirements: dict[str, ResourceSelector],
    results: list[Result],
) -> StepResponse:
    desired: dict[str, DesiredResource] = {}
    for key, item in result.desired_resources.items():
        obj = item.resource
        if is_local(obj):
            meta = obj.setdefault("metadata", {})
            meta["annotations"] = {**(meta.get("annotations") or {}), PLACEMENT_ANNOTATION: platform}
            desired[key] = item
        else:
            desired[key] = DesiredResource(wrap(obj, platform, namespace), ready=item.ready)
    if desired:
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        namespace_object = wrap(ns, platform, namespace, NAMESPACE_POLICIES)
        # one per composite: two DGDs of a namespace each hold their own Object for it
        namespace_object["metadata"]["name"] = cut_with_hash(f"{owner}-namespace", OBJECT_NAME_LIMIT, "-.")
        desired[NAMESPACE_RESOURCE] = DesiredResource(namespace_object, ready=True)
    for refs in lookups.values():
        for ref in refs:
            desired[_observe_key(ref)] = DesiredResource(wrap(ref, platform, namespace, ["Observe"]), ready=True)
    return dataclasses.replace(
        result, desired_resources=desired, requirements=requirements, results=[*results, *result.results]
    )
