"""Ray Data throughput of tessera.ray.Predictor with 2 workers next to one process.

    python Benchmarks/peers/ray_throughput.py --models-dir DIR [--rows 256] [--model m1]

The same rows (the model's recorded input, repeated) go through
  * one process: ``tessera.ray.Predictor`` called on batches of --batch-size rows
    (Tessera with 2 threads);
  * Ray Data on a local cluster (``ray.init(num_cpus=2)``): ``map_batches`` with
    ``concurrency=2`` actors (Tessera with 1 thread each, so the two workers fill the two
    cores) and with ``concurrency=1`` (2 threads).
Rows per second, the best of --rounds runs (the first Ray round includes actor start-up
and is dropped).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models-dir", required=True, type=Path)
    parser.add_argument("--model", default="m1")
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    os.environ.setdefault("TESSERA_NUM_THREADS", "2")
    import ray

    import tessera.ray

    path = str(arguments.models_dir / f"{arguments.model}.mlpackage")
    x = np.load(arguments.models_dir / f"{arguments.model}_input.npy")
    rows = np.repeat(x, arguments.rows, axis=0)  # rows of the input without its leading 1
    predictor = tessera.ray.Predictor(path)
    best = 0.0
    for _ in range(arguments.rounds):
        start = time.perf_counter()
        for offset in range(0, len(rows), arguments.batch_size):
            predictor({"input": rows[offset : offset + arguments.batch_size]})
        best = max(best, len(rows) / (time.perf_counter() - start))
    print(f"{arguments.model}: one process {best:.1f} rows/s", flush=True)
    results = {"one_process": best}
    library = os.environ.get("TESSERA_LIBRARY")
    for concurrency, threads in ((2, "1"), (1, "2")):
        env = {"TESSERA_NUM_THREADS": threads, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
        if library:
            env["TESSERA_LIBRARY"] = library
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": env})
        ds = ray.data.from_numpy(rows).rename_columns({"data": "input"}).materialize()
        rates = []
        for _ in range(arguments.rounds + 1):
            start = time.perf_counter()
            count = ds.map_batches(tessera.ray.Predictor, fn_constructor_kwargs={"model": path}, concurrency=concurrency,
                                   batch_size=arguments.batch_size, batch_format="numpy").count()
            assert count == len(rows)
            rates.append(len(rows) / (time.perf_counter() - start))
        ray.shutdown()
        results[f"ray_{concurrency}_workers"] = max(rates[1:])
        print(f"{arguments.model}: ray data, {concurrency} worker(s) x {threads} thread(s): {max(rates[1:]):.1f} rows/s "
              f"({max(rates[1:]) / best:.2f}x one process)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
