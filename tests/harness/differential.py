"""The same graphs on the upstream operator and on the package: which graphs, and what each stack stores.

The graphs: every DynamoGraphDeployment of the corpus and of upstream's golden DGD inputs, on the Grove pathway
and on the component pathway, each in a namespace of its own. The live half: applying them to a stack (after what
a cluster has that no controller composes), waiting for it to settle and reading back what it stores. The
comparison itself is ``tests/fixtures/differential_compare.py``. Used by
``tests/test_operator_differential.py`` (a representative subset) and ``scripts/differential.py`` (all of them,
written to ``docs/upstream/differential.md``).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fixtures.corpus import as_upstream_admits, corpus_dgds, without_matcher_directives
from fixtures.differential_compare import Key, normalised
from harness.apiserver import ensure_namespace, resource_path, served_resources
from harness.controlplane import APIError, ControlPlane

Obj = dict[str, Any]
GROVE_OFF = "nvidia.com/enable-grove"
PATHWAYS = ("grove", "components")

# What each stack may store in a graph's namespace: (group/version, plural).
RESOURCES = (
    ("v1", "services"),
    ("v1", "serviceaccounts"),
    ("v1", "configmaps"),
    ("v1", "secrets"),
    ("v1", "persistentvolumeclaims"),
    ("apps/v1", "deployments"),
    ("rbac.authorization.k8s.io/v1", "roles"),
    ("rbac.authorization.k8s.io/v1", "rolebindings"),
    ("grove.io/v1alpha1", "podcliquesets"),
    ("leaderworkerset.x-k8s.io/v1", "leaderworkersets"),
    ("networking.k8s.io/v1", "ingresses"),
    ("networking.istio.io/v1beta1", "virtualservices"),
    ("networking.istio.io/v1beta1", "destinationrules"),
    ("inference.networking.k8s.io/v1", "inferencepools"),
    ("policy/v1", "poddisruptionbudgets"),
    ("autoscaling/v2", "horizontalpodautoscalers"),
    ("batch/v1", "jobs"),
    ("nvidia.com/v1beta1", "dynamocomponentdeployments"),
    ("nvidia.com/v1beta1", "dynamographdeploymentscalingadapters"),
)
# Present in every namespace whatever runs there (the ServiceAccount controller's).
NOT_COMPOSED = {("ServiceAccount", "default")}


def platform_config(operator_config: Obj) -> Obj:
    """The package's ``dynamo-platform`` EnvironmentConfig holding the operator's own configuration."""
    return {
        "apiVersion": "apiextensions.crossplane.io/v1beta1",
        "kind": "EnvironmentConfig",
        "metadata": {"name": "dynamo-platform"},
        "data": operator_config,
    }


@dataclass(frozen=True)
class Graph:
    """One graph applied to both stacks: where it came from, its pathway, its namespace, the document applied."""

    source: str
    pathway: str
    namespace: str
    doc: Obj = field(hash=False, compare=False)


def _namespace(source: str, pathway: str) -> str:
    digest = hashlib.sha256(f"{source}:{pathway}".encode()).hexdigest()[:10]
    return f"g-{pathway[0]}-{digest}"


def as_graph(source: str, doc: Obj, pathway: str) -> Graph:
    """``doc`` in a namespace of its own, on ``pathway`` (the component pathway by upstream's annotation)."""
    out = as_upstream_admits(without_matcher_directives(doc))
    out.pop("status", None)
    namespace = _namespace(source, pathway)
    meta = out.setdefault("metadata", {})
    meta["namespace"] = namespace
    for key in ("uid", "resourceVersion", "creationTimestamp", "generation", "finalizers"):
        meta.pop(key, None)
    annotations = meta.setdefault("annotations", {})
    if pathway == "components":
        annotations[GROVE_OFF] = "false"
    else:
        annotations.pop(GROVE_OFF, None)
    if not annotations:
        meta.pop("annotations")
    return Graph(source, pathway, namespace, out)


def golden_dgds(golden: Path) -> list[tuple[str, Obj]]:
    """(id, document) of each DynamoGraphDeployment input of upstream's golden scenarios."""
    out = []
    for path in sorted(golden.glob("dgd/*/input.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == "DynamoGraphDeployment":
                out.append((f"golden/{path.parent.name}", doc))
    return out


def all_graphs(golden: Path) -> list[Graph]:
    """Every corpus and golden DGD on both pathways."""
    sources = [*golden_dgds(golden), *corpus_dgds()]
    return [as_graph(source, doc, pathway) for source, doc in sources for pathway in PATHWAYS]


# --- live: apply, settle, read back ----------------------------------------------------------------------------


def _dgd_path(graph: Graph) -> str:
    version = graph.doc["apiVersion"].split("/")[1]
    return resource_path("nvidia.com", version, "dynamographdeployments", graph.namespace)


PREREQUISITE_LABEL = "differential.function-dynamo.io/prerequisite"
# What a cluster running these graphs has that no controller composes: the GPU DRA driver's DeviceClass (GPU
# memory service graphs) and the volumes a graph names without asking for them to be created.
DEVICE_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.nvidia.com", "labels": {PREREQUISITE_LABEL: "true"}},
    "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]},
}


def existing_volumes(graph: Graph) -> list[Obj]:
    """The PersistentVolumeClaims ``graph`` names in ``spec.pvcs`` without ``create: true``: a user creates them
    before applying it (the operator refuses to run the graph without them)."""
    out = []
    for pvc in (graph.doc.get("spec") or {}).get("pvcs") or []:
        if isinstance(pvc, dict) and pvc.get("name") and pvc.get("create") is not True:
            out.append(
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": {
                        "name": pvc["name"],
                        "namespace": graph.namespace,
                        "labels": {PREREQUISITE_LABEL: "true"},
                    },
                    "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}},
                }
            )
    return out


