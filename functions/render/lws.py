"""The LeaderWorkerSet pathway of a multinode DynamoComponentDeployment (reference §1.2, §1.4, §2.4).

For replica index ``i`` in ``0 .. replicas-1``, one ``LeaderWorkerSet`` (``leaderworkerset.x-k8s.io/v1``) and one
Volcano ``PodGroup`` (``scheduling.volcano.sh/v1beta1``), both named ``{dcdName}-{i}``:

* LWS ``metadata.labels`` = the DCD's kube labels (``spec.labels``, then ``metadata.labels``, then the base-model
  hash) plus ``instance-id: "<i>"``; no annotations. ``spec.replicas: 1``, ``spec.startupPolicy: LeaderCreated``,
  ``spec.leaderWorkerTemplate.size`` = nodeCount.
* Each template is the DCD pod template rendered for its role (leader / worker) on the LWS pathway (leader
  ``$(LWS_LEADER_ADDRESS)``, worker rank ``$(LWS_WORKER_INDEX)``), then: the LWS labels copied over the pod
  labels, ``role: leader|worker``, ``instance-id``, ``nvidia.com/selector`` removed; annotation
  ``scheduling.k8s.io/group-name: <lwsName>``; ``schedulerName: volcano``.
* PodGroup: label ``instance-id`` only, ``spec.minMember`` = nodeCount.

Upstream facts beyond the reference (``internal/controller/dynamocomponentdeployment_controller.go`` and its
``_test.go`` goldens at the baseline, read from the ``zinuga/dynamo`` copy):

* the **worker** template gets the ``scheduling.k8s.io/group-name`` annotation too, not only the leader;
* the LWS sets neither ``leaderWorkerTemplate.restartPolicy`` (the CRD defaults it to ``RecreateGroupOnPodRestart``)
  nor ``rolloutStrategy``/``networkConfig``; the PodGroup sets neither ``queue`` nor ``minResources`` nor
  ``minTaskMember``, and carries no kube labels (just ``instance-id``);
* pod annotations are the pod-template (``extraPodMetadata``) annotations plus ``nvidia.com/restartAt`` when the
  DCD's annotations carry it, plus the group name;
* the command/args check (``checkMainContainer``) runs on the *rendered* main container of each role, after the
  backend rewrite (so a ray leader's ``/bin/sh -c`` passes); the worker GPU check reads the DCD's
  ``resources.limits.gpu`` string (any non-empty value). Here it reads the rendered worker's main container limits
  (``nvidia.com/gpu``, or any resource named ``*/gpu`` for a custom ``gpuType``); a ``gpuType`` not ending in
  ``/gpu`` is not recognised.
* Newer upstream (``ai-dynamo/dynamo`` after the baseline) renders one LWS ``{dcdName}-0`` with ``replicas: N`` and
  no ``instance-id`` label, and its LWS reconcile creates no PodGroup (it deletes the per-replica ones); this
  module follows the baseline (one LWS + PodGroup per replica).
"""

from __future__ import annotations

from typing import Any

from functions.api.graph import MAIN_CONTAINER, Component, SpecError
from functions.render import backends
from functions.render.deployment import kube_labels, pod_annotations
from functions.render.labels import SELECTOR, clique_labels
from functions.render.podspec import PodContext
from functions.render.roles import role_pod_spec

LWS_API_VERSION = "leaderworkerset.x-k8s.io/v1"
LWS_KIND = "LeaderWorkerSet"
PODGROUP_API_VERSION = "scheduling.volcano.sh/v1beta1"
PODGROUP_KIND = "PodGroup"
VOLCANO_SCHEDULER = "volcano"
GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
INSTANCE_ID_LABEL = "instance-id"
ROLE_LABEL = "role"
LEADER, WORKER = "leader", "worker"
STARTUP_POLICY = "LeaderCreated"
LWS_RESOURCE_PREFIX = "leaderworkerset"
PODGROUP_RESOURCE_PREFIX = "podgroup"


def lws_name(dcd_name: str, index: int) -> str:
    """Name of the LeaderWorkerSet (and its PodGroup) for replica ``index``: ``{dcdName}-{index}``."""
    return f"{dcd_name}-{index}"


