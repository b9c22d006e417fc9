"""A v1alpha1 service becomes a graph ``Component`` whose pod template is in v1beta1 form.

The mapping follows upstream's v1alpha1 -> v1beta1 conversion (docs/upstream/operator.md §8): extraPodSpec and
mainContainer, envs, envFromSecret, probes and resources all land in container ``main``.
"""

from __future__ import annotations

import re
from typing import Any

from functions.api import v1alpha1, v1beta1
from functions.api.fields import QUANTITY_PATTERN
from functions.api.graph import (
    DEFAULT_SHARED_MEMORY,
    GPU_RESOURCE,
    MAIN_CONTAINER,
    WORKER_SUB_TYPES,
    CheckpointConfig,
    Component,
    ConfigMapKey,
    FailoverConfig,
    GMSConfig,
    IngressSpec,
    IngressTLS,
    SpecError,
    VolumeMount,
    json_copy,
    merge_envs,
)

QUANTITY = re.compile(QUANTITY_PATTERN)


def _quantity(value: str, path: str) -> str:
    """The API accepts any string here; a Pod does not, so a non-quantity is a Fatal naming the field."""
    if not QUANTITY.match(value):
        raise SpecError(f"{path}: {value!r} is not a Kubernetes quantity")
    return value


def container_resources(key: str, resources: v1alpha1.Resources, existing: dict[str, Any]) -> dict[str, Any]:
    """Dynamo's cpu/memory/gpu/custom resources as container requests/limits; claims are appended."""
    out = json_copy(existing)
    for part in ("requests", "limits"):
        item = getattr(resources, part)
        if item is None:
            continue
        path = f"spec.services.{key}.resources.{part}"
        values = out.setdefault(part, {})
        if item.cpu:
            values["cpu"] = _quantity(item.cpu, f"{path}.cpu")
        if item.memory:
            values["memory"] = _quantity(item.memory, f"{path}.memory")
        if item.gpu:
            values[item.gpuType or GPU_RESOURCE] = _quantity(item.gpu, f"{path}.gpu")
        values.update({name: _quantity(v, f"{path}.custom[{name}]") for name, v in (item.custom or {}).items()})
    if resources.claims:
        out["claims"] = [*out.get("claims", []), *(c.model_dump(exclude_none=True) for c in resources.claims)]
    return out


def _main_container(key: str, service: v1alpha1.Service, extra: dict[str, Any]) -> dict[str, Any]:
    main = extra.pop("mainContainer", None) or {}
    main = {"name": MAIN_CONTAINER, **{k: v for k, v in main.items() if k != "name"}}
    if service.envs:
        main["env"] = merge_envs(main.get("env", []), json_copy(service.envs))
    if service.envFromSecret:
        main["envFrom"] = [*main.get("envFrom", []), {"secretRef": {"name": service.envFromSecret}}]
    if service.livenessProbe is not None:
        main["livenessProbe"] = json_copy(service.livenessProbe)
    if service.readinessProbe is not None:
        main["readinessProbe"] = json_copy(service.readinessProbe)
    if service.resources is not None:
        main["resources"] = container_resources(key, service.resources, main.get("resources") or {})
    for index, mount in enumerate(service.volumeMounts or []):
        if mount.useAsCompilationCache:
            continue  # rendered as the compilation cache (backend-specific default path)
        if not mount.mountPoint:
            raise SpecError(
                f"spec.services.{key}.volumeMounts[{index}].mountPoint: required unless useAsCompilationCache is set"
            )
        main.setdefault("volumeMounts", []).append({"name": mount.name, "mountPath": mount.mountPoint})
    return main


def _shared_memory(service: v1alpha1.Service) -> str | None:
    if service.sharedMemory is None:
        return DEFAULT_SHARED_MEMORY
    if service.sharedMemory.disabled:
        return None
    return str(service.sharedMemory.size) if service.sharedMemory.size is not None else DEFAULT_SHARED_MEMORY


def _mode(mode: str) -> str:
    """A v1alpha1 mode (``intraPod``) in v1beta1 spelling (``IntraPod``), as upstream's conversion maps it."""
    return mode[:1].upper() + mode[1:]


def gms_config(gms: v1alpha1.GpuMemoryService | v1beta1.GpuMemoryService | None, path: str) -> GMSConfig | None:
    """The GPU memory service of either shape: v1alpha1 by ``enabled``, v1beta1 by the block's presence."""
    if gms is None or not getattr(gms, "enabled", True):
        return None
    return GMSConfig(
        path=path,
        mode=_mode(gms.mode),
        device_class=gms.deviceClassName,
        extra_client_containers=tuple(gms.extraClientContainers or ()),
    )


