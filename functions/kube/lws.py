"""The LeaderWorkerSet pathway of a multinode DynamoComponentDeployment (docs/upstream/operator.md §1.2, §2.4;
docs/upstream/at-head.md §10).

Upstream at HEAD ("native scaling", ``internal/controller/dynamocomponentdeployment_controller.go``
``generateLeaderWorkerSet``) renders **one** ``LeaderWorkerSet`` (``leaderworkerset.x-k8s.io/v1``) per DCD:

* named ``{dcdName}-0`` (so it adopts the first object of the older one-LWS-per-replica shape, whose other
  LWS and Volcano PodGroups are then pruned); ``metadata.labels`` = the DCD's kube labels;
* ``spec.replicas`` = the DCD's replicas (default 1), ``spec.startupPolicy: LeaderCreated``,
  ``spec.leaderWorkerTemplate.size`` = nodeCount; no ``networkConfig``/``rolloutStrategy`` (LWS's own webhook
  defaults them: ``subdomainPolicy: Shared``, RollingUpdate with maxSurge 0 / maxUnavailable 1);
* each template is the DCD pod template rendered for its role (leader / worker) on the LWS pathway (leader
  ``$(LWS_LEADER_ADDRESS)``, worker rank ``$(LWS_WORKER_INDEX)``), with the LWS labels copied over the pod
  labels, ``role: leader|worker``, ``nvidia.com/selector`` removed; no PodGroup, no ``schedulerName``, no
  ``instance-id`` label and no ``scheduling.k8s.io/group-name`` annotation.

Upstream facts beyond docs/upstream/operator.md:

* the LWS leaves ``leaderWorkerTemplate.restartPolicy`` unset (the CRD defaults it to
  ``RecreateGroupOnPodRestart``);
* pod annotations are the pod-template (``extraPodMetadata``) annotations plus ``nvidia.com/restartAt`` when the
  DCD's annotations carry it;
* the command/args check (``checkMainContainer``) runs on the *rendered* main container of each role, after the
  backend rewrite (so a ray leader's ``/bin/sh -c`` passes).
"""

from __future__ import annotations

from typing import Any

from functions.api.graph import MAIN_CONTAINER, Component, SpecError
from functions.kube import backends
from functions.kube.checkpoint_restore import apply_component_checkpoint
from functions.kube.deployment import kube_labels, pod_annotations
from functions.kube.gms_graph import apply_component_gms
from functions.kube.go_written import go_pod_spec
from functions.kube.labels import SELECTOR, clique_labels
from functions.kube.podspec import PodContext
from functions.kube.roles import role_pod_spec

LWS_API_VERSION = "leaderworkerset.x-k8s.io/v1"
LWS_KIND = "LeaderWorkerSet"
ROLE_LABEL = "role"
LEADER, WORKER = "leader", "worker"
STARTUP_POLICY = "LeaderCreated"
# The composed-resource name of the older per-replica shape's first LWS: keeping it lets an upgrade update that
# LWS in place instead of deleting and re-creating it (which would restart every pod).
LWS_RESOURCE = "leaderworkerset-0"


def lws_name(dcd_name: str) -> str:
    """Name of the DCD's LeaderWorkerSet: ``{dcdName}-0``."""
    return f"{dcd_name}-0"


def _sorted(mapping: dict[str, Any]) -> dict[str, Any]:
    return dict(sorted(mapping.items()))


def _main_path(shape: str, field: str) -> str:
    if shape == "v1beta1":
        return f"spec.podTemplate.spec.containers[{MAIN_CONTAINER}].{field}"
    return f"spec.extraPodSpec.mainContainer.{field}"


def _main(pod: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in pod.get("containers") or [] if c.get("name") == MAIN_CONTAINER), None)


def check_main_container(pod: dict[str, Any], role: str, shape: str) -> None:
    """Upstream ``checkMainContainer``: container main exists with a non-empty command and non-empty args."""
    main = _main(pod)
    if main is None:
        raise SpecError(f"{_main_path(shape, 'name')}: the {role} pod of a LeaderWorkerSet needs a container main")
    for field in ("command", "args"):
        if not main.get(field):
            raise SpecError(
                f"{_main_path(shape, field)}: a multinode component rendered as LeaderWorkerSets needs a non-empty "
                f"{field} in container {MAIN_CONTAINER} (the {role} pod has none)"
            )


def lws_role_pod_spec(ctx: PodContext, component: Component, role: str) -> dict[str, Any]:
    """The pod spec of one role on the LWS pathway: base pod and the backend's multinode rewrite."""
    try:
        return role_pod_spec(ctx, component, role, "lws")  # type: ignore[arg-type]
    except backends.BackendError as err:
        raise SpecError(f"spec.backendFramework: {err}") from None


def _pod_template(ctx: PodContext, component: Component, role: str, lws_labels: dict[str, str]) -> dict[str, Any]:
    pod = lws_role_pod_spec(ctx, component, role)
    check_main_container(pod, role, ctx.graph.shape)
    labels = {**clique_labels(ctx, component), **lws_labels, ROLE_LABEL: role}
    labels.pop(SELECTOR, None)
    metadata: dict[str, Any] = {"labels": _sorted(labels)}
    annotations = pod_annotations(component)
    if annotations:
        metadata["annotations"] = annotations
    apply_component_gms(ctx.graph, component, pod, ctx.backend)
    apply_component_checkpoint(ctx, component, metadata, pod)
    return {"metadata": metadata, "spec": go_pod_spec(pod)}  # as upstream's Go structs write it


def render_leaderworkerset(
    ctx: PodContext, component: Component, dcd_name: str, xr_labels: dict[str, Any]
) -> dict[str, Any]:
    """The DCD's LeaderWorkerSet; raises ``SpecError`` for upstream's render-time checks."""
    labels = kube_labels(ctx.graph, component, xr_labels)
    return {
        "apiVersion": LWS_API_VERSION,
        "kind": LWS_KIND,
        "metadata": {"name": lws_name(dcd_name), "namespace": ctx.graph.namespace, "labels": _sorted(labels)},
        "spec": {
            "replicas": component.replicas,
            "startupPolicy": STARTUP_POLICY,
            "leaderWorkerTemplate": {
                "size": component.node_count,
                "leaderTemplate": _pod_template(ctx, component, LEADER, labels),
                "workerTemplate": _pod_template(ctx, component, WORKER, labels),
            },
        },
    }


def render_leaderworkersets(
    ctx: PodContext, component: Component, name: str, xr_labels: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """Composed resource name -> object: the one ``LWS_RESOURCE``.

    ``name`` is the DCD (claim) name; ``xr_labels`` the XR's ``metadata.labels``. Raises ``SpecError`` naming the
    field when the main container lacks a command or args.
    """
    return {LWS_RESOURCE: render_leaderworkerset(ctx, component, name, xr_labels)}
