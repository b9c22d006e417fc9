"""The figures as a table or JSON, with the machine they were measured on."""

from __future__ import annotations

import contextlib
import json
import os
import platform
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

import grpc

from functions.tooling.bench.measure import CaseResult
from functions.tooling.bench.model import MIB, Figures, Settings


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
