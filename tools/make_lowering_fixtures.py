#!/usr/bin/env python3
"""Writes the per-op and small-model fixtures for the lowering tests (TesseraModelsTests/Lowering*).

Regenerate (from the repository root; coremltools 9.0 saves packages on Linux x86_64):

    python3 -m venv tools/.venv-coreml
    tools/.venv-coreml/bin/pip install coremltools numpy
    tools/.venv-coreml/bin/python tools/make_lowering_fixtures.py

coremltools cannot predict on Linux, so every expected output is computed here with NumPy,
independently of Tessera. Output, in Tests/Fixtures/lowering/:

* `<case>/model.mlpackage`: a MIL-builder program (per-op cases are converted with the empty
  pass pipeline, so the op under test is saved as written; the model cases use the default
  pipeline, as a user's conversion would);
* `<case>/<input>.npy` and `<case>/expected_<i>.npy` (outputs in declaration order);
* `cases.json`: per case its inputs, outputs, tolerances and the MIL op types in the saved
  program (for the per-op coverage report).

The whole-model cases (a conv-bn-relu-pool-linear CNN, a transformer encoder block, the CNN
with Float16 weights, a classifier) are written with the MIL builder too: the only torch
wheel available here (2.13) is far newer than coremltools 9.0 supports (2.7). A fixed seed keeps the weights reproducible.
"""

import json
import math
import os
import shutil

import numpy as np
import coremltools as ct
from coremltools.converters.mil import Builder as mb
from coremltools.converters.mil.mil import types

import fixture_cases

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "lowering")
rng = np.random.default_rng(20261201)
CASES = []


def rand(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, size=shape).astype(np.float32)


def save_case(name, inputs, build, expected, target=ct.target.iOS15, rtol=1e-4, atol=1e-5,
              precision=ct.precision.FLOAT32, pipeline="empty", classifier=None, states=()):
    """Builds `build(**placeholders)` as a program, saves it and its NumPy references."""
    dtypes = {np.dtype(np.int32): types.int32, np.dtype(np.float16): types.fp16}
    specs = [(mb.StateTensorSpec if k in states else mb.TensorSpec)(shape=v.shape, dtype=dtypes.get(v.dtype, types.fp32))
             for k, v in inputs.items()]
    prog = fixture_cases.program(build, specs, list(inputs.keys()), target)
    kwargs = dict(convert_to="mlprogram", minimum_deployment_target=target, compute_precision=precision)
    if pipeline == "empty":
        kwargs["pass_pipeline"] = ct.PassPipeline.EMPTY
    if classifier is not None:
        kwargs["classifier_config"] = ct.ClassifierConfig(classifier)
    model = ct.convert(prog, **kwargs)
    CASES.append(fixture_cases.save(OUT, name, model, inputs, expected, rtol, atol))


# ---------------------------------------------------------------- NumPy references

erf = np.vectorize(math.erf, otypes=[np.float32])


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def pad_spatial(x, pads, value=0.0):
    width = [(0, 0)] * (x.ndim - len(pads)) + list(pads)
    return np.pad(x, width, constant_values=value)


