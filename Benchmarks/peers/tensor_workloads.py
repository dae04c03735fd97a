#!/usr/bin/env python3
"""Run the tensor workloads T1-T9 in each peer (NumPy, JAX, MLX, PyTorch) and write a JSON.

Protocol (figures in Docs/Performance.md):
  * inputs: float32, built once with a fixed seed, outside the timed region;
  * 3 warm-ups (JAX compiles its `jax.jit` functions there), then the median of >= 30 runs;
  * the timed region ends when the result is materialized: `block_until_ready` for JAX,
    `mx.eval` for MLX; NumPy and PyTorch (eager, CPU) are done when the call returns;
  * 2 threads wherever a peer lets us set it (`--threads 1`: one, each peer pinned to one CPU).

Each peer runs in its own subprocess, so that one peer's thread pools, allocator and BLAS
never share a process with another's. In the NumPy subprocess only, OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE are unset (they pin an older, slower kernel on some processors); the BLAS
kernel that each peer then runs is recorded from threadpoolctl.

Output (stdout, or --json PATH):
  {"machine": {...},
   "peers": {"numpy": {"version": "2.4.6", "T1": median_ms, ..., "T7": median_ms,
                       "stats": {...}, "threads": ..., "blas": [...], "check": {...}}, ...},
   "skipped": {"torch": "reason", ...}}

Usage:
  python tensor_workloads.py                       # all peers, JSON to stdout, progress to stderr
  python tensor_workloads.py --json peers.json --runs 50 --peers numpy,jax
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

WORKLOADS = {
    "T1": "normalize",
    "T2": "softmax_argmax",
    "T3": "layernorm",
    "T4": "concat_reshape_mean",
    "T5": "matmul",
    "T6": "chain100_small",
    "T7": "hypot_16M",
    "T8": "sampling",
    "T9": "detection_decode",
}
PEERS = ("numpy", "jax", "mlx", "torch")
PEER_MODULES = {"numpy": "numpy", "jax": "jax", "mlx": "mlx.core", "torch": "torch"}
THREADS = 2
WARMUPS = 3
SEED = 0
OPENBLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


# --------------------------------------------------------------------------------------
# Inputs and reference results (NumPy, float64 reference)
# --------------------------------------------------------------------------------------


def make_inputs(seed: int = SEED) -> dict[str, tuple[np.ndarray, ...]]:
    """Build every workload's float32 inputs from one fixed-seed generator."""
    rng = np.random.default_rng(seed)

    def normal(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape, dtype=np.float32)

    return {
        "T1": (
            normal(8, 3, 224, 224),
            normal(1, 3, 1, 1),
            rng.uniform(0.5, 1.5, (1, 3, 1, 1)).astype(np.float32),
        ),
        "T2": (normal(64, 1000),),
        "T3": (normal(256, 768),),
        "T4": (normal(32, 64, 64), normal(32, 64, 64)),
        "T5": (normal(256, 512), normal(512, 1024)),
        "T6": (normal(16),),
        "T7": (normal(16_777_216), normal(16_777_216)),
        "T8": (normal(1, 32000) * 4,),
        "T9": (normal(1, 84, 8400),),
    }


def _reference_softmax_argmax(logits: np.ndarray) -> tuple[np.ndarray, ...]:
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True), logits.argmax(-1)


def _reference_layernorm(x: np.ndarray) -> tuple[np.ndarray, ...]:
    c = x - x.mean(-1, keepdims=True)
    return (c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-5),)


def _reference_chain(x: np.ndarray) -> tuple[np.ndarray, ...]:
    for _ in range(100):
        x = x * 1.0001 + 0.0001
    return (x,)


