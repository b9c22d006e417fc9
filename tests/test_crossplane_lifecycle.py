"""Lifecycles on a real Crossplane: scaling through an adapter, a restart, a bad update, deleting a claim.

Each test applies an example claim in a namespace of its own and drives it the way a user or an
autoscaler would, then checks what Crossplane did to the composed objects.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from fixtures.corpus import example_claim
from functions.api.upstream_operator import OPERATOR_FINALIZER
from functions.contract import StepRequest
from functions.kinds.graph.graph_render_step import render_graph_deployment
from functions.kube.labels import RESTART_AT
from harness.apiserver import ensure_namespace, resource_path
from harness.composites import apply_example, manifest_path, resource_refs, xr_of
from harness.controller_play import COMPONENT_LABEL, clique_replicas, play_deployments
from harness.controlplane import APIError, ControlPlane
from harness.crossplane_core import Crossplane
from harness.poll import until

REPO = Path(__file__).resolve().parents[1]
SECONDS = 90.0


def _xr(cp: ControlPlane, claim_path: str) -> dict[str, Any]:
    """The XR of the DGD applied at ``claim_path`` (the DGD itself in the default package)."""
    applied = cp.client.get(claim_path)
    return until("the DGD's XR", lambda: xr_of(cp, applied))


def test_an_autoscaler_patching_an_adapter_rescales_the_podcliqueset(crossplane: Crossplane) -> None:
    cp = crossplane.cp
    namespace = "life-scale"
    _, claim_path = apply_example(cp, "vllm-autoscaled.yaml", namespace)
    pcs_path = resource_path("grove.io", "v1alpha1", "podcliquesets", namespace, "vllm-autoscaled")
    adapter = resource_path("nvidia.com", "v1beta1", "dynamographdeploymentscalingadapters", namespace,
                            "vllm-autoscaled-vllmdecodeworker")  # upstream's name, in the DGD's namespace  # fmt: skip
    until("the decode adapter and the PodCliqueSet", lambda: cp.client.get(adapter) and cp.client.get(pcs_path))
    assert clique_replicas(cp.client.get(pcs_path), "vllmdecodeworker") == 2
    stale = cp.client.get(adapter)
    # patches in quick succession, each likely to land while a DGD reconcile that read the previous
    # value is in flight: the resourceVersion precondition must keep that reconcile from reverting it
    for replicas in (5, 3, 7, 4):
        cp.client.merge_patch(adapter, {"spec": {"replicas": replicas}})
        time.sleep(0.4)
    until("decode clique at 4 replicas", lambda: clique_replicas(cp.client.get(pcs_path), "vllmdecodeworker") == 4)
    time.sleep(3)  # a later reconcile must not put an older value back
    assert cp.client.get(adapter)["spec"]["replicas"] == 4
    assert clique_replicas(cp.client.get(pcs_path), "vllmdecodeworker") == 4
    status = until("the adapter's status", lambda: (cp.client.get(adapter).get("status") or {}).get("replicas") == 4)
    assert status

    # what a reconcile that read the adapter before the patches desires, applied as Crossplane
    # applies it: the real API server refuses it on the stale resourceVersion, so nothing reverts
    rsp = render_graph_deployment(
        StepRequest(
            input={},
            observed_composite=_xr(cp, claim_path),
            observed_resources={"scaling-adapter-vllmdecodeworker": stale},
        )
    )
    desired = rsp.desired_resources["scaling-adapter-vllmdecodeworker"].resource
    assert desired["spec"]["replicas"] == 2
    with pytest.raises(APIError) as refused:
        cp.client.server_side_apply(adapter, desired, "apiextensions.crossplane.io/composed/stale-reconcile")
    assert refused.value.code == 409
    assert cp.client.get(adapter)["spec"]["replicas"] == 4


REF_PATHS = {
    "PodCliqueSet": "/apis/grove.io/v1alpha1",
    "Service": "/api/v1",
    "ServiceAccount": "/api/v1",
    "Role": "/apis/rbac.authorization.k8s.io/v1",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1",
}


def _ref_path(ref: dict[str, Any], namespace: str) -> str:
    """Where one of vllm-agg's composed objects lives."""
    return f"{REF_PATHS[ref['kind']]}/namespaces/{namespace}/{ref['kind'].lower()}s/{ref['name']}"


