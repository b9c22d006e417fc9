"""``function-dynamo render``: a claim through its Composition's pipeline, in-process, printed as
``crossplane render`` prints it."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from functions.api.echo import clipped, shown
from functions.tooling.admit_manifest import admit_manifest, refusal, served, with_namespace
from functions.tooling.data_dirs import COMPOSITIONS_DIR
from functions.tooling.documents import ManifestError, checked_objects, file_documents, source_name
from functions.tooling.hints import hints_for
from functions.tooling.input_bounds import InputRefused, check_object, check_request_depth
from functions.tooling.manifests import CLAIM_KINDS, as_xr, find_composition
from functions.tooling.options import field_validation_option, output_option
from functions.tooling.output import format_objects
from functions.tooling.pipeline import COMPOSITE_LABEL, RenderError, RenderOutput, render, render_nested
from functions.tooling.skipped import EMPTY_DOCUMENT, skipped_document
from functions.tooling.validation import FieldValidation
from functions.tooling.validation.cel import engine_missing

T = TypeVar("T")


class Refused(Exception):
    """The API server would refuse the manifest; the message is kubectl's."""


def admitted(doc: dict[str, Any], field_validation: FieldValidation, *, claims: bool = False) -> dict[str, Any]:
    admission = admit_manifest(doc, field_validation=field_validation, claims=claims)
    for warning in admission.warnings:
        click.echo(clipped(f"Warning: {warning}"), err=True)
    if admission.object is None:
        raise Refused(refusal(doc, admission))
    return admission.object


def admitted_xr(doc: Any, namespace: str, field_validation: FieldValidation, *, claims: bool = False) -> dict[str, Any]:
    """The XR the pipeline sees: the manifest as the API server stores it; a claim (the claims package, or a
    kind that keeps the claims shape) is then made into its XR, stored in turn. A namespaced XR is only read
    back at the referenceable version (the API server rewrites its apiVersion), which admits nothing again."""
    if not served(doc):
        return as_xr(doc, namespace, claims=claims)  # raises ManifestError naming what is wrong
    doc = with_namespace(doc, namespace)
    stored = admitted(doc, field_validation, claims=claims)
    xr = as_xr(stored, namespace, claims=claims)
    return xr if xr.get("kind") == stored.get("kind") else admitted(xr, "Strict", claims=claims)


@dataclass(frozen=True)
class Manifest:
    """A claim or XR of the file: ``where`` is ``FILE#index``, as validate names it."""

    where: str
    doc: dict[str, Any]

    @property
    def name(self) -> Any:
        return (self.doc.get("metadata") or {}).get("name") if isinstance(self.doc.get("metadata"), dict) else None


def manifests_in(path: Path, name: str | None) -> list[Manifest]:
    """The claims and XRs of ``path`` (a file, or - for standard input) in document order (only those named
    ``name`` if given); every other document is skipped with a note on stderr saying why (an empty one only when
    the file holds no claim or XR). A claim or XR protobuf cannot carry to the steps is an error naming the field
    (``check_request_depth``)."""
    docs = file_documents(path)
    found, skipped = [], []
    for doc in docs:
        if served(doc.value):
            try:
                check_request_depth(doc.value)
            except InputRefused as err:
                raise ManifestError(f"{doc.where}: {err}") from None
            found.append(Manifest(doc.where, doc.value))
        else:
            skipped.append(skipped_document(doc))
    for item in skipped:  # an empty document (a file ending in ---) is news only when nothing else is there
        if item.reason != EMPTY_DOCUMENT or not found:
            click.echo(clipped(f"function-dynamo render: skipped {item.describe()}"), err=True)
    chosen = [m for m in found if name is None or m.name == name]
    if chosen:
        return chosen
    file = source_name(path)
    if found:
        names = ", ".join(shown(str(m.name)) for m in found[:10])
        names += f", and {len(found) - 10} more" if len(found) > 10 else ""
        raise ManifestError(f"{file}: no claim or XR named {shown(repr(name))} (the file holds {names})")
    kinds = ", ".join(CLAIM_KINDS)
    other = f"{len(docs)} other document{'' if len(docs) == 1 else 's'} skipped" if docs else "it is empty"
    raise ManifestError(f"{file}: no claim or XR this package serves ({kinds}); {other}")


