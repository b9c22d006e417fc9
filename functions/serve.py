"""``function-dynamo serve``: every pipeline step over gRPC, as the Crossplane function spec asks."""

from __future__ import annotations

import asyncio
import gc
import signal
import sys
from typing import Any

import click
import grpc
from crossplane.function import cli as sdkcli
from crossplane.function import logging, response, runtime
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from crossplane.function.proto.v1beta1 import run_function_pb2_grpc as grpcv1beta1
from grpc_reflection.v1alpha import reflection

from functions.fn import run
from functions.kinds import build_models


class FunctionRunner(grpcv1.FunctionRunnerServiceServicer):
    """The servicer registered by ``crossplane.function.runtime.serve``: ``functions.fn.run`` on the wire."""

    def __init__(self) -> None:
        build_models()  # before any request, not during the first one
        # Everything imported so far lives as long as the process: move it out of the garbage
        # collector's sight, so that the collections a render triggers don't walk it (p99 latency).
        gc.freeze()

    async def RunFunction(
        self, req: fnv1.RunFunctionRequest, _: grpc.aio.ServicerContext | None = None
    ) -> fnv1.RunFunctionResponse:
        try:
            return run(req)
        except Exception as exc:  # a bug must become a Fatal result, never a dropped connection
            rsp = response.to(req)
            response.fatal(rsp, f"internal error in function-dynamo: {type(exc).__name__}: {exc}")
            return rsp


def allow_deep_messages() -> None:
    """Lift upb's recursion limit, so objects nested deeper than ~32 levels decode (they fail otherwise)."""
    from google.protobuf.internal import api_implementation

    module = getattr(api_implementation, "_c_module", None)
    if module is None or not hasattr(module, "SetAllowOversizeProtos"):
        raise click.UsageError("--allow-oversize-protos needs the upb protobuf backend")
    module.SetAllowOversizeProtos(True)


class CannotBind(RuntimeError):
    """gRPC could not listen on the address: it is in use, or not one of this host's."""


def listen(
    runner: FunctionRunner, address: str, creds: grpc.ServerCredentials | None, options: list[tuple[str, Any]], tls: str
) -> None:
    """Serve ``runner`` on ``address`` until SIGTERM: the v1 and v1beta1 services and reflection, as the SDK's
    ``runtime.serve`` does, but the address bound before anything else, and where and how it listens logged once
    then. ``creds`` None: plaintext only."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)  # the server and its signal handler on one loop
    server = grpc.aio.server(options=options)
    grpcv1.add_FunctionRunnerServiceServicer_to_server(runner, server)
    grpcv1beta1.add_FunctionRunnerServiceServicer_to_server(runtime.BetaFunctionRunner(wrapped=runner), server)
    reflection.enable_server_reflection(runtime.SERVICE_NAMES, server)
    try:
        if creds is None:
            server.add_insecure_port(address)
        else:
            server.add_secure_port(address, creds)
    except RuntimeError as exc:
        loop.close()
        raise CannotBind(str(exc)) from None
    logging.get_logger().info(f"listening on {address} with {tls}", address=address, tls=tls)
    loop.add_signal_handler(
        signal.SIGTERM, lambda: asyncio.ensure_future(server.stop(grace=runtime.SHUTDOWN_GRACE_PERIOD_SECONDS))
    )

    async def until_stopped() -> None:
        await server.start()
        await server.wait_for_termination()

    try:
        loop.run_until_complete(until_stopped())
    finally:
        loop.run_until_complete(server.stop(grace=runtime.SHUTDOWN_GRACE_PERIOD_SECONDS))
        loop.close()


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
    options: list[tuple[str, Any]] = [
        ("grpc.max_receive_message_length", max_recv_message_size * 1024 * 1024),
        ("grpc.max_send_message_length", send * 1024 * 1024),
        # gRPC sets SO_REUSEPORT by default: a second server on a port in use would bind beside the first, the
        # kernel would share connections between them, and neither would say so.
        ("grpc.so_reuseport", 0),
    ]
    try:
        # --insecure wins over certificates, and only plaintext is served: the SDK would bind a
        # TLS and a plaintext listener on the same port if given both.
        creds = None if insecure else runtime.load_credentials(tls_certs_dir)
        tls = "insecure plaintext (no TLS)" if insecure else f"mTLS (certificates and CA from {tls_certs_dir})"
        listen(FunctionRunner(), address, creds, options, tls)
    except CannotBind as exc:
        click.echo(
            f"function-dynamo: cannot serve on {address}: the address is in use (by another server: port reuse "
            f"is off) or is not this host's ({exc})",
            err=True,
        )
        sys.exit(1)
    except Exception as exc:  # startup failures must not look like a clean exit
        click.echo(f"function-dynamo: cannot serve on {address}: {type(exc).__name__}: {exc}", err=True)
        sys.exit(1)


@click.group()
def runtime_cli() -> None:
    """function-dynamo's runtime image: it serves the pipeline steps; the tooling commands are not installed."""


runtime_cli.add_command(serve)
