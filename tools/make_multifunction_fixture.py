#!/usr/bin/env python3
"""Builds `Tests/Fixtures/models/multifunction.mlpackage`: an ML program with two functions,
made with coremltools' `MultiFunctionDescriptor` + `save_multifunction` (works on Linux with
coremltools 9), and `multifunction.json` with NumPy's outputs for one input.

    main    (default): y = relu(x @ W.T + b)
    scaled:            y = (x @ W.T + b) * 2 + 1

Both functions read the same weights (save_multifunction deduplicates them). Run with the
venv the script's docstring in the compute-plan branch describes:

    python3 -m venv tools/.venv-mf && tools/.venv-mf/bin/pip install coremltools numpy
    tools/.venv-mf/bin/python tools/make_multifunction_fixture.py
"""

import json
import os
import shutil
import tempfile

import numpy as np
import coremltools as ct
from coremltools.converters.mil import Builder as mb

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "models")
rng = np.random.default_rng(11)
w = rng.standard_normal((3, 4)).astype(np.float32)
b = rng.standard_normal(3).astype(np.float32)
x = rng.standard_normal((1, 4)).astype(np.float32)


@mb.program(input_specs=[mb.TensorSpec(shape=(1, 4))])
def relu_program(x):
    return mb.relu(x=mb.linear(x=x, weight=w, bias=b), name="y")


@mb.program(input_specs=[mb.TensorSpec(shape=(1, 4))])
def scaled_program(x):
    y = mb.mul(x=mb.linear(x=x, weight=w, bias=b), y=np.float32(2))
    return mb.add(x=y, y=np.float32(1), name="y")


def convert(program, path):
    model = ct.convert(program, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS18,
                       compute_precision=ct.precision.FLOAT32)
    model.save(path)


with tempfile.TemporaryDirectory() as scratch:
    relu_path = os.path.join(scratch, "relu.mlpackage")
    scaled_path = os.path.join(scratch, "scaled.mlpackage")
    convert(relu_program, relu_path)
    convert(scaled_program, scaled_path)
    descriptor = ct.utils.MultiFunctionDescriptor()
    descriptor.add_function(relu_path, src_function_name="main", target_function_name="main")
    descriptor.add_function(scaled_path, src_function_name="main", target_function_name="scaled")
    descriptor.default_function_name = "main"
    output = os.path.join(MODELS, "multifunction.mlpackage")
    shutil.rmtree(output, ignore_errors=True)
    ct.utils.save_multifunction(descriptor, output)

linear = x @ w.T + b
expected = {
    "input": {"name": "x", "shape": list(x.shape), "values": [float(v) for v in x.ravel()]},
    "functions": {
        "main": {"output": "y", "values": [float(v) for v in np.maximum(linear, 0).ravel()]},
        "scaled": {"output": "y", "values": [float(v) for v in (linear * 2 + 1).ravel()]},
    },
}
with open(os.path.join(MODELS, "multifunction.json"), "w") as f:
    json.dump(expected, f, indent=1)
print("wrote multifunction.mlpackage and multifunction.json")
