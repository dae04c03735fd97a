#!/usr/bin/env python3
"""Merge Tessera's model-workload figures with ONNX Runtime's and PyTorch's and print one table.

Inputs:
  * Tessera: `--tessera-json PATH` (written by `TesseraBenchmarks models compile --models-dir DIR
    --models-json PATH`), or `--tessera-binary PATH`, which runs that now;
  * peers: `--peers-json PATH` (written by `model_workloads.py --models-dir DIR --json PATH`), or
    `--peers`, which runs model_workloads.py now with this interpreter, right after Tessera, so
    that the whole table comes from one run.

Rows: M1, M2, M3, M6 and M7 (one prediction, at 1 and at 2 threads:
Tessera runs a second time with TESSERA_NUM_THREADS=1 and only these, the peers with
torch.set_num_threads / intra_op_num_threads), M4 (ms per input for batches of 1, 8 and 32, run as one batch
and as a loop of single predictions, on the flexible-batch m4 model), M5 (8 threads x 8
predictions on one shared M3 model, and the same 64 serially: ms per prediction), load
times of every model (Tessera's `MLModel(contentsOf:)` of the package and of the compiled model,
next to ONNX Runtime's session creation) and the first prediction of a freshly loaded model
(next to ORT's first run of a fresh session; the note gives each side's first ÷ warm ratio). Ratios are `peer / Tessera`: above 1 means Tessera is faster.

With both sides run now, `--rounds N` (default 4) times the one-prediction rows N more times,
and the loads of M1, M3, M4 and M7 (Tessera's package and compiled loads, ORT's session
creation), Tessera and ONNX Runtime taking turns, and each of their figures is the least of the
N + 1 runs' medians: a slow minute on a shared machine then costs a side one run, not its whole
column.

Outputs (in --out-dir): results-models.json and results-models.md; the Markdown is also printed.

Examples:
  python compare_models.py --tessera-binary .build/release/TesseraBenchmarks --peers --models-dir /tmp/models
  python compare_models.py --tessera-json tessera-models.json --peers-json peers-models.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time

from tensor_workloads import THREADS, cpu_seconds, machine_info, other_load, wait_for_idle, write_results

HERE = os.path.dirname(os.path.abspath(__file__))
BATCHES = (1, 8, 32)
LOAD_MODELS = {
    "m1": "M1 MobileNetV2", "m2": "M2 ResNet-50", "m3": "M3 transformer layer", "m4": "M4 flexible batch",
    "m6": "M6 BERT-base encoder", "m7": "M7 Whisper-tiny-sized encoder",
}
# The single-prediction rows, each at 1 and 2 threads; a model without figures has no row.
SINGLE_MODELS = {
    "m1": "M1 MobileNetV2", "m2": "M2 ResNet-50", "m3": "M3 transformer layer",
    "m6": "M6 BERT-base encoder", "m7": "M7 Whisper-tiny-sized encoder",
}
SINGLE_THREADS = (1, 2)


def load_json(path: str) -> dict:
    """Read a JSON file."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def load_average() -> float | None:
    """The 1-minute load average, or None where the OS does not say."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


# The TesseraBenchmarks binary whose `roundtrip` area `core_round_trip` runs (set by main), or None.
ROUND_TRIP_BINARY: str | None = None


def core_round_trip() -> float | None:
    """A cache line's round trip between two threads' cores in ns (`TesseraBenchmarks roundtrip`),
    or None without the binary, with one CPU or when it fails. On a VM the host moves the vCPUs
    between cores that share a cache (tens of ns) and cores far apart (hundreds), which moves
    two-thread figures of small models by 10-30 %: `measured` records it around every run."""
    if ROUND_TRIP_BINARY is None:
        return None
    try:
        output = subprocess.run([ROUND_TRIP_BINARY, "roundtrip"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"round trip ([0-9.]+) ns", output)
    return float(match[1]) if match else None


def measured(label: str, command: list[str], idle_wait: float, max_load: float, env: dict | None = None) -> dict:
    """Wait for an idle machine, run `command` (its output goes to stderr) and say how busy
    other processes kept the machine meanwhile and how far apart the cores were right before
    and after it: {"other_cpu_load", "load_average", "round_trip_ns": [before, after]} (the
    round trips None where `core_round_trip` has none)."""
    average = load_average()
    if idle_wait > 0:
        idle = wait_for_idle(max_load, idle_wait)
        if idle is not None and idle > max_load:
            print(f"warning: the machine did not become idle within {idle_wait:.0f} s "
                  f"(other processes use {idle:.0%} of the CPU); measuring {label} anyway", file=sys.stderr)
    elif average is not None and average > 0.5 * (os.cpu_count() or 1):
        # Without the idle wait, the 1-minute load average (which lags) is all there is to go by.
        print(f"warning: load average {average} on {os.cpu_count()} cores before {label}; "
              "its figures may be skewed", file=sys.stderr)
    trip_before = core_round_trip()
    print("running " + " ".join(command), file=sys.stderr, flush=True)
    before, start = cpu_seconds(), time.perf_counter()
    try:
        subprocess.run(command, check=True, stdout=sys.stderr, env=env)
    except (OSError, subprocess.CalledProcessError) as error:
        raise SystemExit(f"{label} failed: {error}") from error
    load = other_load(before, cpu_seconds(), time.perf_counter() - start)
    return {"other_cpu_load": load, "load_average": average, "round_trip_ns": [trip_before, core_round_trip()]}


def least_disturbed(label: str, command: list[str], out_path: str, attempts: int, idle_wait: float,
                    max_load: float, env: dict | None = None) -> dict:
    """Run `command` (which writes out_path) up to `attempts` times, until other processes used
    at most `max_load` of the CPU during a run; return the least disturbed run's JSON, with its
    `conditions` (and `runs_made`, how many runs it took)."""
    best = None
    for attempt in range(1, max(attempts, 1) + 1):
        conditions = measured(label, command, idle_wait, max_load, env)
        document = load_json(out_path)
        load = conditions.get("other_cpu_load")
        if best is None or (load is not None and load < (best[1].get("other_cpu_load") or 1.0)):
            best = (document, conditions)
        if load is None or load <= max_load:
            break
        print(f"{label}: other processes used {load:.0%} of the CPU during the run; measuring again",
              file=sys.stderr)
    document, conditions = best
    conditions["runs_made"] = attempt
    document["conditions"] = conditions
    with open(out_path, "w", encoding="utf-8") as f:  # the kept run, not the last one
        json.dump(document, f, indent=2)
    return document


def run_tessera(binary: str, models_dir: str, out_path: str, attempts: int, idle_wait: float, max_load: float) -> dict:
    """Run `binary models compile --models-dir DIR --models-json out_path` (2 threads), then the
    single predictions again with TESSERA_NUM_THREADS=1, and load both: the one-thread figures
    go under `by_threads["1"]`, the two-thread ones under `by_threads["2"]` and at the top."""
    command = [binary, "models", "compile", "--models-dir", models_dir, "--models-json", out_path]
    env = dict(os.environ, TESSERA_NUM_THREADS=str(THREADS))
    document = least_disturbed("Tessera", command, out_path, attempts, idle_wait, max_load, env)
    entry = document.get("tessera", {})
    entry["conditions"] = document["conditions"]
    models = entry.setdefault("models", {})
    models["by_threads"] = {str(THREADS): {k: v for k, v in models.items() if k in SINGLE_MODELS}}
    one_path = out_path.replace(".json", "-1thread.json")
    command = [binary, "models", "--models-dir", models_dir, "--models-json", one_path]
    env = dict(os.environ, TESSERA_NUM_THREADS="1", TESSERA_BENCH_SINGLE_ONLY="1")
    one = least_disturbed("Tessera (1 thread)", command, one_path, attempts, idle_wait, max_load, env)
    models["by_threads"]["1"] = (one.get("tessera", {}).get("models") or {})
    entry["conditions_1thread"] = one["conditions"]
    return entry


def run_peers(models_dir: str, out_path: str, runs: int, attempts: int, idle_wait: float, max_load: float) -> dict:
    """Run model_workloads.py with this interpreter (2 threads) and load its JSON."""
    command = [sys.executable, os.path.join(HERE, "model_workloads.py"), "--models-dir", models_dir,
               "--json", out_path, "--runs", str(runs)]
    env = dict(os.environ, OMP_NUM_THREADS=str(THREADS), OPENBLAS_NUM_THREADS=str(THREADS),
               MKL_NUM_THREADS=str(THREADS))
    return least_disturbed("the peers", command, out_path, attempts, idle_wait, max_load, env)


def run_rounds(binary: str, models_dir: str, out_dir: str, tessera: dict, peers: dict, rounds: int, runs: int,
               idle_wait: float, max_load: float) -> list[dict]:
    """Time the single predictions `rounds` more times, Tessera and ONNX Runtime taking turns
    (at 1 thread, then at 2; who goes first alternates by round), and replace each side's
    `median_ms` by the least of the first run's and the rounds' medians (all kept as `runs_ms`).
    On a shared VM a slow minute (a busy neighbour, a throttled core) only ever adds time, to
    one side's run or the other's; the least of several turns is what each side does when left
    alone. PyTorch keeps its figure from the first run. Each round also times the loads of
    ROUND_LOADS (``load_round``), whose figures become the least of theirs the same way (kept as
    `package_ms_runs`, `compiled_ms_runs`, `median_ms_runs`), and so do the first predictions of
    freshly loaded models (`first_prediction_ms_runs`, `first_run_ms_runs`). Each one-prediction
    entry also keeps the cores' round trip before and after each of its runs
    (`runs_round_trip_ns`, see `core_round_trip`) and the kept run's (`kept_round_trip_ns`).
    Returns each round's conditions."""
    ort = peers.setdefault("onnxruntime", {})
    by_threads = {"tessera": (tessera.get("models") or {}).get("by_threads") or {}, "onnxruntime": ort.get("by_threads") or {}}
    first = {(side, str(t)): by_threads[side].get(str(t)) or {} for side in by_threads for t in SINGLE_THREADS}
    samples = {key: {name: [figures[name]["median_ms"]] for name in SINGLE_MODELS if dig(figures, name, "median_ms") is not None}
               for key, figures in first.items()}
    # The round trips around each sample's run, in the same order; the first runs' from their conditions.
    first_conditions = {("tessera", str(THREADS)): tessera.get("conditions"), ("tessera", "1"): tessera.get("conditions_1thread"),
                        **{("onnxruntime", str(t)): peers.get("conditions") for t in SINGLE_THREADS}}
    trips = {key: {name: [(first_conditions.get(key) or {}).get("round_trip_ns")] for name in by_name}
             for key, by_name in samples.items()}
    log = []
    load_samples: dict = {}
    for number in range(1, rounds + 1):
        for threads in SINGLE_THREADS:
            t = str(threads)
            sides = ("tessera", "onnxruntime") if number % 2 else ("onnxruntime", "tessera")
            for side in sides:
                path = os.path.join(out_dir, f"round-{side}-{t}thread.json")
                if side == "tessera":
                    command = [binary, "models", "--models-dir", models_dir, "--models-json", path]
                    env = dict(os.environ, TESSERA_NUM_THREADS=t, TESSERA_BENCH_SINGLE_ONLY="1")
                else:
                    command = [sys.executable, os.path.join(HERE, "model_workloads.py"), "--models-dir", models_dir,
                               "--single-only", t, "--peers", "onnxruntime", "--json", path, "--runs", str(runs)]
                    env = dict(os.environ, OMP_NUM_THREADS=t, OPENBLAS_NUM_THREADS=t, MKL_NUM_THREADS=t)
                conditions = measured(f"{side} round {number} at {t} thread(s)", command, idle_wait, max_load, env)
                document = load_json(path)
                figures = ((document.get("tessera") or {}).get("models") or {}) if side == "tessera" else \
                    (((document.get("onnxruntime") or {}).get("by_threads") or {}).get(t) or {})
                for name in SINGLE_MODELS:
                    value = dig(figures, name, "median_ms")
                    if value is not None:
                        samples[(side, t)].setdefault(name, []).append(value)
                        trips[(side, t)].setdefault(name, []).append(conditions.get("round_trip_ns"))
                log.append({"round": number, "side": side, "threads": threads, **conditions})
        log += load_round(binary, models_dir, out_dir, tessera, peers, number, idle_wait, max_load, load_samples)
    for (side, t), by_name in samples.items():
        for name, values in by_name.items():
            entry = first[(side, t)].get(name)
            if not isinstance(entry, dict):
                continue
            entry["runs_ms"] = values
            entry["median_ms"] = min(values)
            entry["runs_round_trip_ns"] = trips[(side, t)][name]
            entry["kept_round_trip_ns"] = entry["runs_round_trip_ns"][values.index(entry["median_ms"])]
            if t == str(THREADS):  # the top-level two-thread entries, where they are separate objects
                top = (tessera.get("models") or {}).get(name) if side == "tessera" else ort.get(name)
                if isinstance(top, dict) and top is not entry:
                    for field in ("runs_ms", "median_ms", "runs_round_trip_ns", "kept_round_trip_ns"):
                        top[field] = entry[field]
    for (side, name, field), values in load_samples.items():
        entry = ((tessera.get("compile") or {}).get(name) if side == "tessera"
                 else ((ort.get("session_creation") or {}).get(name)))
        if isinstance(entry, dict) and values:
            entry[f"{field}_runs"] = values
            entry[field] = min(values)
    return log


