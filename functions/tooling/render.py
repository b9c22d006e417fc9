"""``function-dynamo render``: a claim through its Composition's pipeline, in-process, printed as
``crossplane render`` prints it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from functions.tooling.admit_manifest import admit_manifest, refusal, served, with_namespace
from functions.tooling.manifests import ManifestError, as_xr, dump_documents, find_composition, load_documents
from functions.tooling.options import field_validation_option
from functions.tooling.pipeline import RenderError, render, render_nested
from functions.tooling.validation import FieldValidation

REPO_ROOT = Path(__file__).resolve().parents[2]


class Refused(Exception):
    """The API server would refuse the manifest; the message is kubectl's."""


def admitted(doc: dict[str, Any], field_validation: FieldValidation, *, claims: bool = False) -> dict[str, Any]:
    admission = admit_manifest(doc, field_validation=field_validation, claims=claims)
    for warning in admission.warnings:
        click.echo(f"Warning: {warning}", err=True)
    if admission.object is None:
        raise Refused(refusal(doc, admission))
    return admission.object


def admitted_xr(doc: Any, namespace: str, field_validation: FieldValidation, *, claims: bool = False) -> dict[str, Any]:
    """The XR the pipeline sees: the manifest as the API server stores it; a claim (the claims package, or a
    kind that keeps the claims shape) is then made into its XR, stored in turn."""
    if not served(doc):
        return as_xr(doc, namespace, claims=claims)  # raises ManifestError naming what is wrong
    doc = with_namespace(doc, namespace)
    stored = admitted(doc, field_validation, claims=claims)
    xr = as_xr(stored, namespace, claims=claims)
    return xr if xr is stored else admitted(xr, "Strict", claims=claims)


@click.command(name="render")
@click.argument("claim", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--claims",
    is_flag=True,
    help="As the claims package runs it: the manifest is a claim, rendered as the cluster-scoped XR Crossplane "
    "makes of it (package/claims/, compositions/claims/).",
)
@click.option(
    "--composition",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    show_default="compositions/ (claims/ within it holds the claims package's)",
    help="A Composition file, or a directory of them (the one for the manifest's kind is used).",
)
@click.option("-o", "--observed-resources", type=click.Path(exists=True, path_type=Path), default=None)
@click.option("-e", "--required-resources", type=click.Path(exists=True, path_type=Path), default=None)
@click.option("-r", "--include-function-results", is_flag=True, help="Also print the steps' results.")
@click.option("-x", "--include-full-xr", is_flag=True, help="Print the XR's spec and metadata too.")
@click.option("--namespace", default="default", show_default=True, help="Namespace of a claim that has none.")
@click.option("--print-xr", is_flag=True, help="Only print the XR built from the claim, then stop.")
@field_validation_option
@click.option(
    "--nested",
    is_flag=True,
    help="Also render the composites it composes (component deployments, scaling adapters) and print theirs.",
)
def render_cmd(
    claim: Path,
    claims: bool,
    composition: Path | None,
    observed_resources: Path | None,
    required_resources: Path | None,
    include_function_results: bool,
    include_full_xr: bool,
    namespace: str,
    print_xr: bool,
    field_validation: FieldValidation,
    nested: bool,
) -> None:
    """Render CLAIM (a manifest you would apply: a DGD, a DCD, ...) through its Composition's pipeline,
    in-process.

    First it admits CLAIM as the API server would (unknown fields, nulls, defaults, schema and CEL) and
    stops with kubectl's message when it would be refused. In the default package the manifest is the
    (namespaced) XR itself; with --claims it is a claim, and the XR Crossplane creates from it is admitted
    the same way. Prints the XR and the composed resources like `crossplane render`; with
    --nested, then each nested composite rendered in turn (its XR, then what it composes).
    """
    try:
        docs = load_documents(claim)
        if len(docs) != 1:
            raise ManifestError(f"{claim}: expected exactly one claim or XR, found {len(docs)} documents")
        xr = admitted_xr(docs[0], namespace, field_validation, claims=claims)
        if print_xr:
            click.echo(dump_documents([xr]), nl=False)
            return
        compositions = load_documents(composition or REPO_ROOT / "compositions")  # with compositions/claims/
        comp = find_composition(xr, compositions)
        observed = load_documents(observed_resources) if observed_resources else []
        required = load_documents(required_resources) if required_resources else []
        out = render(xr, comp, observed, required)
        admit_xr = lambda xr: admitted(xr, "Strict", claims=claims)  # noqa: E731
        children = render_nested(out, compositions, required, admit_xr) if nested else []
    except (ManifestError, RenderError) as err:
        click.echo(f"function-dynamo render: {err}", err=True)
        sys.exit(1)
    except Refused as refused:
        click.echo(str(refused), err=True)
        sys.exit(1)
    composite = out.composite
    if include_full_xr:
        composite = {**composite, "metadata": xr.get("metadata", {}), "spec": xr.get("spec", {})}
    docs_out = [composite, *out.composed, *(out.results if include_function_results else [])]
    for child in children:
        docs_out += [child.composite, *child.composed, *(child.results if include_function_results else [])]
    click.echo(dump_documents(docs_out), nl=False)
