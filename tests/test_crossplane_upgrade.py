"""Upgrading the package under running graphs loses nothing (docs/upgrading.md), on a real Crossplane.

v(N) is this checkout's packages as the fixture installs them. v(N+1) is built from a copy of the checkout with
two changes a release could make: the DGD's API gains one optional field (``spec.upgradeNote``, through the
models and ``function-dynamo xrds``, as a release would), and the render changes one field (the frontend's
liveness probe waits 20 s instead of 15). Its packages are pushed to the same registry as v0.1.1, and its
function serves from the copy (the fixture plays the package runtime for the new revision as for the first).

One example of every kind is applied under v(N) and composed; then, as docs/upgrading.md says, the Function moves
to v0.1.1 (its revision installed inactive, activated once Crossplane knows its capabilities) and then the
Configuration. Crossplane deactivates the v(N) revision the moment the Function's package changes, so a composite
that reconciles before the v0.1.1 revision is active and serving may report ``Synced=False``, as may one that
meets a new Composition revision not yet checked: only for those reasons (``SWITCHING``), and every composite is
``Synced=True`` again afterwards. Every object composed before still exists with the same UID (never recreated),
and every difference in what was composed is the changed probe; the new field is accepted and the graph still
composes. The played runtime serves the new revision the moment it is active; a cluster's starts its pods then
(docs/upgrading.md says what that window looks like).
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fixtures.corpus import LIFECYCLES
from fixtures.rendering import preview
from fixtures.tooling import _missing, shared_dir
from functions.tooling.migration import spec_differences
from harness.apiserver import ensure_namespace, resource_path
from harness.apiserver import plural as plural_of
from harness.composites import manifest_path, object_path, resource_refs, wait_synced
from harness.controlplane import Client, ControlPlane, free_port, start_control_plane, start_process, wait_for
from harness.crossplane_core import (
    CONFIGURATION,
    FUNCTION,
    PACKAGE_PREFIX,
    PKG,
    Crossplane,
    _conditions,
    _play_runtime,
    checkpoint_gate_on,
    port_open,
    require_tools,
    start_crossplane,
)
from harness.poll import until
from harness.providers import install_providers

REPO = Path(__file__).resolve().parents[1]
NEXT = "v0.1.1"
SECONDS = 240.0
# What a composite may report while the packages switch (Crossplane v2.4's own messages): while no v0.1.1 function
# revision serves yet, the function runner finds no active revision, or one without an endpoint; when the
# Configuration moves, a composite queued by a new CompositionRevision can reconcile before Crossplane has checked
# that revision's pipeline (it is queued again once checked). Any other Synced=False during the upgrade fails the
# test, "missing required capabilities" included: activated by hand, the new function revision is never active
# before Crossplane knows it can compose (with automatic activation every composite reports that at once).
SWITCHING = (
    "cannot get gRPC client connection for Function",
    "does not have a valid function pipeline: pipeline status unknown",
)
Obj = dict[str, Any]
Key = tuple[str, str, str, str]  # apiVersion, kind, namespace, name


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Crossplane]:
    if not (shared_dir() / "upstream" / "crds").is_dir():
        _missing(f"{shared_dir() / 'upstream' / 'crds'} is missing: v(N+1)'s XRDs are generated from them")
    cp = start_control_plane(tmp_path_factory.mktemp("upgrade-control-plane"))
    try:
        yield start_crossplane(cp, CONFIGURATION)
    finally:
        cp.stop()


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, f"{' '.join(argv)}: {proc.stdout[-2000:]}{proc.stderr[-4000:]}"
    return proc.stdout


def _replace_once(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{path}: the change to v(N+1) no longer applies ({old!r})"
    path.write_text(text.replace(old, new))


def next_release(tmp: Path) -> Path:
    """A copy of the checkout (uncommitted changes included) changed as v(N+1): one optional field, one render."""
    copy_root = tmp / "next"
    files = _run(["git", "ls-files", "-co", "--exclude-standard"], REPO).split("\n")
    for name in filter(None, files):
        source = REPO / name
        if source.is_file():
            target = copy_root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    _replace_once(
        copy_root / "functions" / "api" / "v1beta1.py",
        "class DynamoGraphDeploymentSpec(DynamoModel):\n",
        "class DynamoGraphDeploymentSpec(DynamoModel):\n    upgradeNote: str | None = None\n",
    )
    _replace_once(
        copy_root / "functions" / "kube" / "defaults.py",
        '"/live", "http", initialDelaySeconds=15',
        '"/live", "http", initialDelaySeconds=20',
    )
    (copy_root / ".venv").symlink_to(REPO / ".venv")  # the scripts run .venv/bin/python; PYTHONPATH picks the copy
    env = {"PYTHONPATH": str(copy_root), "PATH": "/usr/bin:/bin"}
    _run(
        [
            sys.executable,
            "-m",
            "functions.tooling.main",
            "xrds",
            "--out",
            str(copy_root),
            "--upstream-crds",
            str(shared_dir() / "upstream" / "crds"),
        ],
        copy_root,
        env,
    )
    return copy_root


def _composed(
    xp: Crossplane, applied: list[str], discovered: dict[tuple[str, str], tuple[str, bool]]
) -> dict[Key, Obj]:
    """Every object the composites at ``applied`` composed, nested composites' included."""
    out: dict[Key, Obj] = {}
    todo = list(applied)
    while todo:
        xr = xp.cp.client.get(todo.pop())
        for ref in resource_refs(xr):
            plural, namespaced = discovered[(ref["apiVersion"], ref["kind"])]
            namespace = (ref.get("namespace") or xr["metadata"].get("namespace")) if namespaced else None
            path = object_path(ref["apiVersion"], plural, namespace, ref["name"])
            obj = xp.cp.client.get(path)
            out[(ref["apiVersion"], ref["kind"], namespace or "", ref["name"])] = obj
            if resource_refs(obj) or (obj.get("spec") or {}).get("crossplane"):
                todo.append(path)  # a nested composite
    return out