def _exists(cp: ControlPlane, path: str) -> bool:
    try:
        cp.client.get(path)
        return True
    except APIError as err:
        if err.code != 404:
            raise
        return False


def _composed_versions(cp: ControlPlane, xr: dict[str, Any], namespace: str) -> dict[str, str]:
    return {
        f"{ref['kind']}/{ref['name']}": cp.client.get(_ref_path(ref, namespace))["metadata"]["resourceVersion"]
        for ref in resource_refs(xr)
    }


def _composed_agg(cp: ControlPlane, namespace: str) -> tuple[str, dict[str, Any]]:
    """vllm-agg applied in ``namespace`` once its six objects exist; (claim path, XR)."""
    _, claim_path = apply_example(cp, "vllm-agg.yaml", namespace)
    xr = until("all six composed", lambda: len(resource_refs(x := _xr(cp, claim_path))) == 6 and x)
    until("every composed object", lambda: _composed_versions(cp, xr, namespace))
    return claim_path, xr


def test_a_bad_update_changes_nothing_and_the_claim_names_the_field(crossplane: Crossplane) -> None:
    cp = crossplane.cp
    namespace = "life-bad-update"
    claim_path, _ = _composed_agg(cp, namespace)
    time.sleep(3)  # let the first reconciles settle
    before = _composed_versions(cp, _xr(cp, claim_path), namespace)
    claim = cp.client.get(claim_path)
    claim["spec"]["components"][0]["frontendSidecar"] = (
        "not-a-container"  # the API server stores it; the function refuses it
    )
    cp.client.replace(claim_path, claim)
    field = "spec.components[0].frontendSidecar"

    def refused() -> str | None:
        xr_now = _xr(cp, claim_path)
        synced = next((c for c in xr_now["status"].get("conditions") or [] if c["type"] == "Synced"), {})
        return synced.get("message") if synced.get("status") == "False" and field in synced.get("message", "") else None

    message = until("the XR refusing the update", refused)
    assert "must name a container of podTemplate.spec.containers" in message
    events = cp.client.get(f"/api/v1/namespaces/{namespace}/events")["items"]
    assert any(
        field in e.get("message", "") for e in events if e["involvedObject"]["kind"] == "DynamoGraphDeployment"
    ), (
        f"no event on the claim names the field: claim {cp.client.get(claim_path).get('status')}, events "
        f"{[(e['involvedObject']['kind'], e.get('reason'), e.get('message')) for e in events]}"
    )
    time.sleep(3)
    assert _composed_versions(cp, _xr(cp, claim_path), namespace) == before  # nothing was touched


def test_a_graph_the_upstream_operator_manages_is_refused_until_it_lets_go(crossplane: Crossplane) -> None:
    """A DGD carrying the operator's finalizer (the package installed beside a running operator serves the
    operator's graphs) composes nothing and says why; without it, it composes."""
    cp = crossplane.cp
    namespace = "life-operator"
    ensure_namespace(cp.client, namespace)
    claim = yaml.safe_load((example_claim("vllm-agg")).read_text())
    claim["metadata"].update(namespace=namespace, finalizers=[OPERATOR_FINALIZER])
    collection = resource_path("nvidia.com", claim["apiVersion"].split("/")[1], "dynamographdeployments", namespace)
    cp.client.create(collection, claim)
    path = f"{collection}/{claim['metadata']['name']}"

    def refused() -> str | None:
        synced = next((c for c in cp.client.get(path).get("status", {}).get("conditions") or []
                       if c["type"] == "Synced"), {})  # fmt: skip
        return synced.get("message") if synced.get("status") == "False" else None

    message = until("the DGD refused", refused)
    assert f"{namespace}/vllm-agg carries the upstream Dynamo operator's finalizer {OPERATOR_FINALIZER}" in message
    assert "function-dynamo migrate release" in message
    assert not resource_refs(cp.client.get(path))
    assert not _exists(cp, resource_path("grove.io", "v1alpha1", "podcliquesets", namespace, "vllm-agg"))
    kept = [f for f in cp.client.get(path)["metadata"].get("finalizers") or [] if f != OPERATOR_FINALIZER]
    cp.client.merge_patch(path, {"metadata": {"finalizers": kept}})  # Crossplane's own stays
    until("composed once the operator let go", lambda: len(resource_refs(cp.client.get(path))) == 6)


