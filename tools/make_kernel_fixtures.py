#!/usr/bin/env python3
"""Writes the NumPy reference fixtures for the GEMM, convolution and pooling kernels.

Regenerate (from the repository root):

    python3 -m venv .venv && .venv/bin/pip install numpy
    .venv/bin/python tools/make_kernel_fixtures.py

Output: small `.npy` files in Tests/Fixtures/kernels/ (a fixed seed makes them
reproducible). Naming: `<case>_<role>.npy`, roles `a`, `b`, `out` for GEMM; `x`, `w`,
`bias`, `params`, `out` for conv2d (params = [sH, sW, dH, dW, padTop, padBottom, padLeft,
padRight, groups]); `x`, `params`, `out` for pooling (params = [kH, kW, sH, sW, padTop,
padBottom, padLeft, padRight, ceilMode, countIncludePad]).

The convolution and pooling references are deliberately naive loops, independent of the
Swift kernels' im2col / depthwise / tiling strategies.
"""

import math
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "kernels")
rng = np.random.default_rng(20240611)


def save(name, array):
    np.save(os.path.join(OUT, name + ".npy"), array)


def rand(shape, dtype=np.float32):
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


# ---------------------------------------------------------------- GEMM


def gemm_cases():
    a, b = rand((5, 7)), rand((7, 3))
    save("gemm_plain_a", a), save("gemm_plain_b", b), save("gemm_plain_out", a @ b)

    # Stored transposed: the test reads `at` ([K, M]) and `bt` ([N, K]) through permuted layouts.
    at, bt = rand((6, 4)), rand((5, 6))
    save("gemm_transposed_at", at), save("gemm_transposed_bt", bt), save("gemm_transposed_out", at.T @ bt.T)

    a, b = rand((2, 1, 3, 4)), rand((5, 4, 6))
    save("gemm_broadcast_a", a), save("gemm_broadcast_b", b), save("gemm_broadcast_out", np.matmul(a, b))

    a, b = rand((3, 4, 9), np.float64), rand((3, 9, 2), np.float64)
    save("gemm_float64_a", a), save("gemm_float64_b", b), save("gemm_float64_out", np.matmul(a, b))


# ---------------------------------------------------------------- conv2d


def naive_conv2d(x, w, bias, stride, dilation, pad, groups):
    """Direct definition: out[n,o,y,x] = bias[o] + sum over the group's channels and taps."""
    n_, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    sh, sw = stride
    dh, dw = dilation
    pt, pb, pl, pr = pad
    oh = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + pl + pr - dw * (kw - 1) - 1) // sw + 1
    og = o // groups
    out = np.zeros((n_, o, oh, ow), dtype=np.float64)
    for n in range(n_):
        for oc in range(o):
            g = oc // og
            for y in range(oh):
                for xx in range(ow):
                    acc = float(bias[oc]) if bias is not None else 0.0
                    for ci in range(cg):
                        for i in range(kh):
                            iy = y * sh - pt + i * dh
                            if iy < 0 or iy >= h:
                                continue
                            for j in range(kw):
                                ix = xx * sw - pl + j * dw
                                if ix < 0 or ix >= wd:
                                    continue
                                acc += float(w[oc, ci, i, j]) * float(x[n, g * cg + ci, iy, ix])
                    out[n, oc, y, xx] = acc
    return out.astype(np.float32)


def conv_case(name, x_shape, w_shape, stride=(1, 1), dilation=(1, 1), pad=(0, 0, 0, 0), groups=1, bias=True):
    x, w = rand(x_shape), rand(w_shape)
    b = rand((w_shape[0],)) if bias else None
    save(f"conv_{name}_x", x), save(f"conv_{name}_w", w)
    if b is not None:
        save(f"conv_{name}_bias", b)
    params = np.array([*stride, *dilation, *pad, groups], dtype=np.int32)
    save(f"conv_{name}_params", params)
    save(f"conv_{name}_out", naive_conv2d(x, w, b, stride, dilation, pad, groups))


