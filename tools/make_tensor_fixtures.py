#!/usr/bin/env python3
"""Writes the NumPy reference fixtures for the MLTensor operation tests.

Regenerate (from the repository root):

    python3 -m venv .venv && .venv/bin/pip install numpy
    .venv/bin/python tools/make_tensor_fixtures.py

Output: small `.npy` files in Tests/Fixtures/tensor/ (a fixed seed makes them
reproducible). Inputs are named `in_<name>.npy`; expected results `<case>.npy`, or
`<case>_<k>.npy` for operations that return several tensors (split, unstack). The Swift
tests in Tests/TesseraTensorTests/MLTensor*Tests.swift name the inputs and the case for
each operation they check.

Expected values are computed in float64 from the (already rounded) inputs and rounded
once to the result type, so they are the correctly rounded answers; integer results follow
the kernels' documented rules (wrapping arithmetic, division truncating toward zero,
floored remainder).
"""

import glob
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "tensor")
rng = np.random.default_rng(20250301)
INPUTS = {}


def inp(name, array):
    INPUTS[name] = array
    np.save(os.path.join(OUT, "in_" + name + ".npy"), array)
    return array


def out(name, array, dtype=None):
    array = np.array(array, order="C")  # ascontiguousarray would turn 0-d arrays into 1-d
    if dtype is not None:
        array = array.astype(dtype)
    np.save(os.path.join(OUT, name + ".npy"), array)


def outs(name, arrays):
    for k, array in enumerate(arrays):
        out(f"{name}_{k}", array)


def f64(a):
    return a.astype(np.float64)


def uniform(shape, low, high, dtype=np.float32):
    return rng.uniform(low, high, size=shape).astype(dtype)


def ints(shape, low, high, dtype=np.int32):
    return rng.integers(low, high, size=shape).astype(dtype)


def trunc_div(a, b):
    q = np.abs(f64(a)) // np.abs(f64(b)) * np.sign(f64(a)) * np.sign(f64(b))
    return q.astype(a.dtype)


# ---------------------------------------------------------------- inputs


def make_inputs():
    inp("f_a", uniform((2, 3, 4), -2, 2))
    inp("f_b", uniform((3, 1), 0.5, 2))
    inp("f_row", uniform((4,), -2, 2))
    inp("f_s", np.array(1.75, dtype=np.float32))
    inp("f_empty", np.zeros((0, 3), dtype=np.float32))
    inp("f_row3", uniform((3,), -1, 1))
    inp("f_pos", uniform((2, 3), 0.1, 3))
    inp("f_unit", uniform((2, 3), -0.9, 0.9))
    inp("f_ge1", uniform((2, 3), 1.1, 4))
    inp("f_near1", uniform((2, 3, 4), 0.8, 1.2))
    inp("f_q", rng.integers(-1, 3, size=(2, 3)).astype(np.float32))
    inp("f_q2", rng.integers(-1, 3, size=(3,)).astype(np.float32))
    inp("f_round", np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4, -0.6], dtype=np.float32))
    inp("h_a", uniform((2, 3), -2, 2, np.float16))
    inp("h_b", uniform((3,), 0.5, 2, np.float16))
    inp("i_a", ints((2, 3), -10, 11))
    inp("i_b", np.array([3, -4, 5], dtype=np.int32))
    inp("i8_a", np.array([100, -100, 7, -128], dtype=np.int8))
    inp("u8_a", np.array([3, 250, 7, 0], dtype=np.uint8))
    inp("u8_b", np.array([5, 10, 7, 1], dtype=np.uint8))
    inp("b_a", rng.integers(0, 2, size=(2, 3)).astype(np.bool_))
    inp("b_b", np.array([True, False, True]))
    inp("b_r", rng.integers(0, 5, size=(2, 3, 4)) > 0)
    inp("f_m23", uniform((2, 3), -1, 1))
    inp("f_m32", uniform((3, 2), -1, 1))
    inp("f_m34", uniform((3, 4), -1, 1))
    inp("f_v4", uniform((4,), -1, 1))
    inp("f_m45", uniform((4, 5), -1, 1))
    inp("f_b3114", uniform((3, 1, 1, 4), -1, 1))
    inp("f_m42", uniform((4, 2), -1, 1))
    inp("f_b2134", uniform((2, 1, 3, 4), -1, 1))
    inp("f_b546", uniform((5, 4, 6), -1, 1))
    inp("f_b234", uniform((2, 3, 4), -1, 1))
    inp("f_b245", uniform((2, 4, 5), -1, 1))
    inp("i_m23", ints((2, 3), -5, 6))
    inp("i_m32", ints((3, 2), -5, 6))
    inp("h_m23", uniform((2, 3), -1, 1, np.float16))
    inp("h_m32", uniform((3, 2), -1, 1, np.float16))
    inp("f_sq", uniform((1, 3, 1, 2), -1, 1))
    inp("f_e02", np.zeros((0, 2), dtype=np.float32))
    inp("f_exp", uniform((2, 1), 0.5, 2))


