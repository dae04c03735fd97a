"""The spec-5 NeuralNetwork fixtures: scatter / gatherND, oneHot, argSort, reverseSeq,
slidingWindows, whereNonZero, NMS, the 3-D layers and the random layers.

Imported by make_neuralnetwork_fixtures.py, which passes its `save`, `single`, `builder`,
`rand` and `t` helpers. Expected values come from NumPy and PyTorch. The random layers have
no element-wise reference (Core ML does not specify its stream); their cases carry a
`distribution` entry that NeuralNetworkRandomLayerTests checks (mean, standard deviation,
bounds, seeded repeatability).
"""
import numpy as np
import torch
import torch.nn.functional as F


def nms_reference(boxes, scores, iou, score_threshold, m, per_class):
    """Greedy NMS of the NeuralNetwork NMS layer, in NumPy (boxes are center x, y, w, h)."""
    B, N, C = scores.shape
    out = [np.zeros((B, m, 4)), np.zeros((B, m, C)), -np.ones((B, m)), np.zeros((B,))]
    for b in range(B):
        x, y, w, h = boxes[b].T
        x1, y1, x2, y2 = x - w / 2, y - h / 2, x + w / 2, y + h / 2
        area = (x2 - x1) * (y2 - y1)
        best = scores[b].max(-1)
        label = scores[b].argmax(-1)
        order = [i for i in np.argsort(-best, kind="stable") if best[i] >= score_threshold]
        kept = []
        for i in order:
            ok = True
            for j in kept:
                if per_class and label[i] != label[j]:
                    continue
                iw = max(0.0, min(x2[i], x2[j]) - max(x1[i], x1[j]))
                ih = max(0.0, min(y2[i], y2[j]) - max(y1[i], y1[j]))
                inter = iw * ih
                if inter / (area[i] + area[j] - inter) > iou:
                    ok = False
                    break
            if ok:
                kept.append(i)
            if len(kept) == m:
                break
        if not kept:
            kept = [int(np.argmax(best))]
        k = len(kept)
        out[0][b, :k] = boxes[b, kept]
        out[1][b, :k] = scores[b, kept]
        out[2][b, :k] = kept
        out[3][b] = k
    return out


