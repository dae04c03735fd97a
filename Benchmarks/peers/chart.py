#!/usr/bin/env python3
"""Draw the tensor-benchmark comparison from compare.py's results.json as a PNG, or the
model comparison from compare_models.py's results-models.json (`--models`).

Tensor modes:
  * ratio (default when Tessera's figures are present): grouped bars of peer time / Tessera
    time per workload (Tessera's headline figure: `await shapedArray(of:)` from an async
    context), log scale, a line at 1× (bars above it: Tessera is faster);
  * time (default without Tessera): grouped bars of median ms per workload and library,
    log scale.

Model chart (`--models PATH`): for every single-prediction model (M1, M2, M3, M6, M7), bars of
ONNX Runtime's and PyTorch's time ÷ Tessera's at 1 and at 2 threads, a line at 1×.

Usage:
  python chart.py                                   # results/results.json -> Docs/performance-tensor.png
  python chart.py --results PATH --out PATH --mode time
  python chart.py --models results/results-models.json   # -> Docs/performance-models.png
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the headless backend)
from matplotlib.ticker import FuncFormatter, LogLocator  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LABELS = {"tessera": "Tessera", "numpy": "NumPy", "jax": "JAX (jit)", "mlx": "MLX (cpu)", "torch": "PyTorch (eager)"}
COLORS = {"tessera": "#d62728", "numpy": "#1f77b4", "jax": "#2ca02c", "mlx": "#9467bd", "torch": "#ff7f0e"}


def load_results(path: str) -> dict:
    """Read compare.py's results.json."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def machine_caption(results: dict) -> str:
    """One line describing the machine and protocol, for the title."""
    machine, protocol = results.get("machine", {}), results.get("protocol", {})
    return (
        f"{machine.get('cpu', '?')}{' (' + machine['isa'] + ')' if machine.get('isa') else ''}, {machine.get('cores', '?')} cores, {machine.get('os', '')} — "
        f"{protocol.get('dtype', 'float32')}, median of {protocol.get('runs', '?')} runs, "
        f"{protocol.get('threads', 2)} threads, {results.get('date', '')[:10]}"
    )


def series(results: dict, mode: str) -> tuple[list[str], dict[str, list[float | None]]]:
    """Workload ids and, per library, the values to plot (ratios or median ms)."""
    keys = list(results["workloads"])
    if mode == "ratio":
        return keys, {name: [row.get(k) for k in keys] for name, row in results["ratios"].items()}
    data = {}
    if results.get("tessera"):
        data["tessera"] = [results["tessera"].get(k) for k in keys]
    for name, entry in results["peers"].items():
        data[name] = [entry.get(k) for k in keys]
    return keys, data


def value_label(value: float, mode: str) -> str:
    """Text above a bar: a ratio (2.3) or a time in ms (0.41), two significant digits."""
    if mode == "ratio":
        return f"{value:.2g}" if value < 10 else f"{value:.0f}"
    return f"{value:.2g}" if value < 10 else f"{value:.0f}"


def draw(results: dict, mode: str, out_path: str) -> None:
    """Render the grouped-bar chart and save it to out_path."""
    keys, data = series(results, mode)
    names = list(data)
    workloads = results["workloads"]
    tessera = results.get("tessera") or {}
    fig, ax = plt.subplots(figsize=(12, 6.2), dpi=120)
    width = 0.8 / max(len(names), 1)
    values = [v for row in data.values() for v in row if isinstance(v, (int, float)) and v > 0]
    for i, name in enumerate(names):
        xs = [j + (i - (len(names) - 1) / 2) * width for j in range(len(keys))]
        heights = [v if isinstance(v, (int, float)) and v > 0 else math.nan for v in data[name]]
        bars = ax.bar(xs, heights, width * 0.92, label=LABELS.get(name, name), color=COLORS.get(name))
        for bar, v in zip(bars, heights):
            if not math.isnan(v):
                ax.annotate(value_label(v, mode), (bar.get_x() + bar.get_width() / 2, v),
                            xytext=(0, 2), textcoords="offset points", ha="center", va="bottom", fontsize=6.5)
    ax.set_yscale("log")
    if values:
        low, high = min(values + [1.0] if mode == "ratio" else values), max(values + [1.0] if mode == "ratio" else values)
        ax.set_ylim(low / 2.5, high * 3)
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    if mode == "ratio":
        ax.axhline(1.0, color="black", linewidth=1)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
        ax.set_ylabel("peer time ÷ Tessera time (log scale)\nabove 1×: Tessera is faster")
        title = "Tensor workloads: each peer's median relative to Tessera's `await shapedArray(of:)`"
        ticks = [f"{k} {workloads[k]}\nTessera {tessera[k]:.3g} ms" if isinstance(tessera.get(k), (int, float))
                 else f"{k} {workloads[k]}" for k in keys]
    else:
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_ylabel("median time per run, ms (log; lower is faster)")
        title = "Tensor workloads: median time per run"
        ticks = [f"{k}\n{workloads[k]}" for k in keys]
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(ticks, fontsize=8.5)
    ax.set_xlabel("workload")
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.legend(loc="upper left", ncol=len(names), fontsize=9, frameon=False)
    ax.set_title(f"{title}\n{machine_caption(results)}", fontsize=10.5)
    skipped = results.get("skipped", {})
    if skipped:
        fig.text(0.01, 0.005, "not measured: " + "; ".join(f"{LABELS.get(k, k)} ({v})" for k, v in skipped.items()),
                 fontsize=7, color="gray")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    fig.savefig(out_path)
    plt.close(fig)


