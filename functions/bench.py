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
import contextlib
import json
import math
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import IO, Any

import click
import grpc
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from functions.api.platform import PLATFORM_REQUIREMENT
from functions.fn import run
from functions.manifests import ManifestError, claim_to_xr
from functions.pipeline import CAPABILITIES
from functions.steps import INPUT_API_VERSION

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "corpus"
METHOD = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"
RENDER_KIND = "GraphDeployment"
FLOOR_KIND = "Noop"
CONCURRENCY = (1, 16)
SYNTHETIC_COMPONENTS = 25
SYNTHETIC_IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0"
SERVER_START_SECONDS = 30.0
CALL_TIMEOUT_SECONDS = 30.0
MIB = 1024 * 1024


class BenchError(click.ClickException):
    """The benchmark cannot run (no corpus, no rendering DGD, a server that does not start)."""


@dataclass(frozen=True)
class Case:
    """One benchmarked request: the render step's and the floor's serialized RunFunctionRequest."""

    name: str
    source: str
    render: bytes
    floor: bytes


@dataclass(frozen=True)
class Settings:
    requests: int
    warmup: int
    time_limit: float


@dataclass(frozen=True)
class Figures:
    """One step of one case: latency percentiles at concurrency 1, throughputs, peak server RSS."""

    requests: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    rps: dict[int, float]  # concurrency -> requests per second
    peak_rss_mb: float | None
    cut_short: bool  # the time limit ended a measurement before its request count


# --- requests ---------------------------------------------------------------------------------


def run_function_request(xr: dict[str, Any], kind: str) -> fnv1.RunFunctionRequest:
    """The request Crossplane sends the first pipeline step for ``xr``."""
    req = fnv1.RunFunctionRequest()
    req.meta.tag = "function-dynamo-bench"
    req.meta.capabilities.extend(CAPABILITIES)
    req.observed.composite.resource.update(xr)
    req.input.update({"apiVersion": INPUT_API_VERSION, "kind": kind})
    # The Composition's bootstrap requirement; no EnvironmentConfig matches it, so it is empty.
    req.required_resources[PLATFORM_REQUIREMENT].CopyFrom(fnv1.Resources())
    return req


def renders(req: fnv1.RunFunctionRequest) -> bool:
    """The request renders composed resources without a Fatal result."""
    rsp = run(req)
    return bool(rsp.desired.resources) and not any(r.severity == fnv1.SEVERITY_FATAL for r in rsp.results)


def make_case(name: str, source: str, xr: dict[str, Any]) -> Case:
    return Case(
        name=name,
        source=source,
        render=run_function_request(xr, RENDER_KIND).SerializeToString(deterministic=True),
        floor=run_function_request(xr, FLOOR_KIND).SerializeToString(deterministic=True),
    )


# --- cases ------------------------------------------------------------------------------------


