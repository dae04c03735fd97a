#!/usr/bin/env python3
"""Writes the expected outputs the MLModel API tests compare predictions against.

Reads the weights of the fixture packages in Tests/Fixtures/models/ straight from their
`weight.bin` (MILBlob v2: each blob's data offset is in its 64-byte metadata record), runs the
same computation in NumPy on seeded inputs, and writes `Tests/Fixtures/models/api_expected.json` (plus two `.npy` files NumPy
writes, `api_x.npy` and `api_int64.npy`, for the `.npy` reader).
It also builds `int_classifier.mlpackage`, a classifier with Int64 labels (10, 20, 30), with
coremltools' MIL builder. Needs NumPy and coremltools (the demo model's venv has both):

    tools/.venv-demo/bin/python tools/make_api_fixtures.py
"""

import json
import os
import struct

import numpy as np

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "models")
rng = np.random.default_rng(7)


def blob(name, metadata_offset, shape):
    path = os.path.join(MODELS, name + ".mlpackage", "Data", "com.apple.CoreML", "weights", "weight.bin")
    data = open(path, "rb").read()
    sentinel, dtype, size, offset = struct.unpack_from("<IIQQ", data, metadata_offset)
    assert sentinel == 0xDEADBEEF and dtype == 2, "expected a float32 blob"
    return np.frombuffer(data, dtype="<f4", count=size // 4, offset=offset).reshape(shape)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def case(inputs, outputs):
    return {
        "inputs": {k: {"shape": list(v.shape), "values": [float(x) for x in v.ravel()]} for k, v in inputs.items()},
        "outputs": {k: {"shape": list(np.shape(v)), "values": [float(x) for x in np.ravel(v)]} for k, v in outputs.items()},
    }


def int_classifier():
    """A classifier with Int64 labels, so the API's int64 classLabel path is checked."""
    import shutil

    import coremltools as ct
    from coremltools.converters.mil import Builder as mb

    w = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 4))])
    def prog(features):
        return mb.softmax(x=mb.linear(x=features, weight=w, bias=b), axis=-1)

    model = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS15,
                       compute_precision=ct.precision.FLOAT32,
                       classifier_config=ct.ClassifierConfig([10, 20, 30], predicted_feature_name="label"))
    package = os.path.join(MODELS, "int_classifier.mlpackage")
    shutil.rmtree(package, ignore_errors=True)
    model.save(package)
    x = rng.standard_normal((1, 4)).astype(np.float32)
    probabilities = softmax(x @ w.T + b)
    spec = model.get_spec()
    probs_name = spec.description.predictedProbabilitiesName
    result = case({"features": x}, {probs_name: probabilities})
    result["classLabel"] = str([10, 20, 30][int(probabilities.argmax())])
    return result


def main():
    expected = {}

    w = blob("linear_relu_softmax", 64, (16, 8))
    b = blob("linear_relu_softmax", 640, (16,))
    x = rng.standard_normal((1, 8)).astype(np.float32)
    expected["linear_relu_softmax"] = case({"x": x}, {"softmax_0": softmax(np.maximum(x @ w.T + b, 0))})

    w = blob("classifier", 64, (3, 4))
    x = rng.standard_normal((1, 4)).astype(np.float32)
    probabilities = softmax(x @ w.T)
    expected["classifier"] = case({"features": x}, {"classLabel_probs": probabilities})
    expected["classifier"]["classLabel"] = ["cat", "dog", "bird"][int(probabilities.argmax())]

    w = blob("flexible_shapes", 64, (4, 8))
    tokens = rng.standard_normal((1, 3, 8)).astype(np.float32)
    mask = rng.standard_normal((1, 2, 8)).astype(np.float32)
    expected["flexible_shapes"] = case({"tokens": tokens, "mask": mask},
                                       {"linear_0": tokens @ w.T, "relu_0": np.maximum(mask, 0)})

    expected["int_classifier"] = int_classifier()

    # .npy files as NumPy writes them, for the CLI's reader: a float32 digit input and int64 values.
    np.save(os.path.join(MODELS, "api_x.npy"), expected_x := np.asarray(
        expected["linear_relu_softmax"]["inputs"]["x"]["values"], dtype=np.float32).reshape(1, 8))
    np.save(os.path.join(MODELS, "api_int64.npy"), np.arange(6, dtype=np.int64).reshape(2, 3) - 2)
    assert expected_x.shape == (1, 8)

    with open(os.path.join(MODELS, "api_expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
