#!/usr/bin/env python3
"""Rank-0 (scalar) values at Core ML's boundaries and in the ops that promote them.

Writes Tests/Fixtures/rank0/<case>/{model.mlpackage, <input>.npy, expected_<i>.npy} and
Tests/Fixtures/rank0/cases.json. Two kinds of case:

* MIL-builder programs (empty pass pipeline, so the op under test is saved as written): a
  rank-0 output, a rank-0 input (the description says [1]), a rank-0 state, and the ops
  whose MIL definition promotes rank-0 operands: concat and stack of scalars, gather with a
  scalar index, a reshape whose target is built from scalars, reductions to a scalar.
  Expected values from NumPy.
* PyTorch modules converted by coremltools' torch frontend: one with a scalar output and
  einsums with flexible input shapes, whose decomposition builds its reshape targets by
  concatenating rank-0 dimension values. Expected values from PyTorch.

Every expected output is stored with the shape coremltools' own tests check Core ML's
result against: a rank-0 result becomes [1] (`if torch_result.shape == (): torch_result =
np.array([torch_result])`). cases.json records, per case, the inputs, outputs, the shapes
and the MIL op types in the saved program.

Run: /work/main/Benchmarks/peers/.venv/bin/python tools/make_rank0_fixtures.py
(coremltools 9.0 and torch; coremltools warns that torch 2.13 is newer than it was tested with).
"""

import json
import os
import shutil

import numpy as np
import coremltools as ct
from coremltools.converters.mil import Builder as mb
from coremltools.converters.mil.mil import types

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "rank0")
rng = np.random.default_rng(20261202)
CASES = []


def rand(*shape):
    return rng.uniform(-2, 2, size=shape).astype(np.float32)


def as_coreml_shape(value):
    """A result as coremltools' tests compare it: rank 0 becomes [1]."""
    value = np.asarray(value)
    return value.reshape(1) if value.shape == () else value


def write_case(name, model, inputs, expected, kind, rtol=1e-5, atol=1e-5):
    directory = os.path.join(OUT, name)
    if os.path.exists(directory):
        shutil.rmtree(directory)
    os.makedirs(directory)
    model.save(os.path.join(directory, "model.mlpackage"))
    spec = model.get_spec()
    for key, value in inputs.items():
        np.save(os.path.join(directory, key + ".npy"), np.ascontiguousarray(value))
    expected = [as_coreml_shape(v) for v in expected]
    for i, value in enumerate(expected):
        np.save(os.path.join(directory, f"expected_{i}.npy"), np.ascontiguousarray(value.astype(np.float32)))
    function = spec.mlProgram.functions["main"]
    ops = sorted({op.type for op in function.block_specializations[function.opset].operations} - {"const"})
    CASES.append(dict(
        name=name, kind=kind, inputs=list(inputs), outputs=[o.name for o in spec.description.output],
        inputShapes={i.name: list(i.type.multiArrayType.shape) for i in spec.description.input},
        expectedShapes=[list(v.shape) for v in expected], rtol=rtol, atol=atol, ops=ops))


def save_mil(name, specs, build, inputs, expected, target=ct.target.iOS16, scalar_inputs=()):
    """Builds `build(*placeholders)` (the placeholders named after `inputs`) and saves it;
    the function inputs in `scalar_inputs` are then declared rank 0."""
    names = list(inputs)
    namespace = {"build": build}
    exec(f"def main({', '.join(names)}):\n    return build({', '.join(names)})", namespace)
    program = mb.program(input_specs=specs, opset_version=target)(namespace["main"])
    model = ct.convert(program, convert_to="mlprogram", minimum_deployment_target=target,
                       pass_pipeline=ct.PassPipeline.EMPTY, compute_precision=ct.precision.FLOAT32)
    if scalar_inputs:
        spec = model.get_spec()
        for function_input in spec.mlProgram.functions["main"].inputs:
            if function_input.name in scalar_inputs:
                function_input.type.tensorType.rank = 0
                del function_input.type.tensorType.dimensions[:]
        model = ct.models.MLModel(spec, weights_dir=model.weights_dir, skip_model_load=True)
    write_case(name, model, inputs, expected, "mil")


