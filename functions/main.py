"""Command line: ``serve`` the function, ``render`` a claim in-process, regenerate ``xrds``."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from crossplane.function import cli as sdkcli
from crossplane.function import logging, runtime

from functions.bench import bench
from functions.fn import FunctionRunner
from functions.manifests import ManifestError, as_xr, dump_documents, find_composition, load_documents
from functions.pipeline import RenderError, render, render_nested

REPO_ROOT = Path(__file__).resolve().parents[1]


@click.group()
def cli() -> None:
    """function-dynamo: the NVIDIA Dynamo operator as Crossplane composition functions."""


def allow_deep_messages() -> None:
    """Lift upb's recursion limit, so objects nested deeper than ~32 levels decode (they fail otherwise)."""
    from google.protobuf.internal import api_implementation

    module = getattr(api_implementation, "_c_module", None)
    if module is None or not hasattr(module, "SetAllowOversizeProtos"):
        raise click.UsageError("--allow-oversize-protos needs the upb protobuf backend")
    module.SetAllowOversizeProtos(True)


@cli.command()
@sdkcli.standard_options
@click.option(
    "--allow-oversize-protos",
    is_flag=True,
    envvar="ALLOW_OVERSIZE_PROTOS",
    help="Accept requests nested deeper than protobuf's default limit (about 32 levels of YAML).",
)
def serve(
    allow_oversize_protos: bool,
    debug: bool,
    address: str,
    tls_certs_dir: str | None,
    insecure: bool,
    max_recv_message_size: int,
    max_send_message_size: int | None,
) -> None:
    """Serve every pipeline step over gRPC (the Crossplane function spec)."""
    logging.configure(level=logging.Level.DEBUG if debug else logging.Level.INFO)
    if allow_oversize_protos:
        allow_deep_messages()
    if not insecure and not tls_certs_dir:
        raise click.UsageError("give --tls-certs-dir (or TLS_SERVER_CERTS_DIR) for mTLS, or --insecure")
    send = max_send_message_size or max_recv_message_size
    options = [
        ("grpc.max_receive_message_length", max_recv_message_size * 1024 * 1024),
        ("grpc.max_send_message_length", send * 1024 * 1024),
    ]
    try:
        # --insecure wins over certificates, and only plaintext is served: the SDK would bind a
        # TLS and a plaintext listener on the same port if given both.
        creds = None if insecure else runtime.load_credentials(tls_certs_dir)
        runtime.serve(FunctionRunner(), address, creds=creds, insecure=insecure, options=options)
    except Exception as exc:  # startup failures must not look like a clean exit
        click.echo(f"function-dynamo: cannot serve on {address}: {type(exc).__name__}: {exc}", err=True)
        sys.exit(1)


