"""The normalised DynamoGraphDeployment: one graph model whichever API version was written.

Both shapes share one stored version (the XRD has no conversion webhook), so the shape is
recognised by its content: ``spec.services`` (v1alpha1) or ``spec.components`` (v1beta1).
Renderers only ever see a ``Graph``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

_ATOMIC = frozenset({str, int, float, bool, type(None)})


def json_copy(value: Any) -> Any:
    """A deep copy of JSON data: ``copy.deepcopy``'s result, without its memo and dispatch (3-4x faster).

    Request data decoded from protobuf shares no sub-objects, so the memo has nothing to preserve;
    anything that is not a plain dict, list or scalar still goes through ``copy.deepcopy``.
    """
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _ATOMIC else json_copy(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _ATOMIC else json_copy(v) for v in value]
    if kind in _ATOMIC:
        return value
    return copy.deepcopy(value)


def whole_numbers(value: Any) -> Any:
    """JSON data with whole floats as integers: protobuf carries every number as a double, and Go's JSON writes a
    whole float64 as an integer (``81920``, not ``81920.0``)."""
    if isinstance(value, dict):
        return {k: whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [whole_numbers(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def merge_envs(base: list[dict[str, Any]], override: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Env lists merged by name, ``override`` winning, sorted by name (upstream MergeEnvs)."""
    merged = {e["name"]: e for e in base}
    merged.update({e["name"]: e for e in override})
    return [merged[name] for name in sorted(merged)]


class SpecError(ValueError):
    """Bad input; ``str()`` names the field path and the rule, e.g. ``spec.services.X.replicas: ...``."""


DEFAULT_SHARED_MEMORY = "8Gi"


@dataclass(frozen=True)
class VolumeMount:
    """A PVC mounted into container ``main``; the volume and claim are both named ``name``."""

    name: str
    mount_point: str | None = None
    compilation_cache: bool = False


@dataclass(frozen=True)
class IngressTLS:
    secret_name: str = ""  # "" renders a TLS block without a secret (the controller's default certificate)


@dataclass(frozen=True)
class IngressSpec:
    """A frontend's v1alpha1 ``ingress`` (or the platform default built from the same fields)."""

    enabled: bool = False
    host: str = ""
    host_prefix: str | None = None
    host_suffix: str | None = None
    class_name: str | None = None
    tls: IngressTLS | None = None
    use_virtual_service: bool = False
    virtual_service_gateway: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)

    @property
    def virtual_service_enabled(self) -> bool:
        """Upstream ``IngressSpec.IsVirtualServiceEnabled``: enabled && useVirtualService && a gateway is set."""
        return self.enabled and self.use_virtual_service and self.virtual_service_gateway is not None


@dataclass(frozen=True)
class ConfigMapKey:
    name: str
    key: str


@dataclass(frozen=True)
class CheckpointConfig:
    """A component's enabled checkpoint block (docs/upstream/checkpoint-gms-dgdr-model.md §1.1), defaults applied.

    ``mode`` and ``identity`` are deprecated upstream and ignored by the DGD's auto flow; the presence of
    ``checkpoint_ref`` picks the flow."""

    path: str  # the block's field path, e.g. spec.components[1].experimental.checkpoint
    checkpoint_ref: str | None = None
    startup_policy: str = "Immediate"  # Immediate | WaitForCheckpoint
    deletion_policy: str = "Delete"  # Delete | Retain
    target_container: str = "main"
    job_pod_template: dict[str, Any] | None = None
    gms_client_containers: tuple[str, ...] = ()
    identity: dict[str, Any] | None = None  # legacy: only a standalone DCD looks a checkpoint up by it

    @property
    def waits(self) -> bool:
        return self.startup_policy == "WaitForCheckpoint"


@dataclass(frozen=True)
class GMSConfig:
    """An enabled GPU Memory Service (docs/upstream/checkpoint-gms-dgdr-model.md §3.1); mode in v1beta1 spelling."""

    path: str  # the block's field path
    mode: str = "IntraPod"  # IntraPod | InterPod
    device_class: str = "gpu.nvidia.com"
    extra_client_containers: tuple[str, ...] = ()


@dataclass(frozen=True)
class FailoverConfig:
    """Enabled active/passive failover (docs/upstream/checkpoint-gms-dgdr-model.md §3.1); mode in v1beta1 spelling."""

    path: str
    mode: str = "IntraPod"
    num_shadows: int = 1