# ---------------------------------------------------------------- arithmetic


def arithmetic():
    a, b, s = INPUTS["f_a"], INPUTS["f_b"], INPUTS["f_s"]
    out("add_ff", f64(a) + f64(b), np.float32)
    out("sub_ff", f64(a) - f64(b), np.float32)
    out("mul_ff", f64(a) * f64(b), np.float32)
    out("div_ff", f64(a) / f64(b), np.float32)
    out("rem_ff", np.mod(a, b), np.float32)  # float32 fmod-based, as the kernel
    out("add_fscalar", f64(a) + 2.5, np.float32)
    out("rsub_fscalar", 2.5 - f64(a), np.float32)
    out("mul_fscalar", f64(a) * 3, np.float32)
    out("rdiv_fscalar", 1.5 / f64(INPUTS["f_pos"]), np.float32)
    out("rem_fscalar", np.mod(a, np.float32(0.75)), np.float32)
    out("rrem_fscalar", np.mod(np.float32(5), INPUTS["f_pos"]), np.float32)
    out("neg_f", -a)
    out("add_rank0", f64(s) + f64(a), np.float32)
    out("mul_rank0_rank0", f64(s) * f64(s), np.float32)
    out("add_empty", INPUTS["f_empty"] + INPUTS["f_row3"])
    h, hb = INPUTS["h_a"], INPUTS["h_b"]
    out("add_hh", f64(h) + f64(hb), np.float16)
    out("mul_hh", f64(h) * f64(hb), np.float16)
    out("div_hscalar", f64(h) / 2, np.float16)
    i, ib = INPUTS["i_a"], INPUTS["i_b"]
    out("add_ii", i + ib)
    out("sub_ii", i - ib)
    out("mul_ii", i * ib)
    out("div_ii", trunc_div(i, np.broadcast_to(ib, i.shape)))
    out("rem_ii", np.mod(i, ib))
    out("neg_i", -i)
    out("mul_iscalar", i * np.int32(3))
    out("sub_iscalar_trunc", i - np.int32(2))  # 2.9 converts to 2
    i8 = INPUTS["i8_a"]
    out("add_i8_wrap", (i8.astype(np.int64) * 2).astype(np.int8))
    out("mul_i8scalar", (i8.astype(np.int64) * 3).astype(np.int8))
    u8, u8b = INPUTS["u8_a"], INPUTS["u8_b"]
    out("sub_u8_wrap", (u8.astype(np.int64) - u8b).astype(np.uint8))


# ---------------------------------------------------------------- comparisons and logic


def comparisons():
    q, q2 = INPUTS["f_q"], INPUTS["f_q2"]
    out("eq_ff", q == q2)
    out("ne_ff", q != q2)
    out("lt_ff", q < q2)
    out("le_ff", q <= q2)
    out("gt_ff", q > q2)
    out("ge_ff", q >= q2)
    out("eq_fscalar", q == 1)
    out("lt_fscalar", q < 1)
    out("ge_fscalar", q >= 0)
    out("ne_fscalar", q != 0)
    out("gt_ii", INPUTS["i_a"] > INPUTS["i_b"])
    out("le_iscalar", INPUTS["i_a"] <= 2)
    out("le_hh", INPUTS["h_a"] <= INPUTS["h_b"])
    a, b = INPUTS["b_a"], INPUTS["b_b"]
    out("and_bb", a & b)
    out("or_bb", a | b)
    out("xor_bb", a ^ b)
    out("not_b", ~a)
    out("eq_bb", a == b)


