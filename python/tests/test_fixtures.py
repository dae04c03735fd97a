"""Every fixture model of the Swift test suite through the Python API, against the same
expected values (NumPy / coremltools outputs recorded by ``tools/`` scripts)."""

import numpy as np
import pytest

import tessera.coreml as tc
from conftest import close, digit_input, fixture, load_json

LOWERING = load_json("lowering", "cases.json")
# Fixtures made for an op Tessera refused then and runs now (einsum), as the Swift suite has them.
NOW_SUPPORTED = {"unsupported_einsum"}


def _refused(case):
    return case["name"].startswith(("unsupported_", "invalid_")) and case["name"] not in NOW_SUPPORTED


SUPPORTED = [case for case in LOWERING if not _refused(case)]
REFUSED = [case for case in LOWERING if _refused(case)]


def _lowering_inputs(case):
    return {name: np.load(fixture("lowering", case["name"], f"{name}.npy")) for name in case["inputs"]}


@pytest.mark.parametrize("case", SUPPORTED, ids=[case["name"] for case in SUPPORTED])
def test_lowering_fixture_matches_numpy(case):
    model = tc.MLModel(fixture("lowering", case["name"], "model.mlpackage"))
    inputs = _lowering_inputs(case)
    states = list(model.state_description)
    assert list(model.input_description) + states == case["inputs"]
    state = None
    if states:
        # The lowered function takes a state as an input; the model API keeps it in a state.
        state = model.make_state()
        for name in states:
            state.write_state(name, inputs.pop(name))
    outputs = model.predict(inputs, state)
    for index, name in enumerate(case["outputs"]):
        expected = np.load(fixture("lowering", case["name"], f"expected_{index}.npy"))
        got = state.read_state(name) if name in states else outputs[name]
        if case.get("labels") and not isinstance(got, np.ndarray):
            continue  # the classifier's label; checked in test_lowering_classifier
        assert isinstance(got, np.ndarray), f"{name} is {type(got)}"
        described = model.state_description if name in states else model.output_description
        declared = described.feature(name).get("dataType")
        if declared:
            assert got.dtype == np.dtype(declared)
        close(got.reshape(expected.shape) if got.size == expected.size else got, expected, case["rtol"], case["atol"])


@pytest.mark.parametrize("case", REFUSED, ids=[case["name"] for case in REFUSED])
def test_lowering_fixture_refused_with_message(case):
    # The Swift suite expects these to be refused at load or at prediction with a typed error.
    with pytest.raises(tc.TesseraError) as error:
        model = tc.MLModel(fixture("lowering", case["name"], "model.mlpackage"))
        model.predict(_lowering_inputs(case))
    assert str(error.value)


def test_lowering_classifier():
    case = next(case for case in LOWERING if case["name"] == "classifier")
    model = tc.MLModel(fixture("lowering", "classifier", "model.mlpackage"))
    assert model.class_labels == case["labels"]
    outputs = model.predict(_lowering_inputs(case))
    probabilities = outputs["classLabel_probs"]
    expected = np.load(fixture("lowering", "classifier", "expected_0.npy")).reshape(-1)
    if isinstance(probabilities, dict):
        probabilities = np.array([probabilities[label] for label in case["labels"]])
    close(np.asarray(probabilities).reshape(-1), expected, case["rtol"], case["atol"])
    assert outputs["classLabel"] == case["labels"][int(np.argmax(expected))]


def test_digits_every_held_out_sample(digits):
    model, samples = digits
    assert model.class_labels == samples["labels"]
    assert list(model.output_description) == ["classLabel", "classLabel_probs"]
    for sample in samples["samples"]:
        outputs = model.predict(digit_input(sample))
        assert set(outputs) == {"classLabel", "classLabel_probs"}
        probabilities = outputs["classLabel_probs"]
        assert list(probabilities) == samples["labels"]
        close([probabilities[label] for label in samples["labels"]], sample["probabilities"])
        assert outputs["classLabel"] == samples["labels"][int(np.argmax(sample["probabilities"]))]