def _reference_sampling(logits: np.ndarray) -> tuple[np.ndarray, ...]:
    z = logits / 0.7
    e = np.exp(z - z.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    indices = np.argsort(-p, axis=-1, kind="stable")[..., :50]
    return np.cumsum(np.take_along_axis(p, indices, -1), -1), indices


def _reference_detection(x: np.ndarray) -> tuple[np.ndarray, ...]:
    classes = x.transpose(0, 2, 1)[..., 4:]
    scores = classes.max(-1)
    return scores, classes.argmax(-1), scores > 0.25


REFERENCES: dict[str, Callable[..., tuple[np.ndarray, ...]]] = {
    "T1": lambda x, mean, std: ((x - mean) / std,),
    "T2": _reference_softmax_argmax,
    "T3": _reference_layernorm,
    "T4": lambda a, b: (np.concatenate([a, b], 0).reshape(64, 4096)[None].mean(2),),
    "T5": lambda a, b: (a @ b,),
    "T6": _reference_chain,
    "T7": lambda a, b: (np.sqrt(a * a + b * b),),
    "T8": _reference_sampling,
    "T9": _reference_detection,
}


def reference_results(inputs: dict[str, tuple[np.ndarray, ...]]) -> dict[str, tuple[np.ndarray, ...]]:
    """Compute the given workloads in float64 NumPy, to check each peer's results against.

    (T2's argmax is the same in float64 as in float32 for these logits: the check compares it exactly.)
    """
    return {key: REFERENCES[key](*(a.astype(np.float64) for a in args)) for key, args in inputs.items()}


def check_results(
    results: dict[str, tuple[np.ndarray, ...]], reference: dict[str, tuple[np.ndarray, ...]]
) -> dict[str, str]:
    """Compare a peer's results (as NumPy arrays) with the float64 reference: 'ok' or why not."""
    report = {}
    for key, expected in reference.items():
        got = results[key]
        problems = []
        for got_i, want_i in zip(got, expected):
            got_i = np.asarray(got_i)
            if got_i.shape != want_i.shape:
                problems.append(f"shape {got_i.shape} != {want_i.shape}")
            elif want_i.dtype.kind in "iu":
                mismatches = int((got_i != want_i).sum())
                if mismatches:
                    problems.append(f"{mismatches} argmax indices differ")
            else:
                scale = float(np.abs(want_i).max()) or 1.0
                err = float(np.abs(got_i.astype(np.float64) - want_i).max()) / scale
                if err > 2e-3:  # float32 rounding stays far below this
                    problems.append(f"max relative error {err:.2e}")
        report[key] = "ok" if not problems else "; ".join(problems)
    return report


# --------------------------------------------------------------------------------------
# Peers: each factory imports its package, configures threads/device, and returns
# (version, info, {workload id: Workload})
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """One workload in one peer.

    run: the computation (timed); convert: a NumPy input to the peer's array, materialized
    (untimed); materialize: waits until a result exists (timed); to_numpy: the result as a
    tuple of NumPy arrays, for the check (untimed).
    """

    run: Callable
    convert: Callable[[np.ndarray], object]
    materialize: Callable[[object], None]
    to_numpy: Callable[[object], tuple[np.ndarray, ...]]


def numpy_peer() -> tuple[str, dict, dict[str, Workload]]:
    """NumPy, eager: each call returns materialized arrays (BLAS limited to 2 threads)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # OPENBLAS_NUM_THREADS, set by peer_environment, still applies
        print("  numpy: threadpoolctl missing; relying on OPENBLAS_NUM_THREADS", file=sys.stderr)
    else:
        threadpool_limits(THREADS)

    def t1(x, mean, std):
        return (x - mean) / std

    def t2(logits):
        e = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True), logits.argmax(axis=-1)

    def t3(x):
        c = x - x.mean(axis=-1, keepdims=True)
        return c / np.sqrt((c * c).mean(axis=-1, keepdims=True) + 1e-5)

    def t4(a, b):
        return np.expand_dims(np.concatenate([a, b], axis=0).reshape(64, 4096), 0).mean(axis=2)

    def t5(a, b):
        return a @ b

    def t6(x):
        for _ in range(100):
            x = x * 1.0001 + 0.0001
        return x

    def t7(a, b):
        return np.sqrt(a * a + b * b)

    def t8(logits):
        z = logits / np.float32(0.7)
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        p = e / e.sum(axis=-1, keepdims=True)
        part = np.argpartition(-p, 50, axis=-1)[..., :50]
        top = np.take_along_axis(p, part, -1)
        order = np.argsort(-top, axis=-1, kind="stable")
        indices = np.take_along_axis(part, order, -1)
        return np.cumsum(np.take_along_axis(top, order, -1), axis=-1), indices

    def t9(x):
        classes = x.transpose(0, 2, 1)[..., 4:]
        scores = classes.max(axis=-1)
        return scores, classes.argmax(axis=-1), scores > 0.25

    fns = {"T1": t1, "T2": t2, "T3": t3, "T4": t4, "T5": t5, "T6": t6, "T7": t7, "T8": t8, "T9": t9}
    workloads = {
        k: Workload(fn, np.asarray, lambda r: None, as_tuple_of_numpy) for k, fn in fns.items()
    }
    return np.__version__, {"threads": THREADS, "mode": "eager"}, workloads


def jax_peer() -> tuple[str, dict, dict[str, Workload]]:
    """JAX on CPU: each workload is one `jax.jit` function, compiled during the warm-ups."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_platforms", "cpu")

    def t1(x, mean, std):
        return (x - mean) / std

    def t2(logits):
        return jax.nn.softmax(logits, axis=-1), jnp.argmax(logits, axis=-1)

    def t3(x):
        c = x - jnp.mean(x, axis=-1, keepdims=True)
        return c / jnp.sqrt(jnp.mean(c * c, axis=-1, keepdims=True) + 1e-5)

    def t4(a, b):
        return jnp.mean(jnp.expand_dims(jnp.concatenate([a, b], axis=0).reshape(64, 4096), 0), axis=2)

    def t5(a, b):
        return jnp.matmul(a, b)

    def t6(x):
        for _ in range(100):
            x = x * 1.0001 + 0.0001
        return x

    def t7(a, b):
        return jnp.sqrt(a * a + b * b)

    def t8(logits):
        values, indices = jax.lax.top_k(jax.nn.softmax(logits / 0.7, axis=-1), 50)
        return jnp.cumsum(values, axis=-1), indices

    def t9(x):
        classes = jnp.transpose(x, (0, 2, 1))[..., 4:]
        scores = jnp.max(classes, axis=-1)
        return scores, jnp.argmax(classes, axis=-1), scores > 0.25

    fns = {"T1": t1, "T2": t2, "T3": t3, "T4": t4, "T5": t5, "T6": t6, "T7": t7, "T8": t8, "T9": t9}
    device = jax.devices("cpu")[0]
    workloads = {
        k: Workload(
            jax.jit(fn),
            lambda a: jax.device_put(a, device).block_until_ready(),
            jax.block_until_ready,
            as_tuple_of_numpy,
        )
        for k, fn in fns.items()
    }
    info = {
        "mode": "jax.jit per workload",
        "threads": "XLA CPU default (intra-op pool = cores)" if THREADS > 1 else "process pinned to one CPU",
        "backend": jax.default_backend(),
    }
    return jax.__version__, info, workloads


