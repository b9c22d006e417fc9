"""The Grove pathway: one PodCliqueSet per DynamoGraphDeployment (docs/upstream/operator.md §1.3, newer upstream)."""

from __future__ import annotations

import re
from typing import Any

from functions.api.graph import Component, Graph
from functions.kube import gms, gms_interpod
from functions.kube.checkpoint_restore import apply_component_checkpoint
from functions.kube.gms_graph import apply_component_gms, main_container
from functions.kube.go_written import go_claim_template, go_pod_spec
from functions.kube.labels import DISCOVERY_BACKEND, DISCOVERY_ENABLED, clique_annotations, clique_labels
from functions.kube.naming import clique_names, podcliqueset_name
from functions.kube.podspec import PodContext, render_pod_spec
from functions.kube.roles import role_pod_spec

GROVE_API_VERSION = "grove.io/v1alpha1"
GRAPH_NAME_LABEL = "nvidia.com/dynamo-graph-deployment-name"
KAI_SCHEDULER = "kai-scheduler"
KAI_QUEUE_LABEL = "kai.scheduler/queue"
KAI_QUEUE_ANNOTATION = "nvidia.com/kai-scheduler-queue"
DEFAULT_KAI_QUEUE = "dynamo"
STARTUP_ANY_ORDER = "CliqueStartupTypeAnyOrder"
STARTUP_EXPLICIT = "CliqueStartupTypeExplicit"


_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


def go_duration(value: str) -> str:
    """``value`` as Go's ``time.Duration.String()`` writes it (``15m`` -> ``15m0s``, ``4h`` -> ``4h0m0s``), as
    upstream's controller sends it; a value in another form (fractions, ms) is kept as given."""
    found = _DURATION.match(value)
    if not value or found is None:
        return value
    hours, minutes, seconds = (int(g or 0) for g in found.groups())
    total = hours * 3600 + minutes * 60 + seconds
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{seconds}s"
    if minutes:
        return f"{minutes}m{seconds}s"
    return f"{seconds}s"


def _kai_queue(graph: Graph) -> str:
    return (graph.metadata_annotations.get(KAI_QUEUE_ANNOTATION) or "").strip() or DEFAULT_KAI_QUEUE


def _role_pod_spec(ctx: PodContext, component: Component, role: str | None) -> dict[str, Any]:
    pod = render_pod_spec(ctx, component) if role is None else role_pod_spec(ctx, component, role, "grove")  # type: ignore[arg-type]
    if ctx.operator_config.kai_enabled and not pod.get("schedulerName"):
        pod["schedulerName"] = KAI_SCHEDULER
    return pod


def _clique(
    ctx: PodContext, component: Component, name: str, replicas: int, min_available: int, role: str | None
) -> dict[str, Any]:
    pod = _role_pod_spec(ctx, component, role)
    labels = clique_labels(ctx, component)
    if pod.get("schedulerName") == KAI_SCHEDULER and ctx.operator_config.kai_enabled:
        labels = dict(sorted({**labels, KAI_QUEUE_LABEL: _kai_queue(ctx.graph)}.items()))
    clique: dict[str, Any] = {"name": name, "labels": labels}
    annotations = clique_annotations(ctx, component)
    if annotations:
        clique["annotations"] = annotations
    apply_component_gms(ctx.graph, component, pod, ctx.backend)
    apply_component_checkpoint(ctx, component, clique, pod)
    checkpoint = ctx.graph.checkpoint_of(component.name)
    if checkpoint is not None and checkpoint.waiting:
        # WaitForCheckpoint: no pods until the checkpoint is Ready (docs/upstream/checkpoint-gms-dgdr-model.md §1.6)
        replicas = 0
    clique["spec"] = {"roleName": name, "replicas": replicas, "minAvailable": min_available, "podSpec": pod}
    if component.pack_domain and not component.multinode:
        clique["topologyConstraint"] = {"packDomain": component.pack_domain}
    return clique


def _rank_pod(ctx: PodContext, component: Component, rank: int) -> dict[str, Any]:
    """The pod spec an inter-pod rank starts from: the component's (single-node), or its leader (rank 0) or
    worker role with the rank's hosts and node rank (multinode)."""
    if not component.multinode:
        return _role_pod_spec(ctx, component, None)
    pod = role_pod_spec(ctx, component, "leader" if rank == 0 else "worker", "grove", inter_pod_rank=rank)
    if ctx.operator_config.kai_enabled and not pod.get("schedulerName"):
        pod["schedulerName"] = KAI_SCHEDULER
    return pod


