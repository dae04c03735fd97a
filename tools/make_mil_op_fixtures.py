#!/usr/bin/env python3
"""Writes the fixtures for the MIL ops of issue 21 (quantize / dequantize, the iOS 18 sparse
constexpr ops, slice_update, the random ops, cond / while_loop / the list ops, and range_1d,
tile and fill with parameters computed at run time); tests in
TesseraModelsTests/MILOp*FixtureTests.swift.

Regenerate (from the repository root; coremltools 9.0 saves packages on Linux x86_64, torch
gives the fp8 reference values):

    python3 -m venv /tmp/venv-coreml
    /tmp/venv-coreml/bin/pip install coremltools numpy torch
    /tmp/venv-coreml/bin/python tools/make_mil_op_fixtures.py

coremltools cannot predict on Linux, so every expected output is computed here with NumPy from
the op's definition in coremltools (`converters/mil/mil/ops/defs/iOS15..iOS18`), never by
Tessera. Output, in Tests/Fixtures/mil-ops/ (the layout of Tests/Fixtures/new-ops/):

* `<case>/model.mlpackage`, `<case>/<input>.npy`, `<case>/expected_<i>.npy` (Float32);
* `cases.json`: per case its inputs, outputs, tolerances and the MIL op types in the program
  (nested blocks included);
* `float16_rounding/expected_fp32.npy`: that case's program computed in float32;
* `fp8.npy`: `[256, 2]` Float32, the value of every fp8e4m3fn and fp8e5m2 byte (PyTorch).
"""

import json
import os
import shutil

import numpy as np
import coremltools as ct
from coremltools.converters.mil import Builder as mb
from coremltools.converters.mil.mil import types

import fixture_cases

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "mil-ops")
rng = np.random.default_rng(20261221)
CASES = []


def save_case(name, inputs, build, expected, target=ct.target.iOS18, rtol=1e-5, atol=1e-5, passes=None):
    """Builds `build(**placeholders)` as a program, saves it and its NumPy references."""
    dtypes = {np.dtype(np.int32): types.int32, np.dtype(np.bool_): types.bool}
    specs = [mb.TensorSpec(shape=v.shape, dtype=dtypes.get(v.dtype, types.fp32)) for v in inputs.values()]
    prog = fixture_cases.program(build, specs, list(inputs.keys()), target)
    model = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=target,
                       compute_precision=ct.precision.FLOAT32,
                       pass_pipeline=passes or ct.PassPipeline.EMPTY)
    CASES.append(fixture_cases.save(OUT, name, model, inputs, expected, rtol, atol, nested_ops=True))


# MARK: quantize / dequantize (iOS 17)

def quantization_cases():
    x = rng.uniform(-3, 3, size=(2, 3, 4)).astype(np.float32)
    # Values on exact halves, to check that rounding goes to even.
    x[0, 0, :] = [0.25, 0.75, -0.25, 1.25]
    scale, zp = np.float32(0.5), np.int8(3)
    q = np.clip(np.round(x / scale) + zp, -128, 127)
    save_case("quantize_per_tensor_int8", {"x": x},
              lambda x: mb.dequantize(input=mb.quantize(input=x, scale=scale, zero_point=zp, output_dtype="int8"),
                                      scale=np.float32(1)),
              q, target=ct.target.iOS17)
    scales = np.array([0.02, 0.05, 0.1], np.float32)
    zps = np.array([0, 128, 250], np.uint8)
    q = np.clip(np.round(x / scales.reshape(1, 3, 1)) + zps.reshape(1, 3, 1), 0, 255)
    save_case("quantize_per_channel_uint8", {"x": x},
              lambda x: mb.dequantize(input=mb.quantize(input=x, scale=scales, zero_point=zps, axis=1,
                                                        output_dtype="uint8"), scale=np.float32(1)),
              q, target=ct.target.iOS17)
    codes = rng.integers(-128, 128, size=(4, 5)).astype(np.float32)
    scales = rng.uniform(0.01, 1, size=5).astype(np.float32)
    zps = rng.integers(-10, 10, size=5).astype(np.int8)
    save_case("dequantize_per_channel_int8", {"x": codes},
              lambda x: mb.dequantize(input=mb.quantize(input=x, scale=np.float32(1), output_dtype="int8"),
                                      scale=scales, zero_point=zps, axis=-1),
              (codes - zps) * scales, target=ct.target.iOS17)


# MARK: the iOS 18 sparse constexpr ops

