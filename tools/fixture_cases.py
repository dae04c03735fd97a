"""What the MIL fixture scripts share (tools/make_lowering_fixtures.py,
tools/make_mil_op_fixtures.py, tools/make_new_op_fixtures.py, tools/make_recurrent_fixtures.py
and the scripts built on them): a MIL-builder program whose inputs carry the case's names, and
the case directory a fixture test reads.

A case directory holds `model.mlpackage`, one `<input>.npy` per input and `expected_<i>.npy`
(Float32) per expected output; its record in `cases.json` names the inputs, the outputs,
the tolerances and the MIL op types of the main function (`const` left out).
"""

import os

import numpy as np
from coremltools.converters.mil import Builder as mb


def program(build, specs, names, target):
    """`build(**placeholders)` as a MIL program with inputs named `names` (the builder names
    inputs after the function's parameters, so a function with ours is written here)."""
    namespace = {"build": build}
    exec(f"def main({', '.join(names)}):\n    return build({', '.join(n + '=' + n for n in names)})", namespace)
    return mb.program(input_specs=specs, opset_version=target)(namespace["main"])


def op_types(block, nested=False):
    """The op types in `block` (a MIL block message), those of nested blocks too when `nested`."""
    types = set()
    for op in block.operations:
        types.add(op.type)
        if nested:
            for inner in op.blocks:
                types |= op_types(inner, nested=True)
    return types


def save(out, name, model, inputs, expected, rtol, atol, nested_ops=False, input_dtype=None):
    """Writes case `name` under `out` and returns its `cases.json` record; `expected` is one
    array or a list; inputs are saved as given, or converted to `input_dtype`."""
    directory = os.path.join(out, name)
    os.makedirs(directory, exist_ok=True)
    model.save(os.path.join(directory, "model.mlpackage"))
    spec = model.get_spec()
    for key, value in inputs.items():
        np.save(os.path.join(directory, key + ".npy"), np.array(value, dtype=input_dtype, order="C"))
    if not isinstance(expected, (list, tuple)):
        expected = [expected]
    for i, value in enumerate(expected):
        np.save(os.path.join(directory, f"expected_{i}.npy"), np.array(value, dtype=np.float32, order="C"))
    outputs = [o.name for o in spec.description.output]
    function = spec.mlProgram.functions["main"]
    ops = sorted(op_types(function.block_specializations[function.opset], nested=nested_ops) - {"const"})
    return dict(name=name, inputs=list(inputs.keys()), outputs=outputs[:len(expected)], rtol=rtol, atol=atol,
                ops=ops)