def mil_cases():
    x = rand(3, 4)
    # Output boundary: a reduction over every axis is rank 0; Core ML returns it as [1].
    save_mil("output_scalar", [mb.TensorSpec(shape=(3, 4))], lambda x: mb.reduce_sum(x=x, name="total"),
             {"x": x}, [x.sum()])
    save_mil("output_scalar_int", [mb.TensorSpec(shape=(5,))], lambda v: mb.reduce_argmax(x=v, axis=0, name="index"),
             {"v": np.array([0.5, -1, 3, 2, 1], np.float32)}, [np.array(2)])
    # Input boundary: coremltools' builder refuses rank-0 placeholders, but the proto allows a
    # rank-0 function input (other converters write one) and coremltools describes it as [1];
    # build with [1] and rewrite the function's input type to rank 0.
    s, v = np.array([1.5], np.float32), rand(3)
    save_mil("input_scalar", [mb.TensorSpec(shape=(1,)), mb.TensorSpec(shape=(3,))],
             lambda s, v: mb.add(x=mb.mul(x=v, y=s), y=s, name="y"), {"s": s, "v": v}, [v * s[0] + s[0]],
             scalar_inputs=["s"])
    # Reductions to a scalar, and a reduction of a scalar.
    save_mil("reduce_to_scalar", [mb.TensorSpec(shape=(3, 4))],
             lambda x: (mb.reduce_mean(x=x, axes=[0, 1], keep_dims=False, name="mean"),
                        mb.reduce_max(x=mb.reduce_sum(x=x, axes=[1]), axes=[0], name="max_of_rows"),
                        mb.reduce_l2_norm(x=x, name="norm")),
             {"x": x}, [x.mean(), x.sum(1).max(), np.sqrt((x.astype(np.float64) ** 2).sum())])
    # concat of rank-0 values: each counts as [1], so n scalars give [n].
    save_mil("concat_scalars", [mb.TensorSpec(shape=(3, 4))],
             lambda x: mb.concat(values=[mb.reduce_sum(x=x), mb.reduce_max(x=x), mb.reduce_min(x=x)], axis=0,
                                 name="stats"),
             {"x": x}, [np.array([x.sum(), x.max(), x.min()])])
    save_mil("concat_scalars_negative_axis", [mb.TensorSpec(shape=(3, 4))],
             lambda x: mb.concat(values=[mb.reduce_sum(x=x), mb.reduce_mean(x=x)], axis=-1, name="stats"),
             {"x": x}, [np.array([x.sum(), x.mean()])])
    save_mil("concat_one_scalar", [mb.TensorSpec(shape=(3, 4))],
             lambda x: mb.concat(values=[mb.reduce_sum(x=x)], axis=0, name="one"), {"x": x}, [np.array([x.sum()])])
    # stack of rank-0 values: a new axis 0.
    save_mil("stack_scalars", [mb.TensorSpec(shape=(3, 4))],
             lambda x: mb.stack(values=[mb.reduce_sum(x=x), mb.reduce_max(x=x)], axis=0, name="stacked"),
             {"x": x}, [np.array([x.sum(), x.max()])])
    # gather with a rank-0 index: the axis goes away.
    table = rand(4, 3)
    save_mil("gather_scalar_index", [mb.TensorSpec(shape=(4, 3)), mb.TensorSpec(shape=(1,), dtype=types.int32)],
             lambda t, i: mb.gather(
                 x=t, indices=mb.slice_by_index(x=i, begin=[0], end=[0], squeeze_mask=[True]), axis=0, name="row"),
             {"t": table, "i": np.array([2], np.int32)}, [table[2]])
    save_mil("gather_computed_scalar_index", [mb.TensorSpec(shape=(4, 3)), mb.TensorSpec(shape=(4,))],
             lambda t, v: mb.gather(x=t, indices=mb.reduce_argmax(x=v, axis=0), axis=1, name="column"),
             {"t": table, "v": np.array([0.1, 0.9, -1, 0.2], np.float32)}, [table[:, 1]])
    vector = rand(5)
    save_mil("gather_scalar_from_vector", [mb.TensorSpec(shape=(5,))],
             lambda v: mb.gather(x=v, indices=np.int32(3), axis=0, name="element"), {"v": vector}, [vector[3]])
    # slice_by_index with squeeze_mask yields rank 0; concat of those is a reshape target.
    y = rand(2, 3, 4)

    def reshape_from_scalars(y):
        dims = mb.shape(x=y)
        a = mb.slice_by_index(x=dims, begin=[0], end=[0], squeeze_mask=[True])
        b = mb.slice_by_index(x=dims, begin=[1], end=[0], squeeze_mask=[True])
        c = mb.slice_by_index(x=dims, begin=[2], end=[0], squeeze_mask=[True])
        ab = mb.reduce_prod(x=mb.concat(values=[a, b], axis=0))
        return mb.reshape(x=y, shape=mb.concat(values=[ab, c], axis=0), name="flat")

    save_mil("reshape_target_from_scalars", [mb.TensorSpec(shape=(2, 3, 4))], reshape_from_scalars, {"y": y},
             [y.reshape(6, 4)])
    # reshape to rank 0 and back.
    one = rand(1, 1)
    save_mil("reshape_to_scalar", [mb.TensorSpec(shape=(1, 1))],
             lambda o: mb.reshape(x=o, shape=np.zeros((0,), np.int32), name="scalar"), {"o": one}, [one.reshape(())])
    save_mil("reshape_scalar_to_matrix", [mb.TensorSpec(shape=(3, 4))],
             lambda x: mb.reshape(x=mb.reduce_sum(x=x), shape=[1, 1], name="matrix"), {"x": x},
             [x.sum().reshape(1, 1)])

    # A reshape target read from input data: the shapes follow the values, so the load-time
    # build check must leave it to the prediction (ones would give [1, 1] for 6 elements).
    flat = rand(6)
    save_mil("reshape_target_from_input", [mb.TensorSpec(shape=(6,)), mb.TensorSpec(shape=(2,), dtype=types.int32)],
             lambda f, s: mb.reshape(x=f, shape=s, name="shaped"), {"f": flat, "s": np.array([2, 3], np.int32)},
             [flat.reshape(2, 3)])