def _create(cp: ControlPlane, path: str, obj: Obj) -> None:
    try:
        cp.client.create(path, obj)
    except APIError as err:
        if err.code != 409:
            raise


def apply_graphs(cp: ControlPlane, graphs: Iterable[Graph]) -> dict[Graph, str]:
    """Create each graph in its namespace, after what it needs that no controller composes; the refusals by graph
    (the API server's message)."""
    refused = {}
    _create(cp, "/apis/resource.k8s.io/v1/deviceclasses", DEVICE_CLASS)
    for graph in graphs:
        ensure_namespace(cp.client, graph.namespace)
        for volume in existing_volumes(graph):
            _create(cp, f"/api/v1/namespaces/{graph.namespace}/persistentvolumeclaims", volume)
        try:
            cp.client.create(_dgd_path(graph), graph.doc)
        except APIError as err:
            if err.code != 409:
                refused[graph] = str(err.status.get("message", err))
    return refused


def stored_objects(cp: ControlPlane, namespaces: Iterable[str]) -> dict[Key, Obj]:
    """What the stack stores in ``namespaces`` of ``RESOURCES`` (a resource it does not serve is skipped)."""
    wanted = set(namespaces)
    out: dict[Key, Obj] = {}
    for group_version, plural in RESOURCES:
        group, _, version = group_version.rpartition("/")
        path = f"/apis/{group_version}/{plural}" if group else f"/api/{version}/{plural}"
        try:
            items = cp.client.get(path)["items"]
        except APIError as err:
            if err.code == 404:
                continue
            raise
        kind = None
        for item in items:
            meta = item["metadata"]
            if meta.get("namespace") not in wanted:
                continue
            kind = kind or _kind_of(cp, group_version, plural)
            item.setdefault("kind", kind)
            item.setdefault("apiVersion", group_version)
            if (kind, meta["name"]) in NOT_COMPOSED or PREREQUISITE_LABEL in (meta.get("labels") or {}):
                continue
            out[(meta["namespace"], kind, meta["name"])] = item
    return out


def _kind_of(cp: ControlPlane, group_version: str, plural: str) -> str:
    return next(r["kind"] for r in served_resources(cp.client, group_version) if r["name"] == plural)


def settle(
    cp: ControlPlane,
    namespaces: list[str],
    *,
    quiet: float = 15.0,
    limit: float = 600.0,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[Key, Obj]:
    """Read back until nothing has changed for ``quiet`` seconds (or ``limit`` passes): the settled objects."""
    deadline = time.monotonic() + limit
    last: str | None = None
    since = time.monotonic()
    while True:
        objects = stored_objects(cp, namespaces)
        fingerprint = hashlib.sha256(
            json.dumps({"/".join(k): normalised(v) for k, v in objects.items()}, sort_keys=True).encode()
        ).hexdigest()
        now = time.monotonic()
        if fingerprint != last:
            last, since = fingerprint, now
            progress(f"{len(objects)} objects in {len({k[0] for k in objects})}/{len(namespaces)} namespaces")
        elif now - since >= quiet or now > deadline:
            return objects
        time.sleep(2.0)


def graph_states(cp: ControlPlane, graphs: Iterable[Graph]) -> dict[Graph, str]:
    """Each graph's state as its DGD reports it: ``status.state`` and the message of a false condition."""
    out = {}
    for graph in graphs:
        try:
            dgd = cp.client.get(f"{_dgd_path(graph)}/{graph.doc['metadata']['name']}")
        except APIError as err:
            out[graph] = f"not found ({err.code})"
            continue
        status = dgd.get("status") or {}
        failing = [
            f"{c.get('type')}: {c.get('message') or c.get('reason')}"
            for c in status.get("conditions") or []
            if c.get("status") == "False"
        ]
        out[graph] = "; ".join([str(status.get("state", "")), *failing]).strip("; ")
    return out