# ---------------------------------------------------------------- math


def math_fixtures():
    a, pos, unit, ge1 = (f64(INPUTS[n]) for n in ("f_a", "f_pos", "f_unit", "f_ge1"))
    f32 = np.float32
    for name, value in [
        ("abs", np.abs(a)), ("sign", np.sign(a)), ("ceil", np.ceil(a)), ("floor", np.floor(a)),
        ("exp", np.exp(a)), ("exp2", np.exp2(a)), ("sin", np.sin(a)), ("cos", np.cos(a)),
        ("tan", np.tan(unit)), ("atan", np.arctan(a)), ("sinh", np.sinh(a)), ("cosh", np.cosh(a)),
        ("tanh", np.tanh(a)), ("asinh", np.arcsinh(a)), ("squared", a * a),
        ("log", np.log(pos)), ("squareRoot", np.sqrt(pos)), ("rsqrt", 1 / np.sqrt(pos)),
        ("reciprocal", 1 / pos), ("asin", np.arcsin(unit)), ("acos", np.arccos(unit)),
        ("atanh", np.arctanh(unit)), ("acosh", np.arccosh(ge1)),
    ]:
        out("math_" + name, value, f32)
    out("math_round", np.round(INPUTS["f_round"]))
    h = f64(INPUTS["h_a"])
    out("math_h_exp", np.exp(h), np.float16)
    out("math_h_tanh", np.tanh(h), np.float16)
    out("math_h_abs", np.abs(h), np.float16)
    i = INPUTS["i_a"]
    out("math_i_abs", np.abs(i))
    out("math_i_sign", np.sign(i))
    out("math_i_squared", i * i)
    out("math_i_floor", i)
    out("pow_ff", np.power(pos, f64(INPUTS["f_exp"])), f32)
    out("pow_fscalar", np.power(pos, 2.0), f32)
    out("pow_iscalar", np.power(i, 2))
    out("clamp_closed", np.clip(INPUTS["f_a"], np.float32(-0.5), np.float32(0.5)))
    out("clamp_from", np.maximum(INPUTS["f_a"], np.float32(0)))
    out("clamp_through", np.minimum(INPUTS["f_a"], np.float32(0.25)))
    out("clamp_i", np.clip(i, -3, 3))
    out("min_ff", np.minimum(INPUTS["f_a"], INPUTS["f_b"]))
    out("max_ff", np.maximum(INPUTS["f_a"], INPUTS["f_b"]))
    out("max_ii", np.maximum(INPUTS["i_a"], INPUTS["i_b"]))
    out("cast_f_i32", np.trunc(INPUTS["f_a"] * 4).astype(np.int32))
    out("cast_i_f", INPUTS["i_a"].astype(np.float32))
    out("cast_f_h", INPUTS["f_a"].astype(np.float16))
    out("cast_f_b", INPUTS["f_q"] != 0)
    out("cast_b_f", INPUTS["b_a"].astype(np.float32))
    out("cast_f_u8", np.trunc(INPUTS["f_pos"] * 50).astype(np.uint8))
    out("cast_like_i8", INPUTS["i_a"].astype(np.int8))


# ---------------------------------------------------------------- reductions


