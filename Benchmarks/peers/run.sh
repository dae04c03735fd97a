#!/usr/bin/env bash
# One command for the whole comparison, from one run on this machine:
#
#   bash Benchmarks/peers/run.sh [--runs N] [--peer-list numpy,jax,...]
#
# Sets up .venv when missing (setup.sh), builds TesseraBenchmarks in release mode, runs
# Tessera's tensor workloads and then the peers' (compare.py --tessera-binary ... --peers),
# writes $RESULTS_DIR/results.{json,md} (default Benchmarks/peers/results) and draws
# Docs/performance-tensor.png (chart.py). Extra arguments go to compare.py.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
results="${RESULTS_DIR:-$here/results}"
python="$here/.venv/bin/python"

[ -x "$python" ] && "$python" -c "import numpy, matplotlib" 2>/dev/null || bash "$here/setup.sh"

make -C "$repo" deps
(cd "$repo" && swift build -c release --product TesseraBenchmarks)
binary="$(cd "$repo" && swift build -c release --show-bin-path)/TesseraBenchmarks"

"$python" "$here/compare.py" --tessera-binary "$binary" --peers --out-dir "$results" "$@"
"$python" "$here/chart.py" --results "$results/results.json" --out "${CHART:-$repo/Docs/performance-tensor.png}"