def corpus_dgds(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """(file#index, document) for every DynamoGraphDeployment in the corpus."""
    if not root.is_dir():
        raise BenchError(
            f"corpus not found at {root}: pass --corpus DIR, the upstream Dynamo example manifests "
            "(shared/corpus beside the checkout)"
        )
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out = []
    for path in sorted(root.rglob("*.yaml")):
        try:
            docs = [d for d in yaml.load_all(path.read_text(encoding="utf-8"), Loader=loader) if d]
        except yaml.YAMLError:
            continue
        for i, doc in enumerate(docs):
            if is_dgd(doc):
                out.append((f"{path.relative_to(root)}#{i}", doc))
    return out


def is_dgd(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and doc.get("kind") == "DynamoGraphDeployment"
        and str(doc.get("apiVersion", "")).startswith("nvidia.com/")
    )


def rendering_cases(root: Path) -> list[Case]:
    """A case for every corpus DGD that renders, ordered by request size (then source)."""
    cases = []
    for source, doc in corpus_dgds(root):
        try:
            xr = claim_to_xr(doc)
        except ManifestError:
            continue
        if renders(run_function_request(xr, RENDER_KIND)):
            cases.append(make_case(source, source, xr))
    if not cases:
        raise BenchError(f"no DynamoGraphDeployment in {root} renders without a Fatal result")
    return sorted(cases, key=lambda c: (len(c.render), c.source))


def corpus_cases(root: Path) -> list[Case]:
    """The smallest, the median and the largest rendering corpus DGD by serialized request size."""
    ordered = rendering_cases(root)
    picks = {"smallest": ordered[0], "typical": ordered[(len(ordered) - 1) // 2], "largest": ordered[-1]}
    return [replace(case, name=name) for name, case in picks.items()]


def synthetic_component(index: int) -> dict[str, Any]:
    """A disaggregated vLLM worker, as the corpus writes them, alternating prefill and decode."""
    role = ("prefill", "decode")[index % 2]
    main = {
        "name": "main",
        "image": SYNTHETIC_IMAGE,
        "command": ["python3", "-m", "dynamo.vllm"],
        "args": ["--model", "Qwen/Qwen3-0.6B", "--disaggregation-mode", role, "--tensor-parallel-size", "1"],
        "env": [{"name": "DYN_LOG", "value": "info"}, {"name": "WORKER_INDEX", "value": str(index)}],
        "envFrom": [{"secretRef": {"name": "hf-token-secret"}}],
        "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"cpu": "4", "memory": "16Gi"}},
        "workingDir": "/workspace/examples/backends/vllm",
    }
    return {
        "name": f"{role}{index:02d}",
        "type": role,
        "replicas": 1 + index % 3,
        "podTemplate": {"spec": {"containers": [main]}},
    }


def synthetic_dgd(components: int = SYNTHETIC_COMPONENTS) -> dict[str, Any]:
    """A v1beta1 DGD with a frontend and ``components - 1`` workers (25 is the API's maximum)."""
    frontend = {
        "name": "Frontend",
        "type": "frontend",
        "replicas": 2,
        "podTemplate": {"spec": {"containers": [{"name": "main", "image": SYNTHETIC_IMAGE}]}},
    }
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "bench-synthetic", "namespace": "bench"},
        "spec": {
            "backendFramework": "vllm",
            "env": [{"name": "DYN_NAMESPACE_PREFIX", "value": "bench"}],
            "components": [frontend, *(synthetic_component(i) for i in range(components - 1))],
        },
    }


def synthetic_case(grove: bool = True) -> Case:
    """The synthetic DGD; with ``grove=False`` on the component pathway (one nested DCD per component)."""
    claim = synthetic_dgd()
    name, source = f"synthetic-{SYNTHETIC_COMPONENTS}", f"synthetic, {SYNTHETIC_COMPONENTS} components"
    if not grove:
        claim["metadata"]["annotations"] = {"nvidia.com/enable-grove": "false"}
        name, source = f"{name}-no-grove", f"{source}, component pathway"
    xr = claim_to_xr(claim)
    if not renders(run_function_request(xr, RENDER_KIND)):
        raise BenchError("the synthetic DGD does not render (a bug in the benchmark or in the render)")
    return make_case(name, source, xr)


def all_cases(corpus: Path) -> list[Case]:
    return [*corpus_cases(corpus), synthetic_case(), synthetic_case(grove=False)]


# --- the server -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    address: str
    pid: int


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(proc: subprocess.Popen[bytes], address: str, log: IO[bytes]) -> None:
    deadline = time.monotonic() + SERVER_START_SECONDS
    while True:
        if proc.poll() is not None:
            log.seek(0)
            raise BenchError(f"the server exited with {proc.returncode}: {log.read().decode(errors='replace')}")
        with grpc.insecure_channel(address) as channel:
            try:
                grpc.channel_ready_future(channel).result(timeout=0.5)
                return
            except grpc.FutureTimeoutError:
                if time.monotonic() > deadline:
                    raise BenchError(
                        f"the server on {address} was not ready after {SERVER_START_SECONDS:.0f}s"
                    ) from None


@contextlib.contextmanager
def running_server() -> Iterator[Server]:
    """``function-dynamo serve --insecure`` on a free loopback port, for the duration of the block."""
    address = f"127.0.0.1:{free_port()}"
    command = [sys.executable, "-m", "functions.main", "serve", "--insecure", "--address", address]
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(command, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_ready(proc, address, log)
            yield Server(address=address, pid=proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def proc_status_mb(pid: int, field: str) -> float | None:
    """A ``kB`` field of /proc/<pid>/status (VmHWM: peak RSS, VmRSS: current RSS) in MiB."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return None


def reset_peak_rss(pid: int) -> bool:
    """Reset the process' VmHWM to its current RSS (Linux >= 4.0); False where not allowed."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


# --- measuring --------------------------------------------------------------------------------


def percentile(sorted_values: list[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, math.ceil(pct / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def check_response(raw: bytes, kind: str) -> None:
    rsp = fnv1.RunFunctionResponse.FromString(raw)
    fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    if fatal:
        raise BenchError(f"{kind}: the server returned a Fatal result: {fatal[0]}")
    if kind == RENDER_KIND and not rsp.desired.resources:
        raise BenchError(f"{kind}: the server rendered no resources")


async def drive(
    call: grpc.aio.UnaryUnaryMultiCallable, payload: bytes, concurrency: int, settings: Settings
) -> tuple[list[float], float, bool]:
    """Send ``settings.requests`` requests from ``concurrency`` callers; (latencies, wall seconds, cut short)."""
    latencies: list[float] = []
    remaining = settings.requests
    deadline = time.perf_counter() + settings.time_limit

    async def caller() -> None:
        nonlocal remaining
        while remaining > 0 and time.perf_counter() < deadline:
            remaining -= 1
            start = time.perf_counter()
            await call(payload, timeout=CALL_TIMEOUT_SECONDS)
            latencies.append(time.perf_counter() - start)

    start = time.perf_counter()
    await asyncio.gather(*(caller() for _ in range(concurrency)))
    return latencies, time.perf_counter() - start, remaining > 0


async def measure(
    call: grpc.aio.UnaryUnaryMultiCallable, payload: bytes, kind: str, pid: int, settings: Settings
) -> Figures:
    check_response(await call(payload, timeout=CALL_TIMEOUT_SECONDS), kind)
    for _ in range(settings.warmup):
        await call(payload, timeout=CALL_TIMEOUT_SECONDS)
    reset_peak_rss(pid)
    rps: dict[int, float] = {}
    cut_short = False
    latencies: list[float] = []
    for concurrency in CONCURRENCY:
        got, seconds, short = await drive(call, payload, concurrency, settings)
        rps[concurrency] = len(got) / seconds if seconds > 0 else 0.0
        cut_short = cut_short or short
        if concurrency == 1:
            latencies = sorted(got)
    return Figures(
        requests=len(latencies),
        p50_ms=percentile(latencies, 50) * 1000,
        p95_ms=percentile(latencies, 95) * 1000,
        p99_ms=percentile(latencies, 99) * 1000,
        rps=rps,
        peak_rss_mb=proc_status_mb(pid, "VmHWM"),
        cut_short=cut_short,
    )


@dataclass(frozen=True)
class CaseResult:
    case: Case
    render: Figures
    floor: Figures

    def ratio(self, attr: str) -> float:
        return getattr(self.render, attr) / getattr(self.floor, attr)


async def bench_cases(server: Server, cases: list[Case], settings: Settings) -> list[CaseResult]:
    # Raw bytes both ways (no serializers): the client does as little as possible.
    async with grpc.aio.insecure_channel(server.address) as channel:
        call = channel.unary_unary(METHOD)
        results = []
        for case in cases:
            floor = await measure(call, case.floor, FLOOR_KIND, server.pid, settings)
            render = await measure(call, case.render, RENDER_KIND, server.pid, settings)
            results.append(CaseResult(case=case, render=render, floor=floor))
        return results


# --- reporting --------------------------------------------------------------------------------


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def memory_gib() -> float | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / MIB, 1)
    return None


def machine_facts() -> dict[str, Any]:
    from google.protobuf.internal import api_implementation

    return {
        "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu_model": cpu_model(),
        "memory_gib": memory_gib(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "grpcio": grpc.__version__,
        "protobuf": metadata.version("protobuf"),
        "protobuf_backend": api_implementation.Type(),
    }


def _rss(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def figures_row(name: str, step: str, size: int, fig: Figures, ratios: tuple[str, str]) -> str:
    mark = "*" if fig.cut_short else " "
    return (
        f"{name:<21} {step:<7} {size / 1024:>8.1f} {fig.requests:>5}{mark} {fig.p50_ms:>7.2f} {fig.p95_ms:>7.2f} "
        f"{fig.p99_ms:>7.2f} {fig.rps[1]:>8.0f} {fig.rps[16]:>9.0f} {_rss(fig.peak_rss_mb):>8} "
        f"{ratios[0]:>6} {ratios[1]:>6}"
    )


HEADER = (
    f"{'case':<21} {'step':<7} {'req KiB':>8} {'n':>6} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} "
    f"{'rps c=1':>8} {'rps c=16':>9} {'RSS MiB':>8} {'p50 x':>6} {'p99 x':>6}"
)


def format_table(results: list[CaseResult], machine: dict[str, Any], settings: Settings, idle_rss: float | None) -> str:
    lines = [
        f"machine: {machine['cpus']} CPUs ({machine['cpu_model']}), {machine['memory_gib']} GiB RAM, "
        f"Linux {machine['kernel']}; Python {machine['python']}, grpcio {machine['grpcio']}, "
        f"protobuf {machine['protobuf']} ({machine['protobuf_backend']})",
        f"{settings.requests} requests per concurrency level (1 and 16) after {settings.warmup} warmup; "
        f"latency at concurrency 1; server RSS at start {_rss(idle_rss)} MiB",
        "",
        HEADER,
    ]
    for res in results:
        size = len(res.case.render)
        ratios = (f"{res.ratio('p50_ms'):.2f}", f"{res.ratio('p99_ms'):.2f}")
        lines.append(figures_row(res.case.name, "render", size, res.render, ratios))
        lines.append(figures_row("", "floor", len(res.case.floor), res.floor, ("1.00", "1.00")))
    lines += ["", "floor: the Noop step, same server, same request; p50 x / p99 x: render latency / floor latency"]
    lines += ["RSS MiB: peak RSS (VmHWM) of the server process during the row's requests"]
    if any(r.render.cut_short or r.floor.cut_short for r in results):
        lines.append("*: the time limit ended a measurement before its request count")
    lines += [f"{r.case.name}: {r.case.source}" for r in results]
    return "\n".join(lines)


def as_json(results: list[CaseResult], machine: dict[str, Any], settings: Settings, idle_rss: float | None) -> str:
    cases = [
        {
            "case": r.case.name,
            "source": r.case.source,
            "request_bytes": len(r.case.render),
            "render": asdict(r.render),
            "floor": asdict(r.floor),
            "ratio": {p: round(r.ratio(f"{p}_ms"), 3) for p in ("p50", "p95", "p99")},
        }
        for r in results
    ]
    doc = {"machine": machine, "settings": asdict(settings), "server_start_rss_mb": idle_rss, "cases": cases}
    return json.dumps(doc, indent=2)


# --- the command ------------------------------------------------------------------------------


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
