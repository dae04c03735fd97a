#!/usr/bin/env python3
"""Harvests coremltools' own NeuralNetwork-backend tests into cases Tessera can run on Linux.

Two sources ship in the coremltools wheel; on Linux neither predicts (that needs macOS), so
this script runs them under pytest with their comparison step replaced by a recorder that
saves, per comparison:

    <out>/<source>/<n>/model.mlmodel, input_<i>.npy, expected_<i>.npy, case.json
    (case.json: test id, input and output names, the comparison — `allclose` with atol/rtol,
    `rel_error` with delta, `snr` with SNR/PSNR, `shape` or `moments` — the network's
    layer types, nested networks of loop / branch layers included, and `topk`: the `topK`
    layers from a model input to an indices output, whose tied indices the runner compares
    as interchangeable)

- `mil`: the MIL op tests with the NeuralNetwork backend (`("neuralnetwork", "fp32")`, opset
  iOS14; the `iOS14` test files, `PYMIL_TEST_TARGETS=neuralnetwork`): `compare_backend` is
  replaced, as in `harvest_coremltools_op_tests.py`, and records the converted NeuralNetwork.
- `nn`: `coremltools/test/neural_network` (NeuralNetworkBuilder models with NumPy expected
  values): the `macOS`-only skip markers are lifted by reporting a macOS version, and
  `CorrectnessTest._test_model` / `_compare_moments` record instead of predicting. A test that
  calls `MLModel.predict` itself fails under pytest and records nothing.

Usage (a venv with coremltools 9, pytest, scipy, torch):

    nice -n 19 python tools/harvest_coremltools_nn_tests.py mil OUT_DIR [pytest args...]
    nice -n 19 python tools/harvest_coremltools_nn_tests.py nn OUT_DIR [pytest args...]

Arguments that are only options (`-k expr`) select within the default files. `HARVEST_SAMPLE=n` keeps every n-th parametrization of each test function;
`HARVEST_MAX_CASES=n` records at most n cases per test function (the first n), and
`HARVEST_MAX_MB=m` skips cases whose arrays exceed m MB. The sampled `nn` run of
Docs/NeuralNetwork.md is `HARVEST_MAX_CASES=40 HARVEST_MAX_MB=20 ... nn OUT -k "not _gpu"`. The output is not
committed; `NeuralNetworkHarvestTests` (`TESSERA_NN_HARVEST_DIR=OUT_DIR`) runs it and writes
`outcomes.csv`, and `tools/summarize_nn_harvest.py` turns that into the tables of
`Docs/NeuralNetwork.md`.
"""

import itertools
import json
import os
import sys

import numpy as np

OUT = None
COUNTER = itertools.count()
CASES_PER_TEST = {}


def layer_types(network):
    """The layer types of a NeuralNetwork message, nested loop / branch bodies included."""
    types = set()
    for layer in network.layers:
        kind = layer.WhichOneof("layer")
        types.add(kind)
        params = getattr(layer, kind)
        for field in ("conditionNetwork", "bodyNetwork", "ifBranch", "elseBranch"):
            if hasattr(params, field) and params.HasField(field):
                types |= layer_types(getattr(params, field))
    return types


def topk_layers(network, inputs, outputs):
    """The top-level `topK` layers that read a model input and write an indices output:
    `{input, axis, indices}`, so the runner can accept indices of tied values in another order
    (Core ML leaves the order of ties unspecified; NumPy's `argsort` is not stable)."""
    found = []
    for layer in network.layers:
        if layer.WhichOneof("layer") != "topK" or len(layer.output) < 2:
            continue
        if layer.input[0] in inputs and layer.output[1] in outputs:
            found.append(dict(input=layer.input[0], axis=int(layer.topK.axis), indices=layer.output[1]))
    return found


def network_of(spec):
    kind = spec.WhichOneof("Type")
    if kind in ("neuralNetwork", "neuralNetworkClassifier", "neuralNetworkRegressor"):
        return getattr(spec, kind)
    return None


def save_case(spec, inputs, expected, comparison):
    """Writes one case; returns without writing for a model that is not a NeuralNetwork or
    values that are not arrays."""
    import coremltools

    network = network_of(spec)
    if network is None or expected is None:
        return
    if not all(isinstance(v, np.ndarray) or np.isscalar(v) for v in expected.values()):
        return
    if not all(isinstance(v, np.ndarray) or np.isscalar(v) for v in inputs.values()):
        return
    test_function = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0].split("[")[0]
    limit = int(os.environ.get("HARVEST_MAX_CASES", "0"))
    if limit and CASES_PER_TEST.get(test_function, 0) >= limit:
        import pytest
        pytest.skip("HARVEST_MAX_CASES reached")  # the rest of a stress test would only be dropped
    megabytes = float(os.environ.get("HARVEST_MAX_MB", "0"))
    arrays = [np.asarray(v) for v in list(inputs.values()) + list(expected.values())]
    if megabytes and sum(a.size * 4 for a in arrays) > megabytes * 1e6:
        return
    CASES_PER_TEST[test_function] = CASES_PER_TEST.get(test_function, 0) + 1
    directory = os.path.join(OUT, f"{next(COUNTER):05d}")
    os.makedirs(directory)
    coremltools.utils.save_spec(spec, os.path.join(directory, "model.mlmodel"))
    names = list(inputs.keys())
    for i, name in enumerate(names):
        value = np.asarray(inputs[name])
        if value.dtype.kind == "f":
            value = value.astype(np.float32)
        elif value.dtype.kind in "iub":
            value = value.astype(np.int32)
        np.save(os.path.join(directory, f"input_{i}.npy"), np.array(value, order="C"))
    outputs = list(expected.keys())
    for i, name in enumerate(outputs):
        np.save(os.path.join(directory, f"expected_{i}.npy"),
                np.array(expected[name], dtype=np.float32, order="C"))
    test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0].split("site-packages/")[-1]
    extra = {}
    topk = topk_layers(network, names, outputs)
    if topk:
        extra["topk"] = topk
    with open(os.path.join(directory, "case.json"), "w") as f:
        json.dump(dict(test=test, inputs=names, outputs=outputs, layers=sorted(layer_types(network)),
                       **comparison, **extra), f)