def failover_config(failover: v1alpha1.Failover | v1beta1.Failover | None, path: str) -> FailoverConfig | None:
    if failover is None or not getattr(failover, "enabled", True):
        return None
    return FailoverConfig(path=path, mode=_mode(failover.mode), num_shadows=failover.numShadows)


def checkpoint_config(
    checkpoint: v1alpha1.Checkpoint | v1beta1.Checkpoint | None, path: str
) -> CheckpointConfig | None:
    """The enabled checkpoint block of either API shape (``enabled: false`` counts as absent, as upstream)."""
    if checkpoint is None or not checkpoint.enabled:
        return None
    job = checkpoint.job
    return CheckpointConfig(
        path=path,
        checkpoint_ref=checkpoint.checkpointRef or None,
        startup_policy=checkpoint.startupPolicy,
        deletion_policy=checkpoint.deletionPolicy,
        target_container=checkpoint.targetContainerName,
        job_pod_template=json_copy(job.podTemplate) if job and job.podTemplate else None,
        gms_client_containers=tuple(job.gmsClientContainers or ()) if job else (),
        identity=checkpoint.identity.model_dump(mode="json", exclude_none=True) if checkpoint.identity else None,
    )


def ingress_spec(ingress: v1alpha1.Ingress | None) -> IngressSpec | None:
    if ingress is None:
        return None
    return IngressSpec(
        enabled=bool(ingress.enabled),
        host=ingress.host or "",
        host_prefix=ingress.hostPrefix,
        host_suffix=ingress.hostSuffix,
        class_name=ingress.ingressControllerClassName,
        tls=IngressTLS(ingress.tls.secretName or "") if ingress.tls is not None else None,
        use_virtual_service=bool(ingress.useVirtualService),
        virtual_service_gateway=ingress.virtualServiceGateway,
        labels=dict(ingress.labels or {}),
        annotations=dict(ingress.annotations or {}),
    )


def epp_settings(
    epp: v1alpha1.EppConfig | v1beta1.EppConfig | None,
) -> tuple[dict[str, Any] | None, ConfigMapKey | None]:
    """(inline EndpointPickerConfig as JSON, ConfigMap reference) of an ``eppConfig``."""
    if epp is None:
        return None, None
    config = epp.config.model_dump(by_alias=True, exclude_none=True, mode="json") if epp.config else None
    ref = ConfigMapKey(epp.configMapRef.name, epp.configMapRef.key) if epp.configMapRef else None
    return config, ref


def component_from_service(key: str, service: v1alpha1.Service) -> Component:
    extra = json_copy(service.extraPodSpec or {})
    main = _main_container(key, service, extra)
    containers = [*extra.pop("containers", []), main]
    pod_metadata = service.extraPodMetadata
    sidecar = service.frontendSidecar.model_dump(exclude_none=True) if service.frontendSidecar else None
    epp_config, epp_config_ref = epp_settings(service.eppConfig)
    gms = gms_config(service.gpuMemoryService, f"spec.services.{key}.gpuMemoryService")
    failover = failover_config(service.failover, f"spec.services.{key}.failover")
    component_type = service.componentType
    if component_type == "worker" and service.subComponentType in WORKER_SUB_TYPES:
        # Upstream's conversion to the v1beta1 hub makes a prefill or decode worker its own type (HEAD).
        component_type = service.subComponentType
    return Component(
        name=key,
        component_type=component_type,
        sub_component_type=service.subComponentType,
        replicas=1 if service.replicas is None else service.replicas,
        node_count=service.multinode.nodeCount if service.multinode else 1,
        labels=dict(service.labels or {}),
        annotations=dict(service.annotations or {}),
        pod_template={
            "metadata": {
                "labels": dict((pod_metadata.labels if pod_metadata else None) or {}),
                "annotations": dict((pod_metadata.annotations if pod_metadata else None) or {}),
            },
            "spec": {**extra, "containers": containers},
        },
        pack_domain=service.topologyConstraint.packDomain if service.topologyConstraint else None,
        model_ref=service.modelRef.name if service.modelRef else None,
        min_available=service.minAvailable,
        shared_memory=_shared_memory(service),
        volume_mounts=tuple(
            VolumeMount(m.name, m.mountPoint, True) for m in service.volumeMounts or [] if m.useAsCompilationCache
        ),
        frontend_sidecar=sidecar,
        global_namespace=bool(service.globalDynamoNamespace),
        ingress=ingress_spec(service.ingress),
        epp_config=epp_config,
        epp_config_ref=epp_config_ref,
        scaling_adapter=bool(service.scalingAdapter and service.scalingAdapter.enabled),
        checkpoint=checkpoint_config(service.checkpoint, f"spec.services.{key}.checkpoint"),
        gms=gms,
        failover=failover,
    )
