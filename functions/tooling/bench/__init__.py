"""``function-dynamo bench``: latency, throughput and memory of the real gRPC server.

It starts ``function-dynamo serve`` as a subprocess on a loopback port and sends it
RunFunction requests formed as Crossplane forms them (observed composite = the XR of a
DynamoGraphDeployment claim, the step's input, the capabilities, and the bootstrap required
resource ``platform`` with nothing matched). The cases are the smallest, a typical (median)
and the largest corpus DynamoGraphDeployment by request size, among those that render without
a Fatal result, plus a synthetic 25-component graph. Each case is also sent with the ``Noop``
step's input: the same request through the same server, doing nothing. That is the floor, the
cost of gRPC, protobuf and the request conversion, and the render is reported as a ratio to it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from functions.tooling.bench.cases import all_cases
from functions.tooling.bench.measure import bench_cases
from functions.tooling.bench.model import DEFAULT_CORPUS, Settings
from functions.tooling.bench.report import as_json, format_table, machine_facts
from functions.tooling.bench.server import proc_status_mb, running_server


@click.command()
@click.option(
    "--corpus",
    type=click.Path(path_type=Path),
    default=DEFAULT_CORPUS,
    show_default="../shared/corpus beside the checkout",
    help="The upstream Dynamo example manifests to pick the corpus cases from.",
)
@click.option(
    "--requests",
    type=click.IntRange(min=1),
    default=500,
    show_default=True,
    help="Requests per case, step and concurrency level.",
)
@click.option(
    "--warmup",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="Unmeasured requests per case and step first.",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0.1),
    default=60.0,
    show_default=True,
    help="Seconds at most per measurement; one that runs out stops early (marked *).",
)
@click.option("--json", "as_json_output", is_flag=True, help="Print the figures as JSON.")
def bench(corpus: Path, requests: int, warmup: int, time_limit: float, as_json_output: bool) -> None:
    """Benchmark the real server: latency, throughput and peak RSS, render versus the no-op floor."""
    settings = Settings(requests=requests, warmup=warmup, time_limit=time_limit)
    cases = all_cases(corpus)
    machine = machine_facts()
    with running_server() as server:
        idle_rss = proc_status_mb(server.pid, "VmRSS")
        results = asyncio.run(bench_cases(server, cases, settings))
    output = as_json if as_json_output else format_table
    click.echo(output(results, machine, settings, idle_rss))
