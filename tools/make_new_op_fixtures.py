#!/usr/bin/env python3
"""Writes the fixtures for the MIL ops added as registrations after the op registry
(einsum, scatter, scatter_nd, space_to_batch, batch_to_space, l2_pool, non_zero, 3-D conv and
pooling, crop_resize, resample, affine); tests in TesseraModelsTests/NewOp*Tests.swift.

Regenerate (from the repository root; coremltools 9.0 saves packages on Linux x86_64):

    python3 -m venv /tmp/venv-coreml
    /tmp/venv-coreml/bin/pip install coremltools numpy
    /tmp/venv-coreml/bin/python tools/make_new_op_fixtures.py

coremltools cannot predict on Linux, so every expected output is computed here with NumPy from
the op's definition in coremltools (`converters/mil/mil/ops/defs/iOS15..iOS17`), never by
Tessera. Output, in Tests/Fixtures/new-ops/:

* `<case>/model.mlpackage`: a MIL-builder program converted with the empty pass pipeline, so
  the op under test is saved as written;
* `<case>/<input>.npy` and `<case>/expected_<i>.npy` (outputs in declaration order, Float32;
  integer outputs such as non_zero's are written as Float32 too);
* `cases.json`: per case its inputs, outputs, tolerances and the MIL op types in the program.

Cases named `invalid_*` declare a flexible input (a symbolic dimension) and store an input that the
declared type accepts but the op cannot take: their prediction must throw, not trap.
"""

import itertools
import json
import os
import shutil

import numpy as np
import coremltools as ct
from coremltools.converters.mil import Builder as mb
from coremltools.converters.mil.mil import get_new_symbol, types

import fixture_cases

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "new-ops")
rng = np.random.default_rng(20261202)
CASES = []


def rand(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, size=shape).astype(np.float32)


def save_case(name, inputs, build, expected, target=ct.target.iOS15, rtol=1e-4, atol=1e-5, shapes=None):
    """Builds `build(**placeholders)` as a program, saves it and its NumPy references.

    `shapes` overrides an input's declared shape (with symbols, saved as ranges 1...16) for the invalid cases.
    """
    dtypes = {np.dtype(np.int32): types.int32, np.dtype(np.float16): types.fp16, np.dtype(np.bool_): types.bool}
    shapes = shapes or {}
    specs = [mb.TensorSpec(shape=shapes.get(k, v.shape), dtype=dtypes.get(v.dtype, types.fp32))
             for k, v in inputs.items()]
    names = list(inputs.keys())
    prog = fixture_cases.program(build, specs, names, target)
    # Symbolic dimensions are saved as ranges 1...16.
    flexible = [ct.TensorType(name=k, shape=[ct.RangeDim(1, 16) if not isinstance(d, int) else d for d in shapes[k]])
                for k in names if k in shapes]
    model = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=target,
                       compute_precision=ct.precision.FLOAT32, pass_pipeline=ct.PassPipeline.EMPTY,
                       inputs=flexible or None)
    CASES.append(fixture_cases.save(OUT, name, model, inputs, expected, rtol, atol))


# ---------------------------------------------------------------- einsum

def einsum_cases():
    """The two equation forms the MIL op accepts (and a renaming of each), with broadcasting."""
    forms = [
        ("einsum_nchw", "nchw,nwhu->nchu", (2, 3, 4, 5), (2, 5, 4, 6)),
        ("einsum_nchw_broadcast", "nchw,nwhu->nchu", (1, 3, 4, 5), (2, 5, 1, 6)),
        ("einsum_renamed_rank4", "abcd,adce->abce", (2, 2, 3, 4), (2, 4, 3, 3)),
        ("einsum_chw", "chw,whr->chr", (3, 4, 5), (5, 4, 2)),
        ("einsum_chw_broadcast", "chw,whr->chr", (3, 1, 5), (5, 4, 2)),
        ("einsum_renamed_rank3", "ijk,kjl->ijl", (2, 3, 4), (4, 3, 5)),
    ]
    for name, equation, a, b in forms:
        x, y = rand(*a), rand(*b)
        bx, by = list(a), list(b)
        # NumPy's einsum does not broadcast size-1 letters, so broadcast H (and N) first.
        for axis in ([0, 2] if len(a) == 4 else [1]):
            bx[axis] = by[axis] = max(a[axis], b[axis])
        ref = np.einsum(equation, np.broadcast_to(x, bx), np.broadcast_to(y, by))
        save_case(name, {"x": x, "y": y}, lambda x, y, e=equation: mb.einsum(values=(x, y), equation=e), ref)
    # W1 flexible: the program accepts x [3, 4, 6] against y [5, 4, 2], which einsum cannot take.
    save_case("invalid_einsum", {"x": rand(3, 4, 6), "y": rand(5, 4, 2)},
              lambda x, y: mb.einsum(values=(x, y), equation="chw,whr->chr"), [np.zeros(1)],
              shapes={"x": (3, 4, get_new_symbol())})


# ---------------------------------------------------------------- scatter, scatter_nd

COMBINE = {
    "update": lambda old, new: new,
    "add": lambda old, new: old + new,
    "sub": lambda old, new: old - new,
    "mul": lambda old, new: old * new,
    "div": lambda old, new: old / new,
    "max": np.maximum,
    "min": np.minimum,
}


