#!/usr/bin/env python3
"""Makes the models the `compile` benchmark loads: five 1408×1408 linear layers with ReLUs,
built with coremltools' MIL builder, as `compile_fp32.mlpackage` (~40 MB of float32 weights)
and `compile_fp16.mlpackage` (~20 MB of float16 weights, coremltools' default precision).
Nothing is committed; the benchmark tells you to run this when the packages are missing
(`run_models.sh` does, with the peers' venv, which has coremltools and numpy), or:

    python3 -m venv tools/.venv-mf && tools/.venv-mf/bin/pip install coremltools numpy
    tools/.venv-mf/bin/python Benchmarks/peers/make_compile_model.py Benchmarks/peers/models
"""

import os
import sys

import numpy as np
import coremltools as ct
from coremltools.converters.mil import Builder as mb

WIDTH = 1408
LAYERS = 5

directory = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "models")
os.makedirs(directory, exist_ok=True)
rng = np.random.default_rng(5)
weights = [(rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32) for _ in range(LAYERS)]
biases = [rng.standard_normal(WIDTH).astype(np.float32) * 0.1 for _ in range(LAYERS)]


@mb.program(input_specs=[mb.TensorSpec(shape=(1, WIDTH))])
def program(x):
    for w, b in zip(weights, biases):
        x = mb.relu(x=mb.linear(x=x, weight=w, bias=b))
    return x


for name, precision in [("compile_fp32", ct.precision.FLOAT32), ("compile_fp16", ct.precision.FLOAT16)]:
    model = ct.convert(program, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
                       compute_precision=precision)
    model.save(os.path.join(directory, name + ".mlpackage"))
    print("wrote", os.path.join(directory, name + ".mlpackage"))