def lws_names(dcd_name: str, replicas: int) -> list[str]:
    return [lws_name(dcd_name, i) for i in range(replicas)]


def lws_resource_name(index: int) -> str:
    """Composed-resource name of the LeaderWorkerSet for replica ``index``."""
    return f"{LWS_RESOURCE_PREFIX}-{index}"


def podgroup_resource_name(index: int) -> str:
    """Composed-resource name of the Volcano PodGroup for replica ``index``."""
    return f"{PODGROUP_RESOURCE_PREFIX}-{index}"


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
    """The pod spec of one role on the LWS pathway: base pod, backend multinode rewrite, Volcano scheduler."""
    try:
        pod = role_pod_spec(ctx, component, role, "lws")  # type: ignore[arg-type]
    except backends.BackendError as err:
        raise SpecError(f"spec.backendFramework: {err}") from None
    pod["schedulerName"] = VOLCANO_SCHEDULER
    return pod


def _pod_template(
    ctx: PodContext, component: Component, role: str, name: str, lws_labels: dict[str, str], index: int
) -> dict[str, Any]:
    pod = lws_role_pod_spec(ctx, component, role)
    check_main_container(pod, role, ctx.graph.shape)
    labels = {**clique_labels(ctx, component), **lws_labels, ROLE_LABEL: role, INSTANCE_ID_LABEL: str(index)}
    labels.pop(SELECTOR, None)
    annotations = {**pod_annotations(component), GROUP_NAME_ANNOTATION: name}
    return {"metadata": {"labels": _sorted(labels), "annotations": _sorted(annotations)}, "spec": pod}


def render_podgroup(component: Component, name: str, namespace: str, index: int) -> dict[str, Any]:
    """The Volcano PodGroup gang-scheduling the pods of one LeaderWorkerSet."""
    return {
        "apiVersion": PODGROUP_API_VERSION,
        "kind": PODGROUP_KIND,
        "metadata": {"name": name, "namespace": namespace, "labels": {INSTANCE_ID_LABEL: str(index)}},
        "spec": {"minMember": component.node_count},
    }


def render_leaderworkerset(
    ctx: PodContext, component: Component, dcd_name: str, xr_labels: dict[str, Any], index: int
) -> dict[str, Any]:
    """The LeaderWorkerSet of replica ``index``; raises ``SpecError`` for upstream's render-time checks."""
    name = lws_name(dcd_name, index)
    labels = {**kube_labels(component, xr_labels), INSTANCE_ID_LABEL: str(index)}
    leader = _pod_template(ctx, component, LEADER, name, labels, index)
    worker = _pod_template(ctx, component, WORKER, name, labels, index)
    return {
        "apiVersion": LWS_API_VERSION,
        "kind": LWS_KIND,
        "metadata": {"name": name, "namespace": ctx.graph.namespace, "labels": _sorted(labels)},
        "spec": {
            "replicas": 1,
            "startupPolicy": STARTUP_POLICY,
            "leaderWorkerTemplate": {
                "size": component.node_count,
                "leaderTemplate": leader,
                "workerTemplate": worker,
            },
        },
    }


def render_leaderworkersets(
    ctx: PodContext, component: Component, name: str, xr_labels: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """Composed resource name -> object: ``leaderworkerset-{i}`` and ``podgroup-{i}`` for each replica index.

    ``name`` is the DCD (claim) name; ``xr_labels`` the XR's ``metadata.labels``. Raises ``SpecError`` naming the
    field when the main container lacks a command or args. As upstream, nothing is
    rendered, and so nothing checked, for zero replicas.
    """
    desired: dict[str, dict[str, Any]] = {}
    for index in range(component.replicas):
        lws = render_leaderworkerset(ctx, component, name, xr_labels, index)
        desired[lws_resource_name(index)] = lws
        desired[podgroup_resource_name(index)] = render_podgroup(
            component, lws["metadata"]["name"], ctx.graph.namespace, index
        )
    return dict(sorted(desired.items()))
