"""The coremltools backend: unmodified coremltools calls predicting with Tessera."""

import numpy as np
import pytest

import tessera.coreml as tc
from conftest import RESOURCES, close, digit_input, fixture, load_json

ct = pytest.importorskip("coremltools")


@pytest.fixture
def backend():
    tc.install_coremltools_backend()
    yield
    tc.uninstall_coremltools_backend()


def test_refuses_an_untested_coremltools_version(monkeypatch):
    monkeypatch.setattr(ct, "__version__", "1.0")
    with pytest.raises(RuntimeError, match="tested with coremltools"):
        tc.install_coremltools_backend()
    assert not tc.coremltools_backend_installed()


def test_without_the_backend_coremltools_cannot_predict_on_linux():
    model = ct.models.MLModel(f"{RESOURCES}/DigitsClassifier.mlpackage")
    with pytest.raises(Exception, match="Core ?ML|macOS|framework"):
        model.predict(digit_input({"pixels": [0] * 64}))


def test_unmodified_mlmodel_predict(backend, digits):
    _, samples = digits
    model = ct.models.MLModel(f"{RESOURCES}/DigitsClassifier.mlpackage")
    for sample in samples["samples"]:
        outputs = model.predict(digit_input(sample))
        assert outputs["classLabel"] == sample["label"]
        close([outputs["classLabel_probs"][label] for label in samples["labels"]], sample["probabilities"])
    batch = model.predict([digit_input(sample) for sample in samples["samples"][:4]])
    assert [item["classLabel"] for item in batch] == [sample["label"] for sample in samples["samples"][:4]]


def test_unmodified_compiled_model(backend, digits):
    _, samples = digits
    model = ct.models.MLModel(f"{RESOURCES}/DigitsClassifier.mlpackage", compute_units=ct.ComputeUnit.CPU_ONLY)
    compiled = ct.models.CompiledMLModel(model.get_compiled_model_path(), ct.ComputeUnit.CPU_ONLY)
    sample = samples["samples"][4]
    assert compiled.predict(digit_input(sample))["classLabel"] == sample["label"]


def test_unmodified_make_state(backend, tmp_path):
    import shutil

    case = load_json("state", "accumulator.json")
    # The fixture's manifest lists an empty weights folder, which git does not keep; coremltools
    # (not Tessera) insists on it.
    package = tmp_path / "accumulator.mlpackage"
    shutil.copytree(fixture("state", "accumulator.mlpackage"), package)
    (package / "Data" / "com.apple.CoreML" / "weights").mkdir(exist_ok=True)
    model = ct.models.MLModel(str(package))
    state = model.make_state()
    for step in case["steps"]:
        outputs = model.predict({"x": np.array(step["x"], np.float32).reshape(case["stateShape"])}, state)
        close(outputs["y"].reshape(-1), step["y"])
        close(state.read_state("acc").reshape(-1), step["acc"])


@pytest.mark.parametrize("function_name", ["main", "scaled"])
def test_unmodified_multifunction_loading(backend, function_name):
    case = load_json("models", "multifunction.json")
    model = ct.models.MLModel(fixture("models", "multifunction.mlpackage"), function_name=function_name)
    x = np.array(case["input"]["values"], dtype=np.float32).reshape(case["input"]["shape"])
    expected = case["functions"][function_name]
    close(model.predict({"x": x})[expected["output"]].reshape(-1), expected["values"])


def test_unmodified_convert_then_predict(backend):
    from coremltools.converters.mil import Builder as mb

    @mb.program(input_specs=[mb.TensorSpec(shape=(3, 5))])
    def program(x):
        return mb.softmax(x=mb.mul(x=x, y=np.float32(2.0)), axis=-1, name="p")

    converted = ct.convert(program, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS17)
    x = np.random.default_rng(3).standard_normal((3, 5)).astype(np.float32)
    e = np.exp(2.0 * x.astype(np.float64))
    close(converted.predict({"x": x})["p"], e / e.sum(axis=-1, keepdims=True))


def test_a_model_tessera_cannot_run_degrades_like_coremltools(backend):
    with pytest.warns(RuntimeWarning, match="Tessera"):
        model = ct.models.MLModel(fixture("neuralnetwork", "invalid_unsupported_layer", "model.mlmodel"))
    with pytest.raises(Exception):
        model.predict({"x": np.zeros((1, 4), np.float32)})


def test_uninstall_restores_coremltools():
    tc.install_coremltools_backend()
    tc.uninstall_coremltools_backend()
    import coremltools.models.model as model_module

    assert model_module._MLModelProxy is None
    assert model_module._macos_version() == ()