def reductions():
    a = f64(INPUTS["f_a"])
    f32 = np.float32
    out("sum_all", a.sum(), f32)
    out("sum_all_keep", a.sum(keepdims=True), f32)
    out("sum_ax1", a.sum(axis=1), f32)
    out("sum_ax0m1", a.sum(axis=(0, 2)), f32)
    out("sum_axm1_keep", a.sum(axis=-1, keepdims=True), f32)
    out("mean_all", a.mean(), f32)
    out("mean_ax02_keep", a.mean(axis=(0, 2), keepdims=True), f32)
    out("mean_axm2", a.mean(axis=-2), f32)
    out("max_all", a.max(), f32)
    out("max_ax0_keep", a.max(axis=0, keepdims=True), f32)
    out("max_ax12", a.max(axis=(1, 2)), f32)
    out("min_all_keep", a.min(keepdims=True), f32)
    out("min_axm1", a.min(axis=-1), f32)
    out("min_ax01", a.min(axis=(0, 1)), f32)
    n = f64(INPUTS["f_near1"])
    out("prod_all", n.prod(), f32)
    out("prod_ax2", n.prod(axis=2), f32)
    out("prod_ax01_keep", n.prod(axis=(0, 1), keepdims=True), f32)
    b = INPUTS["b_r"]
    out("all_all", b.all())
    out("all_ax2", b.all(axis=2))
    out("all_ax01_keep", b.all(axis=(0, 1), keepdims=True))
    out("any_all_keep", b.any(keepdims=True))
    out("any_axm1", b.any(axis=-1))
    out("any_ax0", (~b).any(axis=0))
    out("argmax_flat", np.array(a.argmax(), dtype=np.int32))
    out("argmax_ax1", a.argmax(axis=1).astype(np.int32))
    out("argmax_axm1_keep", np.expand_dims(a.argmax(axis=-1), -1).astype(np.int32))
    out("argmin_flat", np.array(a.argmin(), dtype=np.int32))
    out("argmin_ax0", a.argmin(axis=0).astype(np.int32))
    i = INPUTS["i_a"]
    out("sum_i_ax0", i.sum(axis=0).astype(np.int32))
    out("mean_i_all", f64(i).mean(), f32)
    out("max_i_ax1", i.max(axis=1))
    out("argmax_i_ax1", i.argmax(axis=1).astype(np.int32))
    out("sum_h_ax1", f64(INPUTS["h_a"]).sum(axis=1), np.float16)
    s = INPUTS["f_s"]
    out("sum_rank0", s)
    out("argmax_rank0", np.array(0, dtype=np.int32))
    e = INPUTS["f_empty"]
    out("sum_empty_ax0", e.sum(axis=0))
    out("sum_empty_all", e.sum())
    out("prod_empty_ax0", e.prod(axis=0))
    out("max_empty_ax1", np.zeros((0,), dtype=np.float32))
    out("any_empty", np.array(False))

    def softmax(x, axis):
        z = np.exp(x - x.max(axis=axis, keepdims=True))
        return z / z.sum(axis=axis, keepdims=True)

    out("softmax_default", softmax(a, -1), f32)
    out("softmax_ax0", softmax(a, 0), f32)
    out("softmax_h", softmax(f64(INPUTS["h_a"]), -1), np.float16)
    out("cumsum_ax0", np.cumsum(a, axis=0), f32)
    out("cumsum_axm1", np.cumsum(a, axis=-1), f32)
    out("cumprod_ax1", np.cumprod(n, axis=1), f32)
    out("cumsum_i", np.cumsum(i, axis=1).astype(np.int32))


# ---------------------------------------------------------------- linear algebra


def linear_algebra():
    g = lambda n: f64(INPUTS[n])
    f32 = np.float32
    out("mm_2x2", g("f_m23") @ g("f_m32"), f32)
    out("mm_mv", g("f_m34") @ g("f_v4"), f32)
    out("mm_vm", g("f_v4") @ g("f_m45"), f32)
    out("mm_vv", np.array(g("f_v4") @ g("f_v4")), f32)
    out("mm_batch_contract", np.matmul(g("f_b3114"), g("f_m42")), f32)
    out("mm_batch_broadcast", np.matmul(g("f_b2134"), g("f_b546")), f32)
    out("mm_batch_vec", np.matmul(g("f_b234"), g("f_v4")), f32)
    out("mm_vec_batch", np.matmul(g("f_v4"), g("f_b245")), f32)
    out("mm_i", INPUTS["i_m23"] @ INPUTS["i_m32"])
    out("mm_h", g("h_m23") @ g("h_m32"), np.float16)

    def band(x, lower, upper):
        m, n = x.shape[-2:]
        i = np.arange(m)[:, None]
        j = np.arange(n)[None, :]
        keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
        return np.where(keep, x, np.zeros_like(x))

    x = INPUTS["f_b245"]
    for lower, upper in [(1, 2), (-1, 0), (0, -1), (0, 0), (-1, -1), (7, 1)]:
        out(f"band_{lower}_{upper}".replace("-", "m"), band(x, lower, upper))
    out("band_i", band(INPUTS["i_m23"], 0, 1))


