"""Predictions from the Python API: a model converted on the fly, threads, bad inputs."""

import threading

import numpy as np
import pytest

import tessera.coreml as tc
from conftest import close, digit_input

ct = pytest.importorskip("coremltools")
from coremltools.converters.mil import Builder as mb  # noqa: E402


def _converted():
    @mb.program(input_specs=[mb.TensorSpec(shape=(2, 3)), mb.TensorSpec(shape=(3, 4))])
    def program(x, w):
        y = mb.matmul(x=x, y=w, name="product")
        z = mb.add(x=mb.tanh(x=y), y=np.float32(0.5), name="z")
        return mb.reduce_sum(x=z, axes=[1], keep_dims=False, name="total"), z

    return ct.convert(program, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16)


def test_converted_on_the_fly_matches_numpy():
    converted = _converted()
    model = tc.MLModel(converted)
    assert model.compute_unit == converted.compute_unit.name
    assert model.get_spec().description.input[0].name == "x"
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    outputs = model.predict({"x": x, "w": w})
    z = np.tanh(x.astype(np.float64) @ w) + 0.5
    close(outputs["z"], z)
    close(outputs["total"], z.sum(axis=1))
    assert outputs["z"].dtype == np.float32


def test_converted_fp16_model_returns_declared_dtypes():
    @mb.program(input_specs=[mb.TensorSpec(shape=(4,), dtype=ct.converters.mil.mil.types.fp16)], opset_version=ct.target.iOS16)
    def program(x):
        return mb.mul(x=x, y=np.float16(2), name="y")

    converted = ct.convert(program, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
                           compute_precision=ct.precision.FLOAT16)
    model = tc.MLModel(converted)
    outputs = model.predict({"x": np.array([1, 2, 3, 4], np.float32)})
    assert outputs["y"].dtype == np.dtype(model.output_description.feature("y")["dataType"])
    close(outputs["y"], [2, 4, 6, 8])


def test_get_spec_from_a_path(digits):
    model, _ = digits
    spec = model.get_spec()
    assert spec.description.input[0].name == "image"
    assert model.short_description == spec.description.metadata.shortDescription


def test_threads_predict_at_once(digits):
    model, samples = digits
    errors = []
    results = {}

    def work(thread):
        try:
            for round in range(6):
                for index, sample in enumerate(samples["samples"]):
                    label = model.predict(digit_input(sample))["classLabel"]
                    results[(thread, round, index)] = label == sample["label"]
        except Exception as error:  # surfaced below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(results) == 4 * 6 * len(samples["samples"]) and all(results.values())


def test_prediction_releases_the_gil(digits, monkeypatch):
    # A Python thread records the time of each of its loop turns while the main thread runs
    # one long batch prediction. The foreign predict call is timed from inside the binding:
    # were the GIL held during it, the thread could take no turn for nearly all of it.
    import time

    import tessera.coreml._model as binding

    model, samples = digits
    inputs = [digit_input(sample) for sample in samples["samples"]]
    model.predict(inputs[:2])
    original = binding._call_with_error

    def measure(batch):
        window = []

        def timed(function, *arguments):
            start = time.perf_counter()
            try:
                return original(function, *arguments)
            finally:
                if function is model._lib.tessera_model_predict:
                    window.append((start, time.perf_counter()))

        monkeypatch.setattr(binding, "_call_with_error", timed)
        stop = threading.Event()
        stamps = []

        def record():
            while not stop.is_set():
                stamps.append(time.perf_counter())

        recorder = threading.Thread(target=record)
        recorder.start()
        time.sleep(0.01)
        model.predict(batch)
        stop.set()
        recorder.join()
        monkeypatch.setattr(binding, "_call_with_error", original)
        ((start, end),) = window
        return start, end, stamps

    # The batch grows until one foreign call lasts long enough to tell (machines differ).
    repeats = 4
    while True:
        start, end, stamps = measure(inputs * repeats)
        if end - start > 0.2 or repeats >= 4096:
            break
        repeats *= 4
    during = [start] + [t for t in stamps if start <= t <= end] + [end]
    longest = max(b - a for a, b in zip(during, during[1:]))
    assert end - start > 0.05, f"the foreign call took {end - start:.4f} s, too short to tell"
    # Held, the thread would wait out the whole call but a switch interval or two at its edges.
    assert longest < 0.5 * (end - start), f"the thread waited {longest:.3f} s of a {end - start:.3f} s foreign call"


BAD_INPUTS = [
    ({"image": np.zeros((1, 63), np.float32)}, ValueError, "shape"),
    ({"image": np.zeros((2, 64), np.float32)}, ValueError, "shape"),
    ({"image": np.array(["a"] * 64).reshape(1, 64)}, TypeError, "dtype"),
    ({"image": "pixels"}, TypeError, "multi-array"),
    ({"image": {"a": 1}}, TypeError, "multi-array"),
    ({"image": np.zeros((1, 64), dtype=object)}, TypeError, "dtype"),
    ({}, ValueError, "missing"),
    ({"pixels": np.zeros((1, 64), np.float32)}, ValueError, "missing"),
    ({"image": np.zeros((1,) * 40, np.float32)}, ValueError, "rank"),
]


@pytest.mark.parametrize("data,error,fragment", BAD_INPUTS, ids=[str(i) for i in range(len(BAD_INPUTS))])
def test_bad_inputs_raise_with_tesseras_message(digits, data, error, fragment):
    model, _ = digits
    with pytest.raises(error, match=fragment):
        model.predict(data)
    assert model.predict(digit_input({"pixels": [0] * 64}))["classLabel"] in model.class_labels


def test_bad_arguments(digits):
    model, _ = digits
    with pytest.raises(TypeError):
        model.predict("image")
    with pytest.raises(TypeError):
        model.predict([{"image": np.zeros((1, 64))}, 3])
    assert model.predict([]) == []
    with pytest.raises(FileNotFoundError):
        tc.MLModel("/nonexistent/model.mlpackage")
    with pytest.raises(TypeError):
        tc.MLModel(42)
    with pytest.raises(TypeError):
        tc.MLModel(model.path, compute_units="GPU_ONLY")
    with pytest.raises(ValueError, match="unbatched"):
        model.predict([digit_input({"pixels": [0] * 64})], state=model.make_state())


def test_a_corrupt_package_is_refused(tmp_path):
    package = tmp_path / "broken.mlpackage"
    package.mkdir()
    (package / "Manifest.json").write_text("{not json")
    with pytest.raises(tc.TesseraError):
        tc.MLModel(str(package))


@pytest.mark.parametrize("units", ["ALL", "CPU_ONLY", "CPU_AND_GPU", "CPU_AND_NE"])
def test_compute_units_by_name_and_enum(digits, units):
    model, samples = digits
    for value in (units, getattr(ct.ComputeUnit, units)):
        loaded = tc.MLModel(model.path, compute_units=value)
        assert loaded.compute_unit == units
        assert loaded.predict(digit_input(samples["samples"][0]))["classLabel"] == samples["samples"][0]["label"]
