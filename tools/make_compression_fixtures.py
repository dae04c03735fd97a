#!/usr/bin/env python3
"""Compressed-weight fixtures for Tessera's constexpr_* decoder.

Writes tiny .mlpackage files under Tests/Fixtures/compression/, each a MIL program
`y = linear(x, W)` (or several) whose weights are stored with one of the constexpr ops
coremltools emits, and for every constexpr op output `<package>/../<package>.<output>.npy`
holding the dense value coremltools itself decodes (the op's `value_inference` /
`materialized_val_inference`, i.e. coremltools' own decompression code), checked here
against the original numpy weights where the compression is lossless.

Two sources of compressed weights:
  * the MIL builder's constexpr ops directly (iOS16 forms, iOS18 forms with sub-byte types);
  * coremltools.optimize.coreml: palettize_weights / linear_quantize_weights / prune_weights.

Run: python3 -m venv tools/.venv-compress && tools/.venv-compress/bin/pip install coremltools numpy
     tools/.venv-compress/bin/python tools/make_compression_fixtures.py
"""

import json
import os
import shutil

import numpy as np
import coremltools as ct
import coremltools.optimize.coreml as cto
from coremltools.converters.mil import Builder as mb
from coremltools.converters.mil.mil import types
from coremltools.optimize import _utils as optimize_utils

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "compression")
rng = np.random.default_rng(7)


def convert(prog, target):
    return ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=target,
                      compute_precision=ct.precision.FLOAT32)


def dense_values(model):
    """Every constexpr op's output, decoded by coremltools' own op implementations."""
    results = {}
    for function in model._mil_program.functions.values():
        for op in function.operations:
            if not op.op_type.startswith("constexpr_"):
                continue
            if op.op_type == "constexpr_lut_to_dense" and op.lut.val is None:
                # coremltools' own inference does not follow a chained palette; decode it the same way.
                lut = op.lut.op.materialized_val_inference()
                axis = None if op.vector_axis is None else op.vector_axis.val
                value = type(op).decompress(op.indices.val, lut, axis)
            elif hasattr(op, "materialized_val_inference"):
                value = op.materialized_val_inference()
            else:
                value = op.value_inference()
            if isinstance(value, tuple):
                continue
            results[op.outputs[0].name] = (op.op_type, np.asarray(value, dtype=np.float32))
    return results


def save(name, model, originals=None, tolerance=0.0):
    path = os.path.join(OUT, name + ".mlpackage")
    if os.path.exists(path):
        shutil.rmtree(path)
    model.save(path)
    values = dense_values(model)
    assert values, f"{name}: no constexpr ops in the program"
    summary = {}
    for output, (op_type, value) in values.items():
        np.save(os.path.join(OUT, f"{name}.{output}.npy"), np.ascontiguousarray(value))
        summary[output] = {"op": op_type, "shape": list(value.shape)}
    for output, original in (originals or {}).items():
        got = values[output][1]
        assert got.shape == original.shape, (name, output, got.shape, original.shape)
        assert np.allclose(got, original, atol=tolerance, rtol=0), (name, output, np.abs(got - original).max())
    print(f"{name}: " + ", ".join(f"{k} {v['op']} {v['shape']}" for k, v in summary.items()))
    return summary