@cli.command(name="render")
@click.argument("claim", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--composition",
    type=click.Path(exists=True, path_type=Path),
    default=REPO_ROOT / "compositions",
    show_default="compositions/",
    help="A Composition file, or a directory of them (the one for the claim's kind is used).",
)
@click.option("-o", "--observed-resources", type=click.Path(exists=True, path_type=Path), default=None)
@click.option("-e", "--required-resources", type=click.Path(exists=True, path_type=Path), default=None)
@click.option("-r", "--include-function-results", is_flag=True, help="Also print the steps' results.")
@click.option("-x", "--include-full-xr", is_flag=True, help="Print the XR's spec and metadata too.")
@click.option("--namespace", default="default", show_default=True, help="Namespace of a claim that has none.")
@click.option("--print-xr", is_flag=True, help="Only print the XR built from the claim, then stop.")
@click.option(
    "--nested",
    is_flag=True,
    help="Also render the composites it composes (component deployments, scaling adapters) and print theirs.",
)
def render_cmd(
    claim: Path,
    composition: Path,
    observed_resources: Path | None,
    required_resources: Path | None,
    include_function_results: bool,
    include_full_xr: bool,
    namespace: str,
    print_xr: bool,
    nested: bool,
) -> None:
    """Render CLAIM (a claim or an XR) through its Composition's pipeline, in-process.

    Prints the XR and the composed resources like `crossplane render`; with --nested, then each nested
    composite rendered in turn (its XR, then what it composes).
    """
    try:
        docs = load_documents(claim)
        if len(docs) != 1:
            raise ManifestError(f"{claim}: expected exactly one claim or XR, found {len(docs)} documents")
        xr = as_xr(docs[0], namespace)
        if print_xr:
            click.echo(dump_documents([xr]), nl=False)
            return
        compositions = load_documents(composition)
        comp = find_composition(xr, compositions)
        observed = load_documents(observed_resources) if observed_resources else []
        required = load_documents(required_resources) if required_resources else []
        out = render(xr, comp, observed, required)
        children = render_nested(out, compositions, required) if nested else []
    except (ManifestError, RenderError) as err:
        click.echo(f"function-dynamo render: {err}", err=True)
        sys.exit(1)
    composite = out.composite
    if include_full_xr:
        composite = {**composite, "metadata": xr.get("metadata", {}), "spec": xr.get("spec", {})}
    docs_out = [composite, *out.composed, *(out.results if include_function_results else [])]
    for child in children:
        docs_out += [child.composite, *child.composed, *(child.results if include_function_results else [])]
    click.echo(dump_documents(docs_out), nl=False)


@cli.command(name="validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--old", type=click.Path(exists=True, path_type=Path), help="The previous version (checks an update).")
@click.option("--platform", type=click.Path(exists=True, path_type=Path), help="The dynamo-platform EnvironmentConfig.")
@click.option("-v", "--verbose", is_flag=True, help="Also list valid documents and notes.")
def validate_cmd(files: tuple[Path, ...], old: Path | None, platform: Path | None, verbose: bool) -> None:
    """Check FILES (claims or XRs, files or directories) as the cluster would: schema, CEL, function rules.

    Prints every violation with its field path and rule; exits 1 if there is any.
    """
    from functions.offline_validation import validate_files

    try:
        reports, skipped = validate_files(list(files), old, platform)
    except ManifestError as err:
        click.echo(f"function-dynamo validate: {err}", err=True)
        sys.exit(2)
    bad = [r for r in reports if not r.ok]
    for report in reports:
        if report.ok and not report.unsupported and not verbose:
            continue
        click.echo(f"{'FAIL' if not report.ok else 'ok  '} {report.where}")
        for line in report.violations:
            click.echo(f"  {line}")
        for line in report.unsupported:
            click.echo(f"  valid, but this package cannot render it yet: {line}")
        for line in report.notes if verbose else []:
            click.echo(f"  note: {line}")
    unsupported = sum(1 for r in reports if r.ok and r.unsupported)
    click.echo(
        f"{len(reports) - len(bad)} valid ({unsupported} not renderable yet), {len(bad)} invalid, "
        f"{skipped} other documents skipped"
    )
    if bad or not reports:
        sys.exit(1)


@cli.command()
@click.option("--out", type=click.Path(path_type=Path), default=REPO_ROOT / "xrds", show_default="xrds/")
@click.option(
    "--upstream-crds",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Upstream Dynamo CRDs (default: ../shared/upstream/crds beside the checkout).",
)
def xrds(out: Path, upstream_crds: Path | None) -> None:
    """Regenerate the XRDs from the API models."""
    from functions.api.kube_catalog import UpstreamCRDsMissing
    from functions.xrds import write_xrds

    try:
        for path in write_xrds(out, upstream_crds):
            click.echo(f"wrote {path}")
    except UpstreamCRDsMissing as err:
        click.echo(f"function-dynamo xrds: {err}", err=True)
        sys.exit(1)


cli.add_command(bench)

if __name__ == "__main__":
    cli()