def invalid_cases():
    """Programs that fail on their own declared shapes: the load names the op."""
    a, b = rand(2, 3), rand(4, 5)
    # Built as [2, 3] x [3, 5], then y's declared shape rewritten to [4, 5] (in the function
    # and the description): every prediction would fail in `matmul`.
    program = mb.program(input_specs=[mb.TensorSpec(shape=(2, 3)), mb.TensorSpec(shape=(3, 5))],
                         opset_version=ct.target.iOS16)(lambda x, y: mb.matmul(x=x, y=y, name="product"))
    model = ct.convert(program, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
                       pass_pipeline=ct.PassPipeline.EMPTY, compute_precision=ct.precision.FLOAT32)
    spec = model.get_spec()
    for function_input in spec.mlProgram.functions["main"].inputs:
        if function_input.name == "y":
            function_input.type.tensorType.dimensions[0].constant.size = 4
    for feature in spec.description.input:
        if feature.name == "y":
            feature.type.multiArrayType.shape[0] = 4
    model = ct.models.MLModel(spec, weights_dir=model.weights_dir, skip_model_load=True)
    directory = os.path.join(OUT, "invalid_matmul_declared_shapes")
    if os.path.exists(directory):
        shutil.rmtree(directory)
    os.makedirs(directory)
    model.save(os.path.join(directory, "model.mlpackage"))
    np.save(os.path.join(directory, "x.npy"), a)
    np.save(os.path.join(directory, "y.npy"), b)


def state_case():
    # A rank-0 state: the description says [] and Tessera keeps it [1] outside the program.
    def build(x, counter):
        current = mb.read_state(input=counter)
        updated = mb.add(x=current, y=mb.reduce_sum(x=x))
        mb.coreml_update_state(state=counter, value=updated)
        return mb.mul(x=updated, y=np.float16(1), name="y")

    x = np.array([1, 2, 0.5], np.float16)
    try:
        program = mb.program(input_specs=[mb.TensorSpec(shape=(3,), dtype=types.fp16),
                                          mb.StateTensorSpec(shape=(), dtype=types.fp16)],
                             opset_version=ct.target.iOS18)(lambda x, counter: build(x, counter))
        model = ct.convert(program, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS18,
                           pass_pipeline=ct.PassPipeline.EMPTY)
    except Exception as error:  # noqa: BLE001 - record what coremltools says
        print("rank-0 state: coremltools refuses it:", error)
        return
    write_case("state_scalar", model, {"x": x}, [np.float16(x.astype(np.float32).sum())], "state", 1e-3, 1e-3)


def torch_cases():
    import torch
    from torch import nn

    torch.manual_seed(20261202)

    class SquaredNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(4))

        def forward(self, x):
            return ((x * self.weight) ** 2).sum()

    class Einsum(nn.Module):
        def __init__(self, equation):
            super().__init__()
            self.equation = equation

        def forward(self, x, y):
            return torch.einsum(self.equation, x, y)

    x = torch.randn(3, 4)
    module = SquaredNorm().eval()
    traced = torch.jit.trace(module, (x,))
    model = ct.convert(traced, inputs=[ct.TensorType(name="x", shape=(3, 4))], convert_to="mlprogram",
                       minimum_deployment_target=ct.target.iOS16, compute_precision=ct.precision.FLOAT32)
    write_case("torch_scalar_output", model, {"x": x.numpy()}, [module(x).detach().numpy()], "torch", 1e-5, 1e-4)

    for name, equation in [("torch_einsum_flexible", "abc,cd->bda"), ("torch_einsum_batch_flexible", "abc,acd->bad")]:
        left, right = equation.split("->")[0].split(",")
        sizes = {}
        for letter in left + right:
            sizes.setdefault(letter, 2 + len(sizes))
        a = torch.randn(*[sizes[s] for s in left])
        b = torch.randn(*[sizes[s] for s in right])
        module = Einsum(equation).eval()
        traced = torch.jit.trace(module, (a, b))
        # Flexible dimensions (as coremltools' dynamic einsum tests declare them) keep the
        # decomposition's shape arithmetic in the program instead of folding it.
        inputs = [ct.TensorType(name=n, shape=[ct.RangeDim(1, sizes[s], sizes[s]) for s in term])
                  for n, term in (("x", left), ("y", right))]
        model = ct.convert(traced, inputs=inputs, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
                           compute_precision=ct.precision.FLOAT32)
        write_case(name, model, {"x": a.numpy(), "y": b.numpy()}, [module(a, b).numpy()], "torch", 1e-5, 1e-4)


def main():
    os.makedirs(OUT, exist_ok=True)
    mil_cases()
    invalid_cases()
    state_case()
    torch_cases()
    with open(os.path.join(OUT, "cases.json"), "w") as file:
        json.dump(CASES, file, indent=1)
    for case in CASES:
        print(case["name"], case["inputShapes"], case["expectedShapes"], case["ops"])


if __name__ == "__main__":
    main()
