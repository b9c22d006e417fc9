"""Lifecycles on a real Crossplane: scaling through an adapter, a bad update, deleting a claim.

Each test applies an example claim in a namespace of its own and drives it the way a user or an
autoscaler would, then checks what Crossplane did to the composed objects.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import yaml

from apiserver import ensure_namespace, resource_path
from controlplane import APIError, ControlPlane
from crossplane_core import Crossplane

REPO = Path(__file__).resolve().parents[1]
SECONDS = 90.0


def _apply(cp: ControlPlane, example: str, namespace: str) -> tuple[dict[str, Any], str]:
    """The example claim applied in ``namespace``; (claim, its path)."""
    ensure_namespace(cp.client, namespace)
    claim = yaml.safe_load((REPO / "examples" / example).read_text())
    claim["metadata"]["namespace"] = namespace
    version = claim["apiVersion"].split("/")[1]
    collection = resource_path("nvidia.com", version, "dynamographdeployments", namespace)
    cp.client.create(collection, claim)
    return claim, f"{collection}/{claim['metadata']['name']}"


def _until(what: str, probe: Any, seconds: float = SECONDS) -> Any:
    deadline = time.monotonic() + seconds
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = probe()
        except APIError as err:
            if err.code != 404:
                raise
            last = None
        if last:
            return last
        time.sleep(0.5)
    raise AssertionError(f"{what}: not so after {seconds:.0f}s (last seen: {last!r})")


def _xr(cp: ControlPlane, claim_path: str) -> dict[str, Any]:
    ref = _until("the claim's XR", lambda: (cp.client.get(claim_path).get("spec") or {}).get("resourceRef"))
    return cp.client.get(
        resource_path("nvidia.com", ref["apiVersion"].split("/")[1], "xdynamographdeployments", None, ref["name"])
    )


def _clique_replicas(pcs: dict[str, Any], clique: str) -> int | None:
    for c in pcs["spec"]["template"]["cliques"]:
        if c["name"] == clique:
            return c["spec"].get("replicas")
    return None


def test_an_autoscaler_patching_an_adapter_rescales_the_podcliqueset(crossplane: Crossplane) -> None:
    cp = crossplane.cp
    namespace = "life-scale"
    _apply(cp, "vllm-autoscaled.yaml", namespace)
    pcs_path = resource_path("grove.io", "v1alpha1", "podcliquesets", namespace, "vllm-autoscaled")
    adapter = resource_path("nvidia.com", "v1beta1", "xdynamographdeploymentscalingadapters", None,
                            f"{namespace}.vllm-autoscaled-vllmdecodeworker")  # fmt: skip
    _until("the decode adapter and the PodCliqueSet", lambda: cp.client.get(adapter) and cp.client.get(pcs_path))
    assert _clique_replicas(cp.client.get(pcs_path), "vllmdecodeworker") == 2
    cp.client.merge_patch(adapter, {"spec": {"replicas": 5}})
    _until("decode clique at 5 replicas", lambda: _clique_replicas(cp.client.get(pcs_path), "vllmdecodeworker") == 5)
    time.sleep(3)  # a later reconcile must not put the DGD's own replicas back
    assert cp.client.get(adapter)["spec"]["replicas"] == 5
    assert _clique_replicas(cp.client.get(pcs_path), "vllmdecodeworker") == 5
    status = _until("the adapter's status", lambda: (cp.client.get(adapter).get("status") or {}).get("replicas") == 5)
    assert status


def _composed_versions(cp: ControlPlane, xr: dict[str, Any], namespace: str) -> dict[str, str]:
    plurals = {"PodCliqueSet": "grove.io/v1alpha1/podcliquesets", "Service": "v1/services",
               "ServiceAccount": "v1/serviceaccounts", "Role": "rbac.authorization.k8s.io/v1/roles",
               "RoleBinding": "rbac.authorization.k8s.io/v1/rolebindings"}  # fmt: skip
    out = {}
    for ref in xr["spec"]["resourceRefs"]:
        base = plurals[ref["kind"]]
        prefix = "/api" if base.startswith("v1/") else "/apis"
        group_version, plural = base.rsplit("/", 1)
        obj = cp.client.get(f"{prefix}/{group_version}/namespaces/{namespace}/{plural}/{ref['name']}")
        out[f"{ref['kind']}/{ref['name']}"] = obj["metadata"]["resourceVersion"]
    return out


def test_a_bad_update_changes_nothing_and_the_claim_names_the_field(crossplane: Crossplane) -> None:
    cp = crossplane.cp
    namespace = "life-bad-update"
    _, claim_path = _apply(cp, "vllm-agg.yaml", namespace)
    xr = _until(
        "all six composed", lambda: len((x := _xr(cp, claim_path))["spec"].get("resourceRefs") or []) == 6 and x
    )
    _until("every composed object", lambda: _composed_versions(cp, xr, namespace))
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

    message = _until("the XR refusing the update", refused)
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


def test_deleting_a_claim_removes_every_composed_object(crossplane: Crossplane) -> None:
    cp = crossplane.cp
    namespace = "life-delete"
    _, claim_path = _apply(cp, "vllm-agg.yaml", namespace)
    xr = _until(
        "all six composed", lambda: len((x := _xr(cp, claim_path))["spec"].get("resourceRefs") or []) == 6 and x
    )
    _until("every composed object", lambda: _composed_versions(cp, xr, namespace))
    cp.client.delete(claim_path)
    xr_path = resource_path("nvidia.com", "v1beta1", "xdynamographdeployments", None, xr["metadata"]["name"])

    def gone() -> bool:
        try:
            cp.client.get(xr_path)
            return False
        except APIError as err:
            if err.code != 404:
                raise
        try:
            return not _composed_versions(cp, xr, namespace)
        except APIError as err:
            if err.code == 404:
                return _none_left(cp, xr, namespace)
            raise

    _until("the XR and everything it composed deleted", gone)


def _none_left(cp: ControlPlane, xr: dict[str, Any], namespace: str) -> bool:
    for ref in xr["spec"]["resourceRefs"]:
        try:
            _composed_versions(cp, {"spec": {"resourceRefs": [ref]}}, namespace)
            return False
        except APIError as err:
            if err.code != 404:
                raise
    return True