class SyncedWatch(threading.Thread):
    """Polls every applied composite's Synced condition until stopped; remembers each time one was not True,
    with the seconds since the watch started."""

    def __init__(self, xp: Crossplane, applied: list[str]) -> None:
        super().__init__(daemon=True)
        # a client of its own: one holds one connection, not to be shared between threads
        self.client = Client(xp.cp.client.base, xp.cp.client.pki)
        self.applied, self.stopped = applied, threading.Event()
        self.started = time.monotonic()
        self.lapses: list[str] = []

    def run(self) -> None:
        while not self.stopped.is_set():
            for path in self.applied:
                got = self.client.get(path)
                synced = _conditions(got).get("Synced")
                if synced != "True":
                    message = next(
                        (
                            c.get("message")
                            for c in got.get("status", {}).get("conditions") or []
                            if c["type"] == "Synced"
                        ),
                        "",
                    )
                    self.lapses.append(f"{time.monotonic() - self.started:6.1f} s {path}: Synced={synced} {message}")
            time.sleep(0.5)


def test_an_upgrade_keeps_every_object_and_changes_only_what_the_render_changed(
    installed: Crossplane, tmp_path: Path
) -> None:
    xp, cp = installed, installed.cp
    discovered = install_providers(xp)
    required = checkpoint_gate_on(cp)  # a DynamoCheckpoint is refused without the gate, as the operator refuses it
    applied: list[str] = []
    for kind, example in sorted(LIFECYCLES.items()):
        claim = yaml.safe_load(example.read_text())
        namespace = "upgrade-" + kind.lower()[:40]
        claim["metadata"]["namespace"] = namespace
        ensure_namespace(cp.client, namespace)
        expected, _ = preview(copy.deepcopy(claim), required=required)
        cp.client.create(
            resource_path("nvidia.com", claim["apiVersion"].split("/")[1], plural_of(kind), namespace), claim
        )
        wait_synced(xp, claim, 1 if kind == "DynamoPlatform" else len(expected), discovered)
        applied.append(manifest_path(claim))
    time.sleep(3)  # the nested composites' first reconciles
    before = _composed(xp, applied, discovered)
    kinds = {key[1] for key in before}
    assert {"PodCliqueSet", "Deployment", "DynamoGraphDeploymentScalingAdapter"} <= kinds, sorted(before)

    # v(N+1): built, pushed, its function serving
    copy_root = next_release(tmp_path)
    tools = require_tools()
    out = tmp_path / "packages"
    _run(
        ["bash", "scripts/build-packages.sh", str(tools["CRANK"]), str(out)],
        copy_root,
        {**os.environ, "FUNCTION_PACKAGE_VERSION": NEXT},
    )
    for name in ("function-dynamo", CONFIGURATION):
        _run(
            [
                str(tools["CRANK"]),
                "xpkg",
                "push",
                "-f",
                str(out / f"{name}.xpkg"),
                f"{xp.registry}/function-dynamo/{name}:{NEXT}",
            ],
            REPO,
        )
    address = f"127.0.0.1:{free_port()}"
    start_process(
        cp,
        "function-dynamo-next",
        [
            sys.executable,  # the copy's main by path: `-m` would put this process's cwd (the checkout) first
            str(copy_root / "functions" / "tooling" / "main.py"),
            "serve",
            "--tls-certs-dir",
            str(cp.run_dir / "function-certs" / "serve"),
            "--address",
            address,
        ],
        env={"PYTHONPATH": str(copy_root), "PATH": "/usr/bin:/bin"},
    )
    wait_for(cp, "function-dynamo-next", lambda: port_open(address))

    # the upgrade, as docs/upgrading.md gives it: the Function, then the Configuration
    watch = SyncedWatch(xp, applied)
    watch.start()
    try:
        cp.client.merge_patch(
            f"{PKG}/functions/{FUNCTION}",
            {"spec": {"package": f"{PACKAGE_PREFIX}function-dynamo:{NEXT}", "revisionActivationPolicy": "Manual"}},
        )
        revision = until(
            "the v0.1.1 function revision installed, inactive", lambda: _inactive_revision(cp, NEXT), SECONDS
        )
        cp.client.merge_patch(f"{PKG}/functionrevisions/{revision}", {"spec": {"desiredState": "Active"}})
        until(
            "the v0.1.1 function revision serving",
            lambda: _play_runtime(cp, address) and _revision_is(cp, NEXT),
            SECONDS,
        )
        served = time.monotonic() - watch.started
        cp.client.merge_patch(
            f"{PKG}/configurations/{CONFIGURATION}", {"spec": {"package": f"{PACKAGE_PREFIX}{CONFIGURATION}:{NEXT}"}}
        )
        until("the v0.1.1 configuration healthy", lambda: _configuration_at(cp, NEXT), SECONDS)
        until(
            "the new field in the DGD's API",
            lambda: (
                "upgradeNote"
                in yaml.safe_dump(
                    cp.client.get(
                        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/dynamographdeployments.nvidia.com"
                    )
                )
            ),
            SECONDS,
        )
        try:
            until(
                "every frontend probe rendered by v(N+1)",
                lambda: _all_probes_at(_composed(xp, applied, discovered), 20),
                SECONDS,
            )
        except AssertionError as err:
            probes = {k: _frontend_probes(o) for k, o in _composed(xp, applied, discovered).items()}
            raise AssertionError(f"{err}: {[(k, v) for k, v in probes.items() if v]}") from None
        time.sleep(3)
    finally:
        watch.stopped.set()
        watch.join()
    after = _composed(xp, applied, discovered)
    print(f"the v0.1.1 revision served {served:.1f} s after the Function's package changed; Synced=False seen:")
    print("\n".join(watch.lapses) or "none")
    unexplained = [lapse for lapse in watch.lapses if not any(reason in lapse for reason in SWITCHING)]
    assert not unexplained, "\n".join(unexplained[:20])
    until(
        "every composite Synced=True after the upgrade",
        lambda: all(_conditions(cp.client.get(path)).get("Synced") == "True" for path in applied),
        SECONDS,
    )

    assert sorted(after) == sorted(before), "composed objects came or went"
    recreated = [k for k in before if before[k]["metadata"]["uid"] != after[k]["metadata"]["uid"]]
    assert not recreated, recreated
    print("composed object: uid under v(N) -> under v(N+1)")  # -rP shows it
    for key in sorted(before):
        print(f"{key}: {before[key]['metadata']['uid']} -> {after[key]['metadata']['uid']}")
    changed = {
        k: d
        for k in before
        if (
            d := spec_differences(
                {x: v for x, v in before[k].items() if x not in ("metadata", "status")},
                {x: v for x, v in after[k].items() if x not in ("metadata", "status")},
            )
        )
    }
    assert changed, "v(N+1) changed nothing: the test's change did not reach the render"
    unexpected = [
        f"{k}: {d}"
        for k, ds in changed.items()
        for d in ds
        if not d.endswith("livenessProbe.initialDelaySeconds: 15 -> 20")
    ]
    assert not unexpected, "\n".join(unexpected)

    # the new optional field: stored, and the graph still composes
    dgd = next(p for p in applied if "/dynamographdeployments/" in p)
    cp.client.merge_patch(dgd, {"spec": {"upgradeNote": "after v0.1.1"}})
    assert cp.client.get(dgd)["spec"]["upgradeNote"] == "after v0.1.1"
    time.sleep(3)
    assert _conditions(cp.client.get(dgd)).get("Synced") == "True"


