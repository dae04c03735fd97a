#!/usr/bin/env python3
"""Merge Tessera's tensor-benchmark medians with the peers' and print one comparison table.

Inputs:
  * Tessera: `--tessera-json PATH` (schema `{"tessera": {"version": "...", "T1": ms, ..., "T9": ms}}`,
    written by `TesseraBenchmarks tensor --json PATH`), or `--tessera-binary PATH`, which runs
    `PATH tensor --json <out-dir>/tessera.json` now;
  * peers: `--peers-json PATH` (written by tensor_workloads.py), or `--peers`, which runs
    tensor_workloads.py now with this interpreter, right after Tessera, so that the whole table
    comes from one run.

With both `--tessera-binary` and `--peers`, each side is measured `--rounds` times (default 2)
in alternating order (Tessera, peers, peers, Tessera, ...) and each workload keeps its lowest
median per side, so a host whose speed drifts during the run favours neither side.

Tessera's headline figure per workload (`T1`…) is the awaited one, `await shapedArray(of:)` from
an async context as Apple's API is written; its JSON also carries the same code blocking
(`T1_blocking`…) and Tessera's one-plan extension (`T1_extension`…), shown beside it.

Outputs (in --out-dir): results.json and results.md; the Markdown table is also printed.
Ratio columns are `peer / Tessera` (the awaited figure): above 1 means Tessera is faster.
`--tessera-preload-openblas` runs Tessera's side with OpenBLAS loaded before it (LD_PRELOAD), as in
a process that links `-lopenblas`.

Examples:
  python compare.py --tessera-binary .build/release/TesseraBenchmarks --peers
  python compare.py --tessera-json tessera.json --peers-json sample-peers.json --out-dir /tmp/cmp
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time

from tensor_workloads import PEERS, WORKLOADS, cpu_seconds, other_load, wait_for_idle, write_results

HERE = os.path.dirname(os.path.abspath(__file__))
# Tessera's other figures per workload, beside the awaited headline.
TESSERA_VARIANTS = ("blocking", "extension")
PEER_LABELS = {"numpy": "NumPy", "jax": "JAX jit", "mlx": "MLX cpu", "torch": "PyTorch eager"}


def load_json(path: str) -> dict:
    """Read a JSON file."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def run_tessera(binary: str, out_path: str, idle_wait: float, preload_openblas: bool = False,
                threads: int | None = None) -> dict:
    """Run `binary tensor --json out_path` (its progress goes to stderr) and load the JSON.

    Waits up to `idle_wait` seconds for an idle machine first, and records in the entry, as
    `other_cpu_load`, how busy other processes kept the machine during the run. With
    `preload_openblas`, OpenBLAS is loaded into the process before Tessera (LD_PRELOAD); with
    `threads`, Tessera runs that many kernel threads (TESSERA_NUM_THREADS).
    """
    if idle_wait > 0:
        wait_for_idle(0.05, idle_wait)
    print(f"running {binary} tensor --json {out_path}", file=sys.stderr, flush=True)
    before, start = cpu_seconds(), time.perf_counter()
    try:
        environment = dict(os.environ)
        if preload_openblas:
            environment["LD_PRELOAD"] = "libopenblas.so.0"
        if threads:
            environment["TESSERA_NUM_THREADS"] = str(threads)
        subprocess.run([binary, "tensor", "--json", out_path], check=True, stdout=sys.stderr, env=environment)
    except (OSError, subprocess.CalledProcessError) as error:
        raise SystemExit(f"Tessera's benchmark failed: {error}") from error
    load = other_load(before, cpu_seconds(), time.perf_counter() - start)
    document = load_json(out_path)
    if isinstance(document.get("tessera"), dict):
        document["tessera"].setdefault("other_cpu_load", load)
    return document


def run_peers(out_path: str, runs: int, peers: str | None, attempts: int, idle_wait: float,
              threads: int | None = None) -> dict:
    """Run tensor_workloads.py with this interpreter, writing its JSON to out_path, and load it."""
    command = [sys.executable, os.path.join(HERE, "tensor_workloads.py"), "--json", out_path,
               "--runs", str(runs), "--attempts", str(attempts), "--idle-wait", str(idle_wait)]
    if peers:
        command += ["--peers", peers]
    if threads:
        command += ["--threads", str(threads)]
    print("running " + " ".join(command), file=sys.stderr, flush=True)
    try:
        subprocess.run(command, check=True)
    except subprocess.CalledProcessError as error:
        raise SystemExit(f"tensor_workloads.py failed: {error}") from error
    return load_json(out_path)