def mlx_peer() -> tuple[str, dict, dict[str, Workload]]:
    """MLX on the CPU device: builds each lazy graph, then `mx.eval` materializes it."""
    import mlx.core as mx

    mx.set_default_device(mx.cpu)

    def t1(x, mean, std):
        return (x - mean) / std

    def t2(logits):
        return mx.softmax(logits, axis=-1), mx.argmax(logits, axis=-1)

    def t3(x):
        c = x - mx.mean(x, axis=-1, keepdims=True)
        return c / mx.sqrt(mx.mean(c * c, axis=-1, keepdims=True) + 1e-5)

    def t4(a, b):
        return mx.mean(mx.expand_dims(mx.concatenate([a, b], axis=0).reshape(64, 4096), 0), axis=2)

    def t5(a, b):
        return mx.matmul(a, b)

    def t6(x):
        for _ in range(100):
            x = x * 1.0001 + 0.0001
        return x

    def t7(a, b):
        return mx.sqrt(a * a + b * b)

    def t8(logits):
        p = mx.softmax(logits / 0.7, axis=-1)
        indices = mx.argsort(-p, axis=-1)[..., :50]
        return mx.cumsum(mx.take_along_axis(p, indices, axis=-1), axis=-1), indices

    def t9(x):
        classes = mx.transpose(x, (0, 2, 1))[..., 4:]
        scores = mx.max(classes, axis=-1)
        return scores, mx.argmax(classes, axis=-1), scores > 0.25

    def materialize(result):
        mx.eval(result)

    def convert(a):
        arr = mx.array(a)
        mx.eval(arr)
        return arr

    fns = {"T1": t1, "T2": t2, "T3": t3, "T4": t4, "T5": t5, "T6": t6, "T7": t7, "T8": t8, "T9": t9}
    workloads = {k: Workload(fn, convert, materialize, as_tuple_of_numpy) for k, fn in fns.items()}
    info = {"mode": "lazy graph + mx.eval (no mx.compile)", "device": str(mx.default_device())}
    return mx.__version__, info, workloads


