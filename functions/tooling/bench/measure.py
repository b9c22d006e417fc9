"""Driving the server: requests at each concurrency level, latency percentiles, throughput, peak RSS."""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from functions.tooling.bench.model import (
    CALL_TIMEOUT_SECONDS,
    CONCURRENCY,
    FLOOR_KIND,
    METHOD,
    RENDER_KIND,
    BenchError,
    Case,
    Figures,
    Settings,
)
from functions.tooling.bench.server import Server, proc_status_mb, reset_peak_rss


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
