"""The pod spec of a component: type defaults, then the user's pod template, in upstream's order
(docs/upstream/operator.md §2.1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from functions.api.graph import MAIN_CONTAINER, Component, Graph, SpecError, json_copy, merge_envs
from functions.api.operator_config import OperatorConfig
from functions.kube.defaults import WORKER_TYPES, common_env, type_container, type_pod
from functions.kube.naming import discovery_service_account, dynamo_namespace

DEFAULT_COMMAND = ["/bin/sh", "-c"]
SHARED_MEMORY_VOLUME = "shared-memory"
SHARED_MEMORY_PATH = "/dev/shm"
WORKER_SUFFIX_ENV = "DYN_NAMESPACE_WORKER_SUFFIX"
VLLM_COMPILATION_CACHE = "/root/.cache/vllm"
DEFAULT_FS_GROUP = 1000
FRONTEND_SIDECAR = "sidecar-frontend"
DISCOVERY_BACKEND_ANNOTATION = "nvidia.com/dynamo-discovery-backend"
DISCOVERY_MODE_ANNOTATION = "nvidia.com/dynamo-kube-discovery-mode"
INFRASTRUCTURE_ENV = {
    "natsAddress": "NATS_SERVER",
    "etcdAddress": "ETCD_ENDPOINTS",
    "modelExpressURL": "MODEL_EXPRESS_URL",
    "prometheusEndpoint": "PROMETHEUS_ENDPOINT",
}


@dataclass(frozen=True)
class PodContext:
    """What the pod defaults depend on besides the component itself."""

    graph: Graph
    operator_config: OperatorConfig
    backend: str = "noop"  # vllm | sglang | trtllm | noop

    @property
    def discovery_backend(self) -> str:
        return (
            self.graph.metadata_annotations.get(DISCOVERY_BACKEND_ANNOTATION) or self.operator_config.discovery.backend
        )

    @property
    def container_discovery(self) -> bool:
        return self.graph.metadata_annotations.get(DISCOVERY_MODE_ANNOTATION) == "container"


def _non_empty(value: Any) -> bool:
    return value not in (None, "", [], {})


def _overlay_container(base: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
    """The user's fields override the defaults when set; env merges by name with the user winning.

    ``base`` and ``user`` must be the caller's own objects: their values are taken, not copied.
    """
    out = dict(base)
    for key, value in user.items():
        if key == "env":
            out["env"] = merge_envs(out.get("env", []), value or [])
        elif _non_empty(value):
            out[key] = value
    return out


def _infrastructure_env(operator_config: OperatorConfig) -> list[dict[str, Any]]:
    infra = operator_config.infrastructure
    return [
        {"name": env, "value": getattr(infra, field)}
        for field, env in INFRASTRUCTURE_ENV.items()
        if getattr(infra, field)
    ]


def _main_container(ctx: PodContext, component: Component, user_main: dict[str, Any]) -> dict[str, Any]:
    graph = ctx.graph
    dyn_ns = dynamo_namespace(graph, component)
    typed = type_container(component.component_type, dyn_ns, graph.name, graph.namespace)
    defaults = common_env(
        component.component_type, dyn_ns, graph.name, graph.namespace, ctx.discovery_backend, ctx.container_discovery
    )
    base = {"name": MAIN_CONTAINER, "command": list(DEFAULT_COMMAND), **typed}
    if graph.worker_hash and component.component_type in WORKER_TYPES:
        defaults = merge_envs(defaults, [{"name": WORKER_SUFFIX_ENV, "value": graph.worker_hash}])
    base["env"] = merge_envs(defaults, typed.get("env", []))
    base["env"] = merge_envs(base["env"], json_copy(list(graph.envs)))  # the graph's are shared by components
    main = _overlay_container(base, user_main)
    present = {e["name"] for e in main["env"]}
    main["env"] = merge_envs(
        main["env"], [e for e in _infrastructure_env(ctx.operator_config) if e["name"] not in present]
    )
    return main


def _compilation_cache(ctx: PodContext, component: Component, main: dict[str, Any]) -> None:
    """A compilation-cache PVC mounts at its path, or vLLM's cache directory, with VLLM_CACHE_ROOT for vLLM. A
    pod template that mounts it there already (a converted v1alpha1 graph's does) keeps its first such mount in
    place and no second (upstream ``applyCompilationCache``)."""
    for mount in component.volume_mounts:
        path = mount.mount_point or (VLLM_COMPILATION_CACHE if ctx.backend == "vllm" else None)
        if not path:
            raise SpecError(
                f"{component.name}: the compilation cache {mount.name!r} needs a mount path "
                "(only vLLM has a default one)"
            )
        wanted = {"name": mount.name, "mountPath": path}
        mounts = main.setdefault("volumeMounts", [])
        first = next((i for i, m in enumerate(mounts) if m == wanted), None)
        if first is None:
            mounts.append(wanted)
        else:
            main["volumeMounts"] = [m for i, m in enumerate(mounts) if i <= first or m != wanted]
        if ctx.backend == "vllm":
            main["env"] = [*main["env"], {"name": "VLLM_CACHE_ROOT", "value": path}]


def _pvc_volume(name: str) -> dict[str, Any]:
    """The volume a mount with no volume of its name gets: the PVC of that name."""
    return {"name": name, "persistentVolumeClaim": {"claimName": name}}


def _missing_pvc_volumes(volumes: list[dict[str, Any]], main: dict[str, Any]) -> list[dict[str, Any]]:
    """A mount of main with no volume of that name mounts the PVC of that name (upstream appendMissingPVCVolumes)."""
    existing = {v["name"] for v in volumes}
    return [_pvc_volume(m["name"]) for m in main.get("volumeMounts", []) if m["name"] not in existing]


def _with_missing_mounts(container: dict[str, Any], mounts: list[dict[str, Any]]) -> dict[str, Any]:
    """The container with each of ``mounts`` whose name it does not mount yet appended (upstream
    appendMissingVolumeMounts)."""
    own = list(container.get("volumeMounts") or [])
    names = {m.get("name") for m in own}
    for mount in mounts:
        if mount.get("name") not in names:
            own.append(json_copy(mount))
            names.add(mount.get("name"))
    return container | {"volumeMounts": own} if own else container


def _frontend_sidecar(
    ctx: PodContext, component: Component, containers: list[dict[str, Any]], main_mounts: list[dict[str, Any]]
) -> None:
    """The frontend sidecar: frontend defaults under the user's fields, plus the main container's mounts (the
    user's and the compilation cache's, as upstream HEAD's mergeFrontendSidecarDefaults)."""
    sidecar = component.frontend_sidecar
    if not sidecar:
        return
    frontend = Component(
        name=component.name, component_type="frontend", sub_component_type=None, replicas=1, node_count=1
    )
    if "container" in sidecar:  # v1beta1: names one of the pod template's containers
        for i, container in enumerate(containers):
            if container.get("name") == sidecar["container"]:
                merged = _main_container(ctx, frontend, container) | {"name": container["name"]}
                containers[i] = _with_missing_mounts(merged, main_mounts)
                return
        raise SpecError(
            f"spec.components.{component.name}.frontendSidecar: no container named {sidecar['container']!r} "
            "in the pod template"
        )
    user = json_copy({"image": sidecar.get("image"), "args": sidecar.get("args"), "env": sidecar.get("envs") or []})
    if sidecar.get("envFromSecret"):
        user["envFrom"] = [{"secretRef": {"name": sidecar["envFromSecret"]}}]
    containers.append(
        _with_missing_mounts(_main_container(ctx, frontend, user) | {"name": FRONTEND_SIDECAR}, main_mounts)
    )


def append_missing_pvc_volumes(pod: dict[str, Any]) -> None:
    """Upstream HEAD's appendMissingPVCVolumesForMounts, after the backend's rewrite: the volumes in the order
    of main's mounts (a mount with no volume of its name mounts the PVC of that name), then the other volumes
    in their order. So a model cache mounted by the user comes before the shared memory appended after it."""
    volumes = list(pod.get("volumes") or [])
    by_name = {v.get("name"): v for v in volumes}
    ordered: list[dict[str, Any]] = []
    seen: set[str] = set()
    for mount in pod["containers"][0].get("volumeMounts") or []:
        name = mount.get("name")
        if not name or name in seen:
            continue
        ordered.append(by_name.get(name) or _pvc_volume(name))
        seen.add(name)
    ordered += [v for v in volumes if v.get("name") not in seen]
    if ordered:
        pod["volumes"] = ordered


def render_pod_spec(ctx: PodContext, component: Component, *, pvc_volumes: bool = True) -> dict[str, Any]:
    """Upstream HEAD's GenerateBasePodSpec order: main container first, then the user's other containers; the
    volumes the user's, the compilation cache's, shared memory, then (``pvc_volumes``, or the caller after its
    backend rewrite) ordered by main's mounts, with a PVC for each mount no volume provides."""
    user_spec = json_copy(component.pod_template.get("spec", {}))
    user_containers = user_spec.pop("containers", [])
    user_main = next((c for c in user_containers if c.get("name") == MAIN_CONTAINER), {})
    others = [c for c in user_containers if c.get("name") != MAIN_CONTAINER]

    main = _main_container(ctx, component, user_main)
    _compilation_cache(ctx, component, main)
    sidecar_mounts = json_copy(main.get("volumeMounts") or [])  # before shared memory and the backend's

    pod = type_pod(component.component_type, ctx.graph.name, component.epp_config_ref)
    # The user's pod-level fields override the defaults when set (lists are replaced, not merged).
    pod.update({k: v for k, v in user_spec.items() if _non_empty(v)})
    if "securityContext" not in user_spec:
        pod["securityContext"] = {"fsGroup": DEFAULT_FS_GROUP}
    if ctx.discovery_backend == "kubernetes" and not pod.get("serviceAccountName"):
        pod["serviceAccountName"] = discovery_service_account(ctx.graph)
    volumes = list(pod.pop("volumes", []))
    cache_mounts = [m for m in main.get("volumeMounts") or [] if m["name"] in {v.name for v in component.volume_mounts}]
    volumes += _missing_pvc_volumes(volumes, {"volumeMounts": cache_mounts})
    if component.shared_memory:
        # Upstream's ApplySharedMemoryVolumeAndMount: the user's own /dev/shm mount (any name) and any
        # volume named shared-memory give way, so the pod never has two mounts at /dev/shm.
        volumes = [v for v in volumes if v.get("name") != SHARED_MEMORY_VOLUME]
        volumes.append(
            {"name": SHARED_MEMORY_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": component.shared_memory}}
        )
        mounts = [
            m
            for m in main.get("volumeMounts") or []
            if m.get("name") != SHARED_MEMORY_VOLUME and m.get("mountPath") != SHARED_MEMORY_PATH
        ]
        main["volumeMounts"] = [*mounts, {"name": SHARED_MEMORY_VOLUME, "mountPath": SHARED_MEMORY_PATH}]
    containers = [main, *others]
    _frontend_sidecar(ctx, component, containers, sidecar_mounts)
    for container in containers:
        # upstream's Go structs always serialise a container's resources, so the objects it sends hold {}
        container.setdefault("resources", {})
    pod["containers"] = containers
    if volumes:
        pod["volumes"] = volumes
    if pvc_volumes:
        append_missing_pvc_volumes(pod)
    return pod


def is_worker(component: Component) -> bool:
    return component.component_type in WORKER_TYPES