def best_of_rounds(entries: list[dict]) -> dict:
    """One side's figures from several rounds: per workload, the round with the lowest median.

    Both sides are treated alike, so the host's speed drifting during the comparison (it does
    on shared machines) does not favour whichever side ran in the faster minutes. The entry
    keeps every round's medians under `rounds`; a check that failed in any round shows, and
    `other_cpu_load` is the highest of the rounds'.
    """
    best = dict(entries[0])
    best["rounds"] = [{key: entry.get(key) for key in WORKLOADS} for entry in entries]
    for key in WORKLOADS:
        measured = [(entry[key], i) for i, entry in enumerate(entries) if isinstance(entry.get(key), (int, float))]
        if not measured:
            continue
        value, index = min(measured)
        best[key] = value
        if key == "T5" and "T5_raw_sgemm" in entries[index]:
            best["T5_raw_sgemm"] = entries[index]["T5_raw_sgemm"]
        for variant in TESSERA_VARIANTS:
            name = f"{key}_{variant}"
            figures = [entry[name] for entry in entries if isinstance(entry.get(name), (int, float))]
            if figures:
                best[name] = min(figures)
        stats = entries[index].get("stats")
        if isinstance(stats, dict) and key in stats:
            best["stats"] = {**best.get("stats", {}), key: stats[key]}
    checks: dict = {}
    for entry in entries:
        for key, verdict in entry.get("check", {}).items():
            if checks.get(key, "ok") == "ok":
                checks[key] = verdict
    if checks:
        best["check"] = checks
    loads = [entry["other_cpu_load"] for entry in entries if isinstance(entry.get("other_cpu_load"), (int, float))]
    if loads:
        best["other_cpu_load"] = max(loads)
    return best


def merge_peer_rounds(documents: list[dict]) -> dict:
    """The peers' documents of several rounds as one (see best_of_rounds)."""
    merged = dict(documents[0])
    merged["peers"] = {}
    for name in PEERS:
        entries = [document["peers"][name] for document in documents if name in document.get("peers", {})]
        if entries:
            merged["peers"][name] = best_of_rounds(entries)
    merged["skipped"] = {name: reason for name, reason in documents[0].get("skipped", {}).items()
                         if name not in merged["peers"]}
    merged["protocol"] = {**documents[0].get("protocol", {}), "rounds": len(documents)}
    return merged


def validate_tessera(document: dict) -> dict:
    """Return the `tessera` entry of Tessera's JSON, checking it has a number for each workload."""
    if "tessera" not in document:
        raise SystemExit('Tessera JSON has no "tessera" key; expected {"tessera": {"version": ..., "T1": ms, ...}}')
    entry = document["tessera"]
    missing = [k for k in WORKLOADS if not isinstance(entry.get(k), (int, float))]
    if missing:
        print(f"warning: Tessera JSON lacks {', '.join(missing)}", file=sys.stderr)
    return entry


def ratios(tessera: dict | None, peers: dict) -> dict:
    """`peer / Tessera` per peer and workload (None where either side is missing or zero)."""
    table: dict = {}
    for name, entry in peers.items():
        row = {}
        for key in WORKLOADS:
            t, p = (tessera or {}).get(key), entry.get(key)
            row[key] = round(p / t, 4) if isinstance(t, (int, float)) and t > 0 and isinstance(p, (int, float)) else None
        table[name] = row
    return table


def merge(tessera: dict | None, peers_document: dict, sources: dict) -> dict:
    """The results document: machine, protocol, Tessera's and peers' medians, ratios."""
    peers = {name: peers_document["peers"][name] for name in PEERS if name in peers_document.get("peers", {})}
    return {
        "date": peers_document.get("date") or datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": peers_document.get("machine", {}),
        "protocol": peers_document.get("protocol", {}),
        "workloads": WORKLOADS,
        "sources": sources,
        "tessera": tessera,
        "peers": peers,
        "skipped": peers_document.get("skipped", {}),
        "ratios": ratios(tessera, peers) if tessera else {},
    }