def scatter_ref(data, indices, updates, axis, mode):
    """Applies each update in index order (duplicates accumulate; for `update` the last wins)."""
    out = data.astype(np.float64).copy()
    axis = axis % data.ndim
    moved = np.moveaxis(out, axis, 0)
    new = np.moveaxis(updates.astype(np.float64), list(range(axis, axis + indices.ndim)),
                      list(range(indices.ndim)))
    for position in np.ndindex(*indices.shape):
        row = indices[position]
        moved[row] = COMBINE[mode](moved[row], new[position])
    return out.astype(data.dtype)


def scatter_nd_ref(data, indices, updates, mode):
    out = data.astype(np.float64).copy()
    for position in np.ndindex(*indices.shape[:-1]):
        target = tuple(indices[position])
        out[target] = COMBINE[mode](out[target], updates[position])
    return out.astype(data.dtype)


def nonzero_updates(*shape):
    """Updates away from zero (div)."""
    u = rand(*shape, low=0.5, high=2.0)
    return (u * np.where(rng.uniform(size=shape) < 0.5, -1, 1)).astype(np.float32)


def scatter_cases():
    data = rand(5, 3)
    indices = np.array([1, 3, 1, 4], np.int32)  # row 1 twice
    updates = nonzero_updates(4, 3)
    for mode in COMBINE:
        # Core ML leaves repeated indices undefined for `update`; give it distinct ones.
        idx = np.array([1, 3, 0, 4], np.int32) if mode == "update" else indices
        save_case(f"scatter_{mode}", {"data": data, "indices": idx, "updates": updates},
                  lambda data, indices, updates, m=mode: mb.scatter(
                      data=data, indices=indices, updates=updates, axis=0, mode=m),
                  scatter_ref(data, idx, updates, 0, mode))
    data3 = rand(2, 5, 3)
    idx3 = np.array([4, 0, 4], np.int32)
    upd3 = nonzero_updates(2, 3, 3)
    save_case("scatter_axis1_add", {"data": data3, "indices": idx3, "updates": upd3},
              lambda data, indices, updates: mb.scatter(data=data, indices=indices, updates=updates, axis=1, mode="add"),
              scatter_ref(data3, idx3, upd3, 1, "add"))
    upd_last = rand(2, 5, 3)
    save_case("scatter_negative_axis_max", {"data": data3, "indices": np.array([2, 1, 2], np.int32),
                                            "updates": upd_last},
              lambda data, indices, updates: mb.scatter(data=data, indices=indices, updates=updates, axis=-1,
                                                        mode="max"),
              scatter_ref(data3, np.array([2, 1, 2], np.int32), upd_last, -1, "max"))
    # Indices of rank 2: updates [2, 2, 3] land on rows indices[i, j].
    idx2 = np.array([[0, 2], [2, 4]], np.int32)
    upd2 = nonzero_updates(2, 2, 3)
    save_case("scatter_rank2_indices_mul", {"data": data, "indices": idx2, "updates": upd2},
              lambda data, indices, updates: mb.scatter(data=data, indices=indices, updates=updates, axis=0, mode="mul"),
              scatter_ref(data, idx2, upd2, 0, "mul"))
    # The iOS 17 op (validate_indices) and its default mode, add.
    save_case("scatter_ios17_default_mode", {"data": data, "indices": indices, "updates": updates},
              lambda data, indices, updates: mb.scatter(data=data, indices=indices, updates=updates),
              scatter_ref(data, indices, updates, 0, "add"), target=ct.target.iOS17)
    int_data = rng.integers(-9, 9, size=(5, 3)).astype(np.int32)
    int_upd = rng.integers(-9, 9, size=(4, 3)).astype(np.int32)
    save_case("scatter_int32_add", {"data": int_data, "indices": indices, "updates": int_upd},
              lambda data, indices, updates: mb.cast(
                  x=mb.scatter(data=data, indices=indices, updates=updates, mode="add"), dtype="fp32"),
              scatter_ref(int_data, indices, int_upd, 0, "add").astype(np.float32))
    # Updates with one row too few for the (flexible) number of indices.
    save_case("invalid_scatter", {"data": data, "indices": np.array([0, 1, 2], np.int32), "updates": rand(2, 3)},
              lambda data, indices, updates: mb.scatter(data=data, indices=indices, updates=updates, mode="add"),
              [np.zeros(1)], shapes={"indices": (get_new_symbol(),), "updates": (get_new_symbol(), 3)})


