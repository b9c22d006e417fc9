"""The benchmark's vocabulary: what a case is, the settings, the figures, its constants and error."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

REPO_ROOT = Path(__file__).resolve().parents[3]
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