# The loads timed again in each round: the small models, whose loads take milliseconds (M2's and
# M6's take tens, and compiling M6 takes seconds).
ROUND_LOADS = ("m1", "m3", "m4", "m7")
# The figures each load round gives again: the loads, and the first prediction of a freshly loaded
# model (compared with the warm figure, itself the least of the rounds', so it is taken the same way).
TESSERA_ROUND_FIELDS = ("package_ms", "compiled_ms", "first_prediction_ms")
ORT_ROUND_FIELDS = ("median_ms", "first_run_ms")


def load_round(binary: str, models_dir: str, out_dir: str, tessera: dict, peers: dict, number: int,
               idle_wait: float, max_load: float, samples: dict) -> list[dict]:
    """One round of the loads of ROUND_LOADS: Tessera's `compile` area (package and compiled
    `MLModel` loads) and ONNX Runtime's session creation, taking turns (who goes first
    alternates by round). Appends each figure to `samples[(side, model, field)]`, after the
    first run's own figure; returns the round's conditions."""
    if not samples:
        for name in ROUND_LOADS:
            for field in TESSERA_ROUND_FIELDS:
                value = dig(tessera, "compile", name, field)
                if value is not None:
                    samples[("tessera", name, field)] = [value]
            for field in ORT_ROUND_FIELDS:
                value = dig(peers, "onnxruntime", "session_creation", name, field)
                if value is not None:
                    samples[("onnxruntime", name, field)] = [value]
    log = []
    for side in (("tessera", "onnxruntime") if number % 2 else ("onnxruntime", "tessera")):
        path = os.path.join(out_dir, f"round-{side}-loads.json")
        if side == "tessera":
            command = [binary, "compile", "--models-dir", models_dir, "--models-json", path]
            env = dict(os.environ, TESSERA_NUM_THREADS=str(THREADS), TESSERA_BENCH_MODELS=",".join(ROUND_LOADS))
        else:
            command = [sys.executable, os.path.join(HERE, "model_workloads.py"), "--models-dir", models_dir,
                       "--loads-only", "--only", ",".join(ROUND_LOADS), "--json", path]
            env = dict(os.environ, OMP_NUM_THREADS=str(THREADS))
        conditions = measured(f"{side} loads, round {number}", command, idle_wait, max_load, env)
        document = load_json(path)
        for name in ROUND_LOADS:
            area = ("tessera", "compile") if side == "tessera" else ("onnxruntime", "session_creation")
            for field in TESSERA_ROUND_FIELDS if side == "tessera" else ORT_ROUND_FIELDS:
                value = dig(document, *area, name, field)
                if value is not None and (side, name, field) in samples:
                    samples[(side, name, field)].append(value)
        log.append({"round": number, "side": side, "loads": list(ROUND_LOADS), **conditions})
    return log