def format_ms(value) -> str:
    """A median in ms with three significant digits, or an em dash."""
    if not isinstance(value, (int, float)):
        return "—"
    return f"{value:.0f}" if value >= 1000 else f"{value:#.3g}".rstrip(".")


def format_ratio(value) -> str:
    """A ratio as 'x.xx×', or an em dash."""
    return "—" if value is None else (f"{value:.2f}×" if value < 100 else f"{value:.0f}×")


def peer_header(name: str, entry: dict) -> str:
    """Column title: peer label and version."""
    return f"{PEER_LABELS.get(name, name)} {entry.get('version', '')}".strip()


def markdown(results: dict) -> str:
    """The results as Markdown: caption, one table of medians and ratios, notes."""
    tessera, peers, table_ratios = results["tessera"], results["peers"], results["ratios"]
    machine = results["machine"]
    protocol = results["protocol"]
    header = ["workload"]
    blocking = bool(tessera) and any(isinstance(tessera.get(f"{k}_blocking"), (int, float)) for k in WORKLOADS)
    if tessera:
        header.append(f"Tessera {tessera.get('version', '')}".strip() + (" await ms" if blocking else " ms"))
    if blocking:
        header += ["Tessera blocking ms", "await / blocking"]
    header += [peer_header(name, entry) + " ms" for name, entry in peers.items()]
    if tessera:
        header += [f"{PEER_LABELS.get(name, name).split()[0]} / Tessera" for name in peers]
    rounds = protocol.get("rounds", 1)
    rounds_note = (f", the lower of {rounds} rounds per side (run in ABBA order)" if rounds > 1 else "")
    lines = [
        "## Tensor workloads: Tessera vs peers",
        "",
        f"Machine: {machine.get('cpu', '?')}, {machine.get('cores', '?')} cores, {machine.get('os', '')}; "
        f"{protocol.get('dtype', 'float32')}, {protocol.get('warmups', 3)} warm-ups, median of "
        f"{protocol.get('runs', '?')} runs{rounds_note}, {protocol.get('threads', 2)} threads; {results['date']}.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
    ]
    for key, name in WORKLOADS.items():
        row = [f"{key} {name}"]
        if tessera:
            row.append(format_ms(tessera.get(key)))
        if blocking:
            awaited, blocked = tessera.get(key), tessera.get(f"{key}_blocking")
            row.append(format_ms(blocked))
            row.append(format_ratio(awaited / blocked) if isinstance(awaited, (int, float))
                       and isinstance(blocked, (int, float)) and blocked > 0 else "—")
        row += [format_ms(entry.get(key)) for entry in peers.values()]
        if tessera:
            row += [format_ratio(table_ratios[peer].get(key)) for peer in peers]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    if tessera:
        lines.append("Ratios are peer median / Tessera median: above 1× Tessera is faster.")
        if blocking:
            lines.append("Tessera's figures are `await shapedArray(of:)` from an async context, one await per result "
                         "(T2: softmax, then argmax); \"blocking\" is the same code with the synchronous "
                         "`shapedArray(of:)`.")
        if tessera.get("blas"):
            lines.append(f"Tessera's OpenBLAS: {tessera['blas']}.")
    else:
        lines.append("No Tessera figures given: peers only.")
    for name, reason in results["skipped"].items():
        lines.append(f"Skipped {PEER_LABELS.get(name, name)}: {reason}.")
    for name, entry in peers.items():
        bad = {k: v for k, v in entry.get("check", {}).items() if v != "ok"}
        if bad:
            lines.append(f"{PEER_LABELS.get(name, name)} results differ from the float64 reference: {bad}.")
    loaded = {"Tessera": (tessera or {}).get("other_cpu_load")}
    loaded.update({PEER_LABELS.get(name, name): entry.get("other_cpu_load") for name, entry in peers.items()})
    loaded = {label: load for label, load in loaded.items() if isinstance(load, (int, float)) and load > 0.05}
    if loaded:
        lines.append("Warning: other processes kept the CPU busy while measuring "
                     + ", ".join(f"{label} ({load:.0%})" for label, load in loaded.items())
                     + "; those medians are skewed: rerun on an idle machine.")
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    tessera = parser.add_mutually_exclusive_group()
    tessera.add_argument("--tessera-json", metavar="PATH", help="Tessera's JSON ({\"tessera\": {...}})")
    tessera.add_argument("--tessera-binary", metavar="PATH", help="run `PATH tensor --json ...` now")
    peers = parser.add_mutually_exclusive_group(required=True)
    peers.add_argument("--peers-json", metavar="PATH", help="the peers' JSON from tensor_workloads.py")
    peers.add_argument("--peers", action="store_true", help="run tensor_workloads.py now")
    parser.add_argument("--peer-list", metavar="LIST", help="with --peers: comma-separated subset of " + ",".join(PEERS))
    parser.add_argument("--runs", type=int, default=30, help="with --peers: timed runs per workload")
    parser.add_argument("--attempts", type=int, default=3,
                        help="with --peers: runs of a peer disturbed by other processes (tensor_workloads.py --attempts)")
    parser.add_argument("--idle-wait", type=float, default=60.0,
                        help="seconds to wait for an idle machine before each run (tensor_workloads.py --idle-wait)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="with --tessera-binary and --peers: measure each side this many times, alternating "
                             "which goes first (ABBA...), and keep each workload's lowest median per side")
    parser.add_argument("--out-dir", default=os.path.join(HERE, "results"), help="where results.json/.md go")
    parser.add_argument("--threads", type=int, choices=[1, 2],
                        help="threads on both sides (default: Tessera's core budget, 2 for the peers); 1 pins "
                             "each peer's process to one CPU and sets TESSERA_NUM_THREADS=1")
    parser.add_argument("--tessera-preload-openblas", action="store_true",
                        help="with --tessera-binary: load OpenBLAS into Tessera's process before it starts (LD_PRELOAD)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Collect both sides, merge, print the Markdown table and write results.json/.md."""
    args = parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    sources = {}
    if args.tessera_binary and args.peers and args.rounds > 1:
        tessera_entries: list[dict] = []
        peer_documents: list[dict] = []
        for round_index in range(args.rounds):
            sides = ("tessera", "peers") if round_index % 2 == 0 else ("peers", "tessera")
            print(f"round {round_index + 1} of {args.rounds}: {' then '.join(sides)}", file=sys.stderr, flush=True)
            for side in sides:
                if side == "tessera":
                    path = os.path.join(args.out_dir, f"tessera-round{round_index + 1}.json")
                    tessera_entries.append(validate_tessera(
                        run_tessera(args.tessera_binary, path, args.idle_wait, args.tessera_preload_openblas,
                                    args.threads)))
                else:
                    path = os.path.join(args.out_dir, f"peers-round{round_index + 1}.json")
                    peer_documents.append(run_peers(path, args.runs, args.peer_list, args.attempts, args.idle_wait,
                                                    args.threads))
        tessera = best_of_rounds(tessera_entries)
        peers_document = merge_peer_rounds(peer_documents)
        sources["tessera"] = f"{args.tessera_binary} tensor ({args.rounds} rounds, this run)"
        sources["peers"] = f"tensor_workloads.py ({args.rounds} rounds, this run)"
        results = merge(tessera, peers_document, sources)
        write_results(args.out_dir, "results", results, markdown(results))
        return 0
    if args.tessera_binary:
        tessera = validate_tessera(run_tessera(args.tessera_binary, os.path.join(args.out_dir, "tessera.json"),
                                               args.idle_wait, args.tessera_preload_openblas, args.threads))
        sources["tessera"] = f"{args.tessera_binary} tensor (this run)"
    elif args.tessera_json:
        tessera = validate_tessera(load_json(args.tessera_json))
        sources["tessera"] = os.path.abspath(args.tessera_json)
    else:
        tessera = None
    if args.peers:
        peers_document = run_peers(os.path.join(args.out_dir, "peers.json"), args.runs, args.peer_list, args.attempts,
                                   args.idle_wait, args.threads)
        sources["peers"] = "tensor_workloads.py (this run)"
    else:
        peers_document = load_json(args.peers_json)
        sources["peers"] = os.path.abspath(args.peers_json)
    results = merge(tessera, peers_document, sources)
    text = markdown(results)
    write_results(args.out_dir, "results", results, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
