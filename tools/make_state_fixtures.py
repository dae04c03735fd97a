#!/usr/bin/env python3
"""Stateful-model fixture for Tessera's MLState.

Writes Tests/Fixtures/state/accumulator.mlpackage: an iOS18 ML program built with the MIL
builder, with one fp16 state `acc` of shape (1, 4) and one fp16 input `x`:

    acc_now = read_state(acc)
    acc_new = acc_now + x
    coreml_update_state(acc, acc_new)      # serialized as write_state (+ read_state)
    y = acc_new * 2

and Tests/Fixtures/state/accumulator.json with three successive inputs and the outputs and
state values NumPy computes in float16 for them, starting from the zero state that
makeState() allocates.

Run: tools/.venv-compress/bin/python tools/make_state_fixtures.py
"""

import json
import os
import shutil

import numpy as np
import coremltools as ct
from coremltools.converters.mil import Builder as mb
from coremltools.converters.mil.mil import types

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "state")


@mb.program(
    input_specs=[mb.TensorSpec(shape=(1, 4), dtype=types.fp16), mb.StateTensorSpec(shape=(1, 4), dtype=types.fp16)],
    opset_version=ct.target.iOS18,
)
def accumulator(x, acc):
    current = mb.read_state(input=acc)
    updated = mb.add(x=current, y=x)
    mb.coreml_update_state(state=acc, value=updated)
    return mb.mul(x=updated, y=np.float16(2), name="y")


def main():
    os.makedirs(OUT, exist_ok=True)
    model = ct.convert(accumulator, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS18)
    path = os.path.join(OUT, "accumulator.mlpackage")
    if os.path.exists(path):
        shutil.rmtree(path)
    model.save(path)
    spec = model.get_spec()
    inputs = [np.array([[1, 2, 3, 4]], np.float16), np.array([[0.5, -1, 0.25, 8]], np.float16),
              np.array([[-3, 0.125, 100, -0.5]], np.float16)]
    acc = np.zeros((1, 4), np.float16)
    steps = []
    for x in inputs:
        acc = (acc + x).astype(np.float16)
        y = (acc * np.float16(2)).astype(np.float16)
        steps.append({"x": x.flatten().tolist(), "y": y.flatten().astype(float).tolist(),
                      "acc": acc.flatten().astype(float).tolist()})
    summary = {
        "inputs": [i.name for i in spec.description.input],
        "outputs": [o.name for o in spec.description.output],
        "states": [s.name for s in spec.description.state],
        "stateShape": list(spec.description.state[0].type.stateType.arrayType.shape),
        "ops": [op.type for op in spec.mlProgram.functions["main"].block_specializations["CoreML8"].operations],
        "steps": steps,
    }
    with open(os.path.join(OUT, "accumulator.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
