#!/usr/bin/env python3
"""Writes NeuralNetwork models whose size fields are absurd (Docs/Reliability.md, bad-input table).

    /work/main/Benchmarks/peers/.venv/bin/python tools/make_huge_size_fixtures.py

coremltools' NeuralNetworkBuilder makes each model valid, then one field of its spec is set to a
size no model has (coremltools writes what it is given); Tessera must refuse every one with a
typed error, at the load or at the prediction, never trap. Output, in
Tests/Fixtures/reliability/huge-sizes/:

* `conv_channels_2e63.mlmodel`: a 1×1 convolution whose `outputChannels` is 2⁶³ + 5 (a uint64
  beyond Int);
* `conv_weight_overflow.mlmodel`: `outputChannels` and `kernelChannels` 2⁴⁰ and a kernel of
  2²⁰ × 2²⁰, whose weight element count overflows Int;
* `reshape_target_overflow.mlmodel`: a legacy `reshape` to `[2⁴⁰, 2⁴⁰, 2⁴⁰]`;
* `output_shape_overflow.mlmodel`: a valid network whose declared output shape is
  `[2⁴⁰, 2⁴⁰, 2⁴⁰]`;
* `slice_by_size_2e63.mlmodel`: a `sliceBySize` of `size` 2⁶³ − 1 from the `begin` input (1 in the
  test), whose end overflowed.
"""

import os

import numpy as np
from coremltools.models import datatypes
from coremltools.models.neural_network import NeuralNetworkBuilder

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "reliability", "huge-sizes")
HUGE = 2**40


def convolution():
    builder = NeuralNetworkBuilder([("x", datatypes.Array(1, 4, 4))], [("y", None)])
    builder.add_convolution(
        "c", kernel_channels=1, output_channels=1, height=1, width=1, stride_height=1, stride_width=1,
        border_mode="valid", groups=1, W=np.ones((1, 1, 1, 1), np.float32), b=None, has_bias=False,
        input_name="x", output_name="y")
    return builder.spec


def reshape():
    builder = NeuralNetworkBuilder([("x", datatypes.Array(1, 4, 4))], [("y", None)])
    builder.add_reshape("r", input_name="x", output_name="y", target_shape=(1, 2, 8), mode=0)
    return builder.spec


def slice_by_size():
    builder = NeuralNetworkBuilder(
        [("x", datatypes.Array(1, 4, 4)), ("begin", datatypes.Array(1))], [("y", None)],
        disable_rank5_shape_mapping=True)
    builder.add_slice_by_size("s", input_names=["x", "begin"], output_name="y", axis=2, size=2)
    return builder.spec


def save(spec, name):
    with open(os.path.join(OUT, name), "wb") as file:
        file.write(spec.SerializeToString())


def main():
    os.makedirs(OUT, exist_ok=True)
    spec = convolution()
    spec.neuralNetwork.layers[0].convolution.outputChannels = 2**63 + 5
    save(spec, "conv_channels_2e63.mlmodel")

    spec = convolution()
    conv = spec.neuralNetwork.layers[0].convolution
    conv.outputChannels, conv.kernelChannels = HUGE, HUGE
    conv.kernelSize[:] = [2**20, 2**20]
    save(spec, "conv_weight_overflow.mlmodel")

    spec = reshape()
    spec.neuralNetwork.layers[0].reshape.targetShape[:] = [HUGE, HUGE, HUGE]
    save(spec, "reshape_target_overflow.mlmodel")

    spec = reshape()
    spec.description.output[0].type.multiArrayType.shape[:] = [HUGE, HUGE, HUGE]
    save(spec, "output_shape_overflow.mlmodel")

    spec = slice_by_size()
    spec.neuralNetwork.layers[0].sliceBySize.size = 2**63 - 1
    save(spec, "slice_by_size_2e63.mlmodel")


if __name__ == "__main__":
    main()