def _inter_pod_component(
    ctx: PodContext, component: Component
) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """(the weight-server and engine cliques of each rank, their scaling group, the PodCliqueSet's claim
    templates) of a component with an inter-pod GPU memory service (``functions.kube.gms_interpod``)."""
    assert component.gms is not None, "only inter-pod components come here"
    gpus = gms.scalar_gpus(main_container(component), component.gms.path)
    failover = component.failover is not None and component.failover.mode == "InterPod"
    cliques = []
    server_base = _role_pod_spec(ctx, component, None)  # the weight server runs no engine: no multinode rewrite
    for rank, server_name, engine_name in gms_interpod.rank_cliques(component):
        base = _rank_pod(ctx, component, rank)
        server = _clique(ctx, component, server_name, 1, 1, None)
        server["spec"]["podSpec"] = gms_interpod.server_pod(server_base, gpus, rank, component, ctx.backend)
        server["labels"] = {
            k: v for k, v in server["labels"].items() if k not in (DISCOVERY_BACKEND, DISCOVERY_ENABLED)
        }
        replicas = gms_interpod.engine_replicas(component)
        engine = _clique(ctx, component, engine_name, replicas, gms_interpod.engine_min_available(component), None)
        engine["spec"]["podSpec"] = gms_interpod.engine_pod(base, component, ctx.backend, rank)
        engine["spec"]["startsAfter"] = [server_name]
        if failover:
            engine["labels"] = dict(sorted({**engine["labels"], gms_interpod.FAILOVER_MEMBER_LABEL: "true"}.items()))
        for clique in (server, engine):
            clique.pop("topologyConstraint", None)  # on the scaling group instead
        cliques += [server, engine]
    group: dict[str, Any] = {
        "name": component.key,
        "cliqueNames": [c["name"] for c in cliques],
        "replicas": component.replicas,
        "minAvailable": component.min_available or 1,
        "resourceSharing": gms_interpod.resource_sharing(component),
    }
    if component.pack_domain:
        group["topologyConstraint"] = {"packDomain": component.pack_domain}
    return cliques, group, gms_interpod.pcs_claim_templates(component, gpus)


def render_podcliqueset(ctx: PodContext, component_backends: dict[str, str]) -> dict[str, Any]:
    """``component_backends`` maps component name to its resolved backend (vllm, sglang, trtllm, noop)."""
    graph = ctx.graph
    cliques: list[dict[str, Any]] = []
    scaling_groups: list[dict[str, Any]] = []
    explicit_startup = False
    claim_templates: list[dict[str, Any]] = []
    for component in graph.components:
        cctx = PodContext(
            graph=graph, operator_config=ctx.operator_config, backend=component_backends.get(component.name, "noop")
        )
        if component.inter_pod_gms:
            ranks, group, templates = _inter_pod_component(cctx, component)
            cliques += ranks
            scaling_groups.append(group)
            claim_templates += templates
            explicit_startup = True  # the engines start after their weight server
            continue
        if not component.multinode:
            (name,) = clique_names(component)
            cliques.append(_clique(cctx, component, name, component.replicas, component.min_available or 1, None))
            continue
        leader_name, worker_name = clique_names(component)
        workers = component.node_count - 1
        leader = _clique(cctx, component, leader_name, 1, 1, "leader")
        worker = _clique(cctx, component, worker_name, workers, workers, "worker")
        if cctx.backend == "trtllm":
            # mpirun on the leader needs the workers' sshd up first (upstream applyCliqueStartupDependencies).
            leader["spec"]["startsAfter"] = [worker_name]
            explicit_startup = True
        cliques += [leader, worker]
        checkpoint = graph.checkpoint_of(component.name)
        group: dict[str, Any] = {
            "name": component.key,
            "cliqueNames": [leader_name, worker_name],
            "replicas": 0 if checkpoint is not None and checkpoint.waiting else component.replicas,
            "minAvailable": component.min_available or 1,
        }
        if component.pack_domain:
            group["topologyConstraint"] = {"packDomain": component.pack_domain}
        scaling_groups.append(group)
    for clique in cliques:
        clique["spec"]["podSpec"] = go_pod_spec(clique["spec"]["podSpec"])  # as upstream's Go structs write it
    template: dict[str, Any] = {
        "cliqueStartupType": STARTUP_EXPLICIT if explicit_startup else STARTUP_ANY_ORDER,
        "headlessServiceConfig": {"publishNotReadyAddresses": True},
        "terminationDelay": go_duration(ctx.operator_config.orchestrators.grove.terminationDelay),
        "cliques": cliques,
    }
    if scaling_groups:
        template["podCliqueScalingGroups"] = scaling_groups
    if claim_templates:
        template["resourceClaimTemplates"] = [go_claim_template(t) for t in claim_templates]  # as Go writes them
    if graph.pack_domain:
        template["topologyConstraint"] = {"packDomain": graph.pack_domain}
    if graph.priority_class_name:
        template["priorityClassName"] = graph.priority_class_name
    metadata: dict[str, Any] = {
        "name": podcliqueset_name(graph),
        "namespace": graph.namespace,
        "labels": dict(sorted({**graph.labels, GRAPH_NAME_LABEL: graph.name}.items())),
    }
    if graph.annotations:
        metadata["annotations"] = dict(sorted(graph.annotations.items()))
    return {
        "apiVersion": GROVE_API_VERSION,
        "kind": "PodCliqueSet",
        "metadata": metadata,
        "spec": {"replicas": 1, "template": template},
    }
