"""Time the command line as a person meets it: cold processes, several runs, min / median / max of wall seconds.

    .venv/bin/python scripts/bench-cli.py [--runs N] [--repo DIR] [--corpus DIR]

Cases: ``python -c pass`` (the interpreter alone: how fast the host is at the time); ``function-dynamo --help``;
``render`` of each example graph (and one of every other kind); ``validate`` of the first 100 documents of the
upstream corpus (``../shared/corpus`` beside the checkout, or ``--corpus``).
Each case is one process per run, started the way a person starts it (the checkout's ``.venv/bin/function-dynamo``,
or ``--repo``'s), after one warm-up run that fills the byte-code caches. Progress goes to stderr, the table to
stdout. ``docs/performance.md`` keeps the figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Each case, then where an older checkout keeps the same file (to time a checkout from before the examples moved).
RENDER_CASES = (
    ("examples/dgd/vllm-agg.yaml", "examples/vllm-agg.yaml"),
    ("examples/dgd/vllm-disagg.yaml",),
    ("examples/v1alpha1/sglang-multinode.yaml", "examples/sglang-multinode.yaml"),
    ("examples/v1alpha1/trtllm-multinode.yaml", "examples/trtllm-multinode.yaml"),
    ("examples/dcd/vllm-worker.yaml",),
    ("examples/dgdr/vllm-sla.yaml",),
    ("examples/platform/aws.yaml", "examples/dynamo-platform/aws.yaml"),
)


def corpus_sample(corpus: Path, count: int, into: Path) -> Path:
    """The first ``count`` YAML documents of the corpus, one file each, in a directory."""
    written = 0
    for path in sorted(corpus.rglob("*.yaml")):
        for index, text in enumerate(path.read_text().split("\n---")):
            if written == count or not text.strip():
                continue
            (into / f"{written:03d}-{path.stem}-{index}.yaml").write_text(text)
            written += 1
    return into


# A person's Python writes byte-code caches. Where the environment forbids it (PYTHONDONTWRITEBYTECODE, set by
# some CI images and sandboxes), every run would compile each module changed since the caches were last written,
# and time the compiler rather than the command.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(command: list[str], runs: int, cwd: Path) -> list[float]:
    subprocess.run(command, cwd=cwd, env=ENV, capture_output=True, check=False)  # warm-up: byte-code caches
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, env=ENV, capture_output=True, check=False)
        out.append(time.perf_counter() - start)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout whose .venv and examples are timed")
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    args = parser.parse_args()
    program = str(args.repo / ".venv" / "bin" / "function-dynamo")
    # The interpreter alone: the host's own speed at the time, to read the other rows against on a shared machine.
    python = str(args.repo / ".venv" / "bin" / "python")
    cases: list[tuple[str, list[str]]] = [("python -c pass", [python, "-c", "pass"]), ("--help", [program, "--help"])]
    for names in RENDER_CASES:
        found = next((n for n in names if (args.repo / n).exists()), None)
        if found:
            cases.append((f"render {names[0]}", [program, "render", found]))
    work = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    try:
        if args.corpus.is_dir():
            sample = corpus_sample(args.corpus, 100, work)
            cases.append(("validate 100 corpus documents", [program, "validate", str(sample)]))
        else:
            print(f"bench-cli: no corpus at {args.corpus}: validate is not timed", file=sys.stderr)
        rows = []
        for name, command in cases:
            print(f"bench-cli: {name} ({args.runs} runs)", file=sys.stderr, flush=True)
            seconds = timed(command, args.runs, args.repo)
            rows.append((name, min(seconds), statistics.median(seconds), max(seconds)))
    finally:
        shutil.rmtree(work)
    width = max(len(name) for name, *_ in rows)
    print(f"{'case':<{width}}  {'min s':>6}  {'median s':>8}  {'max s':>6}")
    for name, low, mid, high in rows:
        print(f"{name:<{width}}  {low:6.2f}  {mid:8.2f}  {high:6.2f}")


if __name__ == "__main__":
    main()
