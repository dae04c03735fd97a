"""tessera.coreml.compare: the parity report against reference outputs and callables."""

import numpy as np
import pytest

import tessera.coreml as tc
from conftest import digit_input, fixture, load_json

API = load_json("models", "api_expected.json")


def _linear():
    case = API["linear_relu_softmax"]
    x = np.array(case["inputs"]["x"]["values"], np.float32).reshape(case["inputs"]["x"]["shape"])
    expected = np.array(case["outputs"]["softmax_0"]["values"], np.float32).reshape(case["outputs"]["softmax_0"]["shape"])
    return tc.MLModel(fixture("models", "linear_relu_softmax.mlpackage")), x, expected


def test_against_recorded_outputs(capsys):
    model, x, expected = _linear()
    report = tc.compare(model, {"softmax_0": expected}, {"x": x})
    assert report.ok
    parity = report.outputs["softmax_0"]
    assert parity.shape == (1, 16) and parity.count == 16
    got = model.predict({"x": x})["softmax_0"].astype(np.float64)
    assert parity.max_abs == pytest.approx(np.abs(got - expected).max())
    assert parity.max_rel == pytest.approx((np.abs(got - expected) / np.abs(expected)).max())
    printed = capsys.readouterr().out
    assert "softmax_0" in printed and "max abs" in printed


def test_reports_a_perturbed_reference():
    model, x, expected = _linear()
    wrong = expected.copy()
    wrong[0, 3] += 0.01
    report = tc.compare(model, {"softmax_0": wrong}, {"x": x}, verbose=False)
    assert not report.ok
    assert report.outputs["softmax_0"].mismatches == 1
    assert report.outputs["softmax_0"].max_abs == pytest.approx(0.01, rel=1e-2)


def test_against_a_callable_over_several_inputs(digits):
    model, samples = digits
    by_pixels = {tuple(sample["pixels"]): sample for sample in samples["samples"]}

    def reference(item):
        sample = by_pixels[tuple(np.rint(item["image"].reshape(-1) * 16).astype(int))]
        return {"classLabel": sample["label"], "classLabel_probs": dict(zip(samples["labels"], sample["probabilities"]))}

    report = tc.compare(model, reference, [digit_input(sample) for sample in samples["samples"]], verbose=False)
    assert report.ok
    assert report.outputs["classLabel_probs"].count == 10 * len(samples["samples"])


def test_against_a_torch_module():
    torch = pytest.importorskip("torch")
    model, x, expected = _linear()

    class Recorded(torch.nn.Module):
        def forward(self, value):
            return torch.from_numpy(expected)

    assert tc.compare(model, Recorded(), {"x": x}, verbose=False).ok


def test_refuses_a_mismatched_reference():
    model, x, expected = _linear()
    with pytest.raises(ValueError, match="nope"):
        tc.compare(model, {"nope": expected}, {"x": x}, verbose=False)
    with pytest.raises(TypeError):
        tc.compare(model, 3, {"x": x}, verbose=False)
