"""package/rbac grants Crossplane exactly what the package composes and reads, and nothing more."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
import yaml

from fixtures.corpus import EXAMPLE_CLAIMS, corpus_dgds, load_claim
from fixtures.rbac import MESH_PLATFORM, discovery_role, role_grants
from fixtures.tooling import REPO
from functions.api.graph import Graph
from functions.contract import StepRequest
from functions.kinds.checkpoint.checkpoint_step import POD_REQUIREMENT, dynamo_checkpoint
from functions.kinds.graph.graph_status import grove_requirements
from functions.kube.rbac import render_discovery_rbac
from functions.tooling.manifests import CLAIM_KINDS, claim_to_xr, find_composition, load_documents
from functions.tooling.pipeline import RenderError, render

COMPOSE = {"get", "list", "watch", "create", "update", "patch", "delete"}
READ = {"get", "list", "watch"}
# Kinds Crossplane itself manages (XRs of the package's own XRDs, EnvironmentConfigs) need no grant.
CROSSPLANE_GROUPS = {"apiextensions.crossplane.io"}
PLURALS = {
    "Service": "services",
    "ServiceAccount": "serviceaccounts",
    "ConfigMap": "configmaps",
    "Namespace": "namespaces",
    "PersistentVolumeClaim": "persistentvolumeclaims",
    "Role": "roles",
    "RoleBinding": "rolebindings",
    "Ingress": "ingresses",
    "PodCliqueSet": "podcliquesets",
    "PodClique": "podcliques",
    "PodCliqueScalingGroup": "podcliquescalinggroups",
    "VirtualService": "virtualservices",
    "DestinationRule": "destinationrules",
    "InferencePool": "inferencepools",
    "Deployment": "deployments",
    "LeaderWorkerSet": "leaderworkersets",
    "Job": "jobs",
    "PodSnapshot": "podsnapshots",
    "Pod": "pods",
    "Node": "nodes",
    "PodGroup": "podgroups",
    "ResourceClaimTemplate": "resourceclaimtemplates",
}


def group_of(api_version: str) -> str:
    return api_version.split("/")[0] if "/" in api_version else ""


def _without_grove(doc: dict[str, Any]) -> dict[str, Any]:
    out = yaml.safe_load(yaml.safe_dump(doc))
    out["metadata"].setdefault("annotations", {})["nvidia.com/enable-grove"] = "false"
    return out


def _rendered_kinds(xr: dict[str, Any], required: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """Kinds an XR composes, and those its nested DynamoComponentDeployments compose in turn."""
    compositions = load_documents(REPO / "compositions")
    try:
        out = render(xr, find_composition(xr, compositions), required=required).composed
    except RenderError:
        return set()  # not supported yet, or invalid as upstream's webhook would say: renders nothing
    kinds = {(group_of(o["apiVersion"]), o["kind"]) for o in out}
    for nested in (o for o in out if o["kind"].removeprefix("X") == "DynamoComponentDeployment"):
        kinds |= _rendered_kinds(nested, required)
    return kinds


def composed_kinds() -> set[tuple[str, str]]:
    docs = [load_claim(p) for p in EXAMPLE_CLAIMS] + [d for _, d in corpus_dgds() if d.get("spec")]
    kinds = set()
    for doc in docs:
        doc = yaml.safe_load(yaml.safe_dump(doc))
        doc.setdefault("metadata", {}).setdefault("namespace", "ns")
        existing = [
            {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": p["name"], "namespace": "ns"}}
            for p in doc["spec"].get("pvcs") or []
            if not p.get("create")
        ]
        for variant in (doc, _without_grove(doc)):
            for operator_config in ([], [MESH_PLATFORM]):
                kinds |= _rendered_kinds(claim_to_xr(variant), existing + operator_config)
    for path in sorted((REPO / "examples" / "dcd").glob("*.yaml")):
        kinds |= _rendered_kinds(claim_to_xr(load_claim(path)), [])
    return kinds | checkpoint_kinds()


def checkpoint_kinds() -> set[tuple[str, str]]:
    """A DynamoCheckpoint composes its Job, then (its pod observed) the PodSnapshot: both states rendered."""
    (claim,) = load_documents(REPO / "examples" / "checkpoint" / "vllm-checkpoint.yaml")
    xr = claim_to_xr(claim)
    required = {"platform": load_documents(REPO / "examples" / "operator-config.yaml")}
    first = dynamo_checkpoint(StepRequest(input={}, observed_composite=xr, required=required))
    job = first.desired_resources["checkpoint-job"].resource
    job = {**job, "metadata": {**job["metadata"], "uid": "job-uid"}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "pod-uid", "ownerReferences": [
        {"kind": "Job", "name": job["metadata"]["name"], "uid": "job-uid", "controller": True}]}}  # fmt: skip
    second = dynamo_checkpoint(
        StepRequest(input={}, observed_composite={**xr, "status": first.composite_status},
                    observed_resources={"checkpoint-job": job}, required={**required, POD_REQUIREMENT: [pod]})
    )  # fmt: skip
    objects = [r.resource for r in (*first.desired_resources.values(), *second.desired_resources.values())]
    return {(group_of(o["apiVersion"]), o["kind"]) for o in objects}


def read_kinds() -> set[tuple[str, str]]:
    """What steps ask for as required resources (the status step's Grove objects, create: false PVCs)."""
    kinds = {(group_of(s.api_version), s.kind) for s in grove_requirements("pcs", "ns").values()}
    # Pod: a checkpoint or profiling Job's, found by label; Node: a DGDR's GPU discovery; Namespace: a placed
    # graph's own, when its platform admits namespaces by label
    return kinds | {("", "PersistentVolumeClaim"), ("", "Pod"), ("", "Node"), ("", "Namespace")}


@pytest.fixture(scope="module")
def composed() -> set[tuple[str, str]]:
    return composed_kinds()


def test_every_composed_kind_is_granted(composed: set[tuple[str, str]]) -> None:
    grants = role_grants()
    for group, kind in sorted(composed):
        if not granted_kind(group, kind):
            continue
        assert grants.get((group, PLURALS[kind]), set()) >= COMPOSE, (group, kind)


def test_every_read_kind_is_granted() -> None:
    grants = role_grants()
    for group, kind in sorted(read_kinds()):
        assert grants.get((group, PLURALS[kind]), set()) >= READ, (group, kind)


def granted_kind(group: str, kind: str) -> bool:
    """Kinds package/rbac must grant: not Crossplane's, not the package's own XRs and claims (the RBAC manager
    grants those)."""
    return group not in CROSSPLANE_GROUPS and not kind.startswith("X") and kind not in CLAIM_KINDS


def test_nothing_more_is_granted(composed: set[tuple[str, str]]) -> None:
    needed = {(g, PLURALS[k]) for g, k in composed | read_kinds() if granted_kind(g, k)}
    # Kubernetes lets Crossplane create the discovery Role only if it holds what the Role grants.
    role = discovery_role()
    escalation = {(g, r) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    assert set(role_grants()) == needed | escalation
    assert {"create", "delete"}.isdisjoint(role_grants()[("", "pods")])


def test_discovery_objects_share_upstreams_name_label_cut_to_63_characters() -> None:
    short = Graph(name="g", namespace="ns", shape="v1beta1", components=())
    assert {o["metadata"]["labels"]["app.kubernetes.io/name"] for o in render_discovery_rbac(short).values()} == {
        "g-k8s-service-discovery"
    }
    long = Graph(name="a" * 60, namespace="ns", shape="v1beta1", components=())
    sa = "a" * 60 + "-k8s-service-discovery"
    want = sa[:54] + "-" + hashlib.sha256(sa.encode()).hexdigest()[:8]
    assert {o["metadata"]["labels"]["app.kubernetes.io/name"] for o in render_discovery_rbac(long).values()} == {want}