def ios16_builder():
    """affine_dequantize (int8 per-channel, uint8 scalar), cast, lut_to_dense (2/4/6 bits), sparse_to_dense."""
    fixtures = {}

    q8 = rng.integers(-128, 128, size=(6, 8), dtype=np.int8)
    zp8 = rng.integers(-3, 4, size=(6,), dtype=np.int8)
    s8 = rng.uniform(0.01, 0.1, size=(6,)).astype(np.float32)
    u8 = rng.integers(0, 256, size=(8, 8), dtype=np.uint8)
    expected_affine = (q8.astype(np.float32) - zp8[:, None]) * s8[:, None]
    expected_affine_u = ((u8.astype(np.float32) - 128) * np.float16(0.25)).astype(np.float16).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 8))], opset_version=ct.target.iOS16)
    def affine(x):
        w = mb.constexpr_affine_dequantize(quantized_data=q8, zero_point=zp8, scale=s8, axis=0, name="w_int8")
        wu = mb.constexpr_affine_dequantize(quantized_data=u8, zero_point=np.uint8(128), scale=np.float16(0.25),
                                            axis=1, name="w_uint8")
        h = mb.linear(x=x, weight=mb.cast(x=wu, dtype="fp32"))
        return mb.linear(x=h, weight=w)

    fixtures["affine_ios16"] = save("affine_ios16", convert(affine, ct.target.iOS16),
                                    {"w_int8": expected_affine, "w_uint8": expected_affine_u}, 1e-6)

    half = rng.standard_normal((5, 8)).astype(np.float16)

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 8))], opset_version=ct.target.iOS16)
    def cast(x):
        w = mb.constexpr_cast(source_val=half, output_dtype="fp32", name="w_cast")
        return mb.linear(x=x, weight=w)

    fixtures["cast_ios16"] = save("cast_ios16", convert(cast, ct.target.iOS16), {"w_cast": half.astype(np.float32)})

    luts = {}
    for bits, shape in [(2, (3, 5)), (4, (4, 8)), (6, (7, 3))]:
        lut = rng.standard_normal(2 ** bits).astype(np.float32)
        idx = rng.integers(0, 2 ** bits, size=shape).astype(np.uint8)
        luts[bits] = (lut, optimize_utils.pack_elements_into_bits(idx.flatten(), bits), np.array(shape, np.uint32),
                      lut[idx])

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 5))], opset_version=ct.target.iOS16)
    def lut16(x):
        outs = []
        for bits, (lut, packed, shape, _) in luts.items():
            w = mb.constexpr_lut_to_dense(lut=lut, indices=packed, shape=shape, name=f"w_lut{bits}")
            outs.append(mb.reduce_sum(x=w))
        return mb.add(x=mb.add(x=outs[0], y=outs[1]), y=mb.add(x=outs[2], y=mb.reduce_sum(x=x)))

    fixtures["lut_ios16"] = save("lut_ios16", convert(lut16, ct.target.iOS16),
                                 {f"w_lut{b}": v[3] for b, v in luts.items()})

    dense = rng.standard_normal((6, 7)).astype(np.float32)
    dense[rng.random((6, 7)) < 0.6] = 0
    mask = optimize_utils.pack_elements_into_bits((dense != 0).flatten().astype(np.uint8), 1)

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 7))], opset_version=ct.target.iOS16)
    def sparse16(x):
        w = mb.constexpr_sparse_to_dense(nonzero_data=dense[dense != 0], mask=mask,
                                         shape=np.array(dense.shape, np.uint32), name="w_sparse")
        return mb.linear(x=x, weight=w)

    fixtures["sparse_ios16"] = save("sparse_ios16", convert(sparse16, ct.target.iOS16), {"w_sparse": dense})
    return fixtures


