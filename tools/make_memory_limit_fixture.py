#!/usr/bin/env python3
"""Writes the fixture of the memory-limit tests (Docs/Reliability.md, "Memory limit").

    /work/main/Benchmarks/peers/.venv/bin/python tools/make_memory_limit_fixture.py

Output, in Tests/Fixtures/reliability/:

* `outer_product.mlpackage`: an ML program whose input `x` is `[1, N]` with N up to a million
  (`RangeDim(1, 1_000_000)`: coremltools refuses an unbounded range) and whose output `y = relu(xᵀ · x) + 1` is `[N, N]`, so a request with a
  large N asks for N² intermediate elements from an input of N;
* `outer_product.json`: an input of N = 5 and the output NumPy computes for it.
"""

import json
import os
import shutil

import numpy as np
import coremltools as ct
from coremltools.converters.mil import Builder as mb
from coremltools.converters.mil.mil import get_new_symbol

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "reliability")


def outer_product():
    @mb.program(input_specs=[mb.TensorSpec(shape=(1, get_new_symbol()))], opset_version=ct.target.iOS16)
    def prog(x):
        product = mb.matmul(x=x, y=x, transpose_x=True)
        return mb.add(x=mb.relu(x=product), y=np.float32(1), name="y")

    model = ct.convert(
        prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
        compute_precision=ct.precision.FLOAT32,
        inputs=[ct.TensorType(name="x", shape=ct.Shape(shape=(1, ct.RangeDim(1, 1_000_000, default=4))))])
    package = os.path.join(OUT, "outer_product.mlpackage")
    shutil.rmtree(package, ignore_errors=True)
    model.save(package)
    x = np.array([[1.5, -2.0, 0.25, 3.0, -0.5]], dtype=np.float32)
    y = np.maximum(x.T @ x, 0) + 1
    with open(os.path.join(OUT, "outer_product.json"), "w") as f:
        json.dump({"x": x.ravel().tolist(), "shape": list(x.shape), "y": y.ravel().astype(np.float64).tolist(),
                   "yShape": list(y.shape)}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    outer_product()