def torch_peer() -> tuple[str, dict, dict[str, Workload]]:
    """PyTorch on CPU, eager under `torch.no_grad()`, `torch.set_num_threads(2)`."""
    import torch

    torch.set_num_threads(THREADS)

    def no_grad(fn):
        def wrapped(*args):
            with torch.no_grad():
                return fn(*args)

        return wrapped

    def t1(x, mean, std):
        return (x - mean) / std

    def t2(logits):
        return torch.softmax(logits, dim=-1), torch.argmax(logits, dim=-1)

    def t3(x):
        c = x - x.mean(dim=-1, keepdim=True)
        return c / torch.sqrt((c * c).mean(dim=-1, keepdim=True) + 1e-5)

    def t4(a, b):
        return torch.cat([a, b], dim=0).reshape(64, 4096).unsqueeze(0).mean(dim=2)

    def t5(a, b):
        return a @ b

    def t6(x):
        for _ in range(100):
            x = x * 1.0001 + 0.0001
        return x

    def t7(a, b):
        return torch.sqrt(a * a + b * b)

    def t8(logits):
        values, indices = torch.topk(torch.softmax(logits / 0.7, dim=-1), 50, dim=-1)
        return torch.cumsum(values, dim=-1), indices

    def t9(x):
        classes = x.permute(0, 2, 1)[..., 4:]
        scores, ids = classes.max(dim=-1)
        return scores, ids, scores > 0.25

    fns = {"T1": t1, "T2": t2, "T3": t3, "T4": t4, "T5": t5, "T6": t6, "T7": t7, "T8": t8, "T9": t9}
    workloads = {
        k: Workload(no_grad(fn), torch.from_numpy, lambda r: None, as_tuple_of_numpy)
        for k, fn in fns.items()
    }
    info = {
        "mode": "eager, no_grad",
        "threads": torch.get_num_threads(),
        "parallel": torch.__config__.parallel_info().splitlines()[:6],
    }
    return torch.__version__, info, workloads


PEER_FACTORIES = {"numpy": numpy_peer, "jax": jax_peer, "mlx": mlx_peer, "torch": torch_peer}


def as_tuple_of_numpy(result) -> tuple[np.ndarray, ...]:
    """Convert a peer's result (one array or a tuple of arrays) to a tuple of NumPy arrays."""
    items = result if isinstance(result, (tuple, list)) else (result,)
    return tuple(np.asarray(item) for item in items)


# --------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------


def time_workload(workload: Workload, args: tuple, runs: int, warmups: int = WARMUPS) -> list[float]:
    """Return `runs` wall-clock times (ms) of run+materialize, after `warmups` untimed calls."""
    for _ in range(warmups):
        workload.materialize(workload.run(*args))
    times = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        workload.materialize(workload.run(*args))
        times.append((time.perf_counter_ns() - start) / 1e6)
    return times


def summarize(times: list[float]) -> dict[str, float]:
    """Median, quartiles and extremes (ms) of a list of run times."""
    q1, _, q3 = statistics.quantiles(times, n=4)
    return {
        "median": round(statistics.median(times), 6),
        "p25": round(q1, 6),
        "p75": round(q3, 6),
        "min": round(min(times), 6),
        "runs": len(times),
    }


