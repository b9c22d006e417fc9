"""The same graphs on the upstream operator and on the package store the same objects, but for written deviations.

A representative subset of ``scripts/differential.py``'s graphs (upstream's two golden DGD inputs and a corpus
graph of each API version, each on both pathways) is applied to the running operator (``upstream_operator``) and
to Crossplane with the namespaced package (``crossplane``), the package reading the operator's own
configuration. Every difference between what the two store must be an entry of ``tests/differential_allowed.yaml``,
and every entry must name a row of ``docs/deviations.md``. The comparison itself is table-tested here too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from fixtures.differential_compare import (
    compare,
    deviation_rows,
    differing_paths,
    masked_worker_hashes,
    normalised,
    unexplained,
)
from fixtures.tooling import _missing, shared_dir
from harness.controlplane import APIError
from harness.crossplane_core import ENVIRONMENT_CONFIGS, Crossplane, apply
from harness.differential import (
    Graph,
    all_graphs,
    apply_graphs,
    as_graph,
    existing_volumes,
    graph_states,
    platform_config,
    settle,
)
from harness.operator_stack import OperatorStack

REPO = Path(__file__).resolve().parents[1]
ALLOWED = REPO / "tests" / "differential_allowed.yaml"
# The subset: both golden inputs, and one corpus graph of each API version.
SUBSET = (
    "golden/grove",
    "golden/components",
    "v1beta1/examples/backends/vllm/deploy/disagg.yaml#0",
    "v1alpha1/examples/backends/vllm/deploy/disagg.yaml#0",
)
Obj = dict[str, Any]


def allowed() -> list[Obj]:
    return yaml.safe_load(ALLOWED.read_text()) or []


# --- table tests of the comparison --------------------------------------------------------------------------


def test_every_allowed_difference_is_a_deviation_row() -> None:
    rows = deviation_rows()
    shapes = (
        {"kind", "path", "deviation"},
        {"side", "kind", "name", "deviation"},
        {"operator_failed", "deviation"},
        {"component_failed", "harness"},
        {"component_failed", "deviation"},
    )
    testing = (REPO / "docs" / "testing.md").read_text()
    for entry in allowed():
        assert set(entry) in shapes, entry
        if "harness" in entry:  # not a deviation: a part of the test stack that does not run, which testing.md names
            assert "LeaderWorkerSet" in entry["component_failed"] and "LWS's defaulting webhook" in testing
            continue
        matching = [r for r in rows if entry["deviation"] in r]
        assert len(matching) == 1, f"{entry}: names {len(matching)} rows of docs/deviations.md, not one"


def test_bookkeeping_is_dropped_and_nothing_else() -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "s",
            "namespace": "n",
            "uid": "u",
            "resourceVersion": "1",
            "ownerReferences": [{}],
            "managedFields": [{}],
            "labels": {"crossplane.io/composite": "x", "app": "a"},
            "annotations": {"crossplane.io/composition-resource-name": "r"},
        },
        "spec": {"clusterIP": "10.96.0.9", "clusterIPs": ["10.96.0.9"], "ports": [{"port": 80}], "crossplane": {}},
        "status": {"loadBalancer": {}},
    }
    assert normalised(obj) == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s", "namespace": "n", "labels": {"app": "a"}},
        "spec": {"ports": [{"port": 80}]},
    }


def test_differing_paths_match_named_items_by_name() -> None:
    a = {"spec": {"containers": [{"name": "main", "image": "a"}, {"name": "side", "image": "s"}]}}
    b = {"spec": {"containers": [{"name": "side", "image": "s"}, {"name": "main", "image": "b"}], "x": 1}}
    assert differing_paths(a, b) == [("spec.containers[name].main.image", "a", "b"), ("spec.x", "<absent>", 1)]


def test_unexplained_differences_are_those_no_entry_allows() -> None:
    svc = {"kind": "Service", "metadata": {"name": "s"}, "spec": {"type": "ClusterIP", "x": 1}}
    other = {"kind": "Service", "metadata": {"name": "s"}, "spec": {"type": "NodePort", "x": 2}}
    result = compare(
        {("n", "Service", "s"): svc, ("n", "Secret", "mpi"): {}, ("n", "Secret", "other"): {}},
        {("n", "Service", "s"): other, ("f", "Deployment", "d"): {}, ("g", "Deployment", "d"): {}},
    )
    entries = [
        {"kind": "Service", "path": r"spec\.t.*", "deviation": "-"},
        {"side": "operator", "kind": "Secret", "name": "mp.", "deviation": "-"},
        {"operator_failed": "Unsupported value", "deviation": "-"},
    ]
    states = {"f": "failed; Ready: spec.type: Unsupported value: main", "g": "pending"}
    assert unexplained(result, entries, states) == [
        "Service spec.x: 1 objects, e.g. ('n', 'Service', 's'): the operator's 1, ours 2",
        "only ours: Deployment g/d",
        "only operator: Secret n/other",
    ]


def test_volumes_a_graph_names_without_creating_them_are_created_before_it() -> None:
    graph = as_graph(
        "src",
        {
            "apiVersion": "nvidia.com/v1alpha1",
            "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g"},
            "spec": {
                "pvcs": [
                    {"name": "models"},
                    {"name": "cache", "create": False},
                    {"name": "new", "create": True},
                ]
            },
        },
        "grove",
    )
    assert [(v["metadata"]["name"], v["metadata"]["namespace"]) for v in existing_volumes(graph)] == [
        ("models", graph.namespace),
        ("cache", graph.namespace),
    ]


def test_compare_counts_each_kind_and_side() -> None:
    svc = {"kind": "Service", "metadata": {"name": "s"}, "spec": {"type": "ClusterIP"}}
    other = {"kind": "Service", "metadata": {"name": "s"}, "spec": {"type": "NodePort"}}
    result = compare(
        {("n", "Service", "s"): svc, ("n", "Service", "t"): svc, ("n", "Role", "r"): {}},
        {("n", "Service", "s"): svc, ("n", "Service", "t"): other, ("n", "Secret", "x"): {}},
    )
    assert (result.identical["Service"], result.differing["Service"]) == (1, 1)
    assert (result.only_operator["Role"], result.only_ours["Secret"]) == (1, 1)
    assert list(result.paths) == [("Service", "spec.type")]


def test_worker_hashes_are_masked_in_names_labels_and_values() -> None:
    labels = {"nvidia.com/dynamo-worker-hash": "abcd1234"}
    dcd = {
        "metadata": {"name": "g-decode-abcd1234", "labels": labels},
        "spec": {"env": [{"name": "DYN_NAMESPACE_WORKER_SUFFIX", "value": "abcd1234"}], "other": "abcd"},
    }
    got = masked_worker_hashes({("n", "DCD", "g-decode-abcd1234"): dcd, ("m", "Service", "s-abcd1234"): {}})
    assert got == {
        ("n", "DCD", "g-decode-<worker-hash>"): {
            "metadata": {
                "name": "g-decode-<worker-hash>",
                "labels": {"nvidia.com/dynamo-worker-hash": "<worker-hash>"},
            },
            "spec": {"env": [{"name": "DYN_NAMESPACE_WORKER_SUFFIX", "value": "<worker-hash>"}], "other": "abcd"},
        },
        ("m", "Service", "s-abcd1234"): {},  # another namespace, another graph: its own hashes only
    }


def test_a_graph_moves_to_its_own_namespace_and_pathway() -> None:
    doc = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "x", "annotations": {"nvidia.com/enable-grove": "true"}},
    }
    grove, components = as_graph("src", doc, "grove"), as_graph("src", doc, "components")
    assert grove.namespace != components.namespace and grove.namespace.startswith("g-g-")
    assert "annotations" not in grove.doc["metadata"]
    assert components.doc["metadata"]["annotations"] == {"nvidia.com/enable-grove": "false"}
    assert doc["metadata"]["namespace"] == "x"


# --- live ---------------------------------------------------------------------------------------------------


def subset() -> list[Graph]:
    golden = shared_dir() / "upstream" / "golden"
    if not golden.is_dir():
        _missing(f"{golden} is missing: the graphs come from ../shared/upstream/golden and ../shared/corpus")
    graphs = [g for g in all_graphs(golden) if g.source in SUBSET]
    assert {g.source for g in graphs} == set(SUBSET), "a graph of the subset is gone from ../shared"
    return graphs


def _environment_config(crossplane: Crossplane) -> Obj | None:
    """The session's ``dynamo-platform`` EnvironmentConfig, to put back after the test, or None."""
    try:
        found = crossplane.cp.client.get(f"{ENVIRONMENT_CONFIGS}/dynamo-platform")
    except APIError as err:
        if err.code == 404:
            return None
        raise
    return {k: found[k] for k in ("apiVersion", "kind", "data") if k in found} | {
        "metadata": {"name": "dynamo-platform"}
    }