def scatter_nd_cases():
    data = rand(4, 5, 3)
    indices = np.array([[1, 2], [3, 0], [1, 2]], np.int32)  # (1, 2) twice
    updates = nonzero_updates(3, 3)
    for mode in COMBINE:
        idx = np.array([[1, 2], [3, 0], [0, 4]], np.int32) if mode == "update" else indices
        save_case(f"scatter_nd_{mode}", {"data": data, "indices": idx, "updates": updates},
                  lambda data, indices, updates, m=mode: mb.scatter_nd(
                      data=data, indices=indices, updates=updates, mode=m),
                  scatter_nd_ref(data, idx, updates, mode))
    # Index vectors of length 1 (whole [5, 3] slices) and of full rank (single elements).
    idx1 = np.array([[2], [0], [2]], np.int32)
    upd1 = nonzero_updates(3, 5, 3)
    save_case("scatter_nd_slices_add", {"data": data, "indices": idx1, "updates": upd1},
              lambda data, indices, updates: mb.scatter_nd(data=data, indices=indices, updates=updates, mode="add"),
              scatter_nd_ref(data, idx1, upd1, "add"))
    idx3 = np.array([[[0, 1, 2], [3, 4, 0]], [[0, 1, 2], [2, 2, 2]]], np.int32)
    upd3 = nonzero_updates(2, 2)
    save_case("scatter_nd_elements_min", {"data": data, "indices": idx3, "updates": upd3},
              lambda data, indices, updates: mb.scatter_nd(data=data, indices=indices, updates=updates, mode="min"),
              scatter_nd_ref(data, idx3, upd3, "min"))
    save_case("scatter_nd_ios17_default_mode", {"data": data, "indices": indices, "updates": updates},
              lambda data, indices, updates: mb.scatter_nd(data=data, indices=indices, updates=updates),
              scatter_nd_ref(data, indices, updates, "add"), target=ct.target.iOS17)
    save_case("invalid_scatter_nd", {"data": data, "indices": np.array([[1, 2], [3, 0]], np.int32),
                                     "updates": rand(3, 3)},
              lambda data, indices, updates: mb.scatter_nd(data=data, indices=indices, updates=updates),
              [np.zeros(1)], shapes={"indices": (get_new_symbol(), 2), "updates": (get_new_symbol(), 3)})


# ---------------------------------------------------------------- space_to_batch, batch_to_space