def conv_cases():
    conv_case("plain3x3", (1, 3, 8, 8), (4, 3, 3, 3), pad=(1, 1, 1, 1))
    conv_case("stride2", (2, 3, 9, 7), (5, 3, 3, 3), stride=(2, 2), pad=(1, 0, 1, 2))
    conv_case("dilation2", (1, 2, 9, 9), (3, 2, 3, 3), dilation=(2, 2), pad=(2, 2, 2, 2), bias=False)
    conv_case("groups2", (1, 4, 6, 6), (6, 2, 3, 3), pad=(1, 1, 1, 1), groups=2)
    conv_case("depthwise", (2, 4, 7, 7), (8, 1, 3, 3), stride=(2, 1), pad=(1, 1, 1, 1), groups=4)
    conv_case("pointwise", (2, 6, 5, 4), (3, 6, 1, 1))


# ---------------------------------------------------------------- pooling


def pool_out(size, k, s, pb, pa, ceil):
    span = size + pb + pa - k
    count = (math.ceil(span / s) if ceil else span // s) + 1
    if ceil and (count - 1) * s >= size + pb:
        count -= 1
    return count


def naive_pool(x, kind, kernel, stride, pad, ceil, include_pad):
    n_, c, h, w = x.shape
    kh, kw = kernel
    sh, sw = stride
    pt, pb, pl, pr = pad
    oh, ow = pool_out(h, kh, sh, pt, pb, ceil), pool_out(w, kw, sw, pl, pr, ceil)
    out = np.zeros((n_, c, oh, ow), dtype=np.float64)
    for n in range(n_):
        for ch in range(c):
            for y in range(oh):
                for xx in range(ow):
                    top, left = y * sh - pt, xx * sw - pl
                    values = [
                        float(x[n, ch, iy, ix])
                        for iy in range(top, top + kh)
                        for ix in range(left, left + kw)
                        if 0 <= iy < h and 0 <= ix < w
                    ]
                    if kind == "max":
                        out[n, ch, y, xx] = max(values)
                    elif include_pad:
                        bottom, right = min(top + kh, h + pb), min(left + kw, w + pr)
                        out[n, ch, y, xx] = sum(values) / ((bottom - top) * (right - left))
                    else:
                        out[n, ch, y, xx] = sum(values) / len(values)
    return out.astype(np.float32)


def pool_case(name, kind, x_shape, kernel, stride, pad=(0, 0, 0, 0), ceil=False, include_pad=False):
    x = rand(x_shape)
    save(f"pool_{name}_x", x)
    params = np.array([*kernel, *stride, *pad, int(ceil), int(include_pad)], dtype=np.int32)
    save(f"pool_{name}_params", params)
    save(f"pool_{name}_out", naive_pool(x, kind, kernel, stride, pad, ceil, include_pad))


def pool_cases():
    pool_case("max3x3s2", "max", (1, 3, 9, 9), (3, 3), (2, 2), pad=(1, 1, 1, 1))
    pool_case("max2x2ceil", "max", (2, 2, 7, 5), (2, 2), (2, 2), ceil=True)
    pool_case("avg3x3pad", "avg", (1, 2, 6, 6), (3, 3), (2, 2), pad=(1, 1, 1, 1), include_pad=True)
    pool_case("avg3x3nopadcount", "avg", (1, 2, 6, 6), (3, 3), (2, 2), pad=(1, 1, 1, 1), include_pad=False)
    pool_case("avgceil", "avg", (1, 1, 7, 7), (3, 3), (2, 2), pad=(1, 1, 1, 1), ceil=True, include_pad=True)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    gemm_cases()
    conv_cases()
    pool_cases()
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"wrote {len(os.listdir(OUT))} files, {total} bytes, to {os.path.normpath(OUT)}")
