"""Crossplane runs as its Helm chart's ServiceAccount: package/rbac is what it needed, no less, no more.

The fixture (``crossplane_rbac``) runs Crossplane core and its RBAC manager under the chart's
ServiceAccounts and roles, with ``package/rbac/clusterrole.yaml`` aggregated into Crossplane's role
by the kube-controller-manager, and audits every request they make. Here every example claim, and
the two that compose Istio objects under a mesh operator config, are reconciled; then the audit log
says what Crossplane actually touched: nothing was refused (the role is sufficient) and every
resource the package's role grants was used, or is one Kubernetes' escalation check needs for the
discovery Role (least privilege, checked against the cluster rather than against our own render,
which ``test_rbac`` does).
"""

from __future__ import annotations

import copy
import functools
import time
from typing import Any

import pytest
import yaml

from fixtures.corpus import CHECKPOINT_EXAMPLE, STANDALONE_EXAMPLES, example_claim
from fixtures.rbac import MESH_PLATFORM, discovery_role, role_grants
from fixtures.rendering import CHECKPOINT_GATE, preview
from fixtures.tooling import REPO, require_shared
from functions.kinds.request.profiling_job import PROFILING_RULES
from functions.tooling.manifests import load_documents
from harness.apiserver import ensure_namespace, install_crd, resource_path
from harness.composites import (
    api_plurals,
    composed_kinds,
    create_claim,
    example_namespace,
    listed,
    nudge,
    wait_synced,
)
from harness.controller_play import play_job_pod
from harness.controlplane import APIError, ControlPlane
from harness.crossplane_core import ENVIRONMENT_CONFIGS, Crossplane, apply
from harness.crossplane_rbac import CROSSPLANE_SA, RBAC_MANAGER_SA, audit_events, impersonating, service_account_user
from harness.poll import until

MESH_EXAMPLES = (
    example_claim("vllm-agg"),
    example_claim("vllm-gaie"),
)  # a frontend VirtualService; the EPP's DestinationRule
MESH_KINDS = {"VirtualService", "DestinationRule"}
SECONDS = 90.0


def _xr_with_mesh(cp: ControlPlane, claim: dict[str, Any]) -> list[str]:
    """The Istio kinds composed for the claim once they exist, or [] while they do not yet."""
    return sorted(composed_kinds(cp, claim) & MESH_KINDS)


@pytest.fixture(scope="module")
def reconciled(crossplane: Crossplane) -> list[dict[str, Any]]:
    """Every example reconciled, and the mesh examples under the mesh operator config; Crossplane's
    audited requests meanwhile."""
    cp = crossplane.cp
    discovered = api_plurals(crossplane)
    for path in STANDALONE_EXAMPLES:
        claim = create_claim(cp, path, example_namespace(path, "rbac-"))
        expected, _ = preview(copy.deepcopy(claim))
        wait_synced(crossplane, claim, len(expected), discovered)
    apply(cp, MESH_PLATFORM, ENVIRONMENT_CONFIGS)
    try:
        for path in MESH_EXAMPLES:
            claim = create_claim(cp, path, example_namespace(path, "rbac-mesh-"))
            mesh = functools.partial(_xr_with_mesh, cp, claim)
            until(f"{path.name}: an Istio object composed under the mesh platform", mesh, SECONDS)
        time.sleep(2)  # the Istio objects' own applies, and a reconcile after them
    finally:
        cp.client.delete(f"{ENVIRONMENT_CONFIGS}/{MESH_PLATFORM['metadata']['name']}")
    _reconcile_checkpoint(cp)
    _reconcile_request(cp)
    _reconcile_placed_by_label(cp)
    return list(audit_events(cp, service_account_user(CROSSPLANE_SA)))


def _reconcile_checkpoint(cp: ControlPlane) -> None:
    """A DynamoCheckpoint through its Job and PodSnapshot; the test plays the Job controller (the Job's pod)."""
    crd = yaml.safe_load(require_shared("upstream", "crds", "nvidia.com_podsnapshots.yaml").read_text())
    assert install_crd(cp.client, crd).accepted, "the PodSnapshot CRD was refused"
    apply(cp, CHECKPOINT_GATE, ENVIRONMENT_CONFIGS)
    try:
        namespace = example_namespace(CHECKPOINT_EXAMPLE, "rbac-")
        claim = create_claim(cp, CHECKPOINT_EXAMPLE, namespace)
        until("the checkpoint Job was never composed", lambda: "Job" in composed_kinds(cp, claim))
        (job,) = listed(cp, f"/apis/batch/v1/namespaces/{namespace}/jobs", "the checkpoint Job was never created")
        play_job_pod(cp, namespace, job)
        nudge(cp, claim)
        until("no PodSnapshot composed for the Job's pod", lambda: "PodSnapshot" in composed_kinds(cp, claim))
        listed(cp, f"/apis/nvidia.com/v1alpha1/namespaces/{namespace}/podsnapshots", "no PodSnapshot created")
        time.sleep(2)  # the PodSnapshot's own apply, and a reconcile after it
    finally:
        cp.client.delete(f"{ENVIRONMENT_CONFIGS}/{CHECKPOINT_GATE['metadata']['name']}")


