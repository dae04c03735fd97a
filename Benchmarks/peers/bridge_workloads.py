#!/usr/bin/env python3
"""T10 bridge in NumPy: the peer figures for `TesseraBenchmarks multiarray`.

Workload (T10 in Docs/Performance.md): a [1, 80, 3000] float32 array
stored time-major ([1, 3000, 80] memory, read as a transposed view), made contiguous
(`np.ascontiguousarray`) and converted (`astype`), in both directions. Inputs are built once
outside the timed region; 3 warm-ups; the median of N runs (default 100).

Usage:
  Benchmarks/peers/.venv/bin/python Benchmarks/peers/bridge_workloads.py [--runs N] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np


def measure(fn, runs: int) -> float:
    for _ in range(3):
        fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--json", help="write the medians (ms) here")
    args = parser.parse_args()

    rng = np.random.default_rng(10)
    stored = rng.uniform(-1, 1, size=(1, 3000, 80)).astype(np.float32)  # time-major memory
    transposed = stored.transpose(0, 2, 1)  # [1, 80, 3000] view, strides (.., 1, 80) elements
    contiguous = np.ascontiguousarray(transposed)
    halves = stored.astype(np.float16).transpose(0, 2, 1)

    workloads = {
        "fwd contiguous (ascontiguousarray, no copy)": lambda: np.ascontiguousarray(contiguous),
        "fwd transposed -> contiguous f32": lambda: np.ascontiguousarray(transposed),
        "fwd transposed f16 -> contiguous f32": lambda: halves.astype(np.float32, order="C"),
        "back transposed -> contiguous f32": lambda: np.ascontiguousarray(contiguous.transpose(0, 2, 1)),
        "back f32 -> f16 (astype)": lambda: contiguous.astype(np.float16),
    }
    results = {name: measure(fn, args.runs) for name, fn in workloads.items()}
    print(f"NumPy {np.__version__}, T10 [1, 80, 3000], median of {args.runs} runs")
    for name, ms in results.items():
        print(f"  {name:48s} {ms:8.3f} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"numpy": np.__version__, "T10": results}, f, indent=2)


if __name__ == "__main__":
    main()
