#!/usr/bin/env bash
# The model comparison in one command, from one run on this machine:
#
#   bash Benchmarks/peers/run_models.sh [--runs N] [--idle-wait S]
#
# Makes the models (M1, M2, M3, M4, M6, M7; random seeded weights, nothing downloaded) into
# $MODELS_DIR (default .build/bench-models: ~0.6 GB, never committed) when missing
# (model_workloads.py --make-models, make_compile_model.py), builds TesseraBenchmarks in release
# mode, runs Tessera's models and compile areas (--models-json) and then ONNX Runtime and PyTorch
# (model_workloads.py), and prints one Markdown table (compare_models.py), also written to
# $RESULTS_DIR/results-models.{md,json} (default Benchmarks/peers/results). $PYTHON is the
# interpreter (default Benchmarks/peers/.venv/bin/python, made by setup.sh when missing; it needs
# torch, onnx, onnxruntime and coremltools). Extra arguments go to compare_models.py.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
results="${RESULTS_DIR:-$here/results}"
models="${MODELS_DIR:-$repo/.build/bench-models}"
python="${PYTHON:-$here/.venv/bin/python}"

if [ -z "${PYTHON:-}" ] && ! { [ -x "$python" ] && "$python" -c "import numpy, torch" 2>/dev/null; }; then
    bash "$here/setup.sh"
fi
if ! "$python" -c "import onnx, onnxruntime, coremltools" 2>/dev/null; then
    echo "installing onnx, onnxruntime and coremltools into $("$python" -c 'import sys; print(sys.prefix)')" >&2
    "$python" -m pip install --quiet onnx onnxruntime coremltools
fi

missing=0
for name in m1 m2 m3 m4 m6 m7; do
    for file in "$name.mlpackage" "$name.onnx" "$name.pt" "${name}_input.npy" "${name}_expected.npy"; do
        [ -e "$models/$file" ] || missing=1
    done
done
[ "$missing" -eq 0 ] || "$python" "$here/model_workloads.py" --make-models "$models"
if [ ! -e "$models/compile_fp32.mlpackage" ] || [ ! -e "$models/compile_fp16.mlpackage" ]; then
    "$python" "$here/make_compile_model.py" "$models"
fi

make -C "$repo" deps
(cd "$repo" && swift build -c release --product TesseraBenchmarks)
binary="$(cd "$repo" && swift build -c release --show-bin-path)/TesseraBenchmarks"

"$python" "$here/compare_models.py" --tessera-binary "$binary" --peers --models-dir "$models" --out-dir "$results" "$@"