def sparse_cases():
    x = rng.uniform(-1, 1, size=(2, 8)).astype(np.float32)
    mask = (rng.uniform(size=(4, 8)) > 0.5).astype(np.uint8)
    count = int(mask.sum())
    indices = rng.integers(0, 4, size=count).astype(types.np_uint2_dtype)
    lut = np.array([-1.5, 0.5, 2.0, 3.25], np.float32).reshape(1, 1, 4, 1)
    dense = np.zeros((4, 8), np.float32)
    dense[mask != 0] = lut.reshape(4)[indices.astype(np.int64)]

    def lut_sparse(x):
        m, data = mb.constexpr_lut_to_sparse(indices_mask=mask.astype(types.np_uint1_dtype),
                                             indices_nonzero_data=indices, lut=lut)
        return mb.matmul(x=x, y=mb.constexpr_sparse_to_dense(nonzero_data=data, mask=m), transpose_y=True)

    save_case("constexpr_lut_to_sparse", {"x": x}, lut_sparse, x @ dense.T, atol=1e-5)

    # Vector palettes: each mask bit covers 2 rows along axis 0.
    vector_mask = (rng.uniform(size=(2, 8)) > 0.4).astype(np.uint8)
    vector_count = int(vector_mask.sum())
    vector_indices = rng.integers(0, 2, size=vector_count).astype(types.np_uint1_dtype)
    vector_lut = np.array([[1.0, -1.0], [0.25, 4.0]], np.float32).reshape(1, 1, 2, 2)
    vector_dense = np.zeros((4, 8), np.float32)
    rows, cols = np.nonzero(vector_mask)
    for code, r, c in zip(vector_indices.astype(np.int64), rows, cols):
        vector_dense[2 * r:2 * r + 2, c] = vector_lut[0, 0, code]

    def lut_sparse_vector(x):
        m, data = mb.constexpr_lut_to_sparse(indices_mask=vector_mask.astype(types.np_uint1_dtype),
                                             indices_nonzero_data=vector_indices, lut=vector_lut, vector_axis=0)
        return mb.matmul(x=x, y=mb.constexpr_sparse_to_dense(nonzero_data=data, mask=m), transpose_y=True)

    save_case("constexpr_lut_to_sparse_vector", {"x": x}, lut_sparse_vector, x @ vector_dense.T, atol=1e-5)

    data = rng.integers(-8, 8, size=count).astype(types.np_int4_dtype)
    scale = rng.uniform(0.1, 1, size=(4, 2)).astype(np.float32)
    offset = rng.integers(-2, 3, size=(4, 2)).astype(types.np_int4_dtype)
    dense = np.zeros((4, 8), np.float32)
    full = np.zeros((4, 8), np.float32)
    full[mask != 0] = data.astype(np.float32)
    blocked_scale = np.repeat(scale, 4, axis=1)
    blocked_offset = np.repeat(offset.astype(np.float32), 4, axis=1)
    dense = np.where(mask != 0, (full - blocked_offset) * blocked_scale, 0).astype(np.float32)

    def shift_scale_sparse(x):
        m, values = mb.constexpr_sparse_blockwise_shift_scale(
            data_mask=mask.astype(types.np_uint1_dtype), nonzero_data=data, scale=scale, offset=offset)
        return mb.matmul(x=x, y=mb.constexpr_sparse_to_dense(nonzero_data=values, mask=m), transpose_y=True)

    save_case("constexpr_sparse_blockwise_shift_scale", {"x": x}, shift_scale_sparse, x @ dense.T, atol=1e-5)


def fp8_table():
    import torch
    codes = torch.arange(256, dtype=torch.uint8)
    e4m3 = codes.view(torch.float8_e4m3fn).to(torch.float32).numpy()
    e5m2 = codes.view(torch.float8_e5m2).to(torch.float32).numpy()
    np.save(os.path.join(OUT, "fp8.npy"), np.stack([e4m3, e5m2], axis=1).astype(np.float32))


# MARK: slice_update (iOS 18)

def slice_update_cases():
    x = rng.uniform(-1, 1, size=(4, 5, 3)).astype(np.float32)
    update = rng.uniform(-1, 1, size=(2, 2, 3)).astype(np.float32)
    expected = x.copy()
    expected[1:4:2, 3:0:-2, :] = update
    save_case("slice_update_strided", {"x": x, "update": update},
              lambda x, update: mb.slice_update(x=x, update=update, begin=[1, 3, 0], end=[4, 0, 3],
                                                stride=[2, -2, 1]),
              expected)
    begin = np.array([2, 0, 1], np.int32)
    row = rng.uniform(-1, 1, size=(5,)).astype(np.float32)
    expected = x.copy()
    expected[2, :, 1] = row
    save_case("slice_update_runtime_begin_squeezed", {"x": x, "update": row, "begin": begin},
              lambda x, update, begin: mb.slice_update(
                  x=x, update=update, begin=begin, end=mb.add(x=begin, y=np.int32(1)),
                  end_mask=[False, True, False], squeeze_mask=[True, False, True]),
              expected)


