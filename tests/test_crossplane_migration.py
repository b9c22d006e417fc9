"""From the upstream operator to this package and back, on a real API server and a real Crossplane, pods untouched.

The upstream operator cannot run here (its module is not served), so the test lays out what it leaves in a
cluster: its CRDs (``../shared/upstream/crds``), a DynamoGraphDeployment of each pathway as upstream's golden
scenarios write them, carrying the operator's finalizer, and the objects its reconcilers create for them
(PodCliqueSet, Services, discovery RBAC, component DynamoComponentDeployments and their Deployments), each with
the controller reference upstream sets. Those objects are this package's render of the scenario, which
``test_upstream_golden`` holds against upstream's expected output.

Then docs/migrate.md, step by step, with kubectl and ``function-dynamo migrate``:

1. ``migrate check`` refuses while the operator's CRDs are installed, naming them;
2. ``migrate release`` (the operator stopped) writes the graphs' manifests and leaves the objects unowned;
   deleting the operator's CRDs then deletes its objects, but not one workload;
3. the package is installed (``migrate check`` now passes) and the manifests applied: Crossplane composes objects
   of the same names and adopts the existing ones: ``migrate verify --adopted`` finds every one with its UID and
   its spec (no template change, so no rollout), controlled by an XR;
4. and back: ``migrate release`` pauses and lets go of the XRs, the package is uninstalled, the operator's CRDs
   and the manifests go back in, and every object is still the same one, unowned, for the operator to adopt.

Beside it, a package installed while the operator's graphs exist: the function refuses to compose them, naming the
operator's finalizer and the migration (``functions.api.upstream_operator``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fixtures.tooling import _missing, shared_dir
from fixtures.upstream_golden import HARNESS_OPERATOR_VERSION, NAMESPACE, rendered, scenario_input
from functions.kube.backends import ORIGIN_VERSION_ANNOTATION
from functions.tooling.kubectl import resource_of
from functions.tooling.migration import CRDS, OPERATOR_FINALIZER
from harness.apiserver import ensure_namespace
from harness.cli import kubectl, migrate
from harness.composites import without_crossplane_metadata
from harness.controlplane import ControlPlane, require_kubectl, start_control_plane
from harness.crossplane_core import CONFIGURATION, install_target_crds, start_crossplane
from harness.poll import until

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = ("dgd/grove", "dgd/components")
SECONDS = 240.0
Obj = dict[str, Any]


def upstream_crd_files() -> list[Path]:
    directory = shared_dir() / "upstream" / "crds"
    if not directory.is_dir():
        _missing(f"{directory} is missing: the upstream operator's CRDs come from ../shared/upstream/crds")
    return sorted(
        p
        for p in directory.glob("*.yaml")
        if p.name.removeprefix("nvidia.com_").removesuffix(".yaml") + ".nvidia.com" in CRDS
    )


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ControlPlane, Path]]:
    """A control plane of its own (the operator's CRDs and the package's cannot share one), and its kubectl."""
    kubectl = require_kubectl()
    upstream_crd_files()
    cp = start_control_plane(tmp_path_factory.mktemp("migration-control-plane"))
    try:
        yield cp, kubectl
    finally:
        cp.stop()


def _live(cp: ControlPlane, binary: Path, obj: Obj) -> Obj | None:
    meta = obj["metadata"]
    out = kubectl(
        cp, binary, "get", resource_of(obj), meta["name"], "-n", meta["namespace"], "-o", "json", "--ignore-not-found"
    )
    return json.loads(out) if out.strip() else None


def _fresh(obj: Obj) -> Obj:
    """A rendered object as a controller creates it: no Crossplane bookkeeping, no owner yet."""
    out = without_crossplane_metadata(obj)
    for key in ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields"):
        out["metadata"].pop(key, None)
    out.pop("status", None)
    return out


def lay_out_the_operators_graphs(cp: ControlPlane, binary: Path) -> dict[str, Obj]:
    """The operator's CRDs, its graphs and what its reconcilers created; key "Kind/name" -> the live object."""
    install_target_crds(cp)  # Grove's and the others the graphs' objects are
    for path in upstream_crd_files():
        kubectl(cp, binary, "apply", "--server-side", "-f", str(path))
    for path in upstream_crd_files():
        kubectl(cp, binary, "wait", "--for=condition=Established", "-f", str(path), "--timeout=60s")
    ensure_namespace(cp.client, NAMESPACE)
    created: dict[str, Obj] = {}

    def create(obj: Obj) -> Obj:
        live = json.loads(kubectl(cp, binary, "create", "-o", "json", "-f", "-", stdin=json.dumps(obj)))
        created[f"{obj['kind']}/{obj['metadata']['name']}"] = live
        return live

    for scenario in SCENARIOS:
        graph = scenario_input(scenario)
        graph["metadata"]["finalizers"] = [OPERATOR_FINALIZER]
        # the origin version the operator's defaulting webhook stamped, the one its objects were rendered with
        graph["metadata"].setdefault("annotations", {})[ORIGIN_VERSION_ANNOTATION] = HARNESS_OPERATOR_VERSION
        create(graph)
        objects = rendered(scenario).objects
        assert objects, rendered(scenario).error
        # owners before what they own: the component deployments, then the rest
        for obj in sorted(objects, key=lambda o: o["kind"] != "DynamoComponentDeployment"):
            fresh = _fresh(obj)
            if fresh["kind"] == "DynamoComponentDeployment":
                fresh["metadata"]["finalizers"] = [OPERATOR_FINALIZER]
            owners = []
            for ref in obj["metadata"].get("ownerReferences") or []:
                owner = created[f"{ref['kind']}/{ref['name']}"]
                owners.append(
                    {
                        "apiVersion": owner["apiVersion"],
                        "kind": owner["kind"],
                        "name": ref["name"],
                        "uid": owner["metadata"]["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                )
            fresh["metadata"]["ownerReferences"] = owners
            create(fresh)
    return created


def workloads(created: dict[str, Obj]) -> dict[str, Obj]:
    """What runs the graphs: every created object but the Dynamo ones (those are replaced, by design)."""
    return {k: v for k, v in created.items() if v["apiVersion"].split("/")[0] != "nvidia.com"}


def _uid_spec(obj: Obj | None) -> tuple[str, str] | None:
    """What must not change: the object (its UID) and its spec (its pods' template among it)."""
    return None if obj is None else (obj["metadata"]["uid"], json.dumps(obj.get("spec"), sort_keys=True))


def test_graphs_move_from_the_operator_to_the_package_and_back_with_the_same_objects(
    cluster: tuple[ControlPlane, Path], tmp_path: Path
) -> None:
    cp, binary = cluster
    created = lay_out_the_operators_graphs(cp, binary)
    before = {k: _uid_spec(v) for k, v in workloads(created).items()}
    assert any(k.startswith("PodCliqueSet/") for k in before) and any(k.startswith("Deployment/") for k in before)

    # 1. the operator's CRDs are there: check refuses, naming them
    refused = migrate(cp, binary, "check")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "dynamographdeployments.nvidia.com: 2 object(s), 2 with the operator's finalizer" in refused.stderr

    # 2. release (the operator stopped), then the operator's CRDs go
    out = tmp_path / "to-package"
    released = migrate(cp, binary, "release", "-n", NAMESPACE, "--out", str(out))
    assert released.returncode == 0, released.stdout + released.stderr
    manifests = list(yaml.safe_load_all((out / "graphs.yaml").read_text()))
    assert sorted(m["metadata"]["name"] for m in manifests) == ["component-manifests", "grove-manifest"]
    assert all("finalizers" not in m["metadata"] and "status" not in m for m in manifests)
    held = json.loads((out / "held.json").read_text())
    assert sorted(f"{h['kind']}/{h['name']}" for h in held) == sorted(before)
    for path in upstream_crd_files():
        kubectl(cp, binary, "delete", "-f", str(path), "--wait=true")
    time.sleep(5)  # the garbage collector's chance to delete what lost its owner: nothing may go
    assert {k: _uid_spec(_live(cp, binary, v)) for k, v in workloads(created).items()} == before

    # 3. the package, then the manifests: the same objects adopted
    start_crossplane(cp, CONFIGURATION)
    passed = migrate(cp, binary, "check")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    kubectl(cp, binary, "apply", "-f", str(out / "graphs.yaml"))
    verified = migrate(cp, binary, "verify", "--out", str(out), "--adopted", "--wait", str(SECONDS))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    adopted: dict[str, str] = {}
    for key, obj in workloads(created).items():
        live = _live(cp, binary, obj)
        assert _uid_spec(live) == before[key], key
        adopted[key] = live["metadata"]["uid"]
        (controller,) = [r for r in live["metadata"]["ownerReferences"] if r.get("controller")]
        assert controller["apiVersion"].startswith("nvidia.com/"), (key, controller)
        assert controller["uid"] != obj["metadata"]["ownerReferences"][0]["uid"], f"{key}: still the operator's"

    # 4. and back: the package lets go, goes, and the operator's API returns
    back = tmp_path / "to-operator"
    released = migrate(cp, binary, "release", "-n", NAMESPACE, "--out", str(back))
    assert released.returncode == 0, released.stdout + released.stderr
    assert "paused" in released.stderr
    kubectl(cp, binary, "delete", "configuration.pkg.crossplane.io", CONFIGURATION, "--wait=true")
    until(
        "the package's CRDs gone",
        lambda: not any(kubectl(cp, binary, "get", "crd", name, "--ignore-not-found").strip() for name in CRDS),
        SECONDS,
    )
    for path in upstream_crd_files():
        kubectl(cp, binary, "apply", "--server-side", "-f", str(path))
    for path in upstream_crd_files():
        kubectl(cp, binary, "wait", "--for=condition=Established", "-f", str(path), "--timeout=60s")
    returned = list(yaml.safe_load_all((back / "graphs.yaml").read_text()))
    assert sorted(m["metadata"]["name"] for m in returned) == ["component-manifests", "grove-manifest"]
    assert [m["spec"] for m in returned] == [m["spec"] for m in manifests]  # the graphs come back as they left
    kubectl(cp, binary, "apply", "-f", str(back / "graphs.yaml"))
    time.sleep(5)
    verified = migrate(cp, binary, "verify", "--out", str(back))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    after = {k: _uid_spec(_live(cp, binary, v)) for k, v in workloads(created).items()}
    assert after == before
    print("object: uid under the operator -> under the package -> back under the operator's API")  # -rP shows it
    for key, (uid, _) in sorted((k, v) for k, v in before.items() if v is not None):
        print(f"{key}: {uid} -> {adopted[key]} -> {(after[key] or ('',))[0]}")