def space_to_batch_ref(x, block, paddings):
    """TensorFlow's SpaceToBatchND on NCHW: out[(i·bw + j)·N + n, c, h, w] = padded[n, c, h·bh + i, w·bw + j]."""
    x = np.pad(x, [(0, 0), (0, 0), tuple(paddings[0]), tuple(paddings[1])])
    n, c, h, w = x.shape
    bh, bw = block
    y = x.reshape(n, c, h // bh, bh, w // bw, bw).transpose(3, 5, 0, 1, 2, 4)
    return y.reshape(bh * bw * n, c, h // bh, w // bw)


def batch_to_space_ref(x, block, crops):
    bh, bw = block
    n, c, h, w = x.shape
    y = x.reshape(bh, bw, n // (bh * bw), c, h, w).transpose(2, 3, 4, 0, 5, 1).reshape(n // (bh * bw), c, h * bh, w * bw)
    return y[:, :, crops[0][0]:h * bh - crops[0][1], crops[1][0]:w * bw - crops[1][1]]


def space_batch_cases():
    example = np.arange(1, 17, dtype=np.float32).reshape(2, 1, 2, 4)  # coremltools' own test case
    save_case("space_to_batch_example", {"x": example},
              lambda x: mb.space_to_batch(x=x, block_shape=[2, 2], paddings=[[0, 0], [2, 0]]),
              space_to_batch_ref(example, (2, 2), [[0, 0], [2, 0]]))
    x = rand(2, 3, 4, 6)
    save_case("space_to_batch_padded", {"x": x},
              lambda x: mb.space_to_batch(x=x, block_shape=[2, 3], paddings=[[0, 2], [1, 2]]),
              space_to_batch_ref(x, (2, 3), [[0, 2], [1, 2]]))
    xb = rand(12, 3, 3, 3)
    save_case("batch_to_space_cropped", {"x": xb},
              lambda x: mb.batch_to_space(x=x, block_shape=[2, 3], crops=[[0, 1], [1, 2]]),
              batch_to_space_ref(xb, (2, 3), [[0, 1], [1, 2]]))
    s2b = space_to_batch_ref(example, (2, 2), [[0, 0], [2, 0]])
    save_case("batch_to_space_example", {"x": s2b},
              lambda x: mb.batch_to_space(x=x, block_shape=[2, 2], crops=[[0, 0], [2, 0]]), example)
    # H flexible: 5 rows do not split into blocks of 2.
    save_case("invalid_space_to_batch", {"x": rand(1, 2, 5, 4)},
              lambda x: mb.space_to_batch(x=x, block_shape=[2, 2], paddings=[[0, 0], [0, 0]]), [np.zeros(1)],
              shapes={"x": (1, 2, get_new_symbol(), 4)})
    save_case("invalid_batch_to_space", {"x": rand(6, 2, 2, 2)},
              lambda x: mb.batch_to_space(x=x, block_shape=[2, 2], crops=[[0, 0], [0, 0]]), [np.zeros(1)],
              shapes={"x": (get_new_symbol(), 2, 2, 2)})


# ---------------------------------------------------------------- pooling (l2, 3-D)

def out_size(size, k, s, p0, p1, ceil_mode=False):
    span = size + p0 + p1 - k
    count = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (count - 1) * s >= size + p0:
        count -= 1
    return count


def same_pads(sizes, kernel, strides, lower=False):
    pads = []
    for i, k, s in zip(sizes, kernel, strides):
        total = max(0, (-(-i // s) - 1) * s + k - i)
        pads.append((total - total // 2, total // 2) if lower else (total // 2, total - total // 2))
    return pads


def pool_nd_ref(x, kernel, strides, pads, mode, exclude_padding=False, ceil_mode=False):
    """Pooling over the last len(kernel) axes by loops (tiny tensors); windows clipped to the input."""
    spatial = x.shape[2:]
    outs = [out_size(i, k, s, p0, p1, ceil_mode) for i, k, s, (p0, p1) in zip(spatial, kernel, strides, pads)]
    y = np.zeros(x.shape[:2] + tuple(outs), np.float64)
    for o in itertools.product(*[range(n) for n in outs]):
        starts = [oi * s - p0 for oi, s, (p0, _) in zip(o, strides, pads)]
        lo = [max(a, 0) for a in starts]
        hi = [min(a + k, n) for a, k, n in zip(starts, kernel, spatial)]
        window = x[(slice(None), slice(None)) + tuple(slice(a, b) for a, b in zip(lo, hi))].astype(np.float64)
        axes = tuple(range(2, x.ndim))
        if mode == "max":
            y[(slice(None), slice(None)) + o] = window.max(axis=axes)
        elif mode == "l2":
            y[(slice(None), slice(None)) + o] = np.sqrt((window ** 2).sum(axis=axes))
        else:
            if exclude_padding:
                count = np.prod([b - a for a, b in zip(lo, hi)])
            else:
                count = np.prod([min(a + k, n + p1) - a
                                 for a, k, n, (_, p1) in zip(starts, kernel, spatial, pads)])
            y[(slice(None), slice(None)) + o] = window.sum(axis=axes) / count
    return y.astype(np.float32)


def l2_pool_cases():
    x = rand(1, 2, 5, 6)
    save_case("l2_pool_valid", {"x": x}, lambda x: mb.l2_pool(x=x, kernel_sizes=[2, 3], strides=[1, 2], pad_type="valid"),
              pool_nd_ref(x, (2, 3), (1, 2), [(0, 0), (0, 0)], "l2"))
    save_case("l2_pool_same", {"x": x}, lambda x: mb.l2_pool(x=x, kernel_sizes=[3, 3], strides=[2, 2], pad_type="same"),
              pool_nd_ref(x, (3, 3), (2, 2), same_pads((5, 6), (3, 3), (2, 2)), "l2"))
    save_case("l2_pool_custom", {"x": x},
              lambda x: mb.l2_pool(x=x, kernel_sizes=[3, 2], strides=[1, 1], pad_type="custom", pad=[1, 0, 2, 1]),
              pool_nd_ref(x, (3, 2), (1, 1), [(1, 0), (2, 1)], "l2"))
    save_case("l2_pool_ceil", {"x": x},
              lambda x: mb.l2_pool(x=x, kernel_sizes=[3, 3], strides=[2, 2], pad_type="custom", pad=[1, 1, 1, 1],
                                   ceil_mode=True),
              pool_nd_ref(x, (3, 3), (2, 2), [(1, 1), (1, 1)], "l2", ceil_mode=True))
    x1 = rand(2, 3, 9)
    save_case("l2_pool_1d", {"x": x1}, lambda x: mb.l2_pool(x=x, kernel_sizes=[3], strides=[2], pad_type="valid"),
              pool_nd_ref(x1, (3,), (2,), [(0, 0)], "l2"))
    # W flexible: a 2-wide input is narrower than the 3-wide window.
    save_case("invalid_l2_pool", {"x": rand(1, 2, 5, 2)},
              lambda x: mb.l2_pool(x=x, kernel_sizes=[3, 3], strides=[1, 1], pad_type="valid"), [np.zeros(1)],
              shapes={"x": (1, 2, 5, get_new_symbol())})


def pool3d_cases():
    x = rand(1, 2, 5, 6, 7)
    save_case("max_pool_3d_valid", {"x": x},
              lambda x: mb.max_pool(x=x, kernel_sizes=[2, 3, 2], strides=[2, 2, 1], pad_type="valid"),
              pool_nd_ref(x, (2, 3, 2), (2, 2, 1), [(0, 0)] * 3, "max"))
    save_case("max_pool_3d_same", {"x": x},
              lambda x: mb.max_pool(x=x, kernel_sizes=[3, 3, 3], strides=[2, 2, 2], pad_type="same"),
              pool_nd_ref(x, (3, 3, 3), (2, 2, 2), same_pads((5, 6, 7), (3, 3, 3), (2, 2, 2)), "max"))
    save_case("avg_pool_3d_include_pad", {"x": x},
              lambda x: mb.avg_pool(x=x, kernel_sizes=[3, 2, 3], strides=[1, 2, 2], pad_type="custom",
                                    pad=[1, 1, 0, 1, 1, 0], exclude_padding_from_average=False),
              pool_nd_ref(x, (3, 2, 3), (1, 2, 2), [(1, 1), (0, 1), (1, 0)], "avg"))
    save_case("avg_pool_3d_exclude_pad", {"x": x},
              lambda x: mb.avg_pool(x=x, kernel_sizes=[3, 3, 3], strides=[2, 1, 2], pad_type="same",
                                    exclude_padding_from_average=True),
              pool_nd_ref(x, (3, 3, 3), (2, 1, 2), same_pads((5, 6, 7), (3, 3, 3), (2, 1, 2)), "avg",
                          exclude_padding=True))
    save_case("invalid_max_pool_3d", {"x": rand(1, 2, 1, 6, 7)},
              lambda x: mb.max_pool(x=x, kernel_sizes=[2, 2, 2], strides=[1, 1, 1], pad_type="valid"), [np.zeros(1)],
              shapes={"x": (1, 2, get_new_symbol(), 6, 7)})


# ---------------------------------------------------------------- 3-D conv

def conv3d_ref(x, w, b, strides, pads, dilations, groups):
    x = np.pad(x, [(0, 0), (0, 0)] + list(pads)).astype(np.float64)
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    k = w.shape[2:]
    outs = [(size - (kk - 1) * d - 1) // s + 1 for size, kk, s, d in zip(x.shape[2:], k, strides, dilations)]
    y = np.zeros((n, o) + tuple(outs), np.float64)
    og = o // groups
    for oc in range(o):
        g = oc // og
        for p in itertools.product(*[range(m) for m in outs]):
            window = x[(slice(None), slice(g * cg, (g + 1) * cg)) + tuple(
                slice(pi * s, pi * s + (kk - 1) * d + 1, d) for pi, s, kk, d in zip(p, strides, k, dilations))]
            y[(slice(None), oc) + p] = (window * w[oc]).sum(axis=(1, 2, 3, 4))
    if b is not None:
        y += b.reshape(1, -1, 1, 1, 1)
    return y.astype(np.float32)


def conv3d_cases():
    x = rand(1, 2, 5, 6, 7)
    w, b = rand(3, 2, 2, 3, 2, low=-0.5, high=0.5), rand(3)
    save_case("conv_3d_custom", {"x": x},
              lambda x: mb.conv(x=x, weight=w, bias=b, strides=[2, 1, 2], dilations=[1, 2, 1], pad_type="custom",
                                pad=[1, 0, 0, 1, 1, 1]),
              conv3d_ref(x, w, b, (2, 1, 2), [(1, 0), (0, 1), (1, 1)], (1, 2, 1), 1))
    save_case("conv_3d_valid", {"x": x}, lambda x: mb.conv(x=x, weight=w, pad_type="valid"),
              conv3d_ref(x, w, None, (1, 1, 1), [(0, 0)] * 3, (1, 1, 1), 1))
    xg = rand(2, 4, 4, 5, 5)
    wg, bg = rand(6, 2, 3, 2, 2, low=-0.5, high=0.5), rand(6)
    save_case("conv_3d_groups_same", {"x": xg},
              lambda x: mb.conv(x=x, weight=wg, bias=bg, groups=2, pad_type="same", strides=[1, 2, 1]),
              conv3d_ref(xg, wg, bg, (1, 2, 1), same_pads((4, 5, 5), (3, 2, 2), (1, 2, 1)), (1, 1, 1), 2))
    # The weight as an input (not a constant).
    wi = rand(3, 2, 1, 2, 2)
    save_case("conv_3d_weight_input", {"x": x, "w": wi}, lambda x, w: mb.conv(x=x, weight=w, pad_type="valid"),
              conv3d_ref(x, wi, None, (1, 1, 1), [(0, 0)] * 3, (1, 1, 1), 1))
    save_case("invalid_conv_3d", {"x": rand(1, 2, 1, 6, 7)},
              lambda x: mb.conv(x=x, weight=w, pad_type="valid"), [np.zeros(1)],
              shapes={"x": (1, 2, get_new_symbol(), 6, 7)})


# ---------------------------------------------------------------- non_zero

def non_zero_cases():
    x = rand(3, 4)
    x[rng.uniform(size=x.shape) < 0.5] = 0
    save_case("non_zero_2d", {"x": x}, lambda x: mb.cast(x=mb.non_zero(x=x), dtype="fp32"),
              np.argwhere(x).astype(np.float32))
    x3 = rand(2, 3, 2)
    x3[rng.uniform(size=x3.shape) < 0.6] = 0
    save_case("non_zero_3d", {"x": x3}, lambda x: mb.cast(x=mb.non_zero(x=x), dtype="fp32"),
              np.argwhere(x3).astype(np.float32))
    zeros = np.zeros((2, 3), np.float32)
    save_case("non_zero_none", {"x": zeros}, lambda x: mb.cast(x=mb.non_zero(x=x), dtype="fp32"),
              np.argwhere(zeros).astype(np.float32))
    # The count feeds later ops: the number of non-zero elements, via shape.
    save_case("non_zero_count", {"x": x},
              lambda x: mb.cast(x=mb.slice_by_index(x=mb.shape(x=mb.non_zero(x=x)), begin=[0], end=[1]),
                                dtype="fp32"),
              np.array([np.count_nonzero(x)], np.float32))
    ints = rng.integers(-1, 2, size=(4, 3)).astype(np.int32)
    save_case("non_zero_int32", {"x": ints}, lambda x: mb.cast(x=mb.non_zero(x=x), dtype="fp32"),
              np.argwhere(ints).astype(np.float32))


# ---------------------------------------------------------------- sampling: resample, affine, crop_resize

def pixel(c, size, mode, align):
    """A coordinate in `mode` as a pixel position along an axis of `size`."""
    if mode == "unnormalized":
        return c
    if mode == "normalized_zero_to_one":
        c = c * 2 - 1
    return (c + 1) / 2 * (size - 1) if align else ((c + 1) * size - 1) / 2


def reflect(c, low, high):
    span = high - low
    if span <= 0:
        return np.zeros_like(c)
    d = np.abs(c - low)
    flips = np.floor(d / span)
    extra = d - flips * span
    return np.where(flips % 2 == 0, low + extra, high - extra)


def sample_ref(image, py, px, sampling, padding, value):
    """Samples `image` [C, H, W] at pixel positions (torch grid_sample's rules for border and
    reflection: the position is clipped or reflected, then interpolated; constant: a corner
    outside the image reads `value`)."""
    c, h, w = image.shape
    if padding == "border":
        py, px = np.clip(py, 0, h - 1), np.clip(px, 0, w - 1)
    elif padding in ("reflection", "symmetric"):
        lo, hy, hx = (0.0, h - 1.0, w - 1.0) if padding == "reflection" else (-0.5, h - 0.5, w - 0.5)
        py, px = np.clip(reflect(py, lo, hy), 0, h - 1), np.clip(reflect(px, lo, hx), 0, w - 1)

    def at(yi, xi):
        inside = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
        got = image[:, np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)]
        return np.where(inside, got, value)

    if sampling == "nearest":
        return at(np.floor(py + 0.5).astype(int), np.floor(px + 0.5).astype(int))
    y0, x0 = np.floor(py).astype(int), np.floor(px).astype(int)
    wy, wx = py - y0, px - x0
    return ((1 - wy) * (1 - wx) * at(y0, x0) + (1 - wy) * wx * at(y0, x0 + 1)
            + wy * (1 - wx) * at(y0 + 1, x0) + wy * wx * at(y0 + 1, x0 + 1))


def resample_ref(x, coords, sampling, padding, value, mode, align):
    b, c, h, w = x.shape
    out = np.zeros((b, c) + coords.shape[1:3], np.float64)
    for i in range(b):
        px = pixel(coords[i, :, :, 0].astype(np.float64), w, mode, align)
        py = pixel(coords[i, :, :, 1].astype(np.float64), h, mode, align)
        out[i] = sample_ref(x[i].astype(np.float64), py, px, sampling, padding, value)
    return out.astype(np.float32)


def resample_cases():
    x = rand(2, 2, 4, 5)
    coords = rand(2, 3, 4, 2, low=-1.3, high=1.3)  # some points outside the image
    for sampling, padding, align in [("bilinear", "constant", True), ("bilinear", "constant", False),
                                     ("bilinear", "border", False), ("bilinear", "reflection", True),
                                     ("bilinear", "symmetric", False), ("nearest", "constant", False),
                                     ("nearest", "border", True)]:
        name = f"resample_{sampling}_{padding}_{'align' if align else 'unalign'}"
        value = 0.0 if padding != "constant" or align else 1.5
        save_case(name, {"x": x, "coordinates": coords},
                  lambda x, coordinates, s=sampling, p=padding, a=align, v=value: mb.resample(
                      x=x, coordinates=coordinates, sampling_mode=s, padding_mode=p, padding_value=v,
                      coordinates_mode="normalized_minus_one_to_one", align_corners=a),
                  resample_ref(x, coords, sampling, padding, value, "normalized_minus_one_to_one", align))
    unnormalized = rand(2, 3, 4, 2, low=-1.0, high=5.0)
    save_case("resample_unnormalized", {"x": x, "coordinates": unnormalized},
              lambda x, coordinates: mb.resample(
                  x=x, coordinates=coordinates, sampling_mode="bilinear", padding_mode="constant",
                  padding_value=0.0, coordinates_mode="unnormalized", align_corners=False),
              resample_ref(x, unnormalized, "bilinear", "constant", 0.0, "unnormalized", False))
    zero_one = rand(2, 3, 4, 2, low=-0.2, high=1.2)
    save_case("resample_zero_to_one", {"x": x, "coordinates": zero_one},
              lambda x, coordinates: mb.resample(
                  x=x, coordinates=coordinates, sampling_mode="bilinear", padding_mode="border",
                  padding_value=0.0, coordinates_mode="normalized_zero_to_one", align_corners=True),
              resample_ref(x, zero_one, "bilinear", "border", 0.0, "normalized_zero_to_one", True))
    save_case("invalid_resample", {"x": x, "coordinates": rand(3, 3, 4, 2)},
              lambda x, coordinates: mb.resample(
                  x=x, coordinates=coordinates, sampling_mode="bilinear", padding_mode="constant",
                  padding_value=0.0, coordinates_mode="unnormalized", align_corners=False),
              [np.zeros(1)], shapes={"coordinates": (get_new_symbol(), 3, 4, 2)})


def affine_ref(x, transform, out_h, out_w):
    """torch's affine_grid + grid_sample(align_corners=True, zeros padding)."""
    b = x.shape[0]
    xs, ys = np.meshgrid(np.linspace(-1, 1, out_w), np.linspace(-1, 1, out_h))
    coords = np.zeros((b, out_h, out_w, 2), np.float64)
    for i in range(b):
        t = transform[i if transform.shape[0] == b else 0].astype(np.float64)
        coords[i, :, :, 0] = t[0] * xs + t[1] * ys + t[2]
        coords[i, :, :, 1] = t[3] * xs + t[4] * ys + t[5]
    return resample_ref(x, coords, "bilinear", "constant", 0.0, "normalized_minus_one_to_one", True)


def affine_cases():
    example = np.array([11.0, 22.0, 33.0, 44.0], np.float32).reshape(1, 1, 2, 2)
    theta = np.array([[-1.0, -2.0, -3.7, -1.0, 3.5, 1.2]], np.float32)
    # coremltools' own test case; its expected values agree with this reference.
    expected = affine_ref(example, theta, 3, 3)
    assert np.allclose(expected.ravel(), [10.752501, 2.5025, 0.0, 1.9799997, 0, 0, 0, 0, 0], atol=1e-5)
    build = (lambda x, transform_matrix, h=3, w=3: mb.affine(
        x=x, transform_matrix=transform_matrix, output_height=h, output_width=w, sampling_mode="bilinear",
        padding_mode="constant", padding_value=0.0, coordinates_mode="normalized_minus_one_to_one",
        align_corners=True))
    save_case("affine_example", {"x": example, "transform_matrix": theta}, build, expected)
    x = rand(2, 3, 5, 6)
    per_batch = np.array([[0.9, -0.2, 0.1, 0.3, 1.1, -0.2], [1.2, 0.4, -0.3, -0.1, 0.8, 0.25]], np.float32)
    save_case("affine_per_batch", {"x": x, "transform_matrix": per_batch},
              lambda x, transform_matrix: build(x, transform_matrix, 4, 7), affine_ref(x, per_batch, 4, 7))
    shared = np.array([[0.7, 0.0, 0.1, 0.0, 0.7, -0.1]], np.float32)
    save_case("affine_shared", {"x": x, "transform_matrix": shared},
              lambda x, transform_matrix: build(x, transform_matrix, 3, 3), affine_ref(x, shared, 3, 3))
    save_case("invalid_affine", {"x": x, "transform_matrix": rand(3, 6)},
              lambda x, transform_matrix: build(x, transform_matrix, 3, 3), [np.zeros(1)],
              shapes={"transform_matrix": (get_new_symbol(), 6)})


def crop_ref(image, box, th, tw, mode, pad):
    """One crop of `image` [C, H, W] by the pixel box [y0, x0, y1, x1] (ALIGN_CORNERS rules:
    linspace over the box; one point is its centre, or its start for STRICT_ALIGN_CORNERS). A
    point outside the image reads `pad` (TensorFlow crop_and_resize's extrapolation value, as
    coremltools' iOS 16 test expects); a point inside interpolates its in-image neighbours."""
    def grid(start, end, n):
        if n == 1:
            return np.array([start if mode == "STRICT_ALIGN_CORNERS" else (start + end) / 2])
        return start + np.arange(n) * (end - start) / (n - 1)
    ys, xs = grid(box[0], box[2], th), grid(box[1], box[3], tw)
    py, px = np.meshgrid(ys, xs, indexing="ij")
    _, h, w = image.shape
    inside = (py >= 0) & (py <= h - 1) & (px >= 0) & (px <= w - 1)
    return np.where(inside, sample_ref(image.astype(np.float64), py, px, "bilinear", "border", pad), pad)


def corners(box, coordinate_mode):
    a, b, c, d = box
    if coordinate_mode == "CORNERS_HEIGHT_FIRST":
        return [a, b, c, d]
    if coordinate_mode == "CORNERS_WIDTH_FIRST":
        return [b, a, d, c]
    if coordinate_mode == "CENTER_SIZE_HEIGHT_FIRST":
        return [a - c / 2, b - d / 2, a + c / 2, b + d / 2]
    return [b - d / 2, a - c / 2, b + d / 2, a + c / 2]


def crop_resize_cases():
    # coremltools' own test (iOS 15 form, roi [N, 1, 4, 1, 1]).
    example = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    roi = np.array([1, 1, 2, 2], np.float32).reshape(1, 1, 4, 1, 1)
    for th, expected in [(2, [6, 7, 10, 11]), (1, [8.5])]:
        got = crop_ref(example[0], [1, 1, 2, 2], th, th, "ALIGN_CORNERS", 0.0)
        assert np.allclose(got.ravel(), expected)
        save_case(f"crop_resize_example_{th}x{th}", {"x": example},
                  lambda x, t=th: mb.crop_resize(x=x, roi=roi, target_height=t, target_width=t,
                                                 normalized_coordinates=False, sampling_mode="ALIGN_CORNERS"),
                  got.reshape(1, 1, 1, th, th).astype(np.float32))
    # coremltools' iOS 16 test (pad_value): points outside the image read the pad value.
    pad_roi = [[0.1, 0.3, 1.3, 1.0], [0.5, 1.8, 1.0, 0.3], [0.0, 0.4, 0.6, 0.7]]
    got = np.stack([crop_ref(example[0], np.array(r) * 3, 2, 2, "ALIGN_CORNERS", 10.0) for r in pad_roi])
    assert np.allclose(got.ravel(), [3.1, 5.2, 10, 10, 10, 7.899, 10, 13.9, 2.2, 3.1, 9.4, 10.3], atol=2e-3)
    x = rand(2, 3, 6, 7)
    boxes = np.array([[0.5, 1.0, 4.0, 5.5], [3.0, 0.0, 1.0, 6.0], [-1.0, 2.0, 2.0, 8.0]], np.float32)
    # roi [N, 1, 4, 1, 1]: every box on every image, output [N, B, C, th, tw].
    for mode in ["ALIGN_CORNERS", "STRICT_ALIGN_CORNERS"]:
        ref = np.stack([np.stack([crop_ref(x[b], box, 3, 4, mode, 0.0) for b in range(2)]) for box in boxes])
        save_case(f"crop_resize_all_images_{mode.lower()}", {"x": x, "roi": boxes.reshape(3, 1, 4, 1, 1)},
                  lambda x, roi, m=mode: mb.crop_resize(x=x, roi=roi, target_height=3, target_width=4,
                                                        sampling_mode=m),
                  ref.astype(np.float32))
    # roi [N, 1, 5, 1, 1]: an image index, then the box; normalized, with a spatial scale; iOS 16 pad_value.
    # One image: the op's documentation gives [N, 1, C, th, tw], but coremltools' type inference
    # declares [N, B, C, th, tw], which agree only for B = 1.
    single = x[1:]
    indexed = np.array([[0, 0.1, 0.2, 0.9, 0.6], [0, 0.0, 0.5, 0.5, 1.1]], np.float32)
    for coordinate_mode in ["CORNERS_HEIGHT_FIRST", "CORNERS_WIDTH_FIRST", "CENTER_SIZE_HEIGHT_FIRST",
                            "CENTER_SIZE_WIDTH_FIRST"]:
        ref = []
        for row in indexed:
            box = np.array(corners(row[1:], coordinate_mode)) * 0.8
            box = box * np.array([5, 6, 5, 6])  # normalized: (H - 1), (W - 1)
            ref.append(crop_ref(single[int(row[0])], box, 4, 3, "ALIGN_CORNERS", -1.0)[None])
        save_case(f"crop_resize_indexed_{coordinate_mode.lower()}",
                  {"x": single, "roi": indexed.reshape(2, 1, 5, 1, 1)},
                  lambda x, roi, c=coordinate_mode: mb.crop_resize(
                      x=x, roi=roi, target_height=4, target_width=3, normalized_coordinates=True, spatial_scale=0.8,
                      box_coordinate_mode=c, sampling_mode="ALIGN_CORNERS", pad_value=-1.0),
                  np.stack(ref).astype(np.float32), target=ct.target.iOS16)
    # iOS 17: boxes [N, 4] and box_indices [N]; output [N, C, th, tw].
    box_indices = np.array([1, 1, 0], np.int32)
    ref = np.stack([crop_ref(x[i], box, 2, 5, "ALIGN_CORNERS", 0.0) for i, box in zip(box_indices, boxes)])
    save_case("crop_resize_ios17", {"x": x, "boxes": boxes, "box_indices": box_indices},
              lambda x, boxes, box_indices: mb.crop_resize(
                  x=x, boxes=boxes, box_indices=box_indices, target_height=2, target_width=5,
                  sampling_mode="ALIGN_CORNERS"),
              ref.astype(np.float32), target=ct.target.iOS17)
    ref = np.stack([crop_ref(x[i], box, 2, 2, "ALIGN_CORNERS", 0.0) for i, box in zip([0, 1], boxes[:2])])
    save_case("crop_resize_ios17_default_indices", {"x": x, "boxes": boxes[:2]},
              lambda x, boxes: mb.crop_resize(x=x, boxes=boxes, target_height=2, target_width=2,
                                              sampling_mode="ALIGN_CORNERS"),
              ref.astype(np.float32), target=ct.target.iOS17)
    # The roi's coordinate axis flexible: 6 values are neither a box nor an index and a box.
    save_case("invalid_crop_resize", {"x": x, "roi": rand(2, 1, 6, 1, 1)},
              lambda x, roi: mb.crop_resize(x=x, roi=roi, target_height=2, target_width=2,
                                            sampling_mode="ALIGN_CORNERS"),
              [np.zeros(1)], shapes={"roi": (2, 1, get_new_symbol(), 1, 1)})


def unsupported_case():
    """A program with an op Tessera does not lower, for the load error (einsum was that op)."""
    x = rand(2, 3)
    save_case("unsupported_random_bernoulli", {"x": x},
              lambda x: mb.add(x=x, y=mb.random_bernoulli(shape=np.array([2, 3], np.int32), prob=0.5, seed=7)),
              [np.zeros(1)])


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    einsum_cases()
    scatter_cases()
    scatter_nd_cases()
    space_batch_cases()
    l2_pool_cases()
    non_zero_cases()
    pool3d_cases()
    conv3d_cases()
    resample_cases()
    affine_cases()
    crop_resize_cases()
    unsupported_case()
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(CASES, f, indent=1)
    print(f"{len(CASES)} cases")


if __name__ == "__main__":
    main()
