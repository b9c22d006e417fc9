"""`function-dynamo bench` runs end to end: a smoke test of the command, not a timing assertion."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.tooling import REPO, require_shared

CASES = ("smallest", "typical", "largest", "synthetic-25", "synthetic-25-no-grove")
QUICK = ("--requests", "5", "--warmup", "1", "--time-limit", "30")


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "functions.tooling.main", "bench", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def corpus() -> Path:
    return require_shared("corpus")


def test_table_has_every_case_its_floor_the_ratios_and_rss(corpus: Path) -> None:
    out = bench("--corpus", str(corpus), *QUICK)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    header = next(line for line in lines if line.startswith("case "))
    for column in ("p50 ms", "p95 ms", "p99 ms", "rps c=1", "rps c=16", "RSS MiB", "p50 x", "p99 x"):
        assert column in header
    rows = [line.split() for line in lines[lines.index(header) + 1 :] if line.strip()][: 2 * len(CASES)]
    assert [row[0] for row in rows[::2]] == list(CASES)
    assert [row[1] for row in rows[::2]] == ["render"] * len(CASES)
    assert [row[0] for row in rows[1::2]] == ["floor"] * len(CASES)  # the floor row under each case
    for row in rows[::2]:
        assert float(row[-1]) > 0 and float(row[-2]) > 0  # p99 x and p50 x
        assert float(row[-3]) > 10  # the server's peak RSS in MiB
    assert "machine:" in out.stdout and "grpcio" in out.stdout
    assert "largest: v1" in out.stdout  # names the corpus document


def test_json_has_figures_for_render_and_floor(corpus: Path) -> None:
    out = bench("--corpus", str(corpus), "--json", *QUICK)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [c["case"] for c in doc["cases"]] == list(CASES)
    for case in doc["cases"]:
        for step in ("render", "floor"):
            figures = case[step]
            assert figures["requests"] == 5
            assert 0 < figures["p50_ms"] <= figures["p95_ms"] <= figures["p99_ms"]
            assert set(figures["rps"]) == {"1", "16"}
            assert figures["peak_rss_mb"] > 10
        assert case["ratio"]["p99"] > 0
    assert doc["machine"]["cpus"] >= 1
    assert doc["machine"]["python"].count(".") == 2


def test_a_missing_corpus_is_a_clear_error(tmp_path: Path) -> None:
    out = bench("--corpus", str(tmp_path / "nowhere"), *QUICK)
    assert out.returncode == 1
    assert f"corpus not found at {tmp_path / 'nowhere'}" in out.stderr
    assert "--corpus" in out.stderr