def spec5_cases(save, single, builder, rand, t, rng):
    # scatter family
    data = rand(4, 5, 3)
    idx = np.array([3, 0, 3], np.float32)
    upd = rand(4, 3, 3)

    def scatter_ref(d, i, u, mode):
        out = d.copy()
        for p, row in enumerate(i.astype(int)):
            cur = out[:, row]
            out[:, row] = {"UPDATE": u[:, p], "ADD": cur + u[:, p], "MAX": np.maximum(cur, u[:, p])}[mode]
        return out

    for mode in ("UPDATE", "ADD", "MAX"):
        single(f"scatter_{mode.lower()}", None,
               lambda nb, m=mode: nb.add_scatter("s", ["x", "i", "u"], "y", axis=1, mode=m),
               lambda d, i, u, m=mode: scatter_ref(d, i, u, m),
               layer_inputs={"x": data, "i": idx, "u": upd}, exact=True)
    nd_idx = np.array([[1, 2], [3, 0], [1, 2]], np.float32)
    nd_upd = rand(3, 3)

    def scatter_nd_ref(d, i, u):
        out = d.copy()
        for p, (a, b) in enumerate(i.astype(int)):
            out[a, b] += u[p]
        return out

    single("scatter_nd_add", None, lambda nb: nb.add_scatter_nd("s", ["x", "i", "u"], "y", mode="ADD"), scatter_nd_ref,
           layer_inputs={"x": data, "i": nd_idx, "u": nd_upd}, exact=True)
    along = np.array([[[0, 4, 1], [2, -1, 3]]] * 4, np.float32)  # [4, 2, 3] into [4, 5, 3] along 1
    along_upd = rand(4, 2, 3)

    def along_ref(d, i, u):
        out = d.copy()
        np.put_along_axis(out, np.where(i < 0, i + 5, i).astype(int), u, axis=1)
        return out

    single("scatter_along_axis", None,
           lambda nb: nb.add_scatter_along_axis("s", ["x", "i", "u"], "y", axis=1, mode="UPDATE"), along_ref,
           layer_inputs={"x": data, "i": along, "u": along_upd}, exact=True)
    g_idx = np.array([[1, 2], [3, 0], [0, 4]], np.float32)
    single("gather_nd", None, lambda nb: nb.add_gather_nd("g", ["x", "i"], "y"),
           lambda d, i: d[i[:, 0].astype(int), i[:, 1].astype(int)],
           layer_inputs={"x": data, "i": g_idx}, exact=True)

    # reordering and locating
    labels = np.array([[2, 0, 4], [1, 3, -1]], np.float32)

    def one_hot_ref(i):
        out = np.full((2, 4, 3), -1.0, np.float32)
        for a in range(2):
            for c in range(3):
                if 0 <= i[a, c] < 4:
                    out[a, int(i[a, c]), c] = 5.0
        return out

    single("one_hot", None, lambda nb: nb.add_one_hot("o", ["x"], "y", one_hot_vector_size=4, axis=1, on_value=5.0,
                                                      off_value=-1.0),
           one_hot_ref, x=labels, exact=True)
    s = rand(3, 6)
    single("argsort_descending", None, lambda nb: nb.add_argsort("a", "x", "y", axis=1, descending=True),
           lambda a: np.argsort(-a, axis=1, kind="stable").astype(np.float32), x=s, exact=True)
    seq = rand(2, 5, 3)
    lengths = np.array([3, 5], np.float32)

    def reverse_ref(d, n):
        out = d.copy()
        for b in range(2):
            k = int(n[b])
            out[b, :k] = d[b, :k][::-1]
        return out

    single("reverse_seq", None, lambda nb: nb.add_reverse_sequence("r", ["x", "n"], "y", batch_axis=0, seq_axis=1),
           reverse_ref, layer_inputs={"x": seq, "n": lengths}, exact=True)
    single("sliding_windows", None, lambda nb: nb.add_sliding_windows("w", "x", "y", axis=1, window_size=3, step=2),
           lambda a: np.stack([a[:, i:i + 3] for i in range(0, 6 - 3 + 1, 2)], axis=1), x=rand(2, 6, 4), exact=True)
    sparse = np.array([[0, 1.5, 0], [2, 0, -1]], np.float32)
    single("where_nonzero", None, lambda nb: nb.add_where_nonzero("w", "x", "y"),
           lambda a: np.argwhere(a).astype(np.float32), x=sparse, exact=True)

    # NMS
    n, c = 12, 3
    centers = rng.uniform(0, 1, size=(1, n, 2)).astype(np.float32)
    sizes = rng.uniform(0.2, 0.5, size=(1, n, 2)).astype(np.float32)
    boxes = np.concatenate([centers, sizes], -1)
    scores = rng.uniform(0, 1, size=(1, n, c)).astype(np.float32)
    for name, per_class, threshold in [("nms", False, 0.2), ("nms_per_class", True, 0.2),
                                       ("nms_none_survive", False, 2.0)]:
        nb = builder([("boxes", (1, n, 4)), ("scores", (1, n, c))],
                     [("ob", None), ("os", None), ("oi", None), ("on", None)], exact=True)
        nb.add_nms("nms", ["boxes", "scores"], ["ob", "os", "oi", "on"], iou_threshold=0.3, score_threshold=threshold,
                   max_boxes=6, per_class_suppression=per_class)
        ob, os_, oi, on = nms_reference(boxes, scores, 0.3, threshold, 6, per_class)
        save(name, nb.spec, {"boxes": boxes, "scores": scores}, {"ob": ob, "os": os_, "oi": oi, "on": on})

    # 3-D layers (rank-5 [N, C, D, H, W] blobs)
    x3 = rand(1, 4, 5, 6, 7)
    for name, groups, stride, dilation, padding in [("conv3d_valid", 1, 1, 1, "valid"),
                                                    ("conv3d_same_stride2_groups2", 2, 2, 1, "same"),
                                                    ("conv3d_custom_dilation2", 1, 1, 2, "custom")]:
        w3 = rand(6, 4 // groups, 3, 3, 3)
        b3 = rand(6)
        nb = builder([("x", x3.shape)], [("y", None)], exact=True)
        nb.add_convolution3d("c", 4, 6, 3, 3, 3, w3, b3, True, groups=groups, stride_depth=stride,
                             stride_height=stride, stride_width=stride, dilation_depth=dilation,
                             dilation_height=dilation, dilation_width=dilation, padding_mode=padding,
                             padding_front=1, padding_back=0, padding_top=2, padding_bottom=1, padding_left=0,
                             padding_right=1, input_name="x", output_name="y")
        xt = t(x3)
        if padding == "same":
            pads = []
            for size in (7, 6, 5):  # W, H, D for F.pad
                out = -(-size // stride)
                total = max(0, (out - 1) * stride + (3 - 1) * dilation + 1 - size)
                pads += [total // 2, total - total // 2]
            xt = F.pad(xt, pads)
        elif padding == "custom":
            xt = F.pad(xt, [0, 1, 2, 1, 1, 0])
        y = F.conv3d(xt, t(w3), t(b3), stride=stride, dilation=dilation, groups=groups)
        save(name, nb.spec, {"x": x3}, {"y": y.numpy()}, rtol=1e-4, atol=1e-4)
    for name, kind, padding, exclude in [("pool3d_max_valid", "MAX", "valid", False),
                                         ("pool3d_avg_same_exclude_pad", "AVERAGE", "same", True),
                                         ("pool3d_avg_custom", "AVERAGE", "custom", False)]:
        nb = builder([("x", x3.shape)], [("y", None)], exact=True)
        nb.add_pooling3d("p", "x", "y", kind, 2, 3, 2, 2, 2, 1, padding_mode=padding, custom_padding_front=1,
                         custom_padding_back=0, custom_padding_top=1, custom_padding_bottom=1, custom_padding_left=0,
                         custom_padding_right=1, average_pooling_count_excludes_padding=exclude)
        xt = t(x3)
        kernel, stride = (2, 3, 2), (2, 2, 1)
        if padding == "same":
            pads = []
            for size, k, s in reversed(list(zip((5, 6, 7), kernel, stride))):
                out = -(-size // s)
                total = max(0, (out - 1) * s + k - size)
                pads += [total // 2, total - total // 2]
        elif padding == "custom":
            pads = [0, 1, 1, 1, 1, 0]
        else:
            pads = [0] * 6
        if kind == "MAX":
            y = F.max_pool3d(F.pad(xt, pads, value=-np.inf), kernel, stride)
        else:
            total = F.avg_pool3d(F.pad(xt, pads), kernel, stride, divisor_override=1)
            count = F.avg_pool3d(F.pad(torch.ones_like(xt), pads), kernel, stride, divisor_override=1)
            y = total / count if exclude else total / float(np.prod(kernel))
        save(name, nb.spec, {"x": x3}, {"y": y.numpy()}, rtol=1e-4, atol=1e-5)
    for kind, ref in [("MAX", lambda a: a.max(axis=(2, 3, 4), keepdims=True)),
                      ("AVERAGE", lambda a: a.mean(axis=(2, 3, 4), keepdims=True))]:
        single(f"global_pool3d_{kind.lower()}", None, lambda nb, k=kind: nb.add_global_pooling3d("g", "x", "y", k),
               ref, x=x3, exact=True)

    # random layers: statistics only
    def random_case(name, add, inputs, distribution):
        nb = builder([(k, v.shape) for k, v in inputs.items()] or [("x", (1,))], [("y", None)], exact=True)
        add(nb)
        save(name, nb.spec, inputs or {"x": np.zeros(1, np.float32)}, {}, distribution=distribution)

    shape = [64, 64]
    random_case("random_normal_static", lambda nb: nb.add_random_normal_static(
        "r", "y", shape, mean=1.5, stddev=2.0, seed=7), {}, dict(kind="normal", mean=1.5, std=2.0, shape=shape,
                                                               seeded=True))
    random_case("random_normal_like", lambda nb: nb.add_random_normal_like(
        "r", "x", "y", mean=-1.0, stddev=0.5), {"x": rand(32, 128)},
        dict(kind="normal", mean=-1.0, std=0.5, shape=[32, 128], seeded=False))
    random_case("random_normal_dynamic", lambda nb: nb.add_random_normal_dynamic(
        "r", ["x"], "y", mean=0.0, stddev=1.0, seed=3), {"x": np.array([16, 256], np.float32)},
        dict(kind="normal", mean=0.0, std=1.0, shape=[16, 256], seeded=True))
    random_case("random_uniform_static", lambda nb: nb.add_random_uniform_static(
        "r", "y", shape, minval=-2.0, maxval=3.0, seed=11), {},
        dict(kind="uniform", low=-2.0, high=3.0, shape=shape, seeded=True))
    random_case("random_uniform_like", lambda nb: nb.add_random_uniform_like(
        "r", "x", "y", minval=0.0, maxval=1.0), {"x": rand(64, 64)},
        dict(kind="uniform", low=0.0, high=1.0, shape=shape, seeded=False))
    random_case("random_uniform_dynamic", lambda nb: nb.add_random_uniform_dynamic(
        "r", ["x"], "y", minval=1.0, maxval=2.0, seed=5), {"x": np.array([64, 64], np.float32)},
        dict(kind="uniform", low=1.0, high=2.0, shape=shape, seeded=True))
    random_case("random_bernoulli_static", lambda nb: nb.add_random_bernoulli_static(
        "r", "y", shape, prob=0.3, seed=2), {}, dict(kind="bernoulli", p=0.3, shape=shape, seeded=True))
    random_case("random_bernoulli_like", lambda nb: nb.add_random_bernoulli_like(
        "r", "x", "y", prob=0.8), {"x": rand(64, 64)}, dict(kind="bernoulli", p=0.8, shape=shape, seeded=False))
    random_case("random_bernoulli_dynamic", lambda nb: nb.add_random_bernoulli_dynamic(
        "r", ["x"], "y", prob=0.5, seed=9), {"x": np.array([64, 64], np.float32)},
        dict(kind="bernoulli", p=0.5, shape=shape, seeded=True))
    probs = np.array([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]], np.float32)
    random_case("categorical_distribution", lambda nb: nb.add_categorical_distribution(
        "r", "x", "y", num_samples=4000, is_logits=False, seed=4), {"x": probs},
        dict(kind="categorical", probabilities=probs.tolist(), shape=[2, 4000], seeded=True))


def flexible_cases(save, builder, rand):
    """Inputs with flexible shapes, fed at a shape other than the declared one: a range and
    enumerated shapes, under the rank-5 mapping ([C, H, W]) and the exact one."""
    from coremltools.models.neural_network import flexible_shape_utils as flex

    for name, exact in [("flexible_range_rank5", False), ("flexible_range_exact", True)]:
        nb = builder([("x", (3, 4, 5))], [("y", None)], exact=exact)
        nb.add_activation("relu", "RELU", "x", "y")
        spec = nb.spec
        if exact:
            flex.set_multiarray_ndshape_range(spec, "x", lower_bounds=[1, 1, 1], upper_bounds=[-1, 10, 10])
        else:
            shape_range = flex.NeuralNetworkMultiArrayShapeRange()
            shape_range.add_channel_range((1, 8))
            shape_range.add_height_range((1, 10))
            shape_range.add_width_range((1, 10))
            flex.update_multiarray_shape_range(spec, "x", shape_range)
        x = rand(2, 6, 7)
        y = np.maximum(x, 0)
        save(name, spec, {"x": x}, {"y": y if exact else y[None, None]})
    for name, exact in [("flexible_enumerated_rank5", False), ("flexible_enumerated_exact", True)]:
        nb = builder([("x", (3, 4, 5))], [("y", None)], exact=exact)
        nb.add_activation("tanh", "TANH", "x", "y")
        spec = nb.spec
        flex.add_enumerated_multiarray_shapes(spec, "x", [flex.NeuralNetworkMultiArrayShape(2, 6, 7)]) if not exact \
            else flex.add_multiarray_ndshape_enumeration(spec, "x", [(3, 4, 5), (2, 6, 7)])
        x = rand(2, 6, 7)
        y = np.tanh(x)
        save(name, spec, {"x": x}, {"y": y if exact else y[None, None]})
