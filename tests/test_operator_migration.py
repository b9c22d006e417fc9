"""Graphs the running upstream operator created move to the package and back, with the same objects.

docs/migrate.md, step by step, with the real operator (``tests/harness/operator_stack.py``) on one control plane:

1. the operator composes two example graphs (the Grove pathway and the component pathway) and records each
   graph's worker generation in its ``nvidia.com/current-worker-hash-v2`` annotation; Grove and the Deployment
   controller are played (``controller_play``, the status scenarios' objects) until the operator reports each
   graph Ready;
2. it is stopped and uninstalled, ``migrate release`` lets go of the graphs, its CRDs go: no workload goes;
3. the package is installed and the released manifests applied: Crossplane adopts every workload with its UID,
   and no workload's spec changes (``migrate verify --adopted``), since the package keeps the operator's worker
   hash for a graph that came with one (``functions/kinds/graph/adopted_worker_hash.py``); each graph is Ready;
4. and back: the package releases and goes, the operator is installed and started again, the manifests applied,
   and the operator reconciles the graphs over the same objects, their specs unchanged, the Grove graph Ready.
   (It finds them by name and, their specs being what it would write, leaves them as they are: it does not make
   itself their owner.)
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from functions.tooling.migration import CRDS
from harness.apiserver import ensure_namespace, resource_path
from harness.cli import kubectl, migrate
from harness.controller_play import play_deployments, play_grove
from harness.controlplane import APIError, ControlPlane, require_kubectl, start_control_plane
from harness.crossplane_core import CONFIGURATION, start_crossplane
from harness.differential import stored_objects
from harness.operator_stack import (
    OperatorStack,
    install_operator,
    run_operator,
    start_operator,
    stop_operator,
    uninstall_operator,
)
from harness.poll import until

REPO = Path(__file__).resolve().parents[1]
NAMESPACE = "moving"
# Status scenarios of two example graphs: what Grove and the Deployment controller report when all is ready.
SCENARIOS = ("vllm-agg-ready", "vllm-disagg-no-grove-ready")
SECONDS = 240.0
HASH_ANNOTATION = "nvidia.com/current-worker-hash-v2"
Obj = dict[str, Any]


@pytest.fixture(scope="module")
def operator_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[OperatorStack, Path]]:
    kubectl_binary = require_kubectl()
    cp = start_control_plane(tmp_path_factory.mktemp("operator-migration"))
    try:
        yield start_operator(cp), kubectl_binary
    finally:
        cp.stop()


def workloads(cp: ControlPlane) -> dict[str, Obj]:
    """What runs the graphs, by "Kind/name": every object in the namespace but the Dynamo ones."""
    return {
        f"{k}/{n}": o
        for (_, k, n), o in stored_objects(cp, [NAMESPACE]).items()
        if not o["apiVersion"].startswith("nvidia.com/")
    }


def uid_spec(obj: Obj | None) -> tuple[str, str] | None:
    return None if obj is None else (obj["metadata"]["uid"], json.dumps(obj.get("spec"), sort_keys=True))


def until_ready(cp: ControlPlane, name: str, owner: str) -> None:
    """Wait for the graph's Ready, the Deployment controller played at each look (an owner's changes to a
    Deployment's metadata move its generation, which the real controller reports observed at once)."""

    def probe() -> bool:
        play_deployments(cp, NAMESPACE)
        return ready(_dgd(cp, name))

    def where() -> str:
        conditions = (_dgd(cp, name).get("status") or {}).get("conditions")
        dcds = cp.client.get(resource_path("nvidia.com", "v1beta1", "dynamocomponentdeployments", NAMESPACE))["items"]
        nested = {
            d["metadata"]["name"]: (d["metadata"].get("generation"), (d.get("status") or {}).get("conditions"))
            for d in dcds
        }
        return f"its conditions: {conditions}; its component deployments: {nested}"

    until(f"{name} Ready under {owner}", probe, SECONDS, where=where)


def v1beta1_claim(scenario: str) -> Obj:
    """The v1beta1 example graph a status scenario was made from, in the test's namespace. (A v1alpha1 graph the
    operator stores keeps some fields only in its conversion record when read at v1beta1: docs/migrate.md.)"""
    graph = yaml.safe_load((REPO / "examples" / "dgd" / f"{scenario.rsplit('-', 1)[0]}.yaml").read_text())
    graph["metadata"]["namespace"] = NAMESPACE
    return graph


