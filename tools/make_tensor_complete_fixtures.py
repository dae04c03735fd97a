#!/usr/bin/env python3
"""Writes the fixtures for the rest of the MLTensor contract (slicing, gathering, scattering,
sorting, padding, resizing) and for Tessera's extensions (activations, normalisations,
attention, sampling filters, non-maximum suppression).

Regenerate (from the repository root; needs numpy and torch):

    python3 tools/make_tensor_complete_fixtures.py

Output: small `.npy` files in Tests/Fixtures/tensor-complete/ (a directory of its own:
make_tensor_fixtures.py empties tensor/), inputs `in_<name>.npy`, expected results
`<case>.npy` (`<case>_<k>.npy` for several results). Expected values come from
NumPy or PyTorch computed in float64 on the float32 inputs and rounded once to float32.
`torchvision` is not installed here, so NMS is checked against `nms_reference` below, a
line-by-line NumPy port of `torchvision.ops.nms` (CPU kernel `nms_kernel_impl`).
"""

import os

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "tensor-complete")
rng = np.random.default_rng(20251201)
I = {}


def inp(name, array):
    I[name] = array
    np.save(os.path.join(OUT, "in_" + name + ".npy"), array)
    return array


def out(name, array, dtype=None):
    if isinstance(array, torch.Tensor):
        array = array.numpy()
    array = np.array(array, order="C")
    if dtype is not None:
        array = array.astype(dtype)
    elif array.dtype == np.float64:
        array = array.astype(np.float32)
    elif array.dtype == np.int64:
        array = array.astype(np.int32)
    np.save(os.path.join(OUT, name + ".npy"), array)


def t64(name):
    return torch.from_numpy(I[name].astype(np.float64))


def stable_argsort(x, axis=-1, descending=False):
    return np.argsort(-x if descending else x, axis=axis, kind="stable").astype(np.int32)


def nms_reference(boxes, scores, iou_threshold):
    """torchvision.ops.nms on CPU: visit boxes by descending score, drop those whose IoU with a
    kept box is > iou_threshold. Ties are visited lower index first (stable sort)."""
    x1, y1, x2, y2 = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    areas = (x2 - x1) * (y2 - y1)
    order = np.argsort(-scores, kind="stable")
    suppressed = np.zeros(len(boxes), dtype=bool)
    keep = []
    for _i in range(len(order)):
        i = order[_i]
        if suppressed[i]:
            continue
        keep.append(i)
        for _j in range(_i + 1, len(order)):
            j = order[_j]
            if suppressed[j]:
                continue
            xx1, yy1 = max(x1[i], x1[j]), max(y1[i], y1[j])
            xx2, yy2 = min(x2[i], x2[j]), min(y2[i], y2[j])
            w, h = max(np.float32(0), xx2 - xx1), max(np.float32(0), yy2 - yy1)
            inter = w * h
            ovr = inter / (areas[i] + areas[j] - inter)
            if ovr > iou_threshold:
                suppressed[j] = True
    return np.array(keep, dtype=np.int32)


