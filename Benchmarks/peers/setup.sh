#!/usr/bin/env bash
# Create Benchmarks/peers/.venv and install the benchmark peers into it.
#
#   bash Benchmarks/peers/setup.sh            # numpy, jax[cpu], mlx[cpu], matplotlib, threadpoolctl, then torch
#   SKIP_TORCH=1 bash Benchmarks/peers/setup.sh   # everything but torch
#
# PyTorch is optional and installed last: a failure there does not fail the setup, and the
# benchmark scripts skip a missing peer with a note. When a CPU-only torch wheel is present
# in a directory of $PIP_FIND_LINKS it is installed from there; otherwise from PyPI, which
# pulls ~6 GB of CUDA wheels.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    echo "Creating $venv"
    "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip)
"${pip[@]}" install --quiet --upgrade pip
echo "Installing requirements.txt"
"${pip[@]}" install --quiet -r "$here/requirements.txt"

if [ "${SKIP_TORCH:-0}" = "1" ]; then
    echo "SKIP_TORCH=1: not installing torch"
    exit 0
fi
if "$venv/bin/python" -c "import torch" >/dev/null 2>&1; then
    echo "torch already installed"
    exit 0
fi

# A local CPU-only wheel matching this interpreter, if the machine ships one.
local_wheel=""
tag="$("$venv/bin/python" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')"
IFS=' ' read -r -a link_dirs <<< "${PIP_FIND_LINKS:-}"
for dir in "${link_dirs[@]}"; do
    [ -d "$dir" ] || continue
    candidate="$(ls -1 "$dir"/torch-*+cpu-"$tag"-"$tag"-*linux*"$(uname -m)".whl 2>/dev/null | sort -V | tail -n 1 || true)"
    if [ -n "$candidate" ]; then local_wheel="$candidate"; fi
done

if [ -n "$local_wheel" ]; then
    echo "Installing torch from local CPU wheel $(basename "$local_wheel")"
    torch_spec=("$local_wheel")
else
    echo "Installing torch from PyPI (large CUDA download)"
    torch_spec=(torch)
fi
if ! "${pip[@]}" install --quiet "${torch_spec[@]}"; then
    echo "warning: torch did not install; the benchmarks will skip PyTorch" >&2
fi