def test_digits_batch_in_order(digits):
    model, samples = digits
    chosen = samples["samples"][:5]
    outputs = model.predict([digit_input(sample) for sample in chosen])
    assert [output["classLabel"] for output in outputs] == [sample["label"] for sample in chosen]


def test_digits_other_dtypes_and_strided_input(digits):
    model, samples = digits
    sample = samples["samples"][9]
    pixels = np.array(sample["pixels"], dtype=np.float64) / 16
    doubles = model.predict({"image": pixels.reshape(1, 64)})
    padded = np.zeros((1, 128))[:, ::2]
    padded[0, :] = pixels
    strided = model.predict({"image": padded})
    listed = model.predict({"image": [list(pixels)]})
    for outputs in (doubles, strided, listed):
        close([outputs["classLabel_probs"][label] for label in samples["labels"]], sample["probabilities"])


API = load_json("models", "api_expected.json")


@pytest.mark.parametrize("name", ["linear_relu_softmax", "flexible_shapes"])
def test_api_fixture_models(name):
    case = API[name]
    model = tc.MLModel(fixture("models", f"{name}.mlpackage"))
    inputs = {key: np.array(value["values"], dtype=np.float32).reshape(value["shape"]) for key, value in case["inputs"].items()}
    outputs = model.predict(inputs)
    for key, reference in case["outputs"].items():
        assert outputs[key].dtype == np.float32
        assert list(outputs[key].shape) == reference["shape"]
        close(outputs[key].reshape(-1), reference["values"])


@pytest.mark.parametrize("name,labels", [("classifier", ["cat", "dog", "bird"]), ("int_classifier", [10, 20, 30])])
def test_api_classifiers(name, labels):
    case = API[name]
    model = tc.MLModel(fixture("models", f"{name}.mlpackage"))
    assert model.class_labels == labels
    inputs = {key: np.array(value["values"], dtype=np.float32).reshape(value["shape"]) for key, value in case["inputs"].items()}
    outputs = model.predict(inputs)
    label = outputs[model.predicted_feature_name]
    assert type(label) is type(labels[0])
    assert str(label) == case["classLabel"]
    probabilities = outputs[model.predicted_probabilities_name]
    assert list(probabilities) == labels
    (reference,) = [value for key, value in case["outputs"].items()]
    close([probabilities[key] for key in labels], reference["values"])


def test_flexible_shapes_at_several_sizes():
    model = tc.MLModel(fixture("models", "flexible_shapes.mlpackage"))
    names = list(model.output_description)
    for length, mask_length in [(1, 2), (10, 16), (64, 4)]:
        mask = (np.arange(mask_length * 8) % 5 - 2).astype(np.float32).reshape(1, mask_length, 8)
        outputs = model.predict({"tokens": np.ones((1, length, 8), np.float32), "mask": mask})
        assert [list(outputs[name].shape) for name in names] == [[1, length, 4], [1, mask_length, 8]]
        np.testing.assert_array_equal(outputs[names[1]], np.maximum(mask, 0))
    with pytest.raises(ValueError):
        model.predict({"tokens": np.ones((1, 3, 7), np.float32), "mask": np.ones((1, 2, 8), np.float32)})


BATCH = load_json("models", "batch_expected.json")


@pytest.mark.parametrize("name", sorted(BATCH))
def test_batch_fixtures(name):
    model = tc.MLModel(fixture("models", f"{name}.mlpackage"))
    items = BATCH[name]
    inputs = [
        {key: np.array(value["values"], dtype=np.float32).reshape(value["shape"]) for key, value in item["inputs"].items()}
        for item in items
    ]
    batched = model.predict(inputs)
    assert len(batched) == len(items)
    for item, outputs in zip(items, batched):
        for key, reference in item["outputs"].items():
            assert list(outputs[key].shape) == reference["shape"]
            close(outputs[key].reshape(-1), reference["values"])


@pytest.mark.parametrize("function_name", ["main", "scaled"])
def test_multifunction(function_name):
    case = load_json("models", "multifunction.json")
    model = tc.MLModel(fixture("models", "multifunction.mlpackage"), function_name=function_name)
    x = np.array(case["input"]["values"], dtype=np.float32).reshape(case["input"]["shape"])
    expected = case["functions"][function_name]
    close(model.predict({case["input"]["name"]: x})[expected["output"]].reshape(-1), expected["values"])