def blas_info() -> list[dict]:
    """The BLAS/OpenMP libraries loaded in this process, as threadpoolctl reports them."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    keys = ("user_api", "internal_api", "version", "architecture", "num_threads", "threading_layer")
    libraries = []
    for lib in threadpool_info():
        entry = {k: lib[k] for k in keys if k in lib}
        path = lib.get("filepath", "")
        entry["library"] = path.split("site-packages/", 1)[-1]
        libraries.append(entry)
    return libraries


def run_peer(name: str, runs: int, only: list[str]) -> dict:
    """Measure one peer in this process; return its JSON entry (raises if it cannot import)."""
    version, info, workloads = PEER_FACTORIES[name]()
    inputs = make_inputs()
    reference = reference_results({k: inputs[k] for k in only})
    entry: dict = {"version": version, **info}
    stats, results = {}, {}
    for key in only:
        workload = workloads[key]
        args = tuple(workload.convert(a) for a in inputs[key])
        times = time_workload(workload, args, runs)
        stats[key] = summarize(times)
        entry[key] = round(stats[key]["median"], 6)
        result = workload.run(*args)
        workload.materialize(result)
        results[key] = workload.to_numpy(result)
        print(
            f"  {name:6s} {key} {WORKLOADS[key]:20s} median {stats[key]['median']:9.3f} ms"
            f"  [{stats[key]['p25']:.3f}, {stats[key]['p75']:.3f}]",
            file=sys.stderr,
            flush=True,
        )
        del args
    entry["stats"] = stats
    entry["check"] = check_results(results, reference)
    entry["blas"] = blas_info()
    return entry


# --------------------------------------------------------------------------------------
# Driver: one subprocess per peer
# --------------------------------------------------------------------------------------



def write_results(out_dir: str, stem: str, results: dict, text: str) -> None:
    """Writes `results` as <stem>.json and `text` as <stem>.md into `out_dir`, prints the text."""
    with open(os.path.join(out_dir, f"{stem}.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    with open(os.path.join(out_dir, f"{stem}.md"), "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    print(f"wrote {os.path.join(out_dir, stem + '.json')} and {stem}.md", file=sys.stderr)

def machine_info() -> dict:
    """CPU model, core count, OS and Python, for the table's and chart's captions."""
    cpu = platform.processor() or platform.machine()
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    isa = next((name for flag, name in (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("asimd", "NEON")) if flag in flags), "")
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "os": f"{platform.system()} {platform.release()}",
        "arch": platform.machine(),
        "isa": isa,
        "python": platform.python_version(),
        "openblas_env": {v: os.environ[v] for v in OPENBLAS_OVERRIDES if v in os.environ},
    }


def peer_environment(name: str) -> dict[str, str]:
    """The child's environment: 2 threads; for NumPy, without the OpenBLAS core overrides."""
    env = dict(os.environ)
    threads = str(THREADS)
    env.update(
        {
            "OMP_NUM_THREADS": threads,
            "OPENBLAS_NUM_THREADS": threads,
            "MKL_NUM_THREADS": threads,
            "JAX_PLATFORMS": "cpu",
            "TF_CPP_MIN_LOG_LEVEL": "2",
        }
    )
    if name == "numpy":
        for var in OPENBLAS_OVERRIDES:
            env.pop(var, None)
    return env


def missing_reason(name: str) -> str | None:
    """Why a peer cannot run here (its module does not import), or None when it can."""
    probe = f"import {PEER_MODULES[name]}"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=peer_environment(name)
    )
    if done.returncode == 0:
        return None
    lines = [l for l in done.stderr.strip().splitlines() if l.strip()]
    return lines[-1] if lines else f"`{probe}` failed"