def main():
    os.makedirs(OUT, exist_ok=True)
    a = inp("a", rng.uniform(-2, 2, size=(3, 4, 5)).astype(np.float32))
    a2 = inp("a2", rng.uniform(-2, 2, size=(3, 4)).astype(np.float32))
    x5 = inp("x5", rng.uniform(-2, 2, size=(2, 2, 3, 2, 2)).astype(np.float32))
    ties = inp("ties", rng.integers(0, 3, size=(3, 8)).astype(np.float32))

    # Slicing (the Swift test names the subscript next to each case).
    out("sub_int", a[1])
    out("sub_neg", a[-1])
    out("sub_range", a[0:2])
    out("sub_negrange", a[:, -3:-1])
    out("sub_closed", a[:, 1:3])
    out("sub_from", a[:, 2:])
    out("sub_upto", a[..., :3])
    out("sub_through", a[:, :2])
    out("sub_ellipsis_last", a[..., 0])
    out("sub_nil_neg", a[:, -1])
    out("sub_stride", a[:, 0:4:2])
    out("sub_stride_rev", a[:, ::-1])
    out("sub_stride_rev2", a[:, :, 4::-2])
    out("sub_from_stride", a[..., 1::2])
    out("sub_upto_stride", a[..., :4:3])
    out("sub_through_stride", a[..., :3:2])
    out("sub_newaxis", a[None, 1, :, None])
    out("sub_squeeze", a[0:1][0, :, 2])
    out("sub_mid_ellipsis", a[1, ..., 2])
    out("sub_third_ellipsis", x5[1, 0, ..., 1])
    out("sub_fourth_ellipsis", x5[1, 0, 2, ..., 1])
    out("sub_index_neg", a[..., -2])
    out("sub_fillall", a[..., 1, :])
    out("sub_stride_rev_every2", a[:, 0:4][:, ::-2])

    # Gathering and replacing.
    nd = inp("nd_idx", np.array([[0, 0], [2, 3], [-1, 1], [1, -4]], dtype=np.int32))
    out("gather_nd", a2[nd[:, 0], nd[:, 1]])
    nd1 = inp("nd_rows", np.array([[2], [-3]], dtype=np.int32))
    out("gather_nd_rows", a2[nd1[:, 0]])
    out("gather_nd_3d", a[nd[:, 0], nd[:, 1]])
    take = inp("take_idx", np.array([2, -1, 0], dtype=np.int32))
    out("take_ax1", np.take(a, take, axis=1))
    out("take_axm1", np.take(a, take, axis=-1))
    sidx = inp("scatter_idx", np.argsort(rng.random((3, 4, 5)), axis=1)[:, :2, :].astype(np.int32))
    upd = inp("scatter_upd", rng.uniform(5, 6, size=(3, 2, 5)).astype(np.float32))
    out("scatter_ax1", torch.from_numpy(a.copy()).scatter(1, torch.from_numpy(sidx.astype(np.int64)), torch.from_numpy(upd)))
    out("scatter_scalar", torch.from_numpy(a.copy()).scatter(1, torch.from_numpy(sidx.astype(np.int64)), 9.0))
    mask = inp("mask", rng.random((3, 4, 5)) < 0.4)
    mask41 = inp("mask41", rng.random((4, 1)) < 0.5)
    out("where_tensor", np.where(mask, a * 0 + 7, a))
    out("where_scalar", np.where(mask41, np.float32(-1), a))

    # Sorting (stable: ties keep index order).
    out("argsort_asc", stable_argsort(ties))
    out("argsort_desc", stable_argsort(ties, descending=True))
    out("argsort_ax0", stable_argsort(a, axis=0))
    order = stable_argsort(ties, descending=True)[:, :3]
    out("topk_ties_0", np.take_along_axis(ties, order, axis=-1))
    out("topk_ties_1", order)
    order = stable_argsort(a, descending=True)[..., :2]
    out("topk_a_0", np.take_along_axis(a, order, axis=-1))
    out("topk_a_1", order)
    out("cumsum_axm1", np.cumsum(a.astype(np.float64), axis=-1))
    out("cumprod_ax1", np.cumprod(a.astype(np.float64), axis=1))

    # Padding and resizing.
    out("pad_const", np.pad(a2, ((0, 0), (2, 2)), constant_values=1.5))
    out("pad_const_mode", np.pad(a, ((1, 0), (0, 2), (2, 1)), constant_values=-3))
    out("pad_reflect", np.pad(a, ((1, 0), (0, 2), (2, 1)), mode="reflect"))
    out("pad_symmetric", np.pad(a, ((1, 0), (0, 2), (2, 1)), mode="symmetric"))
    img = inp("img", rng.uniform(0, 1, size=(2, 3, 5, 7)).astype(np.float32))
    ti = torch.from_numpy(img.astype(np.float64))
    out("resize_nearest_up", F.interpolate(ti.float(), size=(8, 11), mode="nearest"))
    out("resize_nearest_down", F.interpolate(ti.float(), size=(3, 4), mode="nearest"))
    for align in (True, False):
        tag = "align" if align else "half"
        out(f"resize_bilinear_{tag}_up", F.interpolate(ti, size=(8, 11), mode="bilinear", align_corners=align))
        out(f"resize_bilinear_{tag}_down", F.interpolate(ti, size=(3, 4), mode="bilinear", align_corners=align))
    out("resize_3d", F.interpolate(ti[0:1], size=(6, 9), mode="bilinear", align_corners=False)[0])

    # Extensions, against PyTorch in float64.
    x = inp("x", rng.uniform(-4, 4, size=(4, 16)).astype(np.float32))
    y = inp("y", rng.uniform(-4, 4, size=(16,)).astype(np.float32))
    tx, ty = t64("x"), t64("y")
    out("sigmoid", torch.sigmoid(tx))
    out("relu", torch.relu(tx))
    out("silu", F.silu(tx))
    out("gelu", F.gelu(tx))
    out("gelu_tanh", F.gelu(tx, approximate="tanh"))
    out("erf", torch.erf(tx))
    out("log_softmax", F.log_softmax(tx, dim=-1))
    out("log_softmax_ax0", F.log_softmax(tx, dim=0))
    out("layer_norm", F.layer_norm(tx, (16,), eps=1e-5))
    ta = t64("a")
    out("layer_norm_2axes", F.layer_norm(ta, (4, 5), eps=1e-5))
    out("rms_norm", tx * torch.rsqrt((tx * tx).mean(-1, keepdim=True) + 1e-6))
    out("l2_normalized", F.normalize(tx, dim=-1))
    out("l2_normalized_ax0", F.normalize(tx, dim=0))
    out("cosine", F.cosine_similarity(tx, ty, dim=-1))
    out("logsumexp", torch.logsumexp(tx, dim=-1))
    out("logsumexp_all", torch.logsumexp(tx, dim=(0, 1)))
    out("variance_ax0", np.var(x.astype(np.float64), axis=0))
    out("variance_all", np.var(x.astype(np.float64)))
    out("std_ax1_keep", np.std(x.astype(np.float64), axis=1, keepdims=True))
    out("std_all", np.std(x.astype(np.float64)))
    q = inp("q", rng.normal(size=(2, 2, 5, 8)).astype(np.float32))
    k = inp("k", rng.normal(size=(2, 2, 7, 8)).astype(np.float32))
    v = inp("v", rng.normal(size=(2, 2, 7, 4)).astype(np.float32))
    bm = rng.random((5, 7)) < 0.6
    bm[:, 0] = True
    inp("bool_mask", bm)
    fm = inp("float_mask", rng.normal(size=(5, 7)).astype(np.float32))
    tq, tk, tv = t64("q"), t64("k"), t64("v")
    out("sdpa", F.scaled_dot_product_attention(tq, tk, tv))
    out("sdpa_bool", F.scaled_dot_product_attention(tq, tk, tv, attn_mask=torch.from_numpy(bm)))
    out("sdpa_float", F.scaled_dot_product_attention(tq, tk, tv, attn_mask=t64("float_mask")))
    out("sdpa_causal", F.scaled_dot_product_attention(tq, tk, tv, is_causal=True))
    out("sdpa_scale", F.scaled_dot_product_attention(tq, tk, tv, scale=0.5))
    out("causal_mask", np.tril(np.ones((4, 6), dtype=bool)))

    logits = inp("logits", rng.normal(size=(2, 50)).astype(np.float32))
    logits[1, 10:14] = logits[1, 3]  # ties
    inp("logits", logits)
    tl = t64("logits")
    # Hugging Face TopPLogitsWarper (min_tokens_to_keep = 1), written with a stable sort.
    sorted_logits, sorted_idx = torch.sort(tl, descending=True, stable=True)
    cum = sorted_logits.softmax(-1).cumsum(-1)
    remove = (cum - sorted_logits.softmax(-1)) >= 0.8
    remove[..., 0] = False
    filtered = sorted_logits.masked_fill(remove, -float("inf"))
    out("top_p", tl.scatter(-1, sorted_idx, filtered))
    tokens = inp("tokens", np.array([[1, 5, 5, 49, 0, 7], [3, 3, 10, 2, 11, 48]], dtype=np.int32))
    tt = torch.from_numpy(tokens.astype(np.int64))
    score = torch.gather(tl, 1, tt)
    score = torch.where(score < 0, score * 1.3, score / 1.3)
    out("repetition", tl.scatter(1, tt, score))

    centers = rng.uniform(0, 100, size=(60, 2))
    sizes = rng.uniform(10, 40, size=(60, 2))
    boxes = inp("boxes", np.concatenate([centers - sizes / 2, centers + sizes / 2], axis=1).astype(np.float32))
    scores = rng.uniform(0, 1, size=60).astype(np.float32)
    scores[7] = scores[3]  # a tie
    inp("scores", scores)
    keep = nms_reference(boxes, scores, np.float32(0.3))
    padded = np.full(20, -1, dtype=np.int32)
    padded[: min(20, len(keep))] = keep[:20]
    out("nms_03_20", padded)
    keep5 = nms_reference(boxes, scores, np.float32(0.5))
    out("nms_05_5", np.pad(keep5[:5], (0, 5 - len(keep5[:5])), constant_values=-1))
    keep_t = nms_reference(boxes[scores >= 0.5], scores[scores >= 0.5], np.float32(0.5))
    padded = np.full(40, -1, dtype=np.int32)
    kept_global = np.nonzero(scores >= 0.5)[0][keep_t]
    padded[: len(kept_global)] = kept_global
    out("nms_score_threshold", padded)


if __name__ == "__main__":
    main()