REQUEST_EXAMPLE = REPO / "examples" / "dgdr" / "sglang-throughput.yaml"


def _reconcile_request(cp: ControlPlane) -> None:
    """A DynamoGraphDeploymentRequest that discovers its GPUs (the nodes are read) and mounts a model cache PVC,
    up to its profiling Job and the RoleBinding of the Job's ServiceAccount."""
    namespace = example_namespace(REQUEST_EXAMPLE, "rbac-")
    ensure_namespace(cp.client, namespace)
    for obj in load_documents(REPO / "examples" / "dgdr" / "cluster"):
        obj = copy.deepcopy(obj)
        if obj["kind"] == "Node":
            collection = "/api/v1/nodes"
        else:
            obj["metadata"]["namespace"] = namespace
            collection = f"/api/v1/namespaces/{namespace}/persistentvolumeclaims"
        try:
            cp.client.create(collection, obj)
        except APIError as err:
            if err.code != 409:
                raise
    claim = create_claim(cp, REQUEST_EXAMPLE, namespace)
    until("the profiling Job was never composed", lambda: {"Job", "RoleBinding"} <= composed_kinds(cp, claim))
    listed(cp, f"/apis/batch/v1/namespaces/{namespace}/jobs", "the profiling Job was never created")
    time.sleep(2)  # the RoleBinding's own apply


LABELLED_PLATFORM = {
    "apiVersion": "apiextensions.crossplane.io/v1beta1",
    "kind": "EnvironmentConfig",
    "metadata": {"name": "dynamo-platform-rbac-labelled"},
    "data": {
        "cluster": {"platform": "rbac-labelled", "namespace": "rbac-platform", "ready": True},
        "tenants": {"namespaces": ["rbac-platform"], "namespaceSelector": {"matchLabels": {"rbac.test/gpu": "yes"}}},
    },
}


def _reconcile_placed_by_label(cp: ControlPlane) -> None:
    """A graph placed on a platform that admits namespaces by label: the step reads its own Namespace."""
    namespace = "rbac-placed-labelled"
    ensure_namespace(cp.client, namespace)
    cp.client.merge_patch(f"/api/v1/namespaces/{namespace}", {"metadata": {"labels": {"rbac.test/gpu": "yes"}}})
    apply(cp, LABELLED_PLATFORM, ENVIRONMENT_CONFIGS)
    graph = load_documents(REPO / "examples" / "platform" / "vllm-agg-placed.yaml")[0]
    graph["metadata"]["annotations"]["nvidia.com/dynamo-platform"] = "rbac-labelled"
    claim = create_claim(cp, graph, namespace)
    try:
        until("the placed graph composed on the labelled platform", lambda: composed_kinds(cp, claim))
    finally:
        cp.client.delete(f"{ENVIRONMENT_CONFIGS}/{LABELLED_PLATFORM['metadata']['name']}")


def test_crossplane_runs_as_its_service_account_under_the_aggregated_role(crossplane: Crossplane) -> None:
    client = crossplane.cp.client
    binding = client.get("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/crossplane")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": CROSSPLANE_SA, "namespace": "crossplane-system"}]
    assert binding["roleRef"]["name"] == "crossplane"
    role = client.get("/apis/rbac.authorization.k8s.io/v1/clusterroles/crossplane")
    aggregated = {(g, r) for rule in role.get("rules") or [] for g in rule["apiGroups"] for r in rule["resources"]}
    assert set(role_grants()) <= aggregated, "package/rbac's ClusterRole was not aggregated into Crossplane's"
    assert any(r == "dynamographdeployments" for _, r in aggregated), "the RBAC manager granted no XR kind"
    assert next(audit_events(crossplane.cp, service_account_user(CROSSPLANE_SA)), None), "no request as the SA"


def test_crossplane_may_bind_a_role_before_it_exists_and_no_cluster_role(crossplane: Crossplane) -> None:
    """Crossplane applies a graph's Role and RoleBinding together in no set order: the binding, applied first, is
    allowed because package/rbac lets Crossplane bind Roles; binding a ClusterRole it does not hold is not."""
    client = crossplane.cp.client
    namespace, role = "rbac-bind", "g-k8s-service-discovery"
    ensure_namespace(client, namespace)

    def bind(kind: str, name: str) -> dict[str, Any]:
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": f"bind-{name}", "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": namespace}],
        }
        collection = resource_path("rbac.authorization.k8s.io", "v1", "rolebindings", namespace)
        as_crossplane = impersonating(service_account_user(CROSSPLANE_SA))
        return client.request("POST", collection, binding, params={"dryRun": "All"}, headers=as_crossplane)

    with pytest.raises(APIError) as refused:
        client.get(resource_path("rbac.authorization.k8s.io", "v1", "roles", namespace, role))
    assert refused.value.code == 404
    assert bind("Role", role)["roleRef"]["name"] == role
    with pytest.raises(APIError) as refused:
        bind("ClusterRole", "cluster-admin")
    assert refused.value.code == 403, refused.value