def record_mil(mlmodel, input_key_values, expected_outputs, dtype="fp32", atol=1e-04, rtol=1e-05,
               also_compare_shapes=True, state=None, allow_mismatch_ratio=0.0):
    """Stands in for `compare_backend`: saves NeuralNetwork fp32 cases, predicts nothing."""
    if dtype != "fp32" or state is not None:
        return None
    save_case(mlmodel.get_spec(), input_key_values, expected_outputs,
              dict(comparison="allclose", atol=float(atol), rtol=float(rtol)))
    return None


class MILRecorder:
    """Installs `record_mil` and keeps only the NeuralNetwork-backend parametrizations."""

    def pytest_configure(self, config):
        import coremltools.converters.mil.testing_utils as testing_utils
        testing_utils.compare_backend = record_mil
        import coremltools.converters.mil.mil.ops.tests.testing_utils as op_testing_utils
        op_testing_utils.compare_backend = record_mil

    def pytest_collection_modifyitems(self, config, items):
        kept, dropped = [], []
        for item in items:
            backend = getattr(getattr(item, "callspec", None), "params", {}).get("backend")
            kind = getattr(backend, "backend", backend[0] if isinstance(backend, tuple) else None)
            (kept if kind == "neuralnetwork" else dropped).append(item)
        sample(kept, dropped)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept


def sample(kept, dropped):
    """HARVEST_SAMPLE=n keeps every n-th parametrization of each test function."""
    n = int(os.environ.get("HARVEST_SAMPLE", "1"))
    if n <= 1:
        return
    seen, sampled = {}, []
    for item in kept:
        key = (item.module.__name__, item.cls.__name__ if item.cls else "", item.originalname)
        seen[key] = seen.get(key, -1) + 1
        (sampled if seen[key] % n == 0 else dropped).append(item)
    kept[:] = sampled


class NNRecorder:
    """Lifts the macOS skips of `coremltools/test/neural_network` and records `_test_model`."""

    def pytest_configure(self, config):
        import coremltools.models.utils as utils
        utils._is_macos = lambda: True
        utils._macos_version = lambda: (15, 0)
        import coremltools.test.neural_network.test_numpy_nn_layers as layers

        def test_model(self, model, input, expected, model_precision="float32", useCPUOnly=False,
                       output_name_shape_dict={}, validate_shapes_only=False,
                       test_metric="rel_error", delta=0.01, SNR=30):
            import coremltools
            if isinstance(model, str):
                model = coremltools.models.MLModel(model)
            if isinstance(model, coremltools.models.MLModel):
                model = model.get_spec()
            if model_precision == "float16":
                model = coremltools.utils._convert_neural_network_spec_weights_to_fp16(model)
            if validate_shapes_only:
                comparison = dict(comparison="shape")
            elif test_metric == "SNR":
                comparison = dict(comparison="snr", snr=float(SNR), psnr=40.0)
            else:
                comparison = dict(comparison="rel_error", delta=float(delta))
            save_case(model, input, dict(expected), comparison)

        def compare_moments(model, inputs, expected, use_cpu_only=True, num_moments=10):
            import coremltools
            spec = model.get_spec() if isinstance(model, coremltools.models.MLModel) else model
            if isinstance(spec, str):
                spec = coremltools.models.MLModel(spec).get_spec()
            save_case(spec, inputs, dict(expected), dict(comparison="moments", moments=num_moments))

        layers.CorrectnessTest._test_model = test_model
        layers.CorrectnessTest._compare_moments = staticmethod(compare_moments)

    def pytest_collection_modifyitems(self, config, items):
        kept, dropped = list(items), []
        sample(kept, dropped)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept


def main():
    global OUT
    source = sys.argv[1]
    OUT = os.path.abspath(os.path.join(sys.argv[2], source))
    os.makedirs(OUT, exist_ok=True)
    if source == "mil":
        os.environ["PYMIL_TEST_TARGETS"] = "neuralnetwork"
    import pytest
    import coremltools
    root = os.path.dirname(coremltools.__file__)
    if source == "mil":
        folder = os.path.join(root, "converters/mil/mil/ops/tests/iOS14")
        default = sorted(os.path.join(folder, n) for n in os.listdir(folder)
                         if n.startswith("test_") and n.endswith(".py"))
        plugin = MILRecorder()
    else:
        folder = os.path.join(root, "test/neural_network")
        default = [os.path.join(folder, "test_numpy_nn_layers.py")]
        plugin = NNRecorder()
    args = sys.argv[3:]
    # Options alone (`-k expr`) select within the default files.
    paths = [a for i, a in enumerate(args) if not a.startswith("-") and (i == 0 or args[i - 1] not in ("-k", "-m"))]
    selection = args if paths else [*default, *args]
    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", *selection], plugins=[plugin]))


if __name__ == "__main__":
    main()