def ios18_builder():
    """blockwise_shift_scale (int4 data, int4 offset; uint8 data, fp16 scale), lut_to_dense (uint3 indices,
    per-block palettes; vector palettes), sparse_to_dense (uint1 mask), and a chain: an int8 palette
    dequantized by blockwise_shift_scale feeding lut_to_dense."""
    fixtures = {}
    d4 = rng.integers(-8, 8, size=(4, 8)).astype(types.np_int4_dtype)
    s4 = rng.uniform(0.05, 0.2, size=(4, 2)).astype(np.float32)
    o4 = rng.integers(-2, 3, size=(4, 2)).astype(types.np_int4_dtype)
    u8 = rng.integers(0, 256, size=(6, 8), dtype=np.uint8)
    s16 = rng.uniform(0.01, 0.05, size=(3, 1)).astype(np.float16)

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 8))], opset_version=ct.target.iOS18)
    def shift(x):
        w = mb.constexpr_blockwise_shift_scale(data=d4, scale=s4, offset=o4, name="w_int4")
        w2 = mb.constexpr_blockwise_shift_scale(data=u8, scale=s16, name="w_uint8_fp16")
        return mb.add(x=mb.reduce_sum(x=mb.linear(x=x, weight=w)), y=mb.reduce_sum(x=mb.cast(x=w2, dtype="fp32")))

    expected4 = (d4.astype(np.float32) - np.repeat(o4.astype(np.float32), 4, axis=1)) * np.repeat(s4, 4, axis=1)
    fixtures["shift_ios18"] = save("shift_ios18", convert(shift, ct.target.iOS18), {"w_int4": expected4}, 1e-6)

    idx3 = rng.integers(0, 8, size=(4, 6)).astype(types.np_uint3_dtype)
    lut3 = rng.standard_normal((2, 1, 8, 1)).astype(np.float32)
    idxv = rng.integers(0, 4, size=(3, 4)).astype(types.np_uint2_dtype)
    lutv = rng.standard_normal((1, 2, 4, 2)).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 6))], opset_version=ct.target.iOS18)
    def lut18(x):
        w = mb.constexpr_lut_to_dense(indices=idx3, lut=lut3, name="w_lut_uint3")
        wv = mb.constexpr_lut_to_dense(indices=idxv, lut=lutv, vector_axis=0, name="w_lut_vector")
        return mb.add(x=mb.reduce_sum(x=mb.linear(x=x, weight=w)), y=mb.reduce_sum(x=wv))

    fixtures["lut_ios18"] = save("lut_ios18", convert(lut18, ct.target.iOS18),
                                 {"w_lut_uint3": optimize_utils.lut_to_dense(idx3.astype(np.uint8), lut3)})

    dense = rng.standard_normal((5, 6)).astype(np.float32)
    dense[rng.random((5, 6)) < 0.5] = 0

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 6))], opset_version=ct.target.iOS18)
    def sparse18(x):
        w = mb.constexpr_sparse_to_dense(nonzero_data=dense[dense != 0],
                                         mask=(dense != 0).astype(types.np_uint1_dtype), name="w_sparse")
        return mb.linear(x=x, weight=w)

    fixtures["sparse_ios18"] = save("sparse_ios18", convert(sparse18, ct.target.iOS18), {"w_sparse": dense})

    lut_q = rng.integers(-128, 128, size=(1, 1, 16, 1)).astype(np.int8)
    lut_s = np.array([[[[0.03]]]], np.float32)
    idx4 = rng.integers(0, 16, size=(5, 6)).astype(types.np_uint4_dtype)

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 6))], opset_version=ct.target.iOS18)
    def chain(x):
        lut = mb.constexpr_blockwise_shift_scale(data=lut_q, scale=lut_s, name="lut_dequantized")
        w = mb.constexpr_lut_to_dense(indices=idx4, lut=lut, name="w_chained")
        return mb.linear(x=x, weight=w)

    chained = (lut_q.astype(np.float32) * 0.03)[0, 0, :, 0][idx4.astype(np.int64)]
    fixtures["chain_ios18"] = save("chain_ios18", convert(chain, ct.target.iOS18), {"w_chained": chained}, 1e-6)
    return fixtures


def optimize_utilities():
    """The same ops as coremltools' compression utilities emit them for a real weight."""
    fixtures = {}
    weight = rng.standard_normal((16, 8)).astype(np.float32)

    def base(target):
        @mb.program(input_specs=[mb.TensorSpec(shape=(1, 8))], opset_version=target)
        def prog(x):
            return mb.linear(x=x, weight=weight, name="y")

        return convert(prog, target)

    configs = [
        ("opt_quantize_ios16", ct.target.iOS16, cto.linear_quantize_weights,
         cto.OpLinearQuantizerConfig(mode="linear", dtype="int8", weight_threshold=0)),
        ("opt_palettize_ios16", ct.target.iOS16, cto.palettize_weights,
         cto.OpPalettizerConfig(mode="uniform", nbits=4, weight_threshold=0)),
        ("opt_prune_ios16", ct.target.iOS16, cto.prune_weights,
         cto.OpMagnitudePrunerConfig(target_sparsity=0.5, weight_threshold=0)),
        ("opt_quantize_ios18", ct.target.iOS18, cto.linear_quantize_weights,
         cto.OpLinearQuantizerConfig(mode="linear_symmetric", dtype="int4", granularity="per_block", block_size=4,
                                     weight_threshold=0)),
        ("opt_palettize_ios18", ct.target.iOS18, cto.palettize_weights,
         cto.OpPalettizerConfig(mode="uniform", nbits=2, granularity="per_grouped_channel", group_size=4,
                                weight_threshold=0)),
        ("opt_prune_ios18", ct.target.iOS18, cto.prune_weights,
         cto.OpMagnitudePrunerConfig(target_sparsity=0.5, weight_threshold=0)),
    ]
    for name, target, compress, op_config in configs:
        model = compress(base(target), cto.OptimizationConfig(global_config=op_config))
        fixtures[name] = save(name, model)
    return fixtures


def main():
    os.makedirs(OUT, exist_ok=True)
    for entry in os.listdir(OUT):
        path = os.path.join(OUT, entry)
        shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    fixtures = {}
    fixtures.update(ios16_builder())
    fixtures.update(ios18_builder())
    fixtures.update(optimize_utilities())
    with open(os.path.join(OUT, "fixtures.json"), "w") as f:
        json.dump(fixtures, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