# ---------------------------------------------------------------- shape, combining, ranges


def shape_fixtures():
    a = INPUTS["f_a"]
    out("reshape_46", a.reshape(4, 6))
    out("flatten", a.reshape(-1))
    out("expand_0_2", np.expand_dims(a, (0, 2)))
    out("expand_m1", np.expand_dims(a, -1))
    out("expand_rank0", np.expand_dims(INPUTS["f_s"], 0))
    sq = INPUTS["f_sq"]
    out("squeeze_all", np.squeeze(sq))
    out("squeeze_0", np.squeeze(sq, 0))
    out("squeeze_m2_0", np.squeeze(sq, (-2, 0)))
    out("transpose", a.transpose())
    out("transpose_102", a.transpose(1, 0, 2))
    out("transpose_201", a.transpose(2, 0, 1))
    out("transpose_b", INPUTS["b_a"].T)
    out("concat_with_m1", np.concatenate([a, a * 0 + 1], axis=-1))
    outs("split_count_ax1", np.split(a, 3, axis=1))
    outs("split_sizes_axm1", np.split(a, [1], axis=-1))
    outs("split_sizes_zero", np.split(INPUTS["f_row"], [0, 3], axis=0))
    outs("unstack_ax1", [a[:, k, :] for k in range(3)])
    outs("unstack_ax0_i", [INPUTS["i_a"][k] for k in range(2)])
    out("tile_fewer", np.tile(a, 2))
    out("tile_promote", np.tile(a, (2, 1, 1, 2)))
    out("tile_vec", np.tile(INPUTS["f_row"], (3, 2)))
    out("tile_b", np.tile(INPUTS["b_b"], (2, 1)))
    out("reverse_0", a[::-1])
    out("reverse_0_m1", a[::-1, :, ::-1])
    out("reverse_h", INPUTS["h_a"][:, ::-1])
    out("reverse_empty", INPUTS["f_e02"][::-1, ::-1])


def combining_fixtures():
    r = INPUTS["f_row"]
    m, p = INPUTS["f_m23"], INPUTS["f_pos"]
    out("stack_ax0", np.stack([r, r * 2], axis=0))
    out("stack_axm1", np.stack([r, r * 2], axis=-1))
    out("stack_ax1_three", np.stack([m, p, m], axis=1))
    out("stack_i", np.stack([INPUTS["i_a"], INPUTS["i_a"]], axis=2))
    out("stack_rank0", np.stack([INPUTS["f_s"], INPUTS["f_s"]]))
    out("concat_ax0", np.concatenate([m, p, m], axis=0))
    out("concat_axm1", np.concatenate([m, p], axis=-1))
    out("concat_empty", np.concatenate([INPUTS["f_empty"], m], axis=0))
    out("concat_b", np.concatenate([INPUTS["b_b"], INPUTS["b_b"]]))
    out("range_f", np.arange(0, 1, 0.25, dtype=np.float32))
    out("range_f_neg", np.array([-1 + i * 0.3 for i in range(7)], dtype=np.float32))
    out("range_i", np.arange(0, 10, 3, dtype=np.int32))
    out("range_i_down", np.arange(10, 0, -3, dtype=np.int32))
    out("range_h", np.arange(0, 2, 0.5).astype(np.float16))
    out("range_empty", np.zeros((0,), dtype=np.float32))
    out("linspace_f", np.linspace(0, 1, 5), np.float32)
    out("linspace_f7", np.linspace(-3, 7, 7), np.float32)
    out("linspace_h", np.linspace(-1, 2, 4), np.float16)
    out("linspace_one", np.linspace(2.5, 9, 1), np.float32)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for old in glob.glob(os.path.join(OUT, "*.npy")):
        os.remove(old)
    make_inputs()
    arithmetic()
    comparisons()
    math_fixtures()
    reductions()
    linear_algebra()
    shape_fixtures()
    combining_fixtures()
    files = glob.glob(os.path.join(OUT, "*.npy"))
    print(f"{len(files)} files, {sum(os.path.getsize(f) for f in files)} bytes in {os.path.relpath(OUT)}")