@dataclass(frozen=True)
class ResolvedCheckpoint:
    """A component's checkpoint as the DGD resolved it: the DynamoCheckpoint it restores from."""

    component: str
    name: str  # the DynamoCheckpoint's name
    checkpoint_id: str
    startup_policy: str  # Immediate | WaitForCheckpoint
    exists: bool  # the DynamoCheckpoint was observed
    ready: bool  # its phase is Ready
    artifact_version: str = "1"
    targets: tuple[str, ...] = ("main",)
    gms: bool = False  # the DynamoCheckpoint has a GPU memory service
    gms_extra_clients: tuple[str, ...] = ()

    @property
    def waiting(self) -> bool:
        """Worker replicas stay at 0 (``WaitForCheckpoint`` and not Ready yet)."""
        return self.startup_policy == "WaitForCheckpoint" and not self.ready

    @property
    def restores(self) -> bool:
        """The pods are restore-shaped (the checkpoint is Ready, whichever the policy)."""
        return self.exists and self.ready

    def as_status(self) -> dict[str, Any]:
        """``status.checkpoints.<component>`` (``identityHash`` is deprecated upstream and mirrors the ID)."""
        return {
            "checkpointName": self.name,
            "checkpointID": self.checkpoint_id,
            "identityHash": self.checkpoint_id,
            "ready": self.ready,
        }


@dataclass(frozen=True)
class Component:
    """One component (v1alpha1 service) with its pod template in v1beta1 form."""

    name: str
    component_type: str | None
    sub_component_type: str | None
    replicas: int
    node_count: int  # 1 for single-node components
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    pod_template: dict[str, Any] = field(default_factory=dict)  # metadata + spec, main container "main"
    pack_domain: str | None = None
    model_ref: str | None = None
    min_available: int | None = None
    shared_memory: str | None = DEFAULT_SHARED_MEMORY  # size of the /dev/shm volume; None: no volume
    volume_mounts: tuple[VolumeMount, ...] = ()
    frontend_sidecar: dict[str, Any] | None = None
    global_namespace: bool = False
    ingress: IngressSpec | None = None  # v1alpha1 only; None: the platform's default ingress
    epp_config: dict[str, Any] | None = None  # eppConfig.config (an EndpointPickerConfig), JSON
    epp_config_ref: ConfigMapKey | None = None  # eppConfig.configMapRef
    scaling_adapter: bool = False  # a DynamoGraphDeploymentScalingAdapter owns the replicas (see render.scaling)
    checkpoint: CheckpointConfig | None = None  # None: no block, or ``enabled: false``
    gms: GMSConfig | None = None  # None: no GPU memory service
    failover: FailoverConfig | None = None  # None: no failover

    @property
    def multinode(self) -> bool:
        return self.node_count > 1

    @property
    def inter_pod_gms(self) -> bool:
        return self.gms is not None and self.gms.mode == "InterPod"

    @property
    def scaling_group(self) -> bool:
        """Grove runs the component as a PodCliqueScalingGroup: multinode, or an inter-pod GPU memory service."""
        return self.multinode or self.inter_pod_gms

    @property
    def key(self) -> str:
        """Lower-case name used in child object names (upstream ``strings.ToLower(serviceKey)``)."""
        return self.name.lower()


@dataclass(frozen=True)
class Graph:
    name: str
    namespace: str
    shape: str  # "v1alpha1" or "v1beta1": the shape the user wrote
    components: tuple[Component, ...]
    backend_framework: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    envs: tuple[dict[str, Any], ...] = ()
    metadata_annotations: dict[str, str] = field(default_factory=dict)
    pack_domain: str | None = None
    priority_class_name: str | None = None
    restart_id: str | None = None  # spec.restart.id: components restart when it changes
    has_topology_constraint: bool = False  # spec.topologyConstraint is set (even without a packDomain)
    # The worker generation: worker pods carry it as a label and DYN_NAMESPACE_WORKER_SUFFIX (upstream HEAD);
    # set by the DGD's render step from its spec, or by a DCD step from its DCD's label.
    worker_hash: str | None = None
    # A DynamoComponentDeployment applied on its own: no DGD, so its pods carry no graph-name label.
    standalone_component: bool = False
    # The components' checkpoints as resolved against the cluster (set by the render steps).
    checkpoints: tuple[ResolvedCheckpoint, ...] = ()
    # A namespaced XR (the default package): its nested composites are the upstream kinds, named as upstream.
    namespaced: bool = False

    def checkpoint_of(self, component: str) -> ResolvedCheckpoint | None:
        return next((c for c in self.checkpoints if c.component == component), None)

    @property
    def has_any_topology_constraint(self) -> bool:
        return self.has_topology_constraint or any(c.pack_domain for c in self.components)


MAIN_CONTAINER = "main"
# The component types a v1alpha1 worker's subComponentType names; such a component is also its own sub-type.
WORKER_SUB_TYPES = ("prefill", "decode")
GPU_RESOURCE = "nvidia.com/gpu"