def load_average() -> float | None:
    """The 1-minute load average (other work on this machine skews the medians), if known."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def cpu_seconds() -> tuple[float, float] | None:
    """(busy CPU-seconds of the whole machine, CPU-seconds of this process's waited-for children)."""
    import resource

    try:
        with open("/proc/stat", encoding="utf-8") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    busy = (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")  # guest time is counted in user
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return busy, children.ru_utime + children.ru_stime


def other_load(before: tuple[float, float] | None, after: tuple[float, float] | None, wall: float) -> float | None:
    """Fraction of the machine's cores that other processes kept busy during a child's run.

    On a 2-core machine one busy process elsewhere makes every 2-thread kernel wait for it at
    each barrier, so medians measured under load say little: this is recorded per peer.
    """
    if not before or not after or wall < 1.0:  # /proc/stat counts in ticks of ~10 ms
        return None
    others = (after[0] - before[0]) - (after[1] - before[1])
    return round(max(others, 0.0) / (wall * (os.cpu_count() or 1)), 3)


def wait_for_idle(max_load: float, timeout: float) -> float | None:
    """Wait, up to `timeout` seconds, for a 1-second window in which other processes used at
    most `max_load` of the CPU; return the last window's load (None if unknown)."""
    deadline = time.monotonic() + timeout
    while True:
        before = cpu_seconds()
        time.sleep(1.0)
        load = other_load(before, cpu_seconds(), 1.0)
        if load is None or load <= max_load or time.monotonic() >= deadline:
            return load


def measure_peer(name: str, runs: int, only: list[str]) -> tuple[dict | None, float | None, str]:
    """Run one peer's subprocess once: (its JSON entry or None, other processes' CPU load, error)."""
    command = [sys.executable, os.path.abspath(__file__), "--child", name,
               "--runs", str(runs), "--workloads", ",".join(only), "--threads", str(THREADS)]
    before, start = cpu_seconds(), time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, env=peer_environment(name))
    load = other_load(before, cpu_seconds(), time.perf_counter() - start)
    if done.returncode != 0:
        return None, load, f"benchmark process exited with status {done.returncode}"
    return json.loads(done.stdout), load, ""


def run_all(
    peers: list[str], runs: int, only: list[str], attempts: int = 1, max_load: float = 0.05, idle_wait: float = 0.0
) -> dict:
    """Measure each peer in its own subprocess; return the combined JSON document.

    Before each run, wait up to `idle_wait` seconds for the machine to be idle. When other
    processes kept more than `max_load` of the CPU busy during a peer's run, the peer is
    measured again, up to `attempts` times in all, and the least disturbed run is kept.
    """
    document: dict = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "protocol": {**protocol(runs), "max_other_cpu_load": max_load},
        "peers": {},
        "skipped": {},
    }
    load_before = load_average()
    for name in peers:
        reason = missing_reason(name)
        if reason:
            print(f"{name}: skipped ({reason})", file=sys.stderr, flush=True)
            document["skipped"][name] = reason
            continue
        best: dict | None = None
        for attempt in range(1, attempts + 1):
            if idle_wait > 0:
                waited = wait_for_idle(max_load, idle_wait)
                if waited is not None and waited > max_load:
                    print(f"{name}: the machine is still busy ({waited:.0%}) after {idle_wait:.0f} s; measuring anyway",
                          file=sys.stderr, flush=True)
            print(f"{name}:" + (f" attempt {attempt}" if attempt > 1 else ""), file=sys.stderr, flush=True)
            entry, load, error = measure_peer(name, runs, only)
            if entry is None:
                document["skipped"][name] = error
                print(f"{name}: failed ({error})", file=sys.stderr, flush=True)
                break
            entry.update(other_cpu_load=load, attempts=attempt,
                         unset_env=sorted(set(os.environ) - set(peer_environment(name))))
            if best is None or (load or 0) < (best["other_cpu_load"] or 0):
                best = entry
            if load is None or load <= max_load:
                break
            print(f"{name}: other processes kept {load:.0%} of the CPU busy during this run"
                  + ("; measuring again" if attempt < attempts else "; its medians are skewed"),
                  file=sys.stderr, flush=True)
        if best is None:
            continue
        document["skipped"].pop(name, None)
        document["peers"][name] = best
        bad = {k: v for k, v in best["check"].items() if v != "ok"}
        if bad:
            print(f"{name}: result check failed: {bad}", file=sys.stderr, flush=True)
    document["machine"]["load_average"] = [load_before, load_average()]
    return document


def protocol(runs: int) -> dict:
    """The measurement protocol, recorded next to the numbers."""
    return {
        "dtype": "float32",
        "seed": SEED,
        "warmups": WARMUPS,
        "runs": runs,
        "statistic": "median wall-clock ms, run + materialize, inputs prepared outside timing",
        "threads": THREADS,
        "isolation": "one subprocess per peer",
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="write the JSON here instead of stdout")
    parser.add_argument("--runs", type=int, default=30, help="timed runs per workload (>= 30)")
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated subset of " + ",".join(PEERS))
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated subset of T1..T9")
    parser.add_argument("--attempts", type=int, default=3,
                        help="measure a peer again, up to this many times in all, while other processes "
                             "keep more than --max-load of the CPU busy; the least disturbed run is kept")
    parser.add_argument("--max-load", type=float, default=0.05,
                        help="share of the CPU (0-1) other processes may use during a peer's run")
    parser.add_argument("--idle-wait", type=float, default=60.0,
                        help="before each peer's run, wait up to this many seconds for other processes to "
                             "use at most --max-load of the CPU (0: do not wait)")
    parser.add_argument("--threads", type=int, default=THREADS, choices=[1, 2],
                        help="threads per peer (default 2); with 1 each peer's process is also pinned to one "
                             "CPU, so no library can run a second thread beside it")
    parser.add_argument("--child", choices=PEERS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    args.workloads = [w.strip().upper() for w in args.workloads.split(",") if w.strip()]
    unknown = [p for p in args.peers if p not in PEERS] + [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown peer or workload: {', '.join(unknown)}")
    if args.runs < 2 or args.attempts < 1:
        parser.error("--runs must be at least 2 and --attempts at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    """Entry point: a child measures one peer; the parent runs every peer and writes the JSON."""
    args = parse_args(argv)
    global THREADS
    THREADS = args.threads
    if args.child:
        if THREADS == 1 and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        json.dump(run_peer(args.child, args.runs, args.workloads), sys.stdout)
        return 0
    document = run_all(args.peers, args.runs, args.workloads, args.attempts, args.max_load, args.idle_wait)
    text = json.dumps(document, indent=2)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