def test_multifunction_unknown_function_is_refused():
    with pytest.raises(tc.TesseraError, match="no such function"):
        tc.MLModel(fixture("models", "multifunction.mlpackage"), function_name="nope")


@pytest.mark.parametrize("name", ["conv_fp32", "conv_fp16", "quantized"])
def test_format_fixtures_load_and_describe(name):
    # The format layer's fixtures have recorded descriptions (made by coremltools), not outputs.
    recorded = load_json("models", f"{name}.json")
    model = tc.MLModel(fixture("models", f"{name}.mlpackage"))
    assert list(model.input_description) == [feature["name"] for feature in recorded["inputs"]]
    assert list(model.output_description) == [feature["name"] for feature in recorded["outputs"]]
    for feature in recorded["inputs"]:
        described = model.input_description.feature(feature["name"])
        if feature.get("shape"):
            assert described["shape"] == feature["shape"]
    assert model.short_description == recorded["metadata"]["shortDescription"]
    assert model.author == recorded["metadata"]["author"]
    assert model.user_defined_metadata == recorded["metadata"]["userDefined"]
    x = {f["name"]: np.ones(f["shape"], np.float32) for f in recorded["inputs"]}
    outputs = model.predict(x)
    assert all(np.isfinite(value).all() for value in outputs.values())


def test_neural_network_model_predicts():
    # The fixture's one layer is a ReLU (tools/make_model_fixtures.py).
    model = tc.MLModel(fixture("models", "neural_network.mlmodel"))
    y = model.predict({"x": np.array([-2, -0.5, 0.5, 3], np.float64)})["y"]
    np.testing.assert_array_equal(np.asarray(y, np.float64).reshape(-1), [0, 0, 0.5, 3])


def test_unsupported_layer_is_refused_clearly():
    with pytest.raises(tc.TesseraError) as error:
        tc.MLModel(fixture("neuralnetwork", "invalid_unsupported_layer", "model.mlmodel"))
    assert "layer" in str(error.value).lower()


def test_accumulator_state_three_steps():
    case = load_json("state", "accumulator.json")
    model = tc.MLModel(fixture("state", "accumulator.mlpackage"))
    assert list(model.state_description) == case["states"]
    state = model.make_state()
    np.testing.assert_array_equal(state.read_state("acc"), np.zeros(case["stateShape"]))
    for step in case["steps"]:
        x = np.array(step["x"], dtype=np.float32).reshape(case["stateShape"])
        outputs = model.predict({"x": x}, state)
        close(outputs["y"].reshape(-1), step["y"])
        close(state.read_state("acc").reshape(-1), step["acc"])
    state.write_state("acc", np.zeros(case["stateShape"]))
    first = case["steps"][0]
    outputs = model.predict({"x": np.array(first["x"], np.float32).reshape(case["stateShape"])}, state)
    close(outputs["y"].reshape(-1), first["y"])


def test_stateless_prediction_on_stateful_model_says_to_use_a_state():
    model = tc.MLModel(fixture("state", "accumulator.mlpackage"))
    with pytest.raises(tc.TesseraError, match="state"):
        model.predict({"x": np.ones((1, 4), np.float32)})


def test_state_from_another_model_is_refused():
    model = tc.MLModel(fixture("state", "accumulator.mlpackage"))
    other = tc.MLModel(fixture("state", "accumulator.mlpackage"))
    with pytest.raises(ValueError, match="another model"):
        model.predict({"x": np.ones((1, 4), np.float32)}, other.make_state())


def test_compiled_model_predicts_like_the_package(tmp_path):
    compiled = tc.compile_model(fixture("models", "linear_relu_softmax.mlpackage"))
    case = API["linear_relu_softmax"]
    x = np.array(case["inputs"]["x"]["values"], dtype=np.float32).reshape(case["inputs"]["x"]["shape"])
    close(tc.MLModel(compiled).predict({"x": x})["softmax_0"].reshape(-1), case["outputs"]["softmax_0"]["values"])