def same_pads(sizes, kernel, strides, dilations, lower=False):
    pads = []
    for i, k, s, d in zip(sizes, kernel, strides, dilations):
        eff = (k - 1) * d + 1
        out = -(-i // s)
        total = max(0, (out - 1) * s + eff - i)
        small = total // 2
        pads.append((total - small, small) if lower else (small, total - small))
    return pads


def conv_ref(x, w, b, strides, pads, dilations, groups):
    """NCHW conv by loops (tiny tensors)."""
    x = pad_spatial(x, pads)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    sh, sw = strides
    dh, dw = dilations
    oh = (h - (kh - 1) * dh - 1) // sh + 1
    ow = (wd - (kw - 1) * dw - 1) // sw + 1
    y = np.zeros((n, o, oh, ow), np.float64)
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(oh):
            for j in range(ow):
                patch = x[:, g * cg:(g + 1) * cg, i * sh:i * sh + (kh - 1) * dh + 1:dh, j * sw:j * sw + (kw - 1) * dw + 1:dw]
                y[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y.astype(np.float32)


def conv_transpose_ref(x, w, b, strides, pads, dilations, groups, out_size=None):
    """Transposed conv by scattering every input element (tiny tensors)."""
    n, cin, h, wd = x.shape
    _, cog, kh, kw = w.shape
    sh, sw = strides
    dh, dw = dilations
    fh, fw = (h - 1) * sh + (kh - 1) * dh + 1, (wd - 1) * sw + (kw - 1) * dw + 1
    y = np.zeros((n, cog * groups, fh + 8, fw + 8), np.float64)
    cig = cin // groups
    for ci in range(cin):
        g = ci // cig
        for i in range(h):
            for j in range(wd):
                for a in range(kh):
                    for c in range(kw):
                        y[:, g * cog:(g + 1) * cog, i * sh + a * dh, j * sw + c * dw] += x[:, ci, i, j][:, None] * w[ci, :, a, c]
    (pt, pb), (pl, pr) = pads
    oh, ow = out_size or (fh - pt - pb, fw - pl - pr)
    y = y[:, :, pt:pt + oh, pl:pl + ow]
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y.astype(np.float32)


def pool_ref(x, kernel, strides, pads, mode, exclude_padding=False, ceil_mode=False):
    n, c, h, w = x.shape
    kh, kw = kernel
    sh, sw = strides
    (pt, pb), (pl, pr) = pads

    def out_size(size, k, s, p0, p1):
        span = size + p0 + p1 - k
        count = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (count - 1) * s >= size + p0:
            count -= 1
        return count

    oh, ow = out_size(h, kh, sh, pt, pb), out_size(w, kw, sw, pl, pr)
    y = np.zeros((n, c, oh, ow), np.float32)
    for i in range(oh):
        for j in range(ow):
            top, left = i * sh - pt, j * sw - pl
            y0, y1 = max(top, 0), min(top + kh, h)
            x0, x1 = max(left, 0), min(left + kw, w)
            window = x[:, :, y0:y1, x0:x1]
            if mode == "max":
                y[:, :, i, j] = window.max(axis=(2, 3))
            else:
                if exclude_padding:
                    count = (y1 - y0) * (x1 - x0)
                else:
                    count = (min(top + kh, h + pb) - top) * (min(left + kw, w + pr) - left)
                y[:, :, i, j] = window.sum(axis=(2, 3)) / count
    return y


def layer_norm_ref(x, axes, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=tuple(axes), keepdims=True)
    var = ((x - mean) ** 2).mean(axis=tuple(axes), keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y


def gelu_ref(x, mode="EXACT"):
    if mode == "TANH_APPROXIMATION":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    if mode == "SIGMOID_APPROXIMATION":
        return x * sigmoid(1.702 * x)
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def softmax_ref(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ---------------------------------------------------------------- per-op cases

def elementwise_cases():
    x, y = rand(2, 3, 4), rand(3, 4)
    binaries = {
        "add": np.add, "sub": np.subtract, "mul": np.multiply, "real_div": np.divide,
        "maximum": np.maximum, "minimum": np.minimum,
        "floor_div": lambda a, b: np.floor(a / b), "mod": lambda a, b: a - np.floor(a / b) * b,
    }
    for op, ref in binaries.items():
        yy = y if op not in ("real_div", "floor_div", "mod") else np.where(np.abs(y) < 0.3, 0.7, y).astype(np.float32)
        save_case(op, {"x": x, "y": yy}, lambda x, y, op=op: getattr(mb, op)(x=x, y=y), ref(x, yy))
    base = rand(2, 3, low=0.5, high=2)
    exponent = rand(2, 3)
    save_case("pow", {"x": base, "y": exponent}, lambda x, y: mb.pow(x=x, y=y), np.power(base, exponent))
    scalar = rand(1)
    save_case("add_scalar_const", {"x": x}, lambda x: mb.add(x=x, y=np.float32(scalar[0])), x + scalar[0])
    for op, ref in {"equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
                    "greater": np.greater, "greater_equal": np.greater_equal}.items():
        yy = np.where(rng.uniform(size=(3, 4)) < 0.3, x[0], y).astype(np.float32)
        save_case(op, {"x": x, "y": yy}, lambda x, y, op=op: mb.cast(x=getattr(mb, op)(x=x, y=y), dtype="fp32"),
                  ref(x, yy).astype(np.float32))
    for op, ref in {"logical_and": np.logical_and, "logical_or": np.logical_or,
                    "logical_xor": np.logical_xor}.items():
        save_case(op, {"x": x, "y": y},
                  lambda x, y, op=op: mb.cast(x=getattr(mb, op)(x=mb.greater(x=x, y=0.0), y=mb.less(x=y, y=0.5)),
                                              dtype="fp32"),
                  ref(x > 0, y < 0.5).astype(np.float32))
    save_case("logical_not", {"x": x}, lambda x: mb.cast(x=mb.logical_not(x=mb.greater(x=x, y=0.0)), dtype="fp32"),
              (~(x > 0)).astype(np.float32))
    save_case("select", {"x": x, "y": y}, lambda x, y: mb.select(cond=mb.greater(x=x, y=y), a=x, b=y),
              np.where(x > y, x, y))

    unaries = {
        "abs": np.abs, "ceil": np.ceil, "floor": np.floor, "round": np.round, "sign": np.sign, "exp": np.exp,
        "exp2": np.exp2, "erf": erf, "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh,
        "sigmoid": sigmoid, "square": np.square, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    }
    for op, ref in unaries.items():
        save_case(op, {"x": x}, lambda x, op=op: getattr(mb, op)(x=x), ref(x))
    pos = rand(2, 3, 4, low=0.1, high=3)
    unit = rand(2, 3, 4, low=-0.9, high=0.9)
    save_case("sqrt", {"x": pos}, lambda x: mb.sqrt(x=x), np.sqrt(pos))
    save_case("log", {"x": pos}, lambda x: mb.log(x=x), np.log(pos))
    save_case("rsqrt", {"x": pos}, lambda x: mb.rsqrt(x=x, epsilon=1e-3), 1 / np.sqrt(pos + 1e-3))
    save_case("inverse", {"x": pos}, lambda x: mb.inverse(x=x, epsilon=1e-2), 1 / (pos + 1e-2))
    save_case("asin", {"x": unit}, lambda x: mb.asin(x=x), np.arcsin(unit))
    save_case("acos", {"x": unit}, lambda x: mb.acos(x=x), np.arccos(unit))
    save_case("atanh", {"x": unit}, lambda x: mb.atanh(x=x), np.arctanh(unit))
    save_case("cast_int32", {"x": x * 3}, lambda x: mb.cast(x=mb.cast(x=x, dtype="int32"), dtype="fp32"),
              np.trunc(x * 3))
    save_case("identity", {"x": x}, lambda x: mb.identity(x=x), x)


def activation_cases():
    x = rand(2, 3, 4, low=-4, high=4)
    save_case("relu", {"x": x}, lambda x: mb.relu(x=x), np.maximum(x, 0))
    save_case("relu6", {"x": x * 2}, lambda x: mb.relu6(x=x), np.clip(x * 2, 0, 6))
    save_case("clip", {"x": x}, lambda x: mb.clip(x=x, alpha=-1.0, beta=2.5), np.clip(x, -1, 2.5))
    save_case("threshold", {"x": x}, lambda x: mb.threshold(x=x, alpha=0.5), np.maximum(x, 0.5))
    save_case("leaky_relu", {"x": x}, lambda x: mb.leaky_relu(x=x, alpha=0.1), np.where(x >= 0, x, 0.1 * x))
    save_case("elu", {"x": x}, lambda x: mb.elu(x=x, alpha=0.7), np.where(x > 0, x, 0.7 * (np.exp(x) - 1)))
    save_case("thresholded_relu", {"x": x}, lambda x: mb.thresholded_relu(x=x, alpha=1.0), np.where(x >= 1, x, 0))
    save_case("sigmoid_hard", {"x": x}, lambda x: mb.sigmoid_hard(x=x, alpha=1 / 6, beta=0.5),
              np.clip(x / 6 + 0.5, 0, 1))
    save_case("silu", {"x": x}, lambda x: mb.silu(x=x), x * sigmoid(x))
    save_case("softplus", {"x": x}, lambda x: mb.softplus(x=x), np.log1p(np.exp(x)))
    save_case("softsign", {"x": x}, lambda x: mb.softsign(x=x), x / (1 + np.abs(x)))
    save_case("linear_activation", {"x": x}, lambda x: mb.linear_activation(x=x, alpha=1.5, beta=-0.5),
              1.5 * x - 0.5)
    save_case("scaled_tanh", {"x": x}, lambda x: mb.scaled_tanh(x=x, alpha=2.0, beta=0.5), 2 * np.tanh(0.5 * x))
    save_case("clamped_relu", {"x": x}, lambda x: mb.clamped_relu(x=x, alpha=0.2, beta=3.0),
              np.where(x >= 0, np.minimum(x, 3), np.minimum(0.2 * x, 3)))
    alpha = rand(3, low=0, high=0.5)
    x4 = rand(1, 3, 2, 2)
    save_case("prelu", {"x": x4}, lambda x: mb.prelu(x=x, alpha=alpha),
              np.where(x4 >= 0, x4, alpha.reshape(1, 3, 1, 1) * x4))
    for mode in ["EXACT", "TANH_APPROXIMATION", "SIGMOID_APPROXIMATION"]:
        save_case("gelu_" + mode.lower(), {"x": x}, lambda x, mode=mode: mb.gelu(x=x, mode=mode), gelu_ref(x, mode))


def normalization_cases():
    x = rand(2, 3, 4)
    save_case("softmax_last", {"x": x}, lambda x: mb.softmax(x=x, axis=-1), softmax_ref(x, -1))
    save_case("softmax_axis1", {"x": x}, lambda x: mb.softmax(x=x, axis=1), softmax_ref(x, 1))
    gamma, beta = rand(4), rand(4)
    save_case("layer_norm", {"x": x}, lambda x: mb.layer_norm(x=x, axes=[-1], gamma=gamma, beta=beta, epsilon=1e-5),
              layer_norm_ref(x, [-1], gamma, beta))
    save_case("layer_norm_two_axes", {"x": x}, lambda x: mb.layer_norm(x=x, axes=[1, 2], epsilon=1e-3),
              layer_norm_ref(x, [1, 2], eps=1e-3))
    x4 = rand(2, 3, 4, 5)
    mean, var, g, b = rand(3), rand(3, low=0.2, high=2), rand(3), rand(3)
    save_case("batch_norm", {"x": x4}, lambda x: mb.batch_norm(x=x, mean=mean, variance=var, gamma=g, beta=b,
                                                                 epsilon=1e-5),
              (x4 - mean.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-5) * g.reshape(1, 3, 1, 1)
              + b.reshape(1, 3, 1, 1))
    save_case("instance_norm", {"x": x4}, lambda x: mb.instance_norm(x=x, gamma=g, beta=b, epsilon=1e-5),
              layer_norm_ref(x4, [2, 3]) * g.reshape(1, 3, 1, 1) + b.reshape(1, 3, 1, 1))
    def lrn_ref(x, size, alpha, beta, k):
        half = (size - 1) // 2
        sq = np.pad(x * x, [(0, 0), (half, half), (0, 0), (0, 0)])
        total = sum(sq[:, i:i + x.shape[1]] for i in range(2 * half + 1))
        return x / (k + alpha / size * total) ** beta
    for size in (3, 4):
        save_case(f"local_response_norm_{size}", {"x": x4},
                  lambda x, size=size: mb.local_response_norm(x=x, size=size, alpha=0.5, beta=0.75, k=2.0),
                  lrn_ref(x4, size, 0.5, 0.75, 2.0))
    reductions = {"reduce_mean": np.mean, "reduce_sum": np.sum, "reduce_max": np.max, "reduce_min": np.min,
                  "reduce_prod": np.prod}
    for op, ref in reductions.items():
        save_case(op, {"x": x}, lambda x, op=op: getattr(mb, op)(x=x, axes=[1, -1], keep_dims=False),
                  ref(x, axis=(1, 2)))
        save_case(op + "_keep", {"x": x}, lambda x, op=op: getattr(mb, op)(x=x, axes=[0], keep_dims=True),
                  ref(x, axis=0, keepdims=True))
    save_case("reduce_all_axes", {"x": x}, lambda x: mb.reduce_sum(x=x), np.sum(x))
    save_case("reduce_l1_norm", {"x": x}, lambda x: mb.reduce_l1_norm(x=x, axes=[2]), np.abs(x).sum(axis=2))
    save_case("reduce_l2_norm", {"x": x}, lambda x: mb.reduce_l2_norm(x=x, axes=[2]), np.sqrt((x * x).sum(axis=2)))
    save_case("reduce_sum_square", {"x": x}, lambda x: mb.reduce_sum_square(x=x, axes=[1]), (x * x).sum(axis=1))
    save_case("reduce_log_sum_exp", {"x": x}, lambda x: mb.reduce_log_sum_exp(x=x, axes=[2], keep_dims=True),
              np.log(np.exp(x).sum(axis=2, keepdims=True)))
    save_case("reduce_argmax", {"x": x}, lambda x: mb.cast(x=mb.reduce_argmax(x=x, axis=1), dtype="fp32"),
              np.argmax(x, axis=1).astype(np.float32))
    save_case("reduce_argmin", {"x": x}, lambda x: mb.cast(x=mb.reduce_argmin(x=x, axis=-1, keep_dims=True),
                                                          dtype="fp32"),
              np.argmin(x, axis=-1)[..., None].astype(np.float32))


def linear_cases():
    x = rand(2, 3, 8)
    w, b = rand(5, 8), rand(5)
    save_case("linear", {"x": x}, lambda x: mb.linear(x=x, weight=w, bias=b), x @ w.T + b)
    save_case("linear_no_bias", {"x": x[0]}, lambda x: mb.linear(x=x, weight=w), x[0] @ w.T)
    a, c = rand(2, 3, 4), rand(2, 4, 5)
    save_case("matmul", {"x": a, "y": c}, lambda x, y: mb.matmul(x=x, y=y), a @ c)
    d = rand(2, 5, 4)
    save_case("matmul_transpose_y", {"x": a, "y": d}, lambda x, y: mb.matmul(x=x, y=y, transpose_y=True),
              a @ d.transpose(0, 2, 1))
    e = rand(4, 3)
    save_case("matmul_transpose_x_broadcast", {"x": e, "y": c},
              lambda x, y: mb.matmul(x=x, y=y, transpose_x=True), e.T @ c)
    v = rand(4)
    f = rand(4, 5)
    save_case("matmul_vector", {"x": v, "y": f}, lambda x, y: mb.matmul(x=x, y=y), v @ f)


def attention_cases():
    q, k, v = rand(1, 2, 3, 4), rand(1, 2, 5, 4), rand(1, 2, 5, 6)
    keep = rng.uniform(size=(3, 5)) < 0.7
    keep[:, 0] = True
    scores = q @ k.transpose(0, 1, 3, 2) / 2.0
    save_case("scaled_dot_product_attention", {"q": q, "k": k, "v": v},
              lambda q, k, v: mb.scaled_dot_product_attention(query=q, key=k, value=v, attn_mask=keep),
              softmax_ref(np.where(keep, scores, -np.inf)) @ v, target=ct.target.iOS18)
    bias = rand(3, 5)
    save_case("scaled_dot_product_attention_float_mask", {"q": q, "k": k, "v": v},
              lambda q, k, v: mb.scaled_dot_product_attention(query=q, key=k, value=v, attn_mask=bias),
              softmax_ref(scores + bias) @ v, target=ct.target.iOS18)


def conv_cases():
    x = rand(1, 4, 7, 6)
    w, b = rand(6, 4, 3, 3, low=-0.5, high=0.5), rand(6)
    save_case("conv_valid", {"x": x}, lambda x: mb.conv(x=x, weight=w, bias=b, pad_type="valid"),
              conv_ref(x, w, b, (1, 1), [(0, 0), (0, 0)], (1, 1), 1))
    save_case("conv_same_stride2", {"x": x}, lambda x: mb.conv(x=x, weight=w, bias=b, pad_type="same", strides=[2, 2]),
              conv_ref(x, w, b, (2, 2), same_pads((7, 6), (3, 3), (2, 2), (1, 1)), (1, 1), 1))
    save_case("conv_same_lower", {"x": x},
              lambda x: mb.conv(x=x, weight=w, pad_type="same_lower", strides=[2, 2]),
              conv_ref(x, w, None, (2, 2), same_pads((7, 6), (3, 3), (2, 2), (1, 1), lower=True), (1, 1), 1),
              target=ct.target.iOS16)
    save_case("conv_custom_dilated", {"x": x},
              lambda x: mb.conv(x=x, weight=w, bias=b, pad_type="custom", pad=[2, 1, 0, 2], dilations=[2, 1]),
              conv_ref(x, w, b, (1, 1), [(2, 1), (0, 2)], (2, 1), 1))
    wg = rand(6, 2, 3, 3, low=-0.5, high=0.5)
    save_case("conv_groups", {"x": x}, lambda x: mb.conv(x=x, weight=wg, bias=b, groups=2, pad_type="same"),
              conv_ref(x, wg, b, (1, 1), same_pads((7, 6), (3, 3), (1, 1), (1, 1)), (1, 1), 2))
    wd = rand(4, 1, 3, 3, low=-0.5, high=0.5)
    save_case("conv_depthwise", {"x": x}, lambda x: mb.conv(x=x, weight=wd, groups=4, pad_type="custom",
                                                            pad=[1, 1, 1, 1], strides=[2, 1]),
              conv_ref(x, wd, None, (2, 1), [(1, 1), (1, 1)], (1, 1), 4))
    w1 = rand(6, 4, 1, 1)
    save_case("conv_pointwise", {"x": x}, lambda x: mb.conv(x=x, weight=w1, bias=b),
              conv_ref(x, w1, b, (1, 1), [(0, 0), (0, 0)], (1, 1), 1))
    x1 = rand(2, 4, 9)
    wc = rand(3, 4, 3, low=-0.5, high=0.5)
    save_case("conv1d", {"x": x1}, lambda x: mb.conv(x=x, weight=wc, pad_type="same", strides=[2]),
              conv_ref(x1[:, :, None, :], wc[:, :, None, :], None, (1, 2),
                       [(0, 0)] + same_pads((9,), (3,), (2,), (1,)), (1, 1), 1)[:, :, 0, :])


def conv_transpose_cases():
    x = rand(1, 4, 3, 4)
    w, b = rand(4, 3, 3, 3, low=-0.5, high=0.5), rand(3)
    save_case("conv_transpose_valid", {"x": x}, lambda x: mb.conv_transpose(x=x, weight=w, bias=b),
              conv_transpose_ref(x, w, b, (1, 1), [(0, 0), (0, 0)], (1, 1), 1))
    save_case("conv_transpose_stride2_custom", {"x": x},
              lambda x: mb.conv_transpose(x=x, weight=w, bias=b, pad_type="custom", pad=[1, 1, 1, 0], strides=[2, 2]),
              conv_transpose_ref(x, w, b, (2, 2), [(1, 1), (1, 0)], (1, 1), 1))
    wg = rand(4, 2, 2, 3, low=-0.5, high=0.5)
    save_case("conv_transpose_groups_dilated", {"x": x},
              lambda x: mb.conv_transpose(x=x, weight=wg, groups=2, strides=[2, 1], dilations=[1, 2]),
              conv_transpose_ref(x, wg, None, (2, 1), [(0, 0), (0, 0)], (1, 2), 2))
    save_case("conv_transpose_output_shape", {"x": x},
              lambda x: mb.conv_transpose(x=x, weight=w, bias=b, pad_type="custom", pad=[1, 1, 1, 1], strides=[2, 2],
                                          output_shape=[1, 3, 6, 8]),
              conv_transpose_ref(x, w, b, (2, 2), [(1, 1), (1, 1)], (1, 1), 1, out_size=(6, 8)))
    x1 = rand(2, 4, 5)
    w1 = rand(4, 3, 3, low=-0.5, high=0.5)
    save_case("conv_transpose1d", {"x": x1}, lambda x: mb.conv_transpose(x=x, weight=w1, strides=[2]),
              conv_transpose_ref(x1[:, :, None, :], w1[:, :, None, :], None, (1, 2), [(0, 0), (0, 0)], (1, 1), 1)[:, :, 0, :])


def pool_cases():
    x = rand(1, 2, 7, 6)
    save_case("max_pool", {"x": x}, lambda x: mb.max_pool(x=x, kernel_sizes=[2, 2], strides=[2, 2], pad_type="valid"),
              pool_ref(x, (2, 2), (2, 2), [(0, 0), (0, 0)], "max"))
    save_case("max_pool_same", {"x": x}, lambda x: mb.max_pool(x=x, kernel_sizes=[3, 3], strides=[2, 2], pad_type="same"),
              pool_ref(x, (3, 3), (2, 2), same_pads((7, 6), (3, 3), (2, 2), (1, 1)), "max"))
    save_case("max_pool_ceil", {"x": x}, lambda x: mb.max_pool(x=x, kernel_sizes=[3, 3], strides=[2, 2],
                                                               pad_type="custom", pad=[1, 1, 1, 1], ceil_mode=True),
              pool_ref(x, (3, 3), (2, 2), [(1, 1), (1, 1)], "max", ceil_mode=True))
    save_case("avg_pool_include_pad", {"x": x},
              lambda x: mb.avg_pool(x=x, kernel_sizes=[3, 3], strides=[1, 2], pad_type="custom", pad=[1, 1, 1, 1],
                                    exclude_padding_from_average=False),
              pool_ref(x, (3, 3), (1, 2), [(1, 1), (1, 1)], "avg", exclude_padding=False))
    save_case("avg_pool_exclude_pad", {"x": x},
              lambda x: mb.avg_pool(x=x, kernel_sizes=[3, 3], strides=[2, 2], pad_type="same",
                                    exclude_padding_from_average=True),
              pool_ref(x, (3, 3), (2, 2), same_pads((7, 6), (3, 3), (2, 2), (1, 1)), "avg", exclude_padding=True))
    x1 = rand(2, 3, 8)
    save_case("max_pool1d", {"x": x1}, lambda x: mb.max_pool(x=x, kernel_sizes=[2], strides=[2], pad_type="valid"),
              pool_ref(x1[:, :, None, :], (1, 2), (1, 2), [(0, 0), (0, 0)], "max")[:, :, 0, :])


def shape_cases():
    x = rand(2, 3, 4)
    save_case("reshape", {"x": x}, lambda x: mb.reshape(x=x, shape=[4, -1]), x.reshape(4, -1))
    save_case("reshape_zero", {"x": x}, lambda x: mb.reshape(x=x, shape=[0, 4, 3]), x.reshape(2, 4, 3))
    ref = rand(3, 2, 4)
    save_case("reshape_like", {"x": x, "y": ref},
              lambda x, y: mb.reshape_like(x=x, ref_tensors=(y, x), begins=(0, 2), ends=(2, 3), end_masks=(False, True)),
              x.reshape(3, 2, 4), target=ct.target.iOS16)
    save_case("transpose", {"x": x}, lambda x: mb.transpose(x=x, perm=[2, 0, -2]), x.transpose(2, 0, 1))
    save_case("expand_dims", {"x": x}, lambda x: mb.expand_dims(x=x, axes=[0, -1]), x[None, ..., None])
    xs = rand(2, 1, 4, 1)
    save_case("squeeze", {"x": xs}, lambda x: mb.squeeze(x=x, axes=[1]), xs[:, 0])
    save_case("squeeze_all", {"x": xs}, lambda x: mb.squeeze(x=x), xs[:, 0, :, 0])
    save_case("flatten2d", {"x": x}, lambda x: mb.flatten2d(x=x, axis=1), x.reshape(2, 12))
    save_case("flatten2d_negative_axis", {"x": x}, lambda x: mb.flatten2d(x=x, axis=-1), x.reshape(6, 4))
    labels = np.array([[0, 3], [2, 1]], np.int32)
    save_case("one_hot", {"indices": labels},
              lambda indices: mb.one_hot(indices=indices, one_hot_vector_size=4, axis=1, on_value=2.0, off_value=-1.0),
              np.where(np.arange(4)[None, :, None] == labels[:, None, :], 2.0, -1.0))
    r = rand(5)
    save_case("range_1d", {"x": r}, lambda x: mb.add(x=x, y=mb.range_1d(start=1.0, end=3.5, step=0.5)),
              r + np.arange(1.0, 3.5, 0.5, dtype=np.float32))
    y = rand(2, 5, 4)
    save_case("concat", {"x": x, "y": y}, lambda x, y: mb.concat(values=[x, y, x], axis=1),
              np.concatenate([x, y, x], axis=1))
    z = rand(2, 3, 4)
    save_case("concat_interleave", {"x": x, "y": z}, lambda x, y: mb.concat(values=[x, y], axis=1, interleave=True),
              np.stack([x, z], axis=2).reshape(2, 6, 4))
    save_case("stack", {"x": x, "y": z}, lambda x, y: mb.stack(values=[x, y], axis=-1), np.stack([x, z], axis=-1))
    save_case("split_sizes", {"x": y}, lambda x: mb.split(x=x, split_sizes=[1, 4], axis=1),
              [y[:, :1], y[:, 1:]])
    save_case("split_num", {"x": x}, lambda x: mb.split(x=x, num_splits=2, axis=-1), [x[..., :2], x[..., 2:]])
    save_case("tile", {"x": x}, lambda x: mb.tile(x=x, reps=[1, 2, 3]), np.tile(x, (1, 2, 3)))
    x4 = rand(1, 2, 3, 4)
    save_case("pad_constant", {"x": x4}, lambda x: mb.pad(x=x, pad=[1, 0, 2, 1], mode="constant", constant_val=0.5),
              np.pad(x4, [(0, 0), (0, 0), (1, 0), (2, 1)], constant_values=0.5))
    save_case("pad_reflect", {"x": x4}, lambda x: mb.pad(x=x, pad=[1, 1, 2, 1], mode="reflect"),
              np.pad(x4, [(0, 0), (0, 0), (1, 1), (2, 1)], mode="reflect"))
    save_case("pad_replicate", {"x": x4}, lambda x: mb.pad(x=x, pad=[0, 2, 1, 3], mode="replicate"),
              np.pad(x4, [(0, 0), (0, 0), (0, 2), (1, 3)], mode="edge"))
    save_case("crop", {"x": x4}, lambda x: mb.crop(x=x, crop_height=[1, 0], crop_width=[1, 2]), x4[:, :, 1:, 1:2])
    d = rand(1, 8, 2, 3)
    save_case("depth_to_space", {"x": d}, lambda x: mb.depth_to_space(x=x, block_size=2),
              d.reshape(1, 2, 2, 2, 2, 3).transpose(0, 3, 4, 1, 5, 2).reshape(1, 2, 4, 6))
    e = rand(1, 2, 4, 6)
    save_case("space_to_depth", {"x": e}, lambda x: mb.space_to_depth(x=x, block_size=2),
              e.reshape(1, 2, 2, 2, 3, 2).transpose(0, 3, 5, 1, 2, 4).reshape(1, 8, 2, 3))
    sw = rand(2, 7, 3)
    save_case("sliding_windows", {"x": sw}, lambda x: mb.sliding_windows(x=x, axis=1, size=3, stride=2),
              np.stack([sw[:, i * 2:i * 2 + 3] for i in range(3)], axis=1))
    save_case("shape_fill_like", {"x": x}, lambda x: mb.add(
        x=mb.fill_like(ref_tensor=x, value=1.5), y=mb.cast(x=mb.reduce_sum(x=mb.shape(x=x)), dtype="fp32")),
              np.full(x.shape, 1.5 + 9, np.float32), target=ct.target.iOS16)
    save_case("reverse", {"x": x}, lambda x: mb.reverse(x=x, axes=[0, 2]), x[::-1, :, ::-1])
    m = rand(2, 4, 5)
    save_case("band_part", {"x": m}, lambda x: mb.band_part(x=x, lower=1, upper=2),
              m * np.array([[(i - j <= 1) and (j - i <= 2) for j in range(5)] for i in range(4)], np.float32))
    save_case("cumsum", {"x": x}, lambda x: mb.cumsum(x=x, axis=1), np.cumsum(x, axis=1))
    save_case("cumsum_exclusive_reverse", {"x": x}, lambda x: mb.cumsum(x=x, axis=-1, exclusive=True, reverse=True),
              np.flip(np.cumsum(np.flip(x, -1), -1), -1) - x)
    save_case("upsample_nearest_2x", {"x": x4}, lambda x: mb.upsample_nearest_neighbor(
        x=x, scale_factor_height=2, scale_factor_width=3), x4.repeat(2, axis=2).repeat(3, axis=3))
    rows = np.arange(4) * 3 // 4  # the scale recomputed from the sizes: floor(i · in / out)
    save_case("upsample_nearest_fractional", {"x": x4}, lambda x: mb.upsample_nearest_neighbor(
        x=x, scale_factor_height=1.5, scale_factor_width=0.5), x4[:, :, rows][:, :, :, [0, 2]])


def bilinear_ref(x, out_h, out_w, align_corners, half_pixel):
    """Separable linear interpolation on coremltools' documented sampling grid."""
    def grid(size, count):
        if align_corners:
            return np.array([i * (size - 1) / (count - 1) if count > 1 else 0.0 for i in range(count)])
        spacing = size / count
        g = np.arange(count) * spacing + (0.5 * spacing - 0.5 if half_pixel else 0.0)
        return np.clip(g, 0, size - 1)

    def along(a, axis, g):
        i0 = np.floor(g).astype(int)
        i1 = np.minimum(i0 + 1, a.shape[axis] - 1)
        w = (g - i0).reshape([-1] + [1] * (a.ndim - axis - 1))
        lo, hi = np.take(a, i0, axis=axis), np.take(a, i1, axis=axis)
        return lo + (hi - lo) * w

    y = along(x.astype(np.float64), x.ndim - 2, grid(x.shape[-2], out_h))
    return along(y, x.ndim - 1, grid(x.shape[-1], out_w)).astype(np.float32)


def resize_cases():
    x = rand(1, 2, 3, 4)
    save_case("upsample_bilinear_align_corners", {"x": x},
              lambda x: mb.upsample_bilinear(x=x, scale_factor_height=2.0, scale_factor_width=1.5, align_corners=True),
              bilinear_ref(x, 6, 6, True, False))
    save_case("upsample_bilinear_half_pixel", {"x": x},
              lambda x: mb.upsample_bilinear(x=x, scale_factor_height=2.0, scale_factor_width=2.5, align_corners=False),
              bilinear_ref(x, 6, 10, False, True))
    save_case("upsample_bilinear_legacy", {"x": x},
              lambda x: mb.upsample_bilinear(x=x, scale_factor_height=3.0, scale_factor_width=2.0, align_corners=False,
                                             half_pixel_centers=False),
              bilinear_ref(x, 9, 8, False, False), target=ct.target.iOS16)


def runtime_parameter_cases():
    """Slice bounds and a reshape target computed at run time (as flexible-shape models have)."""
    x = rand(2, 3, 4)
    save_case("reshape_from_shape", {"x": x}, lambda x: mb.reshape(x=x, shape=mb.concat(values=[
        mb.gather(x=mb.shape(x=x), indices=[0], axis=0), np.array([-1], np.int32)], axis=0)), x.reshape(2, 12))
    begin = np.array([1, 0, 1], np.int32)
    save_case("slice_by_index_input_bounds", {"x": x, "begin": begin},
              lambda x, begin: mb.slice_by_index(x=x, begin=begin, end=[2, 3, 4]), x[1:2, 0:3, 1:4])


def indexing_cases():
    x = rand(3, 4, 5)
    save_case("slice_by_index", {"x": x}, lambda x: mb.slice_by_index(x=x, begin=[1, 0, 1], end=[3, 4, 5],
                                                                      stride=[1, 2, 2]), x[1:3, 0:4:2, 1:5:2])
    save_case("slice_by_index_masks", {"x": x},
              lambda x: mb.slice_by_index(x=x, begin=[0, 2, -1], end=[2, 0, 0], stride=[1, 1, -2],
                                          begin_mask=[False, False, True], end_mask=[True, True, True],
                                          squeeze_mask=[False, True, False]),
              x[0:, 2, ::-2])
    save_case("slice_by_index_negative", {"x": x},
              lambda x: mb.slice_by_index(x=x, begin=[-2, -3, 4], end=[-1, 4, 0], stride=[1, 1, -1]),
              x[-2:-1, -3:4, 4:0:-1])
    save_case("slice_by_size", {"x": x}, lambda x: mb.slice_by_size(x=x, begin=[1, 1, 0], size=[2, -1, 3]),
              x[1:3, 1:, 0:3])
    idx = np.array([[2, 0], [1, 2]], np.int32)
    save_case("gather_const_indices", {"x": x}, lambda x: mb.gather(x=x, indices=idx, axis=1), np.take(x, idx, axis=1))
    ids = np.array([4, 0, -1, 2], np.int32)
    save_case("gather_input_indices", {"x": x, "indices": ids},
              lambda x, indices: mb.gather(x=x, indices=indices, axis=-1), np.take(x, ids, axis=-1))
    along = np.array([[[0, 4, 1], [2, 2, 0], [3, 1, 4], [0, 0, 1]]] * 3, np.int32)
    save_case("gather_along_axis", {"x": x, "indices": along},
              lambda x, indices: mb.gather_along_axis(x=x, indices=indices, axis=2),
              np.take_along_axis(x, along, axis=2))
    batched = np.array([[1, 0, 2], [2, 2, 1], [0, 1, 1]], np.int32)
    save_case("gather_batch_dims", {"x": x, "indices": batched},
              lambda x, indices: mb.gather(x=x, indices=indices, axis=1, batch_dims=1),
              np.stack([np.take(x[b], batched[b], axis=0) for b in range(3)]), target=ct.target.iOS16)
    nd = np.array([[0, 3], [2, -1]], np.int32)
    save_case("gather_nd", {"x": x, "indices": nd}, lambda x, indices: mb.gather_nd(x=x, indices=indices),
              np.stack([x[0, 3], x[2, -1]]))
    nd_batched = np.array([[[1], [3]], [[0], [0]], [[2], [1]]], np.int32)
    save_case("gather_nd_batch_dims", {"x": x, "indices": nd_batched},
              lambda x, indices: mb.gather_nd(x=x, indices=indices, batch_dims=1),
              np.stack([x[b][nd_batched[b, :, 0]] for b in range(3)]), target=ct.target.iOS16)
    lengths = np.array([2, 4, 0], np.int32)
    expected = x.copy()
    for b, n in enumerate(lengths):
        expected[b, :n] = x[b, :n][::-1]
    save_case("reverse_sequence", {"x": x, "lengths": lengths},
              lambda x, lengths: mb.reverse_sequence(x=x, lengths=lengths, seq_axis=1, batch_axis=0), expected)
    order = np.argsort(-x, axis=1, kind="stable")[:, :2]
    save_case("topk", {"x": x}, lambda x: mb.topk(x=x, k=2, axis=1),
              [np.take_along_axis(x, order, axis=1), order.astype(np.float32)])
    save_case("argsort_ascending", {"x": x}, lambda x: mb.cast(x=mb.argsort(x=x, axis=-1, ascending=True), dtype="fp32"),
              np.argsort(x, axis=-1, kind="stable").astype(np.float32))
    where = np.array([[[1], [0], [2], [1]], [[0], [3], [3], [2]], [[4], [4], [0], [1]]], np.int32)  # distinct per line
    new = rand(3, 4, 1)
    scattered = x.copy()
    np.put_along_axis(scattered, where, new, axis=2)
    save_case("scatter_along_axis_update", {"x": x, "indices": where, "updates": new},
              lambda x, indices, updates: mb.scatter_along_axis(data=x, indices=indices, updates=updates, axis=2,
                                                                mode="update"), scattered)
    table = rand(10, 6)
    tokens = np.array([[3, 7, 0, 9]], np.int32)
    save_case("gather_embedding", {"ids": tokens}, lambda ids: mb.gather(x=table, indices=ids, axis=0), table[tokens])


def pack_bits(values, bits):
    """Packs unsigned `bits`-bit values LSB first, as the iOS 16 constexpr ops store them."""
    stream = [(int(v) >> b) & 1 for v in values for b in range(bits)]
    stream += [0] * (-len(stream) % 8)
    return np.array([sum(stream[i + b] << b for b in range(8)) for i in range(0, len(stream), 8)], np.uint8)


def constexpr_cases():
    x = rand(2, 6)
    lut = rand(4)
    idx = rng.integers(0, 4, size=(3, 6))
    save_case("constexpr_lut_to_dense", {"x": x}, lambda x: mb.linear(x=x, weight=mb.constexpr_lut_to_dense(
        indices=pack_bits(idx.ravel(), 2), lut=lut, shape=np.array([3, 6], np.uint32))), x @ lut[idx].T,
              target=ct.target.iOS16)
    mask = rng.uniform(size=(3, 6)) < 0.5
    nonzero = rand(int(mask.sum()))
    dense = np.zeros((3, 6), np.float32)
    dense[mask] = nonzero
    save_case("constexpr_sparse_to_dense", {"x": x}, lambda x: mb.linear(x=x, weight=mb.constexpr_sparse_to_dense(
        nonzero_data=nonzero, mask=pack_bits(mask.ravel(), 1), shape=np.array([3, 6], np.uint32))), x @ dense.T,
              target=ct.target.iOS16)
    q = rng.integers(0, 256, size=(3, 6)).astype(np.uint8)
    zp, sc = np.array([128, 120, 130], np.uint8), rand(3, low=0.01, high=0.05)
    save_case("constexpr_affine_dequantize", {"x": x}, lambda x: mb.linear(x=x, weight=mb.constexpr_affine_dequantize(
        quantized_data=q, zero_point=zp, scale=sc, axis=0)),
              x @ ((q.astype(np.float32) - zp[:, None].astype(np.float32)) * sc[:, None]).T, target=ct.target.iOS16)


def oversized_case():
    """A valid program whose tile asks for 6·10¹⁰ elements: the prediction must throw, not trap."""
    x = rand(2, 3)
    save_case("invalid_oversized_tile", {"x": x}, lambda x: mb.tile(x=x, reps=[100000, 100000]), [np.zeros(1)])


def unsupported_case():
    """A program with an op Tessera does not lower (einsum)."""
    a, b = rand(1, 2, 3, 4), rand(1, 4, 3, 5)
    save_case("unsupported_einsum", {"x": a, "y": b},
              lambda x, y: mb.einsum(values=(x, y), equation="nchw,nwhu->nchu"),
              np.einsum("nchw,nwhu->nchu", a, b))


# ---------------------------------------------------------------- small models

def cnn_case(name, precision):
    x = rand(1, 3, 12, 12, low=0, high=1)
    w1 = rand(8, 3, 3, 3, low=-0.4, high=0.4)
    b1 = rand(8, low=-0.1, high=0.1)
    bn = [rand(8, low=-0.2, high=0.2), rand(8, low=0.5, high=1.5), rand(8, low=0.8, high=1.2), rand(8, low=-0.1, high=0.1)]
    w2 = rand(8, 1, 3, 3, low=-0.4, high=0.4)
    w3 = rand(16, 8, 1, 1, low=-0.4, high=0.4)
    wl, bl = rand(10, 16, low=-0.5, high=0.5), rand(10, low=-0.1, high=0.1)
    if precision == ct.precision.FLOAT16:
        # Weights and input exactly representable in fp16, so the fp32 reference is what a
        # Float32 computation on the stored weights gives.
        x, w1, b1, w2, w3, wl, bl = [a.astype(np.float16).astype(np.float32) for a in (x, w1, b1, w2, w3, wl, bl)]
        bn = [a.astype(np.float16).astype(np.float32) for a in bn]
    mean, var, gamma, beta = bn

    def build(x):
        h = mb.conv(x=x, weight=w1, bias=b1, pad_type="same")
        h = mb.batch_norm(x=h, mean=mean, variance=var, gamma=gamma, beta=beta, epsilon=1e-5)
        h = mb.relu(x=h)
        h = mb.max_pool(x=h, kernel_sizes=[2, 2], strides=[2, 2], pad_type="valid")
        h = mb.conv(x=h, weight=w2, groups=8, pad_type="custom", pad=[1, 1, 1, 1])
        h = mb.relu6(x=h)
        h = mb.conv(x=h, weight=w3)
        h = mb.silu(x=h)
        h = mb.avg_pool(x=h, kernel_sizes=[2, 2], strides=[2, 2], pad_type="valid")
        h = mb.reduce_mean(x=h, axes=[-2, -1], keep_dims=True)
        h = mb.reshape(x=h, shape=[1, 16])
        h = mb.linear(x=h, weight=wl, bias=bl)
        return mb.softmax(x=h, axis=-1)

    h = conv_ref(x, w1, b1, (1, 1), same_pads((12, 12), (3, 3), (1, 1), (1, 1)), (1, 1), 1)
    h = (h - mean.reshape(1, -1, 1, 1)) / np.sqrt(var.reshape(1, -1, 1, 1) + 1e-5) * gamma.reshape(1, -1, 1, 1) \
        + beta.reshape(1, -1, 1, 1)
    h = np.maximum(h, 0)
    h = pool_ref(h, (2, 2), (2, 2), [(0, 0), (0, 0)], "max")
    h = conv_ref(h, w2, None, (1, 1), [(1, 1), (1, 1)], (1, 1), 8)
    h = np.clip(h, 0, 6)
    h = conv_ref(h, w3, None, (1, 1), [(0, 0), (0, 0)], (1, 1), 1)
    h = h * sigmoid(h)
    h = pool_ref(h, (2, 2), (2, 2), [(0, 0), (0, 0)], "avg")
    h = h.mean(axis=(2, 3)).reshape(1, 16)
    h = softmax_ref(h @ wl.T + bl)
    save_case(name, {"x": x}, build, h, precision=precision, pipeline="default",
              rtol=1e-4 if precision == ct.precision.FLOAT32 else 1e-3, atol=1e-5)


def transformer_case():
    seq, dim, heads = 6, 16, 2
    hd = dim // heads
    x = rand(1, seq, dim, low=-1, high=1)
    mask = np.zeros((1, 1, seq, seq), np.float32)
    mask[..., -2:] = -1e4  # the last two positions are padding
    p = {k: rand(*s, low=-0.3, high=0.3) for k, s in dict(
        wq=(dim, dim), wk=(dim, dim), wv=(dim, dim), wo=(dim, dim), w1=(32, dim), w2=(dim, 32),
        bq=(dim,), bk=(dim,), bv=(dim,), bo=(dim,), b1=(32,), b2=(dim,)).items()}
    g1, be1, g2, be2 = rand(dim, low=0.8, high=1.2), rand(dim, low=-0.1, high=0.1), rand(dim, low=0.8, high=1.2), \
        rand(dim, low=-0.1, high=0.1)

    def heads_of(t):
        return mb.transpose(x=mb.reshape(x=t, shape=[1, seq, heads, hd]), perm=[0, 2, 1, 3])

    def build(x, mask):
        q = heads_of(mb.linear(x=x, weight=p["wq"], bias=p["bq"]))
        k = heads_of(mb.linear(x=x, weight=p["wk"], bias=p["bk"]))
        v = heads_of(mb.linear(x=x, weight=p["wv"], bias=p["bv"]))
        scores = mb.mul(x=mb.matmul(x=q, y=k, transpose_y=True), y=np.float32(1 / math.sqrt(hd)))
        attn = mb.softmax(x=mb.add(x=scores, y=mask), axis=-1)
        ctx = mb.reshape(x=mb.transpose(x=mb.matmul(x=attn, y=v), perm=[0, 2, 1, 3]), shape=[1, seq, dim])
        h = mb.layer_norm(x=mb.add(x=x, y=mb.linear(x=ctx, weight=p["wo"], bias=p["bo"])), axes=[-1], gamma=g1,
                          beta=be1, epsilon=1e-5)
        f = mb.linear(x=mb.gelu(x=mb.linear(x=h, weight=p["w1"], bias=p["b1"]), mode="EXACT"), weight=p["w2"],
                      bias=p["b2"])
        return mb.layer_norm(x=mb.add(x=h, y=f), axes=[-1], gamma=g2, beta=be2, epsilon=1e-5)

    def ref_heads(t):
        return t.reshape(1, seq, heads, hd).transpose(0, 2, 1, 3)

    q = ref_heads(x @ p["wq"].T + p["bq"])
    k = ref_heads(x @ p["wk"].T + p["bk"])
    v = ref_heads(x @ p["wv"].T + p["bv"])
    attn = softmax_ref(q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd) + mask)
    ctx = (attn @ v).transpose(0, 2, 1, 3).reshape(1, seq, dim)
    h = layer_norm_ref(x + ctx @ p["wo"].T + p["bo"], [-1], g1, be1)
    f = gelu_ref(h @ p["w1"].T + p["b1"]) @ p["w2"].T + p["b2"]
    save_case("transformer_block", {"x": x, "mask": mask}, build, layer_norm_ref(h + f, [-1], g2, be2),
              pipeline="default")


def float16_io_case():
    """Float16 inputs and outputs (iOS 16+): Tessera computes in Float32 and returns Float16."""
    x = rand(2, 8).astype(np.float16)
    w = rand(4, 8, low=-0.5, high=0.5).astype(np.float16)
    b = rand(4, low=-0.5, high=0.5).astype(np.float16)
    ref = np.maximum(x.astype(np.float32) @ w.astype(np.float32).T + b.astype(np.float32), 0)
    save_case("float16_io", {"x": x}, lambda x: mb.relu(x=mb.linear(x=x, weight=w, bias=b)),
              ref.astype(np.float16), target=ct.target.iOS16, precision=ct.precision.FLOAT16, rtol=1e-3, atol=1e-3)


def stateful_case():
    """An accumulator state (iOS 18): read_state, add, write_state (coremltools' serialization
    of coreml_update_state); the state's current value is an input and its new value an output."""
    x = rand(1, 4).astype(np.float16)
    acc = rand(1, 4).astype(np.float16)
    total = (acc.astype(np.float32) + x.astype(np.float32)).astype(np.float16)

    def build(x, acc):
        s = mb.add(x=mb.read_state(input=acc), y=x)
        return mb.mul(x=mb.coreml_update_state(state=acc, value=s), y=np.float16(2.0))

    save_case("stateful_accumulator", {"x": x, "acc": acc}, build, [total.astype(np.float32) * 2, total],
              target=ct.target.iOS18, precision=ct.precision.FLOAT16, states=("acc",), rtol=1e-3, atol=1e-3)
    CASES[-1]["outputs"] = [CASES[-1]["outputs"][0], "acc"]


def classifier_case():
    x = rand(1, 6)
    w, b = rand(3, 6), rand(3)
    save_case("classifier", {"x": x}, lambda x: mb.softmax(x=mb.linear(x=x, weight=w, bias=b), axis=-1),
              softmax_ref(x @ w.T + b).reshape(3), pipeline="default", classifier=["cat", "dog", "bird"])
    CASES[-1]["outputs"] = ["classLabel_probs"]
    CASES[-1]["labels"] = ["cat", "dog", "bird"]


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    elementwise_cases()
    activation_cases()
    normalization_cases()
    linear_cases()
    attention_cases()
    conv_cases()
    conv_transpose_cases()
    pool_cases()
    shape_cases()
    indexing_cases()
    runtime_parameter_cases()
    resize_cases()
    constexpr_cases()
    cnn_case("cnn_fp32", ct.precision.FLOAT32)
    cnn_case("cnn_fp16", ct.precision.FLOAT16)
    transformer_case()
    classifier_case()
    float16_io_case()
    stateful_case()
    unsupported_case()
    oversized_case()
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(CASES, f, indent=1)
    print(f"{len(CASES)} cases")


if __name__ == "__main__":
    main()
