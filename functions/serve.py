"""``function-dynamo serve``: every pipeline step over gRPC, as the Crossplane function spec asks."""

from __future__ import annotations

import sys

import click
from crossplane.function import cli as sdkcli
from crossplane.function import logging, runtime

from functions.fn import FunctionRunner


def allow_deep_messages() -> None:
    """Lift upb's recursion limit, so objects nested deeper than ~32 levels decode (they fail otherwise)."""
    from google.protobuf.internal import api_implementation

    module = getattr(api_implementation, "_c_module", None)
    if module is None or not hasattr(module, "SetAllowOversizeProtos"):
        raise click.UsageError("--allow-oversize-protos needs the upb protobuf backend")
    module.SetAllowOversizeProtos(True)


@click.command()
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


@click.group()
def runtime_cli() -> None:
    """function-dynamo's runtime image: it serves the pipeline steps; the tooling commands are not installed."""


runtime_cli.add_command(serve)