def dig(document: dict | None, *keys):
    """`document[k0][k1]...`, or None where a key is missing or the value is not a number."""
    value = document
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def round_trip_note(tessera_entry, ort_entry) -> str:
    """A two-thread row's note on the cores, from each side's `kept_round_trip_ns`, such as
    "cores' round trip around the kept runs (ns, before/after): Tessera 82/110, ORT 331/302";
    empty when neither side has one."""
    parts = []
    for label, entry in (("Tessera", tessera_entry), ("ORT", ort_entry)):
        trip = entry.get("kept_round_trip_ns") if isinstance(entry, dict) else None
        if isinstance(trip, list) and any(isinstance(value, (int, float)) for value in trip):
            parts.append(label + " " + "/".join(f"{value:.0f}" if isinstance(value, (int, float)) else "?"
                                                for value in trip))
    return "cores' round trip around the kept runs (ns, before/after): " + ", ".join(parts) if parts else ""


def rows(tessera: dict, peers: dict) -> list[dict]:
    """The table's rows: workload, unit, Tessera's figure, ONNX Runtime's, PyTorch's, a note."""
    models, compile_ = tessera.get("models", {}), tessera.get("compile", {})
    ort, torch = peers.get("onnxruntime", {}), peers.get("torch", {})
    table = []
    for key, name in SINGLE_MODELS.items():
        for threads in SINGLE_THREADS:
            t = str(threads)
            figures = [dig(models, "by_threads", t, key, "median_ms"), dig(ort, "by_threads", t, key, "median_ms"),
                       dig(torch, "by_threads", t, key, "median_ms")]
            if all(figure is None for figure in figures):
                continue
            error = dig(models, "by_threads", t, key, "max_abs_error")
            ort_error = dig(ort, "by_threads", t, key, "max_abs_error")
            note = "" if error is None else f"max \\|Δ\\| vs PyTorch {error:.1e}"
            if ort_error is not None:
                note += f" (ORT {ort_error:.1e})"
            if threads > 1:
                trips = round_trip_note(((models.get("by_threads") or {}).get(t) or {}).get(key),
                                        ((ort.get("by_threads") or {}).get(t) or {}).get(key))
                note = "; ".join(part for part in (note.strip(), trips) if part)
            table.append({
                "workload": f"{name}, one prediction, {threads} thread{'s' if threads > 1 else ''}", "unit": "ms",
                "tessera": figures[0], "onnxruntime": figures[1], "torch": figures[2], "note": note.strip(),
            })
    for size in BATCHES:
        batch = f"batch{size}"
        one = (models.get("m4", {}).get(batch) or {}).get("one_execution")
        for mode, label in (("batched", "as one batch"), ("loop", "loop of singles")):
            note = ""
            if mode == "batched" and one is not None:
                note = "Tessera: one execution" if one else "Tessera: ran as a loop"
            table.append({
                "workload": f"M4 batch of {size}, {label}", "unit": "ms/input",
                "tessera": dig(models, "m4", batch, f"{mode}_ms_per_input"),
                "onnxruntime": dig(ort, "m4", batch, f"{mode}_ms_per_input"), "torch": None, "note": note,
            })
    rss = dig(models, "m5", "peak_rss_mb")
    for mode, label in (("concurrent", "8 threads × 8 on one model"), ("serial", "the same 64 serially")):
        table.append({
            "workload": f"M5 {label}", "unit": "ms/pred",
            "tessera": dig(models, "m5", f"{mode}_ms_per_prediction"),
            "onnxruntime": dig(ort, "m5", f"{mode}_ms_per_prediction"), "torch": None,
            "note": f"Tessera peak RSS {rss:.0f} MB (whole process)" if mode == "concurrent" and rss else "",
        })
    for key, name in LOAD_MODELS.items():
        compile_ms = dig(compile_, key, "compile_ms")
        for form in ("package", "compiled"):
            table.append({
                "workload": f"load {name}, Tessera {form} / ORT session", "unit": "ms",
                "tessera": dig(compile_, key, f"{form}_ms"),
                "onnxruntime": dig(ort, "session_creation", key, "median_ms"), "torch": None,
                "note": f"compileModel {compile_ms:.0f} ms" if form == "compiled" and compile_ms else "",
            })
    for key, name in LOAD_MODELS.items():
        first, ort_first = dig(compile_, key, "first_prediction_ms"), dig(ort, "session_creation", key, "first_run_ms")
        note = "median of 5 fresh loads"
        warm, ort_warm = dig(models, key, "median_ms"), dig(ort, key, "median_ms")
        if first and warm:
            note += f"; first ÷ warm: Tessera {first / warm:.2f}×"
            if ort_first and ort_warm:
                note += f", ORT {ort_first / ort_warm:.2f}×"
        table.append({
            "workload": f"{name}, first prediction of a fresh model", "unit": "ms",
            "tessera": first, "onnxruntime": ort_first, "torch": None, "note": note,
        })
    for key in ("compile_fp32", "compile_fp16"):
        entry = compile_.get(key) or {}
        size = dig(entry, "compiled_mb")
        for form in ("package", "compiled"):
            if dig(entry, f"{form}_ms") is None:
                continue
            table.append({
                "workload": f"load {key} ({size:.0f} MB compiled), Tessera {form}" if size else f"load {key}, {form}",
                "unit": "ms", "tessera": dig(entry, f"{form}_ms"), "onnxruntime": None, "torch": None,
                "note": f"open {format_ms(dig(entry, f'open_{form}_ms'))} ms" if dig(entry, f"open_{form}_ms") else "",
            })
    for row in table:
        for peer in ("onnxruntime", "torch"):
            t, p = row["tessera"], row[peer]
            row[f"{peer}_ratio"] = round(p / t, 4) if t and p is not None else None
    return table


