"""``migrate release --dry-run``: before anything moves, would moving each graph to this package restart a pod?

Each graph a person applied in the namespace is rendered in-process, as ``render`` does (with the required
resources given: the EnvironmentConfigs the package will read), and every composed workload that already runs is
applied to the cluster as a server-side dry run with conflicts forced, as Crossplane's apply will be; the live pod
templates are compared with the dry run's (``functions.tooling.migration_preview``). Nothing is written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from functions.tooling.data_dirs import COMPOSITIONS_DIR
from functions.tooling.kubectl import Kubectl, KubectlError, resource_of
from functions.tooling.manifests import ManifestError, load_documents
from functions.tooling.migration import applied_by_a_person, is_crossplane_xr, portable_manifest
from functions.tooling.migration_preview import GraphPreview, clashes, pod_templates, template_changes
from functions.tooling.pipeline import RenderError, composes_kind
from functions.tooling.render import Inputs, Refused, admitted_xr, render_xr

# The kinds whose composed objects run pods; the others (requests, models, checkpoints) hold none of their own.
PREVIEWED_KINDS = ("DynamoGraphDeployment", "DynamoComponentDeployment")
FIELD_MANAGER = "function-dynamo-migrate-dry-run"
SHOWN_REFUSAL = 300


def render_inputs(required_resources: Path | None) -> Inputs:
    return Inputs(
        compositions=load_documents(COMPOSITIONS_DIR),
        observed=[],
        required=load_documents(required_resources) if required_resources else [],
        claims=False,
        nested=True,
    )


def _as_applied(kubectl: Kubectl, obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` as the API server would store it once applied over the live object (a dry run: nothing is written).
    The owner reference to an XR that does not exist yet is left out: it changes no pod template."""
    body = {k: v for k, v in obj.items() if k != "status"}
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in ("ownerReferences", "generateName")}
    body["metadata"] = meta
    out = kubectl.run(
        [
            "apply",
            "--server-side",
            "--force-conflicts",
            "--dry-run=server",
            f"--field-manager={FIELD_MANAGER}",
            "-o",
            "json",
            "-f",
            "-",
        ],
        stdin=json.dumps(body),
    )
    return dict(json.loads(out))


def preview_graph(kubectl: Kubectl, obj: dict[str, Any], inputs: Inputs) -> GraphPreview:
    meta = obj["metadata"]
    namespace = meta["namespace"]
    preview = GraphPreview(f"{obj['kind']}/{namespace}/{meta['name']}")
    try:
        xr = admitted_xr(portable_manifest(obj), namespace, "Strict")
        outputs = render_xr(xr, [xr], inputs)
    except (ManifestError, RenderError) as err:
        preview.refused = str(err)[:SHOWN_REFUSAL]
        return preview
    except Refused as err:
        preview.refused = " ".join(line.strip() for line in str(err).strip().splitlines())[:SHOWN_REFUSAL]
        return preview
    for out in outputs:
        for composed in out.composed:
            if composes_kind(inputs.compositions, composed) is not None or not pod_templates(composed):
                continue  # a nested composite (rendered in turn), or an object that runs no pods
            label = f"{composed['kind']}/{composed['metadata']['name']}"
            live = kubectl.get(resource_of(composed), composed["metadata"]["name"], namespace)
            if live is None:
                preview.created.append(label)
                continue
            applied = _as_applied(kubectl, composed)
            changes = template_changes(live, applied)
            if changes:
                preview.changed[label] = changes
                if broken := clashes(applied):
                    preview.broken[label] = broken
            else:
                preview.unchanged.append(label)
    return preview


def preview_namespace(kubectl: Kubectl, namespace: str, inputs: Inputs) -> list[GraphPreview]:
    """A preview of each graph a person applied in ``namespace``; a note when the package runs them already."""
    graphs: list[dict[str, Any]] = []
    for kind in PREVIEWED_KINDS:
        try:
            graphs.extend(kubectl.items(f"{kind.lower()}s.nvidia.com", namespace) or [])
        except KubectlError as err:
            raise click.ClickException(f"{namespace}: cannot list {kind}s: {err.message}") from None
    ours = [g for g in graphs if is_crossplane_xr(g)]
    if ours:
        click.echo(
            f"{namespace}: {len(ours)} graph(s) run under this package already; moving them back to the operator "
            "cannot be previewed here (docs/migrate.md lists which graphs move back without a restart)",
            err=True,
        )
    mine = [g for g in graphs if applied_by_a_person(g) and not is_crossplane_xr(g)]
    return [preview_graph(kubectl, g, inputs) for g in sorted(mine, key=lambda g: (g["kind"], g["metadata"]["name"]))]