def observed_for(xr: dict[str, Any], observed: list[dict[str, Any]], xrs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The observed resources of ``xr``: all but those another XR of the same file composed (by their
    ``crossplane.io/composite`` label)."""
    own = (xr.get("metadata") or {}).get("name")
    others = {(x.get("metadata") or {}).get("name") for x in xrs} - {own}
    return [o for o in observed if ((o.get("metadata") or {}).get("labels") or {}).get(COMPOSITE_LABEL) not in others]


def hint(message: str) -> None:
    """The hints (``hints_for``) for a message already printed on stderr."""
    for line in hints_for(message, "render"):
        click.echo(f"hint: {line}", err=True)


def warn(outputs: list[RenderOutput], where: str, seen: set[str]) -> None:
    """Every warning the steps returned, once, on stderr (with -r they are printed among the results too)."""
    for result in (r for out in outputs for r in out.results if r["severity"] == "SEVERITY_WARNING"):
        message = f"{where}{result['message']}"
        if message not in seen:
            seen.add(message)
            click.echo(clipped(f"Warning: {message}"), err=True)
            hint(result["message"])


@click.command(name="render")
@click.argument("claim", type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path))
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
@click.option(
    "--observed-resources",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="The composed resources as Crossplane observes them (a file or a directory).",
)
@click.option(
    "-e",
    "--required-resources",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="Objects the steps look up: the operator config, a DynamoPlatform's EnvironmentConfig, existing PVCs, ...",
)
@click.option("--name", default=None, help="Render only the claim or XR of this name (a file may hold several).")
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
@output_option(hint="observed resources are given with --observed-resources FILE")
def render_cmd(
    claim: Path,
    claims: bool,
    composition: Path | None,
    observed_resources: Path | None,
    required_resources: Path | None,
    name: str | None,
    include_function_results: bool,
    include_full_xr: bool,
    namespace: str,
    print_xr: bool,
    field_validation: FieldValidation,
    nested: bool,
    output_format: str,
) -> None:
    """Render CLAIM (a manifest you would apply: a DGD, a DCD, ...) through its Composition's pipeline,
    in-process.

    First it admits CLAIM as the API server would (unknown fields, nulls, defaults, schema and CEL) and
    stops with kubectl's message when it would be refused. In the default package the manifest is the
    (namespaced) XR itself; with --claims it is a claim, and the XR Crossplane creates from it is admitted
    the same way. Prints the XR and the composed resources like `crossplane render`; with
    --nested, then each nested composite rendered in turn (its XR, then what it composes).

    CLAIM - reads standard input. A file of several documents renders each claim or XR in turn (--name picks
    one); other documents are skipped with a note on stderr saying their kind and why. The steps' warnings are
    printed on stderr, and so is a warning when no CEL engine is installed to check the CRDs' CEL rules.
    """
    missing = engine_missing()
    if missing:
        click.echo(f"Warning: {missing}", err=True)
    try:
        manifests = manifests_in(claim, name)
        several = len(manifests) > 1
        xrs = [
            _located(m.where, several, admitted_xr, m.doc, namespace, field_validation, claims=claims)
            for m in manifests
        ]
        if print_xr:
            click.echo(format_objects(xrs, output_format), nl=False)
            return
        inputs = Inputs(
            # with compositions/claims/; each Composition's step inputs travel in the requests
            compositions=checked_objects(composition or COMPOSITIONS_DIR, check_request_depth),
            # objects as a cluster holds them, sent to the steps
            observed=checked_objects(observed_resources, check_object) if observed_resources else [],
            required=checked_objects(required_resources, check_object) if required_resources else [],
            claims=claims,
            nested=nested,
        )
        objects: list[dict[str, Any]] = []
        seen: set[str] = set()
        for manifest, xr in zip(manifests, xrs, strict=True):
            outputs = _located(manifest.where, several, render_xr, xr, xrs, inputs)
            warn(outputs, f"{manifest.where}: " if several else "", seen)
            objects += printed(outputs, xr, include_full_xr, include_function_results)
    except (ManifestError, RenderError) as err:
        click.echo(clipped(f"function-dynamo render: {err}"), err=True)
        hint(clipped(str(err)))
        sys.exit(1)
    except Refused as refused:
        click.echo("\n".join(map(clipped, str(refused).split("\n"))), err=True)
        sys.exit(1)
    click.echo(format_objects(objects, output_format), nl=False)


@dataclass(frozen=True)
class Inputs:
    """What every manifest of the file is rendered with."""

    compositions: list[dict[str, Any]]
    observed: list[dict[str, Any]]
    required: list[dict[str, Any]]
    claims: bool
    nested: bool


def render_xr(xr: dict[str, Any], xrs: list[dict[str, Any]], inputs: Inputs) -> list[RenderOutput]:
    """The render of ``xr`` (one of the file's ``xrs``), then with --nested those of the composites it composes."""
    out = render(xr, find_composition(xr, inputs.compositions), observed_for(xr, inputs.observed, xrs), inputs.required)
    if not inputs.nested:
        return [out]
    admit = lambda nested_xr: admitted(nested_xr, "Strict", claims=inputs.claims)  # noqa: E731
    return [out, *render_nested(out, inputs.compositions, inputs.required, admit)]


def printed(outputs: list[RenderOutput], xr: dict[str, Any], full_xr: bool, results: bool) -> list[dict[str, Any]]:
    """The objects printed for one manifest: each render's XR (with -x the first one's spec and metadata too),
    its composed resources, and with -r its results."""
    first, *children = outputs
    if full_xr:
        composite = {**first.composite, "metadata": xr.get("metadata", {}), "spec": xr.get("spec", {})}
        first = dataclasses.replace(first, composite=composite)
    objects: list[dict[str, Any]] = []
    for out in (first, *children):
        objects += [out.composite, *out.composed, *(out.results if results else [])]
    return objects


def _located(where: str, several: bool, step: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``step(*args, **kwargs)``; when the file holds several manifests its errors name the document."""
    try:
        return step(*args, **kwargs)
    except (ManifestError, RenderError) as err:
        if not several:
            raise
        raise type(err)(f"{where}: {err}") from None