# MARK: random ops (what does not depend on the generator's stream)

def random_cases():
    x = np.zeros((1,), np.float32)
    save_case("random_deterministic", {"x": x},
              lambda x: [mb.add(x=x, y=x),
                         mb.random_bernoulli(shape=np.array([2, 3], np.int32), prob=1.0, seed=5),
                         mb.random_bernoulli(shape=np.array([3], np.int32), prob=0.0),
                         mb.random_normal(shape=np.array([2, 2], np.int32), mean=1.5, stddev=0.0),
                         mb.random_uniform(shape=np.array([4], np.int32), low=-2.0, high=-2.0, seed=1),
                         mb.random_categorical(x=np.array([[0.0, 30.0, 0.0]], np.float32), size=5)],
              [np.zeros(1), np.ones((2, 3)), np.zeros(3), np.full((2, 2), 1.5), np.full(4, -2.0), np.ones((1, 5))],
              target=ct.target.iOS15)
    shape = np.array([3, 2, 2], np.int32)
    save_case("random_runtime_shape", {"x": x, "shape": shape},
              lambda x, shape: [mb.add(x=x, y=x), mb.random_normal(shape=shape, mean=-1.0, stddev=0.0)],
              [np.zeros(1), np.full((3, 2, 2), -1.0)], target=ct.target.iOS15)
    # Statistics: the Swift test draws these and checks mean and variance against the
    # distributions' (the values themselves depend on the generator).
    save_case("random_samples", {"x": x},
              lambda x: [mb.add(x=x, y=x),
                         mb.random_normal(shape=np.array([20000], np.int32), mean=2.0, stddev=0.5, seed=3),
                         mb.random_uniform(shape=np.array([20000], np.int32), low=-1.0, high=3.0, seed=4),
                         mb.random_bernoulli(shape=np.array([20000], np.int32), prob=0.3),
                         mb.random_categorical(x=np.array([[0.1, 0.6, 0.3]], np.float32), mode="probs",
                                               size=20000, seed=9)],
              [np.zeros(1)], target=ct.target.iOS15)


# MARK: control flow and lists

def control_flow_cases():
    x = rng.uniform(-1, 1, size=(2, 3)).astype(np.float32)
    for value in (1.0, -1.0):
        p = np.array([value], np.float32)
        name = "cond_true" if value > 0 else "cond_false"
        save_case(name, {"p": p, "x": x},
                  lambda p, x: mb.cond(pred=mb.greater(x=mb.reduce_sum(x=p), y=np.float32(0)),
                                       _true_fn=lambda: mb.mul(x=x, y=np.float32(2)),
                                       _false_fn=lambda: mb.exp(x=x)),
                  x * 2 if value > 0 else np.exp(x), target=ct.target.iOS15, rtol=1e-5, atol=1e-6)

    def nested(x, n):
        # Outer loop: i counts to n; the inner loop doubles x until its sum passes 10 * (i + 1).
        def outer_cond(i, acc):
            return mb.less(x=i, y=mb.reduce_sum(x=n))

        def outer_body(i, acc):
            def inner_cond(a):
                return mb.less(x=mb.reduce_sum(x=a), y=mb.cast(x=mb.mul(x=mb.add(x=i, y=np.int32(1)),
                                                                        y=np.int32(10)), dtype="fp32"))

            def inner_body(a):
                return mb.mul(x=a, y=np.float32(2))

            grown = mb.while_loop(_cond=inner_cond, _body=inner_body, loop_vars=(acc,))
            return mb.add(x=i, y=np.int32(1)), grown[0] if isinstance(grown, (list, tuple)) else grown

        return mb.while_loop(_cond=outer_cond, _body=outer_body, loop_vars=(np.int32(0), x))[1]

    start = np.array([0.5, 1.0, 0.25], np.float32)
    n = np.array([3], np.int32)
    acc = start.copy()
    for i in range(3):
        while acc.sum() < 10 * (i + 1):
            acc = acc * 2
    save_case("while_loop_nested", {"x": start, "n": n}, nested, acc, target=ct.target.iOS15)

    a = rng.uniform(-1, 1, size=(2,)).astype(np.float32)
    b = rng.uniform(-1, 1, size=(2,)).astype(np.float32)

    def lists(a, b):
        ls = mb.make_list(init_length=2, elem_shape=(2,))
        ls = mb.list_write(ls=ls, index=0, value=a)
        ls = mb.list_write(ls=ls, index=4, value=b)
        ls = mb.list_scatter(ls=ls, indices=[2, 1], value=mb.stack(values=[mb.mul(x=a, y=np.float32(3)),
                                                                          mb.add(x=b, y=np.float32(1))], axis=0))
        return [mb.list_read(ls=ls, index=2), mb.list_gather(ls=ls, indices=[4, 0, 1, 3]),
                mb.list_length(ls=ls)]

    save_case("list_ops", {"a": a, "b": b}, lists,
              [a * 3, np.stack([b, a, b + 1, np.zeros(2)]), np.array(5)], target=ct.target.iOS15)

    def list_in_loop(x):
        def cond(i, ls):
            return mb.less(x=i, y=np.int32(4))

        def body(i, ls):
            return mb.add(x=i, y=np.int32(1)), mb.list_write(ls=ls, index=i, value=mb.mul(
                x=x, y=mb.cast(x=i, dtype="fp32")))

        ls = mb.make_list(init_length=1, elem_shape=(3,))
        _, final = mb.while_loop(_cond=cond, _body=body, loop_vars=(np.int32(0), ls))
        return mb.list_gather(ls=final, indices=[3, 1])

    v = rng.uniform(-1, 1, size=(3,)).astype(np.float32)
    save_case("list_in_while_loop", {"x": v}, list_in_loop, np.stack([v * 3, v * 1]), target=ct.target.iOS15)


