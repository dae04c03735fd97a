"""Column batches (Ray Data / MLServer form) to Core ML items and back, without Ray."""

import numpy as np

import tessera.ray
from conftest import RESOURCES


def test_predictor_on_a_column_batch(digits):
    model, samples = digits
    predictor = tessera.ray.Predictor(f"{RESOURCES}/DigitsClassifier.mlpackage", passthrough=("id",))
    pixels = np.array([sample["pixels"] for sample in samples["samples"]], np.float32) / 16
    columns = predictor({"image": pixels, "id": np.arange(len(pixels))})
    assert list(columns["classLabel"]) == [sample["label"] for sample in samples["samples"]]
    assert columns["classLabel_probs"].shape == (len(pixels), 10)
    np.testing.assert_allclose(columns["classLabel_probs"], [s["probabilities"] for s in samples["samples"]], rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(columns["id"], np.arange(len(pixels)))
    # Rows of the declared shape [1, 64] work too, and keep it.
    again = predictor({"image": pixels.reshape(-1, 1, 64), "id": np.arange(len(pixels))})
    assert list(again["classLabel"]) == list(columns["classLabel"])


def test_array_outputs_are_stacked_without_the_added_leading_one():
    from conftest import fixture, load_json

    case = load_json("models", "api_expected.json")["linear_relu_softmax"]
    predictor = tessera.ray.Predictor(fixture("models", "linear_relu_softmax.mlpackage"))
    x = np.array(case["inputs"]["x"]["values"], np.float32).reshape(1, 8)
    columns = predictor({"x": np.repeat(x, 3, axis=0)})
    assert columns["softmax_0"].shape == (3, 16)
    np.testing.assert_allclose(columns["softmax_0"][2], case["outputs"]["softmax_0"]["values"], rtol=1e-4, atol=1e-5)


def test_a_missing_column_is_named():
    import pytest

    predictor = tessera.ray.Predictor(f"{RESOURCES}/DigitsClassifier.mlpackage")
    with pytest.raises(ValueError, match="image"):
        predictor({"pixels": np.zeros((2, 64), np.float32)})