MODEL_SERIES = {("onnxruntime", 1): "#1f77b4", ("onnxruntime", 2): "#aec7e8",
                ("torch", 1): "#ff7f0e", ("torch", 2): "#ffbb78"}


def draw_models(results: dict, out_path: str) -> None:
    """Grouped bars of peer ÷ Tessera per single-prediction model, at 1 and 2 threads."""
    rows = [row for row in results["rows"] if ", one prediction, " in row["workload"]]
    models = list(dict.fromkeys(row["workload"].split(", one prediction")[0] for row in rows))
    ratio = {}
    tessera = {}
    for row in rows:
        model = row["workload"].split(", one prediction")[0]
        threads = 1 if row["workload"].endswith(" 1 thread") else 2
        tessera[(model, threads)] = row["tessera"]
        for peer in ("onnxruntime", "torch"):
            ratio[(model, peer, threads)] = row.get(f"{peer}_ratio")
    fig, ax = plt.subplots(figsize=(11, 5.8), dpi=120)
    width = 0.8 / len(MODEL_SERIES)
    values = [v for v in ratio.values() if isinstance(v, (int, float)) and v > 0]
    for i, ((peer, threads), color) in enumerate(MODEL_SERIES.items()):
        xs = [j + (i - (len(MODEL_SERIES) - 1) / 2) * width for j in range(len(models))]
        heights = [ratio.get((m, peer, threads)) or math.nan for m in models]
        label = f"{'ONNX Runtime' if peer == 'onnxruntime' else 'PyTorch (eager)'}, {threads} thread{'s' if threads > 1 else ''}"
        bars = ax.bar(xs, heights, width * 0.92, label=label, color=color)
        for bar, v in zip(bars, heights):
            if not math.isnan(v):
                ax.annotate(f"{v:.2f}", (bar.get_x() + bar.get_width() / 2, v), xytext=(0, 2),
                            textcoords="offset points", ha="center", va="bottom", fontsize=7)
    ax.set_yscale("log")
    if values:
        ax.set_ylim(min(values + [1.0]) / 1.6, max(values + [1.0]) * 1.8)
    ax.axhline(1.0, color="black", linewidth=1)
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
    ax.set_ylabel("peer time ÷ Tessera time (log scale)\nabove 1×: Tessera is faster")

    def tick(model: str) -> str:
        times = [tessera.get((model, t)) for t in (1, 2)]
        text = " / ".join((f"{t:.0f}" if t >= 100 else f"{t:.3g}") if isinstance(t, (int, float)) else "—"
                          for t in times)
        return f"{model}\nTessera {text} ms\n(1 / 2 threads)"

    ax.set_xticks(range(len(models)))
    ax.set_xticklabels([tick(m) for m in models], fontsize=8)
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.legend(loc="upper left", ncol=2, fontsize=8.5, frameon=False)
    machine = results.get("machine", {})
    ax.set_title("Model workloads: ONNX Runtime's and PyTorch's time relative to Tessera's, one prediction\n"
                 f"{machine.get('cpu', '?')}, {machine.get('cores', '?')} cores — float32, "
                 f"{results.get('date', '')[:16]}" + busy_note(results), fontsize=10.5)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    fig.savefig(out_path)
    plt.close(fig)


def busy_note(results: dict) -> str:
    """' (other processes used 79–91 % of the CPU)' when compare_models.py recorded a busy host."""
    loads = [((results.get(side) or {}).get(key) or {}).get("other_cpu_load")
             for side, key in (("tessera", "conditions"), ("tessera", "conditions_1thread"), ("peers", "conditions"))]
    loads = [load for load in loads if isinstance(load, (int, float))]
    if not loads or max(loads) <= 0.05:
        return ""
    return f" (other processes used {min(loads):.0%}–{max(loads):.0%} of the CPU)"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default=os.path.join(HERE, "results", "results.json"))
    parser.add_argument("--out", default=os.path.join(REPO, "Docs", "performance-tensor.png"))
    parser.add_argument("--mode", choices=("ratio", "time"), help="default: ratio when Tessera's figures exist")
    parser.add_argument("--models", metavar="PATH", help="draw compare_models.py's results-models.json instead")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Load results.json, pick the mode, draw and save the PNG."""
    args = parse_args(argv)
    if args.models:
        out = args.out if "--out" in (argv or sys.argv) else os.path.join(REPO, "Docs", "performance-models.png")
        draw_models(load_results(args.models), out)
        print(f"wrote {out}", file=sys.stderr)
        return 0
    results = load_results(args.results)
    mode = args.mode or ("ratio" if results.get("tessera") and results.get("ratios") else "time")
    if mode == "ratio" and not results.get("ratios"):
        raise SystemExit("no Tessera figures in results.json: use --mode time")
    draw(results, mode, args.out)
    print(f"wrote {args.out} ({mode})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
