#!/usr/bin/env python3
"""Writes the NeuralNetwork fixtures under Tests/Fixtures/neuralnetwork/.

One NeuralNetworkBuilder model per supported layer (plus weight-format, classifier,
preprocessing and bad-input cases), each with its inputs and the expected outputs computed
by NumPy or PyTorch (never by Tessera); then torch models converted with
convert_to="neuralnetwork" (a small CNN, a width-reduced MobileNetV2) with PyTorch outputs.

    Benchmarks/peers/.venv/bin/python tools/make_neuralnetwork_fixtures.py [--full-mobilenet DIR]

--full-mobilenet also writes the full MobileNetV2 as a NeuralNetwork .mlmodel and its ML
Program twin (.mlpackage) to DIR, outside git, for the latency comparison.
"""
import argparse
import json
import os
import shutil
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import coremltools as ct  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from coremltools.models import datatypes  # noqa: E402
from coremltools.models.neural_network import NeuralNetworkBuilder  # noqa: E402
from coremltools.models.utils import save_spec  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from neuralnetwork_fixture_cases_spec5 import flexible_cases, spec5_cases  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "neuralnetwork")
CASES = []
rng = np.random.default_rng(15)


def rand(*shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(np.float32)


def save(name, spec, inputs, outputs, rtol=1e-5, atol=1e-5, error=None, labels=None, distribution=None):
    """Writes one case: model.mlmodel, <input>.npy, expected_<output>.npy and its cases.json entry
    (`distribution`: the statistics a random layer's output must have, instead of outputs)."""
    folder = os.path.join(ROOT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    save_spec(spec, os.path.join(folder, "model.mlmodel"))
    for key, value in inputs.items():
        np.save(os.path.join(folder, key + ".npy"), np.ascontiguousarray(value, dtype=np.float32))
    for key, value in outputs.items():
        np.save(os.path.join(folder, "expected_" + key + ".npy"), np.ascontiguousarray(value, dtype=np.float32))
    nn = getattr(spec, spec.WhichOneof("Type"))
    layers = sorted({layer.WhichOneof("layer") for layer in nn.layers} - {None})
    entry = dict(name=name, inputs=list(inputs), outputs=list(outputs), rtol=rtol, atol=atol, layers=layers)
    if error:
        entry["error"] = error
    if labels:
        entry["labels"] = labels
    if distribution:
        entry["distribution"] = distribution
    CASES.append(entry)


def builder(inputs, outputs, exact=False):
    """A builder over float multi-array features (shapes as the description declares them)."""
    return NeuralNetworkBuilder(
        [(n, datatypes.Array(*s)) for n, s in inputs],
        [(n, datatypes.Array(*s) if s else None) for n, s in outputs],
        disable_rank5_shape_mapping=exact,
    )


def t(x):
    return torch.from_numpy(np.asarray(x, dtype=np.float32))


# ---------------------------------------------------------------- convolution


def conv_case(name, c_in=3, c_out=4, k=3, stride=1, groups=1, dilation=1, same=False, pads=(0, 0, 0, 0),
              deconv=False, output_shape=None, size=(7, 8), weight_format=None, bias=True):
    h, w = size
    if deconv:
        weight = rand(c_in, c_out // groups, k, k)
    else:
        weight = rand(c_out, c_in // groups, k, k)
    b = rand(c_out)
    x = rand(c_in, h, w)
    nb = builder([("x", (c_in, h, w))], [("y", None)])
    # The builder takes [kH, kW, C_in/groups, C_out] (deconvolution [kH, kW, C_in, C_out/groups]).
    W = weight.transpose(2, 3, 0, 1) if deconv else weight.transpose(2, 3, 1, 0)
    nb.add_convolution(
        "conv", kernel_channels=c_in if deconv else c_in // groups, output_channels=c_out, height=k, width=k,
        stride_height=stride, stride_width=stride, border_mode="same" if same else "valid", groups=groups, W=W,
        b=b if bias else None, has_bias=bias, is_deconv=deconv, output_shape=output_shape, input_name="x",
        output_name="y", dilation_factors=[dilation, dilation], padding_top=pads[0], padding_bottom=pads[1],
        padding_left=pads[2], padding_right=pads[3])
    reference_weight = weight
    if weight_format is not None:
        reference_weight = weight_format(nb.spec.neuralNetwork.layers[0].convolution.weights, weight)
    xt = t(x)[None]
    if deconv:
        # An output shape past the full result extends it at the end (PyTorch's output_padding);
        # valid padding amounts crop the full result.
        full = [(n - 1) * stride + k for n in (h, w)]
        extra = [o - f for o, f in zip(output_shape, full)] if output_shape else [0, 0]
        y = F.conv_transpose2d(xt, t(reference_weight), t(b) if bias else None, stride=stride, groups=groups,
                               output_padding=tuple(extra))
        y = y[:, :, pads[0]:y.shape[2] - pads[1], pads[2]:y.shape[3] - pads[3]]
    else:
        if same:
            eff = (k - 1) * dilation + 1
            pad = []
            for n in (w, h):
                out = -(-n // stride)
                total = max(0, (out - 1) * stride + eff - n)
                pad += [total // 2, total - total // 2]
            xt = F.pad(xt, pad)
        else:
            xt = F.pad(xt, [pads[2], pads[3], pads[0], pads[1]])
        y = F.conv2d(xt, t(reference_weight), t(b) if bias else None, stride=stride, dilation=dilation, groups=groups)
    save(name, nb.spec, {"x": x}, {"y": y[0].numpy()}, rtol=1e-4, atol=1e-4)


def as_float16(params, weight):
    values = weight.astype(np.float16)
    del params.floatValue[:]
    params.float16Value = values.tobytes()
    return values.astype(np.float32)


def as_linear_uint8_per_channel(params, weight):
    """8-bit linear quantization, one scale and bias per output channel (axis 0)."""
    flat = weight.reshape(weight.shape[0], -1)
    low, high = flat.min(axis=1), flat.max(axis=1)
    scale = (high - low) / 255
    q = np.round((flat - low[:, None]) / scale[:, None]).astype(np.uint8)
    del params.floatValue[:]
    params.rawValue = q.tobytes()
    params.quantization.numberOfBits = 8
    params.quantization.linearQuantization.scale.extend(scale.tolist())
    params.quantization.linearQuantization.bias.extend(low.tolist())
    scale32, low32 = np.float32(scale), np.float32(low)
    return (q.astype(np.float32) * scale32[:, None] + low32[:, None]).reshape(weight.shape)


def pack_bits(q, nbits):
    """Packs unsigned nbits values most significant bit first, as coremltools does."""
    bits = [(int(v) >> i) & 1 for v in q.flatten() for i in reversed(range(nbits))]
    bits += [0] * (-len(bits) % 8)
    return bytes(int("".join(map(str, bits[i:i + 8])), 2) for i in range(0, len(bits), 8))


def as_lut(nbits):
    def convert(params, weight):
        table = np.linspace(weight.min(), weight.max(), 2 ** nbits).astype(np.float32)
        q = np.abs(weight.flatten()[:, None] - table[None]).argmin(axis=1)
        del params.floatValue[:]
        params.rawValue = pack_bits(q, nbits)
        params.quantization.numberOfBits = nbits
        params.quantization.lookupTableQuantization.floatValue.extend(table.tolist())
        return table[q].reshape(weight.shape)
    return convert


def as_linear(nbits):
    def convert(params, weight):
        low, high = float(weight.min()), float(weight.max())
        scale = (high - low) / (2 ** nbits - 1)
        q = np.round((weight.flatten() - low) / scale).astype(np.int64)
        del params.floatValue[:]
        params.rawValue = pack_bits(q, nbits)
        params.quantization.numberOfBits = nbits
        params.quantization.linearQuantization.scale.append(scale)
        params.quantization.linearQuantization.bias.append(low)
        return (q.astype(np.float32) * np.float32(scale) + np.float32(low)).reshape(weight.shape)
    return convert


def convolution_cases():
    conv_case("conv_valid")
    # The same network as the root model of an .mlpackage (whatever the root file's name).
    spec = ct.utils.load_spec(os.path.join(ROOT, "conv_valid", "model.mlmodel"))
    ct.models.MLModel(spec, skip_model_load=True).save(os.path.join(ROOT, "conv_valid", "model.mlpackage"))
    conv_case("conv_same_stride2", stride=2, same=True, size=(9, 8))
    conv_case("conv_same_dilation2", dilation=2, same=True)
    conv_case("conv_padding_amounts", pads=(1, 2, 0, 1))
    conv_case("conv_depthwise", c_in=4, c_out=4, groups=4)
    conv_case("conv_groups2_no_bias", c_in=4, c_out=6, groups=2, bias=False)
    conv_case("deconv_stride2", stride=2, deconv=True, size=(4, 5))
    conv_case("deconv_groups_padding", c_in=4, c_out=6, groups=2, stride=2, deconv=True, pads=(1, 1, 1, 1), size=(4, 4))
    conv_case("deconv_output_shape", stride=2, deconv=True, output_shape=(10, 12), size=(4, 5))
    conv_case("weights_float16", weight_format=as_float16)
    conv_case("weights_linear_8bit_per_channel", weight_format=as_linear_uint8_per_channel)
    conv_case("weights_lut_4bit", weight_format=as_lut(4))
    conv_case("weights_lut_3bit", weight_format=as_lut(3))
    conv_case("weights_linear_5bit", weight_format=as_linear(5))


# ---------------------------------------------------------------- pooling, padding, upsample


def single(name, shape, add, reference, exact=False, out_shape=None, rtol=1e-5, atol=1e-5, x=None, layer_inputs=None):
    """A one-layer model on input x of `shape` (or several inputs)."""
    inputs = layer_inputs or {"x": rand(*shape) if x is None else x}
    nb = builder([(k, v.shape) for k, v in inputs.items()], [("y", out_shape)], exact=exact)
    add(nb)
    save(name, nb.spec, inputs, {"y": reference(*inputs.values())}, rtol=rtol, atol=atol)


def pooling_cases():
    def pool(name, layer_type, padding_type, k=2, s=2, exclude=True, is_global=False, ref=None, size=(6, 7)):
        single(name, (3,) + size, lambda nb: nb.add_pooling(
            "pool", k, k, s, s, layer_type, padding_type, "x", "y", exclude_pad_area=exclude, is_global=is_global),
            ref)
    pool("pool_max_valid", "MAX", "VALID", ref=lambda x: F.max_pool2d(t(x)[None], 2, 2)[0].numpy())
    pool("pool_max_same", "MAX", "SAME", k=3, s=2,
         ref=lambda x: F.max_pool2d(F.pad(t(x)[None], [1, 1, 0, 1], value=-1e30), 3, 2)[0].numpy())
    pool("pool_avg_same_exclude_pad", "AVERAGE", "SAME", k=3, s=2,
         ref=lambda x: (F.avg_pool2d(F.pad(t(x)[None], [1, 1, 0, 1]), 3, 2, divisor_override=1)
                        / F.avg_pool2d(F.pad(torch.ones(1, 3, 6, 7), [1, 1, 0, 1]), 3, 2, divisor_override=1))[0].numpy())
    pool("pool_avg_valid", "AVERAGE", "VALID", k=3, s=1, ref=lambda x: F.avg_pool2d(t(x)[None], 3, 1)[0].numpy())
    pool("pool_avg_include_last_pixel", "AVERAGE", "INCLUDE_LAST_PIXEL", k=2, s=2, size=(5, 7),
         ref=lambda x: F.avg_pool2d(t(x)[None], 2, 2, ceil_mode=True, count_include_pad=False)[0].numpy())
    pool("pool_global_avg", "AVERAGE", "VALID", is_global=True, ref=lambda x: x.mean(axis=(1, 2), keepdims=True))
    pool("pool_global_max", "MAX", "VALID", is_global=True, ref=lambda x: x.max(axis=(1, 2), keepdims=True))
    pool("pool_l2", "L2", "VALID", k=2, s=2,
         ref=lambda x: np.sqrt(F.avg_pool2d(t(x * x)[None], 2, 2)[0].numpy() * 4))

    for mode, torch_mode in [("constant", "constant"), ("reflection", "reflect"), ("replication", "replicate")]:
        single(f"padding_{mode}", (2, 4, 5), lambda nb, mode=mode: nb.add_padding(
            "pad", left=1, right=2, top=2, bottom=1, value=1.5, input_name="x", output_name="y", padding_type=mode),
            lambda x, m=torch_mode: F.pad(t(x)[None], [1, 2, 2, 1], mode=m, **({"value": 1.5} if m == "constant" else {}))[0].numpy())

    single("upsample_nearest", (2, 3, 4), lambda nb: nb.add_upsample("up", 2, 3, "x", "y"),
           lambda x: x.repeat(2, axis=1).repeat(3, axis=2))
    single("upsample_bilinear_align_corners", (2, 3, 4), lambda nb: nb.add_upsample(
        "up", 2, 2, "x", "y", mode="BILINEAR", linear_upsample_mode="ALIGN_CORNERS_TRUE"),
        lambda x: F.interpolate(t(x)[None], scale_factor=2, mode="bilinear", align_corners=True)[0].numpy())
    single("upsample_bilinear_half_pixel", (2, 3, 4), lambda nb: nb.add_upsample(
        "up", 2, 2, "x", "y", mode="BILINEAR", linear_upsample_mode="ALIGN_CORNERS_FALSE"),
        lambda x: F.interpolate(t(x)[None], scale_factor=2, mode="bilinear", align_corners=False)[0].numpy())


# ---------------------------------------------------------------- activations, normalization


def activation_cases():
    x = rand(3, 4, 5, low=-3, high=3)
    alpha3 = np.array([0.1, 0.2, 0.3], np.float32)
    beta3 = np.array([0.5, 1.0, 2.0], np.float32)
    kinds = [
        ("RELU", None, lambda x: np.maximum(x, 0)),
        ("LEAKYRELU", [0.1], lambda x: np.where(x >= 0, x, 0.1 * x)),
        ("TANH", None, np.tanh),
        ("SCALED_TANH", [1.5, 0.5], lambda x: 1.5 * np.tanh(0.5 * x)),
        ("SIGMOID", None, lambda x: 1 / (1 + np.exp(-x))),
        ("SIGMOID_HARD", [0.2, 0.5], lambda x: np.clip(0.2 * x + 0.5, 0, 1)),
        ("LINEAR", [2.0, -1.0], lambda x: 2 * x - 1),
        ("ELU", 0.7, lambda x: np.where(x >= 0, x, 0.7 * (np.exp(x) - 1))),
        ("SOFTSIGN", None, lambda x: x / (1 + np.abs(x))),
        ("SOFTPLUS", None, lambda x: np.log1p(np.exp(x))),
        ("THRESHOLDEDRELU", 0.5, lambda x: np.where(x >= 0.5, x, 0)),
        ("PRELU", alpha3, lambda x: np.where(x >= 0, x, alpha3[:, None, None] * x)),
        ("PARAMETRICSOFTPLUS", [alpha3, beta3],
         lambda x: alpha3[:, None, None] * np.log1p(np.exp(beta3[:, None, None] * x))),
    ]
    for kind, params, ref in kinds:
        single("activation_" + kind.lower(), None, lambda nb, k=kind, p=params: nb.add_activation(
            "act", k, "x", "y", params=p), ref, x=x)
    single("clip", None, lambda nb: nb.add_clip("clip", "x", "y", min_value=-0.5, max_value=1.0),
           lambda x: np.clip(x, -0.5, 1.0), x=x, exact=True)
    for mode, ref in [("EXACT", lambda x: F.gelu(t(x)).numpy()),
                      ("TANH_APPROXIMATION", lambda x: F.gelu(t(x), approximate="tanh").numpy()),
                      ("SIGMOID_APPROXIMATION", lambda x: x / (1 + np.exp(-1.702 * x)))]:
        single("gelu_" + mode.lower(), None, lambda nb, m=mode: nb.add_gelu("gelu", "x", "y", mode=m), ref, x=x,
               exact=True, rtol=1e-4, atol=1e-5)


def normalization_cases():
    c = 3
    gamma, beta, mean, var = rand(c), rand(c), rand(c), rand(c, low=0.5, high=2)
    single("batchnorm", (c, 4, 5), lambda nb: nb.add_batchnorm("bn", c, gamma, beta, mean, var, "x", "y", epsilon=1e-3),
           lambda x: gamma[:, None, None] * (x - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-3)
           + beta[:, None, None], rtol=1e-4)
    single("batchnorm_instance", (c, 4, 5), lambda nb: nb.add_batchnorm(
        "bn", c, gamma, beta, input_name="x", output_name="y", compute_mean_var=True, instance_normalization=True,
        epsilon=1e-5),
        lambda x: gamma[:, None, None] * (x - x.mean(axis=(1, 2), keepdims=True))
        / np.sqrt(x.var(axis=(1, 2), keepdims=True) + 1e-5) + beta[:, None, None], rtol=1e-4, atol=1e-4)
    single("softmax", (4, 2, 3), lambda nb: nb.add_softmax("softmax", "x", "y"),
           lambda x: np.exp(x) / np.exp(x).sum(axis=0, keepdims=True))
    single("softmax_nd", (2, 3, 4), lambda nb: nb.add_softmax_nd("softmax", "x", "y", axis=1),
           lambda x: np.exp(x) / np.exp(x).sum(axis=1, keepdims=True), exact=True)
    single("l2normalize", (2, 3, 4), lambda nb: nb.add_l2_normalize("l2", "x", "y", epsilon=1e-6),
           lambda x: x / np.sqrt((x * x).sum() + 1e-6))
    single("mvn", (2, 3, 4), lambda nb: nb.add_mvn("mvn", "x", "y", across_channels=False, normalize_variance=True,
                                                  epsilon=1e-5),
           lambda x: (x - x.mean(axis=(1, 2), keepdims=True)) / np.sqrt(x.var(axis=(1, 2), keepdims=True) + 1e-5),
           rtol=1e-4, atol=1e-4)
    single("lrn", (5, 3, 4), lambda nb: nb.add_lrn("lrn", "x", "y", alpha=0.3, beta=0.75, local_size=3, k=2.0),
           lambda x: F.local_response_norm(t(x)[None], 3, alpha=0.3, beta=0.75, k=2.0)[0].numpy(), rtol=1e-4)
    g, b = rand(4), rand(4)
    single("layer_normalization", (2, 3, 4), lambda nb: nb.add_layer_normalization(
        "ln", "x", "y", normalized_shape=[4], gamma=g, beta=b, eps=1e-5),
        lambda x: F.layer_norm(t(x), [4], t(g), t(b), 1e-5).numpy(), exact=True, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- element-wise, unary, reduce


def elementwise_cases():
    a, b3, b1 = rand(3, 4, 5), rand(3, 4, 5), rand(1, 4, 5)
    for mode, ref in [("ADD", lambda x, y: x + y), ("MULTIPLY", lambda x, y: x * y), ("AVE", lambda x, y: (x + y) / 2),
                      ("MAX", np.maximum), ("MIN", np.minimum)]:
        single("elementwise_" + mode.lower(), None, lambda nb, m=mode: nb.add_elementwise("op", ["x", "z"], "y", m),
               ref, layer_inputs={"x": a, "z": b3})
    single("add_broadcast_channel", None, lambda nb: nb.add_elementwise("op", ["x", "z"], "y", "ADD"),
           lambda x, z: x + z, layer_inputs={"x": a, "z": b1})
    single("add_alpha", None, lambda nb: nb.add_elementwise("op", ["x"], "y", "ADD", alpha=2.5), lambda x: x + 2.5,
           layer_inputs={"x": a})
    single("multiply_alpha", None, lambda nb: nb.add_elementwise("op", ["x"], "y", "MULTIPLY", alpha=-0.5),
           lambda x: x * -0.5, layer_inputs={"x": a})
    v, w = rand(5, 1, 1), rand(5, 1, 1)
    single("dot", None, lambda nb: nb.add_elementwise("op", ["x", "z"], "y", "DOT"),
           lambda x, z: (x * z).sum(axis=0, keepdims=True), layer_inputs={"x": v, "z": w})
    single("cosine", None, lambda nb: nb.add_elementwise("op", ["x", "z"], "y", "COS"),
           lambda x, z: (x * z).sum(axis=0, keepdims=True) / np.sqrt((x * x).sum() * (z * z).sum()),
           layer_inputs={"x": v, "z": w}, rtol=1e-4)
    s, sb = rand(3), rand(3)
    single("scale", (3, 4, 5), lambda nb: nb.add_scale("scale", s, sb, True, "x", "y", shape_scale=[3], shape_bias=[3]),
           lambda x: x * s[:, None, None] + sb[:, None, None])
    bias = rand(1, 4, 5)
    single("bias", (3, 4, 5), lambda nb: nb.add_bias("bias", bias, "x", "y", shape_bias=[1, 4, 5]), lambda x: x + bias)
    x, y = rand(2, 3, 4), rand(1, 3, 1)
    for name, method, ref in [("add", "add_add_broadcastable", np.add), ("subtract", "add_subtract_broadcastable", np.subtract),
                              ("multiply", "add_multiply_broadcastable", np.multiply),
                              ("divide", "add_divide_broadcastable", np.divide),
                              ("max", "add_max_broadcastable", np.maximum), ("min", "add_min_broadcastable", np.minimum)]:
        single(name + "_broadcastable", None, lambda nb, m=method: getattr(nb, m)("op", ["x", "z"], "y"), ref,
               layer_inputs={"x": x, "z": y}, exact=True, rtol=1e-5)
    pos = rand(2, 3, 4, low=0.5, high=2)
    single("pow_broadcastable", None, lambda nb: nb.add_pow_broadcastable("op", ["x", "z"], "y"), np.power,
           layer_inputs={"x": pos, "z": y}, exact=True, rtol=1e-4)
    i, j = np.round(rand(2, 3, 4, low=-2, high=2)), np.round(rand(1, 3, 4, low=-2, high=2))
    for name, add, ref in [("greater_than", lambda nb: nb.add_greater_than("op", ["x", "z"], "y"), np.greater),
                           ("greater_equal", lambda nb: nb.add_greater_than("op", ["x", "z"], "y", True), np.greater_equal),
                           ("less_than", lambda nb: nb.add_less_than("op", ["x", "z"], "y"), np.less),
                           ("less_equal", lambda nb: nb.add_less_than("op", ["x", "z"], "y", True), np.less_equal),
                           ("equal", lambda nb: nb.add_equal("op", ["x", "z"], "y"), np.equal),
                           ("not_equal", lambda nb: nb.add_not_equal("op", ["x", "z"], "y"), np.not_equal)]:
        single(name, None, add, lambda a, b, r=ref: r(a, b).astype(np.float32), layer_inputs={"x": i, "z": j}, exact=True)
    single("greater_than_alpha", None, lambda nb: nb.add_greater_than("op", ["x"], "y", alpha=0.5),
           lambda a: (a > 0.5).astype(np.float32), layer_inputs={"x": i}, exact=True)
    bits_a, bits_b = (rand(2, 3) > 0).astype(np.float32), (rand(2, 3) > 0).astype(np.float32)
    for mode, ref in [("AND", np.logical_and), ("OR", np.logical_or), ("XOR", np.logical_xor)]:
        single("logical_" + mode.lower(), None, lambda nb, m=mode: nb.add_logical("op", ["x", "z"], "y", m),
               lambda a, b, r=ref: r(a, b).astype(np.float32), layer_inputs={"x": bits_a, "z": bits_b}, exact=True)
    single("logical_not", None, lambda nb: nb.add_logical("op", ["x"], "y", "NOT"),
           lambda a: np.logical_not(a).astype(np.float32), layer_inputs={"x": bits_a}, exact=True)


def unary_cases():
    x = rand(2, 3, 4, low=0.2, high=3)
    for mode, alpha, ref in [("sqrt", 1.0, np.sqrt), ("rsqrt", 1.0, lambda x: 1 / np.sqrt(x + 1e-4)),
                             ("inverse", 1.0, lambda x: 1 / (x + 1e-4)), ("power", 2.5, lambda x: x ** 2.5),
                             ("exp", 1.0, np.exp), ("log", 1.0, np.log), ("abs", 1.0, np.abs),
                             ("threshold", 1.0, lambda x: np.maximum(x, 1.0))]:
        single("unary_" + mode, None, lambda nb, m=mode, a=alpha: nb.add_unary("u", "x", "y", m, alpha=a), ref, x=x,
               rtol=1e-4)
    single("unary_scale_shift", None, lambda nb: nb.add_unary("u", "x", "y", "abs", shift=-1.0, scale=2.0),
           lambda x: np.abs(2 * x - 1), x=x)
    y = rand(2, 3, 4, low=-0.9, high=0.9)
    for name, ref in [("ceil", np.ceil), ("floor", np.floor), ("sign", np.sign), ("round", np.round), ("exp2", np.exp2),
                      ("sin", np.sin), ("cos", np.cos), ("tan", np.tan), ("asin", np.arcsin), ("acos", np.arccos),
                      ("atan", np.arctan), ("sinh", np.sinh), ("cosh", np.cosh), ("tanh", np.tanh),
                      ("asinh", np.arcsinh), ("atanh", np.arctanh), ("erf", lambda v: torch.erf(t(v)).numpy())]:
        single("math_" + name, None, lambda nb, n=name: getattr(nb, "add_" + n)("u", "x", "y"), ref, x=y * 3 if name in ("ceil", "floor", "round", "sign") else y,
               exact=True, rtol=1e-4, atol=1e-5)
    single("math_acosh", None, lambda nb: nb.add_acosh("u", "x", "y"), np.arccosh, x=x + 1, exact=True, rtol=1e-4)


def reduce_cases():
    x = rand(3, 4, 5, low=0.1, high=1)
    for mode, axis, ref in [("sum", "C", lambda x: x.sum(axis=0, keepdims=True)),
                            ("avg", "HW", lambda x: x.mean(axis=(1, 2), keepdims=True)),
                            ("max", "CHW", lambda x: x.max(keepdims=True).reshape(1, 1, 1)),
                            ("min", "H", lambda x: x.min(axis=1, keepdims=True)),
                            ("prod", "W", lambda x: x.prod(axis=2, keepdims=True)),
                            ("sumsquare", "C", lambda x: (x * x).sum(axis=0, keepdims=True)),
                            ("L1", "HW", lambda x: np.abs(x).sum(axis=(1, 2), keepdims=True)),
                            ("L2", "W", lambda x: np.sqrt((x * x).sum(axis=2, keepdims=True))),
                            ("logsum", "C", lambda x: np.log(x + 1e-6).sum(axis=0, keepdims=True)),
                            ("argmax", "W", lambda x: x.argmax(axis=2)[..., None].astype(np.float32))]:
        single(f"reduce_{mode.lower()}_{axis.lower()}", None, lambda nb, m=mode, a=axis: nb.add_reduce(
            "r", "x", "y", a, m), ref, x=x, rtol=1e-4)
    z = rand(2, 3, 4)
    for name, method, ref in [("sum", "add_reduce_sum", np.sum), ("mean", "add_reduce_mean", np.mean),
                              ("max", "add_reduce_max", np.max), ("prod", "add_reduce_prod", np.prod),
                              ("l2", "add_reduce_l2", lambda a, axis, keepdims: np.sqrt((a * a).sum(axis=axis, keepdims=keepdims))),
                              ("logsumexp", "add_reduce_logsumexp",
                               lambda a, axis, keepdims: np.log(np.exp(a).sum(axis=axis, keepdims=keepdims)))]:
        single(f"reduce_{name}_nd", None, lambda nb, m=method: getattr(nb, m)("r", "x", "y", axes=[1], keepdims=False),
               lambda a, r=ref: r(a, axis=1, keepdims=False), x=z, exact=True, rtol=1e-4)
    single("reduce_sum_nd_keepdims_all", None, lambda nb: nb.add_reduce_sum("r", "x", "y", reduce_all=True, keepdims=True),
           lambda a: a.sum(keepdims=True), x=z, exact=True, rtol=1e-4)
    single("argmax_nd", None, lambda nb: nb.add_argmax("r", "x", "y", axis=-1, keepdims=False),
           lambda a: a.argmax(axis=-1).astype(np.float32), x=z, exact=True)
    single("argmin_nd_keepdims", None, lambda nb: nb.add_argmin("r", "x", "y", axis=1, keepdims=True),
           lambda a: a.argmin(axis=1)[:, None].astype(np.float32), x=z, exact=True)
    single("cumsum", None, lambda nb: nb.add_cumsum("c", ["x"], "y", axis=1), lambda a: np.cumsum(a, axis=1), x=z,
           exact=True, rtol=1e-5)


# ---------------------------------------------------------------- shapes


def shape_cases():
    x = rand(4, 2, 3)
    single("reshape_channel_first", None, lambda nb: nb.add_reshape("r", "x", "y", (6, 2, 2), 0),
           lambda a: a.reshape(1, 1, 6, 2, 2), x=x)
    single("reshape_channel_last", None, lambda nb: nb.add_reshape("r", "x", "y", (6, 2, 2), 1),
           lambda a: a.transpose(1, 2, 0).reshape(2, 2, 6).transpose(2, 0, 1)[None, None], x=x)
    single("flatten", None, lambda nb: nb.add_flatten("f", 0, "x", "y"), lambda a: a.reshape(1, 1, 24, 1, 1), x=x)
    single("flatten_channel_last", None, lambda nb: nb.add_flatten("f", 1, "x", "y"),
           lambda a: a.transpose(1, 2, 0).reshape(1, 1, 24, 1, 1), x=x)
    single("permute", None, lambda nb: nb.add_permute("p", (0, 3, 1, 2), "x", "y"),
           lambda a: a[None, None].transpose(0, 1, 4, 2, 3), x=x)
    z = rand(2, 2, 3)
    single("concat_channels", None, lambda nb: nb.add_elementwise("c", ["x", "z"], "y", "CONCAT"),
           lambda a, b: np.concatenate([a, b], axis=0), layer_inputs={"x": x, "z": z})
    nb = builder([("x", (4, 2, 3))], [("y0", None), ("y1", None)])
    nb.add_split("s", "x", ["y0", "y1"])
    save("split", nb.spec, {"x": x}, {"y0": x[:2], "y1": x[2:]})
    single("slice_channels_stride2", None, lambda nb: nb.add_slice("s", "x", "y", "channel", 1, 4, 2),
           lambda a: a[1:4:2], x=x)
    single("slice_width_negative_end", None, lambda nb: nb.add_slice("s", "x", "y", "width", 0, -1, 1),
           lambda a: a[:, :, 0:-1], x=x)
    w = rand(2, 5, 6)
    single("crop", None, lambda nb: nb.add_crop("c", 1, 2, 0, 1, 0, "x", "y"), lambda a: a[:, 0:4, 1:4], x=w)
    single("reorganize_space_to_depth", None, lambda nb: nb.add_reorganize_data("r", "x", "y", "SPACE_TO_DEPTH", 2),
           lambda a: a.reshape(2, 2, 2, 3, 2).transpose(2, 4, 0, 1, 3).reshape(8, 2, 3), x=rand(2, 4, 6))
    single("reorganize_depth_to_space", None, lambda nb: nb.add_reorganize_data("r", "x", "y", "DEPTH_TO_SPACE", 2),
           lambda a: a.reshape(2, 2, 2, 2, 3).transpose(2, 3, 0, 4, 1).reshape(2, 4, 6), x=rand(8, 2, 3))
    single("pixel_shuffle", None, lambda nb: nb.add_reorganize_data("r", "x", "y", "PIXEL_SHUFFLE", 2),
           lambda a: F.pixel_shuffle(t(a)[None], 2)[0].numpy(), x=rand(8, 2, 3))
    single("sequence_repeat", None, lambda nb: nb.add_sequence_repeat("s", 3, "x", "y"),
           lambda a: np.tile(a[None, None], (3, 1, 1, 1, 1)), x=x)
    nd = rand(2, 3, 4)
    single("transpose", None, lambda nb: nb.add_transpose("t", (2, 0, 1), "x", "y"), lambda a: a.transpose(2, 0, 1), x=nd,
           exact=True)
    single("concat_nd", None, lambda nb: nb.add_concat_nd("c", ["x", "z"], "y", axis=-1), lambda a, b: np.concatenate([a, b], -1),
           layer_inputs={"x": nd, "z": rand(2, 3, 2)}, exact=True)
    nb = builder([("x", (2, 6, 4))], [("y0", None), ("y1", None)], exact=True)
    nb.add_split_nd("s", "x", ["y0", "y1"], axis=1, split_sizes=[2, 4])
    x6 = rand(2, 6, 4)
    save("split_nd", nb.spec, {"x": x6}, {"y0": x6[:, :2], "y1": x6[:, 2:]})
    single("reshape_static", None, lambda nb: nb.add_reshape_static("r", "x", "y", (4, -1)), lambda a: a.reshape(4, -1), x=nd,
           exact=True)
    single("rank_preserving_reshape", None, lambda nb: nb.add_rank_preserving_reshape("r", "x", "y", (0, -1, 2)),
           lambda a: a.reshape(2, 6, 2), x=nd, exact=True)
    single("flatten_to_2d", None, lambda nb: nb.add_flatten_to_2d("f", "x", "y", axis=1), lambda a: a.reshape(2, 12), x=nd,
           exact=True)
    single("squeeze", None, lambda nb: nb.add_squeeze("s", "x", "y", axes=[1]), lambda a: a[:, 0], x=rand(3, 1, 4), exact=True)
    single("expand_dims", None, lambda nb: nb.add_expand_dims("e", "x", "y", axes=[0, -1]), lambda a: a[None, ..., None], x=nd,
           exact=True)
    single("slice_static", None, lambda nb: nb.add_slice_static(
        "s", "x", "y", begin_ids=[0, 1, 3], end_ids=[2, 3, 0], strides=[1, 1, -2],
        begin_masks=[False, False, False], end_masks=[True, False, True]),
        lambda a: a[0:, 1:3, 3::-2], x=nd, exact=True)
    single("tile", None, lambda nb: nb.add_tile("t", "x", "y", reps=[1, 2, 3]), lambda a: np.tile(a, (1, 2, 3)), x=nd, exact=True)
    single("stack", None, lambda nb: nb.add_stack("s", ["x", "z"], "y", axis=1), lambda a, b: np.stack([a, b], 1),
           layer_inputs={"x": nd, "z": rand(2, 3, 4)}, exact=True)
    single("get_shape", None, lambda nb: nb.add_get_shape("s", "x", "y"), lambda a: np.array(a.shape, np.float32), x=nd,
           exact=True)
    single("broadcast_to_static", None, lambda nb: nb.add_broadcast_to_static("b", "x", "y", output_shape=[2, 3, 4]),
           lambda a: np.broadcast_to(a, (2, 3, 4)), x=rand(1, 3, 1), exact=True)
    single("constant_pad", None, lambda nb: nb.add_constant_pad("p", ["x"], "y", value=0.5, pad_amounts=[1, 0, 2, 1]),
           lambda a: np.pad(a, [(0, 0), (1, 0), (2, 1)], constant_values=0.5), x=nd, exact=True)
    single("reverse", None, lambda nb: nb.add_reverse("r", "x", "y", reverse_dim=[True, False, True]),
           lambda a: a[::-1, :, ::-1], x=nd, exact=True)
    single("copy", None, lambda nb: nb.add_copy("c", "x", "y"), lambda a: a, x=nd, exact=True)


# ---------------------------------------------------------------- linear algebra, indexing, generators


def linear_cases():
    w, b = rand(6, 5), rand(6)
    single("inner_product", (5,), lambda nb: nb.add_inner_product("ip", w, b, 5, 6, True, "x", "y"),
           lambda x: (w @ x + b).reshape(6), out_shape=(6,))
    single("inner_product_rank3", (5, 1, 1), lambda nb: nb.add_inner_product("ip", w, None, 5, 6, False, "x", "y"),
           lambda x: (w @ x.reshape(5)).reshape(1, 1, 6, 1, 1))
    single("inner_product_float16", (5,), lambda nb: (nb.add_inner_product("ip", w, b, 5, 6, True, "x", "y"),
                                                      as_float16(nb.spec.neuralNetwork.layers[0].innerProduct.weights, w)),
           lambda x: (w.astype(np.float16).astype(np.float32) @ x + b).reshape(6), out_shape=(6,))
    a, c = rand(2, 3, 4), rand(2, 4, 5)
    single("batched_matmul", None, lambda nb: nb.add_batched_mat_mul("m", ["x", "z"], "y"), np.matmul,
           layer_inputs={"x": a, "z": c}, exact=True, rtol=1e-5)
    single("batched_matmul_transpose", None, lambda nb: nb.add_batched_mat_mul("m", ["x", "z"], "y", transpose_a=True,
                                                                               transpose_b=True),
           lambda p, q: np.swapaxes(p, -1, -2) @ np.swapaxes(q, -1, -2), layer_inputs={"x": rand(2, 4, 3), "z": rand(5, 4)},
           exact=True, rtol=1e-5)
    mw, mb = rand(4, 6), rand(6)
    single("batched_matmul_weights", None, lambda nb: nb.add_batched_mat_mul(
        "m", ["x"], "y", weight_matrix_rows=4, weight_matrix_columns=6, W=mw, bias=mb), lambda p: p @ mw + mb,
        layer_inputs={"x": a}, exact=True, rtol=1e-5)
    table, eb = rand(6, 10), rand(6)
    ids = np.array([3, 0, 9, 4], np.float32).reshape(4, 1, 1, 1)
    nb = builder([("x", (1,))], [("y", None)])
    nb.add_embedding("e", table, eb, 10, 6, True, "x", "y")
    # A rank-5 [Seq, 1, 1, 1, 1] sequence of indices is how the legacy layer takes a sequence;
    # the fixture feeds one index through the declared [1] input.
    save("embedding", nb.spec, {"x": ids[1:2].reshape(1)}, {"y": (table[:, 0] + eb).reshape(1, 1, 6, 1, 1)})
    table_nd = rand(6, 10)
    single("embedding_nd", None, lambda nb: nb.add_embedding_nd("e", "x", "y", 10, 6, W=table_nd),
           lambda i: table_nd.T[i[..., 0].astype(int)], x=np.array([[3], [9], [0]], np.float32), exact=True)
    data = rand(5, 4)
    single("gather", None, lambda nb: nb.add_gather("g", ["x", "z"], "y", axis=0), lambda p, i: p[i.astype(int)],
           layer_inputs={"x": data, "z": np.array([4, 0, 2], np.float32)}, exact=True)
    single("gather_along_axis", None, lambda nb: nb.add_gather_along_axis("g", ["x", "z"], "y", axis=1),
           lambda p, i: np.take_along_axis(p, i.astype(int), 1),
           layer_inputs={"x": data, "z": np.array([[1], [0], [3], [2], [1]], np.float32)}, exact=True)
    cond = (rand(2, 3) > 0).astype(np.float32)
    single("where_broadcastable", None, lambda nb: nb.add_where_broadcastable("w", ["c", "x", "z"], "y"),
           lambda k, p, q: np.where(k != 0, p, q), layer_inputs={"c": cond, "x": rand(2, 3), "z": rand(1, 3)}, exact=True)
    nb = builder([("x", (2, 5))], [("values", None), ("indices", None)], exact=True)
    nb.add_topk("k", ["x"], ["values", "indices"], k=3, axis=1)
    tk = rand(2, 5)
    order = np.argsort(-tk, axis=1)[:, :3]
    save("topk", nb.spec, {"x": tk}, {"values": np.take_along_axis(tk, order, 1), "indices": order.astype(np.float32)})
    single("lower_triangular", None, lambda nb: nb.add_lower_triangular("l", "x", "y", k=0), np.tril, x=rand(4, 4), exact=True)
    single("matrix_band_part", None, lambda nb: nb.add_matrix_band_part("b", "x", "y", num_lower=1, num_upper=0),
           lambda m: np.triu(np.tril(m, 0), -1), x=rand(4, 4), exact=True)
    const = rand(2, 3)
    single("load_constant_nd", None, lambda nb: (nb.add_load_constant_nd("c", "k", const, (2, 3)),
                                                 nb.add_add_broadcastable("a", ["x", "k"], "y")),
           lambda p: p + const, x=rand(2, 3), exact=True)
    single("fill_like", None, lambda nb: nb.add_fill_like("f", "x", "y", value=2.5), lambda p: np.full_like(p, 2.5), x=rand(2, 3),
           exact=True)
    single("range_static_plus_input", None, lambda nb: (nb.add_range_static("r", "k", end=5, start=1, step=1.5),
                                                         nb.add_add_broadcastable("a", ["x", "k"], "y")),
           lambda p: p + np.arange(1, 5, 1.5, dtype=np.float32), x=rand(2, 3), exact=True)
    single("clamped_relu", None, lambda nb: nb.add_clamped_relu("c", "x", "y", alpha=0.1, beta=1.5),
           lambda p: np.minimum(np.where(p >= 0, p, 0.1 * p), 1.5), x=rand(2, 3, low=-3, high=3), exact=True)


def dynamic_cases():
    """Layers whose shapes or bounds come from another input, and the remaining rank-N layers."""
    x = rand(2, 3, 4)
    shape = np.array([4, 6], np.float32)
    single("reshape_dynamic", None, lambda nb: nb.add_reshape_dynamic("r", ["x", "s"], "y"), lambda a, s: a.reshape(4, 6),
           layer_inputs={"x": x, "s": shape}, exact=True)
    single("reshape_like", None, lambda nb: nb.add_reshape_like("r", ["x", "s"], "y"), lambda a, s: a.reshape(s.shape),
           layer_inputs={"x": x, "s": rand(6, 4)}, exact=True)
    single("broadcast_to_like", None, lambda nb: nb.add_broadcast_to_like("b", ["x", "s"], "y"),
           lambda a, s: np.broadcast_to(a, s.shape), layer_inputs={"x": rand(1, 3, 1), "s": x}, exact=True)
    single("broadcast_to_dynamic", None, lambda nb: nb.add_broadcast_to_dynamic("b", ["x", "s"], "y"),
           lambda a, s: np.broadcast_to(a, (2, 3, 4)), layer_inputs={"x": rand(1, 3, 1), "s": np.array([2, 3, 4], np.float32)},
           exact=True)
    single("fill_static_plus_input", None, lambda nb: (nb.add_fill_static("f", "k", (2, 3), value=1.5),
                                                        nb.add_add_broadcastable("a", ["x", "k"], "y")),
           lambda a: a + 1.5, x=rand(2, 3), exact=True)
    single("fill_dynamic", None, lambda nb: nb.add_fill_dynamic("f", "x", "y", value=-2.0),
           lambda s: np.full((2, 3, 4), -2.0, np.float32), x=np.array([2, 3, 4], np.float32), exact=True)
    single("range_dynamic", None, lambda nb: nb.add_range_dynamic("r", ["x"], "y", start=1, step=2),
           lambda e: np.arange(1, 9, 2, dtype=np.float32), x=np.array([9], np.float32), exact=True)
    single("slice_dynamic", None, lambda nb: nb.add_slice_dynamic(
        "s", ["x", "b"], "y", end_ids=[2, 3, 4], strides=[1, 2, 1], begin_masks=[False] * 3, end_masks=[False] * 3),
        lambda a, b: a[1:2, 0:3:2, 1:4], layer_inputs={"x": x, "b": np.array([1, 0, 1], np.float32)}, exact=True)
    single("slice_by_size", None, lambda nb: nb.add_slice_by_size("s", ["x", "b"], "y", axis=2, size=2),
           lambda a, b: a[:, :, 1:3], layer_inputs={"x": x, "b": np.array([1], np.float32)}, exact=True)
    p, q = rand(2, 3, 4, low=1, high=5), rand(1, 3, 4, low=0.5, high=2)
    single("mod_broadcastable", None, lambda nb: nb.add_mod_broadcastable("m", ["x", "z"], "y"), np.mod,
           layer_inputs={"x": p, "z": q}, exact=True, rtol=1e-4, atol=1e-5)
    single("floor_div_broadcastable", None, lambda nb: nb.add_floor_div_broadcastable("m", ["x", "z"], "y"), np.floor_divide,
           layer_inputs={"x": p, "z": q}, exact=True)
    pos = rand(2, 3, 4, low=0.1, high=1)
    for name, method, ref in [("l1", "add_reduce_l1", lambda a: np.abs(a).sum(axis=(0, 2))),
                              ("min", "add_reduce_min", lambda a: a.min(axis=(0, 2))),
                              ("logsum", "add_reduce_logsum", lambda a: np.log(a.sum(axis=(0, 2)))),
                              ("sumsquare", "add_reduce_sumsquare", lambda a: (a * a).sum(axis=(0, 2)))]:
        single(f"reduce_{name}_nd", None, lambda nb, m=method: getattr(nb, m)("r", "x", "y", axes=[0, -1], keepdims=False),
               ref, x=pos, exact=True, rtol=1e-4)
    single("upper_triangular", None, lambda nb: nb.add_upper_triangular("u", "x", "y", k=1), lambda m: np.triu(m, 1),
           x=rand(3, 4), exact=True)
    const = rand(3, 2, 2)
    single("load_constant_plus_input", None, lambda nb: (nb.add_load_constant("c", "k", const, (3, 2, 2)),
                                                          nb.add_elementwise("a", ["x", "k"], "y", "ADD")),
           lambda a: (a + const)[None, None], x=rand(3, 2, 2))


def recurrent_cases():
    """simpleRecurrent, gru and the LSTMs against NumPy step loops (the equations of NeuralNetwork.proto)."""
    sig = lambda v: 1 / (1 + np.exp(-v))
    hard = lambda v: np.clip(0.2 * v + 0.5, 0, 1)
    seq, batch, i, h = 4, 2, 3, 5
    x = rand(seq, batch, i, 1, 1)
    h0 = rand(1, batch, h, 1, 1)
    c0 = rand(1, batch, h, 1, 1)
    hb0, cb0 = rand(1, batch, h, 1, 1), rand(1, batch, h, 1, 1)

    def steps(reverse):
        return range(seq - 1, -1, -1) if reverse else range(seq)

    def rnn_case(name, reverse, output_all):
        wx, wh, b = rand(h, i), rand(h, h), rand(h)
        nb = builder([("x", x.shape), ("h0", h0.shape)], [("y", None), ("h_out", None)], exact=True)
        nb.add_simple_rnn("rnn", wh, wx, b, h, i, "TANH", ["x", "h0"], ["y", "h_out"], output_all=output_all,
                          reverse_input=reverse)
        state, ys = h0[0, :, :, 0, 0], []
        for k in steps(reverse):
            state = np.tanh(x[k, :, :, 0, 0] @ wx.T + state @ wh.T + b)
            ys.append(state)
        y = np.stack(ys) if output_all else state[None]
        save_states(name, nb, {"x": x, "h0": h0}, {"y": y[..., None, None], "h_out": state[None, ..., None, None]})

    def gru_case(name, reverse):
        wx, wh, b = [rand(h, i) for _ in range(3)], [rand(h, h) for _ in range(3)], [rand(h) for _ in range(3)]
        nb = builder([("x", x.shape), ("h0", h0.shape)], [("y", None), ("h_out", None)], exact=True)
        nb.add_gru("gru", wh, wx, b, h, i, ["x", "h0"], ["y", "h_out"], output_all=True, reverse_input=reverse)
        state, ys = h0[0, :, :, 0, 0], []
        for k in steps(reverse):
            xt = x[k, :, :, 0, 0]
            z = hard(xt @ wx[0].T + state @ wh[0].T + b[0])
            r = hard(xt @ wx[1].T + state @ wh[1].T + b[1])
            o = np.tanh(xt @ wx[2].T + (r * state) @ wh[2].T + b[2])
            state = (1 - z) * o + z * state
            ys.append(state)
        save_states(name, nb, {"x": x, "h0": h0}, {"y": np.stack(ys)[..., None, None], "h_out": state[None, ..., None, None]})

    def lstm_weights():
        return [rand(h, h) for _ in range(4)], [rand(h, i) for _ in range(4)], [rand(h) for _ in range(4)]

    def lstm_run(wh, wx, b, peep, reverse, forget_bias, clip, state, cell):
        ys = []
        for k in steps(reverse):
            xt = x[k, :, :, 0, 0]
            pre = [xt @ wx[g].T + state @ wh[g].T + b[g] for g in range(4)]  # i, f, o, z
            if forget_bias:
                pre[1] = pre[1] + 1
            if peep is not None:
                pre[0] = pre[0] + peep[0] * cell
                pre[1] = pre[1] + peep[1] * cell
            ig, fg, z = sig(pre[0]), sig(pre[1]), np.tanh(pre[3])
            cell = np.clip(fg * cell + ig * z, -clip, clip)
            if peep is not None:
                pre[2] = pre[2] + peep[2] * cell
            state = sig(pre[2]) * np.tanh(cell)
            ys.append(state)
        return np.stack(ys), state, cell

    def lstm_case(name, reverse=False, peephole=False, forget_bias=False, clip=50000.0, output_all=True):
        wh, wx, b = lstm_weights()
        peep = [rand(h) for _ in range(3)] if peephole else None
        nb = builder([("x", x.shape), ("h0", h0.shape), ("c0", c0.shape)], [("y", None), ("h_out", None), ("c_out", None)], exact=True)
        nb.add_unilstm("lstm", wh, wx, b, h, i, ["x", "h0", "c0"], ["y", "h_out", "c_out"], peep=peep,
                       output_all=output_all, forget_bias=forget_bias, cell_clip_threshold=clip, reverse_input=reverse)
        ys, state, cell = lstm_run(wh, wx, b, peep, reverse, forget_bias, clip, h0[0, :, :, 0, 0], c0[0, :, :, 0, 0])
        y = ys if output_all else state[None]
        save_states(name, nb, {"x": x, "h0": h0, "c0": c0},
                    {"y": y[..., None, None], "h_out": state[None, ..., None, None], "c_out": cell[None, ..., None, None]})

    def bilstm_case(name):
        (wh, wx, b), (whb, wxb, bb) = lstm_weights(), lstm_weights()
        nb = builder([("x", x.shape), ("h0", h0.shape), ("c0", c0.shape), ("hb0", h0.shape), ("cb0", c0.shape)],
                     [("y", None), ("h_out", None), ("c_out", None), ("hb_out", None), ("cb_out", None)], exact=True)
        nb.add_bidirlstm("bilstm", wh, wx, b, whb, wxb, bb, h, i, ["x", "h0", "c0", "hb0", "cb0"],
                         ["y", "h_out", "c_out", "hb_out", "cb_out"], output_all=True)
        yf, hf, cf = lstm_run(wh, wx, b, None, False, False, 50000.0, h0[0, :, :, 0, 0], c0[0, :, :, 0, 0])
        yb, hb, cb = lstm_run(whb, wxb, bb, None, True, False, 50000.0, hb0[0, :, :, 0, 0], cb0[0, :, :, 0, 0])
        y = np.concatenate([yf, yb[::-1]], axis=-1)  # the backward half in input order
        ex = lambda v: v[None, ..., None, None]
        save_states(name, nb, {"x": x, "h0": h0, "c0": c0, "hb0": hb0, "cb0": cb0},
                    {"y": y[..., None, None], "h_out": ex(hf), "c_out": ex(cf), "hb_out": ex(hb), "cb_out": ex(cb)})

    def save_states(name, nb, inputs, outputs):
        save(name, nb.spec, inputs, outputs, rtol=1e-4, atol=1e-5)

    rnn_case("simple_recurrent_sequence", reverse=False, output_all=True)
    rnn_case("simple_recurrent_reverse_last", reverse=True, output_all=False)
    gru_case("gru_sequence", reverse=False)
    gru_case("gru_reverse", reverse=True)
    lstm_case("lstm_sequence")
    lstm_case("lstm_peephole_forget_bias_clip", peephole=True, forget_bias=True, clip=0.5, output_all=False)
    lstm_case("lstm_reverse", reverse=True)
    bilstm_case("bidirectional_lstm")


# ---------------------------------------------------------------- models: classifier, preprocessing, errors


def model_cases():
    w, b = rand(3, 4), rand(3)
    nb = NeuralNetworkBuilder([("x", datatypes.Array(4))], [("probs", None)], mode="classifier")
    nb.add_inner_product("ip", w, b, 4, 3, True, "x", "logits")
    nb.add_softmax("softmax", "logits", "probs")
    nb.set_class_labels(["cat", "dog", "bird"], predicted_feature_name="label", prediction_blob="probs")
    x = rand(4)
    z = w @ x + b
    p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    save("classifier_string_labels", nb.spec, {"x": x}, {"probs": p}, labels=["cat", "dog", "bird"])

    nb = NeuralNetworkBuilder([("x", datatypes.Array(4))], [("probs", None)], mode="classifier")
    nb.add_inner_product("ip", w, b, 4, 3, True, "x", "logits")
    nb.add_softmax("softmax", "logits", "probs")
    nb.set_class_labels([7, 11, 13], predicted_feature_name="label", prediction_blob="probs")
    save("classifier_int_labels", nb.spec, {"x": x}, {"probs": p}, labels=["7", "11", "13"])

    nb = NeuralNetworkBuilder([("x", datatypes.Array(4))], [("y", datatypes.Array(3))], mode="regressor")
    nb.add_inner_product("ip", w, b, 4, 3, True, "x", "y")
    save("regressor", nb.spec, {"x": x}, {"y": w @ x + b})

    mean = rand(2 * 3 * 4)
    nb = builder([("x", (2, 3, 4))], [("y", None)])
    nb.add_activation("id", "LINEAR", "x", "y", params=[1.0, 0.0])
    pre = nb.spec.neuralNetwork.preprocessing.add()
    pre.featureName = "x"
    pre.meanImage.meanImage.extend(mean.tolist())
    x = rand(2, 3, 4)
    save("preprocessing_mean_image", nb.spec, {"x": x}, {"y": x - mean.reshape(2, 3, 4)})
    nb = builder([("x", (1, 3, 4))], [("y", None)])
    nb.add_activation("id", "LINEAR", "x", "y", params=[1.0, 0.0])
    pre = nb.spec.neuralNetwork.preprocessing.add()
    pre.featureName = "x"
    pre.scaler.channelScale = 2.0
    pre.scaler.grayBias = -1.0
    x = rand(1, 3, 4)
    save("preprocessing_gray_scaler", nb.spec, {"x": x}, {"y": 2 * x - 1})

    # Bad input: each must fail the load with an error naming the layer (or the input).
    def error_case(name, spec, message, inputs=None):
        save(name, spec, inputs or {"x": rand(3, 4, 5)}, {}, error=message)

    nb = builder([("x", (3, 4, 5))], [("y", None)])
    nb.add_custom("my_custom", ["x"], ["y"]).custom.className = "MyLayer"
    error_case("invalid_custom_layer", nb.spec, "custom layer")
    nb = builder([("x", (3, 4, 5))], [("y", None)], exact=True)
    nb.spec.neuralNetwork.layers.add(name="untyped", input=["x"], output=["y"])
    error_case("invalid_unsupported_layer", nb.spec, "layer 'untyped' (type 'layer field 0') sets no layer type")
    nb = builder([("x", (3, 4, 5))], [("y", None)])
    nb.add_inner_product("ip", rand(2, 60), None, 60, 2, False, "x", "y")
    del nb.spec.neuralNetwork.layers[0].innerProduct.weights.floatValue[-1]
    error_case("invalid_blob_size", nb.spec, "119 values")
    nb = builder([("x", (3, 4, 5))], [("y", None)])
    nb.add_inner_product("ip", rand(2, 60), None, 60, 2, False, "x", "y")
    as_lut(2)(nb.spec.neuralNetwork.layers[0].innerProduct.weights, rand(2, 60))
    del nb.spec.neuralNetwork.layers[0].innerProduct.weights.quantization.lookupTableQuantization.floatValue[-1]
    error_case("invalid_quantization_table", nb.spec, "lookup table has 3 entries")
    nb = builder([("x", (3, 4))], [("y", None)])
    nb.add_activation("relu", "RELU", "x", "y")
    error_case("invalid_input_rank", nb.spec, "rank-5 array shape mapping", inputs={"x": rand(3, 4)})
    nb = builder([("x", (3, 4, 5))], [("y", None)])
    nb.add_activation("relu", "RELU", "missing_blob", "y")
    error_case("invalid_undefined_blob", nb.spec, "missing_blob")
    nb = builder([("x", (3, 4, 5))], [("y", None)], exact=True)
    nb.add_loop_break("stray_break")
    nb.add_copy("c", "x", "y")
    error_case("invalid_control_flow_layer", nb.spec, "layer 'stray_break' (type 'loopBreak') is not inside a loop")


# ---------------------------------------------------------------- torch models


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(8, 16, 3, stride=2, padding=1, groups=2), torch.nn.ReLU6(),
            torch.nn.ConvTranspose2d(16, 8, 2, stride=2), torch.nn.Sigmoid(), torch.nn.AdaptiveAvgPool2d(1))
        self.head = torch.nn.Linear(8, 5)

    def forward(self, x):
        return torch.softmax(self.head(torch.flatten(self.features(x), 1)), dim=1)


def mobilenet_v2(width=1.0, classes=1000):
    """torchvision's MobileNetV2 architecture, written out (torchvision's compiled ops do not
    load with the CPU torch wheel here), with channels scaled by `width` as torchvision's
    `width_mult` does."""
    from torch import nn

    def divisible(v):
        new = max(8, int(v + 4) // 8 * 8)
        return new + 8 if new < 0.9 * v else new

    def conv_bn(inp, out, kernel, stride, groups=1, relu=True):
        layers = [nn.Conv2d(inp, out, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(out)]
        return layers + ([nn.ReLU6()] if relu else [])

    class InvertedResidual(nn.Module):
        def __init__(self, inp, out, stride, expand):
            super().__init__()
            hidden = int(round(inp * expand))
            self.use_residual = stride == 1 and inp == out
            layers = conv_bn(inp, hidden, 1, 1) if expand != 1 else []
            layers += conv_bn(hidden, hidden, 3, stride, groups=hidden) + conv_bn(hidden, out, 1, 1, relu=False)
            self.conv = nn.Sequential(*layers)

        def forward(self, x):
            return x + self.conv(x) if self.use_residual else self.conv(x)

    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    inp = divisible(32 * width)
    last = divisible(1280 * max(1.0, width))
    layers = conv_bn(3, inp, 3, 2)
    for t_, c, n, s in settings:
        for i in range(n):
            out = divisible(c * width)
            layers.append(InvertedResidual(inp, out, s if i == 0 else 1, t_))
            inp = out
    layers += conv_bn(inp, last, 1, 1)

    class MobileNetV2(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(*layers)
            self.classifier = nn.Linear(last, classes)

        def forward(self, x):
            return self.classifier(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))

    return MobileNetV2()


def converted(name, module, shape, rtol, atol, folder=None, mlprogram=None):
    module.eval()
    torch.manual_seed(0)
    for m in module.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
    x = rand(*shape)
    with torch.no_grad():
        y = module(t(x)).numpy()
        traced = torch.jit.trace(module, t(x))
    model = ct.convert(traced, convert_to="neuralnetwork", inputs=[ct.TensorType(name="x", shape=shape)])
    spec = model.get_spec()
    output = spec.description.output[0].name
    if folder:
        os.makedirs(folder, exist_ok=True)
        save_spec(spec, os.path.join(folder, name + ".mlmodel"))
        np.save(os.path.join(folder, name + "_x.npy"), x)
        np.save(os.path.join(folder, name + "_expected.npy"), y)
        if mlprogram:
            program = ct.convert(traced, convert_to="mlprogram", inputs=[ct.TensorType(name="x", shape=shape)],
                                 compute_precision=ct.precision.FLOAT32, minimum_deployment_target=ct.target.iOS15)
            program.save(os.path.join(folder, name + ".mlpackage"))
        print(f"{name}: {os.path.getsize(os.path.join(folder, name + '.mlmodel')) / 1e6:.1f} MB in {folder}")
        return
    save(name, spec, {"x": x}, {output: y}, rtol=rtol, atol=atol)
    print(f"{name}: {os.path.getsize(os.path.join(ROOT, name, 'model.mlmodel')) / 1e6:.1f} MB")


def torch_cases(full_dir):
    torch.manual_seed(0)
    converted("torch_small_cnn", SmallCNN(), (1, 3, 16, 16), rtol=1e-4, atol=1e-5)
    torch.manual_seed(0)
    converted("torch_mobilenet_v2_w035", mobilenet_v2(0.35, 100),
              (1, 3, 96, 96), rtol=1e-3, atol=1e-4)
    if full_dir:
        torch.manual_seed(0)
        converted("mobilenet_v2", mobilenet_v2(), (1, 3, 224, 224), 1e-3, 1e-4, folder=full_dir,
                  mlprogram=True)


def late_cases():
    """Cases added after the others (layers lowered later, bugs the harvested coremltools tests
    found); last, so the random draws of the cases above stay as they are."""
    # `where` over three operands of three ranks whose single-element condition is the same
    # for every element (the select picks one operand whole), the output declared DOUBLE.
    for name, picked in (("where_broadcastable_three_ranks_true", 1.0), ("where_broadcastable_three_ranks_false", 0.0)):
        single(name, None, lambda nb: nb.add_where_broadcastable("w", ["c", "x", "z"], "y"),
               lambda k, p, q: np.where(k != 0, p, q),
               layer_inputs={"c": np.full((1, 1, 1), picked, np.float32), "x": rand(1), "z": rand(5, 1)}, exact=True)
    # 3-D deconvolution (convolution3d with isDeconvolution) against torch's ConvTranspose3d:
    # custom padding crops the full result; an outputShape larger than it (torch's
    # output_padding) leaves the extra positions at the bias.
    for name, groups, stride, dilation, padding, output_padding in [
            ("deconv3d_custom_groups2", 2, (2, 1, 2), (1, 2, 1), (1, 0, 1), (0, 0, 0)),
            ("deconv3d_output_shape", 1, (2, 2, 1), (1, 1, 1), (0, 1, 0), (1, 1, 0))]:
        c_in, c_out, kernel = 4, 6, (3, 2, 3)
        x = rand(1, c_in, 3, 4, 5)
        module = torch.nn.ConvTranspose3d(c_in, c_out, kernel, stride=stride, padding=padding, dilation=dilation,
                                          groups=groups, output_padding=output_padding)
        with torch.no_grad():
            module.weight.copy_(t(rand(c_in, c_out // groups, *kernel)))
            module.bias.copy_(t(rand(c_out)))
            y = module(t(x)).numpy()
        nb = builder([("x", x.shape)], [("y", None)], exact=True)
        # The builder takes [C_out / groups, C_in, kD, kH, kW] (and stores it transposed).
        nb.add_convolution3d("d", c_in, c_out, *kernel, module.weight.detach().numpy().transpose(1, 0, 2, 3, 4),
                             module.bias.detach().numpy(), True, groups=groups, stride_depth=stride[0],
                             stride_height=stride[1], stride_width=stride[2], dilation_depth=dilation[0],
                             dilation_height=dilation[1], dilation_width=dilation[2], is_deconv=True,
                             output_shape=list(y.shape[2:]) if any(output_padding) else None,
                             padding_mode="custom", padding_front=padding[0], padding_back=padding[0],
                             padding_top=padding[1], padding_bottom=padding[1], padding_left=padding[2],
                             padding_right=padding[2], input_name="x", output_name="y")
        save(name, nb.spec, {"x": x}, {"y": y}, rtol=1e-4, atol=1e-5)
    # concatND with interleave: out[i * 3 + k] = input_k[i] along axis 1.
    a, b, c = rand(2, 3, 4), rand(2, 3, 4), rand(2, 3, 4)
    nb = builder([("a", a.shape), ("b", b.shape), ("c", c.shape)], [("y", None)], exact=True)
    nb.add_concat_nd("cat", ["a", "b", "c"], "y", axis=1, interleave=True)
    save("concat_nd_interleave", nb.spec, {"a": a, "b": b, "c": c},
         {"y": np.stack([a, b, c], axis=2).reshape(2, 9, 4)})
    # oneHot with axis unset (0, the proto default): the one-hot axis comes first.
    labels = np.array([[1, 0, 3], [2, 5, 1]], np.float32)
    nb = builder([("x", labels.shape)], [("y", None)], exact=True)
    nb.add_one_hot("o", ["x"], "y", one_hot_vector_size=4, axis=0, on_value=1.0, off_value=0.0)
    save("one_hot_axis_default", nb.spec, {"x": labels},
         {"y": (np.arange(4).reshape(4, 1, 1) == labels[None]).astype(np.float32)})
    control_flow_cases()


def control_flow_cases():
    """`branch`, `loop`, `loopBreak`, `loopContinue` and `copy` writing blobs of the enclosing
    network, with NumPy references."""
    def nested(spec):
        return NeuralNetworkBuilder(nn_spec=spec, disable_rank5_shape_mapping=True)

    # branch: y = x * 2 if c else x - 1 (each branch copies into y); z = x + 1 before, and the
    # if branch overwrites it.
    x = rand(2, 3)
    for name, picked in (("branch_if", 1.0), ("branch_else", 0.0)):
        nb = builder([("c", (1,)), ("x", (2, 3))], [("y", None), ("z", None)], exact=True)
        nb.add_activation("z0", "LINEAR", "x", "z", params=[1.0, 1.0])
        branch = nb.add_branch("choose", "c")
        then = nested(branch.branch.ifBranch)
        then.add_elementwise("double", ["x"], "x2", mode="MULTIPLY", alpha=2.0)
        then.add_copy("y_if", "x2", "y")
        then.add_activation("z_if", "LINEAR", "x", "z_new", params=[0.0, 7.0])
        then.add_copy("z_copy", "z_new", "z")
        otherwise = nested(branch.branch.elseBranch)
        otherwise.add_elementwise("minus", ["x"], "x1", mode="ADD", alpha=-1.0)
        otherwise.add_copy("y_else", "x1", "y")
        c = np.array([picked], np.float32)
        y, z = (x * 2, np.full_like(x, 7.0)) if picked else (x - 1, x + 1)
        save(name, nb.spec, {"c": c, "x": x}, {"y": y, "z": z})

    # A for loop: s = x, then s = s * 0.5 + x, 4 times (maxLoopIterations, no condition).
    nb = builder([("x", (3,))], [("s", None)], exact=True)
    nb.add_copy("init", "x", "s")
    loop = nb.add_loop("repeat", max_iterations=4)
    body = nested(loop.loop.bodyNetwork)
    body.add_elementwise("half", ["s"], "h", mode="MULTIPLY", alpha=0.5)
    body.add_elementwise("plus", ["h", "x"], "next", mode="ADD")
    body.add_copy("update", "next", "s")
    xs = rand(3)
    s = xs.copy()
    for _ in range(4):
        s = s * 0.5 + xs
    save("loop_for", nb.spec, {"x": xs}, {"s": s})

    # A while loop with an iteration limit as input: i counts up while i < bound (condition
    # network) and the limit allows; the body skips adding odd i to acc (loopContinue) and
    # stops once acc exceeds 10 (loopBreak).
    def while_case(name, bound, limit):
        nb = builder([("bound", (1,)), ("limit", (1,))], [("i", None), ("acc", None)], exact=True)
        nb.add_load_constant_nd("i0", "i", np.zeros(1), shape=(1,))
        nb.add_load_constant_nd("acc0", "acc", np.zeros(1), shape=(1,))
        loop = nb.add_loop("count", input_name="limit")
        loop.loop.conditionVar = "go"
        condition = nested(loop.loop.conditionNetwork)
        condition.add_less_than("cmp", ["i", "bound"], "go")
        body = nested(loop.loop.bodyNetwork)
        body.add_activation("inc", "LINEAR", "i", "i1", params=[1.0, 1.0])
        body.add_copy("i_update", "i1", "i")
        body.add_load_constant_nd("two_c", "two", np.array([2.0]), shape=(1,))
        body.add_mod_broadcastable("parity", ["i", "two"], "odd")
        skip = body.add_branch("skip_odd", "odd")
        nested(skip.branch.ifBranch).add_loop_continue("next")
        body.add_add_broadcastable("add", ["acc", "i"], "acc1")
        body.add_copy("acc_update", "acc1", "acc")
        body.add_greater_than("big", ["acc"], "done", alpha=10.0)
        stop = body.add_branch("stop", "done")
        nested(stop.branch.ifBranch).add_loop_break("leave")
        i, acc, n = 0.0, 0.0, 0
        while i < bound and n < limit:
            n += 1
            i += 1
            if i % 2:
                continue
            acc += i
            if acc > 10:
                break
        save(name, nb.spec, {"bound": np.array([bound], np.float32), "limit": np.array([limit], np.float32)},
             {"i": np.array([i], np.float32), "acc": np.array([acc], np.float32)})

    # loopBreak straight in the body, between two copies into s: the loop runs once and s keeps
    # the value of the first copy (s + 1), not the second's.
    nb = builder([("x", (3,))], [("s", None)], exact=True)
    nb.add_copy("init", "x", "s")
    loop = nb.add_loop("once", max_iterations=10)
    body = nested(loop.loop.bodyNetwork)
    body.add_activation("inc", "LINEAR", "s", "t", params=[1.0, 1.0])
    body.add_copy("first", "t", "s")
    body.add_elementwise("twice", ["s"], "u", mode="MULTIPLY", alpha=2.0)
    body.add_loop_break("leave")
    body.add_copy("second", "u", "s")
    xs = rand(3)
    save("loop_break_in_body", nb.spec, {"x": xs}, {"s": xs + 1})

    while_case("loop_while_break", 20.0, 100.0)
    while_case("loop_while_limit", 20.0, 5.0)
    while_case("loop_while_condition", 3.0, 100.0)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full-mobilenet", metavar="DIR", help="also write the full MobileNetV2 (outside git) to DIR")
    parser.add_argument("--only-torch", action="store_true", help="only the converted torch models")
    args = parser.parse_args()
    if not args.only_torch:
        shutil.rmtree(ROOT, ignore_errors=True)
        os.makedirs(ROOT)
        for make in (convolution_cases, pooling_cases, activation_cases, normalization_cases, elementwise_cases,
                     unary_cases, reduce_cases, shape_cases, linear_cases, dynamic_cases, recurrent_cases, model_cases):
            make()
        spec5_cases(save, single, builder, rand, t, rng)
        flexible_cases(save, builder, rand)
    torch_cases(args.full_mobilenet)
    if not args.only_torch:
        late_cases()
        with open(os.path.join(ROOT, "cases.json"), "w") as f:
            json.dump(CASES, f, indent=1)
        print(f"{len(CASES)} cases in {ROOT}")


if __name__ == "__main__":
    sys.exit(main())
