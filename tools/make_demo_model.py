#!/usr/bin/env python3
"""Trains the digit classifier `tessera demo` runs and writes it as a Core ML package.

Regenerate (from the repository root; everything comes from PyPI, nothing is downloaded at
run time: the digits data set ships inside scikit-learn):

    python3 -m venv tools/.venv-demo
    tools/.venv-demo/bin/pip install scikit-learn numpy coremltools
    tools/.venv-demo/bin/python tools/make_demo_model.py

Output, in Sources/tessera/Resources/:

* `DigitsClassifier.mlpackage`: an ML Program built with coremltools' MIL builder from the
  trained weights: `linear -> relu -> linear -> softmax -> classify` with labels "0"-"9".
  Input `image`: float32 [1, 64], the 8x8 digit's pixels scaled from 0-16 to 0-1 (the demo does
  that scaling with MLTensor). Outputs: `classLabel` (string) and `classLabel_probs`
  (label -> probability).
* `digits-samples.json`: 20 held-out digits (raw 0-16 pixels), their true labels, and the
  probabilities NumPy computes from the same weights (the tests' reference values).

A fixed seed makes the weights, the split and the samples reproducible.
"""

import json
import os
import shutil

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

import coremltools as ct
from coremltools.converters.mil import Builder as mb

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources", "tessera", "Resources")
SEED = 20261201
HIDDEN = 32
SAMPLES = 20


def train():
    digits = load_digits()
    x = digits.data.astype(np.float32)
    y = digits.target
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.25, random_state=SEED, stratify=y)
    mlp = MLPClassifier(hidden_layer_sizes=(HIDDEN,), activation="relu", max_iter=600, random_state=SEED)
    mlp.fit(x_train / 16.0, y_train)
    accuracy = mlp.score(x_test / 16.0, y_test)
    print(f"held-out accuracy (sklearn, {len(y_test)} digits): {accuracy:.4f}")
    return mlp, x_test, y_test


def build(mlp):
    w1 = mlp.coefs_[0].T.astype(np.float32)  # [HIDDEN, 64]
    b1 = mlp.intercepts_[0].astype(np.float32)
    w2 = mlp.coefs_[1].T.astype(np.float32)  # [10, HIDDEN]
    b2 = mlp.intercepts_[1].astype(np.float32)
    labels = [str(c) for c in mlp.classes_]

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 64), dtype=ct.converters.mil.mil.types.fp32)])
    def prog(image):
        hidden = mb.linear(x=image, weight=w1, bias=b1, name="hidden")
        hidden = mb.relu(x=hidden, name="hidden_relu")
        logits = mb.linear(x=hidden, weight=w2, bias=b2, name="logits")
        return mb.softmax(x=logits, axis=-1, name="probabilities")

    # The classifier config appends the `classify` op (labels "0"-"9") and names its outputs.
    model = ct.convert(
        prog,
        convert_to="mlprogram",
        minimum_deployment_target=ct.target.iOS15,
        compute_precision=ct.precision.FLOAT32,
        classifier_config=ct.ClassifierConfig(labels, predicted_feature_name="classLabel"),
    )
    model.author = "Tessera (tools/make_demo_model.py)"
    model.license = "MIT; trained on scikit-learn's bundled copy of the UCI optical digits data set"
    model.short_description = "Classifies an 8x8 handwritten digit (pixels scaled to 0-1) as 0-9"
    model.version = "1.0"
    model.input_description["image"] = "64 pixels of an 8x8 digit, row-major, scaled from 0-16 to 0-1"
    return model, (w1, b1, w2, b2), labels


def reference(x, weights):
    w1, b1, w2, b2 = weights
    h = np.maximum(x @ w1.T + b1, 0)
    logits = h @ w2.T + b2
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main():
    mlp, x_test, y_test = train()
    model, weights, labels = build(mlp)
    os.makedirs(OUT, exist_ok=True)
    package = os.path.join(OUT, "DigitsClassifier.mlpackage")
    shutil.rmtree(package, ignore_errors=True)
    model.save(package)

    rng = np.random.default_rng(SEED)
    picks = rng.choice(len(y_test), size=SAMPLES, replace=False)
    pixels = x_test[picks]
    probabilities = reference((pixels / 16.0).astype(np.float32), weights)
    sklearn_probabilities = mlp.predict_proba(pixels / 16.0)
    assert np.allclose(probabilities, sklearn_probabilities, atol=1e-5), "numpy reference disagrees with sklearn"
    samples = {
        "labels": labels,
        "samples": [
            {
                "pixels": [int(v) for v in pixels[i]],
                "label": str(int(y_test[picks[i]])),
                "probabilities": [float(p) for p in probabilities[i]],
            }
            for i in range(SAMPLES)
        ],
    }
    with open(os.path.join(OUT, "digits-samples.json"), "w") as f:
        json.dump(samples, f, indent=1)
        f.write("\n")
    predicted = probabilities.argmax(axis=-1)
    correct = sum(labels[p] == s["label"] for p, s in zip(predicted, samples["samples"]))
    print(f"wrote {package}; {correct}/{SAMPLES} samples classified correctly by the numpy reference")


if __name__ == "__main__":
    main()