def test_deleting_a_claim_removes_every_composed_object(crossplane: Crossplane) -> None:
    cp = crossplane.cp
    namespace = "life-delete"
    claim_path, xr = _composed_agg(cp, namespace)
    cp.client.delete(claim_path)
    xr_path = manifest_path(xr)  # the DGD itself; under a claim, its cluster XR
    paths = [xr_path, *(_ref_path(ref, namespace) for ref in resource_refs(xr))]
    until("the XR and everything it composed deleted", lambda: not any(_exists(cp, p) for p in paths))


def test_a_new_restart_id_walks_the_components_one_by_one(crossplane: Crossplane) -> None:
    """The component pathway, the Deployment controller played: a Sequential restart restarts one
    component at a time, each once its Deployment reports the new template ready, then Completes."""
    cp = crossplane.cp
    namespace = "life-restart"
    claim, claim_path = apply_example(cp, "vllm-disagg-no-grove.yaml", namespace)
    components = sorted(claim["spec"]["services"])

    def status() -> dict[str, Any]:
        return cp.client.get(claim_path).get("status") or {}

    def ready() -> bool:
        play_deployments(cp, namespace)
        return status().get("state") == "successful"

    until("the graph ready", ready, seconds=2 * SECONDS)
    before = {
        d["metadata"]["labels"].get(COMPONENT_LABEL): (
            d["metadata"]["generation"],
            (d.get("status") or {}).get("observedGeneration", 0),
            (d["spec"]["template"]["metadata"].get("annotations") or {}).get(RESTART_AT),
        )
        for d in cp.client.get(f"/apis/apps/v1/namespaces/{namespace}/deployments")["items"]
    }  # (generation, observedGeneration, restartAt) before the restart, for a failure message
    cp.client.merge_patch(claim_path, {"spec": {"restart": {"id": "r1"}}})
    # What is observed is the Deployments, not status.restart: a step can pass between two polls of
    # the status, but a Deployment's restartAt stays. Sequential means a component's Deployment is
    # stamped only once every Deployment stamped before it has rolled (played here as the Deployment
    # controller, only for Deployments that carry the new template).
    stamped: list[str] = []  # components in the order their Deployment first carried r1
    rolled: set[str] = set()
    seen_at: dict[str, tuple[int, int]] = {}
    steps: list[tuple[str, ...]] = []  # status.restart.inProgress as polled, for the failure message
    deadline = time.monotonic() + 2 * SECONDS
    restart: dict[str, Any] = {}
    while time.monotonic() < deadline:
        restart = status().get("restart") or {}
        if restart.get("observedID") == "r1" and restart.get("phase") == "Completed":
            break
        step = tuple(restart.get("inProgress") or ())
        if step and (not steps or steps[-1] != step):
            steps.append(step)
        to_roll = set()
        for deployment in cp.client.get(f"/apis/apps/v1/namespaces/{namespace}/deployments")["items"]:
            component = deployment["metadata"]["labels"].get(COMPONENT_LABEL)
            annotations = deployment["spec"]["template"]["metadata"].get("annotations") or {}
            if annotations.get(RESTART_AT) != "r1":
                continue
            generations = (
                deployment["metadata"]["generation"],
                (deployment.get("status") or {}).get("observedGeneration", 0),
            )
            seen_at.setdefault(component, generations)
            if component not in stamped:
                unrolled = [c for c in stamped if c not in rolled]
                assert not unrolled, (
                    f"{component} stamped while {unrolled} had not rolled (steps {steps}; "
                    f"(generation, observedGeneration) when first seen stamped: {seen_at}; before: {before})"
                )
                stamped.append(component)
            if generations[1] < generations[0]:
                to_roll.add(component)
        play_deployments(cp, namespace, to_roll)
        rolled |= to_roll
        time.sleep(0.5)
    assert restart == {"observedID": "r1", "phase": "Completed"}, (restart, stamped, steps)
    assert stamped == components, (stamped, steps)  # Sequential, in the default (sorted) order
    deployments = cp.client.get(f"/apis/apps/v1/namespaces/{namespace}/deployments")["items"]
    stamps = {
        d["metadata"]["name"]: d["spec"]["template"]["metadata"]["annotations"].get(RESTART_AT) for d in deployments
    }
    assert set(stamps.values()) == {"r1"}, stamps