def ready(dgd: Obj) -> bool:
    """The graph's ``Ready`` condition is true (the operator's, or Crossplane's on the package's XR)."""
    conditions = (dgd.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _dgd(cp: ControlPlane, name: str) -> Obj:
    return cp.client.get(resource_path("nvidia.com", "v1beta1", "dynamographdeployments", NAMESPACE, name))


def test_graphs_the_operator_created_move_to_the_package_and_back(
    operator_cluster: tuple[OperatorStack, Path], tmp_path: Path
) -> None:
    stack, binary = operator_cluster
    cp = stack.cp
    ensure_namespace(cp.client, NAMESPACE)
    names = []
    for scenario in SCENARIOS:
        graph = v1beta1_claim(scenario)
        names.append(graph["metadata"]["name"])
        version = graph["apiVersion"].split("/")[1]
        cp.client.create(resource_path("nvidia.com", version, "dynamographdeployments", NAMESPACE), graph)

    # 1. the operator composes both and records their worker generations
    for name in names:
        until(
            f"{name}'s worker hash recorded by the operator",
            lambda n=name: _dgd(cp, n)["metadata"].get("annotations", {}).get(HASH_ANNOTATION),
            SECONDS,
        )
    play_grove(cp, SCENARIOS[0], NAMESPACE)
    until(
        "the component pathway's Deployments",
        lambda: len(cp.client.get(f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments")["items"]) >= 2,
    )
    play_deployments(cp, NAMESPACE)
    for name in names:
        until_ready(cp, name, "the operator")
    composed = workloads(cp)
    before = {k: uid_spec(v) for k, v in composed.items()}
    assert any(k.startswith("PodCliqueSet/") for k in before) and any(k.startswith("Deployment/") for k in before)

    # 2. uninstalled (its admission webhooks with it: they would refuse every change to a graph), released, its
    #    CRDs gone: nothing that runs goes
    stop_operator(stack)
    uninstall_operator(stack)
    refused = migrate(cp, binary, "check")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    out = tmp_path / "to-package"
    released = migrate(cp, binary, "release", "-n", NAMESPACE, "--out", str(out))
    assert released.returncode == 0, released.stdout + released.stderr
    manifests = list(yaml.safe_load_all((out / "graphs.yaml").read_text()))
    assert all(HASH_ANNOTATION in m["metadata"]["annotations"] for m in manifests), manifests
    kubectl(
        cp,
        binary,
        "delete",
        "crd",
        *(n for n in CRDS if kubectl(cp, binary, "get", "crd", n, "--ignore-not-found")),
        "--wait=true",
    )
    time.sleep(5)  # the garbage collector's chance to delete what lost its owner: nothing may go
    assert {k: uid_spec(v) for k, v in workloads(cp).items()} == before

    # 3. the package adopts them: same objects, same specs
    start_crossplane(cp, CONFIGURATION)
    kubectl(cp, binary, "apply", "-f", str(out / "graphs.yaml"))
    verified = migrate(cp, binary, "verify", "--out", str(out), "--adopted", "--wait", str(SECONDS))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    adopted = {k: uid_spec(v) for k, v in workloads(cp).items() if k in before}
    assert adopted == before
    for name in names:
        until_ready(cp, name, "the package")

    # 4. and back to the operator, which adopts the same objects
    back = tmp_path / "to-operator"
    released = migrate(cp, binary, "release", "-n", NAMESPACE, "--out", str(back))
    assert released.returncode == 0, released.stdout + released.stderr
    kubectl(cp, binary, "delete", "configuration.pkg.crossplane.io", CONFIGURATION, "--wait=true")
    until(
        "the package's CRDs gone",
        lambda: not any(kubectl(cp, binary, "get", "crd", n, "--ignore-not-found").strip() for n in CRDS),
        SECONDS,
    )
    install_operator(stack)
    run_operator(stack)
    kubectl(cp, binary, "apply", "-f", str(back / "graphs.yaml"))

    def reconciled(name: str) -> bool:
        """The operator has reconciled the graph as it now stands (its status follows its generation)."""
        try:
            dgd = _dgd(cp, name)
        except APIError as err:  # the re-created CRDs' storage is (re)initializing for a moment
            if err.code not in (429, 503):
                raise
            return False
        status = dgd.get("status") or {}
        return bool(status.get("state")) and status.get("observedGeneration") == dgd["metadata"]["generation"]

    for name in names:
        until(f"{name} reconciled by the operator again", lambda n=name: reconciled(n), SECONDS)
    # The Grove graph is Ready again. The component pathway's is not, until the operator next resyncs: it does not
    # make itself the owner of Deployments whose spec it would not change, so their status does not wake it.
    until_ready(cp, names[0], "the operator again")
    time.sleep(10)
    after = {k: uid_spec(v) for k, v in workloads(cp).items() if k in before}
    assert after == before
    print("object: uid, the same under the operator, the package and the operator again")  # -rP shows it
    for key, value in sorted(before.items()):
        print(f"{key}: {value[0] if value else None}")