def test_the_operator_and_the_package_store_the_same_objects(
    upstream_operator: OperatorStack, crossplane: Crossplane
) -> None:
    graphs = subset()
    cp = crossplane.cp
    before = _environment_config(crossplane)
    apply(cp, platform_config(upstream_operator.config), ENVIRONMENT_CONFIGS)
    try:
        refused = {"operator": apply_graphs(upstream_operator.cp, graphs), "ours": apply_graphs(cp, graphs)}
        assert refused == {"operator": {}, "ours": {}}
        namespaces = sorted({g.namespace for g in graphs})
        theirs = settle(upstream_operator.cp, namespaces, quiet=10.0, limit=300.0)
        mine = settle(cp, namespaces, quiet=10.0, limit=300.0)
    finally:
        if before is None:
            cp.client.delete(f"{ENVIRONMENT_CONFIGS}/dynamo-platform")
        else:
            apply(cp, before, ENVIRONMENT_CONFIGS)
    sources = {g.namespace: f"{g.source} ({g.pathway})" for g in graphs}
    result = compare(theirs, mine, where=lambda k: f"{sources[k[0]]}: {k[2]}")
    states = {g.namespace: state for g, state in graph_states(upstream_operator.cp, graphs).items()}
    problems = unexplained(result, allowed(), states)
    assert not problems, "differences outside tests/differential_allowed.yaml:\n" + "\n".join(problems[:40])
    assert sum(result.identical.values()) > 0
