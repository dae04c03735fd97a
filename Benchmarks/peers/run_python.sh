#!/usr/bin/env bash
# tessera.coreml from Python next to ONNX Runtime's Python API (python_binding.py):
#
#   bash Benchmarks/peers/run_python.sh [--runs N]
#
# Uses $PY (default .build/python-venv/bin/python, where `make python` installed tessera),
# installs onnx and onnxruntime there when missing, makes the models into $MODELS_DIR
# (default Benchmarks/peers/models; needs torch) when missing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
python="${PY:-$repo/.build/python-venv/bin/python}"
models="${MODELS_DIR:-$here/models}"
"$python" -c "import onnx, onnxruntime" 2>/dev/null || "$python" -m pip install --quiet onnx onnxruntime
missing=0
for name in m1 m3; do
    for file in "$name.mlpackage" "$name.onnx" "${name}_input.npy" "${name}_expected.npy"; do
        [ -e "$models/$file" ] || missing=1
    done
done
[ "$missing" -eq 0 ] || "$python" "$here/model_workloads.py" --make-models "$models"
"$python" "$here/python_binding.py" --models-dir "$models" "$@"