def _defined_resources(cp: ControlPlane) -> set[str]:
    """The XR and claim plurals the package's XRDs define: the RBAC manager grants these to Crossplane."""
    xrds = cp.client.get("/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions")["items"]
    names = {x["spec"]["names"]["plural"] for x in xrds}
    return names | {x["spec"]["claimNames"]["plural"] for x in xrds if x["spec"].get("claimNames")}


def _request(event: dict[str, Any]) -> tuple[str, str, str, str]:
    ref = event.get("objectRef") or {}
    return event["user"]["username"], event["verb"], ref.get("apiGroup", ""), ref.get("resource", "")


def refusals(events: list[dict[str, Any]], granted_later: set[str]) -> tuple[list[tuple[str, str]], set[str]]:
    """The refused requests that count (resource, what was refused), and the resources of those forgiven.

    Crossplane starts watching an XR kind as soon as its XRD is established, while the RBAC manager
    creates the role granting that kind and the aggregation controller folds it into Crossplane's
    role concurrently: the first watch can be refused and the informer retries. Such a refusal is
    forgiven only for a kind the RBAC manager grants and only when the same request succeeded
    later; a refusal of anything package/rbac grants always counts."""
    counted: list[tuple[str, str]] = []
    forgiven: set[str] = set()
    for i, event in enumerate(events):
        if event["responseStatus"].get("code") != 403:
            continue
        request = _request(event)
        retried = any(_request(e) == request and e["responseStatus"].get("code", 0) < 400 for e in events[i + 1 :])
        if request[3] in granted_later and retried:
            forgiven.add(request[3])
        else:
            counted.append(
                (request[3], f"{event['verb']} {event['requestURI']}: {event['responseStatus'].get('message', '')}")
            )
    return counted, forgiven


def test_no_request_of_crossplane_was_refused(crossplane: Crossplane, reconciled: list[dict[str, Any]]) -> None:
    defined = _defined_resources(crossplane.cp)
    deadline = time.monotonic() + 60
    while True:
        events = [
            e
            for user in (CROSSPLANE_SA, RBAC_MANAGER_SA)
            for e in audit_events(crossplane.cp, service_account_user(user))
        ]
        refused, forgiven = refusals(events, defined)
        # Only refusals of XR kinds, not retried yet: the informer's retry is due within its backoff
        # (Crossplane v2.4 starts informers for the kinds it composes as soon as their XRDs are
        # established, before the RBAC manager's grant is aggregated).
        if not refused or any(r not in defined for r, _ in refused) or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert not refused, "\n".join(text for _, text in refused)
    for log in (crossplane.crossplane_log, crossplane.cp.logs["crossplane-rbac-manager"]):
        lines = [
            line
            for line in log.read_text(errors="replace").splitlines()
            if "forbidden" in line.lower() and not any(f"{r}.nvidia.com" in line for r in forgiven)
        ]
        assert not lines, f"{log}:\n" + "\n".join(lines[:10])


def test_a_refusal_is_forgiven_only_for_an_xr_kind_retried_with_success() -> None:
    def event(code: int, resource: str) -> dict[str, Any]:
        return {
            "user": {"username": "sa"},
            "verb": "watch",
            "requestURI": f"/apis/nvidia.com/v1beta1/{resource}",
            "objectRef": {"apiGroup": "nvidia.com", "resource": resource},
            "responseStatus": {"code": code},
        }

    xr = "xdynamographdeploymentscalingadapters"
    assert refusals([event(403, xr), event(200, xr)], {xr}) == ([], {xr})
    assert len(refusals([event(403, xr)], {xr})[0]) == 1, "never granted: counts"
    assert len(refusals([event(200, xr), event(403, xr)], {xr})[0]) == 1, "refused after success: counts"
    assert len(refusals([event(403, "jobs"), event(200, "jobs")], {xr})[0]) == 1, "package/rbac's grant: counts"


def test_every_grant_of_the_package_role_was_needed(reconciled: list[dict[str, Any]]) -> None:
    used: dict[tuple[str, str], set[str]] = {}
    for event in reconciled:
        ref = event.get("objectRef") or {}
        if ref.get("resource") and not ref.get("subresource"):
            used.setdefault((ref.get("apiGroup", ""), ref["resource"]), set()).add(event["verb"])
    role = discovery_role()
    rules = [*role["rules"], *PROFILING_RULES]  # Kubernetes only lets Crossplane create Roles granting what it holds
    escalation = {(g, r) for rule in rules for g in rule["apiGroups"] for r in rule["resources"]}
    grants = role_grants()
    unused = sorted(set(grants) - set(used) - escalation)
    assert not unused, f"granted by package/rbac, never requested by Crossplane: {unused}"
    for resource, verbs in used.items():
        if resource in grants:
            assert verbs <= grants[resource], (resource, verbs - grants[resource])