# MARK: parameters computed at run time

def runtime_parameter_cases():
    bounds = np.array([1.0, 7.0, 1.5], np.float32)
    save_case("range_1d_runtime", {"b": bounds},
              lambda b: mb.range_1d(start=mb.slice_by_index(x=b, begin=[0], end=[1], squeeze_mask=[True]),
                                    end=mb.slice_by_index(x=b, begin=[1], end=[2], squeeze_mask=[True]),
                                    step=mb.slice_by_index(x=b, begin=[2], end=[3], squeeze_mask=[True])),
              np.arange(1.0, 7.0, 1.5), target=ct.target.iOS15)
    x = rng.uniform(-1, 1, size=(2, 3)).astype(np.float32)
    reps = np.array([2, 1], np.int32)
    save_case("tile_runtime_reps", {"x": x, "reps": reps}, lambda x, reps: mb.tile(x=x, reps=reps),
              np.tile(x, (2, 1)), target=ct.target.iOS15)
    indices = np.array([[0, 3], [2, 1]], np.int32)
    depth = np.array([4], np.int32)
    save_case("one_hot_runtime_depth", {"i": indices, "d": depth},
              lambda i, d: mb.one_hot(indices=i, one_hot_vector_size=mb.reduce_sum(x=d), axis=1,
                                      on_value=2.0, off_value=-1.0),
              np.where(np.arange(4).reshape(1, 4, 1) == indices[:, None, :], 2.0, -1.0), target=ct.target.iOS15)
    shape = np.array([2, 4], np.int32)
    save_case("fill_runtime_shape", {"shape": shape}, lambda shape: mb.fill(shape=shape, value=2.5),
              np.full((2, 4), 2.5), target=ct.target.iOS15)


# MARK: fp16 rounding

def float16_case():
    """An fp16 program whose result differs between fp16 rounding after each op and Float32.

    expected_0 is NumPy's float16 arithmetic (each op computed and rounded to fp16);
    `expected_fp32.npy` the same program in float32 (the weights are exact fp16 values)."""
    x = rng.uniform(-4, 4, size=(3, 5)).astype(np.float32)
    w = rng.uniform(-1, 1, size=(3, 5)).astype(np.float16)

    def build(x):
        h = mb.cast(x=x, dtype="fp16")
        y = mb.add(x=mb.mul(x=h, y=w), y=np.float16(1000.0))
        z = mb.sub(x=mb.mul(x=y, y=np.float16(1.001)), y=np.float16(1000.0))
        return mb.cast(x=z, dtype="fp32")

    h = x.astype(np.float16)
    y = h * w + np.float16(1000.0)
    z = y * np.float16(1.001) - np.float16(1000.0)
    save_case("float16_rounding", {"x": x}, build, z.astype(np.float32), target=ct.target.iOS16, rtol=0, atol=0)
    reference = (x * w.astype(np.float32) + 1000.0) * np.float32(np.float16(1.001)) - 1000.0
    np.save(os.path.join(OUT, "float16_rounding", "expected_fp32.npy"), reference.astype(np.float32))


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    quantization_cases()
    sparse_cases()
    fp8_table()
    slice_update_cases()
    random_cases()
    control_flow_cases()
    runtime_parameter_cases()
    float16_case()
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(CASES, f, indent=1)
    print(f"{len(CASES)} cases")


if __name__ == "__main__":
    main()