def _inactive_revision(cp: ControlPlane, version: str) -> str | None:
    """The name of the FunctionRevision of ``version`` once Crossplane has unpacked it (its capabilities known)."""
    revisions = cp.client.get(
        f"{PKG}/functionrevisions", params={"labelSelector": f"pkg.crossplane.io/package={FUNCTION}"}
    )
    for revision in revisions.get("items", []):
        if str(revision["spec"].get("image", "")).endswith(f":{version}") and "composition" in (
            revision.get("status", {}).get("capabilities") or []
        ):
            return str(revision["metadata"]["name"])
    return None


def _revision_is(cp: ControlPlane, version: str) -> bool:
    function = cp.client.get(f"{PKG}/functions/{FUNCTION}")
    return (
        function.get("status", {}).get("currentIdentifier", "").endswith(f":{version}")
        and _conditions(function).get("Healthy") == "True"
    )


def _configuration_at(cp: ControlPlane, version: str) -> bool:
    configuration = cp.client.get(f"{PKG}/configurations/{CONFIGURATION}")
    conditions = _conditions(configuration)
    return (
        configuration.get("status", {}).get("currentIdentifier", "").endswith(f":{version}")
        and conditions.get("Healthy") == "True"
        and conditions.get("Installed") == "True"
    )


def _frontend_probes(obj: Obj) -> list[Any]:
    text = yaml.safe_dump(obj.get("spec") or {})
    if "dynamo.frontend" not in text:
        return []
    found = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            probe = node.get("livenessProbe")
            if (
                isinstance(probe, dict)
                and (probe.get("httpGet") or {}).get("path") == "/live"
                and (probe.get("httpGet") or {}).get("port") == "http"
            ):
                found.append(probe.get("initialDelaySeconds"))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(obj.get("spec"))
    return found


def _all_probes_at(composed: dict[Key, Obj], seconds: int) -> bool:
    probes = [p for obj in composed.values() for p in _frontend_probes(obj)]
    return bool(probes) and all(p == seconds for p in probes)
