"""``function-dynamo migrate``: move running graphs between the upstream operator and this package (docs/migrate.md).

``check`` refuses (exit 1) while the upstream operator's CRDs are installed; ``release`` lets go of a namespace's
graphs, keeping everything they run; ``verify`` proves the other side took the same objects over. The rules are
``functions.tooling.migration``; this module is kubectl calls and what a person reads.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click
import yaml

from functions.tooling.kubectl import Kubectl, KubectlError, resource_of
from functions.tooling.migrate_dry_run import preview_namespace, render_inputs
from functions.tooling.migration import (
    CRDS,
    OPERATOR_FINALIZER,
    OWNER_KINDS,
    PAUSED,
    RESOURCES,
    Held,
    applied_by_a_person,
    conflicts,
    crd_is_from_package,
    detach_patch,
    dynamo_owners,
    held,
    is_crossplane_xr,
    portable_manifest,
    verdict,
)

GRAPHS_FILE = "graphs.yaml"
HELD_FILE = "held.json"
DETACH_ROUNDS = 3


def _progress(message: str) -> None:
    click.echo(message, err=True)


kubectl_options = [
    click.option("--kubectl", "kubectl_binary", default="kubectl", show_default=True, help="The kubectl to run."),
    click.option("--context", default=None, help="The kubeconfig context (default: kubectl's current one)."),
]


def _with_kubectl(f: Any) -> Any:
    for option in reversed(kubectl_options):
        f = option(f)
    return f


@click.group()
def migrate() -> None:
    """Move running graphs between the upstream Dynamo operator and this package, pods untouched.

    \b
    The procedure, both ways, is docs/migrate.md:
      check    before installing the package: is the upstream operator's API still installed?
      release  let go of a namespace's graphs: their manifests saved, their workloads kept and unowned
      verify   after the other side applied the manifests: same objects (UIDs), same specs, new owner
    """


@migrate.command()
@_with_kubectl
def check(kubectl_binary: str, context: str | None) -> None:
    """Exit 1, naming what to do, while a Dynamo CRD is installed that is not this package's.

    Crossplane would take such a CRD over (its XRD controller adopts a CRD nobody controls) and serve the
    operator's graphs with this package's API while the operator still runs them."""
    kubectl = Kubectl(kubectl_binary, context)
    crds = (kubectl.json(["get", "customresourcedefinitions"]) or {}).get("items") or []
    ours = [c["metadata"]["name"] for c in crds if c["metadata"]["name"] in CRDS and crd_is_from_package(c)]
    objects = {}
    for crd in crds:
        name = crd["metadata"]["name"]
        if name in CRDS and not crd_is_from_package(crd):
            try:
                objects[name] = kubectl.items(name) or []
            except KubectlError as err:  # e.g. a conversion webhook whose operator is stopped
                _progress(f"warning: cannot list {name}: {err.message}")
    found = conflicts(crds, objects)
    if not found:
        where = f" ({len(ours)} of them this package's)" if ours else ""
        click.echo(f"ok: no Dynamo CRD of another installation{where}")
        return
    lines = [
        f"  {c.crd}: {c.objects} object(s), {c.operator_managed} with the operator's finalizer {OPERATOR_FINALIZER}"
        for c in found
    ]
    raise click.ClickException(
        "the upstream Dynamo operator's CRDs are installed:\n"
        + "\n".join(lines)
        + "\nInstalling this package now would take these CRDs over while the operator runs their graphs. "
        "Stop the operator and run `function-dynamo migrate release` for each namespace with graphs, then delete "
        "these CRDs (docs/migrate.md); or, with no graphs to keep, uninstall the operator and its CRDs."
    )


def _dynamo_objects(kubectl: Kubectl, namespace: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for resource in RESOURCES:
        out.extend(kubectl.items(resource, namespace) or [])
    return out


def _namespaced_resources(kubectl: Kubectl) -> list[str]:
    names = kubectl.run(["api-resources", "--verbs=list,patch", "--namespaced", "-o", "name"]).split()
    return sorted(n for n in names if n not in RESOURCES and n != "events" and n != "events.events.k8s.io")


def _owned_objects(kubectl: Kubectl, namespace: str, resources: list[str]) -> list[dict[str, Any]]:
    """Every object in ``namespace`` with an ownerReference to a Dynamo object (Dynamo objects left out)."""
    try:
        items = (kubectl.json(["get", ",".join(resources), "-n", namespace]) or {}).get("items") or []
    except KubectlError:
        items = []  # one type that cannot be listed fails the lot: list them one by one
        for resource in resources:
            try:
                items.extend(kubectl.items(resource, namespace) or [])
            except KubectlError as err:
                _progress(f"warning: {namespace}: cannot list {resource}: {err.message}")
    return [o for o in items if dynamo_owners(o) and o.get("kind") not in OWNER_KINDS]


def _patch(kubectl: Kubectl, obj: dict[str, Any], kind: str, patch: Any) -> None:
    meta = obj["metadata"]
    kubectl.run(
        ["patch", resource_of(obj), meta["name"], "-n", meta["namespace"], f"--type={kind}", "-p", json.dumps(patch)]
    )


@migrate.command()
@click.option("--namespace", "-n", "namespaces", multiple=True, required=True, help="A namespace with graphs (repeat).")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help=f"Where to write {GRAPHS_FILE} (the manifests to apply on the other side) and {HELD_FILE} (for verify).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Change nothing: say, per graph the upstream operator runs, whether moving it to this package would "
    "change a pod template (restart pods), where and why. Exit 1 if one would.",
)
@click.option(
    "-e",
    "--required-resources",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="With --dry-run: what the package's steps will read (the EnvironmentConfigs you will install, such as "
    "dynamo-platform holding the operator's configuration); default: the package's defaults.",
)
@_with_kubectl
def release(
    namespaces: tuple[str, ...],
    out_dir: Path | None,
    dry_run: bool,
    required_resources: Path | None,
    kubectl_binary: str,
    context: str | None,
) -> None:
    """Let go of the graphs in the namespaces, keeping what they run.

    Pauses this package's XRs, writes the manifests a person applied, removes every ownerReference to a
    Dynamo object from the namespaces' objects, then deletes the Dynamo objects (their finalizers removed,
    orphaning). Stop the upstream operator first when leaving it. Run it with --dry-run first, the operator
    still running: it says which graphs would restart."""
    kubectl = Kubectl(kubectl_binary, context)
    if dry_run:
        _dry_run(kubectl, namespaces, required_resources)
        return
    if out_dir is None:
        raise click.UsageError("--out is required (unless --dry-run)")
    out_dir.mkdir(parents=True, exist_ok=True)
    resources = _namespaced_resources(kubectl)
    manifests: list[dict[str, Any]] = []
    inventory: list[Held] = []
    for namespace in namespaces:
        dynamo = _dynamo_objects(kubectl, namespace)
        xrs = [o for o in dynamo if is_crossplane_xr(o)]
        for xr in xrs:
            _patch(kubectl, xr, "merge", {"metadata": {"annotations": {PAUSED: "true"}}})
        if xrs:
            _progress(f"{namespace}: paused {len(xrs)} Crossplane XR(s)")
        mine = sorted((o for o in dynamo if applied_by_a_person(o)), key=lambda o: (o["kind"], o["metadata"]["name"]))
        manifests.extend(portable_manifest(o) for o in mine)
        owned = _owned_objects(kubectl, namespace, resources)
        inventory.extend(held(o) for o in owned)
        for round_ in range(DETACH_ROUNDS):
            for obj in owned:
                patch = detach_patch(obj)
                if patch is not None:
                    _patch(kubectl, obj, "json", patch)
            owned = _owned_objects(kubectl, namespace, resources)  # a reconcile under way may have put one back
            if not owned:
                break
            _progress(f"{namespace}: {len(owned)} object(s) owned again; detaching once more ({round_ + 2})")
        if owned:
            raise click.ClickException(
                f"{namespace}: {', '.join(o['kind'] + '/' + o['metadata']['name'] for o in owned)} keep(s) getting "
                "an owner back: is the upstream operator still running?"
            )
        _progress(f"{namespace}: {len(inventory)} object(s) detached so far; their graphs: {len(mine)}")
        for obj in dynamo:
            meta = obj["metadata"]
            if meta.get("finalizers"):
                _patch(kubectl, obj, "merge", {"metadata": {"finalizers": None}})
            kubectl.run(
                ["delete", resource_of(obj), meta["name"], "-n", namespace, "--cascade=orphan", "--ignore-not-found"]
            )
        _progress(f"{namespace}: deleted {len(dynamo)} Dynamo object(s), orphaning what they owned")
    (out_dir / GRAPHS_FILE).write_text(yaml.safe_dump_all(manifests, sort_keys=False))
    (out_dir / HELD_FILE).write_text(json.dumps([h.as_dict() for h in inventory], indent=2, sort_keys=True) + "\n")
    click.echo(f"released {len(manifests)} graph object(s) and kept {len(inventory)} object(s) they ran")
    click.echo(f"  {out_dir / GRAPHS_FILE}: apply it once the other side's API is installed")
    click.echo(f"  then: function-dynamo migrate verify --out {out_dir} --adopted")


def _dry_run(kubectl: Kubectl, namespaces: tuple[str, ...], required_resources: Path | None) -> None:
    inputs = render_inputs(required_resources)
    if required_resources is None:
        _progress("rendering with the package's defaults: pass -e FILE with the EnvironmentConfigs you will install")
    previews = [p for namespace in namespaces for p in preview_namespace(kubectl, namespace, inputs)]
    for preview in previews:
        click.echo("\n".join(preview.lines()))
    restarting = [p for p in previews if p.restarts]
    if restarting:
        raise click.ClickException(
            f"{len(restarting)} of {len(previews)} graph(s) would restart pods if moved now (see above); "
            "the others move without a restart"
        )
    click.echo(f"ok: {len(previews)} graph(s) move without a restart")


@migrate.command()
@click.option("--out", "out_dir", type=click.Path(file_okay=False, exists=True, path_type=Path), required=True,
              help=f"The directory `release` wrote ({HELD_FILE}).")  # fmt: skip
@click.option("--adopted", is_flag=True, help="Also require each object to have a Dynamo controller again.")
@click.option("--wait", "wait_seconds", type=float, default=120.0, show_default=True,
              help="Seconds to wait for the objects to be adopted.")  # fmt: skip
@_with_kubectl
def verify(out_dir: Path, adopted: bool, wait_seconds: float, kubectl_binary: str, context: str | None) -> None:
    """Check that each object `release` kept is the same object (UID) with the same spec (so no pod rolled),
    and with --adopted, that a Dynamo object controls it again. Exit 1 naming any that is not."""
    kubectl = Kubectl(kubectl_binary, context)
    before = [Held.from_dict(d) for d in json.loads((out_dir / HELD_FILE).read_text())]
    deadline = time.monotonic() + wait_seconds
    while True:
        verdicts = []
        for h in before:
            obj = {"apiVersion": h.api_version, "kind": h.kind}
            verdicts.append(verdict(h, kubectl.get(resource_of(obj), h.name, h.namespace)))
        waiting = [v for v in verdicts if v.kept and adopted and not v.owner]
        if not waiting or time.monotonic() > deadline:
            break
        _progress(f"waiting for {len(waiting)} object(s) to be adopted")
        time.sleep(2)
    for v in verdicts:
        state = v.problem or (f"kept, controlled by {v.owner}" if v.owner else "kept, no Dynamo owner")
        click.echo(f"{v.before.kind}/{v.before.namespace}/{v.before.name} uid={v.before.uid}: {state}")
    bad = [v for v in verdicts if not v.kept or (adopted and not v.owner)]
    if bad:
        raise click.ClickException(f"{len(bad)} of {len(verdicts)} object(s) not kept as they were or not adopted")
    click.echo(f"ok: {len(verdicts)} object(s) kept with their UIDs and specs")