def format_ms(value) -> str:
    """A figure with three significant digits, or an em dash."""
    if not isinstance(value, (int, float)):
        return "—"
    return f"{value:.0f}" if value >= 1000 else f"{value:#.3g}".rstrip(".")


def format_ratio(value) -> str:
    """A ratio as 'x.xx×', or an em dash."""
    return "—" if value is None else f"{value:.2f}×"


def conditions_text(label: str, conditions: dict | None) -> str:
    """'Tessera: other processes 3 %, load average 0.4' for the caption."""
    conditions = conditions or {}
    other, average = conditions.get("other_cpu_load"), conditions.get("load_average")
    parts = []
    if isinstance(other, (int, float)):
        parts.append(f"other processes {other:.0%} of the CPU")
    if isinstance(average, (int, float)):
        parts.append(f"1-minute load average {average} before the idle wait")
    if conditions.get("runs_made", 1) > 1:
        parts.append(f"least disturbed of {conditions['runs_made']} runs")
    return f"{label}: " + (", ".join(parts) if parts else "not recorded")


def markdown(results: dict) -> str:
    """The results as Markdown: caption, one table, notes and warnings."""
    machine, peers, tessera = results["machine"], results["peers"], results["tessera"]
    ort_version = peers.get("onnxruntime", {}).get("version", "")
    torch_version = peers.get("torch", {}).get("version", "")
    lines = [
        "## Model workloads: Tessera vs ONNX Runtime and PyTorch",
        "",
        f"Machine: {machine.get('cpu', '?')}, {machine.get('cores', '?')} cores, {machine.get('os', '')}; "
        f"float32, {peers.get('threads', THREADS)} threads unless a row says 1; {results['date']}. "
        + conditions_text("Tessera", tessera.get("conditions")) + "; "
        + conditions_text("Tessera at 1 thread", tessera.get("conditions_1thread")) + "; "
        + conditions_text("peers", peers.get("conditions")) + ".",
        "",
        f"| workload | unit | Tessera | ONNX Runtime {ort_version} | ORT / Tessera "
        f"| PyTorch {torch_version} eager | PyTorch / Tessera | note |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for row in results["rows"]:
        lines.append("| " + " | ".join([
            row["workload"], row["unit"], format_ms(row["tessera"]), format_ms(row["onnxruntime"]),
            format_ratio(row["onnxruntime_ratio"]), format_ms(row["torch"]), format_ratio(row["torch_ratio"]),
            row["note"],
        ]) + " |")
    rounds = 1 + max((entry.get("round", 0) for entry in results.get("rounds") or []), default=0)
    lines += [
        "",
        "Ratios are peer / Tessera: above 1× Tessera is faster. Medians; M1/M3 of ≥ 20 predictions "
        "(M6/M7 of ≥ 8), "
        "M4/M5 of 5 runs, loads of 40 (Tessera) and 20 (ORT session creation; M2, M6, M7: 5 each) from a warm page cache.",
    ]
    if rounds > 1:
        lines.append(f"One-prediction rows and the loads of {', '.join(name.upper() for name in ROUND_LOADS)}: "
                     f"Tessera's and ONNX Runtime's figures are the least of {rounds} runs' "
                     "medians, the two sides taking turns (PyTorch's from the first run).")
    if any("round trip" in row["note"] for row in results["rows"]):
        lines.append("Cores' round trip: a cache line passed back and forth between two threads "
                     "(`TesseraBenchmarks roundtrip`) right before and after each run, tens of ns between cores "
                     "that share a cache, hundreds between cores far apart. A VM's host may move its vCPUs "
                     "between the two within seconds; two-thread figures of the small models move by 10–30 % "
                     "with it.")
    loaded = {label: (entry.get("conditions") or {}).get("other_cpu_load")
              for label, entry in (("Tessera", tessera), ("the peers", peers))}
    loaded = {label: load for label, load in loaded.items() if isinstance(load, (int, float)) and load > 0.05}
    if loaded:
        lines.append("Warning: other processes kept the CPU busy while measuring "
                     + ", ".join(f"{label} ({load:.0%})" for label, load in loaded.items())
                     + "; those figures are skewed: rerun on an idle machine.")
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    tessera = parser.add_mutually_exclusive_group(required=True)
    tessera.add_argument("--tessera-json", metavar="PATH", help="Tessera's JSON (TesseraBenchmarks --models-json)")
    tessera.add_argument("--tessera-binary", metavar="PATH", help="run `PATH models compile ... --models-json ...` now")
    peers = parser.add_mutually_exclusive_group(required=True)
    peers.add_argument("--peers-json", metavar="PATH", help="the peers' JSON from model_workloads.py")
    peers.add_argument("--peers", action="store_true", help="run model_workloads.py now")
    parser.add_argument("--models-dir", metavar="DIR", default=os.path.join(HERE, "..", "..", ".build", "bench-models"),
                        help="where the models are (model_workloads.py --make-models, make_compile_model.py)")
    parser.add_argument("--runs", type=int, default=30, help="with --peers: timed runs per M1/M3 prediction")
    parser.add_argument("--rounds", type=int, default=4,
                        help="with --tessera-binary and --peers: extra interleaved rounds of the single "
                             "predictions (Tessera and ONNX Runtime take turns; each row is the least median)")
    parser.add_argument("--attempts", type=int, default=3,
                        help="runs of a side disturbed by other processes (the least disturbed is kept)")
    parser.add_argument("--idle-wait", type=float, default=60.0,
                        help="seconds to wait for an idle machine before each side runs (0: do not wait)")
    parser.add_argument("--max-load", type=float, default=0.05,
                        help="share of the CPU other processes may use for the machine to count as idle")
    parser.add_argument("--out-dir", default=os.path.join(HERE, "results"), help="where results-models.* go")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Collect both sides, merge, print the Markdown table and write results-models.json/.md."""
    args = parse_args(argv)
    global ROUND_TRIP_BINARY
    ROUND_TRIP_BINARY = args.tessera_binary
    os.makedirs(args.out_dir, exist_ok=True)
    models_dir = os.path.abspath(args.models_dir)
    sources = {}
    if args.tessera_binary:
        tessera = run_tessera(args.tessera_binary, models_dir, os.path.join(args.out_dir, "tessera-models.json"),
                              args.attempts, args.idle_wait, args.max_load)
        sources["tessera"] = f"{args.tessera_binary} models compile --models-dir {models_dir} (this run)"
    else:
        document = load_json(args.tessera_json)
        tessera = document.get("tessera", {})
        if document.get("conditions"):  # written by an earlier run of this script
            tessera.setdefault("conditions", document["conditions"])
        sources["tessera"] = os.path.abspath(args.tessera_json)
    if args.peers:
        peers = run_peers(models_dir, os.path.join(args.out_dir, "peers-models.json"), args.runs,
                          args.attempts, args.idle_wait, args.max_load)
        sources["peers"] = "model_workloads.py (this run)"
    else:
        peers = load_json(args.peers_json)
        sources["peers"] = os.path.abspath(args.peers_json)
    rounds = []
    if args.tessera_binary and args.peers and args.rounds > 0:
        rounds = run_rounds(args.tessera_binary, models_dir, args.out_dir, tessera, peers, args.rounds, args.runs,
                            args.idle_wait, args.max_load)
    if not tessera.get("models") and not tessera.get("compile"):
        print("warning: Tessera's JSON has neither models nor compile figures", file=sys.stderr)
    results = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "sources": sources,
        "tessera": tessera,
        "peers": peers,
        "rounds": rounds,
    }
    results["rows"] = rows(tessera, peers)
    text = markdown(results)
    write_results(args.out_dir, "results-models", results, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
