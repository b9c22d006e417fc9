"""The pod spec of one role (leader or worker) of a multinode component, on either multinode pathway."""

from __future__ import annotations

from typing import Any, Literal

from functions.api.graph import Component
from functions.kube import backends
from functions.kube.mpi_secret import ssh_secret_name
from functions.kube.podspec import PodContext, append_missing_pvc_volumes, render_pod_spec


def role_pod_spec(
    ctx: PodContext,
    component: Component,
    role: Literal["leader", "worker"],
    pathway: Literal["grove", "lws"],
    inter_pod_rank: int | None = None,
) -> dict[str, Any]:
    """The component's base pod spec rewritten by its backend for ``role`` (docs/upstream/operator.md §2.4);
    raises ``BackendError``."""
    pod = render_pod_spec(ctx, component, pvc_volumes=False)
    backends.apply_multinode(
        ctx.backend,
        backends.MultinodeRole(
            pathway=pathway,
            role=role,
            node_count=component.node_count,
            component_key=component.key,
            graph_name=ctx.graph.name,
            namespace=ctx.graph.namespace,
            inter_pod_rank=inter_pod_rank,
        ),
        pod,
        vllm_executor=backends.executor_backend(component.annotations, ctx.graph.metadata_annotations),
        ssh_secret_name=ssh_secret_name(ctx.graph.name, ctx.operator_config),
    )
    append_missing_pvc_volumes(pod)
    return pod
